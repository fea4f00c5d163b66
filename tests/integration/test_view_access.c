/*
 * test_view_access: who may reach what through the project view on a real
 * FUSE mount: sensitive files are asked about by every name (cat, links,
 * renames, copies, mmap) and a pending decision blocks no one else;
 * .warden/ is write-protected, hidden files stay hidden, a read-only view
 * refuses writes; a caller that is not the view's user gets its own
 * credentials. The fixture (view_fx.c) and the skip rules are test_view's.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "policy.h"
#include "sandbox.h"

#include "view_fx.h"

/* ---- sensitive -------------------------------------------------------- */

static void test_view_sensitive_cat_refused(void **state)
{
	struct fx *f = *state;
	pid_t pid = spawn_sh(f->dir, "exec cat .env 2>/dev/null");

	assert_int_not_equal(wait_status(pid), 0);
	int i = find_record(".env");
	assert_true(i >= 0);
	assert_int_equal(g_dec.rec[i].pid, pid); /* the requesting process */
	assert_int_equal(g_dec.rec[i].access, POL_ACC_READ);
	assert_string_equal(g_dec.rec[i].path2, "");
	/* A stat is no open: allowed, not asked. */
	assert_int_equal(sh(f, "test -s .env && ls -la . | grep -q ' .env$'"), 0);
}

static void test_view_plain_open_not_asked(void **state)
{
	struct fx *f = *state;

	assert_int_equal(sh(f, "cat README >/dev/null && cp README R2 && cat R2 >/dev/null && "
			       "echo x > new && ls >/dev/null"),
			 0);
	assert_int_equal(records(), 0);
}

static void test_view_sensitive_symlink(void **state)
{
	struct fx *f = *state;

	/* Made through the view: the symlink itself is decided (refused). */
	assert_int_not_equal(sh(f, "ln -s .env x 2>/dev/null"), 0);
	int i = find_record("x");
	assert_true(i >= 0);
	assert_string_equal(g_dec.rec[i].path2, ".env");
	assert_int_equal(g_dec.rec[i].access, POL_ACC_SYMLINK);
	assert_int_not_equal(sh(f, "cat x 2>/dev/null"), 0);
	/* Made by the user outside: following it opens .env through the view,
	 * relative or absolute. */
	assert_int_equal(symlinkat(".env", f->real, "x2"), 0);
	wd_autofree char *abs_target = wd_asprintf("%s/.env", f->dir);
	assert_int_equal(symlinkat(abs_target, f->real, "x3"), 0);
	pid_t pid = spawn_sh(f->dir, "exec cat x2 2>/dev/null");
	assert_int_not_equal(wait_status(pid), 0);
	assert_int_not_equal(sh(f, "cat x3 2>/dev/null"), 0);
	i = find_record(".env");
	assert_true(i >= 0);
	assert_int_equal(g_dec.rec[i].pid, pid);
	assert_int_equal(g_dec.rec[i].access, POL_ACC_READ);
}

static void test_view_sensitive_hard_link(void **state)
{
	struct fx *f = *state;
	int i;

	/* A hard link the user made before the run, opened under its plain
	 * name before the view ever saw ".env" by name. */
	assert_int_equal(mkdirat(f->real, "docs", 0755), 0);
	assert_int_equal(linkat(f->real, ".env", f->real, "docs/notes", 0), 0);
	assert_int_not_equal(sh(f, "cat docs/notes 2>/dev/null"), 0);
	i = find_record("docs/notes");
	assert_true(i >= 0);
	assert_int_equal(g_dec.rec[i].access, POL_ACC_READ);

	/* Through the view: the link is decided (refused). */
	assert_int_not_equal(sh(f, "ln .env y 2>/dev/null"), 0);
	i = find_record(".env");
	assert_true(i >= 0);
	assert_string_equal(g_dec.rec[i].path2, "y");
	assert_int_equal(g_dec.rec[i].access, POL_ACC_LINK);
	assert_int_not_equal(sh(f, "cat y 2>/dev/null"), 0);

	/* After .env was seen by name, a new name of it made outside. */
	assert_int_equal(linkat(f->real, ".env", f->real, "plain", 0), 0);
	assert_int_not_equal(sh(f, "cat plain 2>/dev/null"), 0);
	assert_true(find_record("plain") >= 0);
}

