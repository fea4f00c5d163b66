/*
 * test_policy_programs.c: the grammar tables checked against the installed
 * programs: the option tables against each program's own --help, and the
 * claims the tables rest on (GNU sort takes --outp as --output, git takes
 * the word after --git-dir as its value, dash -cs reads stdin after the
 * string) against the real programs of this machine.
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

/* ---- the tables against the installed programs ------------------------------------ */

/* Runs |argv| with stdin from |in| (may be NULL); its stdout, at most
 * |n| - 1 bytes, into |buf|. Returns the exit status or -1. */
static int run_prog(char *const *argv, const char *in, char *buf, size_t n)
{
	int out[2], inp[2];
	if (pipe(out) != 0 || pipe(inp) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(inp[0], 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		close(out[0]);
		close(inp[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(out[1]);
	close(inp[0]);
	if (in && write(inp[1], in, strlen(in)) < 0)
		in = NULL;
	close(inp[1]);
	size_t len = 0;
	ssize_t k;
	while (len + 1 < n && (k = read(out[0], buf + len, n - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = '\0';
	char sink[4096];
	while (read(out[0], sink, sizeof(sink)) > 0)
		;
	close(out[0]);
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool table_has_long(const struct pol_gr_opt *o, const char *name, size_t len)
{
	for (; o->lng || o->shrt; o++)
		if (o->lng && strlen(o->lng) == len && strncmp(o->lng, name, len) == 0)
			return true;
	return false;
}

/* Every long option a GNU program's --help names is in its table: an
 * option missing from it would make a prefix look unique when it is not
 * (or hide what the option does). */
static void test_gr_tables_match_help(void **state)
{
	(void)state;
	size_t n;
	const struct pol_gr_prog *all = pol_gr_all(&n);
	int missing = 0, checked = 0;
	static char buf[1 << 16];
	for (size_t i = 0; i < n; i++) {
		if (all[i].style != GR_GNU)
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/usr/bin/%s", all[i].name);
		if (access(path, X_OK) != 0)
			continue;
		char *argv[] = {path, "--help", NULL};
		if (run_prog(argv, NULL, buf, sizeof(buf)) < 0)
			continue;
		checked++;
		for (const char *p = buf; (p = strstr(p, "--")) != NULL;) {
			p += 2;
			size_t len = 0;
			while ((p[len] >= 'a' && p[len] <= 'z') ||
			       (p[len] >= '0' && p[len] <= '9') || (p[len] == '-' && len))
				len++;
			while (len && p[len - 1] == '-')
				len--;
			if (len < 2 ||
			    (p[-3] != ' ' && p[-3] != ',' && p[-3] != '[' && p[-3] != '\t'))
				continue;
			if (!table_has_long(all[i].opts, p, len)) {
				fprintf(stderr, "%s --help names --%.*s, not in its table\n",
					all[i].name, (int)len, p);
				missing++;
			}
		}
	}
	assert_true(checked >= 30);
	assert_int_equal(missing, 0);
}

/* which is debianutils' sh script: its only option is getopts' "a". */
static void test_gr_which_script_options(void **state)
{
	(void)state;
	char buf[8192];
	char *argv[] = {"cat", "/usr/bin/which.debianutils", NULL};
	if (run_prog(argv, NULL, buf, sizeof(buf)) != 0)
		skip();
	assert_non_null(strstr(buf, "while getopts a whichopts"));
	const struct pol_gr_prog *p = pol_gr_find("which.debianutils");
	assert_non_null(p);
	assert_ptr_equal(p, pol_gr_find("which"));
	assert_int_equal(p->style, GR_POSIX);
	size_t n = 0;
	for (const struct pol_gr_opt *o = p->opts; o->lng || o->shrt; o++)
		n++;
	assert_int_equal(n, 1);
	assert_int_equal(p->opts[0].shrt, 'a');
}

/* The claims the tables rest on, made by the real programs. */
static void test_gr_real_programs_parse_as_tables_say(void **state)
{
	(void)state;
	char dir[] = "/tmp/wd-grammar-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char f1[128], f2[128], buf[4096];
	snprintf(f1, sizeof(f1), "%s/sorted", dir);
	snprintf(f2, sizeof(f2), "%s/written", dir);
	struct stat st;
	/* GNU sort takes --outp as --output */
	char outp[160];
	snprintf(outp, sizeof(outp), "--outp=%s", f1);
	char *sort[] = {"sort", outp, "/dev/null", NULL};
	assert_int_equal(run_prog(sort, NULL, buf, sizeof(buf)), 0);
	assert_int_equal(stat(f1, &st), 0);
	/* GNU sed takes --expr as --expression: a w command writes */
	char expr[160];
	snprintf(expr, sizeof(expr), "--expr=w %s", f2);
	char *sed[] = {"sed", "-n", expr, "/dev/null", NULL};
	assert_int_equal(run_prog(sed, NULL, buf, sizeof(buf)), 0);
	assert_int_equal(stat(f2, &st), 0);
	/* ls --co is ambiguous to ls itself */
	char *ls[] = {"ls", "--co", NULL};
	assert_int_not_equal(run_prog(ls, NULL, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "ambiguous"));
	/* git takes the word after --git-dir as its value: "version" runs */
	char *git[] = {"git", "--git-dir", "log", "version", NULL};
	assert_int_equal(run_prog(git, NULL, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "git version"));
	/* dash -cs runs the string, then a script from stdin */
	char *dash[] = {"dash", "-cs", "true", NULL};
	assert_int_equal(run_prog(dash, "echo from-stdin\n", buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "from-stdin"));
	/* sort's -o in a cluster with its value attached */
	char ro[160];
	snprintf(ro, sizeof(ro), "-ro%s/clustered", dir);
	char *sort2[] = {"sort", ro, "/dev/null", NULL};
	assert_int_equal(run_prog(sort2, NULL, buf, sizeof(buf)), 0);
	snprintf(f1, sizeof(f1), "%s/clustered", dir);
	assert_int_equal(stat(f1, &st), 0);
	char *rm[] = {"rm", "-rf", dir, NULL};
	run_prog(rm, NULL, buf, sizeof(buf));
}

/* git dispatches on argv[0]: started as git-version with any path it is
 * "git version" (execve with an argv[0] of our choosing). */
static void test_gr_real_git_argv0_dispatch(void **state)
{
	(void)state;
	int out[2];
	assert_int_equal(pipe(out), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(out[1], 2);
		char *argv[] = {"git-version", NULL};
		execv("/usr/bin/git", argv);
		_exit(127);
	}
	close(out[1]);
	char buf[512];
	ssize_t k = read(out[0], buf, sizeof(buf) - 1);
	buf[k > 0 ? k : 0] = '\0';
	close(out[0]);
	int st;
	waitpid(pid, &st, 0);
	assert_non_null(strstr(buf, "git version"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gr_tables_match_help),
		cmocka_unit_test(test_gr_which_script_options),
		cmocka_unit_test(test_gr_real_programs_parse_as_tables_say),
		cmocka_unit_test(test_gr_real_git_argv0_dispatch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
