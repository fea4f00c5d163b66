/*
 * test_ident: the caller-context path walk and the agent-writable check
 * (sandbox/ident.c) on a real file system, without a sandbox: a temporary
 * directory plays the caller's root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "ident_int.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *tmp_root(void)
{
	char tmpl[] = "/var/tmp/warden-ident-XXXXXX";
	char *d = wd_strdup(mkdtemp(tmpl));
	chmod(d, 0755);
	return d;
}

static int open_dir(const char *p)
{
	int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

static bool same(const struct stat *a, const char *path)
{
	struct stat b;
	return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* An absolute symlink restarts at the caller's root, not the supervisor's;
 * ".." stops at that root; a trailing slash on a file is ENOTDIR; a loop is
 * ELOOP; the final symlink is refused with ELOOP when not followed. */
static void test_sbx_walk_path_in_root(void **state)
{
	(void)state;
	char *root = tmp_root();
	wt_write(root, "b/x", "inside\n");
	wt_write(root, "etc/passwd", "not the host's\n");
	char *p = wd_asprintf("%s/a", root);
	assert_int_equal(symlink("/b", p), 0);
	free(p);
	p = wd_asprintf("%s/loop", root);
	assert_int_equal(symlink("loop", p), 0);
	free(p);
	int rfd = open_dir(root);
	struct sbx_walk_caller c = {.pid = getpid()};
	struct sbx_walk w;
	char *want = wd_asprintf("%s/b/x", root);
	assert_int_equal(sbx_walk_path(rfd, rfd, "a/x", true, &c, &w), 0);
	assert_true(same(&w.st, want));
	assert_int_equal(w.nlinks, 1);
	assert_true(w.dirfd >= 0);
	sbx_walk_free(&w);
	assert_int_equal(sbx_walk_path(rfd, rfd, "/../../../b/x", true, &c, &w), 0);
	assert_true(same(&w.st, want));
	sbx_walk_free(&w);
	char *pw = wd_asprintf("%s/etc/passwd", root);
	assert_int_equal(sbx_walk_path(rfd, rfd, "b/../../../etc/passwd", true, &c, &w), 0);
	assert_true(same(&w.st, pw));
	sbx_walk_free(&w);
	assert_int_equal(sbx_walk_path(rfd, rfd, "b/x/", true, &c, &w), -ENOTDIR);
	sbx_walk_free(&w);
	assert_int_equal(sbx_walk_path(rfd, rfd, "loop", true, &c, &w), -ELOOP);
	sbx_walk_free(&w);
	assert_int_equal(sbx_walk_path(rfd, rfd, "a", false, &c, &w), -ELOOP);
	sbx_walk_free(&w);
	assert_int_equal(sbx_walk_path(rfd, rfd, "nothing/x", true, &c, &w), -ENOENT);
	sbx_walk_free(&w);
	assert_int_equal(sbx_walk_path(rfd, rfd, "", true, &c, &w), -ENOENT);
	sbx_walk_free(&w);
	close(rfd);
	wt_rmtree(root);
	free(pw);
	free(want);
	free(root);
}

/* /proc/self and /proc/thread-self name the caller (here: this process),
 * and a magic link is followed by the kernel. */
static void test_sbx_walk_path_proc_self(void **state)
{
	(void)state;
	int rfd = open_dir("/");
	struct sbx_walk_caller c = {.pid = getpid()};
	struct sbx_walk w;
	assert_int_equal(sbx_walk_path(rfd, rfd, "/proc/self/exe", true, &c, &w), 0);
	assert_true(same(&w.st, "/proc/self/exe"));
	assert_int_equal(w.dirfd, -1); /* reached through a magic link */
	sbx_walk_free(&w);
	assert_int_equal(sbx_walk_path(rfd, rfd, "/proc/thread-self/exe", true, &c, &w), 0);
	assert_true(same(&w.st, "/proc/self/exe"));
	sbx_walk_free(&w);
	close(rfd);
}

/* The places: a file under one is agent-writable; a directory of another
 * user's, or one writable by others, too; a root-owned path outside them is
 * not; the sticky /tmp-like directory of root's is fine by itself. */
