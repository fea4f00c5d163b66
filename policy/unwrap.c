/*
 * unwrap.c: the wrappers (env, nice, timeout, sudo, xargs, ...) and the
 * shells as command lines of their own: where the command or script they
 * run starts, and whether their own words are harmless.
 *
 * The classifier (classify.c) calls these to look through a wrapper at the
 * command inside. See docs/design.md, section "Classification".
 */
#include "grammar.h"
#include "policy_int.h"

#include <string.h>

/* ---- wrappers ----------------------------------------------------------------- */

static const char *const env_long[] = {"--unset", "--chdir", "--split-string", NULL};
static const char *const nice_long[] = {"--adjustment", NULL};
static const char *const timeout_long[] = {"--signal", "--kill-after", NULL};
static const char *const stdbuf_long[] = {"--input", "--output", "--error", NULL};
static const char *const sudo_long[] = {
	"--user", "--group",	       "--close-from", "--chdir", "--prompt", "--role",
	"--type", "--command-timeout", "--other-user", "--host",  NULL};
static const char *const time_long[] = {"--format", "--output", NULL};
static const char *const xargs_long[] = {"--arg-file",	"--delimiter", "--max-args",
					 "--max-procs", "--max-chars", "--process-slot-var",
					 NULL};
static const char *const none_long[] = {NULL};

static const struct wrapper wrappers[] = {
	{"env", "uCS", env_long, 0, true, false},
	{"nice", "n", nice_long, 0, false, false},
	{"nohup", "", none_long, 0, false, false},
	{"timeout", "sk", timeout_long, 1, false, false},
	{"stdbuf", "ioe", stdbuf_long, 0, false, false},
	{"ionice", "cn", none_long, 0, false, false},
	{"setsid", "", none_long, 0, false, false},
	{"sudo", "ugCDprtTU", sudo_long, 0, true, true},
	{"doas", "uC", none_long, 0, false, true},
	{"pkexec", "", none_long, 0, false, true},
	{"command", "", none_long, 0, false, false},
	{"exec", "a", none_long, 0, false, false},
	{"builtin", "", none_long, 0, false, false},
	{"time", "fo", time_long, 0, false, false},
	{"xargs", "adEILnPs", xargs_long, 0, false, false},
};

const struct wrapper *pol_cls_find_wrapper(const char *name)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(wrappers); i++)
		if (strcmp(name, wrappers[i].name) == 0)
			return &wrappers[i];
	return NULL;
}

