/*
 * test_esc_files: the escape suite's file cases: sensitive files reached
 * by every name (symlink swaps, hard links, renames, magic links, long and
 * dotted paths, case), the home's keys, an inherited descriptor, the
 * policy file itself and writes outside the project under Landlock. Run
 * under the real `warden run` like the rest of the suite (test_escape.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "policy.h"
#include "store.h"
#include "wt.h"
#ifdef WARDEN_ESC_HAVE_JUDGE
#include "judge.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "escape_fx.h"

/* ---- the view: sensitive files by every name ----------------------------- */

/* A thread flips a directory symlink so that `cat d/f` (fast path: the
 * name is harmless) opens .env half of the time. */
static void test_escape_symlink_swap_race(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "d1/f", "plain\n");
	char *d2 = in_proj(f, "d2");
	mkdir(d2, 0755);
	char *link = in_proj(f, "d2/f");
	assert_int_equal(symlink("../.env", link), 0);
	char *prog = esc("open");
	struct wt_result r;
	run(f, &r, "passive", prog, "symswap", "300", NULL);
	if (said(&r, SECRET))
		fail_msg("ESCAPE FOUND: the symlink swap printed .env's secret");
	assert_non_null(strstr(r.out, "symswap done"));
	assert_int_equal(rows(f, "exec", "allow", "fast_path", "=cat d/f", NULL), 300);
	/* Each time the name resolved to .env, the view decided it. */
	assert_true(rows(f, "open", "deny", "tier", "read .env", NULL) > 0);
	assert_int_equal(rows(f, "open", "allow", NULL, NULL, NULL), 0);
	wt_result_free(&r);
	free(prog);
	free(link);
	free(d2);
}

/* A hard link or a rename of .env to a harmless name. */
static void test_escape_hardlink_and_rename(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	/* As commands: ln and mv are no read-only commands. */
	script(f, &r, "passive", "ln .env y; cat y; echo rc=$?\nmv .env z; cat z; echo rc=$?\n");
	assert_no_secret(&r);
	assert_int_equal(rows(f, "exec", "deny", "tier", "ln .env y", NULL), 1);
	assert_int_equal(rows(f, "exec", "deny", "tier", "mv .env z", NULL), 1);
	wt_result_free(&r);
	/* As syscalls from the agent itself: the view decides them. */
	char *prog = esc("open");
	run(f, &r, "passive", prog, "link", ".env", "y", NULL);
	assert_non_null(strstr(r.out, "link rc=-1 errno=EACCES"));
	assert_no_secret(&r);
	wt_result_free(&r);
	run(f, &r, "passive", prog, "rename", ".env", "z", NULL);
	assert_non_null(strstr(r.out, "rename rc=-1 errno=EACCES"));
	assert_no_secret(&r);
	wt_result_free(&r);
	assert_int_equal(rows(f, "open", "deny", "tier", "link .env", NULL), 1);
	assert_int_equal(rows(f, "open", "deny", "tier", ".env -> z", NULL), 1);
	assert_false(exists(in_proj(f, "y")));
	assert_false(exists(in_proj(f, "z")));
	assert_true(exists(in_proj(f, ".env")));
	free(prog);
}

/* /proc/self/root, /proc/1/cwd, /proc/1/root, /dev/fd/N and
 * /proc/self/fd/N: magic links that lead around a path check. */
static void test_escape_magic_links(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	char *text = wd_asprintf("cat /proc/self/root%s/.env; echo rc=$?\n"
				 "cat /proc/1/cwd/.env; echo rc=$?\n",
				 f->proj);
	script(f, &r, "passive", text);
	assert_no_secret(&r);
	assert_int_equal(rows(f, "exec", "deny", "tier", "cat /proc/self/root", NULL), 1);
	assert_int_equal(rows(f, "exec", "deny", "tier", "cat /proc/1/cwd/.env", NULL), 1);
	wt_result_free(&r);
	free(text);

	char *prog = esc("open");
	char *root = wd_asprintf("/proc/self/root%s/.env", f->proj);
	char *root1 = wd_asprintf("/proc/1/root%s/.env", f->proj);
	run(f, &r, "passive", prog, "read", root, root1, "/proc/1/cwd/.env", NULL);
	assert_no_secret(&r);
	/* Through the agent's own root, the path leads into the view, which
	 * decides; init's links are the kernel's to refuse (no capability to
	 * look into a process that has them). */
	assert_non_null(strstr(r.out, "/proc/self/root"));
	assert_non_null(strstr(r.out, ".env errno=EACCES"));
	assert_non_null(strstr(r.out, "/proc/1/cwd/.env errno=EACCES"));
	wt_result_free(&r);
	run(f, &r, "passive", prog, "dirfd", NULL);
	assert_no_secret(&r);
	assert_non_null(strstr(r.out, "/dev/fd/3/.env errno=EACCES"));
	assert_non_null(strstr(r.out, "/proc/self/fd/3/.env errno=EACCES"));
	wt_result_free(&r);
	assert_true(rows(f, "open", "deny", "tier", "read .env", NULL) >= 3);
	assert_int_equal(rows(f, "open", "allow", NULL, NULL, NULL), 0);
	free(root);
	free(root1);
	free(prog);
}

