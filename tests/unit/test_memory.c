/*
 * test_memory: approval memory: the request's arguments,
 * similarity and the context shown to a person, proposed rules, accepted
 * rules in pol_decide() and in the config parser, and the store's query of
 * people's decisions on a real SQLite file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "policy.h"
#include "store.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_US (86400LL * 1000000LL)
/* 2026-01-02T00:00:00Z */
#define T0 (1767312000LL * 1000000LL)

/* ---- helpers --------------------------------------------------------------------- */

/* The audit's request JSON of an exec of /usr/bin/make in the project root. */
static char *make_req(const char *args)
{
	struct wd_sb sb = {0};
	wd_sb_puts(&sb, "{\"kind\":\"exec\",\"path\":\"/usr/bin/make\",\"interp\":null,"
			"\"argv\":[\"make\"");
	char *copy = wd_strdup(args);
	char *save = NULL;
	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		wd_sb_printf(&sb, ",\"%s\"", w);
	free(copy);
	wd_sb_puts(&sb, "],\"env\":{},\"cwd\":\".\",\"parent\":\"sh\"}");
	return wd_sb_steal(&sb);
}

struct recs {
	struct pol_mem_record v[64];
	char *req[64];
	size_t n;
};

static void add(struct recs *r, const char *args, bool approved, const char *by, const char *source)
{
	size_t i = r->n++;
	r->req[i] = make_req(args);
	r->v[i] = (struct pol_mem_record){.request = r->req[i],
					  .source = source ? source : "user",
					  .approved = approved,
					  .decided_by = by,
					  .ts_us = T0 + (int64_t)i * 60000000};
}

static void recs_free(struct recs *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->req[i]);
	r->n = 0;
}

/* The make history of the example: 6 approvals as-is by ann and bob with
 * -j 2..8 and test|build, one denial of -j 64 (outside the bounds). */
static void make_history(struct recs *r)
{
	add(r, "-j 2 test", true, "ann", NULL);
	add(r, "-j 4 test", true, "bob", NULL);
	add(r, "-j 4 build", true, "ann", NULL);
	add(r, "-j 8 test", true, "bob", NULL);
	add(r, "-j 2 build", true, "ann", NULL);
	add(r, "-j 4 test", true, "bob", NULL);
	add(r, "-j 64 test", false, "bob", NULL);
}

static struct pol_request *exec_req(char *const *argv, char *const *envp)
{
	struct pol_exec_desc d = {
		.path = "/usr/bin/make", .argv = argv, .envp = envp, .cwd = "/proj"};
	struct pol_request *r = pol_request_exec(&d, "/proj");
	assert_non_null(r);
	return r;
}

/* ---- arguments ------------------------------------------------------------------- */

static void test_pol_mem_args_exec_and_open(void **state)
{
	(void)state;
	char *argv[] = {"make", "-j", "4", "007", "-2.5", "1e5", "test", NULL};
	struct pol_request *r = exec_req(argv, NULL);
	char *a = pol_mem_args_json(r);
	assert_string_equal(a, "{\"program\":\"/usr/bin/make\",\"arg1\":\"-j\",\"arg2\":4,"
			       "\"arg3\":\"007\",\"arg4\":-2.5,\"arg5\":\"1e5\",\"arg6\":"
			       "\"test\",\"cwd\":\".\"}");
	char *t = pol_mem_tool(r);
	assert_string_equal(t, "exec:/usr/bin/make");
	free(a);
	free(t);
	pol_request_free(r);

	struct pol_request *o = pol_request_open(".env", NULL, POL_ACC_READ | POL_ACC_WRITE, NULL);
	a = pol_mem_args_json(o);
	assert_string_equal(a, "{\"path\":\".env\",\"access\":\"read+write\"}");
	t = pol_mem_tool(o);
	assert_string_equal(t, "open");
	free(a);
	free(t);
	pol_request_free(o);
}

/* ---- similarity ------------------------------------------------------------------ */

