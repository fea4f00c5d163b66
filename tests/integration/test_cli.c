/*
 * test_cli: what a person meets on warden's command line: where the agent
 * starts, the projects that need --force, .warden/.gitignore, the summary
 * at exit and -q, and messages that name what is wrong (a project that is
 * not a directory, a config that is a FIFO, a bad option, a bad count, a
 * timeout past its maximum) with the help each command gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOBODY 65534

/* mkdir -p |path| (0755), inside the test's own tree. */
static void mkd(const char *path)
{
	char *p = wd_strdup(path);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
	free(p);
}

struct fx {
	char *top;  /* a fresh directory under /tmp (0755) */
	char *proj; /* top/proj */
	char *db;
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->top = wt_project();
	chmod(f->top, 0755);
	f->proj = wd_asprintf("%s/proj", f->top);
	mkd(f->proj);
	wt_write(f->proj, "README.md", "# a project\n");
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->top);
	free(f->top);
	free(f->proj);
	free(f->db);
	free(f);
	return 0;
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

static char *slurp(const char *path)
{
	char *t = NULL;
	if (wd_read_file(path, 1 << 16, &t, NULL) < 0)
		return NULL;
	return t;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* ---- 5: the agent starts in the project ---------------------------------- */

static void test_cli_agent_starts_in_project(void **state)
{
	struct fx *f = *state;
	char *outside = wd_asprintf("%s/elsewhere", f->top);
	mkdir(outside, 0755);
	char *sub = wd_asprintf("%s/src", f->proj);
	mkdir(sub, 0755);
	struct wt_result r;
	/* From outside the project: the agent starts in it. */
	wt_warden(outside, &r, "run", "--tier", "passive", "--project", f->proj, "--", "/bin/sh",
		  "-c", "echo cwd=$(pwd -P)", NULL);
	print_message("status %d\nout: %s\nerr: %s\n", r.status, r.out, r.err);
	assert_int_equal(r.status, 0);
	char *want = wd_asprintf("cwd=%s\n", f->proj);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.err, "the agent starts in the project"));
	free(want);
	wt_result_free(&r);
	/* From a directory inside it: it stays there. */
	wt_warden(sub, &r, "run", "--tier", "passive", "--project", f->proj, "--", "/bin/sh", "-c",
		  "echo cwd=$(pwd -P)", NULL);
	assert_int_equal(r.status, 0);
	want = wd_asprintf("cwd=%s\n", sub);
	assert_non_null(strstr(r.out, want));
	assert_null(strstr(r.err, "the agent starts in the project"));
	free(want);
	wt_result_free(&r);
	/* A sibling whose name merely starts with the project's is outside. */
	char *sibling = wd_asprintf("%s-other", f->proj);
	mkdir(sibling, 0755);
	wt_warden(sibling, &r, "run", "--tier", "passive", "--project", f->proj, "--", "/bin/sh",
		  "-c", "echo cwd=$(pwd -P)", NULL);
	assert_int_equal(r.status, 0);
	want = wd_asprintf("cwd=%s\n", f->proj);
	assert_non_null(strstr(r.out, want));
	free(want);
	wt_result_free(&r);
	free(sibling);
	free(outside);
	free(sub);
}

static int set_home(const void *arg)
{
	return setenv("HOME", arg, 1) < 0 ? -errno : 0;
}

/* Runs warden run in |cwd| with HOME=|home| (NULL: as inherited). */
static void run_with_home(const char *cwd, const char *home, char *const argv[],
			  struct wt_result *r)
{
	wt_wardenv_prep(cwd, argv, home ? set_home : NULL, home, 60000, r);
}

