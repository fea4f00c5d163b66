/*
 * test_policy_config.c: the permissions.json parser. Every error class has
 * a row that checks the line, the key path and that the message names
 * both (FILE:LINE: KEY: ...).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

void test_pol_config_parse_valid(void **state);
void test_pol_config_parse_errors(void **state);
void test_pol_config_parse_all_errors(void **state);
void test_pol_config_parse_malformed(void **state);
void test_pol_config_parse_duplicate(void **state);
void test_pol_config_to_json_roundtrip(void **state);
void test_pol_config_add_grant_roundtrip(void **state);
void test_pol_config_outside_merge(void **state);
void test_pol_config_outside_modes_homes(void **state);
void test_pol_config_tmp_share(void **state);

static const char valid[] =
	"{\n"
	"  \"tier\": \"standard\",\n"
	"  \"rules\": [\n"
	"    {\"action\": \"deny\", \"command\": [\"git\", \"push\"], \"comment\": \"no "
	"pushes\"},\n"
	"    {\"action\": \"allow\", \"path\": \"docs/**\", \"access\": \"write\"},\n"
	"    {\"action\": \"ask\", \"command\": [\"npm\", \"publish\"]}\n"
	"  ],\n"
	"  \"grants\": [\n"
	"    {\"command\": [\"make\", \"-j2\"], \"program\": \"/usr/bin/make\", \"by\": \"ann\", "
	"\"at\": \"2026-01-02T03:04:05.250Z\"},\n"
	"    {\"path\": \".env.test\", \"access\": \"read\", \"by\": \"bob\", \"at\": "
	"\"2026-01-02T03:04:05Z\"}\n"
	"  ],\n"
	"  \"sensitive_resources\": [\" billing \", \"\"],\n"
	"  \"write_protected\": [\"migrations/**\"],\n"
	"  \"writable\": [\"/work/proj\", \"/tmp\"],\n"
	"  \"outside\": [{\"path\": \"~/.config/acme\", \"mode\": \"gate\"}],\n"
	"  \"accepted_rules\": [{\"tool\": \"exec\", \"conditions\": {\"argv0\": \"make\"}, "
	"\"accepted_at\": \"2026-01-02T00:00:00Z\", \"accepted_by\": \"ann\", \"review_days\": "
	"90}],\n"
	"  \"judge\": {\"url\": \"https://api.example.com/v1/chat/completions\", \"model\": \"m\", "
	"\"timeout_ms\": 8000, \"connect_timeout_ms\": 2000}\n"
	"}\n";

void test_pol_config_parse_valid(void **state)
{
	(void)state;
	struct pol_config *c = NULL;
	struct pol_config_errors e;
	int rc = pol_config_parse(valid, strlen(valid), "permissions.json", &c, &e);
	if (rc)
		fail_msg("%s", e.items[0].message);
	assert_int_equal(e.count, 0);
	assert_int_equal(pol_config_tier(c), POL_TIER_STANDARD);
	assert_int_equal(pol_config_writable_count(c), 2);
	assert_string_equal(pol_config_writable(c, 1), "/tmp");
	assert_null(pol_config_writable(c, 2));
	struct pol_judge_settings j;
	assert_true(pol_config_judge(c, &j));
	assert_string_equal(j.model, "m");
	assert_int_equal(j.timeout_ms, 8000);
	assert_int_equal(j.connect_timeout_ms, 2000);
	pol_config_free(c);

	struct pol_config *d = pol_config_default();
	assert_int_equal(pol_config_tier(d), POL_TIER_UNSET);
	assert_false(pol_config_judge(d, &j));
	assert_true(pol_config_outside_count(d) >= 8);
	pol_config_free(d);
}

struct err_case {
	const char *text;
	int line;
	const char *key;
	const char *words; /* a part of the message */
};

