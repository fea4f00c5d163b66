/*
 * test_esc_split_bind: directories the agent makes during the session in a
 * FUSE directory become fast subtrees (sandbox/emul_bind.c), under the real
 * `warden run --view split` as root:
 *
 * - `mkdir obj` and files written in it: served by a new fast mount (its
 *   own st_dev, listed in the sandbox's mountinfo), the data in the
 *   backing tree, the bind counted in --stats; `mkdir -p a/b/c` binds a;
 * - a sensitive file made in a new fast directory is decided and audited
 *   at its open; a link or rename from the FUSE part into it is EXDEV;
 * - a directory made under a sensitive, control or write-protected name is
 *   not bound, and a file made in it is still decided;
 * - a thread renaming the new directory to a sensitive or control place
 *   while it is bound never leaves a mount there, and its rename is never
 *   answered EBUSY (a mount attached after the emulation looked);
 * - rmdir, rename and rm -rf of a new fast root work (the detacher).
 *
 * The agent is esc_bind (tests/escape/esc_bind.c) or `sh -c`; commands are
 * allowed by rules, so what is refused is the open or the name change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECRET "WARDEN_SPLIT_BIND_SECRET_d27e4b"

struct fx {
	char *proj;
	char *db;
	char *prog; /* tests/escape/esc_bind */
};

static int setup(void **state)
{
	wt_require_sandbox();
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	const char *b = getenv("WARDEN_BUILD_DIR");
	f->prog = wd_asprintf("%s/tests/escape/esc_bind", b ? b : ".");
	wt_write(f->proj, "README.md", "# split view binds\n");
	wt_write(f->proj, "src/a.txt", "plain a\n");
	wt_write(f->proj, ".git/config", "[core]\n");
	wt_write(f->proj, ".env", "TOKEN=" SECRET "\n");
	wd_autofree char *cfg =
		wd_asprintf("{\"rules\": [{\"action\": \"allow\", \"command\": [\"mkdir\"]},"
			    " {\"action\": \"allow\", \"command\": [\"mv\"]},"
			    " {\"action\": \"allow\", \"command\": [\"rm\"]},"
			    " {\"action\": \"allow\", \"command\": [\"rmdir\"]},"
			    " {\"action\": \"allow\", \"command\": [\"stat\"]},"
			    " {\"action\": \"allow\", \"command\": [\"%s\"]}]}\n",
			    f->prog);
	wt_write(f->proj, ".warden/permissions.json", cfg);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	free(f->proj);
	free(f->db);
	free(f->prog);
	free(f);
	return 0;
}

static char *in_proj(const struct fx *f, const char *name)
{
	return wd_asprintf("%s/%s", f->proj, name);
}

static bool exists(const struct fx *f, const char *rel)
{
	wd_autofree char *p = in_proj(f, rel);
	struct stat st;
	return lstat(p, &st) == 0;
}

/* `warden run --view split --tier TIER --prompt none --stats -- sh -c
 * SCRIPT` in the project; $B is esc_bind. */
static void run_sh(const struct fx *f, const char *tier, const char *script, struct wt_result *r)
{
	wd_autofree char *full = wd_asprintf("B=%s; %s", f->prog, script);
	wt_warden(f->proj, r, "run", "--view", "split", "--tier", tier, "--prompt", "none",
		  "--stats", "--", "sh", "-c", full, NULL);
	print_message("status %d\nout: %.6000s\nerr: %.6000s\n", r->status, r->out, r->err);
}

static bool said(const struct wt_result *r, const char *s)
{
	return (r->out && strstr(r->out, s)) || (r->err && strstr(r->err, s));
}

static void expect(const struct wt_result *r, const char *s)
{
	if (!said(r, s))
		fail_msg("expected \"%s\" in the agent's output", s);
}

/* The --stats count of directories bound during the session. */
static long bound(const struct wt_result *r)
{
	const char *k = "bound during the session: ";
	const char *p = r->err ? strstr(r->err, k) : NULL;
	if (!p)
		fail_msg("no bind line in --stats");
	return strtol(p + strlen(k), NULL, 10);
}

static void assert_refused(const struct fx *f, const char *summary)
{
	if (wt_audit_count(f->db, "deny", NULL, summary, NULL) < 1)
		fail_msg("ESCAPE FOUND: no refused \"%s\" in the audit", summary);
}

/* ---- a directory made during the session is fast ---------------------- */

