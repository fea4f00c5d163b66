/*
 * test_exitcodes: every case of the README's "Exit codes" table, run with
 * the real binary: the agent's own status, 128+N, 125 for each way warden
 * run cannot start the agent, and 2, 1 and 0 for the other commands.
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

/* One row of the table: warden ARGS in the project (PROJ in an argument is
 * replaced by the project's path) and the status it must exit with. */
struct exit_case {
	const char *row; /* the README's row it checks */
	const char *args[10];
	int status;
	const char *config; /* written as .warden/permissions.json first, or NULL */
	const char *err;    /* a substring of stderr, or NULL */
};

static const struct exit_case cases[] = {
	/* warden run: the agent's own status, 128+N. */
	{"the agent's",
	 {"run", "--tier", "passive", "--", "/bin/sh", "-c", "exit 7"},
	 7,
	 NULL,
	 NULL},
	{"the agent's",
	 {"run", "--tier", "passive", "--", "/bin/sh", "-c", "exit 0"},
	 0,
	 NULL,
	 NULL},
	{"128+N",
	 {"run", "--tier", "passive", "--", "/bin/sh", "-c", "kill -KILL $$"},
	 128 + 9,
	 NULL,
	 NULL},
	{"128+N",
	 {"run", "--tier", "passive", "--", "/bin/sh", "-c", "kill -TERM $$"},
	 128 + 15,
	 NULL,
	 NULL},
	/* warden run: 125, nothing ran. */
	{"125 bad options",
	 {"run", "--tire", "passive", "--", "/bin/true"},
	 125,
	 NULL,
	 "unknown option --tire"},
	{"125 bad options",
	 {"run", "--tier", "lenient", "--", "/bin/true"},
	 125,
	 NULL,
	 "--tier must be"},
	{"125 bad options", {"run", "--tier", "passive"}, 125, NULL, "needs a command"},
	{"125 bad options",
	 {"run", "--approval-timeout", "25h", "--", "/bin/true"},
	 125,
	 NULL,
	 "maximum, 24h"},
	{"125 project",
	 {"run", "--project", "PROJ/README.md", "--", "/bin/true"},
	 125,
	 NULL,
	 "not a directory"},
	{"125 project",
	 {"run", "--project", "PROJ/missing", "--", "/bin/true"},
	 125,
	 NULL,
	 "no such directory"},
	{"125 project", {"run", "--project", "/", "--", "/bin/true"}, 125, NULL, "--force"},
	{"125 invalid config",
	 {"run", "--", "/bin/true"},
	 125,
	 "{\"tier\": \"lenient\"}\n",
	 "fix the config"},
	{"125 audit",
	 {"run", "--tier", "passive", "--audit", "PROJ", "--", "/bin/true"},
	 125,
	 NULL,
	 NULL},
	{"125 command not found",
	 {"run", "--tier", "passive", "--", "/nonexistent/agent"},
	 125,
	 NULL,
	 "command not found"},
	/* Other commands: 2, bad usage. */
	{"2", {NULL}, 2, NULL, NULL},
	{"2", {"frobnicate"}, 2, NULL, "unknown command"},
	{"2", {"audit", "--bogus"}, 2, NULL, "warden audit: unknown option --bogus"},
	{"2", {"audit", "--since", "yesterday"}, 2, NULL, "--since"},
	{"2", {"approvals", "--format", "xml"}, 2, NULL, "--format"},
	{"2", {"approve"}, 2, NULL, NULL},
	{"2", {"config", "check", "--bogus"}, 2, NULL, "unknown option"},
	{"2", {"config", "frobnicate"}, 2, NULL, NULL},
	{"2", {"explain"}, 2, NULL, NULL},
	{"2", {"rules", "propose", "--min-count", "banana"}, 2, NULL, "--min-count"},
	{"2", {"version", "extra"}, 2, NULL, NULL},
	/* Other commands: 1, a negative answer. */
	{"1", {"approve", "zzzz-999"}, 1, NULL, "no running session"},
	{"1", {"deny", "zzzz-999"}, 1, NULL, "no running session"},
	{"1", {"config", "check"}, 1, "{\"tier\": \"lenient\"}\n", "permissions.json:1"},
	{"1", {"config", "check", "PROJ/none.json"}, 1, NULL, "none.json"},
	{"1", {"doctor", "--project", "PROJ"}, 1, "{\"tier\": \"lenient\"}\n", NULL},
	/* Other commands: 0. */
	{"0", {"version"}, 0, NULL, NULL},
	{"0", {"help"}, 0, NULL, NULL},
	{"0", {"help", "audit"}, 0, NULL, NULL},
	{"0", {"config", "check"}, 0, NULL, NULL},
	{"0", {"config", "check"}, 0, "{\"tier\": \"passive\"}\n", NULL},
	{"0", {"explain", "--", "ls"}, 0, NULL, NULL},
};

static void test_exitcodes_readme_table(void **state)
{
	struct wt_fx *f = *state;
	char *cfg = wd_asprintf("%s/.warden/permissions.json", f->proj);
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		const struct exit_case *c = &cases[i];
		unlink(cfg);
		if (c->config)
			wt_write(f->proj, ".warden/permissions.json", c->config);
		char *argv[12] = {0};
		char *owned[12] = {0};
		for (size_t k = 0; c->args[k]; k++) {
			const char *a = c->args[k];
			if (strncmp(a, "PROJ", 4) == 0)
				a = owned[k] = wd_asprintf("%s%s", f->proj, a + 4);
			argv[k] = (char *)a;
		}
		struct wt_result r;
		wt_wardenv_prep(f->proj, argv, NULL, NULL, 60000, &r);
		print_message("[%s] warden %s %s: %d\nerr: %s\n", c->row, argv[0] ? argv[0] : "",
			      argv[0] && argv[1] ? argv[1] : "", r.status, r.err);
		assert_int_equal(r.status, c->status);
		if (c->err)
			assert_non_null(strstr(r.err, c->err));
		wt_result_free(&r);
		for (size_t k = 0; k < WD_ARRAY_SIZE(owned); k++)
			free(owned[k]);
	}
	free(cfg);
}

/* 125 means nothing ran: the agent's command never executed. */
static void test_exitcodes_125_runs_nothing(void **state)
{
	struct wt_fx *f = *state;
	char *marker = wd_asprintf("%s/ran", f->proj);
	char *script = wd_asprintf("touch %s", marker);
	wt_write(f->proj, ".warden/permissions.json", "{\"tier\": \"lenient\"}\n");
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c", script, NULL);
	assert_int_equal(r.status, 125);
	wt_result_free(&r);
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--bogus", "--", "/bin/sh", "-c",
		  script, NULL);
	assert_int_equal(r.status, 125);
	wt_result_free(&r);
	struct stat st;
	assert_int_not_equal(stat(marker, &st), 0);
	free(marker);
	free(script);
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exitcodes_readme_table, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_exitcodes_125_runs_nothing, wt_fx_setup,
						wt_fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
