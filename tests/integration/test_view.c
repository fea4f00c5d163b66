/*
 * test_view: the project view on a real FUSE mount.
 *
 * The test process makes itself a private mount namespace (so every mount
 * vanishes when it exits), and for each test mounts the view over a fresh
 * temporary project directory at the same path, as the sandbox child does,
 * serves it in-process with sbx_view_start() and drives it with real tools
 * (sh, cat, git, make, gcc, python3) run in the mount and with direct
 * syscalls. The real directory stays reachable for the test (as "the user
 * outside") through an O_PATH fd opened before the mount.
 *
 * This file holds the behaviour with real tools; who may reach what
 * (sensitive files, .warden/, hidden and read-only, the caller's
 * credentials) is in test_view_access.c, the fixture in view_fx.c.
 *
 * Needs root (mount(2) of FUSE), /dev/fuse and unshare(CLONE_NEWNS); where
 * any is missing it says why and exits 77 (skipped).
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

/* ---- behaviour -------------------------------------------------------- */

/*
 * A tree with many more files than the view's descriptor budget (200 here;
 * RLIMIT_NOFILE's three quarters in warden): walked, read and read again,
 * every file is served, the view stays near its budget because the kernel
 * was asked to drop the least recently used files, and a file held open
 * meanwhile, and the walker's cwd, are left alone (a dropped busy dentry
 * would read as deleted). A file hidden by a mount made before the view
 * was sealed (as warden hides places inside the project) stays hidden:
 * dropping its entry would detach the mount.
 */
static void test_view_many_files_within_budget(void **state)
{
	struct fx *f = *state;
	put_real(f, "hidden.txt", "NOT-FOR-THE-AGENT\n");
	wd_autofree char *hidden = vpath(f, "hidden.txt");
	assert_int_equal(mount("/dev/null", hidden, NULL, MS_BIND, NULL), 0);
	sbx_view_seal(f->view);
	assert_int_equal(mkdirat(f->real, "many", 0755), 0);
	for (int i = 0; i < 3000; i++) {
		char name[32];
		snprintf(name, sizeof(name), "many/f%04d", i);
		put_real(f, name, "0123456789\n");
	}
	wd_autofree char *out = wd_asprintf("%s/out", f->dir);
	unlink(out);
	pid_t holder =
		spawn_sh(f->dir, "exec 3< many/f0000; sleep 3; readlink /proc/$$/fd/3 > held");
	usleep(200000);
	assert_int_equal(sh(f,
			    "cd many && for r in 1 2; do cat f* | wc -c; done > ../out && "
			    "test \"$(/bin/pwd)\" = \"%s/many\" && ls -l | wc -l >> ../out",
			    f->dir),
			 0);
	wd_autofree char *counts = read_view(f, "out");
	assert_non_null(counts);
	assert_string_equal(counts, "33000\n33000\n3001\n");
	assert_int_equal(wait_status(holder), 0);
	wd_autofree char *link = read_view(f, "held");
	assert_non_null(link);
	assert_non_null(strstr(link, "/many/f0000"));
	assert_null(strstr(link, "deleted"));
	size_t nodes = 0;
	uint64_t evicted = 0;
	for (int i = 0; i < 100; i++) {
		sbx_view_counts(f->view, &nodes, &evicted);
		if (nodes <= 200)
			break;
		usleep(20000);
	}
	print_message("view: %zu objects held, %llu entries dropped\n", nodes,
		      (unsigned long long)evicted);
	assert_true(evicted >= 2800);
	assert_true(nodes <= 200);
	wd_autofree char *after = read_view(f, "hidden.txt");
	assert_non_null(after);
	assert_string_equal(after, "");
	assert_int_equal(umount2(hidden, MNT_DETACH), 0);
}

static void test_view_serves_the_project(void **state)
{
	struct fx *f = *state;
	struct stat vst, rst;
	wd_autofree char *text = read_view(f, "README");

	assert_string_equal(text, "hello view\n");
	/* The mount covers the real directory at the same path. */
	assert_int_equal(stat(f->dir, &vst), 0);
	assert_int_equal(fstat(f->real, &rst), 0);
	assert_true(vst.st_dev != rst.st_dev);
}