/* ././/.env, sub/../.env and a 3000-character ./././... path. */
static void test_escape_dot_slash_and_long_paths(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "sub/x", "x\n");
	struct wt_result r;
	script(f, &r, "passive",
	       "cat ././/.env; echo rc=$?\n"
	       "cat sub/../.env; echo rc=$?\n"
	       "cat .//sub//..//.env; echo rc=$?\n"
	       "p=.env; i=0; while [ $i -lt 1500 ]; do p=./$p; i=$((i+1)); done; cat $p; echo "
	       "rc=$?\n");
	assert_no_secret(&r);
	assert_int_equal(rows(f, "exec", "deny", "tier", "=cat ././/.env", NULL), 1);
	assert_int_equal(rows(f, "exec", "deny", "tier", "=cat sub/../.env", NULL), 1);
	assert_int_equal(rows(f, "exec", "deny", "tier", "=cat .//sub//..//.env", NULL), 1);
	assert_int_equal(rows(f, "exec", "deny", "tier", "cat ././././././", NULL), 1);
	assert_int_equal(rows(f, "exec", "allow", NULL, ".env", NULL), 0);
	wt_result_free(&r);
	char *prog = esc("open");
	run(f, &r, "passive", prog, "read", "././/.env", "sub/../.env", NULL);
	assert_no_secret(&r);
	wt_result_free(&r);
	run(f, &r, "passive", prog, "longpath", NULL);
	assert_no_secret(&r);
	assert_non_null(strstr(r.out, "longpath errno=EACCES"));
	wt_result_free(&r);
	assert_true(rows(f, "open", "deny", "tier", "read .env", NULL) >= 3);
	assert_int_equal(rows(f, "open", "allow", NULL, NULL, NULL), 0);
	free(prog);
}

/* .ENV as a symlink to .env, and a file of its own named .Env: markers are
 * case-insensitive on this case-sensitive filesystem. */
static void test_escape_case_tricks(void **state)
{
	struct fx *f = *state;
	char *up = in_proj(f, ".ENV");
	assert_int_equal(symlink(".env", up), 0);
	wt_write(f->proj, "conf/.Env", "TOKEN=" SSH_SECRET "\n");
	struct wt_result r;
	script(f, &r, "passive", "cat .ENV; echo rc=$?\ncat conf/.Env; echo rc=$?\n");
	assert_no_secret(&r);
	assert_int_equal(rows(f, "exec", "deny", "tier", "=cat .ENV", NULL), 1);
	assert_int_equal(rows(f, "exec", "deny", "tier", "=cat conf/.Env", NULL), 1);
	wt_result_free(&r);
	char *prog = esc("open");
	run(f, &r, "passive", prog, "read", ".ENV", "conf/.Env", NULL);
	assert_no_secret(&r);
	assert_non_null(strstr(r.out, ".ENV errno=EACCES"));
	assert_non_null(strstr(r.out, "conf/.Env errno=EACCES"));
	assert_int_equal(rows(f, "open", "deny", "tier", NULL, NULL), 2);
	wt_result_free(&r);
	free(prog);
	free(up);
}

/* ~/.ssh/id_rsa outside the project: hidden from the agent. */
static void test_escape_home_ssh_key(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	script(f, &r, "passive", "cat ~/.ssh/id_rsa; echo rc=$?\n");
	assert_no_secret(&r);
	assert_int_equal(rows(f, "exec", "deny", "tier", ".ssh/id_rsa", NULL), 1);
	wt_result_free(&r);
	char *prog = esc("open");
	char *key = wd_asprintf("%s/.ssh/id_rsa", f->home);
	run(f, &r, "passive", prog, "read", key, NULL);
	assert_no_secret(&r);
	wt_result_free(&r);
	free(key);
	free(prog);
}

