/*
 * test_esc_split: the split view's open invariants (docs/view-plan.md,
 * section 6, item 1), under the real `warden run --view split --tier
 * passive --prompt none` as root: a sensitive file the USER makes, renames
 * or changes outside the sandbox inside a fast subtree during the run is
 * decided at the agent's next open; symlinks between the fast and the FUSE
 * parts lead to decisions both ways; a hard link made before the run keeps
 * its directory under the FUSE view; review runs get read-only fast
 * mounts; nothing of the mechanism reaches the agent's descriptors; the
 * walk binds .git/objects and keeps .git.
 *
 * The agent is `sh -c SCRIPT`; the test acts as the user between its
 * steps: the agent prints "STEP n" and waits for the file "go<n>" in the
 * project's root (a FUSE directory), which the test makes after its own
 * step. Every secret is refused (passive tier) and must never be printed.
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECRET "WARDEN_SPLIT_SECRET_5e81d0"

struct fx {
	char *proj;
	char *db;
};

static int setup(void **state)
{
	wt_require_sandbox();
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# split view escapes\n");
	wt_write(f->proj, "src/a.txt", "plain a\n");
	wt_write(f->proj, "src/lib/b.txt", "plain b\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	free(f->proj);
	free(f->db);
	free(f);
	return 0;
}

static char *in_proj(const struct fx *f, const char *name)
{
	return wd_asprintf("%s/%s", f->proj, name);
}

/* The agent's wait for the test's step |n|. */
#define WAIT(n) "echo STEP " #n "; while [ ! -e go" #n " ]; do sleep 0.05; done; "

/* Runs |script| as the agent in the background with |extra| options
 * (NULL-terminated list, may be empty); |user| is called for each step n
 * (1..steps) once the agent has printed "STEP n", then go<n> is made. */
typedef void (*user_fn)(const struct fx *f, int step);

static void run_steps(const struct fx *f, const char *const *extra, const char *script, int steps,
		      user_fn user, struct wt_result *res)
{
	char *argv[32] = {"run",     "--view",	 "split", "--tier",
			  "passive", "--prompt", "none",  "--stats"};
	size_t n = 8;
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = (char *)extra[i];
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = (char *)script;
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
	assert_true(wt_bg_wait(&bg, 60000, res));
	/* The mountinfo is long: what follows it. */
	const char *tail = res->out ? strstr(res->out, "END\n") : NULL;
	print_message("status %d\nout (after the mounts): %.4000s\nerr: %.3000s\n", res->status,
		      tail ? tail : res->out, res->err);
}

static bool said(const struct wt_result *r, const char *s)
{
	return (r->out && strstr(r->out, s)) || (r->err && strstr(r->err, s));
}

static void assert_no_secret(const struct wt_result *r)
{
	if (said(r, SECRET))
		fail_msg("ESCAPE FOUND: the agent printed the secret");
}

/* A refused open of |path| was audited (the passive tier's answer). */
static void assert_refused(const struct fx *f, const char *path)
{
	wd_autofree char *sum = wd_asprintf("read %s", path);
	int n = wt_audit_count(f->db, "deny", NULL, sum, NULL);
	if (n < 1)
		fail_msg("ESCAPE FOUND: no refused open of %s in the audit", path);
}

/* Whether the agent's mountinfo (printed between "MOUNTS" and "END") has a
 * mount at |rel| of the project. */
static bool mounted(const struct fx *f, const struct wt_result *r, const char *rel)
{
	const char *from = r->out ? strstr(r->out, "MOUNTS\n") : NULL;
	const char *to = from ? strstr(from, "END\n") : NULL;
	if (!from || !to)
		fail_msg("no mountinfo printed");
	wd_autofree char *want = wd_asprintf(" %s/%s ", f->proj, rel);
	const char *hit = strstr(from, want);
	return hit && hit < to;
}

/* The shell reads and prints a file itself (a redirection: no exec for
 * the exec rules to refuse first, so the open is what is decided). */
#define SHOW   "show() { while IFS= read -r l; do echo \"$l\"; done < \"$1\"; }; "
#define MOUNTS SHOW "echo MOUNTS; show /proc/self/mountinfo; echo END; "

