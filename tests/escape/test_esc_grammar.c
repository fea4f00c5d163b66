/*
 * test_esc_grammar: the fast path's grammars under the real `warden run`.
 * Each case is a command line that a partial reading took for a read-only
 * one (a GNU option prefix, the value of git --git-dir, git's and
 * systemctl's argv[0] dispatch, dash -cs, a login shell with the agent's
 * HOME, time -o, GIT_TRACE, /proc/self/environ): run in the passive tier,
 * where anything that is not read-only is refused, its marker file must
 * never appear (and a hard-denied one is audited as such). Two cases check
 * that ordinary reads still take the fast path in the test's own (large)
 * environment.
 *
 * Safety: every command is harmless if it ran: markers live in the
 * temporary project, and systemctl started as "shutdown" is given --help.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ENV_SECRET "WARDEN_GRAMMAR_ENV_SECRET_51c7"

struct fx {
	char *proj;
	char *db;
};

static int sh(const char *cwd, const char *cmd)
{
	char *full = wd_asprintf("cd '%s' && %s >/dev/null 2>&1", cwd, cmd);
	int rc = system(full);
	free(full);
	return rc;
}

static int setup(void **state)
{
	wt_require_sandbox();
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# grammar\n");
	/* A repository with a branch named "log" and a git dir reachable as
	 * "log": the words a partial reading takes for "git log". */
	if (sh(f->proj,
	       "git init -q . && git -c user.email=t@t -c user.name=t add README.md && "
	       "git -c user.email=t@t -c user.name=t commit -qm init && git branch log") != 0)
		fail_msg("git init failed");
	/* The shell itself writes these (a redirect, no exec to decide). */
	wt_write(f->proj, "payload.sh", "echo ran > stdin-ran\n");
	wt_write(f->proj, "fakehome/.profile", "echo ran > profile-ran\n");
	wt_write(f->proj, "fakehome/.bash_profile", "echo ran > profile-ran\n");
	/* a file named like a print-only sed script */
	wt_write(f->proj, "p", "line\n");
	setenv("GRAMMAR_TEST_TOKEN", ENV_SECRET, 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	unsetenv("GRAMMAR_TEST_TOKEN");
	wt_rmtree(f->proj);
	free(f->proj);
	free(f->db);
	free(f);
	return 0;
}

static bool exists(const struct fx *f, const char *name)
{
	char *p = wd_asprintf("%s/%s", f->proj, name);
	struct stat st;
	bool e = lstat(p, &st) == 0;
	free(p);
	return e;
}

/* Runs |text| as the agent (`/bin/sh agent.sh`) in |tier|. */
static void agent(const struct fx *f, struct wt_result *r, const char *tier, const char *text)
{
	wt_write(f->proj, "agent.sh", text);
	wt_warden(f->proj, r, "run", "--tier", tier, "--", "/bin/sh", "agent.sh", NULL);
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", r->status, r->out, r->err);
}

static void refused(void **state, const char *text, const char *marker)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	agent(f, &r, "passive", text);
	if (exists(f, marker))
		fail_msg("ESCAPE FOUND: %s ran as a read-only command (%s exists)", text, marker);
	wt_result_free(&r);
}

static void test_esc_grammar_sort_output_prefix(void **state)
{
	refused(state, "sort --outp=sorted README.md\n", "sorted");
}

static void test_esc_grammar_sed_expression_prefix(void **state)
{
	refused(state, "sed -n --expr='w sed-wrote' p\n", "sed-wrote");
}

static void test_esc_grammar_time_output(void **state)
{
	refused(state, "/usr/bin/time -o time-wrote ls\n", "time-wrote");
}

static void test_esc_grammar_git_trace_env(void **state)
{
	refused(state, "GIT_TRACE=\"$PWD/trace-wrote\"; export GIT_TRACE\ngit version\n",
		"trace-wrote");
}

/* "log" is --git-dir's value: git archive runs, not git log. */
static void test_esc_grammar_git_dir_value(void **state)
{
	struct fx *f = *state;
	sh(f->proj, "ln -sfn .git log");
	refused(state, "git --git-dir log archive -o archived.tar HEAD\n", "archived.tar");
}

