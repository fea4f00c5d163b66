/*
 * test_policy_boundary: the config's "sockets" and "env" keys and the
 * predicates of policy/boundary.c (secret-looking variable names, which
 * the agent keeps, which outside sockets it may reach).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "policy.h"

#include <stdlib.h>
#include <string.h>

static struct pol_config *parse_ok(const char *text)
{
	struct pol_config *c = NULL;
	struct pol_config_errors e;
	int rc = pol_config_parse(text, strlen(text), "p.json", &c, &e);
	for (size_t i = 0; i < e.count; i++)
		print_message("%s\n", e.items[i].message);
	assert_int_equal(rc, 0);
	pol_config_errors_free(&e);
	return c;
}

/* |text| is refused with an error at |line| whose message holds |sub|. */
static void parse_bad(const char *text, int line, const char *sub)
{
	struct pol_config *c = NULL;
	struct pol_config_errors e;
	assert_int_not_equal(pol_config_parse(text, strlen(text), "p.json", &c, &e), 0);
	assert_null(c);
	bool found = false;
	for (size_t i = 0; i < e.count; i++) {
		print_message("%s\n", e.items[i].message);
		if (e.items[i].line == line && strstr(e.items[i].message, sub))
			found = true;
	}
	assert_true(found);
	pol_config_errors_free(&e);
}