static bool is_assignment(const char *s)
{
	const char *eq = strchr(s, '=');
	if (!eq || eq == s || (*s >= '0' && *s <= '9'))
		return false;
	for (const char *p = s; p < eq; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* Index of the command |w| wraps in |argv| (|argc| when there is none). */
size_t pol_cls_skip_wrapper(const struct wrapper *w, char *const *argv, size_t argc,
			    struct unwrap_info *info)
{
	size_t k = 1;
	while (k < argc) {
		const char *a = argv[k];
		if (strcmp(a, "--") == 0) {
			k++;
			break;
		}
		if (w->assignments && is_assignment(a)) {
			size_t nl = (size_t)(strchr(a, '=') - a);
			if (pol_env_name_is_risky(a, nl) && !info->risky)
				info->risky = a;
			k++;
			continue;
		}
		if (a[0] != '-' || !a[1])
			break;
		if (a[1] == '-') {
			const char *eq = strchr(a, '=');
			size_t nl = eq ? (size_t)(eq - a) : strlen(a);
			if (strncmp(a, "--split-string", nl) == 0 && nl > 2)
				info->split = eq ? eq + 1 : (k + 1 < argc ? argv[k + 1] : NULL);
			if (strcmp(a, "--output") == 0 || strncmp(a, "--output=", 9) == 0)
				info->outfile = eq ? eq + 1 : (k + 1 < argc ? argv[k + 1] : NULL);
			if (strcmp(a, "--shell") == 0 || strcmp(a, "--login") == 0)
				info->shell = true;
			if (strcmp(a, "--edit") == 0)
				info->edit = true;
			k += (!eq && pol_cls_in_list(w->long_args, a, nl)) ? 2 : 1;
			continue;
		}
		size_t next = k + 1;
		for (const char *c = a + 1; *c; c++) {
			if (strcmp(w->name, "command") == 0 && (*c == 'v' || *c == 'V'))
				info->lookup = true;
			if (w->privileged && (*c == 's' || *c == 'i'))
				info->shell = true;
			if (w->privileged && *c == 'e')
				info->edit = true;
			if (strchr(w->argopts, *c)) {
				const char *val =
					c[1] ? c + 1 : (k + 1 < argc ? argv[k + 1] : NULL);
				if (*c == 'S' && strcmp(w->name, "env") == 0)
					info->split = val;
				if (*c == 'o' && strcmp(w->name, "time") == 0)
					info->outfile = val;
				if (!c[1])
					next = k + 2;
				break;
			}
		}
		k = next;
	}
	for (int p = 0; p < w->positional && k < argc; p++)
		k++;
	return k < argc ? k : argc;
}

long pol_cls_unwrap(char *const *argv, size_t argc, bool *risky_env, bool *privileged)
{
	size_t base = 0;
	for (int depth = 0; depth < CLS_MAX_DEPTH && base < argc; depth++) {
		const char *name = pol_cls_prog_name(argv[base]);
		const struct wrapper *w = pol_cls_find_wrapper(name);
		if (!w) {
			if (strcmp(name, "busybox") == 0 && base + 1 < argc) {
				base++;
				continue;
			}
			return (long)base;
		}
		struct unwrap_info info = {0};
		size_t k = pol_cls_skip_wrapper(w, argv + base, argc - base, &info);
		if (info.risky && risky_env)
			*risky_env = true;
		if (w->privileged && privileged)
			*privileged = true;
		if (base + k >= argc)
			return -1;
		base += k;
	}
	return -1;
}

/* ---- shells ------------------------------------------------------------------- */

/* The shells whose -c runs only the string it is given, with nothing else
 * read when no flag asks for it: a non-interactive, non-login sh, dash or
 * bash reads no start-up file (bash reads BASH_ENV, dash ENV only when
 * interactive: neither is a variable known harmless). zsh reads .zshenv,
 * fish config.fish, csh .cshrc on every start; ksh and the others are not
 * in warden's tables. */
static const char *const plain_shells[] = {"sh", "dash", "bash", "rbash"};

/* set -o / shopt -O names that read or run nothing more. */
static const char *const shell_o_ok[] = {"errexit", "nounset",	 "pipefail", "xtrace",
					 "noglob",  "noclobber", "posix",    "verbose",
					 "noexec",  "allexport", "nolog",    "notify"};

static const char *shell_long(const char *a, bool *takes_file)
{
	static const char *const ok[] = {
		"--noprofile", "--norc", "--posix",   "--restricted",	"--verbose",
		"--noediting", "--help", "--version", "--dump-strings", "--dump-po-strings"};
	*takes_file = false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(ok); i++)
		if (strcmp(a, ok[i]) == 0)
			return NULL;
	if (strcmp(a, "--rcfile") == 0 || strcmp(a, "--init-file") == 0) {
		*takes_file = true;
		return "reads a start-up file named on its command line";
	}
	if (strcmp(a, "--login") == 0)
		return "";
	if (strcmp(a, "--debugger") == 0)
		return "runs the debugger's start-up code (--debugger)";
	return "has an option warden does not know";
}

/* For sh/bash/...: the index of the -c script, or 0 when there is no -c.
 * *problem is set when a flag makes the shell read more code than the
 * script (stdin after it, start-up files, an interactive shell's rc), or
 * when a word is not one warden knows: the script is then not read-only,
 * but it is still looked into for hard deny. *home_files is set for a login
 * or interactive shell (-l, --login, -i, argv[0] "-bash"), which reads
 * .profile, .bash_profile, .bashrc from HOME. */
size_t pol_cls_shell_script_index(const char *name, char *const *argv, size_t argc,
				  const char **problem, bool *home_files)
{
	*home_files = false;
	bool has_c = false;
	size_t k = 1;
	*problem = NULL;
	bool plain = false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(plain_shells); i++)
		plain |= strcmp(name, plain_shells[i]) == 0;
	if (!plain)
		*problem = "reads start-up files of its own on every start";
	if (argv[0][0] == '-')
		*home_files = true;
	for (; k < argc; k++) {
		const char *a = argv[k];
		if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0) {
			k++;
			break;
		}
		if ((a[0] != '-' && a[0] != '+') || !a[1])
			break;
		if (a[0] == '-' && a[1] == '-') {
			bool file;
			const char *p = shell_long(a, &file);
			if (p && !p[0])
				*home_files = true;
			else if (p && !*problem)
				*problem = p;
			if (file)
				k++;
			continue;
		}
		bool takes_arg = false;
		for (const char *c = a + 1; *c; c++) {
			const char *p = NULL;
			if (*c == 'c')
				has_c = true;
			else if (*c == 'o' || *c == 'O')
				takes_arg = true;
			else if (*c == 's')
				p = "reads a script from its standard input after the string (-s)";
			else if (*c == 'i' || *c == 'l')
				*home_files = true;
			else if (*c == 'k')
				p = "passes NAME=value words anywhere as environment (-k)";
			else if (!strchr("abefhmnpruvxBCEHPT", *c))
				p = "has a flag warden does not know";
			if (p && !*problem)
				*problem = p;
		}
		if (takes_arg) {
			k++;
			bool ok = false;
			for (size_t i = 0; k < argc && i < WD_ARRAY_SIZE(shell_o_ok); i++)
				ok |= strcmp(argv[k], shell_o_ok[i]) == 0;
			if (!ok && !*problem)
				*problem = "sets an option (-o/-O) warden does not know";
		}
	}
	if (!has_c)
		return 0;
	return k < argc ? k : 0;
}