static void no_user_early(const struct fx *f, int step)
{
	(void)f;
	(void)step;
}

/* ---- a sensitive name the user makes in a fast subtree ------------------ */

static void user_makes_env(const struct fx *f, int step)
{
	(void)step;
	wt_write(f->proj, "src/.env", "TOKEN=" SECRET "\n");
}

static void test_split_user_env_in_fast_subtree(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	run_steps(f, NULL,
		  MOUNTS
		  "cat src/a.txt; " WAIT(1) "show src/.env; echo cat=$?; show src/lib/../.env; "
					    "echo catdot=$?",
		  1, user_makes_env, &r);
	assert_true(mounted(f, &r, "src"));
	assert_true(said(&r, "plain a"));
	assert_no_secret(&r);
	assert_true(said(&r, "cat=2"));
	assert_true(said(&r, "catdot=2"));
	assert_refused(f, "src/.env");
	/* The fast part refuses with EPERM (FAN_DENY), where the FUSE view
	 * says EACCES. */
	assert_true(said(&r, "Operation not permitted"));
	wt_result_free(&r);
}

/* The agent's own writes to a sensitive or control name it makes in a fast
 * subtree are decided at their open (the file exists by then: a refused
 * create leaves it empty, with nothing written). */
static void test_split_agent_creates_env_decided(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	run_steps(f, NULL,
		  MOUNTS "echo TOKEN=" SECRET " > src/.env; echo env=$?; "
			 "echo '[alias]' > src/lib/.gitmodules; echo gm=$?; " WAIT(1),
		  1, no_user_early, &r);
	assert_true(mounted(f, &r, "src"));
	assert_true(said(&r, "env=2"));
	assert_true(said(&r, "gm=2"));
	wd_autofree char *env = in_proj(f, "src/.env");
	wd_autofree char *text = wt_slurp(env);
	assert_true(text == NULL || strstr(text, SECRET) == NULL);
	wd_autofree char *gm = in_proj(f, "src/lib/.gitmodules");
	wd_autofree char *gtext = wt_slurp(gm);
	assert_true(gtext == NULL || strstr(gtext, "alias") == NULL);
	assert_true(wt_audit_count(f->db, "deny", NULL, "src/.env", NULL) >= 1);
	assert_true(wt_audit_count(f->db, "deny", NULL, "src/lib/.gitmodules", NULL) >= 1);
	wt_result_free(&r);
}

/* ---- symlinks between the fast and the FUSE parts ----------------------- */

static void test_split_symlinks_both_ways(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, ".env", "TOKEN=" SECRET "\n");
	wd_autofree char *l1 = in_proj(f, "src/lib/up");
	wd_autofree char *l2 = in_proj(f, "down");
	/* fast -> FUSE: a link in src to the root's .env; FUSE -> fast: a
	 * link in the root to a .env the user makes in src during the run. */
	assert_int_equal(symlink("../../.env", l1), 0);
	assert_int_equal(symlink("src/.env", l2), 0);
	struct wt_result r = {0};
	run_steps(f, NULL, MOUNTS "show src/lib/up; echo up=$?; " WAIT(1) "show down; echo down=$?",
		  1, user_makes_env, &r);
	assert_true(mounted(f, &r, "src"));
	assert_no_secret(&r);
	assert_true(said(&r, "up=2"));
	assert_true(said(&r, "down=2"));
	assert_refused(f, ".env");
	assert_refused(f, "src/.env");
	wt_result_free(&r);
}

/* ---- a hard link made before the run ------------------------------------ */

static void no_user(const struct fx *f, int step)
{
	(void)f;
	(void)step;
}

static void test_split_hard_link_before_run_keeps_fuse(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "conf/.env", "TOKEN=" SECRET "\n");
	wt_write(f->proj, "lib/code.c", "int x;\n");
	wd_autofree char *env = in_proj(f, "conf/.env");
	wd_autofree char *second = in_proj(f, "lib/notes.txt");
	assert_int_equal(link(env, second), 0);
	struct wt_result r = {0};
	run_steps(f, NULL, MOUNTS "cat lib/code.c; show lib/notes.txt; echo notes=$?; " WAIT(1), 1,
		  no_user, &r);
	/* lib would be fast but for the second name of conf/.env. */
	assert_true(mounted(f, &r, "src"));
	assert_false(mounted(f, &r, "lib"));
	assert_false(mounted(f, &r, "conf"));
	assert_true(said(&r, "int x;"));
	assert_no_secret(&r);
	assert_true(said(&r, "notes=2"));
	assert_refused(f, "lib/notes.txt");
	wt_result_free(&r);
}

