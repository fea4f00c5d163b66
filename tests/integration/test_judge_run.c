/*
 * test_judge_run: the judge inside the real pipeline: warden run
 * against a local HTTP server (tests/helpers/judge_server.c) that answers
 * scripted verdicts and records what it was sent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "judge_server.h"
#include "store.h"
#include "wt.h"

#include <string.h>

#define ALLOW	 "{\"decision\":\"allow\",\"risk_level\":\"low\",\"reason\":\"a project edit\"}"
#define CRITICAL "{\"decision\":\"deny\",\"risk_level\":\"critical\",\"reason\":\"exfiltration\"}"
#define ESCALATE "{\"decision\":\"escalate\",\"risk_level\":\"medium\",\"reason\":\"unsure\"}"

struct fx {
	struct js_server *js;
	char *proj, *db;
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->js = js_start();
	assert_non_null(f->js);
	char *url = js_url(f->js, "/v1/chat/completions");
	setenv("WARDEN_JUDGE_URL", url, 1);
	setenv("WARDEN_JUDGE_MODEL", "test-model", 1);
	setenv("WARDEN_JUDGE_API_KEY", "sekrit-judge-key-4711", 1);
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	free(url);
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# judged\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	js_stop(f->js);
	wt_rmtree(f->proj);
	free(f->proj);
	free(f->db);
	free(f);
	return 0;
}

static void push(struct fx *f, const char *content)
{
	struct js_reply r = {.mode = JS_NORMAL, .content = content};
	js_push(f->js, &r);
}

static void test_judge_allow_runs_and_is_audited(void **state)
{
	struct fx *f = *state;
	push(f, ALLOW);
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c",
		  "touch judged && echo made", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "made"));
	assert_int_equal(js_count(f->js), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", "judge", "touch judged", "a project edit"),
			 1);
	wt_result_free(&r);
}

static void test_judge_deny_critical_refuses(void **state)
{
	struct fx *f = *state;
	push(f, CRITICAL);
	struct wt_result r;
	/* aggressive: a tier never weakens a judge's deny+critical */
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c",
		  "touch nope; echo rc=$?", NULL);
	assert_non_null(strstr(r.out, "rc=126"));
	assert_non_null(strstr(r.err, "exfiltration"));
	assert_int_equal(wt_audit_count(f->db, "deny", "judge", "touch nope", "exfiltration"), 1);
	wt_result_free(&r);
}

static void test_judge_escalate_and_failure_go_to_tier(void **state)
{
	struct fx *f = *state;
	push(f, ESCALATE);
	/* the second request gets no scripted reply: HTTP 500, then the
	 * retry, then escalate */
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c",
		  "touch one; touch two; echo done", NULL);
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "touch one", "passive mode"), 1);
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "touch two", "passive mode"), 1);
	assert_int_equal(js_count(f->js), 3); /* one, then two and its retry */
	wt_result_free(&r);
}

static void test_judge_cache_and_stable_prefix(void **state)
{
	struct fx *f = *state;
	push(f, ALLOW);
	push(f, ALLOW);
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--turn-idle", "30", "--", "/bin/sh",
		  "-c", "touch a; touch a; touch b", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(js_count(f->js), 2);
	assert_int_equal(wt_audit_count(f->db, "allow", "judge_cache", "=touch a", NULL), 1);
	char *b0 = NULL, *b1 = NULL;
	assert_int_equal(js_request(f->js, 0, &b0, NULL, NULL), 0);
	assert_int_equal(js_request(f->js, 1, &b1, NULL, NULL), 0);
	/* The turn's prefix is byte-identical; the history grows after it. */
	char *e0 = strstr(b0, "</user_rules>"), *e1 = strstr(b1, "</user_rules>");
	assert_non_null(e0);
	assert_non_null(e1);
	assert_int_equal(e0 - b0, e1 - b1);
	assert_memory_equal(b0, b1, (size_t)(e0 - b0));
	/* The second call's history holds the first call's outcome. */
	char *h1 = strstr(e1, "<tool_history>");
	assert_non_null(h1);
	assert_true(strlen(e1) > strlen(e0));
	/* The key went in a header, never in the body or the audit. */
	assert_null(strstr(b1, "sekrit-judge-key-4711"));
	free(b0);
	free(b1);
	wt_result_free(&r);
}

static void test_judge_allow_covers_make_tree(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "Makefile", "all: a.o b.o\n\tcc -o prog a.o b.o\n");
	wt_write(f->proj, "a.c", "int main(void){return 0;}\n");
	wt_write(f->proj, "b.c", "int b(void){return 1;}\n");
	push(f, ALLOW);
	struct wt_result r;
	/* make is a tool call of the agent (the agent's own start-up covers
	 * nothing it starts); "; true" keeps sh from exec'ing make itself. */
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c", "make -j2; true",
		  NULL);
	assert_int_equal(r.status, 0);
	/* One call for make, none for what it runs. */
	assert_int_equal(js_count(f->js), 1);
	assert_true(wt_audit_count(f->db, "allow", "covered", "cc", NULL) >= 3);
	wt_result_free(&r);
}

