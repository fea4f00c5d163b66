/*
 * test_esc_tell: the line warden writes on a refused process's stderr
 * ("warden: refused exec of ...") cannot be turned into a write, as
 * root, into a file the agent may only read.
 *
 * Warden takes the agent's fd 2 (pidfd_getfd), checks what it is, and
 * for a terminal opens a new, non-blocking description of it. Were that
 * open made by the agent's path /proc/PID/fd/2, a second thread of the
 * agent could dup2 another file onto fd 2 between the check and the
 * open: root would then open and write the agent's read-only file. The
 * agent, tests/escape/esc_tell.c, swaps fd 2 between /dev/null (a
 * character device, which passes the check) and a root-owned 0444 file
 * outside the project, while asking for execs passive refuses.
 *
 * The file lives in a fresh directory under /run: the host's /tmp,
 * /var/tmp and /dev/shm are the session's own in the sandbox, and a home
 * is shown read-only, so the agent could not name a file there that
 * warden (outside the sandbox) sees. The test removes exactly what it
 * created (unlink, rmdir), nothing recursive.
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
#include <string.h>
#include <sys/stat.h>

#define CONTENT "WARDEN_TELL_TARGET_3b91f2: root's file, read-only for the agent\n"

struct fx {
	char *proj;
	char *home;
	char *dir;    /* /run/warden-esc-tell-XXXXXX */
	char *target; /* dir/target, 0444, root's */
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	wt_write(f->proj, "README.md", "# tell escapes\n");
	f->home = wt_home("esc-tell");
	char d[] = "/run/warden-esc-tell-XXXXXX";
	char *made = mkdtemp(d);
	assert_non_null(made);
	f->dir = wd_strdup(made);
	assert_int_equal(chmod(f->dir, 0755), 0);
	f->target = wd_asprintf("%s/target", f->dir);
	int fd = open(f->target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, CONTENT, strlen(CONTENT)), (ssize_t)strlen(CONTENT));
	assert_int_equal(fchown(fd, 0, 0), 0);
	assert_int_equal(fchmod(fd, 0444), 0);
	close(fd);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	/* Exactly the two names this test made: never a recursive removal
	 * outside the test's own temporary trees. */
	unlink(f->target);
	rmdir(f->dir);
	wt_rmtree(f->proj);
	wt_rmtree(f->home);
	free(f->target);
	free(f->dir);
	free(f->proj);
	free(f->home);
	free(f);
	return 0;
}

static char *agent(void)
{
	const char *b = getenv("WARDEN_BUILD_DIR");
	return wd_asprintf("%s/tests/escape/esc_tell", b ? b : ".");
}

static bool said(const struct wt_result *r, const char *s)
{
	return (r->out && strstr(r->out, s)) || (r->err && strstr(r->err, s));
}

/* Runs the race under `warden run --tier passive --prompt none` (with
 * --no-view when no_view) and checks the target afterwards. */
static void race(const struct fx *f, bool no_view)
{
	char *prog = agent();
	char *argv[16] = {"run", "--tier", "passive", "--prompt", "none"};
	size_t n = 5;
	if (no_view)
		argv[n++] = "--no-view";
	argv[n++] = "--";
	argv[n++] = prog;
	argv[n++] = f->target;
	argv[n++] = "20000";
	argv[n++] = "15";
	argv[n] = NULL;
	struct wt_result r = {0};
	wt_wardenv(f->proj, argv, &r);
	print_message("status %d\nout: %.3000s\nerr: %.2000s\n", r.status, r.out, r.err);

	struct stat st;
	assert_int_equal(lstat(f->target, &st), 0);
	char *now = NULL;
	size_t len = 0;
	assert_int_equal(wd_read_file(f->target, 1 << 20, &now, &len), 0);
	if (st.st_size != (off_t)strlen(CONTENT) || len != strlen(CONTENT) ||
	    memcmp(now, CONTENT, len) != 0)
		fail_msg("ESCAPE FOUND: warden wrote into the agent's read-only file "
			 "(size %lld): %.300s",
			 (long long)st.st_size, now);
	free(now);

	/* The race was really run: the agent could open the target, its
	 * execs were refused (warden had lines to tell), and it ended by
	 * itself rather than by an allowed exec. */
	assert_int_equal(r.status, 0);
	char *opened = wd_asprintf("open %s: ok", f->target);
	assert_true(said(&r, opened));
	free(opened);
	const char *t = r.out ? strstr(r.out, "tries ") : NULL;
	assert_non_null(t);
	long tries = 0, refused = 0;
	int changed = -1;
	assert_int_equal(sscanf(t, "tries %ld refused %ld changed %d", &tries, &refused, &changed),
			 3);
	assert_true(refused > 100);
	assert_int_equal(changed, 0);
	wt_result_free(&r);
	free(prog);
}

/* With --no-view: the agent's stderr is the pipe warden was given. */
static void test_esc_tell_no_view(void **state)
{
	race(*state, true);
}

/* With the project view (the default run). */
static void test_esc_tell_view(void **state)
{
	race(*state, false);
}

int main(void)
{
	wt_require_sandbox();
	if (geteuid() != 0) {
		printf("SKIP: the escape suite runs as root\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_esc_tell_no_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_tell_view, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
