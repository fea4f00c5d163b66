/*
 * test_judge_http.c: the judge's clients against a real HTTP server on
 * 127.0.0.1 (tests/helpers/judge_server.c) speaking both APIs: canned
 * verdicts through the outcome table, malformed and over-keyed verdicts,
 * HTTP errors, a reply slower than the timeout, a 10 MB body, a dropped
 * connection, the single retry, usage and cached-token counts, the request
 * bodies and headers as the server received them, and the client driven by
 * an epoll loop of the caller's (concurrency, cancel).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "common.h"
#include "judge.h"
#include "judge_server.h"

static struct js_server *srv;

#define KEY "sk-test-SECRET-KEY-123"

#define V_ALLOW_LOW                                                                                \
	"{\"decision\":\"allow\",\"risk_level\":\"low\",\"reason\":\"builds the project\"}"
#define V_ALLOW_CRIT "{\"decision\":\"allow\",\"risk_level\":\"critical\",\"reason\":\"risky\"}"
#define V_DENY_CRIT                                                                                \
	"{\"decision\":\"deny\",\"risk_level\":\"critical\",\"reason\":\"sends ~/.ssh away\"}"
#define V_DENY_HIGH "{\"decision\":\"deny\",\"risk_level\":\"high\",\"reason\":\"odd\"}"
#define V_ESCALATE  "{\"decision\":\"escalate\",\"risk_level\":\"medium\",\"reason\":\"unsure\"}"
#define V_EXTRA_KEY                                                                                \
	"{\"decision\":\"allow\",\"risk_level\":\"low\",\"reason\":\"x\",\"confidence\":1}"
#define V_MALFORMED "{\"decision\":\"allow\",\"risk_level\":\"low\",\"reason\":"

static int group_setup(void **state)
{
	(void)state;
	/* Loopback only, and never through a proxy from the environment. */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	srv = js_start();
	return srv ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	js_stop(srv);
	return 0;
}

static int reset(void **state)
{
	(void)state;
	js_reset(srv);
	return 0;
}

static struct jdg_config cfg_for(const char *path, char **url)
{
	*url = js_url(srv, path);
	return (struct jdg_config){
		.url = *url,
		.model = "test-model",
		.api_key = KEY,
		.connect_timeout_ms = 1000,
		.timeout_ms = 2000,
	};
}

static void decide(const char *path, struct jdg_config *override, struct jdg_result *out)
{
	char *url = NULL;
	struct jdg_config c = cfg_for(path, &url);
	if (override) {
		if (override->timeout_ms)
			c.timeout_ms = override->timeout_ms;
		if (override->retries)
			c.retries = override->retries;
		if (override->max_response_bytes)
			c.max_response_bytes = override->max_response_bytes;
	}
	assert_int_equal(
		jdg_decide_sync(&c, "<session_context>\nP\n</session_context>\n",
				"<tool_history>\n</tool_history>\n<tool_call>\n{}\n</tool_call>\n",
				out),
		0);
	free(url);
}

static void push_content(const char *content)
{
	js_push(srv, &(struct js_reply){.content = content,
					.prompt_tokens = 900,
					.completion_tokens = 25,
					.cached_tokens = 768});
}

/* ---- the outcome table over both APIs ------------------------------------- */

struct tcase {
	const char *verdict;
	enum jdg_outcome outcome;
	enum jdg_decision decision;
	enum jdg_risk risk;
};

static const struct tcase table[] = {
	{V_ALLOW_LOW, JDG_ALLOW, JDG_DECISION_ALLOW, JDG_RISK_LOW},
	{V_ALLOW_CRIT, JDG_ESCALATE, JDG_DECISION_ALLOW, JDG_RISK_CRITICAL},
	{V_DENY_CRIT, JDG_REJECT, JDG_DECISION_DENY, JDG_RISK_CRITICAL},
	{V_DENY_HIGH, JDG_ESCALATE, JDG_DECISION_DENY, JDG_RISK_HIGH},
	{V_ESCALATE, JDG_ESCALATE, JDG_DECISION_ESCALATE, JDG_RISK_MEDIUM},
};