static const struct {
	const char *a, *b;
	double want;
} sim_cases[] = {
	{"{\"a\":1,\"b\":\"x\"}", "{\"a\":1,\"b\":\"x\"}", 1.0},
	{"{\"a\":1,\"b\":\"x\"}", "{\"a\":1,\"b\":\"y\"}", 0.75},
	{"{\"a\":1}", "{\"a\":1,\"c\":2}", 0.5},
	{"{\"a\":\"15\"}", "{\"a\":15}", 0.5},		 /* "15" is not 15 */
	{"{\"a\":1,\"b\":2,\"c\":3}", "{\"d\":1}", 0.0}, /* nothing shared */
	{"{\"e\":{\"x\":1,\"y\":2}}", "{\"e\":{\"x\":1,\"y\":3}}", 0.75},
	{"{\"p\":1,\"e\":{\"x\":1}}", "{\"p\":2,\"e\":{\"x\":1,\"z\":1}}", (0.5 + 1 + 0) / 3},
	/* Three levels: the fourth is compared whole. */
	{"{\"a\":{\"b\":{\"c\":{\"d\":1,\"e\":1}}}}", "{\"a\":{\"b\":{\"c\":{\"d\":1,\"e\":2}}}}",
	 0.5},
	{"{\"a\":{\"b\":{\"c\":{\"d\":1}}}}", "{\"a\":{\"b\":{\"c\":{\"d\":1}}}}", 1.0},
	/* Secret-named fields are never compared. */
	{"{\"a\":1,\"token\":\"x\"}", "{\"a\":1,\"token\":\"y\"}", 1.0},
	{"{\"a\":1,\"password\":\"x\"}", "{\"a\":1}", 1.0},
	{"{\"a\":1,\"env\":{\"API_KEY\":\"x\"}}", "{\"a\":1,\"env\":{\"API_KEY\":\"y\"}}", 1.0},
	{"{}", "{}", 1.0},
	{"{\"program\":\"/usr/bin/"
	 "make\",\"arg1\":\"-j\",\"arg2\":4,\"arg3\":\"test\",\"cwd\":\".\"}",
	 "{\"program\":\"/usr/bin/make\",\"arg1\":\"-j\",\"arg2\":8,\"cwd\":\".\"}",
	 (1 + 1 + 0.5 + 0 + 1) / 5.0},
};

static void test_pol_mem_similarity_hand_computed(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sim_cases) / sizeof(sim_cases[0]); i++) {
		double got = pol_mem_similarity(sim_cases[i].a, sim_cases[i].b);
		double back = pol_mem_similarity(sim_cases[i].b, sim_cases[i].a);
		if (fabs(got - sim_cases[i].want) > 1e-9 || fabs(back - got) > 1e-9)
			fail_msg("case %zu: want %g, got %g (reversed %g)", i, sim_cases[i].want,
				 got, back);
	}
	assert_true(pol_mem_similarity("[1]", "{}") < 0);
	assert_true(pol_mem_similarity("nope", "{}") < 0);
}

/* ---- the context ----------------------------------------------------------------- */

static void test_pol_mem_context_counts_and_summary(void **state)
{
	(void)state;
	struct recs r = {0};
	add(&r, "-j 4 test", true, "ann", NULL);	  /* 1.0 */
	add(&r, "-j 8 test", true, "bob", NULL);	  /* 0.9 */
	add(&r, "-j 4 build", false, "ann", NULL);	  /* 0.9 */
	add(&r, "-j 4 test", false, "warden", "timeout"); /* not a decision */
	add(&r, "-j 4 test", true, "warden", "tier");	  /* not a person */
	add(&r, "clean", true, "carl", NULL);		  /* 2.5 / 5 = 0.5: similar */
	add(&r, "a b c d e f", true, "dave", NULL);	  /* (1 + 0.5 * 3 + 1) / 8: not */
	char *argv[] = {"make", "-j", "4", "test", NULL};
	struct pol_request *q = exec_req(argv, NULL);
	char *summary = NULL, *json = NULL;
	assert_int_equal(pol_mem_advice(q, r.v, r.n, &summary, &json), 0);
	assert_string_equal(summary, "4 similar: 3 approved, 1 denied (by ann, bob, carl)");
	assert_non_null(strstr(json, "\"similar\":4"));
	assert_non_null(strstr(json, "\"score\":1,"));
	assert_non_null(strstr(json, "\"score\":0.9,"));
	assert_non_null(strstr(json, "\"equal_fields\":[\"program\",\"arg1\",\"arg2\","
				     "\"arg3\",\"cwd\"]"));
	/* No argument value at all, and no timed-out decider. */
	assert_null(strstr(json, "/usr/bin/make"));
	assert_null(strstr(json, "-j"));
	assert_null(strstr(json, "test\""));
	assert_null(strstr(json, "warden"));
	assert_null(strstr(json, "dave"));
	free(summary);
	free(json);

	/* Another tool: nothing similar. */
	char *args = pol_mem_args_json(q);
	struct pol_mem_context *m = pol_mem_context_new("exec:/usr/bin/gmake", args, r.v, r.n, -1);
	assert_int_equal(pol_mem_context_count(m, NULL, NULL), 0);
	char *s = pol_mem_context_summary(m);
	assert_string_equal(s, "no similar decisions");
	free(s);
	pol_mem_context_free(m);
	/* A higher threshold keeps only the close ones. */
	m = pol_mem_context_new("exec:/usr/bin/make", args, r.v, r.n, 0.95);
	size_t ok, no;
	assert_int_equal(pol_mem_context_count(m, &ok, &no), 1);
	assert_int_equal(ok, 1);
	pol_mem_context_free(m);
	free(args);
	pol_request_free(q);
	recs_free(&r);
}