/* ---- a decided .env renamed by the user to a plain name ------------------ */

static void user_env_then_rename(const struct fx *f, int step)
{
	if (step == 1) {
		wt_write(f->proj, "src/.env", "TOKEN=" SECRET "\n");
		return;
	}
	wd_autofree char *from = in_proj(f, "src/.env");
	wd_autofree char *to = in_proj(f, "src/plain.txt");
	assert_int_equal(rename(from, to), 0);
}

static void test_split_renamed_env_stays_decided(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	run_steps(f, NULL,
		  MOUNTS WAIT(1) "show src/.env; echo first=$?; " WAIT(
			  2) "show src/plain.txt; echo second=$?",
		  2, user_env_then_rename, &r);
	assert_true(mounted(f, &r, "src"));
	assert_no_secret(&r);
	assert_true(said(&r, "first=2"));
	/* The identity was decided once: it stays decided under its new,
	 * plain name. */
	assert_true(said(&r, "second=2"));
	assert_refused(f, "src/.env");
	assert_refused(f, "src/plain.txt");
	wt_result_free(&r);
}

/* ---- mv notes.txt .env after the agent read it, then a write ------------- */

static void user_mv_then_append(const struct fx *f, int step)
{
	(void)step;
	wd_autofree char *from = in_proj(f, "src/notes.txt");
	wd_autofree char *to = in_proj(f, "src/.env");
	assert_int_equal(rename(from, to), 0);
	FILE *fp = fopen(to, "a");
	assert_non_null(fp);
	fputs("TOKEN=" SECRET "\n", fp);
	fclose(fp);
}

static void test_split_user_mv_then_write_is_decided(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "src/notes.txt", "just notes\n");
	struct wt_result r = {0};
	run_steps(f, NULL,
		  MOUNTS
		  "show src/notes.txt; show src/notes.txt; " WAIT(1) "show src/.env; echo env=$?",
		  1, user_mv_then_append, &r);
	assert_true(mounted(f, &r, "src"));
	assert_true(said(&r, "just notes"));
	assert_no_secret(&r);
	assert_true(said(&r, "env=2"));
	assert_refused(f, "src/.env");
	wt_result_free(&r);
}

/* ---- the watcher: a rename onto a sensitive name, with no write --------- */

/* The watcher is asynchronous: the user's rename is given 300 ms before
 * the agent opens (the window it narrows is what this allows). */
static void user_mv_only(const struct fx *f, int step)
{
	(void)step;
	wd_autofree char *from = in_proj(f, "src/notes.txt");
	wd_autofree char *to = in_proj(f, "src/.env");
	assert_int_equal(rename(from, to), 0);
	usleep(300000);
}

static void test_split_watcher_user_mv_to_env(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "src/notes.txt", "TOKEN=" SECRET "\n");
	struct wt_result r = {0};
	/* The agent reads notes.txt under its plain name (allowed: it is an
	 * ordinary name then), so the file carries a mark; after the rename
	 * no write clears it: only the watcher can. */
	run_steps(f, NULL,
		  MOUNTS "show src/notes.txt >/dev/null; show src/notes.txt >/dev/null; " WAIT(
			  1) "show src/.env; echo env=$?",
		  1, user_mv_only, &r);
	assert_true(mounted(f, &r, "src"));
	assert_no_secret(&r);
	assert_true(said(&r, "env=2"));
	assert_refused(f, "src/.env");
	wt_result_free(&r);
}

static void user_mv_dir(const struct fx *f, int step)
{
	(void)step;
	wd_autofree char *from = in_proj(f, "src/lib");
	wd_autofree char *to = in_proj(f, "src/.aws");
	assert_int_equal(rename(from, to), 0);
	usleep(300000);
}