static void run_table(const char *path)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(table); i++) {
		js_reset(srv);
		push_content(table[i].verdict);
		struct jdg_result r;
		decide(path, NULL, &r);
		assert_true(r.ok);
		assert_null(r.error);
		assert_int_equal(r.outcome, table[i].outcome);
		assert_int_equal(r.decision, table[i].decision);
		assert_int_equal(r.risk, table[i].risk);
		assert_int_equal(r.http_status, 200);
		assert_int_equal(r.attempts, 1);
		assert_string_equal(r.verdict, table[i].verdict);
		assert_true(r.latency_us > 0);
		assert_int_equal(js_count(srv), 1);
		jdg_result_clear(&r);
	}
}

static void test_openai_outcome_table(void **state)
{
	(void)state;
	run_table("/v1/chat/completions");
}

static void test_anthropic_outcome_table(void **state)
{
	(void)state;
	run_table("/v1/messages");
}

static void test_deny_critical_reason_passes_through(void **state)
{
	(void)state;
	push_content(V_DENY_CRIT);
	struct jdg_result r;
	decide("/v1/chat/completions", NULL, &r);
	assert_int_equal(r.outcome, JDG_REJECT);
	assert_string_equal(r.reason, "sends ~/.ssh away");
	jdg_result_clear(&r);
}

/* ---- what the server received ---------------------------------------------- */

static void test_openai_request_as_received(void **state)
{
	(void)state;
	push_content(V_ALLOW_LOW);
	struct jdg_result r;
	decide("/v1/chat/completions", NULL, &r);
	char *body = NULL, *path = NULL, *hdr = NULL;
	assert_int_equal(js_request(srv, 0, &body, &path, &hdr), 0);
	assert_string_equal(path, "/v1/chat/completions");
	assert_non_null(strstr(hdr, "POST /v1/chat/completions HTTP/1.1\r\n"));
	assert_non_null(strstr(hdr, "Authorization: Bearer " KEY "\r\n"));
	assert_non_null(strstr(hdr, "Content-Type: application/json\r\n"));
	assert_null(strstr(hdr, "x-api-key"));
	cJSON *j = cJSON_Parse(body);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "model")->valuestring, "test-model");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "cache_prompt")));
	cJSON *msgs = cJSON_GetObjectItem(j, "messages");
	assert_int_equal(cJSON_GetArraySize(msgs), 2);
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "content")->valuestring,
		jdg_system_prompt());
	const char *user = cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 1), "content")->valuestring;
	assert_true(wd_str_has_prefix(user,
				      "<session_context>\nP\n</session_context>\n<tool_history>"));
	assert_non_null(cJSON_GetObjectItem(j, "response_format"));
	/* The key is in the header only. */
	assert_null(strstr(body, KEY));
	/* Usage and cached tokens came back. */
	assert_int_equal(r.usage.prompt_tokens, 900);
	assert_int_equal(r.usage.completion_tokens, 25);
	assert_int_equal(r.usage.cached_tokens, 768);
	cJSON_Delete(j);
	free(body);
	free(path);
	free(hdr);
	jdg_result_clear(&r);
}