static void test_pol_mem_context_no_secret_fields(void **state)
{
	(void)state;
	/* LD_AUTH_TOKEN is a run-changing variable with a secret name: its
	 * value is redacted, its name never compared nor named. */
	char *argv[] = {"make", "test", NULL};
	char *envp[] = {"LD_AUTH_TOKEN=abc123", "LD_PRELOAD=/x.so", NULL};
	struct pol_request *q = exec_req(argv, envp);
	char *past = pol_request_json(q);
	assert_null(strstr(past, "abc123"));
	struct pol_mem_record rec[2] = {
		{.request = past, .source = "user", .approved = true, .decided_by = "ann"},
		{.request = past, .source = "user", .approved = false, .decided_by = "bob"},
	};
	char *summary = NULL, *json = NULL;
	assert_int_equal(pol_mem_advice(q, rec, 2, &summary, &json), 0);
	assert_string_equal(summary, "2 similar: 1 approved, 1 denied (by ann, bob)");
	assert_null(strstr(json, "LD_AUTH_TOKEN"));
	assert_null(strstr(json, "TOKEN"));
	assert_null(strstr(json, "abc123"));
	assert_null(strstr(json, "redacted"));
	assert_null(strstr(json, "/x.so"));
	assert_non_null(strstr(json, "\"env.*\"")); /* LD_PRELOAD matched, named as env.* */
	free(summary);
	free(json);
	free(past);
	pol_request_free(q);
}

/* ---- proposals ------------------------------------------------------------------- */

static struct pol_proposals *propose(struct recs *r, size_t min_count, size_t min_deciders,
				     size_t max_denied)
{
	struct pol_propose_opts o = {min_count, min_deciders, max_denied, 90};
	return pol_propose(r->v, r->n, &o);
}

static void test_pol_propose_conditions_and_evidence(void **state)
{
	(void)state;
	struct recs r = {0};
	make_history(&r);
	add(&r, "-j 4 test", true, "carl", "timeout"); /* not counted */
	struct pol_proposals *ps = propose(&r, 5, 2, 0);
	assert_int_equal(pol_proposals_count(ps), 1);
	const struct pol_proposal *p = pol_proposals_get(ps, 0);
	assert_string_equal(pol_proposal_tool(p), "exec:/usr/bin/make");
	char *c = pol_proposal_conditions(p, "  ");
	assert_string_equal(c, "  program == \"/usr/bin/make\"\n"
			       "  arg1 == \"-j\"\n"
			       "  2 <= arg2 <= 8\n"
			       "  arg3 in [\"build\", \"test\"]\n"
			       "  cwd == \".\"\n");
	free(c);
	size_t ok, who, in, out;
	pol_proposal_evidence(p, &ok, &who, &in, &out);
	assert_int_equal(ok, 6);
	assert_int_equal(who, 2);
	assert_int_equal(in, 0);
	assert_int_equal(out, 1);
	char *d = pol_proposal_describe(p);
	assert_string_equal(d, "exec:/usr/bin/make: program == \"/usr/bin/make\", arg1 == \"-j\", "
			       "2 <= arg2 <= 8, arg3 in [\"build\", \"test\"], cwd == \".\" (6 "
			       "approved as-is by ann, bob; 0 denied inside, 1 outside)");
	free(d);
	const char *id = pol_proposal_id(p);
	assert_int_equal(strlen(id), 14);
	assert_true(strncmp(id, "r-", 2) == 0);
	assert_ptr_equal(pol_proposals_find(ps, id), p);
	char *j = pol_proposal_json(p);
	assert_non_null(strstr(j, "\"denied_outside\":1"));
	free(j);
	/* The same history gives the same id. */
	struct pol_proposals *again = propose(&r, 5, 2, 0);
	assert_string_equal(pol_proposal_id(pol_proposals_get(again, 0)), id);
	pol_proposals_free(again);
	/* Other bounds, another id. */
	add(&r, "-j 16 test", true, "ann", NULL);
	again = propose(&r, 5, 2, 0);
	assert_int_equal(pol_proposals_count(again), 1); /* 2..16: -j 64 is still outside */
	assert_string_not_equal(pol_proposal_id(pol_proposals_get(again, 0)), id);
	pol_proposals_free(again);
	pol_proposals_free(ps);
	recs_free(&r);
}