static void test_pol_sockets_allow_parse_and_match(void **state)
{
	(void)state;
	struct pol_config *c = parse_ok("{\n"
					"  \"sockets\": {\"allow\": [\"/run/app.sock\",\n"
					"    \"/srv/sock\", \"/tmp/ssh-*/agent.*\"]}\n"
					"}\n");
	assert_int_equal(pol_config_socket_allow_count(c), 3);
	assert_string_equal(pol_config_socket_allow(c, 0), "/run/app.sock");
	assert_null(pol_config_socket_allow(c, 3));
	static const struct {
		const char *path, *entry;
	} cases[] = {
		{"/run/app.sock", "/run/app.sock"},
		{"/run/app.sock2", NULL},
		{"/run/other.sock", NULL},
		{"/srv/sock/a/b.sock", "/srv/sock"}, /* a directory covers what is under it */
		{"/srv/socket", NULL},
		{"/tmp/ssh-Ab12/agent.77", "/tmp/ssh-*/agent.*"},
		{"/tmp/ssh-Ab12/x/agent.77", NULL}, /* "*" stays in one directory */
		{"/tmp/tmux-0/default", NULL},
		{"relative/app.sock", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = pol_socket_allowed(c, cases[i].path);
		if (cases[i].entry)
			assert_string_equal(got, cases[i].entry);
		else
			assert_null(got);
	}
	/* It round-trips through the JSON the config commands print. */
	char *j = pol_config_to_json(c);
	assert_non_null(strstr(j, "\"sockets\""));
	assert_non_null(strstr(j, "\"/tmp/ssh-*/agent.*\""));
	struct pol_config *c2 = parse_ok(j);
	assert_int_equal(pol_config_socket_allow_count(c2), 3);
	free(j);
	pol_config_free(c2);
	pol_config_free(c);
	/* No config, no allowance. */
	assert_null(pol_socket_allowed(NULL, "/run/app.sock"));
}

static void test_pol_sockets_allow_errors(void **state)
{
	(void)state;
	parse_bad("{\n\"sockets\": {\"allow\": [\"run/app.sock\"]}\n}\n", 2,
		  "must be an absolute path");
	parse_bad("{\n\"sockets\": {\"allow\": [\"/run/../etc/x\"]}\n}\n", 2,
		  "must be an absolute path");
	parse_bad("{\n\"sockets\": {\"allow\": \"/run/app.sock\"}\n}\n", 2,
		  "must be an array of strings");
	parse_bad("{\n\"sockets\": {\"allow\": [1]}\n}\n", 2, "must be a string");
	parse_bad("{\n\"sockets\": {\"deny\": []}\n}\n", 2, "unknown key \"deny\"");
	parse_bad("{\n\"sockets\": [\"/run/app.sock\"]\n}\n", 2, "must be an object");
	parse_bad("{\n\"sockets\": {\"allow\": [\"/run/[x\"]}\n}\n", 2, "bad glob");
}

static void test_pol_env_keep_parse(void **state)
{
	(void)state;
	struct pol_config *c = parse_ok("{\"env\": {\"keep\": [\"MY_TOKEN\", \"HF_TOKEN\"]}}");
	assert_int_equal(pol_config_env_keep_count(c), 2);
	assert_string_equal(pol_config_env_keep(c, 1), "HF_TOKEN");
	assert_true(pol_env_keeps(c, POL_HARNESS_NONE, "MY_TOKEN", 8));
	assert_false(pol_env_keeps(c, POL_HARNESS_NONE, "MY_TOKENS", 9));
	assert_false(pol_env_keeps(c, POL_HARNESS_NONE, "GITHUB_TOKEN", 12));
	char *j = pol_config_to_json(c);
	assert_non_null(strstr(j, "\"keep\""));
	free(j);
	pol_config_free(c);
	parse_bad("{\n\"env\": {\"keep\": [\"MY TOKEN\"]}\n}\n", 2, "is not a variable name");
	parse_bad("{\n\"env\": {\"keep\": [\"1ABC\"]}\n}\n", 2, "is not a variable name");
	parse_bad("{\n\"env\": {\"drop\": []}\n}\n", 2, "unknown key \"drop\"");
	parse_bad("{\n\"env\": {\"keep\": \"A\"}\n}\n", 2, "must be an array of strings");
}

static void test_pol_env_name_is_secret_table(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		bool secret;
	} cases[] = {
		{"AWS_SECRET_ACCESS_KEY", true},
		{"AWS_SESSION_TOKEN", true},
		{"AWS_ACCESS_KEY_ID", false},
		{"GITHUB_TOKEN", true},
		{"GH_TOKEN", true},
		{"NPM_TOKEN", true},
		{"SSH_AUTH_SOCK", true},
		{"OPENAI_API_KEY", true},
		{"ANTHROPIC_AUTH_TOKEN", true},
		{"AZURE_CLIENT_SECRET", true},
		{"SECRET_KEY_BASE", true},
		{"DB_PASSWORD", true},
		{"PGPASSWD", false},
		{"MYSQL_PASSWD", true},
		{"github_token", true},
		{"PATH", false},
		{"HOME", false},
		{"TOKENIZERS_PARALLELISM", false},
		{"SSH_AGENT_PID", false},
		{"TERM", false},
		{"LANG", false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = pol_env_name_is_secret(cases[i].name, strlen(cases[i].name));
		if (got != cases[i].secret)
			fail_msg("%s: secret %d, expected %d", cases[i].name, got, cases[i].secret);
	}
}

static void test_pol_env_profile_keys(void **state)
{
	(void)state;
	assert_true(pol_env_keeps(NULL, POL_HARNESS_CLAUDE_CODE, "ANTHROPIC_API_KEY", 17));
	assert_true(pol_env_keeps(NULL, POL_HARNESS_CLAUDE_CODE, "CLAUDE_CODE_OAUTH_TOKEN", 23));
	assert_false(pol_env_keeps(NULL, POL_HARNESS_CLAUDE_CODE, "OPENAI_API_KEY", 14));
	assert_true(pol_env_keeps(NULL, POL_HARNESS_CODEX, "OPENAI_API_KEY", 14));
	assert_false(pol_env_keeps(NULL, POL_HARNESS_CODEX, "ANTHROPIC_API_KEY", 17));
	assert_true(pol_env_keeps(NULL, POL_HARNESS_AIDER, "ANTHROPIC_API_KEY", 17));
	assert_true(pol_env_keeps(NULL, POL_HARNESS_AIDER, "OPENAI_API_KEY", 14));
	assert_false(pol_env_keeps(NULL, POL_HARNESS_AIDER, "GITHUB_TOKEN", 12));
	assert_false(pol_env_keeps(NULL, POL_HARNESS_NONE, "ANTHROPIC_API_KEY", 17));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pol_sockets_allow_parse_and_match),
		cmocka_unit_test(test_pol_sockets_allow_errors),
		cmocka_unit_test(test_pol_env_keep_parse),
		cmocka_unit_test(test_pol_env_name_is_secret_table),
		cmocka_unit_test(test_pol_env_profile_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