static void test_anthropic_request_as_received(void **state)
{
	(void)state;
	push_content(V_ALLOW_LOW);
	struct jdg_result r;
	decide("/v1/messages", NULL, &r);
	char *body = NULL, *hdr = NULL;
	assert_int_equal(js_request(srv, 0, &body, NULL, &hdr), 0);
	assert_non_null(strstr(hdr, "x-api-key: " KEY "\r\n"));
	assert_non_null(strstr(hdr, "anthropic-version: 2023-06-01\r\n"));
	assert_null(strstr(hdr, "Authorization:"));
	cJSON *j = cJSON_Parse(body);
	assert_non_null(j);
	assert_int_equal(cJSON_GetObjectItem(j, "max_tokens")->valueint, 300);
	cJSON *sys = cJSON_GetObjectItem(j, "system");
	assert_int_equal(cJSON_GetArraySize(sys), 2);
	cJSON *b1 = cJSON_GetArrayItem(sys, 1);
	assert_string_equal(cJSON_GetObjectItem(b1, "text")->valuestring,
			    "<session_context>\nP\n</session_context>\n");
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(b1, "cache_control"), "type")->valuestring,
		"ephemeral");
	const char *user =
		cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "messages"), 0),
				    "content")
			->valuestring;
	assert_true(wd_str_has_prefix(user, "<tool_history>"));
	/* Anthropic's cache read, and input counted with it. */
	assert_int_equal(r.usage.cached_tokens, 768);
	assert_int_equal(r.usage.prompt_tokens, 900 + 768);
	assert_int_equal(r.usage.completion_tokens, 25);
	cJSON_Delete(j);
	free(body);
	free(hdr);
	jdg_result_clear(&r);
}

static void test_no_key_no_auth_header(void **state)
{
	(void)state;
	push_content(V_ALLOW_LOW);
	char *url = js_url(srv, "/v1/chat/completions");
	struct jdg_config c = {.url = url, .model = "m"};
	struct jdg_result r;
	assert_int_equal(jdg_decide_sync(&c, "", "x", &r), 0);
	assert_int_equal(r.outcome, JDG_ALLOW);
	char *hdr = NULL;
	js_request(srv, 0, NULL, NULL, &hdr);
	assert_null(strstr(hdr, "Authorization"));
	free(hdr);
	free(url);
	jdg_result_clear(&r);
}

/* ---- failures escalate, after one retry ------------------------------------ */

static void expect_failure(const char *path, struct jdg_config *o, size_t requests,
			   const char *error_has)
{
	struct jdg_result r;
	decide(path, o, &r);
	assert_false(r.ok);
	assert_int_equal(r.outcome, JDG_ESCALATE);
	assert_non_null(r.error);
	if (!strstr(r.error, error_has))
		fail_msg("error \"%s\" lacks \"%s\"", r.error, error_has);
	assert_non_null(strstr(r.reason, "the judge could not decide"));
	assert_int_equal(r.attempts, (int)requests);
	assert_int_equal(js_count(srv), requests);
	/* Nothing of the key in what goes to the audit. */
	char *j = jdg_result_json(&r, "test-model");
	assert_null(strstr(j, KEY));
	free(j);
	jdg_result_clear(&r);
}

static void test_malformed_json_retried_then_escalates(void **state)
{
	(void)state;
	push_content(V_MALFORMED);
	push_content(V_MALFORMED);
	expect_failure("/v1/chat/completions", NULL, 2, "unusable verdict");
}

static void test_extra_key_retried_then_escalates(void **state)
{
	(void)state;
	push_content(V_EXTRA_KEY);
	push_content(V_EXTRA_KEY);
	expect_failure("/v1/messages", NULL, 2, "unknown key \"confidence\"");
}

static void test_unparseable_envelope_escalates(void **state)
{
	(void)state;
	js_push(srv, &(struct js_reply){.raw = "<html>proxy error</html>"});
	js_push(srv, &(struct js_reply){.raw = "{\"choices\":[]}"});
	expect_failure("/v1/chat/completions", NULL, 2, "unusable response");
}

static void test_http_500_retried_once_then_escalates(void **state)
{
	(void)state;
	js_push(srv, &(struct js_reply){.status = 500, .raw = "{\"error\":\"boom\"}"});
	js_push(srv, &(struct js_reply){.status = 500, .raw = "{\"error\":\"boom\"}"});
	js_push(srv, &(struct js_reply){.content = V_ALLOW_LOW}); /* never reached */
	expect_failure("/v1/chat/completions", NULL, 2, "HTTP 500");
}

