/*
 * test_esc_emul: the name-changing calls the supervisor performs for the
 * agent (sandbox/emul.c) when the filter traps them (the split view; every
 * root run for now), each under the real `warden run`. The agent is
 * tests/escape/esc_emul.c.
 *
 * - every errno of the emulated calls is the agent's own: the same script
 *   runs natively as the agent would (uid 0, no capability, NO_NEW_PRIVS)
 *   and under warden (the split view, whose fixture is one fast subtree),
 *   on the same fixture, and every line must match;
 * - renames and links between two fast subtrees, and renames onto and
 *   removals of fast roots, answer as natively; exactly the listed calls
 *   between a fast subtree and the FUSE part still differ (EXDEV);
 * - names through /proc/self, /proc/thread-self and /dev/fd resolve to the
 *   worker, which is in no pid namespace of the sandbox's /proc: they fail
 *   and never reach the supervisor's descriptors;
 * - set-user-ID and set-group-ID modes are refused by the filter, and
 *   openat2 is ENOSYS;
 * - a rename of .env the view decides names the agent's command, not the
 *   supervisor's worker.
 *
 * A test that finds a real escape fails with "ESCAPE FOUND: ...".
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
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OTHER  4242 /* a user who is not the agent */
#define OTHER2 4243

struct fx {
	char *proj;
	char *native; /* the native run's copy of the fixture */
	char *db;
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	wt_write(f->proj, "README.md", "# emulation\n");
	char t[] = "/tmp/warden-esc-emul-native-XXXXXX";
	f->native = wd_strdup(mkdtemp(t));
	chmod(f->native, 0755);
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	wt_rmtree(f->native);
	free(f->proj);
	free(f->native);
	free(f->db);
	free(f);
	return 0;
}

static char *agent(void)
{
	const char *b = getenv("WARDEN_BUILD_DIR");
	return wd_asprintf("%s/tests/escape/esc_emul", b ? b : ".");
}

