/*
 * test_esc_identity: the identity escapes, under the real `warden run`.
 *
 * - A program the agent can have written (a copy of touch named ls where
 *   the agent may write, first in PATH, relative to the cwd, or in a
 *   directory someone else owns) never takes an allowance by name.
 * - The decided file is the file that starts: a symlink flipped between
 *   the decision and the exec is killed at the exec event.
 * - Paths are resolved in the caller's root, cwd and credentials:
 *   /proc/self/exe is the caller's, a relative path through an absolute
 *   symlink is followed in the sandbox (a hidden place is missing, not
 *   "there but refused"), every exec attempt is audited with the kernel's
 *   errno, and warden never reads a file the caller may not execute.
 * - The agent's start-up ends at its first child.
 *
 * Each case says what it would have shown before the fix. Runs as root;
 * everything it writes is under fresh temporary directories it removes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "store.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx {
	char *proj;
	char *home;
	char *db;
	char *outside; /* a directory outside the project, not the agent's */
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# identity\n");
	f->home = wt_home("esc-id");
	f->outside = wt_outside_dir("esc-id");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	wt_rmtree(f->home);
	wt_rmtree(f->outside);
	free(f->proj);
	free(f->home);
	free(f->db);
	free(f->outside);
	free(f);
	return 0;
}

static char *esc(void)
{
	const char *b = getenv("WARDEN_BUILD_DIR");
	return wd_asprintf("%s/tests/escape/esc_identity", b ? b : ".");
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(wd_read_file(from, 64 << 20, &text, &len), 0);
	int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	chmod(to, mode);
	free(text);
}

static void config(const struct fx *f, const char *json)
{
	wt_write(f->proj, ".warden/permissions.json", json);
}