static void test_http_500_then_allow_uses_the_retry(void **state)
{
	(void)state;
	js_push(srv, &(struct js_reply){.status = 500, .raw = "{}"});
	push_content(V_ALLOW_LOW);
	struct jdg_result r;
	decide("/v1/chat/completions", NULL, &r);
	assert_true(r.ok);
	assert_int_equal(r.outcome, JDG_ALLOW);
	assert_int_equal(r.attempts, 2);
	assert_int_equal(js_count(srv), 2);
	jdg_result_clear(&r);
}

static void test_http_401_not_retried(void **state)
{
	(void)state;
	js_push(srv, &(struct js_reply){.status = 401, .raw = "{\"error\":\"bad key\"}"});
	expect_failure("/v1/messages", NULL, 1, "HTTP 401");
}

static void test_no_retry_when_disabled(void **state)
{
	(void)state;
	js_push(srv, &(struct js_reply){.status = 503, .raw = "{}"});
	expect_failure("/v1/chat/completions", &(struct jdg_config){.retries = -1}, 1, "HTTP 503");
}

static void test_slow_reply_times_out(void **state)
{
	(void)state;
	js_push(srv, &(struct js_reply){.mode = JS_SLOW, .delay_ms = 5000, .content = V_ALLOW_LOW});
	js_push(srv, &(struct js_reply){.mode = JS_SLOW, .delay_ms = 5000, .content = V_ALLOW_LOW});
	int64_t t0 = wd_now_mono_ns();
	expect_failure("/v1/chat/completions", &(struct jdg_config){.timeout_ms = 300}, 2,
		       "no answer within 300 ms");
	int64_t ms = (wd_now_mono_ns() - t0) / 1000000;
	assert_true(ms >= 550 && ms < 3000);
}

static void test_10mb_body_cut_off(void **state)
{
	(void)state;
	js_push(srv, &(struct js_reply){.mode = JS_HUGE});
	js_push(srv, &(struct js_reply){.mode = JS_HUGE});
	expect_failure("/v1/chat/completions", NULL, 2, "larger than 1048576 bytes");
	js_reset(srv);
	/* Announced by Content-Length: refused before reading it. */
	js_push(srv, &(struct js_reply){.mode = JS_HUGE_LEN});
	js_push(srv, &(struct js_reply){.mode = JS_HUGE_LEN});
	expect_failure("/v1/messages", NULL, 2, "larger than 1048576 bytes");
}

static void test_dropped_connection_escalates(void **state)
{
	(void)state;
	js_push(srv, &(struct js_reply){.mode = JS_DROP});
	js_push(srv, &(struct js_reply){.mode = JS_DROP});
	struct jdg_result r;
	decide("/v1/chat/completions", NULL, &r);
	assert_false(r.ok);
	assert_int_equal(r.outcome, JDG_ESCALATE);
	assert_int_equal(r.attempts, 2);
	assert_int_equal(js_count(srv), 2);
	jdg_result_clear(&r);
}

static void test_connection_refused_escalates(void **state)
{
	(void)state;
	/* A port nobody listens on: bind one and close it. */
	struct js_server *gone = js_start();
	char *url = js_url(gone, "/v1/chat/completions");
	js_stop(gone);
	struct jdg_config c = {.url = url, .model = "m", .timeout_ms = 1000};
	struct jdg_result r;
	assert_int_equal(jdg_decide_sync(&c, "", "x", &r), 0);
	assert_false(r.ok);
	assert_int_equal(r.outcome, JDG_ESCALATE);
	assert_int_equal(r.attempts, 2);
	free(url);
	jdg_result_clear(&r);
}