static int add_parent_rule(const char *db)
{
	struct sto_db *d = NULL;
	char *err = NULL;
	if (sto_open(db, &d, &err) < 0) {
		free(err);
		return -1;
	}
	struct sto_session s = {.id = "PARENT-0001",
				.started_us = 1,
				.project = "/x",
				.command = "agent",
				.tier = "standard",
				.role = "agent"};
	sto_session_begin(d, &s, NULL);
	struct sto_row row = {.ts_us = 2,
			      .session = "PARENT-0001",
			      .pid = 1,
			      .kind = "exec",
			      .request = "{}",
			      .summary = "touch secrets.txt",
			      .decision = "deny",
			      .source = "user",
			      .reason = "refused by ann",
			      .decided_by = "ann",
			      .note = "never touch secrets.txt"};
	int rc = sto_append(d, &row, NULL);
	sto_close(d);
	return rc;
}

static void test_judge_sub_session_reads_parent_rules(void **state)
{
	struct fx *f = *state;
	assert_int_equal(add_parent_rule(f->db), 0);
	push(f, ALLOW);
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--parent", "PARENT-0001", "--",
		  "/bin/sh", "-c", "touch other", NULL);
	char *b0 = NULL;
	assert_int_equal(js_request(f->js, 0, &b0, NULL, NULL), 0);
	char *rules = strstr(b0, "<user_rules>");
	assert_non_null(rules);
	assert_non_null(strstr(rules, "never touch secrets.txt"));
	free(b0);
	wt_result_free(&r);
	/* Without --parent the rule is not there. */
	js_reset(f->js);
	push(f, ALLOW);
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c", "touch other2",
		  NULL);
	assert_int_equal(js_request(f->js, 0, &b0, NULL, NULL), 0);
	assert_null(strstr(b0, "never touch secrets.txt"));
	free(b0);
	wt_result_free(&r);
}

static void test_judge_key_not_in_agent_environment(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c",
		  "echo \"session=$WARDEN_SESSION key=$WARDEN_JUDGE_API_KEY\"; cat "
		  "/proc/self/environ",
		  NULL);
	assert_null(strstr(r.out, "sekrit-judge-key-4711"));
	assert_null(strstr(r.out, "WARDEN_JUDGE"));
	assert_non_null(strstr(r.out, "session=2")); /* WARDEN_SESSION is set: 2026... */
	assert_non_null(strstr(r.out, "key=\n"));
	wt_result_free(&r);
}

/* A name change waiting for the judge holds one of the emulation's
 * workers (the split view, as root: renames are performed by warden);
 * the pool grows, so another agent's rename is not held up behind it.
 * With one worker, `mv src/b src/c` would wait for the judge's answer
 * (here: none for a minute, then the judge's timeout) and the first mv
 * would be over when the script looks. */
static void test_judge_waiting_rename_holds_no_other(void **state)
{
	struct fx *f = *state;
	/* The judge allows the first mv's exec (its argument names a
	 * sensitive file: no rule covers it), then takes a minute over the
	 * rename itself. */
	push(f, ALLOW);
	struct js_reply slow = {.mode = JS_SLOW, .content = ALLOW, .delay_ms = 60000};
	js_push(f->js, &slow);
	wt_write(f->proj, "src/a", "a\n");
	wt_write(f->proj, "src/b", "b\n");
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"rules\": [{\"action\": \"allow\", \"command\": [\"mv\"]},"
		 " {\"action\": \"allow\", \"command\": [\"sleep\"]}]}\n");
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--view", "split", "--tier", "passive", "--", "/bin/sh", "-c",
		  "mv src/a src/.env 2>/dev/null & sleep 1; mv src/b src/c && echo moved;"
		  " kill -0 $! 2>/dev/null && echo 'first still waits'; kill -9 $!; wait",
		  NULL);
	print_message("out: %s\nerr: %s\n", r.out, r.err);
	assert_non_null(strstr(r.out, "moved"));
	assert_non_null(strstr(r.out, "first still waits"));
	assert_int_equal(js_count(f->js), 2);
	wt_result_free(&r);
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_judge_allow_runs_and_is_audited, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_judge_deny_critical_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_judge_escalate_and_failure_go_to_tier, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_judge_cache_and_stable_prefix, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_judge_allow_covers_make_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_judge_sub_session_reads_parent_rules, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_judge_waiting_rename_holds_no_other, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_judge_key_not_in_agent_environment, setup,
						teardown),
	};
	return cmocka_run_group_tests_name("judge_run", tests, NULL, NULL);
}
