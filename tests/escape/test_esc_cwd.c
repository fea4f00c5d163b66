/*
 * test_esc_cwd: the working directory a command was decided in is the one
 * it runs in. The decision sees the caller's cwd (relative paths, the
 * project's parts); a thread of the caller, or a process sharing its cwd
 * through clone(CLONE_FS), could change it between the decoder's read and
 * the exec. The filter refuses CLONE_FS without CLONE_THREAD, and the exec
 * event compares the new image's cwd with the decided one (a thread's
 * chdir).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "escape_fx.h"

/* Every pwd that ran printed the cwd its audit row was decided with. */
static void check_runs(const struct fx *f, const char *out, int *checked)
{
	char proj[PATH_MAX];
	assert_non_null(realpath(f->proj, proj));
	size_t pl = strlen(proj);
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		int tag = 0;
		char cwd[PATH_MAX];
		if (sscanf(l, "tag=t%d cwd=%4095[^\n]", &tag, cwd) != 2)
			continue;
		if (strncmp(cwd, proj, pl) != 0 || cwd[pl] != '/')
			fail_msg("pwd ran outside the project: %s", cwd);
		char summary[64], want[PATH_MAX + 16];
		snprintf(summary, sizeof(summary), "=pwd -P t%d", tag);
		snprintf(want, sizeof(want), "\"cwd\":\"%s\"", cwd + pl + 1);
		int n = rows(f, "exec", "allow", NULL, summary, NULL);
		if (n != 1)
			fail_msg("%s: %d allowing rows", summary + 1, n);
		if (rows(f, "exec", "allow", NULL, summary, want) != 1)
			fail_msg("ESCAPE FOUND: %s ran in %s, decided in another cwd", summary + 1,
				 cwd + pl + 1);
		(*checked)++;
	}
}

static void race(void **state, const char *mode, const char *expect_clone)
{
	struct fx *f = *state;
	char *a = in_proj(f, "a"), *b = in_proj(f, "b");
	assert_int_equal(mkdir(a, 0755), 0);
	assert_int_equal(mkdir(b, 0755), 0);
	char *prog = esc("cwd");
	struct wt_result r;
	run(f, &r, "passive", prog, mode, "200", a, b, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, expect_clone));
	int checked = 0;
	check_runs(f, r.out, &checked);
	print_message("%s: %d runs checked\n%s", mode, checked, strstr(r.out, "ran="));
	wt_result_free(&r);
	free(prog);
	free(a);
	free(b);
}

/* A second thread flips the cwd between a/ and b/ while warden decides:
 * whatever ran, ran where it was decided (or was killed at the event). */
static void test_esc_cwd_thread(void **state)
{
	race(state, "thread", "clonefs=OK");
}

/* A process that shares the caller's cwd without being its thread cannot
 * be made. */
static void test_esc_cwd_clone_fs(void **state)
{
	race(state, "clonefs", "clonefs=EPERM");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_esc_cwd_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_cwd_clone_fs, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