static void test_cli_root_and_home_need_force(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	/* / : refused before anything starts, with how to go on. */
	char *root[] = {"run", "--tier",  "passive", "--project", "/",
			"--",  "/bin/sh", "-c",	     "echo RAN",  NULL};
	wt_wardenv(f->top, root, &r);
	print_message("status %d\nerr: %s\n", r.status, r.err);
	assert_int_equal(r.status, 125);
	assert_null(strstr(r.out, "RAN"));
	assert_non_null(strstr(r.err, "refusing to run in /: it is the root directory"));
	assert_non_null(strstr(r.err, "--force"));
	assert_int_equal(count_lines(r.err), 1);
	wt_result_free(&r);
	/* The home directory, by default (the current directory) too. */
	char *home = wd_asprintf("%s/home/me", f->top);
	mkd(home);
	wt_write(home, "notes", "mine\n");
	char *in_home[] = {"run", "--tier", "passive", "--", "/bin/sh", "-c", "echo RAN", NULL};
	run_with_home(home, home, in_home, &r);
	print_message("status %d\nerr: %s\n", r.status, r.err);
	assert_int_equal(r.status, 125);
	assert_null(strstr(r.out, "RAN"));
	assert_non_null(strstr(r.err, "it is your home directory"));
	char *hw = wd_asprintf("%s/.warden", home);
	assert_false(exists(hw));
	free(hw);
	wt_result_free(&r);
	/* A directory above the home. */
	char *above = wd_asprintf("%s/home", f->top);
	char *up[] = {"run", "--tier",	"passive", "--project", above,
		      "--",  "/bin/sh", "-c",	   "echo RAN",	NULL};
	run_with_home(f->top, home, up, &r);
	assert_int_equal(r.status, 125);
	assert_null(strstr(r.out, "RAN"));
	assert_non_null(strstr(r.err, "a directory above your home directory"));
	wt_result_free(&r);
	/* A project inside the home is a project. */
	char *proj_in_home = wd_asprintf("%s/src", home);
	mkdir(proj_in_home, 0755);
	run_with_home(proj_in_home, home, in_home, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "RAN"));
	wt_result_free(&r);
	/* --force: the person said so. */
	char *forced[] = {"run",     "--force", "--tier",   "passive", "--",
			  "/bin/sh", "-c",	"echo RAN", NULL};
	run_with_home(home, home, forced, &r);
	print_message("status %d\nerr: %s\n", r.status, r.err);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "RAN"));
	wt_result_free(&r);
	free(proj_in_home);
	free(above);
	free(home);
}

static void test_cli_warden_dir_gitignore(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	/* warden creates .warden/: with a .gitignore for the audit. */
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/true", NULL);
	assert_int_equal(r.status, 0);
	wt_result_free(&r);
	char *gi = wd_asprintf("%s/.warden/.gitignore", f->proj);
	char *t = slurp(gi);
	assert_non_null(t);
	assert_non_null(strstr(t, "\naudit.db*\n"));
	free(t);
	/* An existing .warden/ (the person's config) without an audit yet:
	 * warden adds the .gitignore with its first audit. */
	char *p2 = wd_asprintf("%s/p2", f->top);
	mkd(p2);
	wt_write(p2, ".warden/permissions.json", "{}\n");
	wt_warden(p2, &r, "run", "--tier", "passive", "--", "/bin/true", NULL);
	assert_int_equal(r.status, 0);
	wt_result_free(&r);
	char *gi2 = wd_asprintf("%s/.warden/.gitignore", p2);
	t = slurp(gi2);
	assert_non_null(t);
	assert_non_null(strstr(t, "audit.db*"));
	free(t);
	/* The person's own .gitignore is never rewritten. */
	char *p3 = wd_asprintf("%s/p3", f->top);
	mkd(p3);
	wt_write(p3, ".warden/.gitignore", "mine\n");
	wt_warden(p3, &r, "run", "--tier", "passive", "--", "/bin/true", NULL);
	assert_int_equal(r.status, 0);
	wt_result_free(&r);
	char *gi3 = wd_asprintf("%s/.warden/.gitignore", p3);
	t = slurp(gi3);
	assert_string_equal(t, "mine\n");
	free(t);
	/* Nor a symlink planted in its place followed. */
	char *p4 = wd_asprintf("%s/p4", f->top);
	mkd(p4);
	char *target = wd_asprintf("%s/target", f->top);
	wt_write(p4, ".warden/permissions.json", "{}\n");
	char *gi4 = wd_asprintf("%s/.warden/.gitignore", p4);
	assert_int_equal(symlink(target, gi4), 0);
	wt_warden(p4, &r, "run", "--tier", "passive", "--", "/bin/true", NULL);
	assert_int_equal(r.status, 0);
	wt_result_free(&r);
	assert_false(exists(target));
	/* A .warden/ that already holds an audit is left as it is. */
	char *p5 = wd_asprintf("%s/p5", f->top);
	mkd(p5);
	wt_write(p5, ".warden/audit.db", "");
	wt_warden(p5, &r, "run", "--tier", "passive", "--", "/bin/true", NULL);
	wt_result_free(&r);
	char *gi5 = wd_asprintf("%s/.warden/.gitignore", p5);
	assert_false(exists(gi5));
	free(gi);
	free(gi2);
	free(gi3);
	free(gi4);
	free(gi5);
	free(p2);
	free(p3);
	free(p4);
	free(p5);
	free(target);
}

