/*
 * test_explain.c: `warden explain --open` says what a session does with
 * the same open. Each case is run twice in one project: by a real
 * `warden run` (a shell redirection: the open is the shell's own, no exec
 * to decide) and by `warden explain --format json --open`; the two must
 * agree on whether the view asks warden (an open row in the audit) and on
 * the outcome under the project's tier (passive: what is asked is refused).
 */
#include "common.h"
#include "wt.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct open_case {
	const char *path;    /* as the agent names it, from the project */
	bool write;	     /* O_WRONLY|O_APPEND, else O_RDONLY */
	const char *audited; /* the audit summary of its row when decided */
	bool decided;	     /* what a session does (checked against the run too) */
	bool allowed;
};

static char *g_proj, *g_out, *g_home;

static void check_case(const struct open_case *c)
{
	/* The run: the shell opens the file itself. */
	char *script = c->write ? wd_asprintf("if echo x >> '%s'; then echo OPENED; fi", c->path)
				: wd_asprintf("if read x < '%s'; then echo OPENED; fi", c->path);
	char *db = wd_asprintf("%s/.warden/audit.db", g_proj);
	char *want = wd_asprintf("=%s", c->audited);
	int before = wt_audit_count(db, NULL, NULL, want, NULL);
	struct wt_result run = {0};
	wt_warden(g_proj, &run, "run", "--prompt", "none", "--", "/bin/sh", "-c", script, NULL);
	bool opened = strstr(run.out, "OPENED") != NULL;
	bool asked = wt_audit_count(db, NULL, NULL, want, NULL) > before;

	/* explain, for the same path and access. */
	struct wt_result ex = {0};
	if (c->write)
		wt_warden(g_proj, &ex, "explain", "--format", "json", "--open", c->path, "--write",
			  NULL);
	else
		wt_warden(g_proj, &ex, "explain", "--format", "json", "--open", c->path, NULL);
	assert_int_equal(ex.status, 0);
	bool ex_decided = strstr(ex.out, "\"needs_decision\":true") != NULL;
	bool ex_allowed = ex_decided ? strstr(ex.out, "\"verdict\":\"allow\"") != NULL
				     : strstr(ex.out, "\"route\":\"no decision\"") != NULL;
	if (ex_decided && strstr(ex.out, "\"tier\":\"passive: refused\""))
		ex_allowed = false;
	fprintf(stderr, "%s %s: run %s%s, explain %s\n", c->write ? "write" : "read", c->path,
		asked ? "asked, " : "", opened ? "opened" : "refused", ex.out);
	/* The session and explain agree. */
	assert_int_equal(asked, ex_decided);
	assert_int_equal(opened, ex_allowed);
	/* And both are what this case is. */
	assert_int_equal(asked, c->decided);
	assert_int_equal(opened, c->allowed);
	wt_result_free(&run);
	wt_result_free(&ex);
	free(script);
	free(db);
	free(want);
}

static void test_explain_open_plain_project_write(void **state)
{
	(void)state;
	check_case(&(struct open_case){"README.md", true, "write README.md", false, true});
}

static void test_explain_open_sensitive_read(void **state)
{
	(void)state;
	check_case(&(struct open_case){".env", false, "read .env", true, false});
}

static void test_explain_open_env_example(void **state)
{
	(void)state;
	check_case(&(struct open_case){".env.example", false, "read .env.example", false, true});
}

static void test_explain_open_etc_hosts(void **state)
{
	(void)state;
	check_case(&(struct open_case){"/etc/hosts", false, "read /etc/hosts", false, true});
}

static void test_explain_open_gated_place(void **state)
{
	(void)state;
	char *path = wd_asprintf("%s/gated/notes.txt", g_out);
	char *audited = wd_asprintf("read %s", path);
	check_case(&(struct open_case){path, false, audited, true, false});
	free(path);
	free(audited);
}