static void test_split_watcher_dir_renamed_sensitive(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "src/lib/creds", "key=" SECRET "\n");
	struct wt_result r = {0};
	run_steps(f, NULL,
		  MOUNTS
		  "show src/lib/creds >/dev/null; " WAIT(1) "show src/.aws/creds; echo creds=$?",
		  1, user_mv_dir, &r);
	assert_true(mounted(f, &r, "src"));
	assert_no_secret(&r);
	assert_true(said(&r, "creds=2"));
	assert_refused(f, "src/.aws/creds");
	wt_result_free(&r);
}

/* ---- review runs: the fast mounts are read-only ------------------------------ */

static void test_split_review_fast_read_only(void **state)
{
	struct fx *f = *state;
	const char *const review[] = {"--role", "review", NULL};
	struct wt_result r = {0};
	run_steps(f, review,
		  MOUNTS "echo new > src/new.txt; echo create=$?; echo more >> src/a.txt; "
			 "echo append=$?; " WAIT(1),
		  1, no_user, &r);
	assert_true(mounted(f, &r, "src"));
	assert_true(said(&r, "create=2"));
	assert_true(said(&r, "append=2"));
	assert_true(said(&r, "cannot create src/new.txt: Read-only file system"));
	assert_true(said(&r, "cannot create src/a.txt: Read-only file system"));
	wd_autofree char *a = in_proj(f, "src/a.txt");
	wd_autofree char *text = wt_slurp(a);
	assert_string_equal(text, "plain a\n");
	wd_autofree char *n = in_proj(f, "src/new.txt");
	assert_int_equal(access(n, F_OK), -1);
	wt_result_free(&r);
}

/* ---- nothing of the mechanism reaches the agent ------------------------------- */

static void test_split_agent_fds_after_walk(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	/* After opening every file of the fast subtree (events, marks, the
	 * pre-marking walk), the agent's shell and its init hold nothing
	 * of the listener's: no fanotify group, no mount fd, no event fd. */
	run_steps(f, NULL,
		  MOUNTS "cat src/a.txt src/lib/b.txt >/dev/null; " WAIT(
			  1) "echo FDS; ls -l /proc/$$/fd /proc/1/fd; echo FDSEND",
		  1, no_user, &r);
	assert_true(mounted(f, &r, "src"));
	const char *from = strstr(r.out, "FDS\n");
	assert_non_null(from);
	assert_null(strstr(from, "fanotify"));
	assert_null(strstr(from, "anon_inode"));
	wd_autofree char *src = wd_asprintf("%s/src", f->proj);
	assert_null(strstr(from, src));
	wt_result_free(&r);
}

/* ---- the walk's choice in a git repository ---------------------------------- */

static void test_split_git_objects_fast_git_not(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, ".git/HEAD", "ref: refs/heads/main\n");
	wt_write(f->proj, ".git/config", "[core]\n");
	wt_write(f->proj, ".git/objects/ab/cdef", "blob\n");
	wt_write(f->proj, ".git/hooks/pre-commit.sample", "#!/bin/sh\n");
	struct wt_result r = {0};
	run_steps(f, NULL, MOUNTS WAIT(1), 1, no_user, &r);
	assert_true(mounted(f, &r, ".git/objects"));
	assert_false(mounted(f, &r, ".git"));
	assert_false(mounted(f, &r, ".git/hooks"));
	assert_true(mounted(f, &r, "src"));
	/* --stats says so: src and .git/objects. */
	assert_true(said(&r, "split view: 2 fast subtrees"));
	wt_result_free(&r);
}

/* The pre-marking walk marks every plain file of the fast subtrees (here
 * src/a.txt and src/lib/b.txt, through its own read-only copy of the
 * tree), and --stats says when it ended; the agent's reads of them are
 * then no events at all. */
static void test_split_premark_counted(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	run_steps(f, NULL, "sleep 1; cat src/a.txt src/lib/b.txt; " WAIT(1), 1, no_user, &r);
	assert_true(said(&r, "plain a\nplain b\n"));
	assert_true(said(&r, " 0 open events, 0 decided"));
	assert_true(said(&r, " 2 pre-marked in "));
	assert_false(said(&r, "the walk had not ended"));
	wt_result_free(&r);
}

