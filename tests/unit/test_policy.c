/*
 * test_policy.c: unit tests of policy/: requests and their redacted JSON,
 * sensitive markers, pol_decide()'s order, session grants and process-tree
 * coverage. The classification table is in test_policy_classify.c, the
 * config parser's in test_policy_config.c; this file owns main().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

struct pol_config *tp_config(void);
void test_pol_classify_argv_table(void **state);
void test_pol_classify_argv_count(void **state);
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
void test_pol_harness_unwrap_table(void **state);
void test_pol_harness_classify_table(void **state);
void test_pol_harness_decide_claude(void **state);
void test_pol_harness_grant_inner(void **state);
void test_pol_harness_request_view(void **state);
void test_pol_harness_multicall(void **state);
void test_pol_harness_startup_table(void **state);
void test_pol_codex_wrapper_real(void **state);
void test_pol_codex_wrapper_hostile(void **state);
void test_pol_codex_snapshot_inert_table(void **state);
void test_pol_codex_setup_shape(void **state);
void test_pol_codex_launcher_child(void **state);
void test_pol_codex_startup_table(void **state);
void test_pol_codex_wrapper_json(void **state);

#define PROJECT "/work/proj"
#define HOME	"/home/u"

struct pol_config *tp_config(void)
{
	struct pol_config *c = pol_config_default();
	pol_config_set_paths(c, PROJECT, HOME);
	return c;
}

static struct pol_request *exec_req(const char *path, char *const *argv, char *const *envp)
{
	struct pol_exec_desc d = {
		.path = path,
		.argv = argv,
		.envp = envp,
		.cwd = PROJECT "/src",
		.parent_cmdline = "bash -lc 'make all'",
	};
	return pol_request_exec(&d, PROJECT);
}

/* ---- requests ------------------------------------------------------------------ */

static void test_pol_request_exec_bad(void **state)
{
	(void)state;
	struct pol_exec_desc d = {.path = "/bin/ls"};
	assert_null(pol_request_exec(&d, PROJECT));
	char *argv[] = {"ls", NULL};
	d.path = NULL;
	d.argv = argv;
	assert_null(pol_request_exec(&d, PROJECT));
	assert_null(pol_request_open("", NULL, POL_ACC_READ, NULL));
}

static void test_pol_request_json_exec(void **state)
{
	(void)state;
	char *argv[] = {"git", "push", "origin", "main", NULL};
	char *envp[] = {"PATH=/usr/bin", "HOME=/home/u", "LD_PRELOAD=/tmp/x.so",
			"GIT_SSH_COMMAND=ssh -i key", NULL};
	struct pol_request *r = exec_req("/usr/bin/git", argv, envp);
	assert_non_null(r);
	assert_int_equal(pol_request_kind(r), POL_EXEC);
	char *j = pol_request_json(r);
	assert_string_equal(
		j, "{\"kind\":\"exec\",\"path\":\"/usr/bin/git\",\"interp\":null,"
		   "\"argv\":[\"git\",\"push\",\"origin\",\"main\"],"
		   "\"env\":{\"LD_PRELOAD\":\"/tmp/x.so\",\"GIT_SSH_COMMAND\":\"ssh -i key\"},"
		   "\"cwd\":\"src\",\"parent\":\"bash -lc 'make all'\"}");
	char *s = pol_request_summary(r);
	assert_string_equal(
		s, "LD_PRELOAD=/tmp/x.so GIT_SSH_COMMAND='ssh -i key' git push origin main");
	free(j);
	free(s);
	pol_request_free(r);
}

static void test_pol_request_json_open(void **state)
{
	(void)state;
	struct pol_request *r = pol_request_open(".env", NULL, POL_ACC_READ, "cat .env");
	char *j = pol_request_json(r);
	assert_string_equal(j, "{\"kind\":\"open\",\"path\":\".env\",\"path2\":null,"
			       "\"access\":[\"read\"],\"cmdline\":\"cat .env\"}");
	char *s = pol_request_summary(r);
	assert_string_equal(s, "read .env");
	free(j);
	free(s);
	pol_request_free(r);
	r = pol_request_open("a/b", "a/c", POL_ACC_RENAME_FROM | POL_ACC_WRITE, NULL);
	s = pol_request_summary(r);
	assert_string_equal(s, "write+rename a/b -> a/c");
	free(s);
	pol_request_free(r);
}

static void test_pol_request_json_non_utf8(void **state)
{
	(void)state;
	char *argv[] = {"cat", "a\xff\xfe\x01\"b", NULL};
	struct pol_request *r = exec_req("/bin/cat", argv, NULL);
	char *j = pol_request_json(r);
	assert_non_null(strstr(j, "a\\\\xff\\\\xfe\\u0001\\\"b"));
	free(j);
	pol_request_free(r);
}