/* The wrappers' own options as each defines them (GNU getopt_long with
 * "+": options stop at the command). Effects other than harmless keep the
 * line off the fast path; the command inside is still classified. */
static const struct pol_gr_opt env_gr[] = {{"ignore-environment", 'i', GR_NOARG, GR_OK},
					   {"null", '0', GR_NOARG, GR_OK},
					   {"unset", 'u', GR_ARG, GR_OK},
					   {"chdir", 'C', GR_ARG, GR_ELSEWHERE},
					   {"split-string", 'S', GR_ARG, GR_CHECKED},
					   {"block-signal", 0, GR_OPTARG, GR_OK},
					   {"default-signal", 0, GR_OPTARG, GR_OK},
					   {"ignore-signal", 0, GR_OPTARG, GR_OK},
					   {"list-signal-handling", 0, GR_NOARG, GR_OK},
					   {"debug", 'v', GR_NOARG, GR_OK},
					   {"help", 0, GR_NOARG, GR_OK},
					   {"version", 0, GR_NOARG, GR_OK},
					   {NULL, 0, GR_NOARG, GR_OK}};
static const struct pol_gr_opt nice_gr[] = {{"adjustment", 'n', GR_ARG, GR_OK},
					    {"help", 0, GR_NOARG, GR_OK},
					    {"version", 0, GR_NOARG, GR_OK},
					    {NULL, 0, GR_NOARG, GR_OK}};
static const struct pol_gr_opt timeout_gr[] = {
	{"preserve-status", 0, GR_NOARG, GR_OK}, {"foreground", 0, GR_NOARG, GR_OK},
	{"kill-after", 'k', GR_ARG, GR_OK},	 {"signal", 's', GR_ARG, GR_OK},
	{"verbose", 'v', GR_NOARG, GR_OK},	 {"help", 0, GR_NOARG, GR_OK},
	{"version", 0, GR_NOARG, GR_OK},	 {NULL, 0, GR_NOARG, GR_OK}};
static const struct pol_gr_opt stdbuf_gr[] = {
	{"input", 'i', GR_ARG, GR_OK},	 {"output", 'o', GR_ARG, GR_OK},
	{"error", 'e', GR_ARG, GR_OK},	 {"help", 0, GR_NOARG, GR_OK},
	{"version", 0, GR_NOARG, GR_OK}, {NULL, 0, GR_NOARG, GR_OK}};
static const struct pol_gr_opt time_gr[] = {
	{"format", 'f', GR_ARG, GR_OK},	    {"portability", 'p', GR_NOARG, GR_OK},
	{"output", 'o', GR_ARG, GR_WRITES}, {"append", 'a', GR_NOARG, GR_OK},
	{"verbose", 'v', GR_NOARG, GR_OK},  {"quiet", 'q', GR_NOARG, GR_OK},
	{"help", 'h', GR_NOARG, GR_OK},	    {"version", 'V', GR_NOARG, GR_OK},
	{NULL, 0, GR_NOARG, GR_OK}};
static const struct pol_gr_opt setsid_gr[] = {
	{"ctty", 'c', GR_NOARG, GR_OK},	   {"fork", 'f', GR_NOARG, GR_OK},
	{"wait", 'w', GR_NOARG, GR_OK},	   {"help", 'h', GR_NOARG, GR_OK},
	{"version", 'V', GR_NOARG, GR_OK}, {NULL, 0, GR_NOARG, GR_OK}};
/* command -p looks the program up in a default PATH: still the same name. */
static const struct pol_gr_opt command_gr[] = {{NULL, 'p', GR_NOARG, GR_OK},
					       {NULL, 'v', GR_NOARG, GR_OK},
					       {NULL, 'V', GR_NOARG, GR_OK},
					       {NULL, 0, GR_NOARG, GR_OK}};
/* exec -a NAME starts the program with another argv[0] (a multi-call
 * program then plays another tool), -l as a login shell: not read-only. */
static const struct pol_gr_opt exec_gr[] = {{NULL, 'a', GR_ARG, GR_RUNS},
					    {NULL, 'c', GR_NOARG, GR_OK},
					    {NULL, 'l', GR_NOARG, GR_RUNS},
					    {NULL, 0, GR_NOARG, GR_OK}};
static const struct pol_gr_opt none_gr[] = {{NULL, 0, GR_NOARG, GR_OK}};