/* ---- 7: the summary at exit, -q ----------------------------------------- */

/* The three counts of the summary line in |err|; false when there is none. */
static bool summary_counts(const char *err, int *allowed, int *refused, int *asked, char *session,
			   size_t n)
{
	const char *p = err;
	for (; (p = strstr(p, "warden: ")); p++) {
		char sid[64] = "";
		if (sscanf(p,
			   "warden: %d allowed, %d refused, %d asked; warden audit --session %63s",
			   allowed, refused, asked, sid) == 4) {
			snprintf(session, n, "%s", sid);
			return true;
		}
	}
	return false;
}

static void test_cli_summary_counts_the_session(void **state)
{
	struct fx *f = *state;
	/* One escalation nobody answers (asked, then refused), a refusal by
	 * hard deny, and allowed execs. */
	wt_write(f->proj, "agent.sh", "touch x\nrm -rf /\nls >/dev/null\ncat README.md\n");
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "standard", "--approval-timeout", "1s", "--",
		  "/bin/sh", "agent.sh", NULL);
	print_message("status %d\nerr: %s\n", r.status, r.err);
	int allowed = -1, refused = -1, asked = -1;
	char sid[64];
	assert_true(summary_counts(r.err, &allowed, &refused, &asked, sid, sizeof(sid)));
	assert_int_equal(asked, 1);
	struct wt_audit_q qa = {.decision = "allow", .session = sid};
	struct wt_audit_q qd = {.decision = "deny", .session = sid};
	assert_int_equal(allowed, wt_audit_match(f->db, &qa));
	assert_int_equal(refused, wt_audit_match(f->db, &qd));
	assert_true(refused >= 2);
	assert_true(allowed >= 3);
	/* The line is the last one, and names this session. */
	char *last = strrchr(r.err, '\n');
	assert_non_null(last);
	*last = '\0';
	last = strrchr(r.err, '\n');
	assert_non_null(strstr(last ? last : r.err, sid));
	wt_result_free(&r);
	/* -q: no summary, no informational start lines; warnings stay. */
	wt_warden(f->proj, &r, "run", "-q", "--no-view", "--tier", "passive", "--", "/bin/sh", "-c",
		  "echo hi", NULL);
	print_message("status %d\nerr: %s\n", r.status, r.err);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "hi\n");
	assert_null(strstr(r.err, "allowed,"));
	assert_null(strstr(r.err, "no judge configured"));
	assert_null(strstr(r.err, "warden: session "));
	assert_non_null(strstr(r.err, "--no-view: opens of sensitive files"));
	wt_result_free(&r);
	/* --quiet and an error: the error is printed. */
	wt_warden(f->proj, &r, "run", "--quiet", "--", "/nonexistent/agent", NULL);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "command not found"));
	wt_result_free(&r);
}

/* ---- 9: messages and exit codes that tell the truth ------------------------ */

static int become_nobody(const void *arg)
{
	(void)arg;
	if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) < 0)
		return -errno;
	return 0;
}

static void test_cli_project_not_a_directory(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	char *file = wd_asprintf("%s/README.md", f->proj);
	wt_warden(f->top, &r, "run", "--project", file, "--", "/bin/true", NULL);
	print_message("err: %s\n", r.err);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "not a directory"));
	assert_null(strstr(r.err, "config"));
	wt_result_free(&r);
	wt_warden(f->top, &r, "explain", "--project", file, "--", "ls", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "not a directory"));
	assert_null(strstr(r.err, "permissions.json"));
	wt_result_free(&r);
	/* A project warden's user cannot read: the project is named, not
	 * its config. */
	chmod(f->proj, 0700);
	char *argv[] = {"run", "--project", f->proj, "--", "/bin/true", NULL};
	wt_wardenv_prep(f->top, argv, become_nobody, NULL, 30000, &r);
	print_message("err: %s\n", r.err);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "permission denied"));
	assert_non_null(strstr(r.err, f->proj));
	assert_null(strstr(r.err, "config"));
	wt_result_free(&r);
	chmod(f->proj, 0755);
	free(file);
}