static void test_client_new_rejects_missing_fields(void **state)
{
	(void)state;
	struct jdg_config c = {.url = "http://127.0.0.1:1/v1/messages"};
	struct jdg_client *cl = NULL;
	assert_int_equal(jdg_client_new(&c, &cl), -EINVAL);
	assert_null(cl);
	c.model = "m";
	assert_int_equal(jdg_client_new(&c, &cl), 0);
	assert_non_null(cl);
	assert_int_equal(jdg_client_api(cl), JDG_API_ANTHROPIC);
	/* No hooks: cannot submit. */
	assert_int_equal(jdg_submit(cl, "", "", NULL, NULL, NULL), -EINVAL);
	jdg_client_free(cl);
}

/* ---- driven by the caller's own epoll loop ---------------------------------- */

struct loop {
	int epfd;
	int64_t deadline_ns;
	int nfds;
	struct jdg_client *c;
	int done;
	uint64_t order[4];
	struct jdg_result res[4];
};

static void loop_watch(void *arg, int fd, uint32_t events)
{
	struct loop *l = arg;
	struct epoll_event ev = {.events = events, .data.fd = fd};
	if (!events) {
		if (epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL) == 0)
			l->nfds--;
	} else if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0) {
		assert_int_equal(epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev), 0);
		l->nfds++;
	}
}

static void loop_timer(void *arg, long ms)
{
	struct loop *l = arg;
	l->deadline_ns = ms < 0 ? -1 : wd_now_mono_ns() + ms * 1000000;
}

static void loop_done(void *arg, const struct jdg_result *r)
{
	struct loop *l = arg;
	l->order[l->done] = r->req_id;
	jdg_result_dup(r, &l->res[l->done]);
	l->done++;
}

/* One turn of the caller's loop: at most |max_ms|. */
static void loop_turn(struct loop *l, int max_ms)
{
	int wait = max_ms;
	if (l->deadline_ns >= 0) {
		int64_t left = (l->deadline_ns - wd_now_mono_ns() + 999999) / 1000000;
		if (left < wait)
			wait = left < 0 ? 0 : (int)left;
	}
	struct epoll_event evs[8];
	int n = epoll_wait(l->epfd, evs, 8, wait);
	for (int i = 0; i < n; i++)
		jdg_on_fd(l->c, evs[i].data.fd, evs[i].events);
	if (l->deadline_ns >= 0 && wd_now_mono_ns() >= l->deadline_ns) {
		l->deadline_ns = -1;
		jdg_on_timer(l->c);
	}
}

static struct jdg_client *loop_client(struct loop *l, char **url)
{
	*l = (struct loop){.epfd = epoll_create1(EPOLL_CLOEXEC), .deadline_ns = -1};
	*url = js_url(srv, "/v1/chat/completions");
	struct jdg_config c = {
		.url = *url,
		.model = "m",
		.timeout_ms = 5000,
		.watch_fd = loop_watch,
		.set_timer = loop_timer,
		.hook_arg = l,
	};
	assert_int_equal(jdg_client_new(&c, &l->c), 0);
	assert_non_null(l->c);
	return l->c;
}

static void loop_free(struct loop *l)
{
	jdg_client_free(l->c);
	assert_int_equal(l->nfds, 0); /* every fd was handed back */
	assert_int_equal(l->deadline_ns, -1);
	close(l->epfd);
	for (int i = 0; i < l->done; i++)
		jdg_result_clear(&l->res[i]);
}

static void test_loop_slow_model_does_not_block_others(void **state)
{
	(void)state;
	struct loop l;
	char *url;
	loop_client(&l, &url);
	/* The server pops replies in arrival order; the first request is
	 * submitted and connected before the second. */
	js_push(srv, &(struct js_reply){.mode = JS_SLOW, .delay_ms = 1500, .content = V_DENY_CRIT});
	uint64_t slow, fast;
	assert_int_equal(jdg_submit(l.c, "p", "slow", loop_done, &l, &slow), 0);
	while (js_count(srv) < 1)
		loop_turn(&l, 50);
	push_content(V_ALLOW_LOW);
	assert_int_equal(jdg_submit(l.c, "p", "fast", loop_done, &l, &fast), 0);
	assert_int_equal(jdg_pending(l.c), 2);
	int64_t t0 = wd_now_mono_ns();
	while (l.done < 1)
		loop_turn(&l, 100);
	/* The fast one finished first, well before the slow one could. */
	assert_true((wd_now_mono_ns() - t0) / 1000000 < 1000);
	assert_int_equal(l.order[0], fast);
	assert_int_equal(l.res[0].outcome, JDG_ALLOW);
	assert_int_equal(jdg_pending(l.c), 1);
	while (l.done < 2)
		loop_turn(&l, 100);
	assert_int_equal(l.order[1], slow);
	assert_int_equal(l.res[1].outcome, JDG_REJECT);
	assert_int_equal(jdg_pending(l.c), 0);
	loop_free(&l);
	free(url);
}

