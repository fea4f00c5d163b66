/*
 * test_agents: real agent harnesses' exec shapes under `warden run`, with a
 * scripted stand-in for Claude Code (tests/helpers/prog_fake_claude.c) that
 * runs every tool call as Claude Code's exact bash wrapper and its find as
 * its own binary with argv[0] "bfs". A real seccomp filter, real
 * processes and a real SQLite audit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx {
	char *proj;
	char *db;
	char *agent;
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	f->agent = wt_helper("fake_claude");
	wt_write(f->proj, "README.md", "# a project\n");
	wt_write(f->proj, ".env", "API_TOKEN=do-not-read\n");
	wt_write(f->proj, "a.c", "int a(void) { return 1; }\n");
	wt_write(f->proj, "b.c", "int b(void) { return 2; }\n");
	wt_write(f->proj, "Makefile",
		 "all: a.o b.o\n"
		 "%.o: %.c\n"
		 "\tcc -c $< -o $@\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	free(f->proj);
	free(f->db);
	free(f->agent);
	free(f);
	return 0;
}

static bool exists(const char *dir, const char *name)
{
	char *p = wd_asprintf("%s/%s", dir, name);
	bool ok = access(p, F_OK) == 0;
	free(p);
	return ok;
}

/* The tool calls of the issue, one warden session, the audit checked row
 * by row. */
static void test_agents_claude_code_tool_calls(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"grants\":[{\"command\":[\"make\",\"-j2\"],\"by\":\"t\","
		 "\"at\":\"2026-01-01T00:00:00Z\"}]}\n");
	wt_write(f->proj, "script.txt",
		 "ls\n"
		 "cat README.md\n"
		 "cat .env\n"
		 "make -j2\n"
		 "@bfs ~ -delete\n");
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", f->agent, "script.txt", NULL);
	if (r.status != 0)
		fprintf(stderr, "warden: %d\nout:\n%s\nerr:\n%s\n", r.status, r.out, r.err);
	assert_int_equal(r.status, 0);

	/* ls and cat README.md: the fast path, shown as the model's command */
	assert_non_null(strstr(r.out, "call 1: ls -> status 0"));
	assert_non_null(strstr(r.out, "README.md"));
	assert_int_equal(wt_audit_count(f->db, "allow", "fast_path", "=[claude-code] ls", NULL), 1);
	assert_non_null(strstr(r.out, "call 2: cat README.md -> status 0"));
	assert_non_null(strstr(r.out, "# a project"));
	assert_int_equal(
		wt_audit_count(f->db, "allow", "fast_path", "=[claude-code] cat README.md", NULL),
		1);

	/* cat .env: refused before bash starts, the secret never printed */
	assert_int_equal(wt_audit_count(f->db, "deny", NULL, "=[claude-code] cat .env", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", NULL, "cat .env", NULL), 0);
	assert_null(strstr(r.out, "do-not-read"));
	assert_null(strstr(r.out, "call 3: cat .env -> status 0"));

	/* make -j2: one decision (the grant, matched on the inner command);
	 * make and its compiler runs are covered by it */
	assert_non_null(strstr(r.out, "call 4: make -j2 -> status 0"));
	assert_int_equal(wt_audit_count(f->db, "allow", "grant", "=[claude-code] make -j2", NULL),
			 1);
	/* make itself meets the same grant (grants come before coverage) */
	assert_int_equal(wt_audit_count(f->db, "allow", NULL, "=make -j2", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", "covered", "cc -c", NULL), 2);
	assert_int_equal(wt_audit_count(f->db, "deny", NULL, "make", NULL), 0);
	assert_int_equal(wt_audit_count(f->db, NULL, "tier", "cc", NULL), 0);
	assert_true(exists(f->proj, "a.o"));
	assert_true(exists(f->proj, "b.o"));

	/* bfs ~ -delete through the agent's own binary: a hard deny */
	assert_int_equal(wt_audit_count(f->db, "deny", "hard_deny", "bfs", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", NULL, "bfs", NULL), 0);
	assert_null(strstr(r.out, "call 5: @bfs ~ -delete -> status 0"));
	assert_true(exists(f->proj, "README.md"));
	wt_result_free(&r);
}

/* --agent claude-code: the harness's start-up exec (bash -c env) is
 * audited as start-up, not judged; without the profile it is a request
 * like any other (refused here by the passive tier). Tool calls are
 * attributed: every exec under the make wrapper carries its row id. */
static void test_agents_profile_startup_and_tool_calls(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"grants\":[{\"command\":[\"make\",\"-j2\"],\"by\":\"t\","
		 "\"at\":\"2026-01-01T00:00:00Z\"}]}\n");
	wt_write(f->proj, "script.txt", "ls\nmake -j2\n");
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--agent", "claude-code", "--", f->agent,
		  "script.txt", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(wt_audit_count(f->db, "allow", "startup", "bash -c env",
					"claude-code's own start-up"),
			 1);
	/* a start-up exec covers nothing: env (it prints every variable) is
	 * decided on its own, refused here by the passive tier */
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "=env", NULL), 1);
	wt_result_free(&r);
	/* the profile is recorded with the session, and tool calls group */
	struct wt_result a;
	wt_warden(f->proj, &a, "audit", "--tool-calls", NULL);
	assert_int_equal(a.status, 0);
	assert_non_null(strstr(a.out, "[claude-code] make -j2"));
	assert_non_null(strstr(a.out, "under it:"));
	assert_non_null(strstr(a.out, "cc -c"));
	wt_result_free(&a);

	wt_warden(f->proj, &r, "run", "--tier", "passive", "--agent", "none", "--", f->agent,
		  "script.txt", NULL);
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "bash -c env", NULL), 1);
	wt_result_free(&r);
}