/* One row per error class. */
static const struct err_case err_cases[] = {
	{"{\n\"rulez\": []\n}", 2, "rulez", "unknown key"},
	{"{\n\"rules\": {}\n}", 2, "rules", "array"},
	{"{\"rules\": [\n  {\"action\": \"allow\"},\n  {\"action\": \"alow\", \"command\": "
	 "[\"x\"]}\n]}",
	 3, "rules[1].action", "allow"},
	{"{\"rules\": [\n{\"command\": [\"x\"]}\n]}", 2, "rules[0]", "\"action\" is missing"},
	{"{\"rules\": [\n{\"action\": \"deny\",\n \"command\": []}\n]}", 3, "rules[0].command",
	 "non-empty array"},
	{"{\"rules\": [\n{\"action\": \"deny\",\n \"command\": [\"git\", \"\"]}\n]}", 3,
	 "rules[0].command[1]", "non-empty string"},
	{"{\"rules\": [\n{\"action\": \"deny\",\n \"command\": [\"git\", 3]}\n]}", 3,
	 "rules[0].command[1]", "non-empty string"},
	{"{\"rules\": [\n{\"action\": \"deny\",\n \"path\": \"\"}\n]}", 3, "rules[0].path",
	 "empty"},
	{"{\"rules\": [\n{\"action\": \"deny\",\n \"path\": \"src/[abc\"}\n]}", 3, "rules[0].path",
	 "bad glob"},
	{"{\"rules\": [\n{\"action\": \"deny\",\n \"path\": \"x\", \"access\": \"exec\"}\n]}", 3,
	 "rules[0].access", "not an access"},
	{"{\"rules\": [\n{\"action\": \"deny\",\n \"path\": \"x\", \"command\": [\"x\"]}\n]}", 2,
	 "rules[0]", "not both"},
	{"{\"rules\": [\n{\"action\": \"deny\",\n \"colour\": \"red\"}\n]}", 3, "rules[0].colour",
	 "unknown key"},
	{"{\"rules\": [\n 5\n]}", 2, "rules[0]", "must be an object"},
	{"{\"grants\": [\n{\"command\": [\"make\"],\n \"at\": \"2026-01-01T00:00:00Z\"}\n]}", 2,
	 "grants[0]", "\"by\" is missing"},
	{"{\"grants\": [\n{\"command\": [\"make\"], \"by\": \"a\",\n \"at\": \"yesterday\"}\n]}", 3,
	 "grants[0].at", "not a time"},
	{"{\"grants\": [\n{\"command\": [\"make\"], \"by\": \"a\", \"at\": "
	 "\"2026-01-01T00:00:00Z\",\n"
	 " \"program\": \"make\"}\n]}",
	 3, "grants[0].program", "absolute"},
	{"{\"grants\": [\n{\"path\": \".env\", \"by\": \"a\", \"at\": \"2026-01-01T00:00:00Z\",\n"
	 " \"access\": [\"read\", \"fly\"]}\n]}",
	 3, "grants[0].access[1]", "not an access"},
	{"{\n\"sensitive_resources\": [\"a\",\n 7]\n}", 3, "sensitive_resources[1]", "string"},
	{"{\n\"sensitive_resources\": \"token\"\n}", 2, "sensitive_resources", "array"},
	{"{\n\"write_protected\": [\n\"  \"]\n}", 3, "write_protected[0]", "empty"},
	{"{\n\"write_protected\": [\n\"a/[b\"]\n}", 3, "write_protected[0]", "bad glob"},
	{"{\n\"writable\": [\n\"build\"]\n}", 3, "writable[0]", "absolute"},
	{"{\n\"writable\": [\n\"/\"]\n}", 3, "writable[0]", "everywhere"},
	{"{\n\"writable\": [\n\"/a/../b\"]\n}", 3, "writable[0]", "absolute"},
	{"{\n\"outside\": [\n{\"path\": \"~/.x\",\n \"mode\": \"show\"}]\n}", 4, "outside[0].mode",
	 "hide"},
	{"{\n\"outside\": [\n{\"path\": \"rel\", \"mode\": \"hide\"}]\n}", 3, "outside[0].path",
	 "absolute"},
	{"{\n\"accepted_rules\": {}\n}", 2, "accepted_rules", "array"},
	{"{\n\"accepted_rules\": [\n{\"tool\": \"exec\", \"conditions\": {}, \"accepted_at\": "
	 "\"2026-01-01T00:00:00Z\", \"accepted_by\": \"a\"}]\n}",
	 3, "accepted_rules[0]", "review_days"},
	{"{\n\"accepted_rules\": [\n{\"tool\": \"exec\", \"conditions\": {}, \"accepted_at\": "
	 "\"2026-01-01T00:00:00Z\", \"accepted_by\": \"a\",\n \"review_days\": 0}]\n}",
	 4, "accepted_rules[0].review_days", "out of bounds"},
	{"{\n\"accepted_rules\": [\n{\"tool\": \"exec\", \"conditions\": 3, \"accepted_at\": "
	 "\"2026-01-01T00:00:00Z\", \"accepted_by\": \"a\", \"review_days\": 9}]\n}",
	 3, "accepted_rules[0].conditions", "object of conditions"},
	{"{\n\"accepted_rules\": [\n{\"tool\": \"exec\", \"conditions\": {}, \"accepted_at\": "
	 "\"2026-01-01T00:00:00Z\", \"accepted_by\": \"a\", \"review_days\": 9,\n \"extra\": "
	 "1}]\n}",
	 4, "accepted_rules[0].extra", "unknown key"},
	{"{\n\"tier\": \"lenient\"\n}", 2, "tier", "aggressive"},
	{"{\n\"tier\": 3\n}", 2, "tier", "passive"},
	{"{\n\"judge\": {\n\"url\": \"ftp://x\"}\n}", 3, "judge.url", "http"},
	{"{\n\"judge\": {\n\"timeout_ms\": -5}\n}", 3, "judge.timeout_ms", "out of bounds"},
	{"{\n\"judge\": {\n\"connect_timeout_ms\": 1.5}\n}", 3, "judge.connect_timeout_ms",
	 "whole number"},
	{"{\n\"judge\": {\n\"model\": 4}\n}", 3, "judge.model", "string"},
	{"{\n\"judge\": {\n\"api_key\": \"x\"}\n}", 3, "judge.api_key", "unknown key"},
	{"[1, 2]", 1, "(top level)", "object"},
};