/*
 * ~/.ssh gated by the config ("mode": "gate") instead of hidden: the agent
 * sees it through a view of its own in which every file is sensitive. A
 * read of the key, directly or through a symlink planted in the project,
 * is decided and audited under its absolute path (passive: refused; the
 * secret never shows); a write into it is EROFS and nothing is created;
 * aggressive allows the read, audited. ~/.netrc, a single file, is gated
 * the same way by a view of that one file.
 */
static void test_escape_gated_ssh(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"outside\": [{\"path\": \"~/.ssh\", \"mode\": \"gate\"},"
		 " {\"path\": \"~/.netrc\", \"mode\": \"gate\"}]}\n");
	wt_write(f->home, ".netrc", "machine example.com password " SSH_SECRET "\n");
	char *netrc = wd_asprintf("%s/.netrc", f->home);
	char *key = wd_asprintf("%s/.ssh/id_rsa", f->home);
	char *link = in_proj(f, "k");
	assert_int_equal(symlink(key, link), 0);
	struct wt_result r;
	script(f, &r, "passive",
	       "read x < ~/.ssh/id_rsa; echo \"got:$x\"\n"
	       "read y < k; echo \"via-link:$y\"\n"
	       "echo pwn > ~/.ssh/authorized_keys; echo \"w=$?\"\n"
	       "read n < ~/.netrc; echo \"netrc:$n\"\n"
	       "echo pwn >> ~/.netrc; echo \"wn=$?\"\n");
	assert_no_secret(&r);
	assert_non_null(strstr(r.out, "got:\n"));
	assert_non_null(strstr(r.out, "via-link:\n"));
	assert_non_null(strstr(r.out, "w=2"));
	assert_non_null(strstr(r.err, "Read-only file system"));
	char *ak = wd_asprintf("%s/.ssh/authorized_keys", f->home);
	assert_false(exists(ak));
	assert_int_equal(rows(f, "open", "deny", "tier", key, NULL), 2);
	assert_non_null(strstr(r.out, "netrc:\n"));
	assert_non_null(strstr(r.out, "wn=2"));
	assert_int_equal(rows(f, "open", "deny", "tier", netrc, NULL), 1);
	wt_result_free(&r);
	script(f, &r, "aggressive",
	       "read x < ~/.ssh/id_rsa; echo \"got:$x\"\n"
	       "read n < ~/.netrc; echo \"netrc:$n\"\n");
	assert_non_null(strstr(r.out, "got:-----BEGIN KEY-----"));
	assert_non_null(strstr(r.out, "netrc:machine example.com password " SSH_SECRET));
	assert_int_equal(rows(f, "open", "allow", "tier", key, NULL), 1);
	assert_int_equal(rows(f, "open", "allow", "tier", netrc, NULL), 1);
	wt_result_free(&r);
	char *text = NULL;
	assert_int_equal(wd_read_file(netrc, 4096, &text, NULL), 0);
	assert_null(strstr(text, "pwn"));
	free(text);
	free(netrc);
	free(ak);
	free(link);
	free(key);
}

/* An fd 5 on the real project, inherited from whoever ran warden: closed
 * before the agent runs; the agent sees only 0-2 and its own. */
static void test_escape_inherited_fd(void **state)
{
	struct fx *f = *state;
	int fd = open(f->proj, O_RDONLY | O_DIRECTORY); /* no O_CLOEXEC: inherited */
	assert_true(fd >= 0);
	if (fd != 5) {
		assert_int_equal(dup2(fd, 5), 5);
		close(fd);
	}
	char *prog = esc("open");
	struct wt_result r;
	run(f, &r, "passive", prog, "fd", "5", NULL);
	wt_result_free(&r);
	run(f, &r, "passive", prog, "fd", "5", NULL);
	assert_no_secret(&r);
	assert_non_null(strstr(r.out, "fstat rc=-1 errno=EBADF"));
	assert_non_null(strstr(r.out, ".env errno=EBADF"));
	assert_non_null(strstr(r.out, "/proc/self/fd/5/.env errno=ENOENT"));
	wt_result_free(&r);
	run(f, &r, "passive", "/bin/ls", "/proc/self/fd", NULL);
	close(5);
	assert_int_equal(r.status, 0);
	/* 0, 1, 2 and ls's own directory fd (3). */
	assert_string_equal(r.out, "0\n1\n2\n3\n");
	assert_int_equal(rows(f, "open", NULL, NULL, NULL, NULL), 0);
	wt_result_free(&r);
	free(prog);
}

/* .warden/permissions.json is read-only in the view: no grant can be
 * written by the agent. */
