/*
 * classify.c: command classification for the fast path and hard deny.
 *
 * An argv is unwrapped (env, nice, timeout, nohup, stdbuf, sudo, xargs,
 * sh -c, ...: unwrap.c) down to the commands that really run; each is checked for
 * hard deny (harddeny.c), for sensitive arguments and against the table of
 * read-only commands with their argument rules (readonly.c). The result is
 * the worst class found: one critical command makes the whole line critical,
 * one command that is not read-only keeps it off the fast path.
 *
 * See docs/design.md, section "Classification".
 */
#include "grammar.h"
#include "policy_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* True when the exec's HOME is warden's own (or unset: the shell then
 * takes the user's from the password database). */
static bool home_is_start(const struct pol_cls_env *e)
{
	const char *home = e->cfg ? e->cfg->home : NULL;
	return !e->env_home || (home && strcmp(e->env_home, home) == 0);
}

static void cls_shell(const struct pol_cls_env *e, const char *name, char *const *argv, size_t argc,
		      int depth, struct pol_cls_result *r)
{
	const char *problem;
	bool home_files;
	size_t si = pol_cls_shell_script_index(name, argv, argc, &problem, &home_files);
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
		pol_cls_raise(r, POL_CLASS_OTHER, name, "%s %s", name, problem);
	if (si == 0) {
		pol_cls_raise(
			r, POL_CLASS_OTHER, name,
			"%s without -c reads its commands from a script, a terminal or a pipe",
			name);
		return;
	}
	/* A harness's wrapper, recognised exactly, is decided on the model's
	 * command; an imitation is an ordinary (not plain) script below. */
	char *inner = NULL;
	if (pol_hn_unwrap(argv, argc, name, e->home, &inner) == POL_HARNESS_CLAUDE_CODE) {
		pol_cls_script(e, inner, depth + 1, r);
		free(inner);
		return;
	}
	free(inner);
	pol_cls_script(e, argv[si], depth + 1, r);
}

/* ---- the script of sh -c ------------------------------------------------------- */

static const char *const downloaders[] = {"curl", "wget", "fetch", "aria2c", NULL};
static const char *const code_runners[] = {
	"sh",	   "bash", "dash", "zsh",  "ksh", "mksh", "ash",    "fish", "python",  "python3",
	"python2", "perl", "ruby", "node", "php", "eval", "source", ".",    "busybox", NULL};

static bool name_in(const char *const *list, const char *name)
{
	return pol_cls_in_list(list, name, strlen(name));
}

