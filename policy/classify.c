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
#include "policy_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 8

void cls_raise(struct cls_result *r, enum pol_class cls, const char *matched, const char *fmt, ...)
{
	if (cls <= r->cls && !(cls == POL_CLASS_READ_ONLY && !r->reason[0]))
		return;
	r->cls = cls;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	snprintf(r->matched, sizeof(r->matched), "%s", matched ? matched : "");
}

const char *cls_prog_name(const char *arg0)
{
	const char *slash = strrchr(arg0, '/');
	const char *n = slash ? slash + 1 : arg0;
	while (*n == '\\')
		n++;
	return n;
}

const char *cls_identity(const char *path, const char *arg0, char *buf, size_t n)
{
	const char *a = cls_prog_name(arg0);
	const char *p = path ? cls_prog_name(path) : a;
	size_t al = strlen(a);
	/* python3 -> python3.11, gcc -> gcc-12: the same program. */
	bool same = strcmp(a, p) == 0;
	if (!same && al && strncmp(a, p, al) == 0) {
		same = true;
		for (const char *q = p + al; *q; q++)
			if (!strchr("0123456789.-", *q))
				same = false;
	}
	snprintf(buf, n, "%s", same ? a : p);
	return buf;
}

static const char *const shells[] = {"sh",  "bash", "dash", "zsh",   "ksh",  "mksh", "fish",
				     "ash", "yash", "posh", "rbash", "tcsh", "csh"};

bool cls_is_shell(const char *name)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(shells); i++)
		if (strcmp(name, shells[i]) == 0)
			return true;
	return false;
}

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

/* For sh/bash/...: the index of the -c script, or 0 when there is no -c. */
static size_t shell_script_index(char *const *argv, size_t argc, const char **problem)
{
	bool has_c = false;
	size_t k = 1;
	*problem = NULL;
	for (; k < argc; k++) {
		const char *a = argv[k];
		if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0) {
			k++;
			break;
		}
		if ((a[0] != '-' && a[0] != '+') || !a[1])
			break;
		if (a[0] == '-' && a[1] == '-') {
			if (strcmp(a, "--rcfile") == 0 || strcmp(a, "--init-file") == 0) {
				*problem = "reads a start-up file named on its command line";
				k++;
			}
			continue;
		}
		bool takes_arg = false;
		for (const char *c = a + 1; *c; c++) {
			if (*c == 'c')
				has_c = true;
			if (*c == 'o' || *c == 'O')
				takes_arg = true;
		}
		if (takes_arg)
			k++;
	}
	if (!has_c)
		return 0;
	return k < argc ? k : 0;
}

static void cls_shell(const struct cls_env *e, const char *name, char *const *argv, size_t argc,
		      int depth, struct cls_result *r)
{
	const char *problem;
	size_t si = shell_script_index(argv, argc, &problem);
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

static void cls_wrapper(const struct cls_env *e, const struct wrapper *w, char *const *argv,
			size_t argc, int depth, struct cls_result *r)
{
	struct unwrap_info info = {0};
	size_t k = skip_wrapper(w, argv, argc, &info);
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
	if (pol_readonly_check(name, argv, argc, why, sizeof(why), matched))
		cls_raise(r, POL_CLASS_READ_ONLY, matched, "%s", why);
	else
		cls_raise(r, POL_CLASS_OTHER, matched, "%s", why);
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
	char idbuf[128];
	const char *name = cls_prog_name(argv[0]);
	if (depth == 0 && e->path) {
		name = cls_identity(e->path, argv[0], idbuf, sizeof(idbuf));
		/* A multi-call binary plays the tool argv[0] names. */
		const char *plays = hn_multicall_name(e, name, argv[0]);
		if (plays != name)
			cls_raise(r, POL_CLASS_READ_ONLY, plays,
				  "%s is run as %s, a multi-call binary", name, plays);
		else if (strcmp(name, cls_prog_name(argv[0])) != 0)
			cls_raise(r, POL_CLASS_READ_ONLY, name,
				  "the program is %s although it calls itself %.60s", name,
				  cls_prog_name(argv[0]));
		name = plays;
	}
	const struct wrapper *w = find_wrapper(name);
	if (w) {
		cls_wrapper(e, w, argv, argc, depth, r);
		return;
	}
	if (cls_is_shell(name)) {
		cls_shell(e, name, argv, argc, depth, r);
		return;
	}
	if (strcmp(name, "busybox") == 0 && argc > 1) {
		cls_argv(e, argv + 1, argc - 1, depth + 1, r);
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
		if (pol_env_name_is_risky(envp[i], nl)) {
			cls_raise(&r, POL_CLASS_OTHER, "",
				  "the environment sets %.*s, which changes what the program runs",
				  (int)nl, envp[i]);
			snprintf(r.matched, sizeof(r.matched), "%.*s", (int)nl, envp[i]);
			break;
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