static void test_pol_propose_thresholds(void **state)
{
	(void)state;
	struct recs r = {0};
	add(&r, "-j 2 test", true, "ann", NULL);
	add(&r, "-j 4 test", true, "bob", NULL);
	add(&r, "-j 4 test", true, "ann", NULL);
	add(&r, "-j 8 test", true, "ann", NULL);
	struct pol_proposals *ps = propose(&r, 5, 2, 0);
	assert_int_equal(pol_proposals_count(ps), 0); /* 4 approvals < 5 */
	pol_proposals_free(ps);
	ps = propose(&r, 4, 2, 0);
	assert_int_equal(pol_proposals_count(ps), 1);
	pol_proposals_free(ps);
	ps = propose(&r, 4, 3, 0);
	assert_int_equal(pol_proposals_count(ps), 0); /* two people < 3 */
	pol_proposals_free(ps);
	/* Timed-out and unattended decisions are not approvals. */
	for (int i = 0; i < 10; i++)
		add(&r, "-j 4 test", true, "carl", i % 2 ? "timeout" : "tier");
	ps = propose(&r, 5, 2, 0);
	assert_int_equal(pol_proposals_count(ps), 0);
	pol_proposals_free(ps);
	recs_free(&r);
}

static void test_pol_propose_counter_evidence(void **state)
{
	(void)state;
	struct recs r = {0};
	make_history(&r);
	add(&r, "-j 4 test", false, "carl", NULL); /* a denial inside */
	struct pol_proposals *ps = propose(&r, 5, 2, 0);
	assert_int_equal(pol_proposals_count(ps), 0);
	pol_proposals_free(ps);
	ps = propose(&r, 5, 2, 1);
	assert_int_equal(pol_proposals_count(ps), 1);
	size_t in, out;
	pol_proposal_evidence(pol_proposals_get(ps, 0), NULL, NULL, &in, &out);
	assert_int_equal(in, 1);
	assert_int_equal(out, 1);
	pol_proposals_free(ps);
	recs_free(&r);

	/* An edited approval inside the bounds is counter-evidence too, and not
	 * an approval as-is. */
	make_history(&r);
	add(&r, "-j 2 test", true, "carl", NULL);
	r.v[r.n - 1].edited = true;
	ps = propose(&r, 5, 2, 0);
	assert_int_equal(pol_proposals_count(ps), 0);
	pol_proposals_free(ps);
	recs_free(&r);
}

static void test_pol_propose_no_rule_nested_or_many_texts(void **state)
{
	(void)state;
	struct recs r = {0};
	/* Eleven text values of arg1: no rule. */
	for (int i = 0; i < 11; i++) {
		char a[32];
		snprintf(a, sizeof(a), "target%d", i);
		add(&r, a, true, i % 2 ? "ann" : "bob", NULL);
	}
	struct pol_proposals *ps = propose(&r, 5, 2, 0);
	assert_int_equal(pol_proposals_count(ps), 0);
	pol_proposals_free(ps);
	recs_free(&r);
	/* Ten text values: an "in". Eleven numbers: a range. */
	for (int i = 0; i < 10; i++) {
		char a[32];
		snprintf(a, sizeof(a), "t%d %d", i, 100 + i * 3);
		add(&r, a, true, i % 2 ? "ann" : "bob", NULL);
	}
	add(&r, "t0 1", true, "ann", NULL);
	ps = propose(&r, 5, 2, 0);
	assert_int_equal(pol_proposals_count(ps), 1);
	char *c = pol_proposal_conditions(pol_proposals_get(ps, 0), "");
	assert_non_null(strstr(c, "arg1 in [\"t0\", \"t1\", \"t2\", \"t3\", \"t4\", \"t5\", "
				  "\"t6\", \"t7\", \"t8\", \"t9\"]\n"));
	assert_non_null(strstr(c, "1 <= arg2 <= 127\n"));
	free(c);
	pol_proposals_free(ps);
	recs_free(&r);

	/* A nested value (a run-changing environment): no rule. */
	char *argv[] = {"make", "test", NULL};
	char *envp[] = {"LD_PRELOAD=/x.so", NULL};
	struct pol_request *q = exec_req(argv, envp);
	char *past = pol_request_json(q);
	struct pol_mem_record rec[6];
	for (int i = 0; i < 6; i++)
		rec[i] = (struct pol_mem_record){.request = past,
						 .source = "user",
						 .approved = true,
						 .decided_by = i % 2 ? "ann" : "bob"};
	ps = pol_propose(rec, 6, NULL);
	assert_int_equal(pol_proposals_count(ps), 0);
	pol_proposals_free(ps);
	free(past);
	pol_request_free(q);
}