static void run(const struct fx *f, struct wt_result *r, const char *tier, ...)
{
	char *argv[64] = {"run", "--tier", (char *)tier, "--"};
	size_t n = 4;
	va_list ap;
	va_start(ap, tier);
	while (n < 63 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	wt_wardenv(f->proj, argv, r);
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", r->status, r->out, r->err);
}

static void script(const struct fx *f, struct wt_result *r, const char *tier, const char *text)
{
	wt_write(f->proj, "agent.sh", text);
	run(f, r, tier, "/bin/sh", "agent.sh", NULL);
}

static int count(const struct fx *f, const char *decision, const char *source, const char *summary,
		 const char *reason, const char *request)
{
	struct wt_audit_q q = {.decision = decision,
			       .source = source,
			       .summary_sub = summary,
			       .reason_sub = reason,
			       .request_sub = request};
	return wt_audit_match(f->db, &q);
}

/* ---- item 1: where a program lives, not what it is called ---------------- */

/* A copy of touch named ls in a place the config lets the agent write:
 * by absolute path, first in PATH, and relative to the cwd. Before: the
 * fast path allowed "ls" and touch made the marker. */
static void test_esc_identity_copy_named_ls_in_writable_place(void **state)
{
	struct fx *f = *state;
	char *dir = wd_asprintf("%s/w", f->outside);
	mkdir(dir, 0755);
	char *ls = wd_asprintf("%s/ls", dir);
	copy_file("/usr/bin/touch", ls, 0755);
	char *cfg = wd_asprintf("{\"writable\": [\"%s\"]}", dir);
	config(f, cfg);
	char *text = wd_asprintf("%s m1; echo rc1=$?\n"
				 "PATH=%s:$PATH ls m2; echo rc2=$?\n"
				 "cd %s && ./ls %s/m3; echo rc3=$?\n"
				 "cd %s; ls README.md; echo rc4=$?\n",
				 ls, dir, dir, f->proj, f->proj);
	struct wt_result r;
	script(f, &r, "passive", text);
	for (int i = 1; i <= 3; i++) {
		char *m = wd_asprintf("%s/m%d", f->proj, i);
		if (exists(m))
			fail_msg("ESCAPE FOUND: a copy of touch ran as ls (%s exists)", m);
		free(m);
	}
	assert_non_null(strstr(r.out, "rc1=126"));
	/* The shell went on to the next PATH entry, the real ls, which
	 * found no m2. */
	assert_null(strstr(r.out, "rc2=0"));
	assert_non_null(strstr(r.out, "rc3=126"));
	/* The real ls still takes the fast path. */
	assert_non_null(strstr(r.out, "rc4=0"));
	assert_true(count(f, "allow", "fast_path", "ls README.md", NULL, NULL) >= 1);
	assert_int_equal(count(f, "deny", "tier", NULL, NULL, "written where the agent can write"),
			 3);
	assert_int_equal(count(f, "allow", "fast_path", NULL, NULL, dir), 0);
	wt_result_free(&r);
	/* explain finds the program by the same walk and check. */
	wt_warden(f->proj, &r, "explain", "--", ls, "m1", NULL);
	assert_non_null(strstr(r.out, "identity: written where the agent can write"));
	assert_non_null(strstr(r.out, "verdict:  undecided"));
	wt_result_free(&r);
	wt_warden(f->proj, &r, "explain", "--", "/usr/bin/ls", "m1", NULL);
	assert_non_null(strstr(r.out, "identity: outside every place the agent can write"));
	assert_non_null(strstr(r.out, "source:   fast_path"));
	wt_result_free(&r);
	free(text);
	free(cfg);
	free(ls);
	free(dir);
}

/* The same copy under /tmp, made by the agent itself (aggressive, so that
 * cp runs): the copy runs because the tier allows everything, never by
 * the fast path. Before: source fast_path. */
static void test_esc_identity_copy_in_tmp_not_fast_path(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	script(f, &r, "aggressive",
	       "d=$(mktemp -d /tmp/wd-id-XXXXXX) && cp /usr/bin/touch $d/ls && $d/ls m1\n"
	       "d2=$(mktemp -d /dev/shm/wd-id-XXXXXX) && cp /usr/bin/touch $d2/ls && $d2/ls m2\n"
	       "echo done\n");
	assert_non_null(strstr(r.out, "done"));
	assert_int_equal(count(f, "allow", "fast_path", "/ls m", NULL, NULL), 0);
	assert_int_equal(count(f, "allow", "tier", "/ls m1", NULL,
			       "written where the agent can write: /tmp"),
			 1);
	assert_int_equal(count(f, "allow", "tier", "/ls m2", NULL,
			       "written where the agent can write: /dev/shm"),
			 1);
	wt_result_free(&r);
}

/* A copy of touch named ls deeper below /tmp than the walk up climbs
 * (4,096 directories), reached through a descriptor so that its name is
 * longer than the kernel gives: where the walk cannot reach a verdict the
 * program counts as the agent's, never as the system's ls. */
static void test_esc_identity_copy_deeper_than_the_walk(void **state)
{
	struct fx *f = *state;
	char *marker = wd_asprintf("%s/deep-marker", f->proj);
	char *prog = esc();
	struct wt_result r;
	run(f, &r, "passive", prog, "deepfd", "4200", marker, NULL);
	assert_true(strstr(r.out, "child exit=") || strstr(r.out, "errno="));
	if (exists(marker))
		fail_msg("ESCAPE FOUND: the agent's touch, 4200 levels deep, ran as ls");
	assert_int_equal(count(f, "allow", NULL, "ls ", NULL, NULL), 0);
	wt_result_free(&r);
	free(prog);
	free(marker);
}

/* The working directory a command would run in must have a name: one
 * longer than PATH_MAX can be neither shown to the decision nor compared
 * at the exec event, so the exec is refused, and says why. */
static void test_esc_identity_cwd_without_a_name(void **state)
{
	struct fx *f = *state;
	char *prog = esc();
	struct wt_result r;
	run(f, &r, "aggressive", prog, "deepcwd", "2100", NULL);
	assert_non_null(strstr(r.out, "errno=EACCES"));
	assert_int_equal(
		count(f, "deny", "decoder", "pwd", "its working directory cannot be named", NULL),
		1);
	wt_result_free(&r);
	free(prog);
}

/* A copy of touch named ls outside every writable place, in a directory
 * that belongs to another user: not the system's. Before: fast path. */
static void test_esc_identity_copy_in_foreign_directory(void **state)
{
	struct fx *f = *state;
	char *dir = wd_asprintf("%s/u1000", f->outside);
	mkdir(dir, 0755);
	char *ls = wd_asprintf("%s/ls", dir);
	copy_file("/usr/bin/touch", ls, 0755);
	assert_int_equal(chown(dir, 1000, 1000), 0);
	char *text = wd_asprintf("%s m1; echo rc=$?\n", ls);
	struct wt_result r;
	script(f, &r, "passive", text);
	char *m = wd_asprintf("%s/m1", f->proj);
	if (exists(m))
		fail_msg("ESCAPE FOUND: touch in another user's directory ran as ls");
	assert_non_null(strstr(r.out, "rc=126"));
	assert_int_equal(count(f, "deny", "tier", ls, NULL, "belongs to uid 1000"), 1);
	wt_result_free(&r);
	free(m);
	free(text);
	free(ls);
	free(dir);
}

/* A grant and an allow rule by name do not reach a copy either. Before:
 * the grant for "ls m1" and the rule for ls allowed it. */
static void test_esc_identity_grant_and_rule_by_name(void **state)
{
	struct fx *f = *state;
	char *dir = wd_asprintf("%s/w", f->outside);
	mkdir(dir, 0755);
	char *ls = wd_asprintf("%s/ls", dir);
	copy_file("/usr/bin/touch", ls, 0755);
	char *cfg = wd_asprintf(
		"{\"writable\": [\"%s\"],\n"
		" \"rules\": [{\"action\": \"allow\", \"command\": [\"ls\", \"m1\"]}],\n"
		" \"grants\": [{\"command\": [\"ls\", \"m2\"], \"by\": \"t\", \"at\": "
		"\"2026-12-01T10:00:00Z\"}]}\n",
		dir);
	config(f, cfg);
	char *text = wd_asprintf("PATH=%s:$PATH\nls m1; echo rc1=$?\nls m2; echo rc2=$?\n", dir);
	struct wt_result r;
	script(f, &r, "passive", text);
	/* The copy was refused; the shell went on to the real ls, which
	 * the rule and the grant allow (and which finds nothing). */
	assert_null(strstr(r.out, "rc1=0"));
	assert_null(strstr(r.out, "rc2=0"));
	char *m1 = wd_asprintf("%s/m1", f->proj);
	if (exists(m1))
		fail_msg("ESCAPE FOUND: a rule by name allowed a copy of touch");
	free(m1);
	assert_int_equal(count(f, "allow", NULL, NULL, NULL, dir), 0);
	assert_int_equal(count(f, "deny", "tier", NULL, NULL, "written where the agent can write"),
			 2);
	wt_result_free(&r);
	free(text);
	free(cfg);
	free(ls);
	free(dir);
}

/* ---- item 3: the decided file is the file that starts -------------------- */

/* A symlink in the project flips between /usr/bin/ls and a copy of touch
 * (denied by a rule) while children exec it: whatever was decided for one
 * target never runs the other. Aggressive, so that the ls side is allowed
 * (the tier) and the touch side is refused (the rule). */
static void test_esc_identity_symlink_swap_race(void **state)
{
	struct fx *f = *state;
	config(f, "{\"rules\": [{\"action\": \"deny\", \"command\": [\"touch\"]}]}");
	char *touch = wd_asprintf("%s/tools/touch", f->proj);
	wt_write(f->proj, "tools/.keep", "");
	copy_file("/usr/bin/touch", touch, 0755);
	char *link = wd_asprintf("%s/x", f->proj);
	char *marker = wd_asprintf("%s/PWNED", f->proj);
	char *prog = esc();
	struct wt_result r;
	run(f, &r, "aggressive", prog, "swap", "300", link, "/usr/bin/ls", touch, marker, NULL);
	assert_non_null(strstr(r.out, "ran="));
	if (exists(marker))
		fail_msg("ESCAPE FOUND: the symlink swap ran touch after a decision for ls");
	/* Both sides were seen; a swap after an allowing decision was
	 * killed at the exec event. */
	assert_true(count(f, "deny", "rule", NULL, NULL, NULL) > 0);
	print_message("integrity kills: %d\n", count(f, "deny", "integrity", NULL, NULL, NULL));
	assert_int_equal(count(f, "allow", NULL, "tools/touch]", NULL, NULL), 0);
	wt_result_free(&r);
	free(prog);
	free(marker);
	free(link);
	free(touch);
}

/* ---- item 4: paths resolved in the caller's context --------------------- */

/* /proc/self/exe from a forked child is the child's own program. Before:
 * ENOENT (the supervisor's /proc/self) and no row. */
static void test_esc_identity_proc_self_exe(void **state)
{
	struct fx *f = *state;
	char *prog = esc();
	char *marker = wd_asprintf("%s/selfexe-ran", f->proj);
	struct wt_result r;
	run(f, &r, "aggressive", prog, "selfexe", marker, NULL);
	assert_non_null(strstr(r.out, "child exit=0"));
	assert_true(exists(marker));
	assert_int_equal(count(f, "allow", "tier", "esc_identity mark", NULL, NULL), 1);
	assert_int_equal(count(f, "deny", "integrity", NULL, NULL, NULL), 0);
	wt_result_free(&r);
	/* /proc/thread-self and a /proc/self/fd magic link likewise. */
	const char *modes[] = {"threadexe", "fdexe"};
	for (int i = 0; i < 2; i++) {
		char *m = wd_asprintf("%s/%s-ran", f->proj, modes[i]);
		run(f, &r, "aggressive", prog, modes[i], m, NULL);
		assert_non_null(strstr(r.out, "child exit=0"));
		assert_true(exists(m));
		wt_result_free(&r);
		free(m);
	}
	assert_int_equal(count(f, "allow", "tier", "esc_identity mark", NULL, NULL), 3);
	assert_int_equal(count(f, "deny", "integrity", NULL, NULL, NULL), 0);
	free(marker);
	free(prog);
}

/* A root-owned symlink outside every writable place whose target is a copy
 * of touch in a writable one: the file's own place counts. Before: the
 * fast path allowed "ls". */
static void test_esc_identity_symlink_into_writable_place(void **state)
{
	struct fx *f = *state;
	char *dir = wd_asprintf("%s/w", f->outside);
	char *bin = wd_asprintf("%s/bin", f->outside);
	mkdir(dir, 0755);
	mkdir(bin, 0755);
	char *copy = wd_asprintf("%s/ls", dir);
	copy_file("/usr/bin/touch", copy, 0755);
	char *ls = wd_asprintf("%s/ls", bin);
	assert_int_equal(symlink(copy, ls), 0);
	char *cfg = wd_asprintf("{\"writable\": [\"%s\"]}", dir);
	config(f, cfg);
	char *text = wd_asprintf("%s m1; echo rc=$?\n", ls);
	struct wt_result r;
	script(f, &r, "passive", text);
	char *m = wd_asprintf("%s/m1", f->proj);
	if (exists(m))
		fail_msg("ESCAPE FOUND: a symlink into a writable place ran touch as ls");
	assert_non_null(strstr(r.out, "rc=126"));
	assert_int_equal(count(f, "deny", "tier", NULL, NULL, "written where the agent can write"),
			 1);
	wt_result_free(&r);
	free(m);
	free(text);
	free(cfg);
	free(ls);
	free(copy);
	free(bin);
	free(dir);
}

/* An executable in a hidden place (~/.ssh is absent in the sandbox: the
 * home's markers view answers ENOENT for it), reached by a relative path
 * through an absolute symlink in the project, and by its absolute path:
 * missing, as the kernel says, with a row; and the place cannot be
 * entered to run it by a relative name. Before: the relative one was
 * found in the supervisor's namespace (EACCES from the tier: "it
 * exists"); neither left a row. */
static void test_esc_identity_hidden_place_errno(void **state)
{
	struct fx *f = *state;
	wt_write(f->home, ".ssh/tool", "#!/bin/sh\necho SSH_TOOL_RAN\n");
	char *tool = wd_asprintf("%s/.ssh/tool", f->home);
	chmod(tool, 0755);
	char *ssh = wd_asprintf("%s/.ssh", f->home);
	char *lnk = wd_asprintf("%s/sshlink", f->proj);
	assert_int_equal(symlink(ssh, lnk), 0);
	char *prog = esc();
	/* The helper is the agent: its forked child's exec is a request,
	 * which passive mode refuses (EACCES) if warden finds a file. */
	const char *paths[3][2] = {{"sshlink/tool", NULL}, {"./tool", ssh}, {tool, NULL}};
	struct wt_result r;
	for (int i = 0; i < 3; i++) {
		run(f, &r, "passive", prog, "errno", paths[i][0], paths[i][1], NULL);
		assert_null(strstr(r.out, "SSH_TOOL_RAN"));
		assert_null(strstr(r.out, "errno=EACCES"));
		assert_non_null(strstr(r.out, paths[i][1] ? "chdir errno=ENOENT" : "errno=ENOENT"));
		wt_result_free(&r);
	}
	/* The two execs; the chdir into the absent place leaves none. */
	assert_int_equal(count(f, "deny", "decoder", "tool", "ENOENT", NULL), 2);
	char *text = NULL;
	r = (struct wt_result){0};
	wt_result_free(&r);
	free(text);
	free(prog);
	free(lnk);
	free(ssh);
	free(tool);
}

/* A script the caller may not execute (mode 0700, another user's; the
 * agent is root without capabilities) fails with EACCES and warden never
 * reads its "#!" line. Before: the supervisor read it as root and the
 * audit showed its interpreter. An executable the caller may run but not
 * read (mode 0111) runs. */
static void test_esc_identity_unreadable_files(void **state)
{
	struct fx *f = *state;
	char *dir = wd_asprintf("%s/perm", f->outside);
	mkdir(dir, 0755);
	char *secret = wd_asprintf("%s/secret.sh", dir);
	wt_write(dir, "secret.sh", "#!/bin/sh-SECRETINTERP-42\necho SECRET_RAN\n");
	chmod(secret, 0700);
	assert_int_equal(chown(secret, 1000, 1000), 0);
	char *xonly = wd_asprintf("%s/xonly", dir);
	copy_file("/usr/bin/true", xonly, 0111);
	assert_int_equal(chown(xonly, 1000, 1000), 0);
	char *xscript = wd_asprintf("%s/xscript", dir);
	wt_write(dir, "xscript", "#!/bin/sh\necho XSCRIPT_RAN\n");
	chmod(xscript, 0111);
	assert_int_equal(chown(xscript, 1000, 1000), 0);
	char *prog = esc();
	char *text = wd_asprintf("%s errno %s\n%s errno %s\n%s errno %s\necho end\n", prog, secret,
				 prog, xonly, prog, xscript);
	struct wt_result r;
	script(f, &r, "aggressive", text);
	assert_non_null(strstr(r.out, "errno=EACCES"));
	assert_null(strstr(r.out, "SECRET_RAN"));
	assert_null(strstr(r.out, "SECRETINTERP"));
	assert_null(strstr(r.err, "SECRETINTERP"));
	assert_int_equal(count(f, NULL, NULL, NULL, NULL, "SECRETINTERP"), 0);
	assert_int_equal(count(f, "deny", "decoder", "secret.sh", "EACCES", NULL), 1);
	/* The exec-only binary ran (exit 0), the exec-only script started
	 * its interpreter, which cannot read it: no exec check failed. */
	char *q = wd_asprintf("=%s", xonly);
	assert_int_equal(count(f, "allow", "tier", q, NULL, NULL), 1);
	free(q);
	q = wd_asprintf("=%s", xscript);
	assert_int_equal(count(f, "allow", "tier", q, NULL, "\"interp\":\"/bin/sh\""), 1);
	free(q);
	assert_int_equal(count(f, "deny", "integrity", NULL, NULL, NULL), 0);
	wt_result_free(&r);
	free(text);
	free(prog);
	free(xscript);
	free(xonly);
	free(secret);
	free(dir);
}

/* Every attempt leaves a row: the retry of a refused exec on the next
 * PATH entry (/bin is /usr/bin here) is answered as before and audited
 * (source repeat). Before: no row. (dash finds the first entry with a
 * stat, so /nonexistent is no exec attempt.) */
static void test_esc_identity_every_attempt_audited(void **state)
{
	struct fx *f = *state;
	struct stat st;
	if (lstat("/bin", &st) < 0 || !S_ISLNK(st.st_mode)) {
		print_message("/bin is not a symlink to /usr/bin here: nothing to retry\n");
		return;
	}
	struct wt_result r;
	script(f, &r, "passive", "PATH=/nonexistent:/usr/bin:/bin touch m; echo rc=$?\n");
	assert_non_null(strstr(r.out, "rc=126"));
	assert_int_equal(count(f, "deny", "tier", "=touch m", NULL, NULL), 1);
	assert_int_equal(count(f, "deny", "repeat", "=touch m", "refused a moment ago", NULL), 1);
	wt_result_free(&r);
}

/* ---- item 5: the agent's own start-up ends -------------------------------- */

/* The agent runs a child, then execs touch itself: refused and audited as
 * the tier. Before: allowed as start-up. */
static void test_esc_identity_startup_ends_at_child(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	script(f, &r, "passive", "/bin/true\nexec /usr/bin/touch late\n");
	char *late = wd_asprintf("%s/late", f->proj);
	if (exists(late))
		fail_msg("ESCAPE FOUND: the agent's exec after a tool call ran as start-up");
	assert_int_equal(count(f, "deny", "tier", "=/usr/bin/touch late", NULL, NULL), 1);
	assert_int_equal(count(f, "allow", "startup", "=/usr/bin/touch late", NULL, NULL), 0);
	wt_result_free(&r);
	free(late);
}

/* A child that forked without exec is alive when the agent execs: start-up
 * is over too. Before: allowed as start-up. */
static void test_esc_identity_startup_ends_at_fork(void **state)
{
	struct fx *f = *state;
	char *prog = esc();
	struct wt_result r;
	run(f, &r, "passive", prog, "forkexec", "forked", NULL);
	char *m = wd_asprintf("%s/forked", f->proj);
	if (exists(m))
		fail_msg("ESCAPE FOUND: the agent's exec after a fork ran as start-up");
	assert_non_null(strstr(r.out, "errno=EACCES"));
	assert_int_equal(count(f, "deny", "tier", "touch forked", NULL, NULL), 1);
	wt_result_free(&r);
	free(m);
	free(prog);
}

/* An exec chain before any child stays start-up. */
static void test_esc_identity_startup_chain(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	script(f, &r, "passive", "exec /bin/sh -c 'exec /usr/bin/touch chained'\n");
	char *m = wd_asprintf("%s/chained", f->proj);
	assert_true(exists(m));
	assert_int_equal(count(f, "allow", "startup", "=/usr/bin/touch chained", NULL, NULL), 1);
	wt_result_free(&r);
	free(m);
}

int main(void)
{
	wt_require_sandbox();
#define T(n) cmocka_unit_test_setup_teardown(test_esc_identity_##n, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(copy_named_ls_in_writable_place),
		T(copy_in_tmp_not_fast_path),
		T(copy_in_foreign_directory),
		T(copy_deeper_than_the_walk),
		T(cwd_without_a_name),
		T(grant_and_rule_by_name),
		T(symlink_swap_race),
		T(proc_self_exe),
		T(symlink_into_writable_place),
		T(hidden_place_errno),
		T(unreadable_files),
		T(every_attempt_audited),
		T(startup_ends_at_child),
		T(startup_ends_at_fork),
		T(startup_chain),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