/* A start-up shape is recognised only when the real system program runs
 * it: a copied binary exec'd by a child of the agent with argv {bash, -c,
 * env} is an ordinary request (refused by the passive tier), and so is the
 * real bash with BASH_ENV set. */
static void test_agents_startup_shape_needs_the_real_program(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	char *cp = wd_asprintf("cp /bin/echo %s/payload", f->proj);
	assert_int_equal(system(cp), 0);
	free(cp);
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--agent", "claude-code", "--",
		  "/bin/bash", "-c",
		  "(exec -a bash ./payload -c env); (BASH_ENV=/tmp/x exec bash -c env); true",
		  NULL);
	/* nothing passed as the harness's start-up ... */
	assert_int_equal(wt_audit_count(f->db, "allow", "startup", NULL, "claude-code's own"), 0);
	/* ... both were ordinary requests, refused */
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "payload] bash -c env", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "BASH_ENV", NULL), 1);
	wt_result_free(&r);
}

/* The stand-in's own find, run by the agent as bfs, reads and prints. */
static void test_agents_bfs_multicall_read_only(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "script.txt", "@bfs . -name README.md\n");
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", f->agent, "script.txt", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "./README.md"));
	assert_non_null(strstr(r.out, "-> status 0"));
	assert_int_equal(wt_audit_count(f->db, "allow", "fast_path", "bfs . -name README.md", NULL),
			 1);
	wt_result_free(&r);
}

/* An imitation of the wrapper is not unwrapped: it is an ordinary script,
 * refused under the passive tier, and nothing it holds runs. */
static void test_agents_imitation_not_unwrapped(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "script.txt", "ls' < /dev/null && touch pwned && eval 'ls\n");
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", f->agent, "script.txt", NULL);
	assert_int_equal(r.status, 0);
	/* The line is one inner command: eval runs `ls' ... 'ls` as a script
	 * with a redirect, a touch and an eval: not plain, so refused. */
	assert_false(exists(f->proj, "pwned"));
	assert_int_equal(wt_audit_count(f->db, "allow", "fast_path", "[claude-code]", NULL), 0);
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "[claude-code]", NULL), 1);
	wt_result_free(&r);
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_agents_claude_code_tool_calls, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_agents_profile_startup_and_tool_calls, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_agents_startup_shape_needs_the_real_program,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_agents_bfs_multicall_read_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_agents_imitation_not_unwrapped, setup,
						teardown),
	};
	return cmocka_run_group_tests_name("agents", tests, NULL, NULL);
}