/* The program a command line really runs, after wrappers. */
static const char *real_name(char *const *argv, size_t argc)
{
	long k = pol_cls_unwrap(argv, argc, NULL, NULL);
	return k < 0 ? "" : pol_cls_prog_name(argv[k]);
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

static const char *not_plain_reason(const struct pol_sh_script *sc)
{
	if (sc->unterminated)
		return "has an unterminated quote or substitution";
	for (size_t i = 0; i < sc->ntoks; i++) {
		const struct pol_sh_tok *t = &sc->toks[i];
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
static void cls_simple(const struct pol_cls_env *e, const struct pol_sh_script *sc, size_t b,
		       size_t end, int depth, struct seg_state *st, struct pol_cls_result *r)
{
	char **words = wd_calloc(end - b + 1, sizeof(char *));
	size_t n = 0;
	bool feeds_heredoc = false;
	size_t heredoc_idx = 0;
	for (size_t i = b; i < end; i++) {
		const struct pol_sh_tok *t = &sc->toks[i];
		if (t->kind == SH_REDIR) {
			if (t->heredoc) {
				feeds_heredoc = true;
				heredoc_idx = st->heredoc_idx++;
			}
			if (i + 1 < end && sc->toks[i + 1].kind == SH_WORD) {
				i++;
				if (t->write_redir)
					pol_hd_check_write_target(e, sc->toks[i].text, "a redirect",
								  r);
			}
			continue;
		}
		if (n == 0 && (t->flags & SHW_ASSIGN)) {
			size_t nl = (size_t)(strchr(t->text, '=') - t->text);
			if (pol_env_name_is_risky(t->text, nl)) {
				pol_cls_raise(
					r, POL_CLASS_OTHER, t->text,
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
				pol_cls_raise(r, POL_CLASS_CRITICAL, "curl | sh",
					      "the script runs code it downloads (%s), unseen",
					      words[i]);
		}
		if (st->pipe_from_download && name_in(code_runners, prog))
			pol_cls_raise(
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
			pol_cls_script(e, sc->heredocs[heredoc_idx], depth + 1, r);
		pol_cls_argv(e, words, n, depth + 1, r);
	}
	free(words);
}

void pol_cls_script(const struct pol_cls_env *e, const char *script, int depth,
		    struct pol_cls_result *r)
{
	if (depth > CLS_MAX_DEPTH) {
		pol_cls_raise(r, POL_CLASS_OTHER, "",
			      "the command nests shells too deeply to follow");
		return;
	}
	pol_hd_check_script_text(script, r);
	struct pol_sh_script sc;
	pol_sh_split(script, &sc);
	/* A run-changing assignment is the more useful reason: say it first. */
	for (size_t i = 0; i < sc.ntoks; i++) {
		const struct pol_sh_tok *t = &sc.toks[i];
		if (!(t->flags & SHW_ASSIGN))
			continue;
		size_t nl = (size_t)(strchr(t->text, '=') - t->text);
		if (pol_env_name_is_risky(t->text, nl)) {
			pol_cls_raise(r, POL_CLASS_OTHER, "",
				      "the script sets %.*s, which changes what programs run",
				      (int)nl, t->text);
			snprintf(r->matched, sizeof(r->matched), "%.*s", (int)nl, t->text);
			r->risky_env = true;
		}
	}
	if (!sc.plain)
		pol_cls_raise(r, POL_CLASS_OTHER, "", "the shell script %s, so it is not plain",
			      not_plain_reason(&sc));
	for (size_t i = 0; i < sc.nnested; i++)
		pol_cls_script(e, sc.nested[i], depth + 1, r);
	struct seg_state st = {0};
	size_t b = 0;
	for (size_t i = 0; i <= sc.ntoks; i++) {
		enum pol_sh_tok_kind k = i < sc.ntoks ? sc.toks[i].kind : SH_OP_SEMI;
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
	pol_sh_script_free(&sc);
}

/* ---- find -exec ---------------------------------------------------------------- */

static const char *const find_actions[] = {"-exec", "-execdir", "-ok", "-okdir", NULL};

/* Classifies the commands of find's -exec/-ok actions: hard deny inside. */
static void cls_find_exec(const struct pol_cls_env *e, char *const *argv, size_t argc, int depth,
			  struct pol_cls_result *r)
{
	for (size_t i = 1; i < argc; i++) {
		if (!name_in(find_actions, argv[i]))
			continue;
		size_t b = i + 1, k = b;
		while (k < argc && strcmp(argv[k], ";") != 0 && strcmp(argv[k], "+") != 0)
			k++;
		if (k > b) {
			struct pol_cls_result sub = {.cls = POL_CLASS_READ_ONLY};
			pol_cls_argv(e, argv + b, k - b, depth + 1, &sub);
			if (sub.cls == POL_CLASS_CRITICAL)
				pol_cls_raise(r, POL_CLASS_CRITICAL, sub.matched, "find %s: %s",
					      argv[i], sub.reason);
		}
		i = k;
	}
}

/* ---- the argv ----------------------------------------------------------------- */

static void cls_sensitive_args(const struct pol_cls_env *e, char *const *argv, size_t argc,
			       struct pol_cls_result *r)
{
	for (size_t i = 1; i < argc; i++) {
		const char *m;
		if (pol_is_sensitive(e->cfg, argv[i], &m)) {
			if (r->cls < POL_CLASS_OTHER) {
				char *red = pol_redact_text(argv[i]);
				pol_cls_raise(
					r, POL_CLASS_OTHER, m,
					"the argument %.120s matches the sensitive marker \"%s\"",
					red, m);
				free(red);
			}
			r->sensitive = true;
		}
	}
}

/* git reads a global configuration from $XDG_CONFIG_HOME/git/config and
 * ~/.gitconfig (trace2 targets that git itself writes, aliases, pager,
 * fsmonitor, hooksPath): read-only only when HOME is the one warden was
 * started with and XDG_CONFIG_HOME, if set, is that HOME's .config. Whether
 * that HOME is one the agent can write is not policy's to know: the
 * sandbox keeps the start HOME's dot files out of the agent's write set. */
static bool git_env_ok(const struct pol_cls_env *e, struct pol_reason *rs)
{
	const char *home = e->cfg ? e->cfg->home : NULL;
	if (e->env_home && (!home || strcmp(e->env_home, home) != 0)) {
		snprintf(rs->why, sizeof(rs->why),
			 "git reads its global configuration from HOME=%.80s, not warden's own "
			 "HOME: the agent may have written it",
			 e->env_home);
		return false;
	}
	if (e->env_xdg_config) {
		char want[4200];
		snprintf(want, sizeof(want), "%s/.config", home ? home : "");
		if (!home || strcmp(e->env_xdg_config, want) != 0) {
			snprintf(rs->why, sizeof(rs->why),
				 "git reads its global configuration from XDG_CONFIG_HOME=%.80s, "
				 "which the agent may have written",
				 e->env_xdg_config);
			return false;
		}
	}
	return true;
}

static void cls_wrapper(const struct pol_cls_env *e, const struct wrapper *w, char *const *argv,
			size_t argc, int depth, struct pol_cls_result *r)
{
	struct unwrap_info info = {0};
	size_t k = pol_cls_skip_wrapper(w, argv, argc, &info);
	pol_cls_wrapper_grammar_ok(e, w, argv, argc, k, r);
	if (info.risky) {
		size_t nl = (size_t)(strchr(info.risky, '=') - info.risky);
		pol_cls_raise(r, POL_CLASS_OTHER, info.risky,
			      "%s sets %.*s, which changes what the program runs or loads", w->name,
			      (int)nl, info.risky);
		r->risky_env = true;
	}
	if (info.outfile)
		pol_hd_check_write_target(e, info.outfile, "time -o", r);
	if (info.split)
		pol_cls_script(e, info.split, depth + 1, r);
	if (w->privileged) {
		pol_cls_raise(r, POL_CLASS_OTHER, w->name, "%s runs a command as another user",
			      w->name);
		if (info.edit)
			for (size_t i = k; i < argc; i++)
				pol_hd_check_write_target(e, argv[i], "sudoedit", r);
		if (info.shell && k >= argc)
			return;
	}
	if (strcmp(w->name, "xargs") == 0)
		pol_cls_raise(r, POL_CLASS_OTHER, "xargs",
			      "xargs runs a command on arguments read from its input");
	if (k >= argc) {
		if (info.lookup || strcmp(w->name, "command") == 0)
			pol_cls_raise(r, POL_CLASS_READ_ONLY, w->name,
				      "command -v only looks a name up");
		else if (strcmp(w->name, "env") == 0 && !info.split)
			pol_cls_raise(
				r, POL_CLASS_OTHER, "env",
				"env without a command prints every variable, secrets included");
		else if (strcmp(w->name, "xargs") == 0)
			pol_cls_argv(e, (char *const[]){"echo", NULL}, 1, depth + 1, r);
		else if (!info.split)
			pol_cls_raise(r, POL_CLASS_OTHER, w->name, "%s without a command", w->name);
		return;
	}
	if (info.lookup) {
		pol_cls_raise(r, POL_CLASS_READ_ONLY, w->name, "command -v only looks a name up");
		return;
	}
	pol_cls_argv(e, argv + k, argc - k, depth + 1, r);
}

/* su -c CMD and runuser -c CMD run CMD through a shell. */
static bool cls_su(const struct pol_cls_env *e, char *const *argv, size_t argc, int depth,
		   struct pol_cls_result *r)
{
	pol_cls_raise(r, POL_CLASS_OTHER, argv[0], "%s runs commands as another user",
		      pol_cls_prog_name(argv[0]));
	for (size_t i = 1; i < argc; i++) {
		if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--command") == 0) &&
		    i + 1 < argc) {
			pol_cls_script(e, argv[i + 1], depth + 1, r);
			return true;
		}
		if (strncmp(argv[i], "--command=", 10) == 0) {
			pol_cls_script(e, argv[i] + 10, depth + 1, r);
			return true;
		}
	}
	return true;
}

/* eval ARGS and watch CMD run their joined arguments as a script. */
static void cls_joined_script(const struct pol_cls_env *e, char *const *argv, size_t argc,
			      int depth, struct pol_cls_result *r)
{
	struct wd_sb sb = {0};
	for (size_t i = 0; i < argc; i++) {
		if (i)
			wd_sb_putc(&sb, ' ');
		wd_sb_puts(&sb, argv[i]);
	}
	char *s = wd_sb_steal(&sb);
	pol_cls_script(e, s, depth + 1, r);
	free(s);
}

static void cls_leaf(const struct pol_cls_env *e, const char *name, char *const *argv, size_t argc,
		     struct pol_cls_result *r)
{
	pol_hd_check_command(e, name, argv, argc, r);
	cls_sensitive_args(e, argv, argc, r);
	struct pol_reason rs = {0};
	bool ro = strcmp(name, "git") == 0
			  ? pol_git_readonly(argv, argc, e->trace, &rs)
			  : pol_readonly_check(name, argv, argc, e->cwd, e->trace, &rs);
	if (ro && strcmp(name, "git") == 0 && !git_env_ok(e, &rs)) {
		snprintf(rs.matched, sizeof(rs.matched), "%s", "HOME");
		ro = false;
	}
	if (ro)
		pol_cls_raise(r, POL_CLASS_READ_ONLY, rs.matched, "%s", rs.why);
	else
		pol_cls_raise(r, POL_CLASS_OTHER, rs.matched, "%s", rs.why);
}

static void cls_named(const struct pol_cls_env *e, const char *name, char *const *argv, size_t argc,
		      int depth, struct pol_cls_result *r);

/* Classifies |argv| as the program |name| plays, with argv[0] dispatch:
 * git-<cmd> becomes "git <cmd> ARGS". */
static void cls_as_applet(const struct pol_cls_env *e, const char *prog, const char *applet,
			  char *const *argv, size_t argc, struct pol_cls_result *r)
{
	if (strcmp(prog, "git") == 0) {
		char **v = wd_calloc(argc + 2, sizeof(char *));
		v[0] = (char *)"git";
		v[1] = (char *)applet + 4;
		for (size_t i = 1; i < argc; i++)
			v[i + 1] = argv[i];
		pol_cls_raise(r, POL_CLASS_READ_ONLY, applet, "git runs as git %s (its argv[0])",
			      applet + 4);
		cls_named(e, "git", v, argc + 1, 0, r);
		free(v);
		return;
	}
	pol_cls_raise(r, POL_CLASS_READ_ONLY, applet, "%s is run as %s, a multi-call program", prog,
		      applet);
	cls_named(e, applet, argv, argc, 0, r);
	if (strcmp(prog, "busybox") == 0 || strcmp(prog, "toybox") == 0)
		pol_cls_raise(
			r, POL_CLASS_OTHER, prog,
			"%s's applets parse their options their own way, not by warden's tables",
			prog);
}

/* Two names that are one program to classify: the same table entry, or
 * two shells (sh -> dash). */
static bool same_program(const char *a, const char *b)
{
	if (strcmp(a, b) == 0)
		return true;
	if (pol_cls_is_shell(a) && pol_cls_is_shell(b))
		return true;
	const struct pol_gr_prog *pa = pol_gr_find(a);
	return pa && pa == pol_gr_find(b);
}

/* The top-level request: the program is known by its path. It is
 * classified by every name it answers to, the name it was invoked by (the
 * path's basename, an alternatives or compatibility link), the name of the
 * file that starts (the resolved path) and, for a multi-call program, the
 * applet argv[0] makes it play: hard deny holds if any of them is denied
 * and the command is read-only only if each of them is. A program the
 * agent can have written is never read-only by name. */
static void cls_top(const struct pol_cls_env *e, char *const *argv, size_t argc,
		    struct pol_cls_result *r)
{
	char invoked[128], resolved[128];
	snprintf(invoked, sizeof(invoked), "%s", pol_cls_identity(e->path, argv[0], resolved, 128));
	if (e->resolved)
		pol_cls_identity(e->resolved, invoked, resolved, sizeof(resolved));
	else
		snprintf(resolved, sizeof(resolved), "%s", invoked);
	if (e->trace) {
		wd_sb_printf(e->trace, "names: invoked as %s", invoked);
		if (strcmp(resolved, invoked) != 0)
			wd_sb_printf(e->trace, ", file %s", resolved);
		wd_sb_printf(e->trace, ", argv[0] %s\n", pol_cls_prog_name(argv[0]));
	}
	if (e->agent_writable)
		pol_cls_raise(r, POL_CLASS_OTHER, e->path,
			      "%.120s is written where the agent can write: no allowance by name",
			      e->path);
	/* The agent's own binary plays the tools argv[0] names (harness.c). */
	const char *plays = pol_hn_multicall_name(e, resolved, argv[0]);
	if (plays != resolved && strcmp(resolved, "busybox") != 0) {
		pol_cls_raise(r, POL_CLASS_READ_ONLY, plays, "%s is run as %s, a multi-call binary",
			      resolved, plays);
		cls_named(e, plays, argv, argc, 0, r);
		return;
	}
	const char *names[2] = {invoked, resolved};
	size_t nn = same_program(invoked, resolved) ? 1 : 2;
	for (size_t i = 0; i < nn; i++) {
		const char *applet = pol_cls_multicall_applet(names[i], argv[0]);
		if (applet && i == 1 && strcmp(applet, names[0]) == 0)
			continue; /* /usr/sbin/shutdown as shutdown: classified once */
		if (applet) {
			cls_as_applet(e, names[i], applet, argv, argc, r);
			continue;
		}
		if (i == 0 && strcmp(invoked, pol_cls_prog_name(argv[0])) != 0)
			pol_cls_raise(r, POL_CLASS_READ_ONLY, invoked,
				      "the program is %s although it calls itself %.60s", invoked,
				      pol_cls_prog_name(argv[0]));
		cls_named(e, names[i], argv, argc, 0, r);
	}
}

void pol_cls_argv(const struct pol_cls_env *e, char *const *argv, size_t argc, int depth,
		  struct pol_cls_result *r)
{
	if (argc == 0 || !argv[0])
		return;
	if (depth > CLS_MAX_DEPTH) {
		pol_cls_raise(r, POL_CLASS_OTHER, "",
			      "the command nests wrappers too deeply to follow");
		return;
	}
	if (depth == 0 && e->path) {
		cls_top(e, argv, argc, r);
		return;
	}
	cls_named(e, pol_cls_prog_name(argv[0]), argv, argc, depth, r);
}

static void cls_named(const struct pol_cls_env *e, const char *name, char *const *argv, size_t argc,
		      int depth, struct pol_cls_result *r)
{
	const struct wrapper *w = pol_cls_find_wrapper(name);
	if (w) {
		cls_wrapper(e, w, argv, argc, depth, r);
		return;
	}
	if (pol_cls_is_shell(name)) {
		cls_shell(e, name, argv, argc, depth, r);
		return;
	}
	/* "-bash": a login shell by its argv[0] */
	if (name[0] == '-' && pol_cls_is_shell(name + 1)) {
		cls_shell(e, name + 1, argv, argc, depth, r);
		return;
	}
	if ((strcmp(name, "busybox") == 0 || strcmp(name, "toybox") == 0) && argc > 1) {
		pol_cls_argv(e, argv + 1, argc - 1, depth + 1, r);
		pol_cls_raise(
			r, POL_CLASS_OTHER, name,
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
		pol_cls_raise(r, POL_CLASS_OTHER, name, "%s runs its arguments as a shell script",
			      name);
		if (k < argc)
			cls_joined_script(e, argv + k, argc - k, depth, r);
		return;
	}
	/* bfs and ugrep: the rules of find and grep. */
	char **tool_argv = pol_hn_tool_argv(name, argv, argc, &name, r);
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
	struct pol_cls_env e = {.cfg = c};
	if (c) {
		e.project = c->project;
		e.home = c->home;
		e.cwd = c->project;
	}
	struct pol_cls_result r = {.cls = POL_CLASS_READ_ONLY};
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		size_t nl = eq ? (size_t)(eq - envp[i]) : strlen(envp[i]);
		if (strncmp(envp[i], "HOME=", 5) == 0)
			e.env_home = envp[i] + 5;
		else if (strncmp(envp[i], "XDG_CONFIG_HOME=", 16) == 0)
			e.env_xdg_config = envp[i] + 16;
		else if (!pol_env_entry_fast_ok(envp[i]) && r.cls < POL_CLASS_OTHER) {
			pol_cls_raise(
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
		pol_cls_raise(&r, POL_CLASS_OTHER, "", "there is no command");
	else
		pol_cls_argv(&e, argv, argc, 0, &r);
	out->cls = r.cls;
	snprintf(out->reason, sizeof(out->reason), "%s", r.reason);
	snprintf(out->matched, sizeof(out->matched), "%s", r.matched);
}
