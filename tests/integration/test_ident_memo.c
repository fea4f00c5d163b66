/*
 * test_ident_memo: the memo of walks up of "could the agent have written
 * it" (sandbox/ident.c, chain_memo_hit) never gives a stale answer. Each
 * case first shows the memo answers (its hit count grows), then changes
 * what the answer depends on between two checks, as the agent or the host
 * could between two execs, and wants the full walk's answer: a directory
 * made writable by others (itself or one above it), given to another
 * owner, moved into a place the agent may write or under an open
 * directory, replaced by another; a symlink on the way flipped; the
 * program replaced. A temporary directory on a block-device file system
 * plays the caller's root (the memo keeps only those).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "ident_int.h"
#include "proc_int.h"
#include "wt.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

struct tree {
	char *root; /* the caller's root */
	int rfd;
	struct sbx_places *pl; /* the agent may write /proj */
};

static char *at(const struct tree *t, const char *rel)
{
	return wd_asprintf("%s/%s", t->root, rel);
}

/* root/sys/bin/prog (all root's, 0755) and the place root/proj. */
static int setup(void **state)
{
	struct tree *t = wd_calloc(1, sizeof(*t));
	char tmpl[] = "/var/tmp/warden-memo-XXXXXX";
	t->root = wd_strdup(mkdtemp(tmpl));
	chmod(t->root, 0755);
	struct stat st;
	if (stat(t->root, &st) < 0 || major(st.st_dev) == 0) {
		/* Not a block device: nothing is remembered there (skipped). */
		wt_rmtree(t->root);
		free(t->root);
		free(t);
		*state = NULL;
		return 0;
	}
	wt_write(t->root, "sys/bin/prog", "#!/bin/sh\n");
	wt_write(t->root, "proj/keep", "x");
	char *p = at(t, "sys/bin/prog");
	chmod(p, 0755);
	free(p);
	const char *dirs[] = {"sys", "sys/bin", "proj"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(dirs); i++) {
		p = at(t, dirs[i]);
		chmod(p, 0755);
		free(p);
	}
	t->rfd = open(t->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(t->rfd >= 0);
	char *places_v[] = {"/proj", NULL};
	t->pl = sbx_places_open(t->rfd, places_v, 0);
	/* The memo trusts a ctime only when it is over a second old. */
	sleep(2);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tree *t = *state;
	if (!t)
		return 0;
	sbx_places_free(t->pl);
	close(t->rfd);
	wt_rmtree(t->root);
	free(t->root);
	free(t);
	return 0;
}

/* The verdict for |path| (in the tree's root), as the exec decoder takes
 * it (note_writable): the file, then each symlink on the way. */
static bool writable(const struct tree *t, const char *path, char **why)
{
	struct sbx_walk_caller c = {.pid = getpid()};
	struct sbx_walk w;
	assert_int_equal(sbx_walk_path(t->rfd, t->rfd, path, true, &c, &w), 0);
	*why = NULL;
	bool bad = sbx_places_writable(t->pl, t->rfd, w.dirfd, w.fd, &w.st, why);
	for (size_t i = 0; !bad && i < w.nlinks; i++) {
		free(*why);
		bad = sbx_places_writable(t->pl, t->rfd, w.link_dir[i], w.link_dir[i],
					  &w.link_st[i], why);
	}
	sbx_walk_free(&w);
	print_message("%s: %s %s\n", path, bad ? "writable" : "safe", *why ? *why : "-");
	return bad;
}

static void want(const struct tree *t, const char *path, bool bad, const char *why_sub)
{
	char *why = NULL;
	assert_int_equal(writable(t, path, &why), bad);
	if (why_sub)
		assert_non_null(strstr(why, why_sub));
	free(why);
}

/* "safe" twice, the second from the memo. */
static void want_remembered(const struct tree *t, const char *path)
{
	want(t, path, false, NULL);
	size_t hits = sbx_places_memo_hits(t->pl);
	want(t, path, false, NULL);
	assert_true(sbx_places_memo_hits(t->pl) > hits);
}

/* chmod 777 of the program's directory, then of the one above it: each
 * is seen at the next check. An over-eager memo (keyed on identity only)
 * answers "safe". */
static void test_memo_chmod_seen(void **state)
{
	struct tree *t = *state;
	if (!t)
		skip();
	want_remembered(t, "/sys/bin/prog");
	char *bin = at(t, "sys/bin"), *sys = at(t, "sys");
	assert_int_equal(chmod(bin, 0777), 0);
	want(t, "/sys/bin/prog", true, "writable by its group or by others");
	assert_int_equal(chmod(bin, 0755), 0);
	want(t, "/sys/bin/prog", false, NULL);
	assert_int_equal(chmod(sys, 0777), 0);
	want(t, "/sys/bin/prog", true, "writable by its group or by others");
	assert_int_equal(chmod(sys, 0755), 0);
	want(t, "/sys/bin/prog", false, NULL);
	free(bin);
	free(sys);
}

/* chown of the directory above the program's to another user. */
static void test_memo_chown_seen(void **state)
{
	struct tree *t = *state;
	if (!t)
		skip();
	want_remembered(t, "/sys/bin/prog");
	char *sys = at(t, "sys");
	assert_int_equal(chown(sys, 1000, 1000), 0);
	want(t, "/sys/bin/prog", true, "belongs to uid 1000");
	free(sys);
}

/* The program's directory moved into the place the agent may write: the
 * same directory, now below /proj. An over-eager memo of the directory's
 * verdict answers "safe". */
static void test_memo_dir_moved_into_place(void **state)
{
	struct tree *t = *state;
	if (!t)
		skip();
	want_remembered(t, "/sys/bin/prog");
	char *from = at(t, "sys/bin"), *to = at(t, "proj/bin");
	assert_int_equal(rename(from, to), 0);
	want(t, "/proj/bin/prog", true, "written where the agent can write: /proj");
	free(from);
	free(to);
}

/* The program's directory moved under a directory open to all, whose own
 * mode and owner are fine for the memo's lv[0]: only its ".." changed. */
static void test_memo_dir_moved_under_open_dir(void **state)
{
	struct tree *t = *state;
	if (!t)
		skip();
	char *open_ = at(t, "open");
	assert_int_equal(mkdir(open_, 0777), 0);
	assert_int_equal(chmod(open_, 0777), 0);
	sleep(2); /* the root changed: its ctime must age again to be kept */
	want_remembered(t, "/sys/bin/prog");
	char *from = at(t, "sys/bin"), *to = at(t, "open/bin");
	assert_int_equal(rename(from, to), 0);
	want(t, "/open/bin/prog", true, "writable by its group or by others");
	free(open_);
	free(from);
	free(to);
}

/* The program's directory replaced by another one (another owner) under
 * the same name. */
static void test_memo_dir_replaced(void **state)
{
	struct tree *t = *state;
	if (!t)
		skip();
	want_remembered(t, "/sys/bin/prog");
	char *bin = at(t, "sys/bin"), *old = at(t, "sys/old");
	assert_int_equal(rename(bin, old), 0);
	wt_write(t->root, "sys/bin/prog", "#!/bin/sh\n");
	assert_int_equal(chown(bin, 1000, 1000), 0);
	want(t, "/sys/bin/prog", true, "belongs to uid 1000");
	free(bin);
	free(old);
}

/* A symlink on the way flipped from the system's directory to the place:
 * a memo of the path would answer "safe". */
static void test_memo_symlink_flipped(void **state)
{
	struct tree *t = *state;
	if (!t)
		skip();
	wt_write(t->root, "proj/prog", "#!/bin/sh\n");
	char *link = at(t, "sys/link"), *tmp = at(t, "sys/link.new");
	assert_int_equal(symlink("bin", link), 0);
	sleep(2); /* sys changed: its ctime must age again to be kept */
	want_remembered(t, "/sys/link/prog");
	assert_int_equal(symlink("/proj", tmp), 0);
	assert_int_equal(rename(tmp, link), 0);
	want(t, "/sys/link/prog", true, "written where the agent can write: /proj");
	free(link);
	free(tmp);
}

/* The program replaced by another user's file in the remembered
 * directory. */
static void test_memo_program_replaced(void **state)
{
	struct tree *t = *state;
	if (!t)
		skip();
	want_remembered(t, "/sys/bin/prog");
	char *prog = at(t, "sys/bin/prog"), *tmp = at(t, "sys/bin/prog.new");
	wt_write(t->root, "sys/bin/prog.new", "#!/bin/sh\n");
	assert_int_equal(chown(tmp, 1000, 1000), 0);
	assert_int_equal(rename(tmp, prog), 0);
	want(t, "/sys/bin/prog", true, "belongs to uid 1000");
	free(prog);
	free(tmp);
}

/* The memo holds a few descriptors, and gives them all back with the
 * places; checks that miss and walk again leak none. */
static void test_memo_fds_bounded(void **state)
{
	struct tree *t = *state;
	if (!t)
		skip();
	int before = wt_count_fds();
	char *bin = at(t, "sys/bin");
	for (int i = 0; i < 40; i++) {
		want(t, "/sys/bin/prog", false, NULL);
		if (i % 10 == 9) {
			assert_int_equal(chmod(bin, 0750), 0); /* a ctime of now: a miss */
			assert_int_equal(chmod(bin, 0755), 0);
		}
	}
	assert_true(wt_count_fds() <= before + 8 * 8);
	char *places_v[] = {"/proj", NULL};
	sbx_places_free(t->pl);
	t->pl = sbx_places_open(t->rfd, places_v, 0);
	assert_true(wt_count_fds() <= before);
	free(bin);
}

/* The name of a descriptor, asked in a child made by fork after the
 * parent remembered its own /proc/self/fd: the child's descriptor, not the
 * parent's under the same number. An over-eager memo (no pid) names the
 * parent's file. */
static void test_fd_path_after_fork(void **state)
{
	(void)state;
	int a = open("/usr", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(a >= 0);
	char *pa = sbx_fd_path(a);
	assert_string_equal(pa, "/usr");
	free(pa);
	char *cwd = sbx_proc_link(getpid(), "cwd");
	assert_non_null(cwd);
	free(cwd);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(a);
		int b = open("/var", O_PATH | O_DIRECTORY | O_CLOEXEC);
		char *pb = b == a ? sbx_fd_path(b) : NULL;
		char *own = sbx_proc_link(getpid(), "exe");
		_exit(pb && strcmp(pb, "/var") == 0 && own ? 0 : 1);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	pa = sbx_fd_path(a);
	assert_string_equal(pa, "/usr");
	free(pa);
	close(a);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_ident_memo needs root (chown to another user)\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_memo_chmod_seen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memo_chown_seen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memo_dir_moved_into_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memo_dir_moved_under_open_dir, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_memo_dir_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memo_symlink_flipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memo_program_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memo_fds_bounded, setup, teardown),
		cmocka_unit_test(test_fd_path_after_fork),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
