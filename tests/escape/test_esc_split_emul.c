/*
 * test_esc_split_emul: the emulation's DECISIONS in fast subtrees
 * (docs/view-plan.md 5.2 step 5b and step 8, section 6 items 1 and 2),
 * each under the real `warden run --view split --tier passive --prompt
 * none` as root. In a fast subtree (a bind of the backing tree, watched by
 * fanotify for opens only) the FUSE view sees no rename, link, symlink,
 * unlink or truncate(2): the emulation (sandbox/emul.c) must decide each
 * one that touches a sensitive or control name, from the names it read
 * once, and say so in the audit under the agent's command.
 *
 * - planting control files: mv/ln/ln -s onto control names, a directory
 *   renamed so that a control name appears below it;
 * - a sensitive file the user makes during the run inside a fast subtree:
 *   rm, mv from and over it, ln, truncate(1), "> file", truncate(2),
 *   RENAME_EXCHANGE, and truncate(2) and linkat(AT_SYMLINK_FOLLOW) through
 *   a symlink to it (from the fast and from the FUSE part);
 * - a thread that flips the name after the notification never plants it;
 * - rm -rf, mv and rmdir of fast roots succeed and leave a FUSE directory
 *   whose later changes are decided.
 *
 * Commands the agent runs are allowed by rules of the project config, so
 * that the exec decision is not what refuses them; the passive tier then
 * refuses every name change that is asked. A test that finds a real
 * escape fails with "ESCAPE FOUND: ...".
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

#define SECRET "WARDEN_SPLIT_EMUL_SECRET_93c1a7"

struct fx {
	char *proj;
	char *db;
	char *prog; /* tests/escape/esc_emul */
};