static void test_cli_config_fifo_refused(void **state)
{
	struct fx *f = *state;
	char *dir = wd_asprintf("%s/.warden", f->proj);
	mkdir(dir, 0755);
	char *cfg = wd_asprintf("%s/permissions.json", dir);
	assert_int_equal(mkfifo(cfg, 0644), 0);
	struct wt_result r;
	char *run[] = {"run", "--tier", "passive", "--", "/bin/true", NULL};
	wt_wardenv_prep(f->proj, run, NULL, NULL, 10000, &r);
	print_message("status %d\nerr: %s\n", r.status, r.err);
	assert_int_equal(r.status, 125); /* not -1: it did not hang */
	assert_non_null(strstr(r.err, cfg));
	assert_non_null(strstr(r.err, "FIFO"));
	wt_result_free(&r);
	char *check[] = {"config", "check", cfg, NULL};
	wt_wardenv_prep(f->proj, check, NULL, NULL, 10000, &r);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "FIFO"));
	wt_result_free(&r);
	/* A symlink in its place is refused too (never followed). */
	unlink(cfg);
	char *real = wd_asprintf("%s/real.json", f->top);
	wt_write(f->top, "real.json", "{}\n");
	assert_int_equal(symlink(real, cfg), 0);
	wt_wardenv_prep(f->proj, check, NULL, NULL, 10000, &r);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "symbolic link"));
	wt_result_free(&r);
	free(real);
	free(dir);
	free(cfg);
}

static void test_cli_config_check(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	/* --help is help, not a path. */
	wt_warden(f->proj, &r, "config", "check", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: warden config check"));
	assert_string_equal(r.err, "");
	wt_result_free(&r);
	/* No config: the defaults apply, a valid state. */
	wt_warden(f->proj, &r, "config", "check", NULL);
	print_message("status %d\nout: %s\nerr: %s\n", r.status, r.out, r.err);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "defaults apply"));
	wt_result_free(&r);
	/* A valid one, then an invalid one. */
	wt_write(f->proj, ".warden/permissions.json", "{\"tier\": \"passive\"}\n");
	wt_warden(f->proj, &r, "config", "check", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, ": ok"));
	wt_result_free(&r);
	wt_write(f->proj, ".warden/permissions.json", "{\"tier\": \"banana\"}\n");
	wt_warden(f->proj, &r, "config", "check", NULL);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "permissions.json:1"));
	wt_result_free(&r);
	/* An option it does not know, and two paths. */
	wt_warden(f->proj, &r, "config", "check", "--bogus", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err, "warden config check: unknown option --bogus; try warden config "
				   "check --help\n");
	wt_result_free(&r);
	wt_warden(f->proj, &r, "config", "check", "a", "b", NULL);
	assert_int_equal(r.status, 2);
	wt_result_free(&r);
}

static void test_cli_help_for_every_command(void **state)
{
	struct fx *f = *state;
	static const char *const cmds[] = {"run",   "audit",   "approvals", "approve",
					   "deny",  "doctor",  "config",    "explain",
					   "rules", "version", "help"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(cmds); i++) {
		struct wt_result r;
		/* CMD --help, CMD -h and help CMD: the same help, on stdout. */
		wt_warden(f->proj, &r, cmds[i], "--help", NULL);
		print_message("%s --help: %d\nout: %s\nerr: %s\n", cmds[i], r.status, r.out, r.err);
		assert_int_equal(r.status, 0);
		assert_non_null(strstr(r.out, "usage: warden"));
		assert_string_equal(r.err, "");
		char *help = wd_strdup(r.out);
		wt_result_free(&r);
		wt_warden(f->proj, &r, cmds[i], "-h", NULL);
		assert_int_equal(r.status, 0);
		assert_string_equal(r.out, help);
		wt_result_free(&r);
		wt_warden(f->proj, &r, "help", cmds[i], NULL);
		assert_int_equal(r.status, 0);
		assert_string_equal(r.out, help);
		wt_result_free(&r);
		free(help);
	}
	/* doctor --help checks nothing. */
	struct wt_result r;
	wt_warden(f->proj, &r, "doctor", "--help", NULL);
	assert_null(strstr(r.out, "can work here"));
	assert_non_null(strstr(r.out, "usage: warden doctor"));
	wt_result_free(&r);
	wt_warden(f->proj, &r, "help", "run", NULL);
	assert_non_null(strstr(r.out, "usage: warden run"));
	wt_result_free(&r);
	wt_warden(f->proj, &r, "help", "nonsense", NULL);
	assert_int_equal(r.status, 2);
	wt_result_free(&r);
}