/* git started as git-archive runs git archive ("log" is the branch). The
 * agent is perl (its own start-up); its child's exec is the request. */
static void test_esc_grammar_git_argv0(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	char *argv[] = {"run",
			"--tier",
			"passive",
			"--",
			"perl",
			"-e",
			"if (!fork) { exec {\"/usr/bin/git\"} \"git-archive\", \"log\", \"-o\", "
			"\"argv0.tar\" } wait",
			NULL};
	wt_wardenv(f->proj, argv, &r);
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", r.status, r.out, r.err);
	if (exists(f, "argv0.tar"))
		fail_msg("ESCAPE FOUND: git started as git-archive ran as git log");
	wt_result_free(&r);
}

/* dash -cs runs the string, then the script on its stdin. */
static void test_esc_grammar_sh_cs(void **state)
{
	refused(state, "sh -cs true < payload.sh\n", "stdin-ran");
}

/* A login shell with a HOME the agent wrote runs its .profile. */
static void test_esc_grammar_login_shell_home(void **state)
{
	refused(state, "HOME=\"$PWD/fakehome\"; export HOME\nbash -lc true\n", "profile-ran");
}

/* /proc/self/environ prints the environment, secrets included. */
static void test_esc_grammar_proc_environ(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	agent(f, &r, "passive",
	      "grep -a -o 'WARDEN_GRAMMAR_ENV_S[0-9A-Za-z_]*' /proc/self/environ\n"
	      "cat /proc/self/environ\n");
	if ((r.out && strstr(r.out, ENV_SECRET)) || (r.err && strstr(r.err, ENV_SECRET)))
		fail_msg("ESCAPE FOUND: /proc/self/environ was printed on the fast path");
	wt_result_free(&r);
}

/* systemctl started as "shutdown" is shutdown: hard-denied, whatever the
 * path, even for the agent's own start-up. */
static void test_esc_grammar_systemctl_argv0(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	char *argv[] = {
		"run",
		"--tier",
		"aggressive",
		"--",
		"perl",
		"-e",
		"if (!fork) { exec {\"/usr/bin/systemctl\"} \"shutdown\", \"--help\" } wait",
		NULL};
	wt_wardenv(f->proj, argv, &r);
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", r.status, r.out, r.err);
	assert_true(wt_audit_count(f->db, "deny", "hard_deny", "shutdown", NULL) >= 1);
	wt_result_free(&r);
}

/* Ordinary reads still take the fast path in this process's environment
 * (dozens of variables no fast-path program reads). */
static void test_esc_grammar_reads_stay_fast(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	agent(f, &r, "passive", "ls\nwhich ls\ngit status --porcelain\nsort README.md\n");
	assert_true(wt_audit_count(f->db, "allow", "fast_path", "=ls", NULL) >= 1);
	assert_true(wt_audit_count(f->db, "allow", "fast_path", "which", NULL) >= 1);
	assert_true(wt_audit_count(f->db, "allow", "fast_path", "git status", NULL) >= 1);
	assert_true(wt_audit_count(f->db, "allow", "fast_path", "sort README.md", NULL) >= 1);
	wt_result_free(&r);
}

/* explain shows what every word parsed to. */
static void test_esc_grammar_explain_parsed(void **state)
{
	struct fx *f = *state;
	struct wt_result r = {0};
	wt_warden(f->proj, &r, "explain", "--", "sort", "--outp=x", "README.md", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "verdict:  undecided"));
	assert_non_null(strstr(r.out, "parsed:   names: invoked as sort"));
	assert_non_null(strstr(r.out, "parsed:   sort: --output=x (writes), operand README.md"));
	wt_result_free(&r);
	wt_warden(f->proj, &r, "explain", "--format", "json", "--", "bash", "-lc", "ls -l", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"parsed\":"));
	assert_non_null(strstr(r.out, "ls: -l (harmless)"));
	wt_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_esc_grammar_sort_output_prefix, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_grammar_sed_expression_prefix, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_grammar_time_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_grammar_git_trace_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_grammar_git_dir_value, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_grammar_git_argv0, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_grammar_sh_cs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_grammar_login_shell_home, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_grammar_proc_environ, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_grammar_systemctl_argv0, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_grammar_reads_stay_fast, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_grammar_explain_parsed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