/* ---- accepted rules ---------------------------------------------------------------- */

static const char accepted_cfg[] =
	"{\n"
	"  \"accepted_rules\": [\n"
	"    {\n"
	"      \"id\": \"r-000000000001\",\n"
	"      \"tool\": \"exec:/usr/bin/make\",\n"
	"      \"conditions\": {\n"
	"        \"program\": {\"eq\": \"/usr/bin/make\"},\n"
	"        \"arg1\": {\"eq\": \"-j\"},\n"
	"        \"arg2\": {\"min\": 2, \"max\": 8},\n"
	"        \"arg3\": {\"in\": [\"build\", \"test\"]},\n"
	"        \"cwd\": \".\"\n"
	"      },\n"
	"      \"accepted_at\": \"2026-01-02T00:00:00Z\",\n"
	"      \"accepted_by\": \"ann\",\n"
	"      \"review_days\": 90\n"
	"    },\n"
	"    {\"tool\": \"exec:/usr/bin/rm\", \"conditions\": {\"program\": \"/usr/bin/rm\", "
	"\"arg1\": \"-rf\", \"arg2\": \"/\", \"cwd\": \".\"}, \"accepted_at\": "
	"\"2026-01-02T00:00:00Z\", \"accepted_by\": \"mallory\", \"review_days\": 90},\n"
	"    {\"tool\": \"refund\", \"conditions\": {\"amount\": {\"min\": 1, \"max\": 20}, "
	"\"reason\": {\"in\": [\"damaged\", \"late\"]}}, \"accepted_at\": "
	"\"2026-01-02T00:00:00Z\", \"accepted_by\": \"ann\", \"review_days\": 30}\n"
	"  ]\n"
	"}\n";

static struct pol_config *load(const char *text)
{
	struct pol_config *c = NULL;
	struct pol_config_errors e;
	if (pol_config_parse(text, strlen(text), "permissions.json", &c, &e) != 0)
		fail_msg("%s", e.items[0].message);
	pol_config_set_paths(c, "/proj", "/home/u");
	return c;
}

static const struct {
	const char *argv[8];
	const char *env;
	int64_t now;
	enum pol_verdict want;
	const char *what;
} accepted_cases[] = {
	{{"make", "-j", "4", "test"}, NULL, T0 + DAY_US, POL_ALLOW, "inside"},
	{{"make", "-j", "2", "build"}, NULL, T0 + 89 * DAY_US, POL_ALLOW, "inside, at the edges"},
	{{"make", "-j", "9", "test"}, NULL, T0 + DAY_US, POL_UNDECIDED, "above the max"},
	{{"make", "-j", "1", "test"}, NULL, T0 + DAY_US, POL_UNDECIDED, "below the min"},
	{{"make", "-j", "-4", "test"}, NULL, T0 + DAY_US, POL_UNDECIDED, "a negative"},
	{{"make", "-j", "4", "deploy"}, NULL, T0 + DAY_US, POL_UNDECIDED, "a new value"},
	{{"make", "-j", "four", "test"}, NULL, T0 + DAY_US, POL_UNDECIDED, "a wrong type"},
	{{"make", "-j", "4", "test", "x"}, NULL, T0 + DAY_US, POL_UNDECIDED, "an extra argument"},
	{{"make", "-j", "4"}, NULL, T0 + DAY_US, POL_UNDECIDED, "a missing argument"},
	{{"make", "-j", "4", "test"}, NULL, T0 + 90 * DAY_US, POL_UNDECIDED, "after review"},
	{{"make", "-j", "4", "test"}, NULL, T0 - 1, POL_UNDECIDED, "before acceptance"},
	{{"make", "-j", "4", "test"},
	 "LD_PRELOAD=/x.so",
	 T0 + DAY_US,
	 POL_UNDECIDED,
	 "a run-changing environment"},
	{{"rm", "-rf", "/"}, NULL, T0 + DAY_US, POL_DENY_CRITICAL, "hard deny"},
};

