/*
 * classify.c: command classification for the fast path and hard deny.
 *
 * An argv is unwrapped (env, nice, timeout, nohup, stdbuf, sudo, xargs,
 * sh -c, ...) down to the commands that really run; each is checked for
 * hard deny (harddeny.c), for sensitive arguments and against the table of
 * read-only commands with their argument rules (readonly.c). The result is
 * the worst class found: one critical command makes the whole line critical,
 * one command that is not read-only keeps it off the fast path.
 */
#include "grammar.h"
#include "policy_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 8

/* ---- wrappers ----------------------------------------------------------------- */

struct wrapper {
	const char *name;
	const char *argopts;	      /* short options that take a separate argument */
	const char *const *long_args; /* long options that take one */
	int positional;		      /* operands before the command (timeout's duration) */
	bool assignments;	      /* VAR=value words before the command */
	bool privileged;
};

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

static const struct wrapper *find_wrapper(const char *name)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(wrappers); i++)
		if (strcmp(name, wrappers[i].name) == 0)
			return &wrappers[i];
	return NULL;
}

static bool in_list(const char *const *list, const char *s, size_t n)
{
	for (size_t i = 0; list[i]; i++)
		if (strlen(list[i]) == n && strncmp(list[i], s, n) == 0)
			return true;
	return false;
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

struct unwrap_info {
	const char *risky;   /* a run-changing VAR= assignment, or NULL */
	const char *split;   /* env -S's string, or NULL */
	const char *outfile; /* time -o's file, or NULL */
	bool lookup;	     /* command -v / -V: a lookup, runs nothing */
	bool shell;	     /* sudo -s / -i: an interactive shell */
	bool edit;	     /* sudo -e: sudoedit of the operands */
};

/* Index of the command |w| wraps in |argv| (|argc| when there is none). */
static size_t skip_wrapper(const struct wrapper *w, char *const *argv, size_t argc,
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
			k += (!eq && in_list(w->long_args, a, nl)) ? 2 : 1;
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

long cls_unwrap(char *const *argv, size_t argc, bool *risky_env, bool *privileged)
{
	size_t base = 0;
	for (int depth = 0; depth < MAX_DEPTH && base < argc; depth++) {
		const char *name = cls_prog_name(argv[base]);
		const struct wrapper *w = find_wrapper(name);
		if (!w) {
			if (strcmp(name, "busybox") == 0 && base + 1 < argc) {
				base++;
				continue;
			}
			return (long)base;
		}
		struct unwrap_info info = {0};
		size_t k = skip_wrapper(w, argv + base, argc - base, &info);
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
static size_t shell_script_index(const char *name, char *const *argv, size_t argc,
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

/* True when the exec's HOME is warden's own (or unset: the shell then
 * takes the user's from the password database). */
static bool home_is_start(const struct cls_env *e)
{
	const char *home = e->cfg ? e->cfg->home : NULL;
	return !e->env_home || (home && strcmp(e->env_home, home) == 0);
}

static void cls_shell(const struct cls_env *e, const char *name, char *const *argv, size_t argc,
		      int depth, struct cls_result *r)
{
	const char *problem;
	bool home_files;
	size_t si = shell_script_index(name, argv, argc, &problem, &home_files);
	/* A login or interactive shell runs HOME's start-up files unseen: only
	 * warden's own HOME is taken as the system's (the sandbox keeps its
	 * dot files out of the agent's write set); any other HOME may be a
	 * directory the agent wrote. */
	if (home_files && !home_is_start(e) && !problem)
		problem = "reads .profile, .bash_profile or .bashrc (-l, --login, -i) from a HOME "
			  "that is not warden's own, which the agent may have written";
	if (e->trace) {
		wd_sb_printf(e->trace, "%s: ", name);
		for (size_t i = 1; i < (si ? si : argc); i++) {
			wd_sb_shell_quote(e->trace, argv[i]);
			wd_sb_putc(e->trace, ' ');
		}
		if (si) {
			wd_sb_puts(e->trace, "script ");
			wd_sb_shell_quote(e->trace, argv[si]);
		}
		if (home_files)
			wd_sb_puts(e->trace, " (reads HOME's start-up files)");
		if (problem)
			wd_sb_printf(e->trace, " NOT READ-ONLY: %s", problem);
		wd_sb_putc(e->trace, '\n');
	}
	if (problem)
		cls_raise(r, POL_CLASS_OTHER, name, "%s %s", name, problem);
	if (si == 0) {
		cls_raise(r, POL_CLASS_OTHER, name,
			  "%s without -c reads its commands from a script, a terminal or a pipe",
			  name);
		return;
	}
	/* A harness's wrapper, recognised exactly, is decided on the model's
	 * command; an imitation is an ordinary (not plain) script below. */
	char *inner = NULL;
	if (hn_unwrap(argv, argc, name, e->home, &inner) == POL_HARNESS_CLAUDE_CODE) {
		cls_script(e, inner, depth + 1, r);
		free(inner);
		return;
	}
	free(inner);
	cls_script(e, argv[si], depth + 1, r);
}

/* ---- the script of sh -c ------------------------------------------------------- */

static const char *const downloaders[] = {"curl", "wget", "fetch", "aria2c", NULL};
static const char *const code_runners[] = {
	"sh",	   "bash", "dash", "zsh",  "ksh", "mksh", "ash",    "fish", "python",  "python3",
	"python2", "perl", "ruby", "node", "php", "eval", "source", ".",    "busybox", NULL};

static bool name_in(const char *const *list, const char *name)
{
	return in_list(list, name, strlen(name));
}

/* The program a command line really runs, after wrappers. */
static const char *real_name(char *const *argv, size_t argc)
{
	long k = cls_unwrap(argv, argc, NULL, NULL);
	return k < 0 ? "" : cls_prog_name(argv[k]);
}

static bool has_download_substitution(const char *w)
{
	static const char *const pats[] = {"$(curl", "$(wget", "`curl",
					   "`wget",  "<(curl", "<(wget"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(pats); i++)
		if (strstr(w, pats[i]))
			return true;
	return false;
}

static const char *not_plain_reason(const struct sh_script *sc)
{
	if (sc->unterminated)
		return "has an unterminated quote or substitution";
	for (size_t i = 0; i < sc->ntoks; i++) {
		const struct sh_tok *t = &sc->toks[i];
		if (t->kind == SH_REDIR)
			return t->heredoc ? "uses a heredoc" : "redirects input or output";
		if (t->kind == SH_OP_OTHER)
			return "uses a subshell, a background job or another operator";
		if (t->flags & SHW_EXPANSION)
			return "expands a variable or substitutes a command";
		if (t->flags & SHW_GLOB)
			return "uses a glob";
		if (t->flags & SHW_TILDE)
			return "uses ~ expansion";
		if (t->flags & SHW_ASSIGN)
			return "assigns a variable";
		if (t->flags & SHW_SPECIAL)
			return "uses a shell keyword or a group";
	}
	return "is not plain commands joined by && || ; |";
}

struct seg_state {
	bool pipe_from_download; /* an earlier command of this pipeline downloads */
	const char *download;
	size_t heredoc_idx;
};

/* One simple command of a script: tokens [b, e). */
static void cls_simple(const struct cls_env *e, const struct sh_script *sc, size_t b, size_t end,
		       int depth, struct seg_state *st, struct cls_result *r)
{
	char **words = wd_calloc(end - b + 1, sizeof(char *));
	size_t n = 0;
	bool feeds_heredoc = false;
	size_t heredoc_idx = 0;
	for (size_t i = b; i < end; i++) {
		const struct sh_tok *t = &sc->toks[i];
		if (t->kind == SH_REDIR) {
			if (t->heredoc) {
				feeds_heredoc = true;
				heredoc_idx = st->heredoc_idx++;
			}
			if (i + 1 < end && sc->toks[i + 1].kind == SH_WORD) {
				i++;
				if (t->write_redir)
					hd_check_write_target(e, sc->toks[i].text, "a redirect", r);
			}
			continue;
		}
		if (n == 0 && (t->flags & SHW_ASSIGN)) {
			size_t nl = (size_t)(strchr(t->text, '=') - t->text);
			if (pol_env_name_is_risky(t->text, nl)) {
				cls_raise(r, POL_CLASS_OTHER, t->text,
					  "the script sets %.*s, which changes what programs run",
					  (int)nl, t->text);
				r->risky_env = true;
			}
			continue;
		}
		if (n == 0 && (t->flags & SHW_SPECIAL))
			continue;
		words[n++] = t->text;
	}
	if (n) {
		const char *prog = real_name(words, n);
		for (size_t i = 0; i < n; i++) {
			if (has_download_substitution(words[i]) &&
			    (i == 0 || name_in(code_runners, prog)))
				cls_raise(r, POL_CLASS_CRITICAL, "curl | sh",
					  "the script runs code it downloads (%s), unseen",
					  words[i]);
		}
		if (st->pipe_from_download && name_in(code_runners, prog))
			cls_raise(
				r, POL_CLASS_CRITICAL, "curl | sh",
				"%s output is piped into %s: it runs code from the network, unseen",
				st->download, prog);
		if (name_in(downloaders, prog)) {
			st->pipe_from_download = true;
			st->download = name_in(downloaders, prog) ? downloaders[0] : "";
			for (size_t i = 0; downloaders[i]; i++)
				if (strcmp(downloaders[i], prog) == 0)
					st->download = downloaders[i];
		}
		if (feeds_heredoc && heredoc_idx < sc->nheredocs && name_in(code_runners, prog))
			cls_script(e, sc->heredocs[heredoc_idx], depth + 1, r);
		cls_argv(e, words, n, depth + 1, r);
	}
	free(words);
}

void cls_script(const struct cls_env *e, const char *script, int depth, struct cls_result *r)
{
	if (depth > MAX_DEPTH) {
		cls_raise(r, POL_CLASS_OTHER, "", "the command nests shells too deeply to follow");
		return;
	}
	hd_check_script_text(script, r);
	struct sh_script sc;
	sh_split(script, &sc);
	/* A run-changing assignment is the more useful reason: say it first. */
	for (size_t i = 0; i < sc.ntoks; i++) {
		const struct sh_tok *t = &sc.toks[i];
		if (!(t->flags & SHW_ASSIGN))
			continue;
		size_t nl = (size_t)(strchr(t->text, '=') - t->text);
		if (pol_env_name_is_risky(t->text, nl)) {
			cls_raise(r, POL_CLASS_OTHER, "",
				  "the script sets %.*s, which changes what programs run", (int)nl,
				  t->text);
			snprintf(r->matched, sizeof(r->matched), "%.*s", (int)nl, t->text);
			r->risky_env = true;
		}
	}
	if (!sc.plain)
		cls_raise(r, POL_CLASS_OTHER, "", "the shell script %s, so it is not plain",
			  not_plain_reason(&sc));
	for (size_t i = 0; i < sc.nnested; i++)
		cls_script(e, sc.nested[i], depth + 1, r);
	struct seg_state st = {0};
	size_t b = 0;
	for (size_t i = 0; i <= sc.ntoks; i++) {
		enum sh_tok_kind k = i < sc.ntoks ? sc.toks[i].kind : SH_OP_SEMI;
		if (k == SH_WORD || k == SH_REDIR) {
			if (k == SH_REDIR && i + 1 < sc.ntoks && sc.toks[i + 1].kind == SH_WORD)
				i++;
			continue;
		}
		cls_simple(e, &sc, b, i, depth, &st, r);
		bool pipe = i < sc.ntoks && (k == SH_OP_PIPE || strcmp(sc.toks[i].text, "|&") == 0);
		if (!pipe)
			st.pipe_from_download = false;
		b = i + 1;
	}
	sh_script_free(&sc);
}

/* ---- find -exec ---------------------------------------------------------------- */

static const char *const find_actions[] = {"-exec", "-execdir", "-ok", "-okdir", NULL};

/* Classifies the commands of find's -exec/-ok actions: hard deny inside. */
static void cls_find_exec(const struct cls_env *e, char *const *argv, size_t argc, int depth,
			  struct cls_result *r)
{
	for (size_t i = 1; i < argc; i++) {
		if (!name_in(find_actions, argv[i]))
			continue;
		size_t b = i + 1, k = b;
		while (k < argc && strcmp(argv[k], ";") != 0 && strcmp(argv[k], "+") != 0)
			k++;
		if (k > b) {
			struct cls_result sub = {.cls = POL_CLASS_READ_ONLY};
			cls_argv(e, argv + b, k - b, depth + 1, &sub);
			if (sub.cls == POL_CLASS_CRITICAL)
				cls_raise(r, POL_CLASS_CRITICAL, sub.matched, "find %s: %s",
					  argv[i], sub.reason);
		}
		i = k;
	}
}

/* ---- the argv ----------------------------------------------------------------- */

static void cls_sensitive_args(const struct cls_env *e, char *const *argv, size_t argc,
			       struct cls_result *r)
{
	for (size_t i = 1; i < argc; i++) {
		const char *m;
		if (pol_is_sensitive(e->cfg, argv[i], &m)) {
			if (r->cls < POL_CLASS_OTHER) {
				char *red = pol_redact_text(argv[i]);
				cls_raise(r, POL_CLASS_OTHER, m,
					  "the argument %.120s matches the sensitive marker \"%s\"",
					  red, m);
				free(red);
			}
			r->sensitive = true;
		}
	}
}

/* The wrappers' own options as each defines them (GNU getopt_long with
 * "+": options stop at the command). Effects other than harmless keep the
 * line off the fast path; the command inside is still classified. */
static const struct gr_opt env_gr[] = {{"ignore-environment", 'i', GR_NOARG, GR_OK},
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
static const struct gr_opt nice_gr[] = {{"adjustment", 'n', GR_ARG, GR_OK},
					{"help", 0, GR_NOARG, GR_OK},
					{"version", 0, GR_NOARG, GR_OK},
					{NULL, 0, GR_NOARG, GR_OK}};
static const struct gr_opt timeout_gr[] = {
	{"preserve-status", 0, GR_NOARG, GR_OK}, {"foreground", 0, GR_NOARG, GR_OK},
	{"kill-after", 'k', GR_ARG, GR_OK},	 {"signal", 's', GR_ARG, GR_OK},
	{"verbose", 'v', GR_NOARG, GR_OK},	 {"help", 0, GR_NOARG, GR_OK},
	{"version", 0, GR_NOARG, GR_OK},	 {NULL, 0, GR_NOARG, GR_OK}};
static const struct gr_opt stdbuf_gr[] = {
	{"input", 'i', GR_ARG, GR_OK},	 {"output", 'o', GR_ARG, GR_OK},
	{"error", 'e', GR_ARG, GR_OK},	 {"help", 0, GR_NOARG, GR_OK},
	{"version", 0, GR_NOARG, GR_OK}, {NULL, 0, GR_NOARG, GR_OK}};
static const struct gr_opt time_gr[] = {
	{"format", 'f', GR_ARG, GR_OK},	    {"portability", 'p', GR_NOARG, GR_OK},
	{"output", 'o', GR_ARG, GR_WRITES}, {"append", 'a', GR_NOARG, GR_OK},
	{"verbose", 'v', GR_NOARG, GR_OK},  {"quiet", 'q', GR_NOARG, GR_OK},
	{"help", 'h', GR_NOARG, GR_OK},	    {"version", 'V', GR_NOARG, GR_OK},
	{NULL, 0, GR_NOARG, GR_OK}};
static const struct gr_opt setsid_gr[] = {
	{"ctty", 'c', GR_NOARG, GR_OK},	   {"fork", 'f', GR_NOARG, GR_OK},
	{"wait", 'w', GR_NOARG, GR_OK},	   {"help", 'h', GR_NOARG, GR_OK},
	{"version", 'V', GR_NOARG, GR_OK}, {NULL, 0, GR_NOARG, GR_OK}};
/* command -p looks the program up in a default PATH: still the same name. */
static const struct gr_opt command_gr[] = {{NULL, 'p', GR_NOARG, GR_OK},
					   {NULL, 'v', GR_NOARG, GR_OK},
					   {NULL, 'V', GR_NOARG, GR_OK},
					   {NULL, 0, GR_NOARG, GR_OK}};
/* exec -a NAME starts the program with another argv[0] (a multi-call
 * program then plays another tool), -l as a login shell: not read-only. */
static const struct gr_opt exec_gr[] = {{NULL, 'a', GR_ARG, GR_RUNS},
					{NULL, 'c', GR_NOARG, GR_OK},
					{NULL, 'l', GR_NOARG, GR_RUNS},
					{NULL, 0, GR_NOARG, GR_OK}};
static const struct gr_opt none_gr[] = {{NULL, 0, GR_NOARG, GR_OK}};

struct wrapper_grammar {
	const char *name;
	const struct gr_opt *opts;
	enum gr_style style;
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
static bool wrapper_grammar_ok(const struct cls_env *e, const struct wrapper *w, char *const *argv,
			       size_t argc, size_t k, struct cls_result *r)
{
	const struct wrapper_grammar *g = NULL;
	for (size_t i = 0; i < WD_ARRAY_SIZE(wrapper_grammars); i++)
		if (strcmp(wrapper_grammars[i].name, w->name) == 0)
			g = &wrapper_grammars[i];
	if (!g) {
		cls_raise(r, POL_CLASS_OTHER, w->name, "%s has no grammar warden knows", w->name);
		return false;
	}
	if (g->never) {
		cls_raise(r, POL_CLASS_OTHER, w->name, "%s", g->never);
		return false;
	}
	struct gr_parse *ps = wd_calloc(1, sizeof(*ps));
	size_t end = argc;
	/* nice -10 CMD: the obsolete adjustment form. */
	size_t first = 1;
	if (strcmp(w->name, "nice") == 0 && argc > 1 && argv[1][0] == '-' && argv[1][1] >= '0' &&
	    argv[1][1] <= '9' && strspn(argv[1] + 1, "0123456789") == strlen(argv[1] + 1))
		first = 2;
	gr_parse_opts(g->opts, g->style, true, argv + first - 1, argc - first + 1, &end, ps);
	end += first - 1;
	if (e->trace) {
		wd_sb_printf(e->trace, "%s: ", w->name);
		gr_describe(ps, e->trace);
		wd_sb_putc(e->trace, '\n');
	}
	bool ok = true;
	if (ps->bad) {
		cls_raise(r, POL_CLASS_OTHER, ps->bad, "%s: %s, so it is not read-only", w->name,
			  ps->problem);
		ok = false;
	}
	for (size_t i = 0; i < ps->n; i++) {
		const struct gr_item *it = &ps->items[i];
		if (it->opt && it->opt->effect == GR_WRITES && it->value)
			hd_check_write_target(e, it->value, "time -o", r); /* --outp=/etc/x */
		if (it->opt && it->opt->effect != GR_OK && it->opt->effect != GR_CHECKED) {
			cls_raise(r, POL_CLASS_OTHER, it->word, "%s %.40s %s", w->name, it->word,
				  gr_effect_name(it->opt->effect));
			ok = false;
		}
	}
	/* env's NAME=value words, then timeout's duration, come before the
	 * command. */
	size_t at = end;
	while (strcmp(w->name, "env") == 0 && at < argc && is_assignment(argv[at])) {
		if (!pol_env_entry_fast_ok(argv[at])) {
			size_t nl = (size_t)(strchr(argv[at], '=') - argv[at]);
			cls_raise(r, POL_CLASS_OTHER, argv[at],
				  "env sets %.*s, which is not a variable known harmless", (int)nl,
				  argv[at]);
			ok = false;
		}
		at++;
	}
	if (strcmp(w->name, "timeout") == 0 && at < argc)
		at++;
	if (ok && at != k && at < argc) {
		cls_raise(r, POL_CLASS_OTHER, w->name,
			  "%s: warden cannot tell for sure which word starts the command", w->name);
		ok = false;
	}
	free(ps);
	return ok;
}

/* git reads a global configuration from $XDG_CONFIG_HOME/git/config and
 * ~/.gitconfig (trace2 targets that git itself writes, aliases, pager,
 * fsmonitor, hooksPath): read-only only when HOME is the one warden was
 * started with and XDG_CONFIG_HOME, if set, is that HOME's .config. Whether
 * that HOME is one the agent can write is not policy's to know: the
 * sandbox keeps the start HOME's dot files out of the agent's write set. */
static bool git_env_ok(const struct cls_env *e, char *why, size_t n)
{
	const char *home = e->cfg ? e->cfg->home : NULL;
	if (e->env_home && (!home || strcmp(e->env_home, home) != 0)) {
		snprintf(why, n,
			 "git reads its global configuration from HOME=%.80s, not warden's own "
			 "HOME: the agent may have written it",
			 e->env_home);
		return false;
	}
	if (e->env_xdg_config) {
		char want[4200];
		snprintf(want, sizeof(want), "%s/.config", home ? home : "");
		if (!home || strcmp(e->env_xdg_config, want) != 0) {
			snprintf(why, n,
				 "git reads its global configuration from XDG_CONFIG_HOME=%.80s, "
				 "which the agent may have written",
				 e->env_xdg_config);
			return false;
		}
	}
	return true;
}

static void cls_wrapper(const struct cls_env *e, const struct wrapper *w, char *const *argv,
			size_t argc, int depth, struct cls_result *r)
{
	struct unwrap_info info = {0};
	size_t k = skip_wrapper(w, argv, argc, &info);
	wrapper_grammar_ok(e, w, argv, argc, k, r);
	if (info.risky) {
		size_t nl = (size_t)(strchr(info.risky, '=') - info.risky);
		cls_raise(r, POL_CLASS_OTHER, info.risky,
			  "%s sets %.*s, which changes what the program runs or loads", w->name,
			  (int)nl, info.risky);
		r->risky_env = true;
	}
	if (info.outfile)
		hd_check_write_target(e, info.outfile, "time -o", r);
	if (info.split)
		cls_script(e, info.split, depth + 1, r);
	if (w->privileged) {
		cls_raise(r, POL_CLASS_OTHER, w->name, "%s runs a command as another user",
			  w->name);
		if (info.edit)
			for (size_t i = k; i < argc; i++)
				hd_check_write_target(e, argv[i], "sudoedit", r);
		if (info.shell && k >= argc)
			return;
	}
	if (strcmp(w->name, "xargs") == 0)
		cls_raise(r, POL_CLASS_OTHER, "xargs",
			  "xargs runs a command on arguments read from its input");
	if (k >= argc) {
		if (info.lookup || strcmp(w->name, "command") == 0)
			cls_raise(r, POL_CLASS_READ_ONLY, w->name,
				  "command -v only looks a name up");
		else if (strcmp(w->name, "env") == 0 && !info.split)
			cls_raise(r, POL_CLASS_OTHER, "env",
				  "env without a command prints every variable, secrets included");
		else if (strcmp(w->name, "xargs") == 0)
			cls_argv(e, (char *const[]){"echo", NULL}, 1, depth + 1, r);
		else if (!info.split)
			cls_raise(r, POL_CLASS_OTHER, w->name, "%s without a command", w->name);
		return;
	}
	if (info.lookup) {
		cls_raise(r, POL_CLASS_READ_ONLY, w->name, "command -v only looks a name up");
		return;
	}
	cls_argv(e, argv + k, argc - k, depth + 1, r);
}

/* su -c CMD and runuser -c CMD run CMD through a shell. */
static bool cls_su(const struct cls_env *e, char *const *argv, size_t argc, int depth,
		   struct cls_result *r)
{
	cls_raise(r, POL_CLASS_OTHER, argv[0], "%s runs commands as another user",
		  cls_prog_name(argv[0]));
	for (size_t i = 1; i < argc; i++) {
		if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--command") == 0) &&
		    i + 1 < argc) {
			cls_script(e, argv[i + 1], depth + 1, r);
			return true;
		}
		if (strncmp(argv[i], "--command=", 10) == 0) {
			cls_script(e, argv[i] + 10, depth + 1, r);
			return true;
		}
	}
	return true;
}

/* eval ARGS and watch CMD run their joined arguments as a script. */
static void cls_joined_script(const struct cls_env *e, char *const *argv, size_t argc, int depth,
			      struct cls_result *r)
{
	struct wd_sb sb = {0};
	for (size_t i = 0; i < argc; i++) {
		if (i)
			wd_sb_putc(&sb, ' ');
		wd_sb_puts(&sb, argv[i]);
	}
	char *s = wd_sb_steal(&sb);
	cls_script(e, s, depth + 1, r);
	free(s);
}

static void cls_leaf(const struct cls_env *e, const char *name, char *const *argv, size_t argc,
		     struct cls_result *r)
{
	hd_check_command(e, name, argv, argc, r);
	cls_sensitive_args(e, argv, argc, r);
	char why[200] = "";
	char matched[64] = "";
	bool ro = strcmp(name, "git") == 0
			  ? pol_git_readonly(argv, argc, e->trace, why, sizeof(why), matched)
			  : pol_readonly_check(name, argv, argc, e->cwd, e->trace, why, sizeof(why),
					       matched);
	if (ro && strcmp(name, "git") == 0 && !git_env_ok(e, why, sizeof(why))) {
		snprintf(matched, sizeof(matched), "%s", "HOME");
		ro = false;
	}
	if (ro)
		cls_raise(r, POL_CLASS_READ_ONLY, matched, "%s", why);
	else
		cls_raise(r, POL_CLASS_OTHER, matched, "%s", why);
}

static void cls_named(const struct cls_env *e, const char *name, char *const *argv, size_t argc,
		      int depth, struct cls_result *r);

/* Classifies |argv| as the program |name| plays, with argv[0] dispatch:
 * git-<cmd> becomes "git <cmd> ARGS". */
static void cls_as_applet(const struct cls_env *e, const char *prog, const char *applet,
			  char *const *argv, size_t argc, struct cls_result *r)
{
	if (strcmp(prog, "git") == 0) {
		char **v = wd_calloc(argc + 2, sizeof(char *));
		v[0] = (char *)"git";
		v[1] = (char *)applet + 4;
		for (size_t i = 1; i < argc; i++)
			v[i + 1] = argv[i];
		cls_raise(r, POL_CLASS_READ_ONLY, applet, "git runs as git %s (its argv[0])",
			  applet + 4);
		cls_named(e, "git", v, argc + 1, 0, r);
		free(v);
		return;
	}
	cls_raise(r, POL_CLASS_READ_ONLY, applet, "%s is run as %s, a multi-call program", prog,
		  applet);
	cls_named(e, applet, argv, argc, 0, r);
	if (strcmp(prog, "busybox") == 0 || strcmp(prog, "toybox") == 0)
		cls_raise(r, POL_CLASS_OTHER, prog,
			  "%s's applets parse their options their own way, not by warden's tables",
			  prog);
}

/* Two names that are one program to classify: the same table entry, or
 * two shells (sh -> dash). */
static bool same_program(const char *a, const char *b)
{
	if (strcmp(a, b) == 0)
		return true;
	if (cls_is_shell(a) && cls_is_shell(b))
		return true;
	const struct gr_prog *pa = gr_find(a);
	return pa && pa == gr_find(b);
}

/* The top-level request: the program is known by its path. It is
 * classified by every name it answers to, the name it was invoked by (the
 * path's basename, an alternatives or compatibility link), the name of the
 * file that starts (the resolved path) and, for a multi-call program, the
 * applet argv[0] makes it play: hard deny holds if any of them is denied
 * and the command is read-only only if each of them is. A program the
 * agent can have written is never read-only by name. */
static void cls_top(const struct cls_env *e, char *const *argv, size_t argc, struct cls_result *r)
{
	char invoked[128], resolved[128];
	snprintf(invoked, sizeof(invoked), "%s", cls_identity(e->path, argv[0], resolved, 128));
	if (e->resolved)
		cls_identity(e->resolved, invoked, resolved, sizeof(resolved));
	else
		snprintf(resolved, sizeof(resolved), "%s", invoked);
	if (e->trace) {
		wd_sb_printf(e->trace, "names: invoked as %s", invoked);
		if (strcmp(resolved, invoked) != 0)
			wd_sb_printf(e->trace, ", file %s", resolved);
		wd_sb_printf(e->trace, ", argv[0] %s\n", cls_prog_name(argv[0]));
	}
	if (e->agent_writable)
		cls_raise(r, POL_CLASS_OTHER, e->path,
			  "%.120s is written where the agent can write: no allowance by name",
			  e->path);
	/* The agent's own binary plays the tools argv[0] names (harness.c). */
	const char *plays = hn_multicall_name(e, resolved, argv[0]);
	if (plays != resolved && strcmp(resolved, "busybox") != 0) {
		cls_raise(r, POL_CLASS_READ_ONLY, plays, "%s is run as %s, a multi-call binary",
			  resolved, plays);
		cls_named(e, plays, argv, argc, 0, r);
		return;
	}
	const char *names[2] = {invoked, resolved};
	size_t nn = same_program(invoked, resolved) ? 1 : 2;
	for (size_t i = 0; i < nn; i++) {
		const char *applet = cls_multicall_applet(names[i], argv[0]);
		if (applet && i == 1 && strcmp(applet, names[0]) == 0)
			continue; /* /usr/sbin/shutdown as shutdown: classified once */
		if (applet) {
			cls_as_applet(e, names[i], applet, argv, argc, r);
			continue;
		}
		if (i == 0 && strcmp(invoked, cls_prog_name(argv[0])) != 0)
			cls_raise(r, POL_CLASS_READ_ONLY, invoked,
				  "the program is %s although it calls itself %.60s", invoked,
				  cls_prog_name(argv[0]));
		cls_named(e, names[i], argv, argc, 0, r);
	}
}

void cls_argv(const struct cls_env *e, char *const *argv, size_t argc, int depth,
	      struct cls_result *r)
{
	if (argc == 0 || !argv[0])
		return;
	if (depth > MAX_DEPTH) {
		cls_raise(r, POL_CLASS_OTHER, "",
			  "the command nests wrappers too deeply to follow");
		return;
	}
	if (depth == 0 && e->path) {
		cls_top(e, argv, argc, r);
		return;
	}
	cls_named(e, cls_prog_name(argv[0]), argv, argc, depth, r);
}

static void cls_named(const struct cls_env *e, const char *name, char *const *argv, size_t argc,
		      int depth, struct cls_result *r)
{
	const struct wrapper *w = find_wrapper(name);
	if (w) {
		cls_wrapper(e, w, argv, argc, depth, r);
		return;
	}
	if (cls_is_shell(name)) {
		cls_shell(e, name, argv, argc, depth, r);
		return;
	}
	/* "-bash": a login shell by its argv[0] */
	if (name[0] == '-' && cls_is_shell(name + 1)) {
		cls_shell(e, name + 1, argv, argc, depth, r);
		return;
	}
	if ((strcmp(name, "busybox") == 0 || strcmp(name, "toybox") == 0) && argc > 1) {
		cls_argv(e, argv + 1, argc - 1, depth + 1, r);
		cls_raise(r, POL_CLASS_OTHER, name,
			  "%s's applets parse their options their own way, not by warden's tables",
			  name);
		return;
	}
	if (strcmp(name, "su") == 0 || strcmp(name, "runuser") == 0) {
		cls_su(e, argv, argc, depth, r);
		return;
	}
	if (strcmp(name, "eval") == 0 || strcmp(name, "watch") == 0) {
		size_t k = 1;
		while (strcmp(name, "watch") == 0 && k < argc && argv[k][0] == '-')
			k += (strcmp(argv[k], "-n") == 0 || strcmp(argv[k], "--interval") == 0) ? 2
												: 1;
		cls_raise(r, POL_CLASS_OTHER, name, "%s runs its arguments as a shell script",
			  name);
		if (k < argc)
			cls_joined_script(e, argv + k, argc - k, depth, r);
		return;
	}
	/* bfs and ugrep: the rules of find and grep. */
	char **tool_argv = hn_tool_argv(name, argv, argc, &name, r);
	if (tool_argv)
		argv = tool_argv;
	if (strcmp(name, "find") == 0)
		cls_find_exec(e, argv, argc, depth, r);
	cls_leaf(e, name, argv, argc, r);
	free(tool_argv);
}

void pol_classify_argv(char *const argv[], char *const envp[], const struct pol_config *c,
		       struct pol_classification *out)
{
	struct cls_env e = {.cfg = c};
	if (c) {
		e.project = c->project;
		e.home = c->home;
		e.cwd = c->project;
	}
	struct cls_result r = {.cls = POL_CLASS_READ_ONLY};
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		size_t nl = eq ? (size_t)(eq - envp[i]) : strlen(envp[i]);
		if (strncmp(envp[i], "HOME=", 5) == 0)
			e.env_home = envp[i] + 5;
		else if (strncmp(envp[i], "XDG_CONFIG_HOME=", 16) == 0)
			e.env_xdg_config = envp[i] + 16;
		else if (!pol_env_entry_fast_ok(envp[i]) && r.cls < POL_CLASS_OTHER) {
			cls_raise(
				&r, POL_CLASS_OTHER, "",
				"the environment sets %.*s, which is not a variable known harmless",
				(int)nl, envp[i]);
			snprintf(r.matched, sizeof(r.matched), "%.*s", (int)nl, envp[i]);
		}
	}
	size_t argc = 0;
	while (argv && argv[argc])
		argc++;
	if (argc == 0)
		cls_raise(&r, POL_CLASS_OTHER, "", "there is no command");
	else
		cls_argv(&e, argv, argc, 0, &r);
	out->cls = r.cls;
	snprintf(out->reason, sizeof(out->reason), "%s", r.reason);
	snprintf(out->matched, sizeof(out->matched), "%s", r.matched);
}
