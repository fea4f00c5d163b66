/*
 * test_policy_names.c: the names a program answers to: the name it was
 * invoked by, the file it really is (symlink chains, multi-call applets)
 * and a program the agent could write, each decided as what really runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grammar.h"
#include "policy.h"
#include "policy_int.h"

#include "grammar_fx.h"

/* ---- 2: the names a program answers to -------------------------------------------- */

struct name_case {
	const char *path;	   /* as invoked; its final file is read on this machine */
	const char *resolved_base; /* what the final file is called on Debian 12 */
	const char *interp;
	const char *argv[6];
	enum pol_verdict verdict;
	enum pol_source source;
};

static const struct name_case name_cases[] = {
	{"/usr/sbin/shutdown",
	 "systemctl",
	 NULL,
	 {"shutdown", "-h", "now", NULL},
	 POL_DENY_CRITICAL,
	 POL_SRC_HARD_DENY},
	{"/usr/sbin/reboot",
	 "systemctl",
	 NULL,
	 {"reboot", NULL},
	 POL_DENY_CRITICAL,
	 POL_SRC_HARD_DENY},
	{"/usr/sbin/halt", "systemctl", NULL, {"halt", NULL}, POL_DENY_CRITICAL, POL_SRC_HARD_DENY},
	{"/usr/sbin/poweroff",
	 "systemctl",
	 NULL,
	 {"poweroff", NULL},
	 POL_DENY_CRITICAL,
	 POL_SRC_HARD_DENY},
	/* the invoked name alone: argv[0] says something else */
	{"/usr/sbin/shutdown",
	 "systemctl",
	 NULL,
	 {"ls", NULL},
	 POL_DENY_CRITICAL,
	 POL_SRC_HARD_DENY},
	/* systemctl by its own path, told by argv[0] to be reboot */
	{"/usr/bin/systemctl",
	 "systemctl",
	 NULL,
	 {"reboot", NULL},
	 POL_DENY_CRITICAL,
	 POL_SRC_HARD_DENY},
	{"/usr/sbin/init",
	 "systemd",
	 NULL,
	 {"init", "0", NULL},
	 POL_DENY_CRITICAL,
	 POL_SRC_HARD_DENY},
	{"/usr/bin/which",
	 "which.debianutils",
	 "/bin/sh",
	 {"which", "ls", NULL},
	 POL_ALLOW,
	 POL_SRC_FAST_PATH},
	{"/usr/bin/which",
	 "which.debianutils",
	 "/bin/sh",
	 {"which", "-a", "git", NULL},
	 POL_ALLOW,
	 POL_SRC_FAST_PATH},
	{"/usr/bin/which",
	 "which.debianutils",
	 "/bin/sh",
	 {"which", "--frob", "git", NULL},
	 POL_UNDECIDED,
	 POL_SRC_NONE},
	/* git dispatches on argv[0]: git-archive log runs git archive */
	{"/usr/bin/git",
	 "git",
	 NULL,
	 {"git-archive", "log", "-o", "/tmp/x", NULL},
	 POL_UNDECIDED,
	 POL_SRC_NONE},
	{"/usr/bin/git", "git", NULL, {"git-log", "--oneline", NULL}, POL_ALLOW, POL_SRC_FAST_PATH},
	{"/usr/bin/git", "git", NULL, {"git-push", "--force", NULL}, POL_UNDECIDED, POL_SRC_NONE},
	{"/usr/lib/git-core/git-log",
	 "git",
	 NULL,
	 {"git-archive", "x", NULL},
	 POL_UNDECIDED,
	 POL_SRC_NONE},
	{"/usr/bin/git", "git", NULL, {"ls", "status", NULL}, POL_ALLOW, POL_SRC_FAST_PATH},
	/* a program not multi-call: argv[0] is only a name */
	{"/usr/bin/touch", "touch", NULL, {"ls", "x", NULL}, POL_UNDECIDED, POL_SRC_NONE},
	{"/bin/sh", "dash", NULL, {"sh", "-c", "ls", NULL}, POL_ALLOW, POL_SRC_FAST_PATH},
	{"/bin/sh",
	 "dash",
	 NULL,
	 {"sh", "-c", "shutdown -h now", NULL},
	 POL_DENY_CRITICAL,
	 POL_SRC_HARD_DENY},
};