static void test_pol_decide_accepted_rule_edges(void **state)
{
	(void)state;
	struct pol_config *c = load(accepted_cfg);
	for (size_t i = 0; i < sizeof(accepted_cases) / sizeof(accepted_cases[0]); i++) {
		char *env[2] = {(char *)accepted_cases[i].env, NULL};
		bool rm = strcmp(accepted_cases[i].argv[0], "rm") == 0;
		struct pol_exec_desc d = {.path = rm ? "/usr/bin/rm" : "/usr/bin/make",
					  .argv = (char *const *)accepted_cases[i].argv,
					  .envp = accepted_cases[i].env ? env : NULL,
					  .cwd = "/proj"};
		struct pol_request *r = pol_request_exec(&d, "/proj");
		struct pol_decision out;
		pol_decide(r, c, NULL, NULL, accepted_cases[i].now, &out);
		if (out.verdict != accepted_cases[i].want)
			fail_msg("case %zu (%s): want %s, got %s (%s)", i, accepted_cases[i].what,
				 pol_verdict_name(accepted_cases[i].want),
				 pol_verdict_name(out.verdict), out.reason);
		if (out.verdict == POL_ALLOW) {
			assert_int_equal(out.source, POL_SRC_ACCEPTED_RULE);
			assert_string_equal(out.matched, "accepted_rules[0]");
			assert_true(out.covers);
		}
		pol_request_free(r);
	}
	/* Another tool. */
	char *argv[] = {"make", "-j", "4", "test", NULL};
	struct pol_exec_desc d = {.path = "/usr/local/bin/make", .argv = argv, .cwd = "/proj"};
	struct pol_request *r = pol_request_exec(&d, "/proj");
	struct pol_decision out;
	pol_decide(r, c, NULL, NULL, T0 + DAY_US, &out);
	assert_int_equal(out.verdict, POL_UNDECIDED);
	pol_request_free(r);

	/* Hand-made arguments: the type is part of the value. */
	size_t k = 99;
	const int64_t now = T0 + DAY_US;
	assert_true(pol_accepted_covers_args(c, "refund", "{\"amount\":15,\"reason\":\"late\"}",
					     now, &k));
	assert_int_equal(k, 2);
	assert_false(pol_accepted_covers_args(
		c, "refund", "{\"amount\":\"15\",\"reason\":\"late\"}", now, NULL));
	assert_false(pol_accepted_covers_args(c, "refund", "{\"amount\":true,\"reason\":\"late\"}",
					      now, NULL));
	assert_false(pol_accepted_covers_args(c, "refund", "{\"amount\":90,\"reason\":\"late\"}",
					      now, NULL));
	assert_false(pol_accepted_covers_args(c, "refund", "{\"amount\":-5,\"reason\":\"late\"}",
					      now, NULL));
	assert_false(pol_accepted_covers_args(
		c, "refund", "{\"amount\":15,\"reason\":\"changed my mind\"}", now, NULL));
	assert_false(pol_accepted_covers_args(
		c, "refund", "{\"amount\":15,\"reason\":\"late\",\"x\":1}", now, NULL));
	/* A secret-named field is not a covered field: it neither counts nor
	 * matters. */
	assert_true(pol_accepted_covers_args(
		c, "refund", "{\"amount\":15,\"reason\":\"late\",\"api_key\":\"k\"}", now, NULL));
	assert_false(pol_accepted_covers_args(c, "refund", "{\"amount\":15}", now, NULL));
	assert_false(pol_accepted_covers_args(c, "refunds", "{\"amount\":15,\"reason\":\"late\"}",
					      now, NULL));
	assert_false(pol_accepted_covers_args(c, "refund", "{\"amount\":15,\"reason\":\"late\"}",
					      T0 + 30 * DAY_US, NULL));
	pol_config_free(c);
}

static void test_pol_decide_ask_rule_beats_accepted_rule(void **state)
{
	(void)state;
	char *text = wd_asprintf("{\"rules\": [{\"action\": \"ask\", \"command\": [\"make\"]}],%s",
				 strchr(accepted_cfg, '\n') + 1);
	struct pol_config *c = load(text);
	char *argv[] = {"make", "-j", "4", "test", NULL};
	struct pol_request *r = exec_req(argv, NULL);
	struct pol_decision out;
	pol_decide(r, c, NULL, NULL, T0 + DAY_US, &out);
	assert_int_equal(out.verdict, POL_ASK);
	pol_request_free(r);
	pol_config_free(c);
	free(text);
}

/* ---- the config -------------------------------------------------------------------- */

#define RULE_HEAD                                                                                  \
	"{\n\"accepted_rules\": [\n{\"tool\": \"exec:/usr/bin/make\", \"accepted_at\": "           \
	"\"2026-01-01T00:00:00Z\", \"accepted_by\": \"a\", \"review_days\": 9,\n\"conditions\": "  \
	"{\n"