void test_pol_config_parse_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		const struct err_case *t = &err_cases[i];
		struct pol_config *c = (struct pol_config *)1;
		struct pol_config_errors e;
		int rc = pol_config_parse(t->text, strlen(t->text), "perm.json", &c, &e);
		assert_int_equal(rc, -EINVAL);
		assert_null(c);
		bool found = false;
		char want[200];
		snprintf(want, sizeof(want), "perm.json:%d: %s: ", t->line, t->key);
		for (size_t k = 0; k < e.count; k++) {
			const struct pol_config_error *x = &e.items[k];
			if (x->line == t->line && strcmp(x->key, t->key) == 0 &&
			    strncmp(x->message, want, strlen(want)) == 0 &&
			    strstr(x->message, t->words))
				found = true;
		}
		if (!found)
			fail_msg("case %zu: want %s...%s; got %zu errors, first: %s", i, want,
				 t->words, e.count, e.count ? e.items[0].message : "-");
		pol_config_errors_free(&e);
	}
}

void test_pol_config_parse_all_errors(void **state)
{
	(void)state;
	const char *text = "{\n"
			   "\"tier\": \"x\",\n"
			   "\"rules\": [{\"action\": \"nope\", \"command\": [\"a\"]}],\n"
			   "\"bogus\": 1,\n"
			   "\"writable\": [\"rel\"]\n"
			   "}";
	struct pol_config *c;
	struct pol_config_errors e;
	assert_int_equal(pol_config_parse(text, strlen(text), "p.json", &c, &e), -EINVAL);
	assert_int_equal(e.count, 4);
	int lines = 0;
	for (size_t i = 0; i < e.count; i++)
		lines |= 1 << e.items[i].line;
	assert_int_equal(lines, (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5));
	/* the unknown key names the allowed ones */
	bool named = false;
	for (size_t i = 0; i < e.count; i++)
		if (strstr(e.items[i].message, "bogus") &&
		    strstr(e.items[i].message, "sensitive_resources"))
			named = true;
	assert_true(named);
	pol_config_errors_free(&e);
}