/* The walk stands aside for the agent's commands: from the start and
 * after each exec it waits 100 ms (fan_walk.c), so --stats counts at least
 * one whole wait, and the walk still ends during the sleep. Without the
 * wait it marks both files at once: no time standing aside. (Whether the
 * cat right after the start opens src/a.txt before the walk marks it
 * depends on how fast the machine gets there, so it is not asserted.) */
static void test_split_premark_stands_aside(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	run_steps(f, NULL, "cat src/a.txt; sleep 1; " WAIT(1), 1, no_user, &r);
	assert_true(said(&r, "plain a\n"));
	const char *aside = r.err ? strstr(r.err, " s of it standing aside") : NULL;
	assert_non_null(aside);
	const char *num = aside;
	while (num > r.err && num[-1] != '(')
		num--;
	double s = strtod(num, NULL);
	print_message("stood aside %.3f s\n", s);
	assert_true(s >= 0.099);
	assert_true(said(&r, " 2 pre-marked in "));
	assert_false(said(&r, "the walk had not ended"));
	wt_result_free(&r);
}

/* The number --stats prints before |what| ("open events"), or -1. */
static long stat_before(const struct wt_result *r, const char *what)
{
	const char *at = r->err ? strstr(r->err, what) : NULL;
	if (!at)
		return -1;
	const char *num = at - 1;
	while (num > r->err && num[-1] >= '0' && num[-1] <= '9')
		num--;
	return strtol(num, NULL, 10);
}

/* ... and it goes on at once for a command that opens many files in the
 * fast subtrees: sh reading 500 files right after the start (its own
 * opens, no exec) makes the listener see 64 open events, the walk goes on
 * and marks the rest ahead of sh. Without that, sh is done within the
 * walk's 100 ms wait and all 500 opens are events. */
static void test_split_premark_goes_on_for_opens(void **state)
{
	struct fx *f = *state;
	for (int i = 0; i < 500; i++) {
		char name[64];
		snprintf(name, sizeof(name), "src/many/f%03d.txt", i);
		wt_write(f->proj, name, "many\n");
	}
	struct wt_result r = {0};
	run_steps(
		f, NULL,
		"n=0; for x in src/many/*; do read l < $x && n=$((n+1)); done; echo read $n; " WAIT(
			1),
		1, no_user, &r);
	assert_true(said(&r, "read 500\n"));
	long events = stat_before(&r, " open events");
	print_message("open events: %ld\n", events);
	assert_true(events >= 64);
	assert_true(events < 400);
	wt_result_free(&r);
}

/* ---- a mount the host makes below the project during the run ------------- */

/* The user mounts a tmpfs on src/m (a fast subtree) and puts a secret in
 * it. The project is made a shared mount first, as systemd makes / on a
 * desktop: a fast subtree's copy that stayed its peer would receive the
 * tmpfs, unmarked, so its files would open undecided. */
static void user_mounts_tmpfs(const struct fx *f, int step)
{
	(void)step;
	wd_autofree char *m = in_proj(f, "src/m");
	assert_int_equal(mount("tmpfs", m, "tmpfs", 0, "size=1m"), 0);
	wt_write(f->proj, "src/m/.env", "TOKEN=" SECRET "\n");
	wt_write(f->proj, "src/m/notes.txt", "notes " SECRET "\n");
}

/* The test's two mounts go even when an assertion ended it early (cmocka
 * runs the teardown then too), before the project is removed. */
static int teardown_mounts(void **state)
{
	struct fx *f = *state;
	wd_autofree char *m = in_proj(f, "src/m");
	(void)umount2(m, MNT_DETACH);
	(void)umount2(f->proj, MNT_DETACH);
	return teardown(state);
}

static void test_split_host_mount_not_propagated(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "src/m/keep", "");
	assert_int_equal(mount(f->proj, f->proj, NULL, MS_BIND, NULL), 0);
	assert_int_equal(mount(NULL, f->proj, NULL, MS_SHARED, NULL), 0);
	struct wt_result r = {0};
	run_steps(f, NULL,
		  "cat src/a.txt; " WAIT(1) "cat src/m/notes.txt; echo notes=$?; "
					    "cat src/m/.env; echo env=$?; ls src/m",
		  1, user_mounts_tmpfs, &r);
	assert_no_secret(&r);
	/* The sandbox's copy of src is no peer: it never got the tmpfs. */
	assert_true(said(&r, "notes=1"));
	assert_true(said(&r, "env=1"));
	assert_true(said(&r, "keep"));
	wt_result_free(&r);
}

