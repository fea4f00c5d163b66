/*
 * git.c: which git command lines only read, parsed as git parses them.
 *
 * git's own options come before the subcommand and are matched exactly;
 * those that set configuration or the programs git runs (-c, --config-env,
 * --exec-path) are not read-only. Each subcommand's options must be in its
 * allow list, exactly; other words are revisions or paths. Printing remote
 * URLs (git remote -v, git config) is not read-only: they may carry
 * credentials.
 *
 * See docs/design.md, section "Grammars".
 */
#include "grammar.h"
#include "policy_int.h"

#include <stdio.h>
#include <string.h>

/* clang-format off */
static const struct pol_gr_opt git_global[] = {
	{"version", 'v', GR_NOARG, GR_OK}, {"help", 'h', GR_NOARG, GR_OK},
	{NULL, 'C', GR_ARG, GR_OK}, {NULL, 'c', GR_ARG, GR_RUNS},
	{"config-env", 0, GR_ARG, GR_RUNS}, {"exec-path", 0, GR_OPTARG, GR_RUNS},
	{"html-path", 0, GR_NOARG, GR_OK}, {"man-path", 0, GR_NOARG, GR_OK},
	{"info-path", 0, GR_NOARG, GR_OK}, {"paginate", 'p', GR_NOARG, GR_OK},
	{"no-pager", 'P', GR_NOARG, GR_OK}, {"no-replace-objects", 0, GR_NOARG, GR_OK},
	{"bare", 0, GR_NOARG, GR_OK}, {"git-dir", 0, GR_ARG, GR_OK},
	{"work-tree", 0, GR_ARG, GR_OK}, {"namespace", 0, GR_ARG, GR_OK},
	{"super-prefix", 0, GR_ARG, GR_RUNS}, {"literal-pathspecs", 0, GR_NOARG, GR_OK},
	{"glob-pathspecs", 0, GR_NOARG, GR_OK}, {"noglob-pathspecs", 0, GR_NOARG, GR_OK},
	{"icase-pathspecs", 0, GR_NOARG, GR_OK}, {"no-optional-locks", 0, GR_NOARG, GR_OK},
	{"list-cmds", 0, GR_ARG, GR_OK}, {NULL, 0, GR_NOARG, GR_OK},
};
/* clang-format on */

/* Options shared by the commands that show history and diffs. An entry
 * ending in '=' takes an attached value; one ending in '*' is a prefix
 * ("-U3", "-n5"). */
/* clang-format off */
static const char *const log_opts[] = {
	"--oneline", "--graph", "--decorate", "--decorate=*", "--no-decorate", "--stat",
	"--stat=*", "--shortstat", "--numstat", "--name-only", "--name-status", "-p", "--patch",
	"-u", "-U*", "--unified=*", "--format=*", "--pretty", "--pretty=*", "--abbrev-commit",
	"--no-abbrev-commit", "--abbrev", "--abbrev=*", "--all", "--branches", "--branches=*",
	"--tags", "--tags=*", "--remotes", "--remotes=*", "-n*", "--max-count=*", "--skip=*",
	"--since=*", "--until=*", "--after=*", "--before=*", "--author=*", "--committer=*",
	"--grep=*", "-n", "-i", "--regexp-ignore-case", "--reverse", "--first-parent",
	"--merges", "--no-merges", "--follow", "--cached", "--staged", "--color", "--color=*",
	"--no-color", "--word-diff", "--word-diff=*", "--color-words", "--summary", "-w",
	"--ignore-all-space", "-b", "--ignore-space-change", "--ignore-blank-lines",
	"--diff-filter=*", "-M", "-M*", "--find-renames", "--find-renames=*", "--relative",
	"--relative=*", "--no-renames", "--raw", "-s", "--no-patch", "--date=*", "--left-right",
	"--cherry-pick", "--topo-order", "--date-order", "--full-history",
	"--simplify-by-decoration", "--source", "--no-walk", "-S*", "-G*", "--pickaxe-all",
	"-L*", "--patch-with-stat", "--full-index", "--binary", "--check", "--exit-code",
	"--quiet", "-q", "--minimal", "--patience", "--histogram", "--ignore-cr-at-eol",
	"--ignore-space-at-eol", "--no-ext-diff", "--no-textconv", "--src-prefix=*",
	"--dst-prefix=*", "--no-prefix", "-R", "--dirstat", "--dirstat=*", "--compact-summary",
	"--count", "--parents", "--children", "--boundary", "--objects", "--since-as-filter=*",
	"--no-min-parents", "--mailmap", "--no-mailmap", "--use-mailmap", "--name-rev", "-z",
	"--merge-base", "--ita-invisible-in-index", "--stat-width=*", "--notes", "--no-notes",
	"-1", "-2", "-3", "-4", "-5", "-6", "-7", "-8", "-9", "-10", "-20", "-30", "-50", "-100",
	"--shortstat", "--submodule", "--submodule=*", "--", NULL,
};
/* clang-format on */