static void test_explain_open_control_write(void **state)
{
	(void)state;
	check_case(&(struct open_case){".git/config", true, "write .git/config", true, false});
	/* Reading a control file is not decided. */
	check_case(&(struct open_case){".git/config", false, "read .git/config", false, true});
}

/* The home is seen through a markers view: a sensitive name there is
 * decided, an ordinary file is not. */
static void test_explain_open_home_markers(void **state)
{
	(void)state;
	char *key = wd_asprintf("%s/notes/id_rsa", g_home);
	char *key_row = wd_asprintf("read %s", key);
	char *plain = wd_asprintf("%s/notes/plan.txt", g_home);
	char *plain_row = wd_asprintf("read %s", plain);
	check_case(&(struct open_case){key, false, key_row, true, false});
	check_case(&(struct open_case){plain, false, plain_row, false, true});
	free(key);
	free(key_row);
	free(plain);
	free(plain_row);
}

/* The text form: the tier's outcome, and no internal verdict names. */
static void test_explain_words(void **state)
{
	(void)state;
	struct wt_result r = {0};
	wt_warden(g_proj, &r, "explain", "--open", ".env", NULL);
	assert_non_null(strstr(r.out, "next:     the judge, then the tier (passive: refused)"));
	wt_result_free(&r);
	wt_warden(g_proj, &r, "explain", "--", "rm", "-rf", "/", NULL);
	assert_null(strstr(r.out, "deny_critical"));
	assert_non_null(strstr(r.out, "hard deny: no rule, judge or person can allow this"));
	wt_result_free(&r);
	wt_warden(g_proj, &r, "explain", "--format", "json", "--", "rm", "-rf", "/", NULL);
	assert_null(strstr(r.out, "deny_critical"));
	assert_non_null(strstr(r.out, "\"verdict\":\"hard_deny\""));
	wt_result_free(&r);
	/* An exec that goes on to the tier says what the tier does. */
	wt_warden(g_proj, &r, "explain", "--", "touch", "x", NULL);
	assert_non_null(strstr(r.out, "next:     the judge, then the tier (passive: refused)"));
	wt_result_free(&r);
	wt_warden(g_proj, &r, "explain", "--format", "json", "--", "touch", "x", NULL);
	assert_non_null(strstr(r.out, "\"tier\":\"passive: refused\""));
	wt_result_free(&r);
}

int main(void)
{
	wt_require_sandbox();
	g_proj = wt_project();
	g_out = wt_project(); /* a place outside the project, gated */
	wt_write(g_out, "gated/notes.txt", "gated\n");
	/* The home (HOME for explain and for the run): a markers view. */
	g_home = wt_project();
	wt_write(g_home, "notes/id_rsa", "KEY\n");
	wt_write(g_home, "notes/plan.txt", "a plan\n");
	setenv("HOME", g_home, 1);
	char *cfg = wd_asprintf("{\"tier\": \"passive\", \"outside\": [{\"path\": \"%s/gated\", "
				"\"mode\": \"gate\"}]}\n",
				g_out);
	wt_write(g_proj, ".warden/permissions.json", cfg);
	free(cfg);
	wt_write(g_proj, "README.md", "# readme\n");
	wt_write(g_proj, ".env", "SECRET=1\n");
	wt_write(g_proj, ".env.example", "SECRET=\n");
	wt_write(g_proj, ".git/config", "[core]\n");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explain_open_plain_project_write),
		cmocka_unit_test(test_explain_open_sensitive_read),
		cmocka_unit_test(test_explain_open_env_example),
		cmocka_unit_test(test_explain_open_etc_hosts),
		cmocka_unit_test(test_explain_open_gated_place),
		cmocka_unit_test(test_explain_open_control_write),
		cmocka_unit_test(test_explain_open_home_markers),
		cmocka_unit_test(test_explain_words),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	wt_rmtree(g_proj);
	wt_rmtree(g_out);
	wt_rmtree(g_home);
	free(g_home);
	free(g_proj);
	free(g_out);
	return rc;
}