void test_pol_config_parse_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int line;
	} cases[] = {
		{"{\n\"rules\": [\n{\"action\": \"allow\",}\n]\n}", 3},
		{"{\n\"tier\": \"standard\"\n\"rules\": []\n}", 3},
		{"{\n\"tier\": \"standard", 2},
		{"", 1},
		{"   \n\n", 3},
		{"{}\n{}", 2},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pol_config *c;
		struct pol_config_errors e;
		int rc = pol_config_parse(cases[i].text, strlen(cases[i].text), "p.json", &c, &e);
		assert_int_equal(rc, -EINVAL);
		assert_true(e.count >= 1);
		if (e.items[0].line != cases[i].line || !strstr(e.items[0].message, "p.json:"))
			fail_msg("case %zu: line %d: %s", i, e.items[0].line, e.items[0].message);
		pol_config_errors_free(&e);
	}
}

void test_pol_config_parse_duplicate(void **state)
{
	(void)state;
	const char *text =
		"{\n\"tier\": \"standard\",\n\"rules\": [{\"action\": \"allow\",\n"
		" \"action\": \"deny\", \"command\": [\"x\"]}],\n\"tier\": \"passive\"\n}";
	struct pol_config *c;
	struct pol_config_errors e;
	assert_int_equal(pol_config_parse(text, strlen(text), "p.json", &c, &e), -EINVAL);
	assert_int_equal(e.count, 2);
	assert_int_equal(e.items[0].line, 5);
	assert_string_equal(e.items[0].key, "tier");
	assert_non_null(strstr(e.items[0].message, "more than once"));
	assert_int_equal(e.items[1].line, 4);
	assert_string_equal(e.items[1].key, "rules[0].action");
	pol_config_errors_free(&e);
}

void test_pol_config_to_json_roundtrip(void **state)
{
	(void)state;
	struct pol_config *c;
	struct pol_config_errors e;
	assert_int_equal(pol_config_parse(valid, strlen(valid), "p.json", &c, &e), 0);
	char *j = pol_config_to_json(c);
	assert_non_null(j);
	assert_null(strchr(j, '\t'));
	assert_non_null(strstr(j, "\n  \"rules\": [\n    {\n      \"action\": \"deny\""));
	struct pol_config *c2;
	if (pol_config_parse(j, strlen(j), "out.json", &c2, &e) != 0)
		fail_msg("%s\n%s", e.items[0].message, j);
	char *j2 = pol_config_to_json(c2);
	assert_string_equal(j, j2);
	assert_non_null(strstr(j, "\"at\": \"2026-01-02T03:04:05.250Z\""));
	free(j);
	free(j2);
	pol_config_free(c);
	pol_config_free(c2);
}

void test_pol_config_add_grant_roundtrip(void **state)
{
	(void)state;
	struct pol_config *c = pol_config_default();
	pol_config_set_paths(c, "/work/proj", "/home/u");
	char *argv[] = {"make", "-j2", NULL};
	struct pol_exec_desc d = {.path = "/usr/bin/make", .argv = argv, .cwd = "/work/proj"};
	struct pol_request *r = pol_request_exec(&d, "/work/proj");
	struct pol_decision dec;
	pol_decide(r, c, NULL, NULL, 0, &dec);
	assert_int_equal(dec.verdict, POL_UNDECIDED);
	assert_int_equal(pol_config_add_grant(c, r, "ann", 1767225600000000LL), 0);
	assert_int_equal(pol_config_add_grant(c, r, "", 0), -EINVAL);
	pol_decide(r, c, NULL, NULL, 0, &dec);
	assert_int_equal(dec.verdict, POL_ALLOW);
	assert_int_equal(dec.source, POL_SRC_GRANT);
	struct pol_request *o = pol_request_open(".env", NULL, POL_ACC_READ, NULL);
	assert_int_equal(pol_config_add_grant(c, o, "bob", 1767225600000000LL), 0);
	char *j = pol_config_to_json(c);
	struct pol_config *c2;
	struct pol_config_errors e;
	if (pol_config_parse(j, strlen(j), "p.json", &c2, &e) != 0)
		fail_msg("%s\n%s", e.items[0].message, j);
	pol_config_set_paths(c2, "/work/proj", "/home/u");
	pol_decide(r, c2, NULL, NULL, 0, &dec);
	assert_int_equal(dec.source, POL_SRC_GRANT);
	pol_decide(o, c2, NULL, NULL, 0, &dec);
	assert_int_equal(dec.source, POL_SRC_GRANT);
	assert_string_equal(dec.matched, "grants[1]");
	assert_non_null(strstr(j, "\"at\": \"2026-01-01T00:00:00.000Z\""));
	free(j);
	pol_request_free(r);
	pol_request_free(o);
	pol_config_free(c);
	pol_config_free(c2);
}