static void test_view_sensitive_mv_cp_python_mmap(void **state)
{
	struct fx *f = *state;
	wd_autofree char *env = vpath(f, ".env");

	assert_int_not_equal(sh(f, "mv .env notes.txt 2>/dev/null"), 0);
	int i = find_record(".env");
	assert_true(i >= 0);
	assert_string_equal(g_dec.rec[i].path2, "notes.txt");
	assert_true(g_dec.rec[i].access & POL_ACC_RENAME_FROM);
	assert_int_equal(faccessat(f->real, ".env", F_OK, AT_SYMLINK_NOFOLLOW), 0);
	/* Renaming onto a sensitive name is decided too. */
	assert_int_not_equal(sh(f, "mv README .env.local 2>/dev/null"), 0);
	i = find_record("README");
	assert_true(i >= 0);
	assert_int_equal(g_dec.rec[i].access, POL_ACC_RENAME_TO);

	g_dec.n = 0;
	assert_int_not_equal(sh(f, "cp .env z 2>/dev/null"), 0);
	assert_true(find_record(".env") >= 0);
	assert_int_not_equal(sh(f, "python3 -c 'open(\".env\").read()' 2>/dev/null"), 0);

	/* mmap needs an fd: the open is refused before any page is mapped. */
	g_dec.n = 0;
	int fd = open(env, O_RDONLY | O_CLOEXEC);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, EACCES);
	i = find_record(".env");
	assert_true(i >= 0);
	assert_int_equal(g_dec.rec[i].pid, getpid());
	/* Creating a new sensitive file is decided as a create. */
	assert_int_not_equal(sh(f, "{ echo k > id_rsa; } 2>/dev/null"), 0);
	i = find_record("id_rsa");
	assert_true(i >= 0);
	assert_true(g_dec.rec[i].access & POL_ACC_CREATE);
	assert_int_equal(faccessat(f->real, "id_rsa", F_OK, 0), -1);
}