/* clang-format off */
static const char *const status_opts[] = {
	"-s", "--short", "-b", "--branch", "-sb", "--porcelain", "--porcelain=*", "--long", "-v",
	"--verbose", "-u", "-uno", "-unormal", "-uall", "--untracked-files",
	"--untracked-files=*", "--ignored", "--ignored=*", "--ignore-submodules",
	"--ignore-submodules=*", "--show-stash", "--ahead-behind", "--no-ahead-behind", "-z",
	"--column", "--no-column", "--renames", "--no-renames", "--find-renames",
	"--find-renames=*", "--", NULL,
};
/* clang-format on */

/* clang-format off */
static const char *const lsfiles_opts[] = {
	"-c", "--cached", "-d", "--deleted", "-m", "--modified", "-o", "--others", "-i",
	"--ignored", "-s", "--stage", "-u", "--unmerged", "-k", "--killed", "-z",
	"--exclude-standard", "--exclude=*", "-x*", "--full-name", "--error-unmatch", "--abbrev",
	"--abbrev=*", "--eol", "--directory", "--no-empty-directory", "-t", "-v", "-f",
	"--deduplicate", "--format=*", "--recurse-submodules", "--", NULL,
};
/* clang-format on */

/* clang-format off */
static const char *const revparse_opts[] = {
	"--show-toplevel", "--git-dir", "--is-inside-work-tree", "--is-inside-git-dir",
	"--abbrev-ref", "--abbrev-ref=*", "--short", "--short=*", "--verify", "-q", "--quiet",
	"--symbolic", "--symbolic-full-name", "--show-prefix", "--show-cdup",
	"--absolute-git-dir", "--is-bare-repository", "--git-common-dir",
	"--show-superproject-working-tree", "--show-object-format", "--sq", "--all",
	"--branches", "--tags", "--remotes", "--default", "--", NULL,
};
/* clang-format on */

/* clang-format off */
static const char *const blame_opts[] = {
	"-L", "-L*", "-l", "-s", "-e", "-w", "-M", "-M*", "-C", "-C*", "--porcelain",
	"--line-porcelain", "--incremental", "-p", "-t", "--date=*", "--since=*", "--root",
	"--show-stats", "-c", "-f", "-n", "--show-name", "--show-number", "--abbrev=*",
	"--color-lines", "--color-by-age", "--first-parent", "--", NULL,
};
/* clang-format on */

/* clang-format off */
static const char *const grep_opts[] = {
	"-n", "--line-number", "-i", "--ignore-case", "-w", "--word-regexp", "-v",
	"--invert-match", "-e", "-l", "--files-with-matches", "-L", "--files-without-match",
	"-c", "--count", "-h", "-H", "-E", "--extended-regexp", "-F", "--fixed-strings", "-P",
	"--perl-regexp", "-G", "--basic-regexp", "--cached", "--untracked", "--no-index", "-I",
	"--max-depth=*", "--full-name", "-r", "--recursive", "--break", "--heading", "-p",
	"--show-function", "-W", "--function-context", "-A*", "-B*", "-C*", "-o",
	"--only-matching", "--and", "--or", "--not", "--all-match", "-q", "--quiet", "-z",
	"--null", "--column", "--color", "--color=*", "--no-color", "-in", "-il", "-n", "-ni",
	"--", NULL,
};
/* clang-format on */

static const char *const misc_opts[] = {
	/* describe */
	"--tags", "--always", "--abbrev=*", "--long", "--dirty", "--dirty=*", "--exact-match",
	"--match=*", "--exclude=*", "--all", "--contains", "--first-parent", "--broken",
	/* cat-file */
	"-t", "-s", "-p", "-e",
	/* show-ref */
	"--heads", "-d", "--dereference", "--hash", "--hash=*", "--verify", "-q", "--quiet",
	"--head",
	/* for-each-ref */
	"--format=*", "--sort=*", "--count=*", "--points-at=*", "--merged", "--merged=*",
	"--no-merged", "--no-merged=*", "--contains=*", "--no-contains", "--no-contains=*",
	"--shell", "--perl", "--python", "--tcl", "--ignore-case", "--omit-empty",
	/* name-rev */
	"--name-only", "--refs=*", "--no-undefined",
	/* merge-base */
	"--is-ancestor", "--octopus", "--independent", "--fork-point",
	/* count-objects */
	"-v", "--verbose", "-H", "--human-readable",
	/* version, help, shortlog */
	"--build-options", "-a", "-g", "--guides", "-n", "--numbered", "--summary", "-e", "--email",
	"-sn", "-sne", "--", NULL};

