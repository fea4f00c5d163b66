/*
 * test_audit_net.c: connections in `warden audit`, with the real warden
 * binary over an audit written by the store itself: --kind connect lists
 * the connect rows (IP destinations and Unix sockets alike), --tool-calls
 * counts the connections under the call that made them, and the
 * harness's own connections to its API are not tool calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "store.h"
#include "wt.h"

#include <string.h>

#define SESSION "20261203-170000-9c1d"

static struct sto_db *open_db(const char *path)
{
	struct sto_db *db = NULL;
	char *err = NULL;
	int r = sto_open(path, &db, &err);
	if (r < 0)
		fail_msg("%s", err ? err : "sto_open");
	return db;
}

static const char *const connect_json =
	"{\"syscall\":\"connect\",\"destination\":\"github.com:443\",\"address\":"
	"\"140.82.112.3\",\"port\":443,\"protocol\":\"tcp\",\"names\":[\"github.com\"],"
	"\"command\":\"curl https://github.com/\"}";

/* A session of the agent: a tool call (curl) that connects twice, once
 * refused; the harness reaching its API three times; the agent's own
 * refused connection; a Unix socket refused at the boundary. */
static void fill(const char *path)
{
	struct sto_db *db = open_db(path);
	struct sto_session s = {
		.id = SESSION, .started_us = 1000, .tier = "standard", .role = "agent"};
	assert_int_equal(sto_session_begin(db, &s, NULL), 0);
	struct sto_row rows[] = {
		{.kind = "exec",
		 .summary = "curl https://github.com/",
		 .source = "judge",
		 .decision = "allow"},
		{.kind = "connect",
		 .summary = "connect github.com:443 (140.82.112.3)",
		 .source = "fast_path",
		 .decision = "allow",
		 .tool_call = 1},
		{.kind = "connect",
		 .summary = "connect 127.0.0.1:8080 (no name resolved)",
		 .source = "hard_deny",
		 .decision = "deny",
		 .tool_call = 1},
		{.kind = "connect",
		 .summary = "connect api.anthropic.com:443 (160.79.104.10)",
		 .source = "harness",
		 .decision = "allow"},
		{.kind = "connect",
		 .summary = "connect api.anthropic.com:443 (160.79.104.10)",
		 .source = "harness",
		 .decision = "allow"},
		{.kind = "exec", .summary = "ls", .source = "fast_path", .decision = "allow"},
		{.kind = "connect",
		 .summary = "connect api.anthropic.com:443 (160.79.104.10)",
		 .source = "harness",
		 .decision = "allow"},
		{.kind = "connect",
		 .summary = "connect evil.test:443 (10.66.0.1)",
		 .source = "tier",
		 .decision = "deny"},
		{.kind = "connect",
		 .summary = "connect /run/docker.sock",
		 .source = "boundary",
		 .decision = "deny",
		 .tool_call = 6},
	};
	for (size_t i = 0; i < WD_ARRAY_SIZE(rows); i++) {
		rows[i].ts_us = 2000 + (int64_t)i;
		rows[i].session = SESSION;
		rows[i].pid = 100;
		rows[i].ppid = 1;
		rows[i].request = strcmp(rows[i].kind, "connect") == 0 ? connect_json : "{}";
		rows[i].reason = "a reason";
		rows[i].decided_by = "warden";
		assert_int_equal(sto_append(db, &rows[i], NULL), 0);
		assert_int_equal(rows[i].id, (int64_t)i + 1);
	}
	sto_close(db);
}

static int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_audit_kind_connect(void **state)
{
	struct wt_fx *f = *state;
	fill(f->db);
	struct wt_result r = {0};
	wt_warden(f->proj, &r, "audit", "--kind", "connect", "--format", "json", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(count(r.out, "\"kind\":\"connect\""), 7);
	assert_int_equal(count(r.out, "\"kind\":\"exec\""), 0);
	assert_non_null(strstr(r.out, "connect 127.0.0.1:8080 (no name resolved)"));
	assert_non_null(strstr(r.out, "connect /run/docker.sock"));
	wt_result_free(&r);
	wt_warden(f->proj, &r, "audit", "--kind", "connect", "--decision", "deny", "--source",
		  "hard_deny", "--no-pager", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "connect 127.0.0.1:8080 (no name resolved)"));
	assert_null(strstr(r.out, "github.com"));
	assert_null(strstr(r.out, "evil.test"));
	wt_result_free(&r);
}

static void test_audit_tool_calls_show_connections(void **state)
{
	struct wt_fx *f = *state;
	fill(f->db);
	struct wt_result r = {0};
	wt_warden(f->proj, &r, "audit", "--tool-calls", "--format", "json", NULL);
	assert_int_equal(r.status, 0);
	fprintf(stderr, "%s", r.out);
	/* curl's call: both of its connections, one refused. */
	assert_non_null(strstr(r.out, "\"summary\":\"curl https://github.com/\",\"execs\":0,"
				      "\"opens\":0,\"connects\":2,\"refused\":1,\"under\":"
				      "\"connect github.com:443 (140.82.112.3); REFUSED connect "
				      "127.0.0.1:8080 (no name resolved)\""));
	assert_non_null(strstr(r.out, "\"summary\":\"ls\",\"execs\":0,\"opens\":0,"
				      "\"connects\":1,\"refused\":1"));
	/* The harness's own API connections are no tool call; the agent's
	 * own refused connection is a line of its own. */
	assert_null(strstr(r.out, "api.anthropic.com"));
	assert_int_equal(count(r.out, "\"id\":"), 3);
	assert_non_null(strstr(r.out, "\"summary\":\"connect evil.test:443 (10.66.0.1)\""));
	wt_result_free(&r);
	wt_warden(f->proj, &r, "audit", "--tool-calls", "--no-pager", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "under it: 0 execs, 0 opens, 2 connects, 1 refused: "));
	wt_result_free(&r);
	/* Only the calls with a refusal. */
	wt_warden(f->proj, &r, "audit", "--tool-calls", "--decision", "allow", "--format", "json",
		  NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(count(r.out, "\"id\":"), 0);
	wt_result_free(&r);
}

int main(void)
{
	unsetenv("PAGER");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_audit_kind_connect, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_audit_tool_calls_show_connections, wt_fx_setup,
						wt_fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