void test_pol_config_outside_merge(void **state)
{
	(void)state;
	/* "~/.ssh/" is the built-in "~/.ssh": it replaces it (one entry). */
	const char *text = "{\"outside\": [{\"path\": \"~/.ssh/\", \"mode\": \"gate\"}, "
			   "{\"path\": \"/srv/keys//\", \"mode\": \"hide\"}]}";
	struct pol_config *c;
	struct pol_config_errors e;
	assert_int_equal(pol_config_parse(text, strlen(text), "p.json", &c, &e), 0);
	pol_config_set_paths(c, "/work/proj", "/home/u");
	size_t n = pol_config_outside_count(c);
	int ssh = 0, srv = 0;
	for (size_t i = 0; i < n; i++) {
		enum pol_outside_mode m;
		const char *p = pol_config_outside(c, i, &m);
		if (strcmp(p, "/home/u/.ssh") == 0) {
			ssh++;
			assert_int_equal(m, POL_OUTSIDE_GATE);
		}
		if (strcmp(p, "/srv/keys") == 0)
			srv++;
		assert_true(p[0] == '/');
	}
	assert_int_equal(ssh, 1);
	assert_int_equal(srv, 1);
	assert_null(pol_config_outside(c, n, NULL));
	pol_config_free(c);
}

/* The outside modes: "markers" and "open" parse and print back; an unknown
 * mode is an error naming the four; the built-in home is a markers place
 * and "~/" places are expanded for every home given, once each. */
void test_pol_config_outside_modes_homes(void **state)
{
	(void)state;
	const char *text = "{\"outside\": [{\"path\": \"/srv\", \"mode\": \"markers\"}, "
			   "{\"path\": \"~/.npmrc\", \"mode\": \"open\"}]}";
	struct pol_config *c;
	struct pol_config_errors e;
	assert_int_equal(pol_config_parse(text, strlen(text), "p.json", &c, &e), 0);
	pol_config_set_paths(c, "/work/proj", "/home/u");
	pol_config_add_home(c, "/root");
	pol_config_add_home(c, "/root/"); /* the same home */
	pol_config_add_home(c, "/home/u");
	pol_config_add_home(c, "relative");
	size_t n = pol_config_outside_count(c);
	int srv = 0, npm_open = 0, homes = 0, git_u = 0, git_root = 0, shadow = 0;
	for (size_t i = 0; i < n; i++) {
		enum pol_outside_mode m;
		const char *p = pol_config_outside(c, i, &m);
		if (strcmp(p, "/srv") == 0 && m == POL_OUTSIDE_MARKERS)
			srv++;
		if (strstr(p, "/.npmrc") && m == POL_OUTSIDE_OPEN)
			npm_open++;
		if ((strcmp(p, "/home/u/") == 0 || strcmp(p, "/root/") == 0) &&
		    m == POL_OUTSIDE_MARKERS)
			homes++;
		git_u += strcmp(p, "/home/u/.git-credentials") == 0 && m == POL_OUTSIDE_HIDE;
		git_root += strcmp(p, "/root/.git-credentials") == 0 && m == POL_OUTSIDE_HIDE;
		shadow += strcmp(p, "/etc/shadow") == 0;
	}
	assert_int_equal(srv, 1);
	assert_int_equal(npm_open, 2);
	assert_int_equal(homes, 2);
	assert_int_equal(git_u, 1);
	assert_int_equal(git_root, 1);
	assert_int_equal(shadow, 1);
	char *j = pol_config_to_json(c);
	assert_non_null(strstr(j, "\"mode\": \"markers\""));
	assert_non_null(strstr(j, "\"mode\": \"open\""));
	free(j);
	pol_config_free(c);

	const char *bad = "{\"outside\": [{\"path\": \"/srv\", \"mode\": \"view\"}]}";
	assert_int_equal(pol_config_parse(bad, strlen(bad), "p.json", &c, &e), -EINVAL);
	assert_non_null(strstr(e.items[0].message, "\"markers\""));
	assert_non_null(strstr(e.items[0].message, "\"open\""));
	pol_config_errors_free(&e);
}