/* git branch / tag: listing only with these (a word that is not an option
 * names a branch to make, unless --list is given). */
/* clang-format off */
static const char *const list_opts[] = {
	"-a", "--all", "-r", "--remotes", "-l", "--list", "-v", "-vv", "--verbose",
	"--show-current", "--no-color", "--color", "--color=*", "--sort=*", "--format=*",
	"--merged", "--merged=*", "--no-merged", "--no-merged=*", "--contains", "--contains=*",
	"--no-contains", "--no-contains=*", "--points-at=*", "--column", "--column=*",
	"--no-column", "--abbrev=*", "-i", "--ignore-case", "-n*", "--omit-empty", NULL,
};
/* clang-format on */

struct git_sub {
	const char *name;
	const char *const *opts;
	bool listing; /* branch and tag: operands only with --list */
};

static const struct git_sub git_subs[] = {
	{"status", status_opts, false},
	{"diff", log_opts, false},
	{"log", log_opts, false},
	{"show", log_opts, false},
	{"whatchanged", log_opts, false},
	{"rev-list", log_opts, false},
	{"shortlog", misc_opts, false},
	{"blame", blame_opts, false},
	{"rev-parse", revparse_opts, false},
	{"describe", misc_opts, false},
	{"ls-files", lsfiles_opts, false},
	{"ls-tree", lsfiles_opts, false},
	{"merge-base", misc_opts, false},
	{"show-ref", misc_opts, false},
	{"cat-file", misc_opts, false},
	{"grep", grep_opts, false},
	{"count-objects", misc_opts, false},
	{"name-rev", misc_opts, false},
	{"for-each-ref", misc_opts, false},
	{"version", misc_opts, false},
	{"help", misc_opts, false},
	{"branch", list_opts, true},
	{"tag", list_opts, true},
};

static bool word_allowed(const char *const *list, const char *a)
{
	for (size_t i = 0; list[i]; i++) {
		const char *e = list[i];
		size_t l = strlen(e);
		if (e[l - 1] == '*') {
			if (strncmp(a, e, l - 1) == 0 && (e[l - 2] == '=' || a[l - 1]))
				return true;
		} else if (strcmp(a, e) == 0)
			return true;
	}
	return false;
}

/* git remote (names only), stash list/show, reflog [show|list]. */
static bool check_special(const char *sub, char *const *argv, size_t argc, size_t i,
			  struct pol_reason *rs, bool *handled)
{
	*handled = true;
	if (strcmp(sub, "remote") == 0) {
		if (i + 1 >= argc)
			return true;
		snprintf(rs->matched, sizeof(rs->matched), "git remote %.40s", argv[i + 1]);
		GR_FAIL("git remote %.40s changes remotes or prints their URLs, which may carry "
			"credentials",
			argv[i + 1]);
	}
	if (strcmp(sub, "stash") == 0 || strcmp(sub, "reflog") == 0) {
		const char *verb = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = (!verb && strcmp(sub, "reflog") == 0) ||
			  (verb && (strcmp(verb, "list") == 0 || strcmp(verb, "show") == 0));
		if (!ok) {
			snprintf(rs->matched, sizeof(rs->matched), "git %s %.40s", sub,
				 verb ? verb : "");
			GR_FAIL("git %s %.40s changes the repository, not just lists", sub,
				verb ? verb : "");
		}
		for (size_t k = i + 2; k < argc; k++)
			if (argv[k][0] == '-' && !word_allowed(log_opts, argv[k])) {
				snprintf(rs->matched, sizeof(rs->matched), "%.60s", argv[k]);
				GR_FAIL("git %s %.60s is not an option warden knows", sub, argv[k]);
			}
		return true;
	}
	*handled = false;
	return true;
}

static bool refuse_known_writer(const char *sub, char *const *argv, size_t argc, size_t i,
				struct pol_reason *rs)
{
	for (size_t k = i + 1; k < argc; k++) {
		if (strcmp(sub, "push") == 0 && (strncmp(argv[k], "--force", 7) == 0 ||
						 strcmp(argv[k], "-f") == 0 || argv[k][0] == '+'))
			GR_FAIL("git push --force rewrites the remote's history");
		if (strcmp(sub, "reset") == 0 && strcmp(argv[k], "--hard") == 0)
			GR_FAIL("git reset --hard throws away uncommitted work");
		if (strcmp(sub, "clean") == 0 && argv[k][0] == '-' && strchr(argv[k], 'f'))
			GR_FAIL("git clean -f deletes untracked files");
	}
	GR_FAIL("git %.60s changes the repository, talks to a remote or prints configuration", sub);
}

