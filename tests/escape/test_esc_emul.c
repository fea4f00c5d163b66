/*
 * test_esc_emul: the name-changing calls the supervisor performs for the
 * agent (sandbox/emul.c) when the filter traps them (the split view; every
 * root run for now), each under the real `warden run`. The agent is
 * tests/escape/esc_emul.c.
 *
 * - every errno of the emulated calls is the agent's own: the same script
 *   runs natively as the agent would (uid 0, no capability, NO_NEW_PRIVS)
 *   and under warden, on the same fixture, and every line must match;
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
	put(fx, "hl/secret", "s\n", OTHER, 0600);
	put(fx, "hl/public", "p\n", OTHER, 0644);
	wd_autofree char *ldir = wd_asprintf("%s/ldir", fx);
	wd_autofree char *lf = wd_asprintf("%s/lf", fx);
	assert_int_equal(symlink("d", ldir), 0);
	assert_int_equal(symlink("file", lf), 0);
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

/* The script run natively, as the agent would be: its output. */
static char *native(const struct fx *f, bool whiteout)
{
	wd_autofree char *prog = agent();
	wd_autofree char *cmd = wd_asprintf("'%s' script '%s/fx' nocaps%s", prog, f->native,
					    whiteout ? "" : " nowhiteout");
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
	wd_autofree char *want = native(f, whiteout);
	assert_non_null(strstr(want, "state file"));
	struct wt_result r;
	run(f, &r, opt, "script", "fx", whiteout ? NULL : "nowhiteout", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(r.out);
	int d = differences(want, r.out);
	if (d)
		fail_msg("%d calls answered otherwise under warden than natively", d);
	wt_result_free(&r);
}

/* The project without the view: the emulation alone stands between the
 * agent's calls and the file system. */
static void test_emul_errno_differential(void **state)
{
	differential(state, "--no-view", true);
}

/* Through the project's FUSE view: the emulated call reaches the view,
 * which answers as the backing file system does (but for RENAME_WHITEOUT,
 * which the view does not offer: EINVAL). */
static void test_emul_errno_differential_view(void **state)
{
	differential(state, "--stats", false);
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

int main(void)
{
	if (geteuid() != 0) {
		print_message("skipped: the emulation runs for root runs only\n");
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_emul_errno_differential, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emul_errno_differential_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emul_proc_self_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emul_setid_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emul_audit_names_agent, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