static const struct {
	const char *text;
	int line;
	const char *key;
	const char *words;
} cfg_cases[] = {
	{RULE_HEAD "\"api_key\": \"x\"}}]}", 5, "accepted_rules[0].conditions.api_key",
	 "secret-named"},
	{RULE_HEAD "\"arg1\": \"x\",\n\"db_password\": {\"eq\": \"x\"}}}]}", 6,
	 "accepted_rules[0].conditions.db_password", "secret-named"},
	{RULE_HEAD "\"arg2\": {\"min\": 9,\n \"max\": 2}}}]}", 5,
	 "accepted_rules[0].conditions.arg2.min", "over max"},
	{RULE_HEAD "\"arg2\": {\"min\": \"1\", \"max\": 2}}}]}", 5,
	 "accepted_rules[0].conditions.arg2.min", "must be a number, not a string"},
	{RULE_HEAD "\"arg2\": {\"min\": 1,\n \"max\": true}}}]}", 6,
	 "accepted_rules[0].conditions.arg2.max", "must be a number, not a boolean"},
	{RULE_HEAD "\"arg2\": {\"min\": 1}}}]}", 5, "accepted_rules[0].conditions.arg2",
	 "\"max\" is missing"},
	{RULE_HEAD "\"arg1\": {\"eq\": \"x\", \"op\": \"<\"}}}]}", 5,
	 "accepted_rules[0].conditions.arg1.op", "unknown key"},
	{RULE_HEAD "\"arg1\": {\"eq\": \"x\", \"in\": [\"x\"]}}}]}", 5,
	 "accepted_rules[0].conditions.arg1", "exactly one"},
	{RULE_HEAD "\"arg1\": {\"in\": [1,2,3,4,5,6,7,8,9,10,11]}}}]}", 5,
	 "accepted_rules[0].conditions.arg1.in", "1 to 10"},
	{RULE_HEAD "\"arg1\": {\"in\": [\"a\", [\"b\"]]}}}]}", 5,
	 "accepted_rules[0].conditions.arg1.in[1]", "string or a number"},
	{RULE_HEAD "\"arg1\": {\"eq\": {\"x\": 1}}}}]}", 5, "accepted_rules[0].conditions.arg1.eq",
	 "string or a number"},
	{RULE_HEAD "\"arg1\": null}}]}", 5, "accepted_rules[0].conditions.arg1", "not null"},
	{RULE_HEAD "}}]}", 4, "accepted_rules[0].conditions", "is empty"},
	{"{\n\"accepted_rules\": [\n{\"tool\": \"x\", \"conditions\": {\"a\": 1}, \"accepted_at\": "
	 "\"2026-01-01T00:00:00Z\",\n\"accepted_by\": \"a\", \"review_days\": 9, \"evidence\": "
	 "{}}]}",
	 4, "accepted_rules[0].evidence", "unknown key"},
};

static void test_pol_config_accepted_rules_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cfg_cases) / sizeof(cfg_cases[0]); i++) {
		struct pol_config *c = (struct pol_config *)1;
		struct pol_config_errors e;
		const char *t = cfg_cases[i].text;
		assert_int_equal(pol_config_parse(t, strlen(t), "perm.json", &c, &e), -EINVAL);
		assert_null(c);
		char want[200];
		snprintf(want, sizeof(want), "perm.json:%d: %s: ", cfg_cases[i].line,
			 cfg_cases[i].key);
		bool found = false;
		for (size_t k = 0; k < e.count; k++)
			if (strncmp(e.items[k].message, want, strlen(want)) == 0 &&
			    strstr(e.items[k].message, cfg_cases[i].words))
				found = true;
		if (!found)
			fail_msg("case %zu: want %s...%s; got %zu errors, first: %s", i, want,
				 cfg_cases[i].words, e.count, e.count ? e.items[0].message : "-");
		pol_config_errors_free(&e);
	}
}

