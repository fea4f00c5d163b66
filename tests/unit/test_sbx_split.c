/*
 * test_sbx_split: the split view's start walk (sandbox/view_split.c) on a
 * fixture tree: which subtrees become fast, which stay FUSE (sensitive,
 * control, write-protected and kept names, a second name of a sensitive
 * file, another file system), the identities it reports, its budgets and
 * its cap on mounts; and the decoding of an open's access from
 * /proc/TID/syscall (sandbox/proc.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "sandbox.h"

static char g_root[64];

static void put(const char *rel, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", g_root, rel);
	for (char *s = p + strlen(g_root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	if (text) {
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
	} else {
		mkdir(p, 0755);
	}
}

static void rel_link(const char *from, const char *to)
{
	char a[256], b[256];
	snprintf(a, sizeof(a), "%s/%s", g_root, from);
	snprintf(b, sizeof(b), "%s/%s", g_root, to);
	assert_int_equal(link(a, b), 0);
}

static struct pol_config *policy(void)
{
	struct pol_config *c = NULL;
	struct pol_config_errors e;
	assert_int_equal(pol_config_parse("{}", 2, "p.json", &c, &e), 0);
	pol_config_set_paths(c, g_root, "/root");
	return c;
}

static bool has_fast(const struct sbx_split *s, const char *rel)
{
	for (size_t i = 0; i < s->nfast; i++)
		if (strcmp(s->fast[i], rel) == 0)
			return true;
	return false;
}

static bool has_ident(const struct sbx_split *s, const char *rel, bool sens)
{
	char p[256];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", g_root, rel);
	if (stat(p, &st) < 0)
		return false;
	for (size_t i = 0; i < s->nidents; i++)
		if (s->idents[i].dev == st.st_dev && s->idents[i].ino == st.st_ino)
			return sens ? s->idents[i].sensitive : s->idents[i].control;
	return false;
}

static int setup(void **state)
{
	(void)state;
	snprintf(g_root, sizeof(g_root), "/tmp/wd-split-XXXXXX");
	assert_non_null(mkdtemp(g_root));
	put("src/a.c", "a");
	put("src/lib/b.c", "b");
	put("src/lib/deep/c.c", "c");
	put("conf/.env", "SECRET=1");
	put("conf/app.yml", "x");
	put("docs/x.md", "x");
	put("docs/inner/.env", "S");
	put("docs/img/p.png", "p");
	put(".git/objects/aa/obj", "o");
	put(".git/config", "[core]");
	put(".git/hooks/pre-commit", "#!/bin/sh");
	put(".warden/permissions.json", "{}");
	put("hl/other.txt", "o");
	rel_link("conf/.env", "hl/plain.txt");
	put("logs/audit.db", "db");
	put("logs/old.txt", "o");
	put("empty", NULL);
	char p[256];
	snprintf(p, sizeof(p), "%s/srclink", g_root);
	assert_int_equal(symlink("src", p), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	/* Only the fixture's own tree, named by mkdtemp. */
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -r -- '%s'", g_root);
	assert_int_equal(strncmp(g_root, "/tmp/wd-split-", 14), 0);
	return system(cmd) == 0 ? 0 : -1;
}