/* ---- the FUSE part's kernel passthrough ------------------------------------ */

/* How many opens --stats says passed through to the kernel, or -1 when it
 * prints no passthrough count. */
static long passed_through(const struct wt_result *r)
{
	const char *at = r->err ? strstr(r->err, "view passthrough: ") : NULL;
	unsigned long long n;
	if (!at || sscanf(at, "view passthrough: %llu of", &n) != 1)
		return -1;
	return (long)n;
}

/* A root run passes the FUSE part's reads through to the kernel: a file in
 * the project's root reads right and --stats counts the opens, in the
 * split view and with --view fuse, so a run where passthrough is silently
 * off fails here. The agent's .env open is still refused. */
static void test_split_fuse_part_passes_through(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, ".env", "API_KEY=" SECRET "\n");
	const char *script = SHOW "test \"$(cat README.md)\" = '# split view escapes' && echo "
				  "READ-OK; cat src/a.txt >/dev/null; show .env; " WAIT(1);
	const char *const views[][3] = {{NULL}, {"--view", "fuse", NULL}};
	for (size_t i = 0; i < WD_ARRAY_SIZE(views); i++) {
		struct wt_result r = {0};
		run_steps(f, views[i][0] ? views[i] : NULL, script, 1, no_user, &r);
		assert_true(said(&r, "READ-OK"));
		assert_no_secret(&r);
		assert_true(passed_through(&r) > 0);
		wt_result_free(&r);
	}
	assert_refused(f, ".env");
}

/* ---- --view and WARDEN_VIEW ------------------------------------------------- */

/* One short run with |view| (NULL: no --view) and WARDEN_VIEW=|env| (NULL:
 * unset): whether src was a mount, or -1 when warden refused to start. */
static int src_mounted(const struct fx *f, const char *view, const char *env, struct wt_result *r)
{
	if (env)
		setenv("WARDEN_VIEW", env, 1);
	else
		unsetenv("WARDEN_VIEW");
	char *argv[16] = {"run", "--tier", "passive", "--prompt", "none"};
	size_t n = 5;
	if (view) {
		argv[n++] = "--view";
		argv[n++] = (char *)view;
	}
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = MOUNTS;
	argv[n] = NULL;
	wt_wardenv(f->proj, argv, r);
	unsetenv("WARDEN_VIEW");
	if (r->status == 125)
		return -1;
	assert_int_equal(r->status, 0);
	return mounted(f, r, "src");
}

static void test_split_view_option(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	/* As root, auto is split. */
	assert_int_equal(src_mounted(f, NULL, NULL, &r), 1);
	wt_result_free(&r);
	assert_int_equal(src_mounted(f, "fuse", NULL, &r), 0);
	wt_result_free(&r);
	assert_int_equal(src_mounted(f, NULL, "fuse", &r), 0);
	wt_result_free(&r);
	/* The option wins over the environment. */
	assert_int_equal(src_mounted(f, "split", "fuse", &r), 1);
	wt_result_free(&r);
	assert_int_equal(src_mounted(f, "bogus", NULL, &r), -1);
	assert_non_null(strstr(r.err, "--view must be auto, fuse or split"));
	wt_result_free(&r);
	assert_int_equal(src_mounted(f, NULL, "bogus", &r), -1);
	assert_non_null(strstr(r.err, "WARDEN_VIEW must be auto, fuse or split"));
	wt_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_split_user_env_in_fast_subtree, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_split_agent_creates_env_decided, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_split_symlinks_both_ways, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_hard_link_before_run_keeps_fuse, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_split_renamed_env_stays_decided, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_split_user_mv_then_write_is_decided, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_split_watcher_user_mv_to_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_watcher_dir_renamed_sensitive, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_split_review_fast_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_agent_fds_after_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_git_objects_fast_git_not, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_split_premark_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_premark_stands_aside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_premark_goes_on_for_opens, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_split_host_mount_not_propagated, setup,
						teardown_mounts),
		cmocka_unit_test_setup_teardown(test_split_view_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_fuse_part_passes_through, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