static void test_view_create_read_write_truncate(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = vpath(f, "data.bin");
	char buf[64] = {0};
	struct stat st;
	int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "abcdef", 6, 0), 6);
	assert_int_equal(pwrite(fd, "XY", 2, 2), 2);
	assert_int_equal(pwrite(fd, "end", 3, 100), 3); /* a hole */
	assert_int_equal(pread(fd, buf, 6, 0), 6);
	assert_memory_equal(buf, "abXYef", 6);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 103);
	assert_int_equal(pread(fd, buf, 3, 50), 3);
	assert_memory_equal(buf, "\0\0\0", 3);
	assert_int_equal(ftruncate(fd, 4), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 4);
	assert_int_equal(close(fd), 0);
	assert_int_equal(truncate(p, 2), 0); /* by name: setattr without a handle */
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 2);
	/* The real file has what the view wrote. */
	assert_int_equal(fstatat(f->real, "data.bin", &st, 0), 0);
	assert_int_equal(st.st_size, 2);
	assert_int_equal(sh(f, "printf 'x\\n' >> data.bin && test \"$(cat data.bin)\" = abx"), 0);
	assert_int_equal(open(p, O_CREAT | O_EXCL | O_WRONLY, 0600), -1);
	assert_int_equal(errno, EEXIST);
}

static void test_view_rename(void **state)
{
	struct fx *f = *state;
	wd_autofree char *a = vpath(f, "a"), *b = vpath(f, "b"), *d1 = vpath(f, "d1");
	wd_autofree char *d2 = vpath(f, "d2");

	write_view(f, "a", "A");
	write_view(f, "b", "B");
	/* Over an existing file. */
	assert_int_equal(rename(a, b), 0);
	assert_int_equal(access(a, F_OK), -1);
	wd_autofree char *tb = read_view(f, "b");
	assert_string_equal(tb, "A");
	/* NOREPLACE and EXCHANGE. */
	write_view(f, "a", "A2");
	assert_int_equal(renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_NOREPLACE), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE), 0);
	wd_autofree char *ta = read_view(f, "a"), *tb2 = read_view(f, "b");
	assert_string_equal(ta, "A");
	assert_string_equal(tb2, "A2");
	/* A directory with contents, then the contents under the new name. */
	assert_int_equal(mkdir(d1, 0755), 0);
	write_view(f, "d1/inner", "in");
	assert_int_equal(rename(d1, d2), 0);
	wd_autofree char *ti = read_view(f, "d2/inner");
	assert_string_equal(ti, "in");
	assert_int_equal(sh(f, "mkdir -p x/y && echo z > x/y/z && mv x w && cat w/y/z"), 0);
	assert_int_equal(faccessat(f->real, "w/y/z", F_OK, 0), 0);
}

