/*
 * git.c: which git command lines only read.
 *
 * git reads its configuration from the repository, and configuration can
 * name programs (diff drivers, pagers, hooks, fsmonitor); those programs
 * are execs of their own and are decided on their own, since a fast-path
 * allowance covers nothing. What is refused here is a command line that
 * names a program or writes by itself: -c, --exec-path, --output,
 * --ext-diff, --textconv, --exec, --upload-pack, --open-files-in-pager.
 */
#include "policy_int.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(why, n, __VA_ARGS__);                                                     \
		return false;                                                                      \
	} while (0)

static bool is_opt(const char *a, const char *opt)
{
	size_t l = strlen(opt);
	return strncmp(a, opt, l) == 0 && (a[l] == '\0' || a[l] == '=');
}

static const char *const git_ro_subs[] = {
	"status",     "diff",	      "log",	"show",	    "blame",   "rev-parse",
	"describe",   "shortlog",     "branch", "ls-files", "ls-tree", "rev-list",
	"merge-base", "show-ref",     "tag",	"remote",   "grep",    "whatchanged",
	"reflog",     "cat-file",     "stash",	"help",	    "version", "count-objects",
	"name-rev",   "for-each-ref", "var",
};

static const char *const git_bad_opts[] = {
	"--output",
	"--ext-diff",
	"--textconv",
	"--exec",
	"--upload-pack",
	"--receive-pack",
	"--open-files-in-pager",
	"--filters",
	"--batch-command",
};

/* git branch / tag / remote / stash / reflog list only with these. */
static bool listing_only(const char *sub, char *const *argv, size_t argc, size_t i,
			 const char **bad)
{
	static const char *const list_opts[] = {
		"-a",	       "--all",		 "-r",		"--remotes",
		"-l",	       "--list",	 "-v",		"-vv",
		"--verbose",   "--show-current", "--no-color",	"--color",
		"--sort",      "--format",	 "--merged",	"--no-merged",
		"--contains",  "--no-contains",	 "--points-at", "--column",
		"--no-column", "--abbrev",	 "-i",		"--ignore-case",
		"-n",	       "--omit-empty",
	};
	bool listing = false;
	for (size_t k = i + 1; k < argc; k++) {
		const char *a = argv[k];
		if (strcmp(a, "-l") == 0 || strcmp(a, "--list") == 0)
			listing = true;
	}
	if (strcmp(sub, "remote") == 0) {
		if (i + 1 >= argc)
			return true;
		const char *a = argv[i + 1];
		if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0 ||
		    strcmp(a, "get-url") == 0 || strcmp(a, "show") == 0)
			return true;
		*bad = a;
		return false;
	}
	if (strcmp(sub, "stash") == 0 || strcmp(sub, "reflog") == 0) {
		if (i + 1 >= argc && strcmp(sub, "reflog") == 0)
			return true;
		if (i + 1 < argc &&
		    (strcmp(argv[i + 1], "list") == 0 || strcmp(argv[i + 1], "show") == 0))
			return true;
		*bad = i + 1 < argc ? argv[i + 1] : "stash";
		return false;
	}
	for (size_t k = i + 1; k < argc; k++) {
		const char *a = argv[k];
		if (a[0] != '-') {
			if (listing)
				continue;
			*bad = a;
			return false;
		}
		bool ok = false;
		for (size_t m = 0; m < WD_ARRAY_SIZE(list_opts); m++)
			if (is_opt(a, list_opts[m]))
				ok = true;
		if (!ok) {
			*bad = a;
			return false;
		}
	}
	return true;
}

bool pol_git_readonly(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	size_t i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-C") == 0) {
			i++;
			continue;
		}
		if (strcmp(a, "-c") == 0 || is_opt(a, "--config-env") || is_opt(a, "--exec-path")) {
			snprintf(matched, 64, "%s", strcmp(a, "-c") == 0 ? "git -c" : a);
			FAIL("git %s can set any configuration, including programs to run", a);
		}
		if (strcmp(a, "--no-pager") == 0 || strcmp(a, "-P") == 0 ||
		    strcmp(a, "--paginate") == 0 || strcmp(a, "-p") == 0 ||
		    strcmp(a, "--no-optional-locks") == 0 || strcmp(a, "--bare") == 0 ||
		    strcmp(a, "--literal-pathspecs") == 0 ||
		    strcmp(a, "--no-replace-objects") == 0 || is_opt(a, "--git-dir") ||
		    is_opt(a, "--work-tree") || is_opt(a, "--namespace"))
			continue;
		snprintf(matched, 64, "%s", a);
		FAIL("git %s is not an option the fast path knows", a);
	}
	if (i >= argc) {
		snprintf(matched, 64, "%s", "git");
		FAIL("git without a subcommand");
	}
	const char *sub = argv[i];
	bool known = false;
	for (size_t k = 0; k < WD_ARRAY_SIZE(git_ro_subs); k++)
		if (strcmp(sub, git_ro_subs[k]) == 0)
			known = true;
	if (!known) {
		snprintf(matched, 64, "git %.50s", sub);
		for (size_t k = i + 1; k < argc; k++) {
			if (strcmp(sub, "push") == 0 &&
			    (is_opt(argv[k], "--force") || strcmp(argv[k], "-f") == 0 ||
			     is_opt(argv[k], "--force-with-lease") || argv[k][0] == '+'))
				FAIL("git push --force rewrites the remote's history");
			if (strcmp(sub, "reset") == 0 && strcmp(argv[k], "--hard") == 0)
				FAIL("git reset --hard throws away uncommitted work");
			if (strcmp(sub, "clean") == 0 && argv[k][0] == '-' && strchr(argv[k], 'f'))
				FAIL("git clean -f deletes untracked files");
		}
		FAIL("git %.60s changes the repository or talks to a remote", sub);
	}
	for (size_t k = i + 1; k < argc; k++) {
		for (size_t m = 0; m < WD_ARRAY_SIZE(git_bad_opts); m++) {
			if (is_opt(argv[k], git_bad_opts[m])) {
				snprintf(matched, 64, "%s", git_bad_opts[m]);
				FAIL("git %s %s runs a program or writes a file", sub,
				     git_bad_opts[m]);
			}
		}
		if (strcmp(sub, "grep") == 0 && strncmp(argv[k], "-O", 2) == 0) {
			snprintf(matched, 64, "%s", "-O");
			FAIL("git grep -O opens the files in a pager program");
		}
	}
	if (strcmp(sub, "branch") == 0 || strcmp(sub, "tag") == 0 || strcmp(sub, "remote") == 0 ||
	    strcmp(sub, "stash") == 0 || strcmp(sub, "reflog") == 0) {
		const char *bad = NULL;
		if (!listing_only(sub, argv, argc, i, &bad)) {
			snprintf(matched, 64, "%s", bad);
			FAIL("git %s %.60s changes the repository, not just lists", sub, bad);
		}
	}
	snprintf(matched, 64, "git %.50s", sub);
	snprintf(why, n, "git %s only reads the repository", sub);
	return true;
}