static void test_view_sensitive_allowed(void **state)
{
	struct fx *f = *state;
	wd_autofree char *env = vpath(f, ".env");

	g_dec.verdict = 0;
	assert_int_equal(sh(f, "test \"$(cat .env)\" = API_KEY=s3cr3t"), 0);
	assert_true(find_record(".env") >= 0);
	int fd = open(env, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	char *m = mmap(NULL, 14, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(m != MAP_FAILED);
	assert_memory_equal(m, "API_KEY=s3cr3t", 14);
	munmap(m, 14);
	close(fd);
	/* Every open is asked again: nothing is remembered by the view. */
	int before = records();
	assert_int_equal(sh(f, "cat .env >/dev/null && mv .env notes.txt"), 0);
	assert_true(records() >= before + 2);
	/* The object stays sensitive under its new name. */
	before = records();
	assert_int_equal(sh(f, "cat notes.txt >/dev/null"), 0);
	assert_true(find_record("notes.txt") >= 0);
	assert_true(records() > before);
}

static void test_view_pending_decision_does_not_block_others(void **state)
{
	struct fx *f = *state;

	g_dec.slow_ms = 2000;
	int64_t t0 = wd_now_mono_ns();
	pid_t slow = spawn_sh(f->dir, "exec cat .env 2>/dev/null");
	while (find_record(".env") < 0 && ms_since(t0) < 5000)
		usleep(10000);
	assert_true(find_record(".env") >= 0);

	int64_t t1 = wd_now_mono_ns();
	assert_int_equal(sh(f, "cat README >/dev/null && ls -la >/dev/null && echo y > other && "
			       "cat other >/dev/null"),
			 0);
	int64_t other_ms = ms_since(t1);
	pthread_mutex_lock(&g_dec.lock);
	int pending = g_dec.in_progress;
	pthread_mutex_unlock(&g_dec.lock);
	assert_int_equal(pending, 1); /* still waiting when the others finished */
	assert_true(other_ms < 1000);
	assert_int_not_equal(wait_status(slow), 0);
	assert_true(ms_since(t0) >= 1900);
}

/* ---- write-protected, hidden, read-only ------------------------------- */

static void test_view_warden_is_read_only(void **state)
{
	struct fx *f = *state;
	wd_autofree char *perm = vpath(f, ".warden/permissions.json");
	wd_autofree char *newf = vpath(f, ".warden/new");
	wd_autofree char *t = read_view(f, ".warden/permissions.json");

	assert_string_equal(t, "{}\n");
	assert_int_equal(open(perm, O_WRONLY | O_CLOEXEC), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(open(perm, O_RDONLY | O_TRUNC | O_CLOEXEC), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(open(newf, O_WRONLY | O_CREAT | O_CLOEXEC, 0644), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(chmod(perm, 0777), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(truncate(perm, 0), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(unlink(perm), -1);
	assert_int_equal(errno, EROFS);
	/* access(W_OK) is the kernel's answer from the mode bits (the mount
	 * has default_permissions): the write itself is what is refused. */
	assert_int_not_equal(sh(f, "mv .warden/permissions.json p 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "mv README .warden/ 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "mv .warden w 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "rm -rf .warden 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "mkdir .warden/d 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "ln .warden/permissions.json pj 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "ln -s x .warden/s 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "setfattr -n user.x -v 1 .warden/permissions.json 2>/dev/null"),
			     0);
	assert_int_equal(sh(f, "cat .warden/permissions.json >/dev/null"), 0);
	wd_autofree char *after = read_view(f, ".warden/permissions.json");
	assert_string_equal(after, "{}\n");
}

static void test_view_hidden(void **state)
{
	struct fx *f = *state;
	wd_autofree char *db = vpath(f, ".warden/audit.db");
	wd_autofree char *wal = vpath(f, ".warden/audit.db-wal");
	struct stat st;

	assert_int_equal(stat(db, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(stat(wal, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(sh(f, "ls -a .warden | grep -q permissions.json"), 0);
	assert_int_not_equal(sh(f, "ls -a .warden | grep -q audit"), 0);
	assert_int_not_equal(sh(f, "find . | grep -q audit"), 0);
	/* The real file is untouched by all that. */
	assert_int_equal(fstatat(f->real, ".warden/audit.db", &st, 0), 0);
}

static void test_view_read_only(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = vpath(f, "t");
	wd_autofree char *readme = vpath(f, "README");

	assert_int_equal(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(open(readme, O_WRONLY | O_CLOEXEC), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(mkdir(p, 0755), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(unlink(readme), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(chmod(readme, 0600), -1);
	assert_int_equal(errno, EROFS);
	assert_int_not_equal(sh(f, "touch t 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "touch README 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "mv README R 2>/dev/null"), 0);
	assert_int_equal(sh(f, "cat README >/dev/null && ls >/dev/null"), 0);
}

static void test_view_stop_while_mounted(void **state)
{
	struct fx *f = *state;
	struct stat st;

	assert_int_equal(sh(f, "cat README >/dev/null"), 0);
	int64_t t0 = wd_now_mono_ns();
	sbx_view_stop(f->view); /* still mounted: the workers must be woken */
	f->view = NULL;
	assert_true(ms_since(t0) < 2000);
	/* The connection is gone: nothing is served, nothing hangs. */
	wd_autofree char *readme = vpath(f, "README");
	assert_int_equal(open(readme, O_RDONLY | O_CLOEXEC), -1);
	assert_int_equal(errno, ENOTCONN);
	assert_int_equal(stat(readme, &st) == 0 || errno == ENOTCONN, 1);
}

/*
 * A caller that is not the view's user: what it makes belongs to it (its
 * fsuid and fsgid; a set-group-ID directory's group and bit, as the kernel
 * gives them), never with set-user-ID or set-group-ID on a file, and what
 * it may not touch it cannot touch through the view (default_permissions).
 * The caller is a child of the test that became nobody.
 */
static void test_view_caller_credentials(void **state)
{
	struct fx *f = *state;
	struct stat st;

	assert_int_equal(chmod(f->dir, 0755), 0);
	wd_autofree char *pub = vpath(f, "pub");
	wd_autofree char *sg = vpath(f, "sg");
	assert_int_equal(mkdir(pub, 0777), 0);
	assert_int_equal(chmod(pub, 0777), 0);
	assert_int_equal(mkdir(sg, 0777), 0);
	assert_int_equal(chown(sg, 0, 100), 0);
	assert_int_equal(chmod(sg, 02777), 0);
	wd_autofree char *rootonly = vpath(f, "rootonly");
	write_view(f, "rootonly", "root\n");
	assert_int_equal(chmod(rootonly, 0600), 0);

	pid_t pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
			_exit(100);
		int fd = open(vpath(f, "pub/file"), O_WRONLY | O_CREAT | O_EXCL, 04755);
		if (fd < 0 || close(fd) < 0)
			_exit(101);
		if (mkdir(vpath(f, "pub/dir"), 0755) < 0 || symlink("x", vpath(f, "pub/ln")) < 0)
			_exit(102);
		fd = open(vpath(f, "sg/file"), O_WRONLY | O_CREAT, 02755);
		if (fd < 0 || close(fd) < 0 || mkdir(vpath(f, "sg/dir"), 0755) < 0)
			_exit(103);
		if (chmod(vpath(f, "pub/file"), 06755) < 0)
			_exit(104);
		/* Someone else's: no read, no chmod, no chown, no times. */
		if (open(vpath(f, "rootonly"), O_RDONLY) >= 0 || errno != EACCES)
			_exit(105);
		if (chmod(vpath(f, "rootonly"), 0666) == 0 ||
		    chown(vpath(f, "pub/file"), 0, 0) == 0)
			_exit(106);
		struct timespec ts[2] = {{.tv_sec = 1000}, {.tv_sec = 1000}};
		if (utimensat(AT_FDCWD, vpath(f, "rootonly"), ts, 0) == 0)
			_exit(107);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(wait_status(pid), 0);
	static const char *const made[] = {"pub/file", "pub/dir", "pub/ln", "sg/file", "sg/dir"};
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		assert_int_equal(fstatat(f->real, made[i], &st, AT_SYMLINK_NOFOLLOW), 0);
		if (st.st_uid != 65534)
			fail_msg("%s belongs to uid %u", made[i], (unsigned)st.st_uid);
		assert_int_equal(st.st_gid, wd_str_has_prefix(made[i], "sg/") ? 100 : 65534);
	}
	assert_int_equal(fstatat(f->real, "pub/file", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(fstatat(f->real, "sg/file", &st, 0), 0);
	assert_int_equal(st.st_mode & 07000, 0);
	assert_int_equal(fstatat(f->real, "sg/dir", &st, 0), 0);
	assert_true(st.st_mode & S_ISGID);
	assert_int_equal(fstatat(f->real, "rootonly", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_not_equal(st.st_mtim.tv_sec, 1000);
}

#define PT_TWIN(fn, set_up)                                                                        \
	{                                                                                          \
#fn "_pt", fn, set_up, teardown, NULL                                              \
	}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_view_sensitive_cat_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_plain_open_not_asked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_sensitive_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_sensitive_hard_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_sensitive_mv_cp_python_mmap, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_view_sensitive_allowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_pending_decision_does_not_block_others,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_warden_is_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_hidden, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_read_only, setup_ro, teardown),
		cmocka_unit_test_setup_teardown(test_view_stop_while_mounted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_caller_credentials, setup, teardown),
		/* The same with kernel passthrough asked for: it changes no
		 * decision (on a kernel without it the view serves as above). */
		PT_TWIN(test_view_sensitive_cat_refused, setup_pt),
		PT_TWIN(test_view_sensitive_hard_link, setup_pt),
		PT_TWIN(test_view_sensitive_mv_cp_python_mmap, setup_pt),
		PT_TWIN(test_view_sensitive_allowed, setup_pt),
		PT_TWIN(test_view_warden_is_read_only, setup_pt),
		PT_TWIN(test_view_read_only, setup_pt_ro),
		PT_TWIN(test_view_caller_credentials, setup_pt),
	};
	int rc = can_run();

	if (rc)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