/* Secrets never appear in the JSON or the summary. */
static void test_pol_request_json_redaction(void **state)
{
	(void)state;
	static const struct {
		const char *argv[8];
		const char *secret;
		const char *kept;
	} cases[] = {
		{{"mysql", "--password=hunter2", NULL}, "hunter2", "--password="},
		{{"tool", "--password", "hunter2", NULL}, "hunter2", "--password"},
		{{"env", "TOKEN=abc123", "curl", "x", NULL}, "abc123", "TOKEN="},
		{{"git", "clone", "https://user:pw@host/x.git", NULL}, "user:pw", "host/x.git"},
		{{"curl", "-H", "Authorization: Bearer sk-xyz", "u", NULL},
		 "sk-xyz",
		 "Authorization"},
		{{"curl", "-H", "X-Api-Key: abcdef", "u", NULL}, "abcdef", "X-Api-Key"},
		{{"curl", "-u", "ann:s3cret", "u", NULL}, "s3cret", "ann"},
		{{"app", "--api-key", "k123", NULL}, "k123", "--api-key"},
		{{"app", "--token=t0k", NULL}, "t0k", "--token"},
		{{"export", "AWS_SECRET_ACCESS_KEY=wJalr", NULL}, "wJalr", "AWS_SECRET"},
		{{"gh", "auth", "ghp_abcdefghijklmnop1234", NULL},
		 "ghp_abcdefghijklmnop1234",
		 "gh"},
		{{"x", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ", NULL}, "aB3dE5gH7jK9mN1pQ3sT5vW7yZ", "x"},
		{{"curl", "-d", "{\"password\":\"pw1\"}", NULL}, "pw1", "password"},
		{{"curl", "-d", "user=a&password=pw2", NULL}, "pw2", "user=a"},
		{{"psql", "postgres://admin:dbpw@db/x", NULL}, "dbpw", "db/x"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pol_request *r = exec_req("/usr/bin/x", (char *const *)cases[i].argv, NULL);
		char *j = pol_request_json(r);
		char *s = pol_request_summary(r);
		if (strstr(j, cases[i].secret) || strstr(s, cases[i].secret) ||
		    !strstr(j, cases[i].kept) || !strstr(j, "<redacted>"))
			fail_msg("case %zu leaks or loses: %s | %s", i, j, s);
		free(j);
		free(s);
		pol_request_free(r);
	}
	/* The environment and command lines are redacted too. */
	char *argv[] = {"make", NULL};
	char *envp[] = {"GIT_CONFIG_PARAMETERS='http.extraheader=Authorization: Bearer zzz'",
			"NODE_OPTIONS=--require ./x.js", NULL};
	struct pol_exec_desc d = {.path = "/usr/bin/make",
				  .argv = argv,
				  .envp = envp,
				  .parent_cmdline = "curl -H 'Authorization: Bearer qqq' x"};
	struct pol_request *r = pol_request_exec(&d, PROJECT);
	char *j = pol_request_json(r);
	assert_null(strstr(j, "zzz"));
	assert_null(strstr(j, "qqq"));
	assert_non_null(strstr(j, "NODE_OPTIONS"));
	free(j);
	pol_request_free(r);
	r = pol_request_open("a.txt", NULL, POL_ACC_READ, "tool --password=hunter2 a.txt");
	j = pol_request_json(r);
	assert_null(strstr(j, "hunter2"));
	free(j);
	pol_request_free(r);
}

/* ---- sensitive markers ----------------------------------------------------------- */

static void test_pol_is_sensitive_cases(void **state)
{
	(void)state;
	struct pol_config *c = tp_config();
	static const struct {
		const char *path;
		bool sensitive;
		const char *marker;
	} cases[] = {
		{".env", true, ".env"},
		{".ENV", true, ".env"},
		{"config/.Env.Local", true, ".env"},
		{".env.local", true, ".env"},
		{".env.production", true, ".env"},
		{".env.example", false, NULL},
		{"deep/nested/dir/.env.example", false, NULL},
		{".ENV.EXAMPLE", false, NULL},
		{"src/main.c", false, NULL},
		{"README.md", false, NULL},
		{"home/.ssh/id_rsa", true, "id_rsa"},
		{"keys/ID_ED25519.pub", true, "id_ed25519"},
		{"certs/server.PEM", true, ".pem"},
		{"tls/server.key", true, ".key"},
		{"config/Credentials.json", true, "credentials"},
		{"app/secrets.yaml", true, "secret"},
		{"passwords.txt", true, "password"},
		{"/etc/passwd", true, "passwd"},
		{"a/b/c/d/token.json", true, "token"},
		{"wallet.dat", true, "wallet"},
		{"x/.git-credentials", true, ".git-credentials"},
		{"~/.netrc", true, ".netrc"},
		{"Cookies", true, "cookie"},
		{"Chrome/Default/Login Data", true, "login data"},
		{"Library/Keychains/x.db", true, "keychain"},
		{".aws/config", true, ".aws"},
		{".gnupg/x", true, ".gnupg"},
		{".npmrc", true, ".npmrc"},
		{".pypirc", true, ".pypirc"},
		{".kube/config", true, ".kube"},
		{".docker/config.json", true, ".docker/config.json"},
		{"my_private_key", true, "private_key"},
		{"API_KEY.txt", true, "api_key"},
		{"apikey", true, "apikey"},
		{"dir\xff\xfe/.env", true, ".env"},
		{"\xc3\x28\xa0\xa1", false, NULL},
		{"", false, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *m = NULL;
		bool s = pol_is_sensitive(c, cases[i].path, &m);
		if (s != cases[i].sensitive ||
		    (cases[i].marker && (!m || strcmp(m, cases[i].marker))))
			fail_msg("case %zu (%s): got %d %s", i, cases[i].path, s, m ? m : "-");
	}
	assert_true(pol_is_sensitive(NULL, "x/.env", NULL));
	pol_config_free(c);
}

static void test_pol_is_sensitive_long_path(void **state)
{
	(void)state;
	size_t n = 8192;
	char *p = malloc(n + 16);
	memset(p, 'a', n);
	strcpy(p + n, "/.EnV");
	const char *m;
	assert_true(pol_is_sensitive(NULL, p, &m));
	assert_string_equal(m, ".env");
	for (size_t i = 0; i < n; i += 7)
		p[i] = (char)(0x80 | (i & 0x7f));
	strcpy(p + n, "/x.txt");
	assert_false(pol_is_sensitive(NULL, p, &m));
	assert_null(m);
	free(p);
}

static void test_pol_is_sensitive_project_markers(void **state)
{
	(void)state;
	const char *text = "{\"sensitive_resources\": [\"  internal-billing  \", \"\", \"   \", "
			   "\"Customer_Data\"]}";
	struct pol_config *c;
	struct pol_config_errors e;
	assert_int_equal(pol_config_parse(text, strlen(text), "p.json", &c, &e), 0);
	const char *m;
	assert_true(pol_is_sensitive(c, "docs/INTERNAL-BILLING.md", &m));
	assert_string_equal(m, "internal-billing");
	assert_true(pol_is_sensitive(c, "x/customer_data.csv", &m));
	assert_false(pol_is_sensitive(c, "src/main.c", &m));
	pol_config_free(c);
}

static void test_pol_is_write_protected_cases(void **state)
{
	(void)state;
	const char *text = "{\"write_protected\": [\"migrations/**\", \"*.lock\", \"ci\"]}";
	struct pol_config *c;
	struct pol_config_errors e;
	assert_int_equal(pol_config_parse(text, strlen(text), "p.json", &c, &e), 0);
	pol_config_set_paths(c, PROJECT, HOME);
	assert_true(pol_is_write_protected(c, ".warden"));
	assert_true(pol_is_write_protected(c, ".warden/permissions.json"));
	assert_true(pol_is_write_protected(c, "./.warden/audit.db"));
	assert_true(pol_is_write_protected(c, "src/../.warden/x"));
	assert_true(pol_is_write_protected(c, PROJECT "/.warden/x"));
	assert_true(pol_is_write_protected(NULL, ".warden/x"));
	assert_true(pol_is_write_protected(c, "migrations/001/up.sql"));
	assert_true(pol_is_write_protected(c, "Cargo.lock"));
	assert_true(pol_is_write_protected(c, "ci/build.yml"));
	assert_false(pol_is_write_protected(c, "src/x.lock"));
	assert_false(pol_is_write_protected(c, ".wardenx"));
	assert_false(pol_is_write_protected(c, "src/main.c"));
	pol_config_free(c);
}

/* ---- deciding -------------------------------------------------------------------- */

static struct pol_config *parse_ok(const char *text)
{
	struct pol_config *c = NULL;
	struct pol_config_errors e;
	if (pol_config_parse(text, strlen(text), "permissions.json", &c, &e) != 0)
		fail_msg("config: %s", e.count ? e.items[0].message : "?");
	pol_config_set_paths(c, PROJECT, HOME);
	return c;
}

static void decide_argv(const char *path, char *const *argv, const struct pol_config *c,
			const struct pol_session *s, const struct pol_context *ctx,
			struct pol_decision *d)
{
	struct pol_request *r = exec_req(path, argv, NULL);
	pol_decide(r, c, s, ctx, 0, d);
	pol_request_free(r);
}

static void test_pol_decide_order(void **state)
{
	(void)state;
	struct pol_config *c =
		parse_ok("{\"rules\": ["
			 "{\"action\": \"allow\", \"command\": [\"rm\"]},"
			 "{\"action\": \"deny\", \"command\": [\"git\", \"push\"]},"
			 "{\"action\": \"allow\", \"command\": [\"git\"]},"
			 "{\"action\": \"ask\", \"command\": [\"npm\", \"publish\"]},"
			 "{\"action\": \"allow\", \"command\": [\"npm\"]},"
			 "{\"action\": \"deny\", \"path\": \"private/**\", \"access\": \"read\"},"
			 "{\"action\": \"allow\", \"command\": [\"ls\"]},"
			 "{\"action\": \"allow\", \"command\": [\"cat\"]}"
			 "]}");
	struct pol_decision d;
	/* 1. hard deny beats an allow rule */
	decide_argv("/bin/rm", (char *[]){"rm", "-rf", "/", NULL}, c, NULL, NULL, &d);
	assert_int_equal(d.verdict, POL_DENY_CRITICAL);
	assert_int_equal(d.source, POL_SRC_HARD_DENY);
	assert_string_equal(d.matched, "rm -rf /");
	assert_non_null(strstr(d.reason, "destroys the whole system"));
	assert_false(d.covers);
	/* 2. a deny rule beats a later allow rule, and sees through sudo */
	decide_argv("/usr/bin/git", (char *[]){"git", "push", "origin", NULL}, c, NULL, NULL, &d);
	assert_int_equal(d.verdict, POL_DENY);
	assert_int_equal(d.source, POL_SRC_RULE);
	assert_string_equal(d.matched, "rules[1]");
	decide_argv("/usr/bin/sudo", (char *[]){"sudo", "git", "push", NULL}, c, NULL, NULL, &d);
	assert_int_equal(d.verdict, POL_DENY);
	/* 3. allow rules; ask beats allow */
	decide_argv("/usr/bin/git", (char *[]){"git", "commit", "-m", "x", NULL}, c, NULL, NULL,
		    &d);
	assert_int_equal(d.verdict, POL_ALLOW);
	assert_string_equal(d.matched, "rules[2]");
	assert_true(d.covers);
	decide_argv("/usr/bin/npm", (char *[]){"npm", "publish", NULL}, c, NULL, NULL, &d);
	assert_int_equal(d.verdict, POL_ASK);
	assert_string_equal(d.matched, "rules[3]");
	/* an allow rule does not cover a sensitive argument */
	decide_argv("/bin/cat", (char *[]){"cat", ".env", NULL}, c, NULL, NULL, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	assert_string_equal(d.matched, ".env");
	/* 4. fast path */
	pol_config_free(c);
	c = tp_config();
	decide_argv("/bin/ls", (char *[]){"ls", "-la", NULL}, c, NULL, NULL, &d);
	assert_int_equal(d.verdict, POL_ALLOW);
	assert_int_equal(d.source, POL_SRC_FAST_PATH);
	assert_false(d.covers);
	assert_string_equal(pol_source_name(d.source), "fast_path");
	/* a program of the project never takes the fast path */
	decide_argv(PROJECT "/bin/ls", (char *[]){"ls", NULL}, c, NULL, NULL, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	/* the resolved path decides, not argv[0] */
	decide_argv("/usr/bin/touch", (char *[]){"ls", "x", NULL}, c, NULL, NULL, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	assert_non_null(strstr(d.reason, "touch"));
	/* 5. undecided */
	decide_argv("/usr/bin/make", (char *[]){"make", NULL}, c, NULL, NULL, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	assert_int_equal(d.source, POL_SRC_NONE);
	assert_string_equal(pol_verdict_name(d.verdict), "undecided");
	/* no_fast_path */
	struct pol_context ctx = {.no_fast_path = true};
	decide_argv("/bin/ls", (char *[]){"ls", NULL}, c, NULL, &ctx, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	pol_decide(NULL, c, NULL, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	pol_config_free(c);
}

static void test_pol_decide_env(void **state)
{
	(void)state;
	struct pol_config *c = parse_ok("{\"grants\": [{\"command\": [\"make\"], \"by\": \"ann\", "
					"\"at\": \"2026-01-02T03:04:05Z\"}]}");
	char *argv[] = {"ls", NULL};
	char *envp[] = {"PATH=/bin", "LD_PRELOAD=/tmp/evil.so", NULL};
	struct pol_request *r = exec_req("/bin/ls", argv, envp);
	struct pol_decision d;
	pol_decide(r, c, NULL, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	assert_string_equal(d.matched, "LD_PRELOAD");
	pol_request_free(r);
	/* the grant is for make, not for make with a preloaded library */
	char *margv[] = {"make", NULL};
	r = exec_req("/usr/bin/make", margv, envp);
	pol_decide(r, c, NULL, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	pol_request_free(r);
	r = exec_req("/usr/bin/make", margv, NULL);
	pol_decide(r, c, NULL, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_ALLOW);
	assert_int_equal(d.source, POL_SRC_GRANT);
	assert_string_equal(d.matched, "grants[0]");
	assert_true(d.covers);
	pol_request_free(r);
	pol_config_free(c);
}

static void test_pol_session_grant_exact(void **state)
{
	(void)state;
	struct pol_config *c = tp_config();
	struct pol_session *s = pol_session_new();
	char *a1[] = {"npm", "install", NULL};
	char *a2[] = {"npm", "install", "left-pad", NULL};
	struct pol_request *r1 = exec_req("/usr/bin/npm", a1, NULL);
	struct pol_request *r2 = exec_req("/usr/bin/npm", a2, NULL);
	struct pol_request *r3 = exec_req("/tmp/npm", a1, NULL);
	pol_session_grant(s, r1);
	pol_session_grant(s, r1);
	struct pol_decision d;
	pol_decide(r1, c, s, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_ALLOW);
	assert_int_equal(d.source, POL_SRC_SESSION_GRANT);
	pol_decide(r2, c, s, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	pol_decide(r3, c, s, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	/* a session grant never covers a hard deny */
	char *bad[] = {"rm", "-rf", "/", NULL};
	struct pol_request *r4 = exec_req("/bin/rm", bad, NULL);
	pol_session_grant(s, r4);
	pol_decide(r4, c, s, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_DENY_CRITICAL);
	/* opens: same path and access only */
	struct pol_request *o1 = pol_request_open(".env", NULL, POL_ACC_READ, NULL);
	struct pol_request *o2 = pol_request_open(".env", NULL, POL_ACC_WRITE, NULL);
	pol_session_grant(s, o1);
	pol_decide(o1, c, s, NULL, 0, &d);
	assert_int_equal(d.source, POL_SRC_SESSION_GRANT);
	pol_decide(o2, c, s, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	pol_request_free(r1);
	pol_request_free(r2);
	pol_request_free(r3);
	pol_request_free(r4);
	pol_request_free(o1);
	pol_request_free(o2);
	pol_session_free(s);
	pol_config_free(c);
}

static void test_pol_decide_open(void **state)
{
	(void)state;
	struct pol_config *c = parse_ok(
		"{\"rules\": ["
		"{\"action\": \"allow\", \"path\": \"config/*.env\", \"access\": \"read\"},"
		"{\"action\": \"deny\", \"path\": \"vendor/**\", \"access\": \"write\"},"
		"{\"action\": \"allow\", \"path\": \"**/*.yml\", \"access\": \"read\"}"
		"], \"write_protected\": [\"*.lock\"]}");
	static const struct {
		const char *path;
		unsigned access;
		bool review;
		enum pol_verdict v;
		enum pol_source src;
		const char *expect;
	} cases[] = {
		{"src/main.c", POL_ACC_READ, false, POL_ALLOW, POL_SRC_FAST_PATH, "not sensitive"},
		{".env", POL_ACC_READ, false, POL_UNDECIDED, POL_SRC_NONE, ".env"},
		{".env", POL_ACC_READ, true, POL_ALLOW, POL_SRC_FAST_PATH, ""},
		{".env", POL_ACC_WRITE, true, POL_UNDECIDED, POL_SRC_NONE, ".env"},
		{"config/prod.env", POL_ACC_READ, false, POL_ALLOW, POL_SRC_RULE, "rules[0]"},
		{"config/prod.env", POL_ACC_WRITE, false, POL_UNDECIDED, POL_SRC_NONE, ".env"},
		{"vendor/a/b.c", POL_ACC_WRITE, false, POL_DENY, POL_SRC_RULE, "rules[1]"},
		{"vendor/a/b.c", POL_ACC_READ, false, POL_ALLOW, POL_SRC_FAST_PATH, ""},
		{".warden/permissions.json", POL_ACC_WRITE, false, POL_DENY_CRITICAL,
		 POL_SRC_HARD_DENY, ".warden/"},
		{".warden/permissions.json", POL_ACC_READ, false, POL_ALLOW, POL_SRC_FAST_PATH, ""},
		{"Cargo.lock", POL_ACC_WRITE, false, POL_DENY, POL_SRC_RULE, "write_protected"},
		{"/etc/passwd", POL_ACC_WRITE, false, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, "/etc"},
		{"src/new.c", POL_ACC_CREATE, false, POL_UNDECIDED, POL_SRC_NONE, ""},
		/* A gated place outside the project (absolute): every open is
		 * sensitive, a review run does not read it unasked, and the
		 * project's relative rules do not reach it. */
		{"/home/u/.config/gh/notes.txt", POL_ACC_READ, false, POL_UNDECIDED, POL_SRC_NONE,
		 "gated place"},
		{"/home/u/.ssh/id_rsa", POL_ACC_READ, true, POL_UNDECIDED, POL_SRC_NONE, ""},
		{"/home/u/.config/gh/hosts.yml", POL_ACC_READ, false, POL_UNDECIDED, POL_SRC_NONE,
		 ""},
		{"ci/build.yml", POL_ACC_READ, false, POL_ALLOW, POL_SRC_RULE, "rules[2]"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pol_request *r = pol_request_open(cases[i].path, NULL, cases[i].access, "x");
		struct pol_context ctx = {.review = cases[i].review};
		struct pol_decision d;
		pol_decide(r, c, NULL, &ctx, 0, &d);
		if (d.verdict != cases[i].v || d.source != cases[i].src ||
		    (cases[i].expect[0] && !strstr(d.matched, cases[i].expect) &&
		     !strstr(d.reason, cases[i].expect)))
			fail_msg("case %zu %s: got %s/%s (%s | %s)", i, cases[i].path,
				 pol_verdict_name(d.verdict), pol_source_name(d.source), d.reason,
				 d.matched);
		pol_request_free(r);
	}
	/* a rename into .warden/ is refused by its second path */
	struct pol_request *r =
		pol_request_open("x", ".warden/permissions.json", POL_ACC_RENAME_FROM, NULL);
	struct pol_decision d;
	pol_decide(r, c, NULL, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_DENY_CRITICAL);
	pol_request_free(r);
	pol_config_free(c);
}

/* ---- coverage -------------------------------------------------------------------- */

static void test_pol_exec_covers_cases(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		const char *argv[6];
		const char *interp;
		bool covers;
	} cases[] = {
		{"/usr/bin/make", {"make", "-j2"}, NULL, true},
		{"/usr/bin/gcc", {"gcc", "-c", "x.c"}, NULL, true},
		{"/bin/sh", {"sh", "-c", "make"}, NULL, true},
		{"/bin/bash", {"bash", "-lc", "npm test"}, NULL, true},
		{"/bin/bash", {"bash"}, NULL, false},
		{"/bin/bash", {"bash", "-i"}, NULL, false},
		{"/bin/bash", {"bash", "script.sh"}, NULL, false},
		{"/bin/sh", {"sh", "-s"}, NULL, false},
		{"/bin/dash", {"dash"}, NULL, false},
		{"/bin/zsh", {"zsh"}, NULL, false},
		{"/bin/ksh", {"ksh"}, NULL, false},
		{"/bin/mksh", {"mksh"}, NULL, false},
		{"/usr/bin/fish", {"fish"}, NULL, false},
		{"/bin/busybox", {"busybox", "sh"}, NULL, false},
		{"/bin/busybox", {"busybox", "sh", "-c", "ls"}, NULL, true},
		{"/usr/bin/sudo", {"sudo", "bash"}, NULL, false},
		{"/usr/bin/env", {"env", "bash"}, NULL, false},
		{"/usr/bin/nohup", {"nohup", "sh", "x.sh"}, NULL, false},
		{PROJECT "/build.sh", {"./build.sh"}, "/bin/sh", false},
		{"/usr/bin/python3.11", {"python3"}, NULL, false},
		{"/usr/bin/python3.11", {"python3", "-"}, NULL, false},
		{"/usr/bin/python3.11", {"python3", "setup.py", "build"}, NULL, true},
		{"/usr/bin/node", {"node"}, NULL, false},
		{"/usr/bin/node", {"node", "build.js"}, NULL, true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pol_exec_desc d = {.path = cases[i].path,
					  .interp = cases[i].interp,
					  .argv = (char *const *)cases[i].argv,
					  .cwd = PROJECT};
		struct pol_request *r = pol_request_exec(&d, PROJECT);
		if (pol_exec_covers(r) != cases[i].covers)
			fail_msg("case %zu (%s): covers %d", i, cases[i].argv[0], !cases[i].covers);
		pol_request_free(r);
	}
	struct pol_request *o = pol_request_open("x", NULL, POL_ACC_READ, NULL);
	assert_false(pol_exec_covers(o));
	pol_request_free(o);
}

static void test_pol_decide_covered(void **state)
{
	(void)state;
	struct pol_config *c = tp_config();
	struct pol_context ctx = {.covered = true};
	struct pol_decision d;
	decide_argv("/usr/bin/gcc", (char *[]){"gcc", "-c", "x.c", NULL}, c, NULL, &ctx, &d);
	assert_int_equal(d.verdict, POL_ALLOW);
	assert_int_equal(d.source, POL_SRC_COVERED);
	assert_true(d.covers);
	assert_string_equal(pol_source_name(d.source), "covered");
	/* a read-only command inside a covered tree is covered, not fast path */
	decide_argv("/bin/ls", (char *[]){"ls", NULL}, c, NULL, &ctx, &d);
	assert_int_equal(d.source, POL_SRC_COVERED);
	/* hard deny and sensitive arguments are decided again */
	decide_argv("/bin/rm", (char *[]){"rm", "-rf", "/", NULL}, c, NULL, &ctx, &d);
	assert_int_equal(d.verdict, POL_DENY_CRITICAL);
	decide_argv("/bin/cat", (char *[]){"cat", ".env", NULL}, c, NULL, &ctx, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	assert_string_equal(d.matched, ".env");
	/* a covered shell without -c is allowed but covers nothing */
	decide_argv("/bin/bash", (char *[]){"bash", NULL}, c, NULL, &ctx, &d);
	assert_int_equal(d.verdict, POL_ALLOW);
	assert_false(d.covers);
	/* a sensitive open is decided again */
	struct pol_request *o = pol_request_open(".env", NULL, POL_ACC_READ, "cat .env");
	pol_decide(o, c, NULL, &ctx, 0, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	pol_request_free(o);
	/* the fast path covers nothing */
	ctx.covered = false;
	decide_argv("/usr/bin/git", (char *[]){"git", "status", NULL}, c, NULL, &ctx, &d);
	assert_int_equal(d.source, POL_SRC_FAST_PATH);
	assert_false(d.covers);
	pol_config_free(c);
}

static void test_pol_classify_argv_envp(void **state)
{
	(void)state;
	static const char *const risky[] = {
		"LD_PRELOAD=/x.so",
		"LD_AUDIT=/x.so",
		"LD_LIBRARY_PATH=/tmp",
		"BASH_ENV=/x",
		"ENV=/x",
		"GIT_CONFIG_GLOBAL=/x",
		"GIT_CONFIG_COUNT=1",
		"GIT_EXEC_PATH=/x",
		"GIT_SSH_COMMAND=x",
		"GIT_SSH=x",
		"NODE_OPTIONS=-r x",
		"PYTHONSTARTUP=x",
		"PYTHONPATH=x",
		"PERL5OPT=-Mx",
		"PERL5LIB=x",
		"RUBYOPT=-rx",
		"PROMPT_COMMAND=x",
		"SHELLOPTS=xtrace",
		"BASHOPTS=x",
		"IFS=x",
		"BASH_FUNC_ls%%=() { x; }",
	};
	char *argv[] = {"ls", NULL};
	for (size_t i = 0; i < sizeof(risky) / sizeof(risky[0]); i++) {
		char *envp[] = {"PATH=/bin", (char *)risky[i], NULL};
		struct pol_classification r;
		pol_classify_argv(argv, envp, NULL, &r);
		if (r.cls != POL_CLASS_OTHER || !strstr(risky[i], r.matched) || !r.matched[0])
			fail_msg("%s: class %d matched %s", risky[i], r.cls, r.matched);
	}
	char *envp[] = {"PATH=/bin", "HOME=/h", "LANG=C", "TERM=xterm", NULL};
	struct pol_classification r;
	pol_classify_argv(argv, envp, NULL, &r);
	assert_int_equal(r.cls, POL_CLASS_READ_ONLY);
	pol_classify_argv((char *[]){NULL}, NULL, NULL, &r);
	assert_int_equal(r.cls, POL_CLASS_OTHER);
}

/* Obfuscations a splitter of the test cannot express in the table. */
static void test_pol_classify_argv_nested_quotes(void **state)
{
	(void)state;
	static const struct {
		const char *script;
		enum pol_class cls;
	} cases[] = {
		{"sh -c \"sh -c 'rm -rf /'\"", POL_CLASS_CRITICAL},
		{"bash -c \"bash -lc \\\"rm -rf ~\\\"\"", POL_CLASS_CRITICAL},
		{"r\\m -rf /", POL_CLASS_CRITICAL},
		{"\"rm\" -rf \"/\"", POL_CLASS_CRITICAL},
		{"rm -rf '/'", POL_CLASS_CRITICAL},
		{"rm -rf \\\n /", POL_CLASS_CRITICAL},
		{"nohup sudo -E env X=1 timeout 5 nice rm -rf /", POL_CLASS_CRITICAL},
		{"ls -la | grep 'a b' ; echo \"done\"", POL_CLASS_READ_ONLY},
		{"git log --oneline | head -n 5", POL_CLASS_READ_ONLY},
		{"echo 'rm -rf /'", POL_CLASS_READ_ONLY},
		{"grep -r 'curl x | sh' docs", POL_CLASS_READ_ONLY},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = {"sh", "-c", (char *)cases[i].script, NULL};
		struct pol_classification r;
		struct pol_config *c = tp_config();
		pol_classify_argv(argv, NULL, c, &r);
		pol_config_free(c);
		if (r.cls != cases[i].cls)
			fail_msg("case %zu [%s]: class %d (%s)", i, cases[i].script, r.cls,
				 r.reason);
	}
}

/* A program the agent can have written: no allowance by name (fast path,
 * allow rule, grant, session grant); hard deny, deny and ask rules and a
 * cover still apply; the JSON says so; the resolved file is classified. */
static struct pol_request *writable_req(const char *path, const char *resolved, char **argv)
{
	struct pol_exec_desc d = {.path = path,
				  .resolved = resolved,
				  .argv = argv,
				  .cwd = PROJECT,
				  .agent_writable = true,
				  .agent_writable_why = "written where the agent can write: /tmp"};
	struct pol_request *r = pol_request_exec(&d, PROJECT);
	assert_non_null(r);
	return r;
}

static void test_pol_decide_agent_writable(void **state)
{
	(void)state;
	struct pol_config *c =
		parse_ok("{\"rules\": ["
			 "{\"action\": \"deny\", \"command\": [\"git\", \"push\"]},"
			 "{\"action\": \"ask\", \"command\": [\"npm\", \"publish\"]},"
			 "{\"action\": \"allow\", \"command\": [\"cat\"]}],"
			 " \"grants\": [{\"command\": [\"make\", \"-j2\"], \"by\": \"ann\", "
			 "\"at\": \"2026-12-01T10:00:00Z\"}]}");
	struct pol_session *s = pol_session_new();
	struct {
		const char *path;
		char *argv[4];
		enum pol_verdict want;
		enum pol_source src;
	} cases[] = {
		{"/tmp/x/ls", {"ls", "-la", NULL}, POL_UNDECIDED, POL_SRC_NONE},
		{"/tmp/x/cat", {"cat", "README.md", NULL}, POL_UNDECIDED, POL_SRC_NONE},
		{"/tmp/x/make", {"make", "-j2", NULL}, POL_UNDECIDED, POL_SRC_NONE},
		{"/tmp/x/git", {"git", "status", NULL}, POL_UNDECIDED, POL_SRC_NONE},
		{"/tmp/x/rm", {"rm", "-rf", "/", NULL}, POL_DENY_CRITICAL, POL_SRC_HARD_DENY},
		{"/tmp/x/git", {"git", "push", NULL}, POL_DENY, POL_SRC_RULE},
		{"/tmp/x/npm", {"npm", "publish", NULL}, POL_ASK, POL_SRC_RULE},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pol_request *r = writable_req(cases[i].path, NULL, cases[i].argv);
		struct pol_decision d;
		pol_decide(r, c, s, NULL, 0, &d);
		print_message("%s: %s %s (%s)\n", cases[i].path, pol_verdict_name(d.verdict),
			      pol_source_name(d.source), d.reason);
		assert_int_equal(d.verdict, cases[i].want);
		assert_int_equal(d.source, cases[i].src);
		if (d.verdict == POL_UNDECIDED)
			assert_non_null(strstr(d.reason, "written where the agent can write"));
		pol_request_free(r);
	}
	/* A session grant for exactly this is not enough either. */
	struct pol_request *r = writable_req("/tmp/x/ls", NULL, (char *[]){"ls", NULL});
	pol_session_grant(s, r);
	struct pol_decision d;
	pol_decide(r, c, s, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	/* Inside an allowed tree, the cover holds (it never named it). */
	struct pol_context ctx = {.covered = true};
	pol_decide(r, c, s, &ctx, 0, &d);
	assert_int_equal(d.verdict, POL_ALLOW);
	assert_int_equal(d.source, POL_SRC_COVERED);
	char *json = pol_request_json(r);
	assert_non_null(
		strstr(json, "\"agent_writable\":\"written where the agent can write: /tmp\""));
	free(json);
	const char *why = NULL;
	assert_true(pol_request_agent_writable(r, &why));
	assert_string_equal(why, "written where the agent can write: /tmp");
	pol_request_free(r);
	/* The file that runs is classified, under the name it was invoked by:
	 * a symlink named ls to touch is touch. */
	r = writable_req("/tmp/x/ls", "/usr/bin/touch", (char *[]){"ls", "y", NULL});
	assert_string_equal(pol_request_resolved(r), "/usr/bin/touch");
	pol_decide(r, c, s, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	assert_non_null(strstr(d.reason, "/usr/bin/touch"));
	pol_request_free(r);
	/* Not agent-writable: the same requests are allowed by name. */
	struct pol_exec_desc ok = {.path = "/usr/bin/ls", .argv = (char *[]){"ls", NULL}};
	r = pol_request_exec(&ok, PROJECT);
	pol_decide(r, c, NULL, NULL, 0, &d);
	assert_int_equal(d.source, POL_SRC_FAST_PATH);
	json = pol_request_json(r);
	assert_null(strstr(json, "agent_writable"));
	free(json);
	pol_request_free(r);
	pol_session_free(s);
	pol_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pol_request_exec_bad),
		cmocka_unit_test(test_pol_request_json_exec),
		cmocka_unit_test(test_pol_request_json_open),
		cmocka_unit_test(test_pol_request_json_non_utf8),
		cmocka_unit_test(test_pol_request_json_redaction),
		cmocka_unit_test(test_pol_is_sensitive_cases),
		cmocka_unit_test(test_pol_is_sensitive_long_path),
		cmocka_unit_test(test_pol_is_sensitive_project_markers),
		cmocka_unit_test(test_pol_is_write_protected_cases),
		cmocka_unit_test(test_pol_decide_order),
		cmocka_unit_test(test_pol_decide_env),
		cmocka_unit_test(test_pol_session_grant_exact),
		cmocka_unit_test(test_pol_decide_open),
		cmocka_unit_test(test_pol_exec_covers_cases),
		cmocka_unit_test(test_pol_decide_covered),
		cmocka_unit_test(test_pol_classify_argv_envp),
		cmocka_unit_test(test_pol_classify_argv_nested_quotes),
		cmocka_unit_test(test_pol_classify_argv_table),
		cmocka_unit_test(test_pol_classify_argv_count),
		cmocka_unit_test(test_pol_config_parse_valid),
		cmocka_unit_test(test_pol_config_parse_errors),
		cmocka_unit_test(test_pol_config_parse_all_errors),
		cmocka_unit_test(test_pol_config_parse_malformed),
		cmocka_unit_test(test_pol_config_parse_duplicate),
		cmocka_unit_test(test_pol_config_to_json_roundtrip),
		cmocka_unit_test(test_pol_config_add_grant_roundtrip),
		cmocka_unit_test(test_pol_config_outside_merge),
		cmocka_unit_test(test_pol_config_outside_modes_homes),
		cmocka_unit_test(test_pol_config_tmp_share),
		cmocka_unit_test(test_pol_harness_unwrap_table),
		cmocka_unit_test(test_pol_harness_classify_table),
		cmocka_unit_test(test_pol_harness_decide_claude),
		cmocka_unit_test(test_pol_harness_grant_inner),
		cmocka_unit_test(test_pol_harness_request_view),
		cmocka_unit_test(test_pol_harness_multicall),
		cmocka_unit_test(test_pol_harness_startup_table),
		cmocka_unit_test(test_pol_decide_agent_writable),
		cmocka_unit_test(test_pol_codex_wrapper_real),
		cmocka_unit_test(test_pol_codex_wrapper_hostile),
		cmocka_unit_test(test_pol_codex_snapshot_inert_table),
		cmocka_unit_test(test_pol_codex_setup_shape),
		cmocka_unit_test(test_pol_codex_launcher_child),
		cmocka_unit_test(test_pol_codex_startup_table),
		cmocka_unit_test(test_pol_codex_wrapper_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
