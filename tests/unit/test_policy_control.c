/*
 * test_policy_control: control files (policy/control.c), the sensitive
 * markers' basename exemption and directory renames (policy/sensitive.c),
 * the control_files config key, and the summaries of changes.
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

static struct pol_config *parse(const char *text)
{
	struct pol_config *c = NULL;
	struct pol_config_errors e;
	if (pol_config_parse(text, strlen(text), "p.json", &c, &e) != 0) {
		for (size_t i = 0; i < e.count; i++)
			print_message("%s\n", e.items[i].message);
		pol_config_errors_free(&e);
		fail_msg("config did not parse: %s", text);
	}
	return c;
}

static void test_pol_is_control_defaults(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		bool control;
	} cases[] = {
		{".git/config", true},
		{".GIT/CONFIG", true},
		{".git", true},
		{"vendor/lib/.git/config", true},
		{"vendor/lib/.git", true},
		{".git/hooks/pre-commit", true},
		{".git/hooks", true},
		{".git/hooks/pre-commit.sample", false},
		{".git/info/attributes", true},
		{".git/modules/sub/config", true},
		{".git/modules/a/b/hooks/post-checkout", true},
		{".git/modules/a/hooks/x.sample", false},
		{".git/worktrees/w/commondir", true},
		{".gitmodules", true},
		{"sub/.gitmodules", true},
		{".envrc", true},
		{"app/.envrc", true},
		{".vscode/tasks.json", true},
		{"pkg/.vscode/launch.json", true},
		{".idea/runConfigurations/x.xml", true},
		{"proj.code-workspace", true},
		/* Found in review: editors and mise read these too. */
		{".zed/settings.json", true},
		{"sub/.helix/languages.toml", true},
		{".nvim.lua", true},
		{".exrc", true},
		{".dir-locals.el", true},
		{"mise.production.toml", true},
		{".config/mise/config.toml", true},
		{".tool-versions", true},
		{"src/mise.rs", false},
		{"docs/helix.md", false},
		{".devcontainer/devcontainer.json", true},
		{".devcontainer.json", true},
		{".pre-commit-config.yaml", true},
		{".husky/pre-commit", true},
		{"lefthook.yml", true},
		{"mise.toml", true},
		/* git's ordinary writes, and the project's own files */
		{".git/index", false},
		{".git/index.lock", false},
		{".git/config.lock", false},
		{".git/HEAD", false},
		{".git/logs/HEAD", false},
		{".git/modules/a/HEAD", false},
		{".git/worktrees/w/HEAD", false},
		{"vendor/lib/.git/HEAD", false},
		{"HEAD", true},
		{"sub/HEAD", true},
		{"a/b/HEAD", true},
		{"FETCH_HEAD", false},
		{".git/zz/config", true},
		{"sub/.git/a/b/config", true},
		{".git/zz/config.lock", false},
		{".git/objects/ab/cdef", false},
		{".git/refs/heads/main", false},
		{".git/logs/HEAD", false},
		{".git/COMMIT_EDITMSG", false},
		{".git/info/exclude", false},
		{".gitignore", false},
		{".gitattributes", false},
		{"src/main.c", false},
		{"Makefile", false},
		{"config", false},
		{"", false},
		{"/etc/passwd", false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *pat = NULL;
		bool got = pol_is_control(NULL, cases[i].path, &pat);
		if (got != cases[i].control)
			fail_msg("case %zu (%s): got %d", i, cases[i].path, got);
		assert_true(got == (pat != NULL));
	}
}

static void test_pol_is_control_config(void **state)
{
	(void)state;
	struct pol_config *c = parse("{\"control_files\": [\"tools/*.sh\", \"!.vscode/**\", "
				     "\"**/Justfile\", \"x/**/y\"]}");
	const char *pat = NULL;
	assert_true(pol_is_control(c, "tools/run.sh", &pat));
	assert_string_equal(pat, "tools/*.sh");
	assert_false(pol_is_control(c, "tools/sub/run.sh", NULL));   /* '*' stays in one dir */
	assert_false(pol_is_control(c, "a/tools/run.sh", NULL));     /* anchored: has a '/' */
	assert_false(pol_is_control(c, ".vscode/tasks.json", NULL)); /* carved out */
	assert_true(pol_is_control(c, "pkg/.vscode/tasks.json", NULL));
	assert_true(pol_is_control(c, "a/b/Justfile", NULL));
	assert_true(pol_is_control(c, "x/y", NULL));
	assert_true(pol_is_control(c, "x/1/2/y", NULL));
	assert_true(pol_is_control(c, ".git/config", NULL));
	char *j = pol_config_to_json(c);
	assert_non_null(strstr(j, "\"control_files\""));
	assert_non_null(strstr(j, "tools/*.sh"));
	free(j);
	pol_config_free(c);
}

