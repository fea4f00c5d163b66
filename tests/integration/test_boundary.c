/*
 * test_boundary: what crosses the sandbox's boundary besides execs and
 * opens, with the real warden: secrets in the environment that started it
 * (removed from the agent's, unless its profile needs them or the config
 * keeps them, and named, never shown, at start), and the --prompt tty
 * question (it carries the session's code, and the agent's writes to the
 * terminal stop while it is shown).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define V_AWS  "aws-secret-value-61f0"
#define V_GH   "gh-token-value-2a9d"
#define V_API  "my-api-key-value-77c1"
#define V_KEEP "kept-token-value-03be"
#define V_ANTH "anthropic-key-value-5e12"

struct fx {
	char *proj;
	char *db;
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	free(f->proj);
	free(f->db);
	free(f);
	return 0;
}

static void set_secrets(void)
{
	setenv("AWS_SECRET_ACCESS_KEY", V_AWS, 1);
	setenv("GITHUB_TOKEN", V_GH, 1);
	setenv("MY_SERVICE_API_KEY", V_API, 1);
	setenv("KEEPME_TOKEN", V_KEEP, 1);
	setenv("ANTHROPIC_API_KEY", V_ANTH, 1);
}

static void clear_secrets(void)
{
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("GITHUB_TOKEN");
	unsetenv("MY_SERVICE_API_KEY");
	unsetenv("KEEPME_TOKEN");
	unsetenv("ANTHROPIC_API_KEY");
}

/* The agent prints its own environment (no longer a fast-path command:
 * the aggressive tier lets it run, so what the agent holds is seen). */
static void test_boundary_env_secrets_removed(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"env\": {\"keep\": [\"KEEPME_TOKEN\"]}}\n");
	set_secrets();
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--agent", "none", "--", "/bin/sh",
		  "-c", "cat /proc/self/environ | tr '\\000' '\\n'", NULL);
	clear_secrets();
	print_message("out: %.2000s\nerr: %s\n", r.out, r.err);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "PATH="));
	assert_null(strstr(r.out, V_AWS));
	assert_null(strstr(r.out, V_GH));
	assert_null(strstr(r.out, V_API));
	/* No profile asked for it: the harness key goes too. */
	assert_null(strstr(r.out, V_ANTH));
	/* The config keeps this one. */
	assert_non_null(strstr(r.out, "KEEPME_TOKEN=" V_KEEP));
	/* One line at start names what was removed, never a value. */
	const char *line = strstr(r.err, "removed from the agent's environment");
	assert_non_null(line);
	const char *eol = strchr(line, '\n');
	char *l = wd_strndup(line, eol ? (size_t)(eol - line) : strlen(line));
	assert_non_null(strstr(l, "AWS_SECRET_ACCESS_KEY"));
	assert_non_null(strstr(l, "GITHUB_TOKEN"));
	assert_non_null(strstr(l, "MY_SERVICE_API_KEY"));
	assert_null(strstr(l, "KEEPME_TOKEN"));
	free(l);
	assert_null(strstr(r.err, V_AWS));
	assert_null(strstr(r.err, V_GH));
	assert_null(strstr(r.err, V_API));
	wt_result_free(&r);
}

/* The profile's own key reaches the harness; the rest does not. */
static void test_boundary_env_profile_key_kept(void **state)
{
	struct fx *f = *state;
	set_secrets();
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--agent", "claude-code", "--",
		  "/bin/sh", "-c", "cat /proc/self/environ | tr '\\000' '\\n'", NULL);
	clear_secrets();
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "ANTHROPIC_API_KEY=" V_ANTH));
	assert_null(strstr(r.out, V_AWS));
	assert_null(strstr(r.out, V_GH));
	assert_null(strstr(r.out, V_KEEP));
	wt_result_free(&r);
}

/* The code warden printed before the agent ran, from the pty's text. */
static char *session_code(const char *acc)
{
	const char *p = strstr(acc, "this session's code is ");
	if (!p)
		return NULL;
	p += strlen("this session's code is ");
	return wd_strndup(p, 5);
}

/* Every real question shows the session's code. */
static void test_boundary_tty_question_has_code(void **state)
{
	struct fx *f = *state;
	char *argv[] = {"run",	    "--tier", "standard",
			"--prompt", "tty",    "--",
			"/bin/sh",  "-c",     "touch nope; echo rc=$?",
			NULL};
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	char *acc = NULL;
	assert_true(wt_expect(master, "[r] reject", 10000, &acc));
	char *code = session_code(acc);
	assert_non_null(code);
	wd_autofree char *tag =
		wd_asprintf("warden [%s]: the agent wants to run: touch nope", code);
	wd_autofree char *line = wd_asprintf("[%s] [a] allow once", code);
	assert_non_null(strstr(acc, tag));
	assert_non_null(strstr(acc, line));
	/* It was shown before the agent ran: before the question. */
	assert_true(strstr(acc, "this session's code is") < strstr(acc, tag));
	dprintf(master, "r\n");
	assert_true(wt_expect(master, "rc=126", 10000, &acc));
	waitpid(w, NULL, 0);
	close(master);
	free(code);
	free(acc);
}

/* A process of the agent writes to the terminal while warden asks: it is
 * stopped until the answer, then goes on. */
static void test_boundary_tty_agent_stopped_while_asking(void **state)
{
	struct fx *f = *state;
	const char *script = "( n=0; while :; do echo PAINT$n > /dev/tty; n=$((n+1)); i=0;"
			     " while [ $i -lt 2000 ]; do i=$((i+1)); done; done ) &\n"
			     "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done\n"
			     "touch nope\necho rc=$?\n"
			     /* The session lasts until the test ends it: a
			      * busy loop here could end it before a starved
			      * painter wrote again. */
			     "wait\n";
	wt_write(f->proj, "agent.sh", script);
	char *argv[] = {"run", "--tier",  "standard", "--prompt", "tty",
			"--",  "/bin/sh", "agent.sh", NULL};
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	char *acc = NULL;
	assert_true(wt_expect(master, "[r] reject", 10000, &acc));
	assert_non_null(strstr(acc, "PAINT")); /* it was painting before */
	/* While the question is shown: nothing more from the painter. */
	size_t asked = strlen(acc);
	wt_expect(master, "(nothing to wait for)", 1500, &acc);
	const char *after = acc + asked;
	if (strstr(after, "PAINT"))
		fail_msg("the agent wrote to the terminal while warden asked:\n%.300s", after);
	/* Given back: the painter goes on. */
	size_t answered = strlen(acc);
	dprintf(master, "r\n");
	assert_true(wt_expect(master, "rc=126", 10000, &acc));
	wt_expect(master, "PAINT", 5000, &acc);
	if (!strstr(acc + answered, "PAINT"))
		fail_msg("the agent's writer did not go on after the answer:\n%.400s",
			 acc + answered);
	kill(w, SIGTERM);
	waitpid(w, NULL, 0);
	close(master);
	free(acc);
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_boundary_env_secrets_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_boundary_env_profile_key_kept, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_boundary_tty_question_has_code, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_boundary_tty_agent_stopped_while_asking, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