struct wrapper_grammar {
	const char *name;
	const struct pol_gr_opt *opts;
	enum pol_gr_style style;
	const char *never; /* why it is never read-only, or NULL */
};

static const struct wrapper_grammar wrapper_grammars[] = {
	{"env", env_gr, GR_GNU, NULL},
	{"nice", nice_gr, GR_GNU, NULL},
	{"timeout", timeout_gr, GR_GNU, NULL},
	{"stdbuf", stdbuf_gr, GR_GNU, NULL},
	{"time", time_gr, GR_GNU, NULL},
	{"setsid", setsid_gr, GR_GNU, NULL},
	{"command", command_gr, GR_POSIX, NULL},
	{"builtin", none_gr, GR_POSIX, NULL},
	{"exec", exec_gr, GR_POSIX, NULL},
	{"nohup", none_gr, GR_GNU, "nohup writes nohup.out when its output is a terminal"},
	{"xargs", none_gr, GR_GNU, "xargs runs a command on arguments read from its input"},
	{"ionice", none_gr, GR_GNU, "ionice can change another process's I/O priority"},
	{"sudo", none_gr, GR_GNU, "sudo runs a command as another user"},
	{"doas", none_gr, GR_GNU, "doas runs a command as another user"},
	{"pkexec", none_gr, GR_GNU, "pkexec runs a command as another user"},
};

/* The wrapper's own words, parsed by its grammar: false (with |r| raised)
 * when one is unknown or not harmless, or when the grammar does not find
 * the command where the unwrapping did (index |k|). */
bool pol_cls_wrapper_grammar_ok(const struct pol_cls_env *e, const struct wrapper *w,
				char *const *argv, size_t argc, size_t k, struct pol_cls_result *r)
{
	const struct wrapper_grammar *g = NULL;
	for (size_t i = 0; i < WD_ARRAY_SIZE(wrapper_grammars); i++)
		if (strcmp(wrapper_grammars[i].name, w->name) == 0)
			g = &wrapper_grammars[i];
	if (!g) {
		pol_cls_raise(r, POL_CLASS_OTHER, w->name, "%s has no grammar warden knows",
			      w->name);
		return false;
	}
	if (g->never) {
		pol_cls_raise(r, POL_CLASS_OTHER, w->name, "%s", g->never);
		return false;
	}
	struct pol_gr_parse *ps = wd_calloc(1, sizeof(*ps));
	size_t end = argc;
	/* nice -10 CMD: the obsolete adjustment form. */
	size_t first = 1;
	if (strcmp(w->name, "nice") == 0 && argc > 1 && argv[1][0] == '-' && argv[1][1] >= '0' &&
	    argv[1][1] <= '9' && strspn(argv[1] + 1, "0123456789") == strlen(argv[1] + 1))
		first = 2;
	pol_gr_parse_opts(g->opts, g->style, true, argv + first - 1, argc - first + 1, &end, ps);
	end += first - 1;
	if (e->trace) {
		wd_sb_printf(e->trace, "%s: ", w->name);
		pol_gr_describe(ps, e->trace);
		wd_sb_putc(e->trace, '\n');
	}
	bool ok = true;
	if (ps->bad) {
		pol_cls_raise(r, POL_CLASS_OTHER, ps->bad, "%s: %s, so it is not read-only",
			      w->name, ps->problem);
		ok = false;
	}
	for (size_t i = 0; i < ps->n; i++) {
		const struct pol_gr_item *it = &ps->items[i];
		if (it->opt && it->opt->effect == GR_WRITES && it->value)
			pol_hd_check_write_target(e, it->value, "time -o", r); /* --outp=/etc/x */
		if (it->opt && it->opt->effect != GR_OK && it->opt->effect != GR_CHECKED) {
			pol_cls_raise(r, POL_CLASS_OTHER, it->word, "%s %.40s %s", w->name,
				      it->word, pol_gr_effect_name(it->opt->effect));
			ok = false;
		}
	}
	/* env's NAME=value words, then timeout's duration, come before the
	 * command. */
	size_t at = end;
	while (strcmp(w->name, "env") == 0 && at < argc && is_assignment(argv[at])) {
		if (!pol_env_entry_fast_ok(argv[at])) {
			size_t nl = (size_t)(strchr(argv[at], '=') - argv[at]);
			pol_cls_raise(r, POL_CLASS_OTHER, argv[at],
				      "env sets %.*s, which is not a variable known harmless",
				      (int)nl, argv[at]);
			ok = false;
		}
		at++;
	}
	if (strcmp(w->name, "timeout") == 0 && at < argc)
		at++;
	if (ok && at != k && at < argc) {
		pol_cls_raise(r, POL_CLASS_OTHER, w->name,
			      "%s: warden cannot tell for sure which word starts the command",
			      w->name);
		ok = false;
	}
	free(ps);
	return ok;
}