static void test_loop_cancel_never_calls_back(void **state)
{
	(void)state;
	struct loop l;
	char *url;
	loop_client(&l, &url);
	js_push(srv, &(struct js_reply){.mode = JS_SLOW, .delay_ms = 400, .content = V_ALLOW_LOW});
	uint64_t id;
	assert_int_equal(jdg_submit(l.c, "p", "m", loop_done, &l, &id), 0);
	while (js_count(srv) < 1)
		loop_turn(&l, 50);
	assert_int_equal(jdg_cancel(l.c, id), 0);
	assert_int_equal(jdg_cancel(l.c, id), -ENOENT);
	assert_int_equal(jdg_pending(l.c), 0);
	int64_t t0 = wd_now_mono_ns();
	while ((wd_now_mono_ns() - t0) / 1000000 < 800)
		loop_turn(&l, 100);
	assert_int_equal(l.done, 0);
	loop_free(&l);
	free(url);
}

static void test_loop_free_with_requests_in_flight(void **state)
{
	(void)state;
	struct loop l;
	char *url;
	loop_client(&l, &url);
	js_push(srv, &(struct js_reply){.mode = JS_SLOW, .delay_ms = 2000, .content = V_ALLOW_LOW});
	assert_int_equal(jdg_submit(l.c, "p", "m", loop_done, &l, NULL), 0);
	while (js_count(srv) < 1)
		loop_turn(&l, 50);
	loop_free(&l); /* checks every fd and the timer were released */
	assert_int_equal(l.done, 0);
	free(url);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_openai_outcome_table, reset),
		cmocka_unit_test_setup(test_anthropic_outcome_table, reset),
		cmocka_unit_test_setup(test_deny_critical_reason_passes_through, reset),
		cmocka_unit_test_setup(test_openai_request_as_received, reset),
		cmocka_unit_test_setup(test_anthropic_request_as_received, reset),
		cmocka_unit_test_setup(test_no_key_no_auth_header, reset),
		cmocka_unit_test_setup(test_malformed_json_retried_then_escalates, reset),
		cmocka_unit_test_setup(test_extra_key_retried_then_escalates, reset),
		cmocka_unit_test_setup(test_unparseable_envelope_escalates, reset),
		cmocka_unit_test_setup(test_http_500_retried_once_then_escalates, reset),
		cmocka_unit_test_setup(test_http_500_then_allow_uses_the_retry, reset),
		cmocka_unit_test_setup(test_http_401_not_retried, reset),
		cmocka_unit_test_setup(test_no_retry_when_disabled, reset),
		cmocka_unit_test_setup(test_slow_reply_times_out, reset),
		cmocka_unit_test_setup(test_10mb_body_cut_off, reset),
		cmocka_unit_test_setup(test_dropped_connection_escalates, reset),
		cmocka_unit_test_setup(test_connection_refused_escalates, reset),
		cmocka_unit_test_setup(test_client_new_rejects_missing_fields, reset),
		cmocka_unit_test_setup(test_loop_slow_model_does_not_block_others, reset),
		cmocka_unit_test_setup(test_loop_cancel_never_calls_back, reset),
		cmocka_unit_test_setup(test_loop_free_with_requests_in_flight, reset),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
