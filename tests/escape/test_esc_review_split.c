/*
 * test_esc_review_split: an adversarial review of the split view's
 * emulated name changes, under the real `warden run --view split --tier
 * passive --prompt none` as root. Each case tries to plant a control file
 * (a bare repository's HEAD: `**` /HEAD, run by the next git in that
 * directory) in a fast subtree without a decision; the passive tier
 * refuses every decision, so the file must never appear on the backing
 * tree.
 *
 *   - detached: a descriptor of a fast root kept across the detacher's
 *     unmount names a mount that is no longer below the project; the
 *     emulation saw no project-relative name for it and decided nothing.
 *   - deep: a name in a fast subtree longer than PATH_MAX, which the
 *     emulation cannot read back from /proc: it classified the call by
 *     identity only.
 *   - swap: a call whose parent was resolved onto the FUSE part was made
 *     again by its path, which a racing thread pointed into a fast
 *     subtree meanwhile (a symlink exchanged between the two).
 *
 *   - review: a review run's rename or link between two fast subtrees
 *     (EXDEV in the sandbox) is never made on the backing tree (closed on
 *     main; a guard for a backer that makes such calls there).
 *
 * The agent is esc_review_split (plain system calls, no exec).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	wt_write(f->proj, "README.md", "# review of the split view\n");
	wt_write(f->proj, "src/a.txt", "plain a\n");
	wt_write(f->proj, "src/lib/b.txt", "plain b\n");
	/* A sensitive file keeps fdir under the FUSE view. */
	wt_write(f->proj, "fdir/.env", "TOKEN=x\n");
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

static char *agent(void)
{
	const char *b = getenv("WARDEN_BUILD_DIR");
	return wd_asprintf("%s/tests/escape/esc_review_split", b ? b : ".");
}

/* Runs the agent with up to three arguments; |review|: a review run. */
static void run_as(const struct fx *f, struct wt_result *r, bool review, const char *a1,
		   const char *a2, const char *a3)
{
	wd_autofree char *prog = agent();
	char *argv[24] = {"run",     "--view",	 "split", "--tier",
			  "passive", "--prompt", "none",  "--stats"};
	size_t n = 8;
	if (review) {
		argv[n++] = "--role";
		argv[n++] = "review";
	}
	argv[n++] = "--";
	argv[n++] = prog;
	const char *a[] = {a1, a2, a3};
	for (size_t i = 0; i < 3 && a[i]; i++)
		argv[n++] = (char *)a[i];
	argv[n] = NULL;
	wt_wardenv(f->proj, argv, r);
	print_message("status %d\nout: %.3000s\nerr: %.3000s\n", r->status, r->out, r->err);
}

static void run(const struct fx *f, struct wt_result *r, const char *a1, const char *a2)
{
	run_as(f, r, false, a1, a2, NULL);
}

static bool exists(const struct fx *f, const char *rel)
{
	wd_autofree char *p = wd_asprintf("%s/%s", f->proj, rel);
	struct stat st;
	return lstat(p, &st) == 0;
}

/* The split view was in use: the run's --stats names fast subtrees. */
static void assert_split(const struct wt_result *r)
{
	if (!r->err || !strstr(r->err, "fast"))
		skip();
}

static void test_detached_fast_root_plants_head(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	run(f, &r, "detached", NULL);
	assert_split(&r);
	assert_non_null(strstr(r.out, "rmdir-src "));
	if (exists(f, "src/HEAD"))
		fail_msg("ESCAPE FOUND: src/HEAD planted through a detached fast root, undecided");
	if (exists(f, "src/sub/HEAD"))
		fail_msg("ESCAPE FOUND: src/sub/HEAD linked through a detached fast root, "
			 "undecided");
	wt_result_free(&r);
}

static void test_deep_name_plants_head(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	run(f, &r, "deep", NULL);
	assert_split(&r);
	assert_non_null(strstr(r.out, "deep-dir "));
	if (exists(f, "src/X/HEAD"))
		fail_msg("ESCAPE FOUND: src/X/HEAD planted through a name longer than PATH_MAX, "
			 "undecided");
	if (strstr(r.out, "rename-deep-HEAD 0"))
		fail_msg("ESCAPE FOUND: a plain file renamed to HEAD in a deep fast directory, "
			 "undecided");
	wt_result_free(&r);
}

static void test_symlink_swap_plants_head(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	run(f, &r, "swap", "8");
	assert_split(&r);
	assert_non_null(strstr(r.out, "swap tries "));
	if (exists(f, "src/HEAD") || strstr(r.out, "won 1"))
		fail_msg("ESCAPE FOUND: a rename re-resolved by path landed in a fast subtree "
			 "undecided (src/HEAD: %s)",
			 exists(f, "src/HEAD") ? "planted" : "absent");
	if (exists(f, "fdir/HEAD"))
		fail_msg("ESCAPE FOUND: fdir/HEAD planted without a decision");
	wt_result_free(&r);
}

/* A review run writes nothing: a rename or link between two fast subtrees
 * (EXDEV between their mounts in the sandbox, one file system on the
 * backing tree) must not be made on the backing tree either. */
static void test_review_run_moves_between_fast_subtrees(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "lib2/c.txt", "plain c\n");
	struct wt_result r = {0};
	run_as(f, &r, true, "mv", "src/a.txt", "lib2/a.txt");
	assert_split(&r);
	if (!exists(f, "src/a.txt") || exists(f, "lib2/a.txt"))
		fail_msg("ESCAPE FOUND: a review run renamed src/a.txt to lib2/a.txt");
	wt_result_free(&r);
	run_as(f, &r, true, "ln", "src/a.txt", "lib2/hard.txt");
	if (exists(f, "lib2/hard.txt"))
		fail_msg("ESCAPE FOUND: a review run linked src/a.txt as lib2/hard.txt");
	wt_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_detached_fast_root_plants_head, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_deep_name_plants_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_swap_plants_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_review_run_moves_between_fast_subtrees, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