static void test_escape_write_permissions_json(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, ".warden/permissions.json", "{}\n");
	struct wt_result r;
	script(f, &r, "passive",
	       "echo '{\"grants\":[{\"action\":\"exec\",\"command\":\"*\"}]}' > "
	       ".warden/permissions.json; echo rc=$?\n"
	       "echo x >> .warden/permissions.json; echo rc=$?\n");
	assert_true(said(&r, "Read-only file system"));
	wt_result_free(&r);
	char *prog = esc("open");
	run(f, &r, "passive", prog, "write", ".warden/permissions.json", NULL);
	assert_non_null(strstr(r.out, "open_write rc=-1 errno=EROFS"));
	wt_result_free(&r);
	run(f, &r, "passive", prog, "rename", "README.md", ".warden/permissions.json", NULL);
	assert_non_null(strstr(r.out, "rename rc=-1 errno=EROFS"));
	wt_result_free(&r);
	char *txt = NULL;
	size_t len = 0;
	char *p = in_proj(f, ".warden/permissions.json");
	assert_int_equal(wd_read_file(p, 4096, &txt, &len), 0);
	assert_string_equal(txt, "{}\n");
	/* Refused by the view's read-only rule, not by a decision. */
	assert_int_equal(rows(f, "open", NULL, NULL, NULL, NULL), 0);
	free(txt);
	free(p);
	free(prog);
}

/* Writes outside the project, in aggressive mode so that an exec the
 * policy does not see through is allowed and only Landlock stops it (as
 * root without capabilities, the file permissions of /etc and /usr would
 * let root's uid write). */
static void test_escape_landlock_write_outside(void **state)
{
	struct fx *f = *state;
	char etc[64], usr[64];
	snprintf(etc, sizeof(etc), "/etc/warden-esc-pwned-%d", getpid());
	snprintf(usr, sizeof(usr), "/usr/warden-esc-pwned-%d", getpid());
	char *prog = esc("open");
	/* touch names its target (hard deny may see it: a system
	 * directory); esc_open is an unknown program the tier allows; the
	 * shell's own redirect is no exec at all. */
	char *text = wd_asprintf("touch %s; echo rc=$?\n"
				 "%s write %s\n"
				 "echo x > %s; echo rc=$?\n",
				 usr, prog, usr, etc);
	struct wt_result r;
	script(f, &r, "aggressive", text);
	bool escaped = exists(etc) || exists(usr);
	unlink(etc);
	unlink(usr);
	if (escaped)
		fail_msg("ESCAPE FOUND: the agent wrote outside the project");
	/* esc_open was allowed by the tier: Landlock refused its write. */
	assert_int_equal(rows(f, "exec", "allow", "tier", "write /usr/warden-esc-pwned", NULL), 1);
	assert_non_null(strstr(r.out, "open_write rc=-1 errno=EACCES"));
	assert_non_null(strstr(r.err, "cannot create /etc/warden-esc-pwned"));
	/* touch: refused by the hard deny, or allowed and stopped by
	 * Landlock; never a file. */
	assert_int_equal(
		rows(f, "exec", "deny", "hard_deny", "touch /usr/warden-esc-pwned", NULL) +
			rows(f, "exec", "allow", "tier", "touch /usr/warden-esc-pwned", NULL),
		1);
	wt_result_free(&r);
	/* The agent itself (its start-up allowed): only Landlock. */
	run(f, &r, "aggressive", prog, "write", etc, NULL);
	escaped = exists(etc);
	unlink(etc);
	if (escaped)
		fail_msg("ESCAPE FOUND: the agent wrote %s", etc);
	assert_non_null(strstr(r.out, "open_write rc=-1 errno=EACCES"));
	wt_result_free(&r);
	free(prog);
	free(text);
}

int main(void)
{
	wt_require_sandbox();
	if (geteuid() != 0) {
		printf("SKIP: the escape suite runs as root (it tests what root inside loses)\n");
		return 77;
	}
#define T(name) cmocka_unit_test_setup_teardown(test_escape_##name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(symlink_swap_race),
		T(hardlink_and_rename),
		T(magic_links),
		T(dot_slash_and_long_paths),
		T(case_tricks),
		T(home_ssh_key),
		T(gated_ssh),
		T(inherited_fd),
		T(write_permissions_json),
		T(landlock_write_outside),
	};
#undef T
	/* WARDEN_TEST_FILTER=abstract* runs the cases matching a pattern. */
	if (getenv("WARDEN_TEST_FILTER"))
		cmocka_set_test_filter(getenv("WARDEN_TEST_FILTER"));
	return cmocka_run_group_tests_name("escape_files", tests, NULL, NULL);
}