/* The real link chain of |path| on this machine: its final file's name
 * must be the one in the table (the table is Debian 12's). */
static bool chain_is(const char *path, const char *base, char *resolved)
{
	if (!realpath(path, resolved))
		return false;
	const char *b = strrchr(resolved, '/');
	return b && strcmp(b + 1, base) == 0;
}

static void test_pol_decide_invoked_names(void **state)
{
	(void)state;
	struct pol_config *c = config();
	int bad = 0, skipped = 0;
	for (size_t i = 0; i < WD_ARRAY_SIZE(name_cases); i++) {
		const struct name_case *nc = &name_cases[i];
		char resolved[PATH_MAX];
		if (!chain_is(nc->path, nc->resolved_base, resolved)) {
			fprintf(stderr, "names row %zu: %s does not lead to %s here: skipped\n", i,
				nc->path, nc->resolved_base);
			skipped++;
			continue;
		}
		struct pol_exec_desc d = {
			.path = nc->path,
			.interp = nc->interp,
			.argv = (char *const *)nc->argv,
			.cwd = PROJECT,
			.resolved = strcmp(resolved, nc->path) == 0 ? NULL : resolved,
		};
		struct pol_request *r = pol_request_exec(&d, PROJECT);
		struct pol_decision out;
		pol_decide(r, c, NULL, NULL, 0, &out);
		if (out.verdict != nc->verdict || out.source != nc->source) {
			fprintf(stderr, "names row %zu %s as %s: got %s/%s (%s)\n", i, nc->path,
				nc->argv[0], pol_verdict_name(out.verdict),
				pol_source_name(out.source), out.reason);
			bad++;
		}
		pol_request_free(r);
	}
	pol_config_free(c);
	assert_int_equal(bad, 0);
	/* The chains this table names are Debian 12's; they were all found. */
	assert_int_equal(skipped, 0);
}

/* A program the agent can have written is never read-only by name; hard
 * deny still applies to it. */
static void test_pol_decide_agent_writable_program(void **state)
{
	(void)state;
	struct pol_config *c = config();
	char *ls[] = {"ls", NULL};
	struct pol_exec_desc d = {.path = "/tmp/bin/ls",
				  .argv = ls,
				  .cwd = PROJECT,
				  .agent_writable = true,
				  .agent_writable_why = "/tmp"};
	struct pol_request *r = pol_request_exec(&d, PROJECT);
	struct pol_decision out;
	pol_decide(r, c, NULL, NULL, 0, &out);
	assert_int_equal(out.verdict, POL_UNDECIDED);
	pol_request_free(r);
	char *sd[] = {"shutdown", "now", NULL};
	d.path = "/tmp/bin/shutdown";
	d.argv = sd;
	r = pol_request_exec(&d, PROJECT);
	pol_decide(r, c, NULL, NULL, 0, &out);
	assert_int_equal(out.verdict, POL_DENY_CRITICAL);
	pol_request_free(r);
	pol_config_free(c);
}

static void test_cls_multicall_applet_table(void **state)
{
	(void)state;
	static const struct {
		const char *prog, *arg0, *want;
	} t[] = {
		{"git", "git-archive", "git-archive"},
		{"git", "/x/git-log", "git-log"},
		{"git", "git", NULL},
		{"git", "ls", NULL},
		{"git", "git-", NULL},
		{"busybox", "ls", "ls"},
		{"busybox", "busybox", NULL},
		{"toybox", "cat", "cat"},
		{"coreutils", "sort", "sort"},
		{"systemctl", "shutdown", "shutdown"},
		{"systemctl", "reboot", "reboot"},
		{"systemctl", "halt", "halt"},
		{"systemctl", "poweroff", "poweroff"},
		{"systemctl", "telinit", "telinit"},
		{"systemctl", "ls", NULL},
		{"systemd", "init", "init"},
		{"ls", "rm", NULL},
		{"touch", "ls", NULL},
	};
	for (size_t i = 0; i < WD_ARRAY_SIZE(t); i++) {
		const char *got = pol_cls_multicall_applet(t[i].prog, t[i].arg0);
		if (t[i].want)
			assert_string_equal(got ? got : "(null)", t[i].want);
		else
			assert_null(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pol_decide_invoked_names),
		cmocka_unit_test(test_pol_decide_agent_writable_program),
		cmocka_unit_test(test_cls_multicall_applet_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