static void test_pol_config_control_files_invalid(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{\"control_files\": \"x\"}",
		"{\"control_files\": [1]}",
		"{\"control_files\": [\"\"]}",
		"{\"control_files\": [\"!\"]}",
		"{\"control_files\": [\"/abs\"]}",
		"{\"control_files\": [\"../up\"]}",
		"{\"control_files\": [\"a/../b\"]}",
		"{\"control_files\": [\"a[b\"]}",
		"{\"control_file\": []}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pol_config *c = NULL;
		struct pol_config_errors e;
		if (pol_config_parse(bad[i], strlen(bad[i]), "p.json", &c, &e) == 0)
			fail_msg("accepted %s", bad[i]);
		assert_null(c);
		assert_true(e.count >= 1);
		assert_non_null(strstr(e.items[0].message, "p.json"));
		pol_config_errors_free(&e);
	}
	/* A pattern with 61 components is too long. */
	char text[512] = "{\"control_files\": [\"";
	for (int i = 0; i < 61; i++)
		strcat(text, i ? "/a" : "a");
	strcat(text, "\"]}");
	struct pol_config *c = NULL;
	struct pol_config_errors e;
	assert_int_not_equal(pol_config_parse(text, strlen(text), "p.json", &c, &e), 0);
	assert_non_null(strstr(e.items[0].message, "control_files[0]"));
	pol_config_errors_free(&e);
}