static void test_sbx_places_writable(void **state)
{
	(void)state;
	char *root = tmp_root();
	wt_write(root, "w/prog", "x");
	wt_write(root, "safe/prog", "x");
	wt_write(root, "other/prog", "x");
	wt_write(root, "open/prog", "x");
	wt_write(root, "sticky/prog", "x");
	char *other = wd_asprintf("%s/other", root);
	assert_int_equal(chown(other, 1000, 1000), 0);
	char *open_ = wd_asprintf("%s/open", root);
	chmod(open_, 0777);
	char *sticky = wd_asprintf("%s/sticky", root);
	chmod(sticky, 01777);
	char *w = wd_asprintf("%s/w", root);
	char *places_v[] = {w, NULL};
	struct sbx_places *pl = sbx_places_open(-1, places_v, 0);
	int rfd = open_dir("/");
	struct {
		const char *rel;
		bool writable;
		const char *why;
	} cases[] = {
		{"w/prog", true, "written where the agent can write"},
		{"safe/prog", false, NULL},
		{"other/prog", true, "belongs to uid 1000"},
		{"open/prog", true, "writable by its group or by others"},
		{"sticky/prog", false, NULL},
	};
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		char *p = wd_asprintf("%s/%s", root, cases[i].rel);
		struct sbx_walk_caller c = {.pid = getpid()};
		struct sbx_walk wk;
		assert_int_equal(sbx_walk_path(rfd, rfd, p, true, &c, &wk), 0);
		char *why = NULL;
		bool bad = sbx_places_writable(pl, rfd, wk.dirfd, wk.fd, &wk.st, &why);
		print_message("%s: %d %s\n", cases[i].rel, bad, why ? why : "-");
		assert_int_equal(bad, cases[i].writable);
		if (cases[i].why)
			assert_non_null(strstr(why, cases[i].why));
		free(why);
		sbx_walk_free(&wk);
		free(p);
	}
	/* A file of the place found through a descriptor only (dirfd -1) is
	 * found again by its name; a deleted one has no place. */
	char *p = wd_asprintf("%s/w/prog", root);
	int fd = open(p, O_PATH | O_CLOEXEC);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	char *why = NULL;
	assert_true(sbx_places_writable(pl, rfd, -1, fd, &st, &why));
	assert_non_null(strstr(why, "written where the agent can write"));
	free(why);
	close(fd);
	free(p);
	p = wd_asprintf("%s/safe/prog", root);
	fd = open(p, O_PATH | O_CLOEXEC);
	assert_int_equal(fstat(fd, &st), 0);
	assert_false(sbx_places_writable(pl, rfd, -1, fd, &st, &why));
	unlink(p);
	assert_true(sbx_places_writable(pl, rfd, -1, fd, &st, &why));
	assert_non_null(strstr(why, "no place"));
	free(why);
	close(fd);
	free(p);
	close(rfd);
	sbx_places_free(pl);
	wt_rmtree(root);
	free(w);
	free(sticky);
	free(open_);
	free(other);
	free(root);
}

/* No walk, successful or not, leaves a descriptor open. */
static void test_sbx_walk_path_no_fd_leak(void **state)
{
	(void)state;
	int rfd = open_dir("/");
	int before = wt_count_fds();
	const char *paths[] = {
		"/usr/bin/ls",	  "/bin/ls",	  "/proc/self/exe",	      "/proc/self/fd/0",
		"/nonexistent/x", "/usr/bin/ls/", "/etc/../usr/bin/../bin/sh"};
	for (int round = 0; round < 50; round++) {
		for (size_t i = 0; i < WD_ARRAY_SIZE(paths); i++) {
			struct sbx_walk_caller c = {.pid = getpid()};
			struct sbx_walk w;
			(void)sbx_walk_path(rfd, rfd, paths[i], true, &c, &w);
			sbx_walk_free(&w);
			(void)sbx_walk_path(rfd, rfd, paths[i], false, &c, &w);
			sbx_walk_free(&w);
		}
	}
	assert_int_equal(wt_count_fds(), before);
	close(rfd);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_ident needs root (chown to another user)\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sbx_walk_path_in_root),
		cmocka_unit_test(test_sbx_walk_path_proc_self),
		cmocka_unit_test(test_sbx_places_writable),
		cmocka_unit_test(test_sbx_walk_path_no_fd_leak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