/* "tmp": {"share": [...]}: clean absolute paths strictly below /tmp,
 * /var/tmp or /dev/shm; anything else names the file, line and key. */
void test_pol_config_tmp_share(void **state)
{
	(void)state;
	const char *ok = "{\"tmp\": {\"share\": [\"/tmp/.X11-unix\", \"/var/tmp/cache\", "
			 "\"/dev/shm/x\"]}}";
	struct pol_config *c;
	struct pol_config_errors e;
	assert_int_equal(pol_config_parse(ok, strlen(ok), "p.json", &c, &e), 0);
	assert_int_equal(pol_config_tmp_share_count(c), 3);
	assert_string_equal(pol_config_tmp_share(c, 0), "/tmp/.X11-unix");
	assert_string_equal(pol_config_tmp_share(c, 2), "/dev/shm/x");
	assert_null(pol_config_tmp_share(c, 3));
	char *j = pol_config_to_json(c);
	assert_non_null(strstr(j, "\"tmp\""));
	assert_non_null(strstr(j, "/var/tmp/cache"));
	free(j);
	pol_config_free(c);
	static const struct {
		const char *text, *key, *words;
	} bad[] = {
		{"{\n\"tmp\": {\n\"share\": [\n\"/tmp\"]}}", "tmp.share[0]", "below /tmp"},
		{"{\n\"tmp\": {\n\"share\": [\n\"/home/u/x\"]}}", "tmp.share[0]", "below /tmp"},
		{"{\n\"tmp\": {\n\"share\": [\n\"/tmpx/y\"]}}", "tmp.share[0]", "below /tmp"},
		{"{\n\"tmp\": {\n\"share\": [\n\"/tmp//a/\"]}}", "tmp.share[0]", "clean"},
		{"{\n\"tmp\": {\n\"share\": [\n\"/tmp/../etc\"]}}", "tmp.share[0]", "absolute"},
		{"{\n\"tmp\": {\n\"share\": [\n\"tmp/a\"]}}", "tmp.share[0]", "absolute"},
		{"{\n\"tmp\": {\n\"share\": \"/tmp/a\"}}", "tmp.share", "array"},
		{"{\n\"tmp\": {\n\"private\": false}}", "tmp.private", "unknown key"},
		{"{\n\"tmp\": [\"/tmp/a\"]}", "tmp", "object"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = (struct pol_config *)1;
		assert_int_equal(
			pol_config_parse(bad[i].text, strlen(bad[i].text), "p.json", &c, &e),
			-EINVAL);
		assert_null(c);
		bool found = false;
		for (size_t k = 0; k < e.count; k++)
			found |= strcmp(e.items[k].key, bad[i].key) == 0 &&
				 strstr(e.items[k].message, bad[i].words) != NULL &&
				 strstr(e.items[k].message, "p.json:") == e.items[k].message &&
				 e.items[k].line > 1;
		if (!found)
			fail_msg("case %zu: want %s ... %s; first: %s", i, bad[i].key, bad[i].words,
				 e.count ? e.items[0].message : "(none)");
		pol_config_errors_free(&e);
	}
}