static void test_sbind_obj_is_fast(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	run_sh(f, "passive",
	       "$B wait obj; echo data > obj/f; echo w=$?; stat -c 'dev %n %d' . obj; "
	       "mkdir -p a/b/c; $B look a; echo deep > a/b/c/g; echo g=$?",
	       &r);
	expect(&r, "BOUND obj");
	expect(&r, "BOUND a");
	expect(&r, "w=0");
	expect(&r, "g=0");
	/* obj is its own mount: another st_dev than the view's root. */
	const char *d1 = strstr(r.out, "dev . "), *d2 = strstr(r.out, "dev obj ");
	assert_non_null(d1);
	assert_non_null(d2);
	assert_int_not_equal(strtol(d1 + 6, NULL, 10), strtol(d2 + 8, NULL, 10));
	/* The data is in the backing tree. */
	wd_autofree char *p = in_proj(f, "obj/f");
	wd_autofree char *got = wt_slurp(p);
	assert_non_null(got);
	assert_string_equal(got, "data\n");
	assert_true(exists(f, "a/b/c/g"));
	assert_int_equal(bound(&r), 2);
	wt_result_free(&r);
}

/* ---- what is in a new fast directory is decided ------------------------ */

static void test_sbind_sensitive_decided(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	/* The shell's own redirections: no exec for a rule to refuse, so
	 * the open is what is decided. */
	run_sh(f, "passive",
	       "$B wait obj; echo TOKEN=x > obj/.env; echo env=$?; "
	       "echo k > obj/id.pem; echo pem=$?; "
	       "while IFS= read -r l; do echo \"$l\"; done < obj/.env; echo read=$?; "
	       "$B exdev DOTenv obj/e; $B exdev README.md obj/r",
	       &r);
	expect(&r, "BOUND obj");
	/* fanotify refuses with EPERM, audited as the view's refusal. */
	expect(&r, "env=2");
	expect(&r, "pem=2");
	expect(&r, "read=2");
	assert_refused(f, "obj/.env");
	assert_refused(f, "obj/id.pem");
	/* Between the FUSE part and a fast mount: EXDEV, or, for the
	 * sensitive .env, refused by its decision first (EACCES). */
	assert_false(said(&r, "link=0"));
	assert_false(said(&r, "rename=0"));
	expect(&r, "\nlink=18 rename=18\n");
	assert_false(exists(f, "obj/e"));
	assert_false(exists(f, "obj/r"));
	assert_false(said(&r, SECRET));
	wt_result_free(&r);
}

/* ---- names the view must see are not bound ------------------------------- */

static void test_sbind_named_not_bound(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	/* The plain one last: the binder takes them in order, so once obj
	 * is bound the others were looked at. */
	run_sh(f, "passive",
	       "$B wait DOTgit/hooks DOTssh DOTaws obj; "
	       "echo x > .git/hooks/pre-commit; echo hook=$?; "
	       "echo k > .ssh/id_ed25519; echo key=$?",
	       &r);
	expect(&r, "BOUND obj");
	expect(&r, "FUSE .git/hooks");
	expect(&r, "FUSE .ssh");
	expect(&r, "FUSE .aws");
	/* Through the FUSE view: refused before anything is made. */
	expect(&r, "hook=2");
	expect(&r, "key=2");
	assert_refused(f, ".git/hooks/pre-commit");
	assert_refused(f, ".ssh/id_ed25519");
	assert_false(exists(f, ".git/hooks/pre-commit"));
	assert_false(exists(f, ".ssh/id_ed25519"));
	assert_int_equal(bound(&r), 1);
	wt_result_free(&r);
}

/* ---- the race: renamed to a place that is never bound ------------------- */

static void race(const struct fx *f, const char *target)
{
	struct wt_result r = {0};
	wd_autofree char *script = wd_asprintf("$B race 1500 DOT%s", target + 1);
	/* The aggressive tier allows the renames the view decides: the
	 * directory does reach the target's place. */
	run_sh(f, "aggressive", script, &r);
	expect(&r, "BADS 0");
	/* A rename that met a mount the binder attached after the
	 * emulation looked is made again, never answered EBUSY. */
	expect(&r, "EBUSY 0");
	assert_false(said(&r, "BAD "));
	/* Some rounds were bound before the flips won. */
	assert_true(bound(&r) > 0);
	wt_result_free(&r);
}

static void test_sbind_race_sensitive(void **state)
{
	race(*state, ".ssh");
}

static void test_sbind_race_control(void **state)
{
	race(*state, ".git/hooks");
}

/* ---- rmdir, rename, rm -rf of a new fast root ----------------------------- */

static void test_sbind_remove_rename(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	run_sh(f, "passive",
	       "$B wait d1 d2 d3; echo x > d2/f; echo y > d3/g; "
	       "rmdir d1; echo rmdir=$?; mv d2 d2b; echo mv=$?; cat d2b/f; "
	       "rm -rf d3; echo rmrf=$?",
	       &r);
	expect(&r, "BOUND d3");
	expect(&r, "rmdir=0");
	expect(&r, "mv=0");
	expect(&r, "rmrf=0");
	expect(&r, "\nx\n");
	assert_false(exists(f, "d1"));
	assert_false(exists(f, "d2"));
	assert_true(exists(f, "d2b/f"));
	assert_false(exists(f, "d3"));
	wt_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sbind_obj_is_fast, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sbind_sensitive_decided, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sbind_named_not_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sbind_race_sensitive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sbind_race_control, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sbind_remove_rename, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