static void put(const char *dir, const char *name, const char *text, uid_t uid, mode_t mode)
{
	wt_write(dir, name, text);
	wd_autofree char *p = wd_asprintf("%s/%s", dir, name);
	assert_int_equal(chown(p, uid, uid), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static void dir_of(const char *dir, const char *name, uid_t uid, mode_t mode)
{
	wd_autofree char *p = wd_asprintf("%s/%s", dir, name);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chown(p, uid, uid), 0);
	assert_int_equal(chmod(p, mode), 0);
}

/* The script's fixture in |base|/fx: files, directories, symlinks, a
 * sticky directory and a read-only one of another user, another user's
 * files for protected_hardlinks. */
static void make_fixture(const char *base)
{
	wd_autofree char *fx = wd_asprintf("%s/fx", base);
	dir_of(base, "fx", 0, 0755);
	put(fx, "file", "0123456789\n", 0, 0644);
	dir_of(fx, "d", 0, 0755);
	put(fx, "d/f1", "one\n", 0, 0644);
	put(fx, "d/f2", "two\n", 0, 0644);
	dir_of(fx, "empty", 0, 0755);
	dir_of(fx, "full", 0, 0755);
	put(fx, "full/x", "x\n", 0, 0644);
	dir_of(fx, "sticky", OTHER, 01777);
	put(fx, "sticky/other", "o\n", OTHER2, 0644);
	put(fx, "sticky/mine", "m\n", 0, 0644);
	dir_of(fx, "ro", OTHER, 0555);
	put(fx, "ro/x", "x\n", OTHER, 0644);
	dir_of(fx, "hl", 0, 0755);
	/* Not a sensitive name: fx stays one fast subtree. */
	put(fx, "hl/theirs", "s\n", OTHER, 0600);
	put(fx, "hl/public", "p\n", OTHER, 0644);
	wd_autofree char *ldir = wd_asprintf("%s/ldir", fx);
	wd_autofree char *lf = wd_asprintf("%s/lf", fx);
	assert_int_equal(symlink("d", ldir), 0);
	assert_int_equal(symlink("file", lf), 0);
}

/* The fixture of the cross script in |base|: fast subtrees fa and fb
 * (files, a directory, symlinks to a file and to fb, another user's
 * file, a sticky and a read-only directory), fast roots fc (empty), fd,
 * fe, ff, and top, which the view keeps (a sensitive name in it), with
 * empty and full directories. */
static void make_cross_fixture(const char *base)
{
	dir_of(base, "fa", 0, 0755);
	dir_of(base, "fb", 0, 0755);
	dir_of(base, "fc", 0, 0755);
	dir_of(base, "fd", 0, 0755);
	dir_of(base, "fe", 0, 0755);
	dir_of(base, "ff", 0, 0755);
	dir_of(base, "top", 0, 0755);
	put(base, "fa/f", "0123456789\n", 0, 0644);
	put(base, "fa/f2", "two\n", 0, 0644);
	put(base, "fa/f4", "four\n", 0, 0644);
	dir_of(base, "fa/sub", 0, 0755);
	put(base, "fa/sub/x", "x\n", 0, 0644);
	put(base, "fa/theirs", "t\n", OTHER, 0600);
	dir_of(base, "fa/sticky", OTHER, 01777);
	put(base, "fa/sticky/other", "o\n", OTHER2, 0644);
	wd_autofree char *lf = wd_asprintf("%s/fa/lf", base);
	assert_int_equal(symlink("f", lf), 0);
	wd_autofree char *tob = wd_asprintf("%s/fa/tob", base);
	assert_int_equal(symlink("../fb", tob), 0);
	put(base, "fb/g", "g\n", 0, 0644);
	dir_of(base, "fb/full", 0, 0755);
	put(base, "fb/full/y", "y\n", 0, 0644);
	dir_of(base, "fb/ro", OTHER, 0555);
	put(base, "fb/ro/x", "x\n", OTHER, 0644);
	put(base, "fd/z", "z\n", 0, 0644);
	put(base, "fe/w", "w\n", 0, 0644);
	put(base, "ff/q", "q\n", 0, 0644);
	put(base, "top/.env", "SECRET=cross\n", 0, 0600);
	dir_of(base, "top/e1", 0, 0755);
	dir_of(base, "top/e2", 0, 0755);
	dir_of(base, "top/e3", 0, 0755);
	put(base, "top/e3/v", "v\n", 0, 0644);
}

/* Runs `warden run --tier aggressive --prompt none [OPT] -- esc_emul
 * ARGS...` in the project. */
static void run(const struct fx *f, struct wt_result *r, const char *opt, ...)
{
	char *argv[32] = {"run", "--tier", "aggressive", "--prompt", "none"};
	size_t n = 5;
	if (opt)
		argv[n++] = (char *)opt;
	argv[n++] = "--";
	wd_autofree char *prog = agent();
	argv[n++] = prog;
	va_list ap;
	va_start(ap, opt);
	for (char *a; n < 30 && (a = va_arg(ap, char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	wt_wardenv(f->proj, argv, r);
	print_message("status %d\nout: %.6000s\nerr: %.2000s\n", r->status, r->out, r->err);
}

/* The script |mode| run natively, as the agent would be: its output. */
static char *native(const struct fx *f, const char *mode, bool whiteout)
{
	wd_autofree char *prog = agent();
	bool cross = strcmp(mode, "cross") == 0;
	wd_autofree char *cmd = wd_asprintf("'%s' %s '%s%s' nocaps%s", prog, mode, f->native,
					    cross ? "" : "/fx", whiteout ? "" : " nowhiteout");
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	struct wd_sb sb = {0};
	char buf[4096];
	size_t got;
	while ((got = fread(buf, 1, sizeof(buf), p)) > 0)
		wd_sb_add(&sb, buf, got);
	assert_int_equal(pclose(p), 0);
	return wd_sb_steal(&sb);
}

/* Every line of |a| and |b| is the same; prints the ones that differ. */
static int differences(const char *a, const char *b)
{
	int n = 0;
	while (*a || *b) {
		size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
		if (la != lb || memcmp(a, b, la) != 0) {
			print_message("native:  %.*s\nwarden:  %.*s\n", (int)la, a, (int)lb, b);
			n++;
		}
		a += la + (a[la] ? 1 : 0);
		b += lb + (b[lb] ? 1 : 0);
	}
	return n;
}

static void differential(void **state, const char *opt, bool whiteout)
{
	struct fx *f = *state;
	make_fixture(f->native);
	make_fixture(f->proj);
	wd_autofree char *want = native(f, "script", whiteout);
	assert_non_null(strstr(want, "state file"));
	struct wt_result r;
	run(f, &r, opt, "script", "fx", whiteout ? NULL : "nowhiteout", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(r.out);
	/* With the split view, fx is one fast subtree (a mount root), or the
	 * script tests the FUSE view, not the emulation. */
	if (strcmp(opt, "--view=split") == 0 && !strstr(r.err, "layout fx 1"))
		fail_msg("fx is not a fast subtree");
	int d = differences(want, r.out);
	if (d)
		fail_msg("%d calls answered otherwise under warden than natively", d);
	wt_result_free(&r);
}

/* The split view (the trap is on exactly when it is): the fixture is one
 * fast subtree, so the emulation decides and performs every call in it.
 * (RENAME_WHITEOUT needs CAP_MKNOD: EPERM both ways.) */
static void test_emul_errno_differential(void **state)
{
	differential(state, "--view=split", true);
}

/* The FUSE view alone (--view=fuse: no fast subtree, no trap): a check of
 * the view's answers, not of the emulation (but for RENAME_WHITEOUT, which
 * the view does not offer: EINVAL). */
static void test_fuse_view_errno_differential(void **state)
{
	differential(state, "--view=fuse", false);
}

/* The calls that still differ with the split view, each with its answer
 * under warden (natively all succeed): a rename or link between a fast
 * subtree and the FUSE part is EXDEV (the view would not see a change made
 * behind it), and so is a link that follows a symlink across fast
 * subtrees (the target is not resolved on the backing tree). */
static const struct {
	const char *name, *warden;
} still_differ[] = {
	{"d-rename-fast-to-fuse", "EXDEV"},
	{"d-link-fast-to-root", "EXDEV"},
	{"d-link-follow-symlink", "EXDEV"},
};

/* The text after "NNN " of a line, its name and its answer. */
static bool split_line(const char *l, size_t len, char *name, size_t nn, char *ans, size_t na)
{
	if (len < 5 || l[3] != ' ')
		return false;
	const char *sp = memchr(l + 4, ' ', len - 4);
	if (!sp)
		return false;
	snprintf(name, nn, "%.*s", (int)(sp - (l + 4)), l + 4);
	snprintf(ans, na, "%.*s", (int)(l + len - sp - 1), sp + 1);
	return true;
}

/* Renames and links between fast subtrees, and renames onto and rmdir of
 * fast roots, answer as natively; exactly still_differ differs. */
static void test_emul_errno_differential_cross(void **state)
{
	struct fx *f = *state;
	make_cross_fixture(f->native);
	make_cross_fixture(f->proj);
	wd_autofree char *want = native(f, "cross", true);
	assert_non_null(strstr(want, "state fa/f "));
	struct wt_result r;
	run(f, &r, "--view=split", "cross", ".", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(r.out);
	/* The layout the cases are about: without it they test nothing. */
	const char *layout[] = {"layout fa 1", "layout fb 1", "layout fc 1", "layout fd 1",
				"layout fe 1", "layout ff 1", "layout top 0"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(layout); i++)
		if (!strstr(r.err, layout[i]))
			fail_msg("the fixture's layout is not the expected one: no \"%s\"",
				 layout[i]);
	int d = 0;
	size_t listed = 0;
	const char *a = want, *b = r.out;
	while (*a || *b) {
		size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
		char n1[128], v1[64], n2[128], v2[64];
		size_t k = WD_ARRAY_SIZE(still_differ);
		if (split_line(a, la, n1, sizeof(n1), v1, sizeof(v1)) &&
		    split_line(b, lb, n2, sizeof(n2), v2, sizeof(v2)) && strcmp(n1, n2) == 0)
			for (k = 0; k < WD_ARRAY_SIZE(still_differ); k++)
				if (strcmp(still_differ[k].name, n1) == 0)
					break;
		if (k < WD_ARRAY_SIZE(still_differ)) {
			listed++;
			if (strcmp(v1, "0") != 0 || strcmp(v2, still_differ[k].warden) != 0) {
				print_message("%s: native %s, warden %s (want 0, %s)\n", n1, v1, v2,
					      still_differ[k].warden);
				d++;
			}
		} else if (la != lb || memcmp(a, b, la) != 0) {
			print_message("native:  %.*s\nwarden:  %.*s\n", (int)la, a, (int)lb, b);
			d++;
		}
		a += la + (a[la] ? 1 : 0);
		b += lb + (b[lb] ? 1 : 0);
	}
	assert_int_equal(listed, WD_ARRAY_SIZE(still_differ));
	if (d)
		fail_msg("%d calls answered otherwise under warden than natively", d);
	wt_result_free(&r);
}

/* Names through /proc/self, /proc/thread-self and /dev/fd: the worker has
 * no "self" in the sandbox's /proc, so each fails with ENOENT, and none
 * reaches a descriptor of the supervisor (its listener, its audit). */
static void test_emul_proc_self_fails(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	run(f, &r, NULL, "procself", NULL);
	assert_int_equal(r.status, 0);
	const char *want[] = {"unlink-proc-self-dirfd ENOENT", "unlink-dev-fd-dirfd ENOENT",
			      "rename-thread-self ENOENT",     "truncate-proc-self-fd ENOENT",
			      "link-proc-self-fd ENOENT",      "rename-proc-self-cwd ENOENT",
			      "linkat-empty-path ENOENT",      "victim size 5"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(want); i++)
		if (!strstr(r.out, want[i]))
			fail_msg("expected \"%s\"", want[i]);
	for (int n = 3; n < 12; n++) {
		char line[64];
		snprintf(line, sizeof(line), "truncate-fd-%d ENOENT", n);
		if (!strstr(r.out, line))
			fail_msg("ESCAPE FOUND: %s did not fail with ENOENT", line);
	}
	/* The audit the supervisor keeps open is whole. */
	struct stat st;
	assert_int_equal(stat(f->db, &st), 0);
	assert_true(st.st_size > 0);
	wt_result_free(&r);
}

/* No set-user-ID or set-group-ID object can be made, by any call that
 * takes a mode; openat2, whose mode the filter cannot read, is ENOSYS. */
static void test_emul_setid_refused(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	run(f, &r, NULL, "setid", NULL);
	assert_int_equal(r.status, 0);
	const char *want[] = {
		"chmod-u+s EPERM",
		"chmod-g+s EPERM",
		"chmod-dir-g+s EPERM",
		"chmod-plain 0",
		"fchmod-u+s EPERM",
		"fchmodat-u+s EPERM",
		"fchmodat2-u+s EPERM",
		"open-creat-suid EPERM",
		"openat-creat-sgid EPERM",
		"creat-suid EPERM",
		"mkdir-sgid EPERM",
		"mkdirat-suid EPERM",
		"mknod-suid EPERM",
		"mknodat-sgid EPERM",
		"openat2 ENOSYS",
		"f mode 700",
		"g absent",
		"sg absent",
		"open-nocreat-mode-ignored 0",
	};
	for (size_t i = 0; i < WD_ARRAY_SIZE(want); i++)
		if (!strstr(r.out, want[i]))
			fail_msg("ESCAPE FOUND or wrong errno: expected \"%s\"", want[i]);
	wt_result_free(&r);
}

/* A rename of .env, performed by a worker and decided by the view, is
 * the agent's: the audit row names its command line. */
static void test_emul_audit_names_agent(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, ".env", "SECRET=emul\n");
	struct wt_result r;
	run(f, &r, NULL, "mv", ".env", "moved", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "rename 0"));
	/* The command line is the agent's own, not the supervisor's (whose
	 * own command line ends with the agent's). */
	wd_autofree char *prog = agent();
	wd_autofree char *cmd = wd_asprintf("\"cmdline\":\"%s mv .env moved\"", prog);
	struct wt_audit_q q = {.summary_sub = "rename .env -> moved", .request_sub = cmd};
	assert_int_equal(wt_audit_match(f->db, &q), 1);
	wt_result_free(&r);
}

/* A rename or link between fast subtrees onto a sensitive or control
 * name, or of a directory onto one, is decided before it is made on the
 * backing tree: refused (passive tier), nothing moves; a plain one is
 * made. */
static void test_emul_cross_decided(void **state)
{
	struct fx *f = *state;
	dir_of(f->proj, "fa", 0, 0755);
	dir_of(f->proj, "fa/sub", 0, 0755);
	dir_of(f->proj, "fb", 0, 0755);
	put(f->proj, "fa/plain", "plain\n", 0, 0644);
	put(f->proj, "fa/sub/s", "s\n", 0, 0644);
	wd_autofree char *prog = agent();
	char *argv[] = {"run",		"--tier",  "passive",  "--prompt", "none",
			"--view=split", "--",	   prog,       "ops",	   "mv",
			"fa/plain",	"fb/.env", "ln",       "fa/plain", "fb/.env",
			"mv",		"fa/sub",  "fb/.aws",  "mv",	   "fa/plain",
			"fb/HEAD",	"mv",	   "fa/plain", "fb/ok",	   NULL};
	struct wt_result r;
	wt_wardenv(f->proj, argv, &r);
	print_message("status %d\nout: %s\nerr: %s\n", r.status, r.out, r.err);
	assert_int_equal(r.status, 0);
	const char *want[] = {"001 mv fa/plain EACCES", "002 ln fa/plain EACCES",
			      "003 mv fa/sub EACCES", "004 mv fa/plain EACCES",
			      "005 mv fa/plain 0"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(want); i++)
		if (!strstr(r.out, want[i]))
			fail_msg("ESCAPE FOUND or wrong answer: expected \"%s\"", want[i]);
	const char *absent[] = {"fb/.env", "fb/.aws", "fb/HEAD", "fa/plain"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(absent); i++) {
		wd_autofree char *p = wd_asprintf("%s/%s", f->proj, absent[i]);
		struct stat st;
		if (lstat(p, &st) == 0)
			fail_msg("ESCAPE FOUND: %s exists", absent[i]);
	}
	wd_autofree char *ok = wd_asprintf("%s/fb/ok", f->proj);
	wd_autofree char *s = wd_asprintf("%s/fa/sub/s", f->proj);
	struct stat st;
	assert_int_equal(stat(ok, &st), 0);
	assert_int_equal(stat(s, &st), 0);
	wt_result_free(&r);
}

int main(void)
{
	if (geteuid() != 0) {
		print_message("skipped: the emulation runs for root runs only\n");
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_emul_errno_differential, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuse_view_errno_differential, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emul_errno_differential_cross, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_emul_cross_decided, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emul_proc_self_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emul_setid_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emul_audit_names_agent, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