static int setup(void **state)
{
	wt_require_sandbox();
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	const char *b = getenv("WARDEN_BUILD_DIR");
	f->prog = wd_asprintf("%s/tests/escape/esc_emul", b ? b : ".");
	wt_write(f->proj, "README.md", "# split view emulation escapes\n");
	wt_write(f->proj, "src/x/a", "plain a\n");
	wt_write(f->proj, "src/y/f", "plain f\n");
	/* The commands the agent runs are allowed as commands: what they
	 * do to names is still decided. */
	wd_autofree char *cfg =
		wd_asprintf("{\"rules\": [{\"action\": \"allow\", \"command\": [\"mv\"]},"
			    " {\"action\": \"allow\", \"command\": [\"ln\"]},"
			    " {\"action\": \"allow\", \"command\": [\"rm\"]},"
			    " {\"action\": \"allow\", \"command\": [\"rmdir\"]},"
			    " {\"action\": \"allow\", \"command\": [\"truncate\"]},"
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

static char *content(const struct fx *f, const char *rel)
{
	wd_autofree char *p = in_proj(f, rel);
	return wt_slurp(p);
}

/* The test acts as the user at step n (the agent waits for "go<n>"). */
typedef void (*user_fn)(const struct fx *f, int step);

/* Runs `warden run --view split --tier passive --prompt none --stats --
 * sh -c SCRIPT` (|script|) or `-- esc_emul ARGS` (|args|, NULL-ended) in
 * the background; |user| acts at each of |steps| steps. */
static void run_agent(const struct fx *f, const char *script, const char *const *args, int steps,
		      user_fn user, struct wt_result *res)
{
	char *argv[64] = {"run",      "--view", "split",   "--tier", "passive",
			  "--prompt", "none",	"--stats", "--"};
	size_t n = 9;
	if (script) {
		argv[n++] = "sh";
		argv[n++] = "-c";
		argv[n++] = (char *)script;
	} else {
		argv[n++] = f->prog;
		for (size_t i = 0; args[i] && n < 62; i++)
			argv[n++] = (char *)args[i];
	}
	argv[n] = NULL;
	struct wt_bg bg;
	wt_warden_bg(f->proj, argv, &bg);
	for (int s = 1; s <= steps; s++) {
		char want[32];
		snprintf(want, sizeof(want), "STEP %d\n", s);
		bool seen = false;
		for (int i = 0; i < 600 && !seen; i++) {
			wd_autofree char *out = wt_bg_out(&bg);
			seen = strstr(out, want) != NULL;
			if (!seen)
				usleep(50000);
		}
		if (!seen) {
			wd_autofree char *out = wt_bg_out(&bg);
			wd_autofree char *err = wt_bg_err(&bg);
			fail_msg("the agent never reached step %d\nout: %s\nerr: %s", s, out, err);
		}
		user(f, s);
		char go[16];
		snprintf(go, sizeof(go), "go%d", s);
		wt_write(f->proj, go, "");
	}
	assert_true(wt_bg_wait(&bg, 120000, res));
	print_message("status %d\nout: %.6000s\nerr: %.6000s\n", res->status, res->out, res->err);
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

/* A refused row |summary| in the audit whose command line is exactly the
 * agent's |cmdline| (not warden's, whose own ends with the agent's). */
static void assert_refused_by(const struct fx *f, const char *summary, const char *cmdline)
{
	wd_autofree char *req = wd_asprintf("\"cmdline\":\"%s\"", cmdline);
	struct wt_audit_q q = {.decision = "deny", .summary_sub = summary, .request_sub = req};
	if (wt_audit_match(f->db, &q) < 1)
		fail_msg("ESCAPE FOUND: no refused \"%s\" by \"%s\" in the audit", summary,
			 cmdline);
}

/* The --stats count of name changes the emulation decided in fast
 * subtrees (the FUSE view's decisions are not counted there). */
static long fast_decided(const struct wt_result *r)
{
	const char *p = r->err ? strstr(r->err, " in fast subtrees decided") : NULL;
	if (!p)
		fail_msg("no emulation line in --stats");
	while (p > r->err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtol(p, NULL, 10);
}

static void no_user(const struct fx *f, int step)
{
	(void)f;
	(void)step;
}

/* ---- planting control files inside a fast subtree ---------------------- */

static void test_semul_plant_control(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "src/x/notgit/config", "[core]\n\tworktree = /\n");
	wd_autofree char *la = in_proj(f, "src/x/la");
	assert_int_equal(symlink("a", la), 0);
	wd_autofree char *script =
		wd_asprintf("%s ops isroot src; "
			    "mv src/x/a src/x/HEAD; echo mv=$?; "
			    "ln src/x/a src/x/HEAD; echo ln=$?; "
			    "mv src/x/notgit src/x/.git; echo dirgit=$?; "
			    "mv src/x/notgit src/x/.husky; echo dirhusky=$?; "
			    "mv src/y src/.githooks; echo diry=$?; "
			    "%s ops lnL src/x/la src/x/HEAD xchg src/x/a src/x/HEAD; "
			    "mv src/x/a src/x/b; echo plain=$?",
			    f->prog, f->prog);
	struct wt_result r = {0};
	run_agent(f, script, NULL, 0, no_user, &r);
	assert_int_equal(r.status, 0);
	/* src is a fast subtree: what follows is the emulation's. */
	expect(&r, "isroot src 1");
	const char *refused[] = {"mv=1",
				 "ln=1",
				 "dirgit=1",
				 "dirhusky=1",
				 "diry=1",
				 "lnL src/x/la EACCES",
				 "xchg src/x/a EACCES"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(refused); i++)
		if (!said(&r, refused[i]))
			fail_msg("ESCAPE FOUND: expected \"%s\" (refused)", refused[i]);
	const char *absent[] = {"src/x/HEAD", "src/x/.git", "src/x/.husky", "src/.githooks"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(absent); i++)
		if (exists(f, absent[i]))
			fail_msg("ESCAPE FOUND: %s was planted", absent[i]);
	assert_true(exists(f, "src/x/notgit/config"));
	assert_true(exists(f, "src/y/f"));
	/* A plain rename is performed. */
	expect(&r, "plain=0");
	assert_true(exists(f, "src/x/b"));
	assert_false(exists(f, "src/x/a"));
	assert_refused_by(f, "rename src/x/a -> src/x/HEAD", "mv src/x/a src/x/HEAD");
	assert_refused_by(f, "link src/x/a -> src/x/HEAD", "ln src/x/a src/x/HEAD");
	assert_refused_by(f, "rename src/x/notgit -> src/x/.git", "mv src/x/notgit src/x/.git");
	assert_refused_by(f, "rename src/x/notgit -> src/x/.husky", "mv src/x/notgit src/x/.husky");
	assert_refused_by(f, "rename src/y -> src/.githooks", "mv src/y src/.githooks");
	wd_autofree char *ops =
		wd_asprintf("%s ops lnL src/x/la src/x/HEAD xchg src/x/a src/x/HEAD", f->prog);
	/* The link through a symlink names the file it links. */
	assert_refused_by(f, "link src/x/a -> src/x/HEAD", ops);
	assert_refused_by(f, "rename src/x/a -> src/x/HEAD", ops);
	/* Decided by the emulation, not by the FUSE view. */
	assert_true(fast_decided(&r) >= 7);
	wt_result_free(&r);
}

/* The same with sensitive and control names a command line cannot carry
 * (warden asks for the exec of "ln -s ../y src/x/.envrc" first): the
 * agent's own program makes the calls. */
static void test_semul_plant_sensitive_names(void **state)
{
	struct fx *f = *state;
	const char *const args[] = {"ops",	  "isroot",	  "src",      "sym",
				    "../y",	  "src/x/.envrc", "mv",	      "src/x/a",
				    "src/x/.env", "ln",		  "src/x/a",  "src/x/.npmrc",
				    "sym",	  "../../.env",	  "src/x/up", "mv",
				    "src/x/a",	  "src/x/c",	  NULL};
	struct wt_result r = {0};
	run_agent(f, NULL, args, 0, no_user, &r);
	assert_int_equal(r.status, 0);
	expect(&r, "isroot src 1");
	const char *refused[] = {"sym ../y EACCES", "mv src/x/a EACCES", "ln src/x/a EACCES",
				 "sym ../../.env EACCES"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(refused); i++)
		if (!said(&r, refused[i]))
			fail_msg("ESCAPE FOUND: expected \"%s\" (refused)", refused[i]);
	const char *absent[] = {"src/x/.envrc", "src/x/.env", "src/x/.npmrc", "src/x/up"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(absent); i++)
		if (exists(f, absent[i]))
			fail_msg("ESCAPE FOUND: %s was planted", absent[i]);
	expect(&r, "mv src/x/a 0");
	assert_true(exists(f, "src/x/c"));
	wd_autofree char *cmd = wd_asprintf(
		"%s ops isroot src sym ../y src/x/.envrc mv src/x/a src/x/.env ln src/x/a "
		"src/x/.npmrc sym ../../.env src/x/up mv src/x/a src/x/c",
		f->prog);
	assert_refused_by(f, "symlink src/x/.envrc -> ../y", cmd);
	assert_refused_by(f, "rename src/x/a -> src/x/.env", cmd);
	assert_refused_by(f, "link src/x/a -> src/x/.npmrc", cmd);
	assert_refused_by(f, "symlink src/x/up -> ../../.env", cmd);
	assert_true(fast_decided(&r) >= 4);
	wt_result_free(&r);
}

/* ---- a sensitive file the user makes in a fast subtree during the run -- */

static void user_makes_env(const struct fx *f, int step)
{
	(void)step;
	wt_write(f->proj, "src/x/.env", "TOKEN=" SECRET "\n");
}

static void test_semul_user_env_changes_decided(void **state)
{
	struct fx *f = *state;
	/* Symlinks to it: one in the same fast subtree, one in the FUSE
	 * part (the project's root). */
	wd_autofree char *l1 = in_proj(f, "src/x/lnk");
	wd_autofree char *l2 = in_proj(f, "envlink");
	assert_int_equal(symlink(".env", l1), 0);
	assert_int_equal(symlink("src/x/.env", l2), 0);
	/* The agent's own program, since warden asks for the exec of a
	 * command naming .env before it runs: "openw" opens for writing and
	 * ftruncates, as truncate(1) does; "otrunc" opens with O_TRUNC, as a
	 * shell's ": > file" does; "trunc" is truncate(2). */
	const char *const args[] = {"ops",	  "isroot",	 "src",		"step",
				    "1",	  "rm",		 "src/x/.env",	"mv",
				    "src/x/.env", "src/x/plain", "mv",		"src/x/a",
				    "src/x/.env", "ln",		 "src/x/.env",	"src/x/copy",
				    "trunc",	  "src/x/.env",	 "openw",	"src/x/.env",
				    "otrunc",	  "src/x/.env",	 "xchg",	"src/x/a",
				    "src/x/.env", "trunc",	 "src/x/lnk",	"lnL",
				    "src/x/lnk",  "src/x/copy2", "trunc",	"envlink",
				    "lnL",	  "envlink",	 "src/x/copy3", NULL};
	struct wt_result r = {0};
	run_agent(f, NULL, args, 1, user_makes_env, &r);
	assert_int_equal(r.status, 0);
	expect(&r, "isroot src 1");
	const char *refused[] = {
		"rm src/x/.env EACCES",	   "mv src/x/.env EACCES",    "mv src/x/a EACCES",
		"ln src/x/.env EACCES",	   "trunc src/x/.env EACCES", "openw src/x/.env EPERM",
		"otrunc src/x/.env EPERM", "xchg src/x/a EACCES",     "trunc src/x/lnk EACCES",
		"lnL src/x/lnk EACCES",	   "trunc envlink EACCES",    "lnL envlink EACCES"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(refused); i++)
		if (!said(&r, refused[i]))
			fail_msg("ESCAPE FOUND: expected \"%s\" (refused)", refused[i]);
	/* The file is intact, and has no other name. */
	wd_autofree char *env = content(f, "src/x/.env");
	if (!env || strcmp(env, "TOKEN=" SECRET "\n") != 0)
		fail_msg("ESCAPE FOUND: src/x/.env was changed: \"%s\"", env ? env : "(gone)");
	wd_autofree char *a = content(f, "src/x/a");
	assert_non_null(a);
	assert_string_equal(a, "plain a\n");
	const char *absent[] = {"src/x/plain", "src/x/copy", "src/x/copy2", "src/x/copy3"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(absent); i++)
		if (exists(f, absent[i]))
			fail_msg("ESCAPE FOUND: %s was made", absent[i]);
	struct wd_sb sb = {0};
	wd_sb_printf(&sb, "%s", f->prog);
	for (size_t i = 0; args[i]; i++)
		wd_sb_printf(&sb, " %s", args[i]);
	wd_autofree char *ops = wd_sb_steal(&sb);
	assert_refused_by(f, "delete src/x/.env", ops);
	assert_refused_by(f, "rename src/x/.env -> src/x/plain", ops);
	assert_refused_by(f, "rename src/x/a -> src/x/.env", ops);
	assert_refused_by(f, "link src/x/.env -> src/x/copy", ops);
	/* The opens for writing: the listener decides them. */
	assert_refused_by(f, "write src/x/.env", ops);
	/* Through a symlink: the file it names is decided, by its name. */
	assert_refused_by(f, "link src/x/.env -> src/x/copy2", ops);
	assert_refused_by(f, "link src/x/.env -> src/x/copy3", ops);
	assert_true(wt_audit_count(f->db, "deny", NULL, "=truncate src/x/.env", NULL) >= 3);
	assert_true(fast_decided(&r) >= 10);
	wt_result_free(&r);
}

/* ---- a thread flips the name after the notification --------------------- */

static void test_semul_race_flipped_name(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "src/r/a", "race\n");
	/* One thread renames src/r/a to a buffer another thread flips
	 * between src/r/b and src/r/HEAD, 3000 times; every success is
	 * renamed back. HEAD must never appear: each call is performed
	 * with the bytes that were decided. */
	const char *const args[] = {"race", "src/r/a", "src/r/b", "src/r/HEAD", "3000", NULL};
	struct wt_result r = {0};
	run_agent(f, NULL, args, 0, no_user, &r);
	assert_int_equal(r.status, 0);
	if (said(&r, "ESCAPE src/r/HEAD") || exists(f, "src/r/HEAD"))
		fail_msg("ESCAPE FOUND: src/r/HEAD was planted by a flipped name");
	const char *line = r.out ? strstr(r.out, "race ok ") : NULL;
	assert_non_null(line);
	long ok = -1, refused = -1, other = -1;
	assert_int_equal(sscanf(line, "race ok %ld refused %ld other %ld", &ok, &refused, &other),
			 3);
	/* Both names were seen: the race ran. */
	assert_true(ok > 0);
	assert_true(refused > 0);
	assert_true(other < 100);
	wd_autofree char *cmd = wd_asprintf("%s race src/r/a src/r/b src/r/HEAD 3000", f->prog);
	assert_refused_by(f, "rename src/r/a -> src/r/HEAD", cmd);
	assert_true(fast_decided(&r) >= refused);
	wt_result_free(&r);
}

/* ---- fast roots: removed, renamed, then FUSE ---------------------------- */

static void test_semul_fast_roots_removed_and_renamed(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "gen/o/p.o", "object\n");
	wd_autofree char *empty = in_proj(f, "empty");
	assert_int_equal(mkdir(empty, 0755), 0);
	wd_autofree char *script = wd_asprintf(
		"%s ops isroot src isroot gen isroot empty; "
		"rm -rf gen; echo rmrf=$?; "
		"mv src lib; echo mv=$?; "
		"rmdir empty; echo rmdir=$?; "
		"%s ops isroot lib mv lib/x/a lib/x/HEAD mv lib/y lib/.git mv lib/x/a lib/x/b",
		f->prog, f->prog);
	struct wt_result r = {0};
	run_agent(f, script, NULL, 0, no_user, &r);
	assert_int_equal(r.status, 0);
	expect(&r, "isroot src 1");
	expect(&r, "isroot gen 1");
	expect(&r, "isroot empty 1");
	expect(&r, "rmrf=0");
	expect(&r, "mv=0");
	expect(&r, "rmdir=0");
	assert_false(exists(f, "gen"));
	assert_false(exists(f, "src"));
	assert_false(exists(f, "empty"));
	/* The renamed directory is served by the FUSE view now, which
	 * decides its changes. */
	expect(&r, "isroot lib 0");
	if (!said(&r, "mv lib/x/a EACCES") || exists(f, "lib/x/HEAD"))
		fail_msg("ESCAPE FOUND: lib/x/HEAD planted after the rename of a fast root");
	if (!said(&r, "mv lib/y EACCES") || exists(f, "lib/.git"))
		fail_msg("ESCAPE FOUND: lib/.git planted after the rename of a fast root");
	assert_true(exists(f, "lib/x/b"));
	wd_autofree char *ops = wd_asprintf(
		"%s ops isroot lib mv lib/x/a lib/x/HEAD mv lib/y lib/.git mv lib/x/a lib/x/b",
		f->prog);
	assert_refused_by(f, "rename lib/x/a -> lib/x/HEAD", ops);
	assert_refused_by(f, "rename lib/y -> lib/.git", ops);
	wt_result_free(&r);
}

/* A fast root renamed by a name that walks through it (the agent's cwd is
 * inside it): the call is made from the parents resolved before the
 * detach, as natively; the cwd is then on the detached bind, where
 * nothing can be made (Landlock: no rule below a detached mount). */
static void test_semul_fast_root_renamed_from_inside(void **state)
{
	struct fx *f = *state;
	const char *const args[] = {"ops", "cd", "src/x",	"mv", "../../src", "../../lib",
				    "mv",  "a",	 "HEAD",	"mv", "a",	   "b",
				    "sym", "x",	 ".gitmodules", NULL};
	struct wt_result r = {0};
	run_agent(f, NULL, args, 0, no_user, &r);
	assert_int_equal(r.status, 0);
	expect(&r, "mv ../../src 0");
	assert_false(exists(f, "src"));
	assert_true(exists(f, "lib/x/a"));
	if (!said(&r, "mv a EACCES") || exists(f, "lib/x/HEAD"))
		fail_msg("ESCAPE FOUND: HEAD planted from a detached fast root");
	if (exists(f, "lib/x/.gitmodules"))
		fail_msg("ESCAPE FOUND: .gitmodules planted from a detached fast root");
	wt_result_free(&r);
}

/* A fast mount the detacher took off (an rmdir of its root, made from a
 * working directory inside it, fails ENOTEMPTY after the detach) names
 * its files from its own root. A chain of directories inside it that
 * spells the project's path makes "src/tmp/warden-test-X/late.txt" read
 * as the project's "late.txt": a rule on a directory above the file would
 * be decided by the wrong name. Landlock already keeps the agent from
 * making anything there; a file the user makes is read. The listener must
 * refuse what it cannot name (the user's sensitive names are also caught
 * by the watcher, asynchronously: a plain one shows the check itself). */
static void user_late_file(const struct fx *f, int step)
{
	(void)step;
	wd_autofree char *rel = wd_asprintf("src%s/late.txt", f->proj);
	wt_write(f->proj, rel, "late " SECRET "\n");
}

/* The agent's read of late.txt under the chain was refused, never printed;
 * |how| says how its mount was detached. */
static void assert_late_refused(const struct wt_result *r, const char *late, const char *how)
{
	wd_autofree char *refused = wd_asprintf("read %s EPERM", late);
	if (said(r, SECRET) || !said(r, refused))
		fail_msg("ESCAPE FOUND: a file of a fast mount %s was opened under the name its "
			 "chain of directories spells",
			 how);
}

static void test_semul_detached_mount_names_not_trusted(void **state)
{
	struct fx *f = *state;
	wd_autofree char *chain = wd_asprintf("src%s", f->proj);
	wd_autofree char *root = in_proj(f, "src");
	wd_autofree char *late = wd_asprintf("%s/late.txt", f->proj + 1);
	const char *const args[] = {"ops",   "isroot", "src",	"mkdirp", chain,
				    "cd",    "src",    "rmdir", root,	  "stepin",
				    f->proj, "1",      "read",	late,	  NULL};
	struct wt_result r = {0};
	run_agent(f, NULL, args, 1, user_late_file, &r);
	assert_int_equal(r.status, 0);
	expect(&r, "isroot src 1");
	wd_autofree char *made = wd_asprintf("mkdirp %s 0", chain);
	expect(&r, made);
	wd_autofree char *rm = wd_asprintf("rmdir %s ENOTEMPTY", root);
	expect(&r, rm);
	assert_late_refused(&r, late, "the detacher took off");
	wt_result_free(&r);
}

/* The same chain on a mount the KERNEL detached: the user replaces the
 * fast root's directory outside (a checkout, `rm -rf x && mkdir x`), and
 * the agent's next lookup of that name, once the view's entry timed out
 * (VIEW_ENTRY_TIMEOUT, 1 s: the agent sleeps 1.5 s), finds another
 * directory: the kernel invalidates the entry and with it
 * the mount on it, without the detacher. */
static void user_replaces_src(const struct fx *f, int step)
{
	(void)step;
	wd_autofree char *src = in_proj(f, "src");
	wd_autofree char *old = in_proj(f, "src.old");
	assert_int_equal(rename(src, old), 0);
	assert_int_equal(mkdir(src, 0755), 0);
	wd_autofree char *rel = wd_asprintf("src.old%s/late.txt", f->proj);
	wt_write(f->proj, rel, "late " SECRET "\n");
}

static void test_semul_kernel_detached_names_not_trusted(void **state)
{
	struct fx *f = *state;
	wd_autofree char *chain = wd_asprintf("src%s", f->proj);
	wd_autofree char *root = in_proj(f, "src");
	wd_autofree char *late = wd_asprintf("%s/late.txt", f->proj + 1);
	const char *const args[] = {"ops",    "isroot", "src",	 "mkdirp", chain,   "cd",
				    "src",    "stepin", f->proj, "1",	   "sleep", "1500",
				    "isroot", root,	"read",	 late,	   NULL};
	struct wt_result r = {0};
	run_agent(f, NULL, args, 1, user_replaces_src, &r);
	assert_int_equal(r.status, 0);
	expect(&r, "isroot src 1");
	/* The new src is not the mount the agent's cwd is on. */
	wd_autofree char *relooked = wd_asprintf("isroot %s 0", root);
	expect(&r, relooked);
	assert_late_refused(&r, late, "the kernel detached");
	wt_result_free(&r);
}

int main(void)
{
	if (geteuid() != 0) {
		print_message("skipped: the split view runs for root runs only\n");
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_semul_plant_control, setup, teardown),
		cmocka_unit_test_setup_teardown(test_semul_plant_sensitive_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_semul_user_env_changes_decided, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_semul_race_flipped_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_semul_fast_roots_removed_and_renamed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_semul_fast_root_renamed_from_inside, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_semul_detached_mount_names_not_trusted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_semul_kernel_detached_names_not_trusted, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