static void test_pol_config_text_accept_keeps_the_rest(void **state)
{
	(void)state;
	struct recs r = {0};
	make_history(&r);
	struct pol_proposals *ps = propose(&r, 5, 2, 0);
	const struct pol_proposal *p = pol_proposals_get(ps, 0);
	char *rule = pol_proposal_accept(p, "ann", T0 + 123456);
	assert_non_null(strstr(rule, "\"accepted_at\": \"2026-01-02T00:00:00Z\""));
	assert_non_null(strstr(rule, "\"arg2\": {\"min\": 2, \"max\": 8}"));
	const char *text = "{\n  \"tier\": \"standard\",\n  \"rules\": [{\"action\": \"ask\", "
			   "\"command\": [\"git\", \"push\"], \"comment\": \"always ask\"}]\n}\n";
	char *out = NULL;
	struct pol_config_errors e;
	assert_int_equal(pol_config_text_accept(text, strlen(text), "p.json", rule, &out, &e), 0);
	assert_non_null(strstr(out, "\"comment\": \"always ask\""));
	assert_non_null(strstr(out, "\"tier\": \"standard\""));
	assert_non_null(strstr(out, pol_proposal_id(p)));
	/* Accepting again replaces the entry with the same id. */
	char *out2 = NULL;
	assert_int_equal(pol_config_text_accept(out, strlen(out), "p.json", rule, &out2, &e), 0);
	assert_string_equal(out, out2);
	struct pol_config *c = load(out2);
	char *argv[] = {"make", "-j", "8", "build", NULL};
	struct pol_request *q = exec_req(argv, NULL);
	struct pol_decision d;
	pol_decide(q, c, NULL, NULL, T0 + DAY_US, &d);
	assert_int_equal(d.verdict, POL_ALLOW);
	assert_int_equal(d.source, POL_SRC_ACCEPTED_RULE);
	pol_request_free(q);
	pol_config_free(c);
	/* A broken file is left alone and reported. */
	const char *bad = "{\n\"tier\": 3\n}";
	char *none = NULL;
	assert_int_equal(pol_config_text_accept(bad, strlen(bad), "p.json", rule, &none, &e),
			 -EINVAL);
	assert_null(none);
	assert_true(e.count >= 1);
	pol_config_errors_free(&e);
	/* A new file. */
	assert_int_equal(pol_config_text_accept(NULL, 0, "p.json", rule, &none, &e), 0);
	assert_non_null(strstr(none, "\"accepted_rules\""));
	free(none);
	free(out);
	free(out2);
	free(rule);
	pol_proposals_free(ps);
	recs_free(&r);
}

/* ---- the store ----------------------------------------------------------------------- */

static int collect(const struct sto_row *row, void *arg)
{
	struct wd_sb *sb = arg;
	wd_sb_printf(sb, "%s/%s/%s;", row->decision, row->decided_by, row->note ? row->note : "-");
	return 0;
}

static void test_sto_people_decisions_only_people(void **state)
{
	(void)state;
	char dir[] = "/tmp/wd-test-memory-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = wd_asprintf("%s/audit.db", dir);
	struct sto_db *db = NULL;
	assert_int_equal(sto_open(path, &db, NULL), 0);
	static const struct {
		const char *kind, *decision, *source, *by, *note;
	} rows[] = {
		{"exec", "allow", "user", "ann", NULL},
		{"exec", "deny", "user", "bob", "not on main"},
		{"exec", "deny", "timeout", "warden", NULL},
		{"exec", "deny", "tier", "warden", NULL},
		{"exec", "allow", "judge", "judge", NULL},
		{"open", "allow", "user", "carl", NULL},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sto_row row = {.ts_us = T0 + (int64_t)i,
				      .session = "s",
				      .pid = 1,
				      .kind = rows[i].kind,
				      .request = "{}",
				      .summary = "x",
				      .decision = rows[i].decision,
				      .source = rows[i].source,
				      .decided_by = rows[i].by,
				      .note = rows[i].note};
		assert_int_equal(sto_append(db, &row, NULL), 0);
	}
	struct wd_sb sb = {0};
	assert_int_equal(sto_people_decisions(db, "exec", 0, collect, &sb, NULL), 0);
	assert_string_equal(sb.buf, "deny/bob/not on main;allow/ann/-;");
	wd_sb_free(&sb);
	assert_int_equal(sto_people_decisions(db, NULL, 0, collect, &sb, NULL), 0);
	assert_string_equal(sb.buf, "allow/carl/-;deny/bob/not on main;allow/ann/-;");
	wd_sb_free(&sb);
	assert_int_equal(sto_people_decisions(db, NULL, 1, collect, &sb, NULL), 0);
	assert_string_equal(sb.buf, "allow/carl/-;");
	wd_sb_free(&sb);
	sto_close(db);
	char *cmd = wd_asprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pol_mem_args_exec_and_open),
		cmocka_unit_test(test_pol_mem_similarity_hand_computed),
		cmocka_unit_test(test_pol_mem_context_counts_and_summary),
		cmocka_unit_test(test_pol_mem_context_no_secret_fields),
		cmocka_unit_test(test_pol_propose_conditions_and_evidence),
		cmocka_unit_test(test_pol_propose_thresholds),
		cmocka_unit_test(test_pol_propose_counter_evidence),
		cmocka_unit_test(test_pol_propose_no_rule_nested_or_many_texts),
		cmocka_unit_test(test_pol_decide_accepted_rule_edges),
		cmocka_unit_test(test_pol_decide_ask_rule_beats_accepted_rule),
		cmocka_unit_test(test_pol_config_accepted_rules_errors),
		cmocka_unit_test(test_pol_config_text_accept_keeps_the_rest),
		cmocka_unit_test(test_sto_people_decisions_only_people),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