static void test_pol_control_below_differs(void **state)
{
	(void)state;
	static const struct {
		const char *from, *to;
		bool differs;
	} cases[] = {
		{"x", ".git/hooks", true},	 /* mkdir x; x/pre-commit; mv x .git/hooks */
		{"x", ".git", true},		 /* x/config becomes .git/config */
		{".git", "old-git", true},	 /* and back */
		{"x", ".vscode", true},		 /* x/tasks.json */
		{"a", "b", false},		 /* a/.git/config stays one */
		{"src", "lib", false},		 /* nothing below changes */
		{"a/b", "c", false},		 /* both anchored nowhere */
		{".git/modules", "m", true},	 /* submodule configs */
		{"hooks", ".git/hooks2", true},	 /* hooks/HEAD stops counting */
		{".git/zz", "sub", true},	 /* .git/zz/HEAD becomes sub/HEAD */
		{"tmp", ".git/modules/s", true}, /* tmp/config */
		{".husky", "husky-old", true},
		{"x", "y/.git", true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (pol_control_below_differs(NULL, cases[i].from, cases[i].to) != cases[i].differs)
			fail_msg("case %zu (%s -> %s)", i, cases[i].from, cases[i].to);
}

/* The exemption is the file's own name's; a directory called *.env.example
 * exempts nothing below it. */
static void test_pol_is_sensitive_basename_exemption(void **state)
{
	(void)state;
	assert_false(pol_is_sensitive(NULL, ".env.example", NULL));
	assert_false(pol_is_sensitive(NULL, "deploy/.env.example", NULL));
	assert_false(pol_is_sensitive(NULL, "config/prod.env.example", NULL));
	assert_true(pol_is_sensitive(NULL, "deploy.env.example/.env", NULL));
	assert_true(pol_is_sensitive(NULL, "deploy.env.example/secrets.yaml", NULL));
	assert_true(pol_is_sensitive(NULL, "deploy.env.example/readme", NULL));
	assert_false(pol_is_sensitive(NULL, "deploy.env.example", NULL));
}

static void test_pol_sensitive_below_differs(void **state)
{
	(void)state;
	struct pol_config *c = parse("{\"sensitive_resources\": [\"conf/prod\", \"a/b/c\"]}");
	static const struct {
		const char *from, *to;
		bool differs;
	} cases[] = {
		{"d", "deploy.env.example", true}, /* below gains ".env" */
		{"secrets", "stuff", true},
		{"stuff", "secrets", true},
		{"secrets", "secrets-old", false}, /* sensitive before and after */
		{"src", "lib", false},
		{"conf", "other", true}, /* conf/prod.yaml */
		{"x/conf", "y/conf", false},
		{"conf", "x/conf", false}, /* still ends with "conf" */
		{"a/b", "q", true},	   /* a/b/c... */
		{"a", "q", true},	   /* a/b/c... */
		{"z/a", "q/a", false},
		{"x", ".docker", true}, /* x/config.json becomes .docker/config.json */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (pol_sensitive_below_differs(c, cases[i].from, cases[i].to) != cases[i].differs)
			fail_msg("case %zu (%s -> %s)", i, cases[i].from, cases[i].to);
	/* Exhaustively, on small names: whenever some name below differs,
	 * the rename is reported. */
	static const char *const dirs[] = {"d",	   "conf",    "x/conf",	       "a",	 "a/b",
					   "keys", ".docker", "x.env.example", "tokens", "q"};
	static const char *const below[] = {
		"f",	       ".env",		 "prod.yaml",	  "b/c",     "c",
		"config.json", "x/.env.example", "y.env.example", "secret/f"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		for (size_t j = 0; j < sizeof(dirs) / sizeof(dirs[0]); j++)
			for (size_t k = 0; k < sizeof(below) / sizeof(below[0]); k++) {
				char p1[64], p2[64];
				snprintf(p1, sizeof(p1), "%s/%s", dirs[i], below[k]);
				snprintf(p2, sizeof(p2), "%s/%s", dirs[j], below[k]);
				if (pol_is_sensitive(c, p1, NULL) !=
					    pol_is_sensitive(c, p2, NULL) &&
				    !pol_sensitive_below_differs(c, dirs[i], dirs[j]))
					fail_msg("%s -> %s changes %s", dirs[i], dirs[j], below[k]);
			}
	pol_config_free(c);
}

static void test_pol_request_summary_changes(void **state)
{
	(void)state;
	static const struct {
		unsigned access;
		const char *path2, *summary;
	} cases[] = {
		{POL_ACC_DELETE, NULL, "delete .env"},
		{POL_ACC_CHMOD, NULL, "chmod .env"},
		{POL_ACC_CHOWN, NULL, "chown .env"},
		{POL_ACC_UTIMES, NULL, "utimes .env"},
		{POL_ACC_XATTR, NULL, "setxattr .env"},
		{POL_ACC_TRUNCATE, NULL, "truncate .env"},
		{POL_ACC_CHMOD | POL_ACC_UTIMES, NULL, "chmod+utimes .env"},
		{POL_ACC_RENAME_FROM, "x", "rename .env -> x"},
		{POL_ACC_RENAME_FROM | POL_ACC_RENAME_TO, "x", "rename .env -> x"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pol_request *r =
			pol_request_open(".env", cases[i].path2, cases[i].access, NULL);
		char *s = pol_request_summary(r);
		assert_string_equal(s, cases[i].summary);
		free(s);
		pol_request_free(r);
	}
	struct pol_request *r = pol_request_open(".env", NULL, POL_ACC_CHMOD | POL_ACC_XATTR, NULL);
	char *j = pol_request_json(r);
	assert_non_null(strstr(j, "\"access\":[\"chmod\",\"xattr\"]"));
	free(j);
	pol_request_free(r);
}

/* A control file is decided (never the fast path, never covered), and a
 * rule may allow it. */
static void test_pol_decide_control_file(void **state)
{
	(void)state;
	struct pol_config *c = parse("{\"rules\": [{\"action\": \"allow\", \"path\": "
				     "\".git/config\", \"access\": \"write\"}]}");
	struct pol_context ctx = {.covered = true};
	struct pol_decision d;
	struct pol_request *r = pol_request_open(".git/hooks/pre-commit", NULL,
						 POL_ACC_WRITE | POL_ACC_CREATE, NULL);
	pol_decide(r, c, NULL, &ctx, 0, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	assert_non_null(strstr(d.reason, "control file"));
	pol_request_free(r);
	r = pol_request_open(".git/config.lock", ".git/config", POL_ACC_RENAME_TO, NULL);
	pol_decide(r, c, NULL, &ctx, 0, &d);
	assert_int_equal(d.verdict, POL_ALLOW); /* the rule names .git/config */
	assert_int_equal(d.source, POL_SRC_RULE);
	pol_request_free(r);
	r = pol_request_open(".git/config", NULL, POL_ACC_WRITE, NULL);
	pol_decide(r, c, NULL, &ctx, 0, &d);
	assert_int_equal(d.verdict, POL_ALLOW);
	pol_request_free(r);
	pol_config_free(c);
	/* An allow rule for one side of a rename does not allow the other
	 * side when that one is a control or sensitive file. */
	c = parse("{\"rules\": [{\"action\": \"allow\", \"path\": \"docs/**\", "
		  "\"access\": \"write\"}]}");
	static const char *const onto[] = {".git/config", ".env", ".git/hooks/pre-commit"};
	for (size_t i = 0; i < sizeof(onto) / sizeof(onto[0]); i++) {
		r = pol_request_open("docs/x", onto[i], POL_ACC_RENAME_TO, NULL);
		pol_decide(r, c, NULL, NULL, 0, &d);
		if (d.verdict == POL_ALLOW)
			fail_msg("docs/** allowed docs/x -> %s", onto[i]);
		pol_request_free(r);
		r = pol_request_open(onto[i], "docs/x", POL_ACC_RENAME_FROM, NULL);
		pol_decide(r, c, NULL, NULL, 0, &d);
		if (d.verdict == POL_ALLOW)
			fail_msg("docs/** allowed %s -> docs/x", onto[i]);
		pol_request_free(r);
	}
	r = pol_request_open("docs/a", "docs/b", POL_ACC_RENAME_FROM, NULL);
	pol_decide(r, c, NULL, NULL, 0, &d);
	assert_int_equal(d.verdict, POL_ALLOW);
	pol_request_free(r);
	pol_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pol_is_control_defaults),
		cmocka_unit_test(test_pol_is_control_config),
		cmocka_unit_test(test_pol_config_control_files_invalid),
		cmocka_unit_test(test_pol_control_below_differs),
		cmocka_unit_test(test_pol_is_sensitive_basename_exemption),
		cmocka_unit_test(test_pol_sensitive_below_differs),
		cmocka_unit_test(test_pol_request_summary_changes),
		cmocka_unit_test(test_pol_decide_control_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