/* git's global options, parsed into |ps|: each known and harmless. */
static bool global_options_ok(const struct pol_gr_parse *ps, struct pol_reason *rs)
{
	if (ps->bad) {
		snprintf(rs->matched, sizeof(rs->matched), "%.60s", ps->bad);
		snprintf(rs->why, sizeof(rs->why), "git: %s, so it is not read-only", ps->problem);
		return false;
	}
	for (size_t k = 0; k < ps->n; k++) {
		const struct pol_gr_opt *o = ps->items[k].opt;
		if (o && o->effect != GR_OK) {
			snprintf(rs->matched, sizeof(rs->matched), "git %.50s", ps->items[k].word);
			snprintf(rs->why, sizeof(rs->why),
				 "git %.50s can set any configuration, including programs to run",
				 ps->items[k].word);
			return false;
		}
	}
	return true;
}

/* The words after the subcommand argv[|i|]: options of |gs|'s list only,
 * and operands of branch and tag only with --list. */
static bool subcommand_words_ok(const struct git_sub *gs, char *const *argv, size_t argc, size_t i,
				struct pol_reason *rs)
{
	const char *sub = argv[i];
	bool listing = false, operand = false;
	const char *first_operand = NULL;
	bool dashdash = false;
	for (size_t k = i + 1; k < argc; k++) {
		const char *a = argv[k];
		if (dashdash || a[0] != '-') {
			operand = true;
			if (!first_operand)
				first_operand = a;
			continue;
		}
		if (strcmp(a, "--") == 0)
			dashdash = true;
		if (strcmp(a, "-l") == 0 || strcmp(a, "--list") == 0)
			listing = true;
		if (!word_allowed(gs->opts, a)) {
			snprintf(rs->matched, sizeof(rs->matched), "%.60s", a);
			snprintf(rs->why, sizeof(rs->why),
				 "git %s %.60s is not an option warden knows", sub, a);
			return false;
		}
	}
	if (gs->listing && operand && !listing) {
		snprintf(rs->matched, sizeof(rs->matched), "%.60s", first_operand);
		snprintf(rs->why, sizeof(rs->why),
			 "git %s %.60s changes the repository, not just lists", sub, first_operand);
		return false;
	}
	return true;
}

bool pol_git_readonly(char *const *argv, size_t argc, struct wd_sb *trace, struct pol_reason *rs)
{
	struct pol_gr_parse *ps = wd_calloc(1, sizeof(*ps));
	size_t i = argc;
	pol_gr_parse_opts(git_global, GR_EXACT, true, argv, argc, &i, ps);
	if (trace) {
		wd_sb_puts(trace, "git: ");
		pol_gr_describe(ps, trace);
	}
	bool ok = false;
	if (!global_options_ok(ps, rs))
		goto out;
	if (i >= argc) {
		bool info = ps->n > 0;
		snprintf(rs->matched, sizeof(rs->matched), "%s", "git");
		snprintf(rs->why, sizeof(rs->why),
			 info ? "git only prints what its options ask"
			      : "git without a subcommand");
		ok = info;
		goto out;
	}
	const char *sub = argv[i];
	if (trace)
		wd_sb_printf(trace, "%ssubcommand %s", ps->n ? ", " : "", sub);
	bool handled;
	if (!check_special(sub, argv, argc, i, rs, &handled))
		goto out;
	if (handled) {
		snprintf(rs->matched, sizeof(rs->matched), "git %.50s", sub);
		snprintf(rs->why, sizeof(rs->why), "git %s only reads the repository", sub);
		ok = true;
		goto out;
	}
	const struct git_sub *gs = NULL;
	for (size_t k = 0; k < WD_ARRAY_SIZE(git_subs); k++)
		if (strcmp(sub, git_subs[k].name) == 0)
			gs = &git_subs[k];
	if (!gs) {
		snprintf(rs->matched, sizeof(rs->matched), "git %.50s", sub);
		refuse_known_writer(sub, argv, argc, i, rs);
		goto out;
	}
	if (!subcommand_words_ok(gs, argv, argc, i, rs))
		goto out;
	snprintf(rs->matched, sizeof(rs->matched), "git %.50s", sub);
	snprintf(rs->why, sizeof(rs->why), "git %s only reads the repository", sub);
	ok = true;
out:
	if (trace)
		wd_sb_putc(trace, '\n');
	free(ps);
	return ok;
}