static void test_view_links(void **state)
{
	struct fx *f = *state;
	wd_autofree char *src = vpath(f, "orig"), *hard = vpath(f, "hard");
	wd_autofree char *rel = vpath(f, "rel"), *abs = vpath(f, "abs");
	char buf[PATH_MAX];
	struct stat st;
	ssize_t n;

	write_view(f, "orig", "content");
	assert_int_equal(link(src, hard), 0);
	assert_int_equal(stat(src, &st), 0);
	assert_int_equal(st.st_nlink, 2);
	write_view(f, "hard", "changed");
	wd_autofree char *t = read_view(f, "orig");
	assert_string_equal(t, "changed");

	assert_int_equal(symlink("orig", rel), 0);
	assert_int_equal(symlink(src, abs), 0);
	n = readlink(rel, buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "orig", 4);
	assert_int_equal(lstat(rel, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	wd_autofree char *tr = read_view(f, "rel"), *ta = read_view(f, "abs");
	assert_string_equal(tr, "changed");
	assert_string_equal(ta, "changed");
	assert_int_equal(unlink(src), 0);
	assert_int_equal(stat(hard, &st), 0);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(stat(rel, &st), -1); /* dangling now */
	assert_int_equal(errno, ENOENT);
}

static void test_view_chmod_chown_utimens(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = vpath(f, "m");
	struct timespec ts[2] = {{.tv_sec = 1000000000, .tv_nsec = 5}, {.tv_sec = 1200000000}};
	struct stat st;
	int64_t now = wd_now_real_us() / 1000000;

	write_view(f, "m", "m");
	assert_int_equal(chmod(p, 0751), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0751);
	assert_int_equal(fstatat(f->real, "m", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0751);
	assert_int_equal(chown(p, 1234, 5678), 0);
	assert_int_equal(fstatat(f->real, "m", &st, 0), 0);
	assert_int_equal(st.st_uid, 1234);
	assert_int_equal(st.st_gid, 5678);

	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	assert_int_equal(fstatat(f->real, "m", &st, 0), 0);
	assert_int_equal(st.st_atim.tv_sec, 1000000000);
	assert_int_equal(st.st_atim.tv_nsec, 5);
	assert_int_equal(st.st_mtim.tv_sec, 1200000000);
	/* UTIME_NOW for atime, UTIME_OMIT keeps mtime. */
	ts[0].tv_nsec = UTIME_NOW;
	ts[1].tv_nsec = UTIME_OMIT;
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	assert_int_equal(fstatat(f->real, "m", &st, 0), 0);
	assert_true(st.st_atim.tv_sec >= now);
	assert_int_equal(st.st_mtim.tv_sec, 1200000000);
	/* Through a handle (futimens) too. */
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1] = (struct timespec){.tv_sec = 1300000000};
	assert_int_equal(futimens(fd, ts), 0);
	close(fd);
	assert_int_equal(fstatat(f->real, "m", &st, 0), 0);
	assert_int_equal(st.st_mtim.tv_sec, 1300000000);
	assert_int_equal(sh(f, "touch -d @1400000000 m && test $(stat -c %%Y m) = 1400000000"), 0);
	/* A directory's handle is not an fd: futimens and fstat on an open
	 * directory must still reach the directory. */
	wd_autofree char *dp = vpath(f, "dir");
	assert_int_equal(mkdir(dp, 0755), 0);
	int dfd = open(dp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1] = (struct timespec){.tv_sec = 1100000000};
	assert_int_equal(futimens(dfd, ts), 0);
	assert_int_equal(fchmod(dfd, 0700), 0);
	assert_int_equal(fstat(dfd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	close(dfd);
	assert_int_equal(fstatat(f->real, "dir", &st, 0), 0);
	assert_int_equal(st.st_mtim.tv_sec, 1100000000);
	assert_int_equal(st.st_mode & 07777, 0700);
}

static void test_view_readdir_10000(void **state)
{
	struct fx *f = *state;
	char name[32];

	assert_int_equal(mkdirat(f->real, "many", 0755), 0);
	int dfd = openat(f->real, "many", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	for (int i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "f%05d", i);
		int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	close(dfd);
	assert_int_equal(sh(f, "test $(ls many | wc -l) = 10000"), 0);
	assert_int_equal(sh(f, "test $(ls -l many | grep -c ' f[0-9]') = 10000"), 0);
	assert_int_equal(sh(f, "test $(find many -type f | wc -l) = 10000"), 0);
	assert_int_equal(sh(f, "test \"$(ls many | sort | uniq | head -1)\" = f00000"), 0);
}

static void test_view_concurrent_writers(void **state)
{
	struct fx *f = *state;
	pid_t pids[4];

	write_view(f, "shared", "");
	for (int i = 0; i < 4; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			char path[128], own[128], block[4096];
			snprintf(path, sizeof(path), "%s/shared", f->dir);
			snprintf(own, sizeof(own), "%s/own%d", f->dir, i);
			memset(block, 'a' + i, sizeof(block));
			int fd = open(path, O_WRONLY | O_CLOEXEC);
			int fo = open(own, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd < 0 || fo < 0)
				_exit(1);
			for (int k = 0; k < 256; k++) {
				off_t off = ((off_t)k * 4 + i) * (off_t)sizeof(block);
				if (pwrite(fd, block, sizeof(block), off) != sizeof(block))
					_exit(2);
				if (write(fo, block, sizeof(block)) != sizeof(block))
					_exit(3);
			}
			_exit(close(fd) || close(fo) ? 4 : 0);
		}
		assert_true(pids[i] > 0);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(wait_status(pids[i]), 0);
	wd_autofree char *all = read_view(f, "shared");
	assert_int_equal(strlen(all), 4 * 256 * 4096);
	for (size_t b = 0; b < 4 * 256; b++)
		for (size_t k = 0; k < 4096; k += 512)
			assert_int_equal(all[b * 4096 + k], 'a' + (int)(b % 4));
	assert_int_equal(
		sh(f, "for i in 0 1 2 3; do test $(stat -c %%s own$i) = 1048576 || exit 1; done"),
		0);
}

static void test_view_git(void **state)
{
	struct fx *f = *state;

	if (system("command -v git >/dev/null") != 0)
		skip();
	/* git init writes .git/config, a control file: allowed here, and
	 * asked once per change; git's ordinary writes (index, objects,
	 * refs, logs) are never asked. */
	pthread_mutex_lock(&g_dec.lock);
	g_dec.verdict = 0;
	pthread_mutex_unlock(&g_dec.lock);
	assert_int_equal(sh(f,
			    "mkdir repo && cd repo && git init -q && echo one > a.txt && "
			    "mkdir sub && echo two > sub/b.txt && git add -A && "
			    "git -c user.name=t -c user.email=t@example.com commit -q -m first && "
			    "echo three >> a.txt && git -c user.name=t -c user.email=t@example.com "
			    "commit -q -am second && test $(git rev-list --count HEAD) = 2 && "
			    "git status --porcelain | wc -l | grep -qx 0 && git fsck --no-progress "
			    ">/dev/null 2>&1 && "
			    "git checkout -q HEAD~1 && test \"$(cat a.txt)\" = one"),
			 0);
	assert_true(find_record("repo/.git/config.lock") >= 0);
	char other[256] = "";
	pthread_mutex_lock(&g_dec.lock);
	for (int i = 0; i < g_dec.n; i++) {
		const char *p = g_dec.rec[i].path, *p2 = g_dec.rec[i].path2;
		/* git writes its config as config.lock, renamed over it. */
		bool control = strcmp(p, "repo/.git/config") == 0 ||
			       strcmp(p2, "repo/.git/config") == 0 ||
			       wd_str_has_prefix(p, "repo/.git/hooks");
		if (!control)
			snprintf(other, sizeof(other), "%.200s (access %u)", p,
				 g_dec.rec[i].access);
	}
	pthread_mutex_unlock(&g_dec.lock);
	if (other[0])
		fail_msg("git's ordinary write of %s was asked about", other);
}

static void test_view_make_gcc(void **state)
{
	struct fx *f = *state;

	if (system("command -v gcc >/dev/null && command -v make >/dev/null") != 0)
		skip();
	write_view(f, "main.c",
		   "#include \"lib.h\"\n#include <stdio.h>\n"
		   "int main(void) { printf(\"%d\\n\", add(40, 2)); return 0; }\n");
	write_view(f, "lib.c", "#include \"lib.h\"\nint add(int a, int b) { return a + b; }\n");
	write_view(f, "lib.h", "int add(int a, int b);\n");
	write_view(f, "Makefile",
		   "prog: main.o lib.o\n\tgcc -o $@ $^\n"
		   "%.o: %.c lib.h\n\tgcc -O1 -c -o $@ $<\n");
	assert_int_equal(sh(f, "make -s -j2 >/dev/null && test \"$(./prog)\" = 42"), 0);
	/* Up to date, then rebuilt after a change. */
	assert_int_equal(sh(f, "make -q"), 0);
	assert_int_equal(
		sh(f, "sleep 1.1; touch lib.h && make -s -j2 >/dev/null && ./prog >/dev/null"), 0);
}

static void test_view_editor_save(void **state)
{
	struct fx *f = *state;
	wd_autofree char *doc = vpath(f, "doc.txt"), *tmp = vpath(f, ".doc.txt.swp");
	char buf[32] = {0};

	write_view(f, "doc.txt", "version 1\n");
	int old = open(doc, O_RDONLY | O_CLOEXEC);
	assert_true(old >= 0);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(wd_write_all(fd, "version 2\n", 10), 0);
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(rename(tmp, doc), 0);
	wd_autofree char *t = read_view(f, "doc.txt");
	assert_string_equal(t, "version 2\n");
	/* The file opened before the save still reads the old version. */
	assert_int_equal(pread(old, buf, sizeof(buf) - 1, 0), 10);
	assert_string_equal(buf, "version 1\n");
	close(old);
	assert_int_equal(faccessat(f->real, ".doc.txt.swp", F_OK, 0), -1);
}

static void test_view_python(void **state)
{
	struct fx *f = *state;

	if (system("command -v python3 >/dev/null") != 0)
		skip();
	assert_int_equal(sh(f, "python3 -c 'import os; open(\"p.txt\",\"w\").write(\"py\"); "
			       "assert open(\"p.txt\").read() == \"py\"; "
			       "assert open(\"README\").read() == \"hello view\\n\"; "
			       "os.replace(\"p.txt\", \"q.txt\"); assert "
			       "os.listdir(\".\").count(\"q.txt\") == 1'"),
			 0);
}

static void test_view_dotdot_stays_in_the_view(void **state)
{
	struct fx *f = *state;
	const char *slash = strrchr(f->dir, '/');
	const char *base = slash ? slash + 1 : f->dir;
	wd_autofree char *up = wd_asprintf("%s/..", f->dir);
	wd_autofree char *again = wd_asprintf("%s/../%s/README", f->dir, base);
	wd_autofree char *hid = wd_asprintf("%s/../%s/.warden/audit.db", f->dir, base);
	struct stat a, b, v;

	/* The root's parent is the mountpoint's normal parent. */
	assert_int_equal(stat(up, &a), 0);
	assert_int_equal(stat("/tmp", &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_dev, b.st_dev);
	/* Coming back down through it lands in the view again. */
	assert_int_equal(stat(f->dir, &v), 0);
	assert_int_equal(stat(again, &a), 0);
	assert_int_equal(a.st_dev, v.st_dev);
	assert_int_equal(stat(hid, &a), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(sh(f,
			    "cd .. && cd .. && cd '%s' && cat README >/dev/null && "
			    "test ! -e .warden/audit.db",
			    f->dir),
			 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_view_serves_the_project, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_create_read_write_truncate, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_view_rename, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_chmod_chown_utimens, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_readdir_10000, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_concurrent_writers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_git, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_make_gcc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_editor_save, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_python, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_dotdot_stays_in_the_view, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_view_many_files_within_budget,
						setup_small_budget, teardown),
	};
	int rc = can_run();

	if (rc)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