static struct sbx_split *walk(const char *const *keep, size_t max_files, size_t max_mounts)
{
	struct pol_config *c = policy();
	int fd = open(g_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct sbx_split_walk_config wc = {.backing_fd = fd,
					   .policy = c,
					   .keep = keep,
					   .max_files = max_files,
					   .max_mounts = max_mounts};
	struct sbx_split *s = NULL;
	assert_int_equal(sbx_split_walk(&wc, &s), 0);
	close(fd);
	pol_config_free(c);
	return s;
}

static void test_split_walk_choice(void **state)
{
	(void)state;
	const char *keep[] = {"logs/audit.db", NULL};
	struct sbx_split *s = walk(keep, 0, 0);
	assert_true(s->complete);
	/* Maximal clean subtrees: src whole (not src/lib too), docs/img,
	 * .git/objects, the empty directory. */
	assert_true(has_fast(s, "src"));
	assert_false(has_fast(s, "src/lib"));
	assert_true(has_fast(s, "docs/img"));
	assert_true(has_fast(s, ".git/objects"));
	assert_true(has_fast(s, "empty"));
	/* What must stay FUSE. */
	assert_false(has_fast(s, ""));
	assert_false(has_fast(s, "conf"));	 /* a sensitive name */
	assert_false(has_fast(s, "docs"));	 /* one below */
	assert_false(has_fast(s, "docs/inner")); /* the sensitive name's own */
	assert_false(has_fast(s, ".git"));	 /* control files */
	assert_false(has_fast(s, ".git/hooks")); /* a control directory */
	assert_false(has_fast(s, ".warden"));	 /* write-protected */
	assert_false(has_fast(s, "hl"));	 /* a second name of conf/.env */
	assert_false(has_fast(s, "logs"));	 /* the kept (hidden) audit */
	assert_false(has_fast(s, "srclink"));	 /* a symlink is never walked */
	assert_int_equal(s->nfast, 4);
	/* The identities met. */
	assert_true(has_ident(s, "conf/.env", true));
	assert_true(has_ident(s, "hl/plain.txt", true)); /* the same inode */
	assert_true(has_ident(s, "docs/inner/.env", true));
	assert_true(has_ident(s, ".git/config", false));
	assert_false(has_ident(s, "src/a.c", true));
	assert_int_equal(s->fast_files_total, 5); /* src 3, docs/img 1, objects 1 */
	sbx_split_free(s);
}

static void test_split_walk_hard_link_keeps_fuse(void **state)
{
	(void)state;
	/* Without the second name of .env, hl would be fast: the hard link
	 * is what keeps it. */
	char p[256];
	snprintf(p, sizeof(p), "%s/hl/plain.txt", g_root);
	assert_int_equal(unlink(p), 0);
	struct sbx_split *s = walk(NULL, 0, 0);
	assert_true(has_fast(s, "hl"));
	/* Without the kept path, logs is fast too. */
	assert_true(has_fast(s, "logs"));
	sbx_split_free(s);
	rel_link("conf/.env", "hl/plain.txt");
	s = walk(NULL, 0, 0);
	assert_false(has_fast(s, "hl"));
	sbx_split_free(s);
	/* A second name of a control file keeps its directory too, and a
	 * name the walk meets before the control file's own. */
	put("aa/tool.sh", "t");
	char q[256];
	snprintf(q, sizeof(q), "%s/aa/tool.sh", g_root);
	assert_int_equal(unlink(q), 0);
	rel_link(".git/hooks/pre-commit", "aa/tool.sh");
	s = walk(NULL, 0, 0);
	assert_false(has_fast(s, "aa"));
	assert_true(has_ident(s, "aa/tool.sh", false));
	assert_true(has_fast(s, "src"));
	sbx_split_free(s);
	assert_int_equal(unlink(q), 0);
}

static void test_split_walk_budget_and_cap(void **state)
{
	(void)state;
	/* A budget too small to finish: nothing unfinished is fast. */
	struct sbx_split *s = walk(NULL, 3, 0);
	assert_false(s->complete);
	assert_false(has_fast(s, "src"));
	assert_false(has_fast(s, "docs/img"));
	sbx_split_free(s);
	/* The cap on mounts keeps the largest subtree. */
	s = walk(NULL, 0, 1);
	assert_int_equal(s->nfast, 1);
	assert_string_equal(s->fast[0], "src");
	sbx_split_free(s);
}

/* A project with no .warden/ and no sensitive name in its root (the audit
 * kept elsewhere): the root stays FUSE, and what is below it is fast.
 * Last of the walks: it removes part of the fixture. */
static void test_split_walk_clean_root(void **state)
{
	(void)state;
	char p[512];
	snprintf(p, sizeof(p), "cd '%s' && rm -r -- conf docs .git .warden hl aa", g_root);
	assert_int_equal(system(p), 0);
	struct sbx_split *s = walk(NULL, 0, 0);
	assert_true(s->complete);
	assert_false(has_fast(s, ""));
	assert_true(has_fast(s, "src"));
	assert_true(has_fast(s, "logs"));
	assert_true(has_fast(s, "empty"));
	assert_int_equal(s->nfast, 3);
	sbx_split_free(s);
}

/* The pre-marking walk stands aside after each exec of the agent: for
 * 100 ms, unless the listener sees 64 open events meanwhile (a command
 * that opens that many files in the fast subtrees is one the walk speeds
 * up). test_esc_split shows it in a session. */
static void test_split_walk_stands_aside(void **state)
{
	(void)state;
	const int64_t ms = 1000000;
	int64_t exec_at = 5000 * ms, until = exec_at + 100 * ms;
	/* Right after the exec, and until the 100 ms are over. */
	assert_int_equal(sbx_fan_aside_wait(exec_at, until, 10, 10), 100 * ms);
	assert_int_equal(sbx_fan_aside_wait(exec_at + 60 * ms, until, 10, 10), 40 * ms);
	assert_int_equal(sbx_fan_aside_wait(until - 1, until, 10, 10), 1);
	assert_int_equal(sbx_fan_aside_wait(until, until, 10, 10), 0);
	assert_int_equal(sbx_fan_aside_wait(until + 7 * ms, until, 10, 10), 0);
	/* A command opening files in the fast subtrees: 63 events since the
	 * exec keep it waiting, the 64th lets it go on. */
	assert_int_equal(sbx_fan_aside_wait(exec_at + ms, until, 10 + 63, 10), 99 * ms);
	assert_int_equal(sbx_fan_aside_wait(exec_at + ms, until, 10 + 64, 10), 0);
	assert_int_equal(sbx_fan_aside_wait(exec_at + ms, until, 10 + 500, 10), 0);
	/* Never stepped aside (until 0): it runs. */
	assert_int_equal(sbx_fan_aside_wait(exec_at, 0, 0, 0), 0);
}

static void test_proc_open_access(void **state)
{
	(void)state;
	const unsigned R = POL_ACC_READ, W = POL_ACC_WRITE;
	/* openat(AT_FDCWD, p, O_RDONLY) */
	assert_int_equal(
		sbx_proc_open_access_text("257 0xffffff9c 0x5555 0x0 0x0 0x0 0x0 0x7ff 0x7f"), R);
	/* openat(..., O_RDWR|O_APPEND) */
	assert_int_equal(
		sbx_proc_open_access_text("257 0xffffff9c 0x5555 0x402 0x0 0x4 0x0 0x7ff 0x7f"),
		R | W);
	/* openat(..., O_WRONLY|O_CREAT|O_TRUNC) */
	assert_int_equal(
		sbx_proc_open_access_text("257 0xffffff9c 0x5555 0x241 0x1b6 0x0 0x0 0x7ff 0x7f"),
		W);
	/* open(p, O_RDONLY|O_TRUNC): a truncation writes */
	assert_int_equal(sbx_proc_open_access_text("2 0x5555 0x200 0x0 0x0 0x0 0x0 0x7ff 0x7f"),
			 R | W);
	/* creat */
	assert_int_equal(sbx_proc_open_access_text("85 0x5555 0x1a4 0x0 0x0 0x0 0x0 0x7ff 0x7f"),
			 W);
	/* execve reads */
	assert_int_equal(
		sbx_proc_open_access_text("59 0x5555 0x6666 0x7777 0x0 0x0 0x0 0x7ff 0x7f"), R);
	/* openat2: its flags are in memory, so the widest */
	assert_int_equal(
		sbx_proc_open_access_text("437 0xffffff9c 0x5555 0x6666 0x18 0x0 0x0 0x7ff 0x7f"),
		R | W);
	/* unknown, running, garbage */
	assert_int_equal(sbx_proc_open_access_text("0 0x3 0x5555 0x10 0x0 0x0 0x0 0x7ff 0x7f"),
			 R | W);
	assert_int_equal(sbx_proc_open_access_text("running"), R | W);
	assert_int_equal(sbx_proc_open_access_text("257 0x1"), R | W);
	assert_int_equal(sbx_proc_open_access_text(""), R | W);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_walk_choice),
		cmocka_unit_test(test_split_walk_hard_link_keeps_fuse),
		cmocka_unit_test(test_split_walk_budget_and_cap),
		cmocka_unit_test(test_split_walk_clean_root),
		cmocka_unit_test(test_split_walk_stands_aside),
		cmocka_unit_test(test_proc_open_access),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