static void test_cli_option_errors_one_line(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *argv[6];
		int status;
		const char *err;
	} cases[] = {
		{{"run", "--tire", "passive", "--", "/bin/true"},
		 125,
		 "warden run: unknown option --tire; try warden run --help\n"},
		{{"run", "-x", "--", "/bin/true"},
		 125,
		 "warden run: unknown option -x; try warden run --help\n"},
		{{"run", "--tier"},
		 125,
		 "warden run: option --tier needs a value; try warden run --help\n"},
		{{"audit", "--bogus=1"},
		 2,
		 "warden audit: unknown option --bogus; try warden audit --help\n"},
		{{"approvals", "--bogus"},
		 2,
		 "warden approvals: unknown option --bogus; try warden approvals --help\n"},
		{{"approve", "--bogus", "x-1"},
		 2,
		 "warden approve: unknown option --bogus; try warden approve --help\n"},
		{{"explain", "--bogus", "--", "ls"},
		 2,
		 "warden explain: unknown option --bogus; try warden explain --help\n"},
		{{"rules", "propose", "--bogus"},
		 2,
		 "warden rules: unknown option --bogus; try warden rules --help\n"},
		{{"rules", "propose", "--min-count"},
		 2,
		 "warden rules: option --min-count needs a value; try warden rules --help\n"},
	};
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		char *argv[8] = {0};
		for (size_t k = 0; cases[i].argv[k]; k++)
			argv[k] = (char *)cases[i].argv[k];
		struct wt_result r;
		wt_wardenv(f->proj, argv, &r);
		print_message("%s %s: %d\nerr: %s\n", argv[0], argv[1], r.status, r.err);
		assert_int_equal(r.status, cases[i].status);
		assert_string_equal(r.err, cases[i].err);
		wt_result_free(&r);
	}
}

static void test_cli_bad_values_say_what(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	wt_warden(f->proj, &r, "rules", "propose", "--min-count", "banana", NULL);
	print_message("err: %s\n", r.err);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--min-count: \"banana\" is not a count"));
	assert_null(strstr(r.err, "days"));
	wt_result_free(&r);
	wt_warden(f->proj, &r, "rules", "propose", "--review-days", "0", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "days from 1 to 3650"));
	wt_result_free(&r);
	/* --approval-timeout: past its maximum (24h) is an error, never a
	 * wrapped-around deadline that refuses everything at once. */
	static const char *const too_long[] = {"99999999h", "25h", "86401", "2d",
					       "18446744073709551617s"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(too_long); i++) {
		wt_warden(f->proj, &r, "run", "--tier", "passive", "--approval-timeout",
			  too_long[i], "--", "/bin/sh", "-c", "echo RAN", NULL);
		print_message("%s: %d\nerr: %s\n", too_long[i], r.status, r.err);
		assert_int_equal(r.status, 125);
		assert_null(strstr(r.out, "RAN"));
		assert_non_null(strstr(r.err, "--approval-timeout"));
		wt_result_free(&r);
	}
	static const char *const bad[] = {"banana", "-5s", "0", "10x", ""};
	for (size_t i = 0; i < WD_ARRAY_SIZE(bad); i++) {
		wt_warden(f->proj, &r, "run", "--approval-timeout", bad[i], "--", "/bin/true",
			  NULL);
		assert_int_equal(r.status, 125);
		assert_non_null(strstr(r.err, "is not a duration"));
		wt_result_free(&r);
	}
	/* The maximum itself is accepted. */
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--approval-timeout", "24h", "--",
		  "/bin/sh", "-c", "echo RAN", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "RAN"));
	wt_result_free(&r);
	/* An unknown command: one line. */
	wt_warden(f->proj, &r, "bogus", NULL);
	assert_int_equal(r.status, 2);
	assert_int_equal(count_lines(r.err), 1);
	wt_result_free(&r);
}

/* The tier is called the tier in the help texts ("mode" is the config's
 * word for the places outside the project). */
static void test_cli_help_says_tier(void **state)
{
	struct fx *f = *state;
	static const char *const cmds[] = {"run",    "audit", "explain", "approvals",
					   "doctor", "rules", "config",	 "help"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(cmds); i++) {
		struct wt_result r;
		wt_warden(f->proj, &r, cmds[i], "--help", NULL);
		assert_non_null(strstr(r.out, "usage: warden"));
		assert_null(strstr(r.out, "standard mode"));
		assert_null(strstr(r.out, "passive mode"));
		assert_null(strstr(r.out, "aggressive mode"));
		wt_result_free(&r);
	}
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cli_agent_starts_in_project, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_root_and_home_need_force, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_warden_dir_gitignore, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_summary_counts_the_session, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cli_project_not_a_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_config_fifo_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_config_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_help_for_every_command, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_option_errors_one_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_bad_values_say_what, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_help_says_tier, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
