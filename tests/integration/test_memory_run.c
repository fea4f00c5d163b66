/*
 * test_memory_run: memory never decides. An audit holding 50
 * unanimous approvals of one command, by two people, is enough for memory
 * to propose a rule, and still the real `warden run --tier standard
 * --prompt none` of that command refuses it: nothing is allowed from
 * history until a person accepts a rule. Policy still hands the request to
 * the judge (`warden explain`).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "store.h"
#include "wt.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HISTORY 50

static char *touch_path(void)
{
	const char *cands[] = {"/usr/bin/touch", "/bin/touch"};
	for (size_t i = 0; i < 2; i++) {
		char *p = realpath(cands[i], NULL);
		if (p)
			return p;
	}
	return NULL;
}

/* Writes |n| approvals by people of `touch built.txt` in the project root,
 * the rows warden writes when a person answers a prompt. */
static void seed(const char *db_path, const char *touch, int n)
{
	struct sto_db *db = NULL;
	char *err = NULL;
	if (sto_open(db_path, &db, &err) != 0)
		fail_msg("%s", err ? err : "sto_open failed");
	char *req = wd_asprintf("{\"kind\":\"exec\",\"path\":\"%s\",\"interp\":null,\"argv\":"
				"[\"touch\",\"built.txt\"],\"env\":{},\"cwd\":\".\",\"parent\":"
				"\"sh -c 'touch built.txt'\"}",
				touch);
	int64_t now = wd_now_real_us();
	for (int i = 0; i < n; i++) {
		const char *by = i % 2 ? "ann" : "bob";
		char reason[64];
		snprintf(reason, sizeof(reason), "approved by %s", by);
		struct sto_row row = {.ts_us = now - (int64_t)(n - i) * 60000000,
				      .session = "history",
				      .pid = 100 + i,
				      .ppid = 1,
				      .kind = "exec",
				      .request = req,
				      .summary = "touch built.txt",
				      .decision = "allow",
				      .source = "user",
				      .reason = reason,
				      .decided_by = by};
		assert_int_equal(sto_append(db, &row, NULL), 0);
	}
	free(req);
	sto_close(db);
}

static void test_memory_never_decides(void **state)
{
	(void)state;
	char *touch = touch_path();
	if (!touch)
		skip();
	char *proj = wt_project();
	char *wdir = wd_asprintf("%s/.warden", proj);
	char *db = wd_asprintf("%s/audit.db", wdir);
	seed(db, touch, HISTORY);

	/* Memory sees the history: it would propose a rule. */
	struct wt_result r;
	wt_warden(proj, &r, "rules", "propose", NULL);
	assert_int_equal(r.status, 0);
	char *tool = wd_asprintf("exec:%s", touch);
	if (!strstr(r.out, tool))
		fail_msg("no proposal for %s:\n%s%s", tool, r.out, r.err);
	wt_result_free(&r);

	/* Policy still sends the request to the judge, then the tier. */
	wt_warden(proj, &r, "explain", "--", "touch", "built.txt", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "verdict:  undecided"));
	assert_non_null(strstr(r.out, "the judge, then the tier"));
	wt_result_free(&r);

	/* And the run refuses it: no person can be asked, nothing accepted. */
	wt_warden(proj, &r, "run", "--tier", "standard", "--prompt", "none", "--", "/bin/sh", "-c",
		  "touch built.txt", NULL);
	assert_int_not_equal(r.status, 0);
	char *built = wd_asprintf("%s/built.txt", proj);
	struct stat st;
	assert_int_equal(stat(built, &st), -1);
	/* (PATH misses before it are rows of their own, source decoder.) */
	assert_int_equal(wt_audit_count(db, "deny", "tier", "=touch built.txt", NULL), 1);
	assert_int_equal(wt_audit_count(db, "allow", NULL, "=touch built.txt", NULL), HISTORY);
	assert_int_equal(wt_audit_count(db, NULL, "accepted_rule", NULL, NULL), 0);
	assert_int_equal(wt_audit_count(db, "deny", "user", NULL, NULL), 0);
	wt_result_free(&r);

	free(built);
	free(tool);
	wt_rmtree(proj);
	free(proj);
	free(wdir);
	free(db);
	free(touch);
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_never_decides),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
