/*
 * harness.c: the exec shapes of real agent harnesses (Claude Code, Codex,
 * aider) and the multi-call binaries they run.
 *
 * A harness wraps the model's command in its own shell script. This file
 * recognises those wrappers precisely, character for character, and hands
 * back the model's command so that classification, grants, the audit and
 * the judge see what the model asked for. The wrapper's own parts (sourcing
 * the harness's shell snapshot, writing its cwd file) are accepted only in
 * exactly the shape the harness produces: anything else, one extra space, a
 * second eval, a quote that closes early, a file elsewhere, is not
 * recognised, and the whole script is then decided as any other shell
 * script (not plain, so never the fast path; hard deny still looks inside).
 *
 * The shapes accepted (HOME is the config's home directory, ID is
 * [A-Za-z0-9_-]{1,128}, HEX is [0-9a-f]{1,64}, CMD is any text, Q(CMD) is
 * CMD in single quotes with every ' written '\'' or '"'"' (the form Claude
 * Code 2.1.197 writes), or, for a one-word CMD of [A-Za-z0-9._/-+=:,@%],
 * the bare word, which 2.1.197 writes unquoted; TMP is /tmp/ followed by
 * zero or more plain directory names, each ending in '/', never . or ..:
 * where Claude Code's $TMPDIR puts its cwd file):
 *
 *   Claude Code tool call, argv exactly {bash, "-c", SCRIPT} where bash is a
 *   program named bash and SCRIPT is exactly
 *     [source HOME/.claude/shell-snapshots/snapshot-bash-ID.sh 2>/dev/null || true && ]
 *     [shopt -u extglob && | shopt -u extglob 2>/dev/null || true && ]
 *     eval Q(CMD) < /dev/null && pwd -P >| TMPclaude-HEX-cwd
 *   (the bracketed parts optional, in this order, each at most once; HOME
 *   only of the characters [A-Za-z0-9/._+@-] so that it is one shell word).
 *   The inner command is CMD.
 *   Codex, argv exactly {bash, "-lc", CMD}: the inner command is CMD.
 *   aider, argv exactly {sh, "-c", CMD}: the inner command is CMD.
 *
 * The Codex and aider shapes are generic (any program may run bash -lc), so
 * they change nothing about how a command is decided: the generic sh -c
 * unwrapping already classifies CMD. Only the Claude Code shape, which is
 * not plain as a script, is decided on its inner command, and only it is
 * shown as "[claude-code] CMD" in the summary and with "harness" and
 * "inner" in the request JSON.
 *
 * It does no I/O and never executes anything.
 */
#include "policy_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const char *pol_harness_name(enum pol_harness h)
{
	switch (h) {
	case POL_HARNESS_NONE:
		return "none";
	case POL_HARNESS_CLAUDE_CODE:
		return "claude-code";
	case POL_HARNESS_CODEX:
		return "codex";
	case POL_HARNESS_AIDER:
		return "aider";
	}
	return "unknown";
}

/* ---- a cursor over a script ------------------------------------------------- */

/* Consumes the literal |lit| at *p. */
static bool eat(const char **p, const char *lit)
{
	size_t n = strlen(lit);
	if (strncmp(*p, lit, n) != 0)
		return false;
	*p += n;
	return true;
}

/* Consumes 1..|max| characters of |set| (or of [A-Za-z0-9] plus |set| when
 * |alnum|). */
static bool eat_span(const char **p, const char *set, bool alnum, size_t max)
{
	size_t n = 0;
	while ((*p)[n] && (strchr(set, (*p)[n]) || (alnum && isalnum((unsigned char)(*p)[n]))))
		n++;
	if (n == 0 || n > max)
		return false;
	*p += n;
	return true;
}

/* A home directory that bash reads as one word with no expansion. */
static bool home_is_plain(const char *home)
{
	if (!home || home[0] != '/')
		return false;
	for (const char *c = home; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("/._+@-", *c))
			return false;
	return true;
}

/* HOME/.claude/shell-snapshots/snapshot-bash-ID.sh at *p. */
static bool eat_snapshot(const char **p, const char *home)
{
	const char *q = *p;
	if (!home_is_plain(home) || !eat(&q, home) ||
	    !eat(&q, strcmp(home, "/") == 0 ? ".claude/shell-snapshots/snapshot-bash-"
					    : "/.claude/shell-snapshots/snapshot-bash-") ||
	    !eat_span(&q, "_-", true, 128) || !eat(&q, ".sh"))
		return false;
	*p = q;
	return true;
}

/* The single-quoted word at *p with '\'' read as a quote, as bash reads it:
 * returns the unquoted text (caller frees) or NULL when *p is not exactly
 * such a word followed by a space. */
static char *eat_quoted(const char **p)
{
	const char *q = *p;
	if (*q != '\'')
		return NULL;
	struct wd_sb sb = {0};
	q++;
	for (;;) {
		const char *end = strchr(q, '\'');
		if (!end) {
			wd_sb_free(&sb);
			return NULL;
		}
		wd_sb_add(&sb, q, (size_t)(end - q));
		q = end + 1;
		/* '\'' : close, an escaped quote, open again. Anything else
		 * glued to the closing quote would join the word: refuse. */
		if (q[0] == '\\' && q[1] == '\'' && q[2] == '\'') {
			wd_sb_putc(&sb, '\'');
			q += 3;
			continue;
		}
		/* '"'"' : close, a double-quoted quote, open again (the form
		 * Claude Code 2.1.197 writes). */
		if (q[0] == '"' && q[1] == '\'' && q[2] == '"' && q[3] == '\'') {
			wd_sb_putc(&sb, '\'');
			q += 4;
			continue;
		}
		break;
	}
	if (*q != ' ') {
		wd_sb_free(&sb);
		return NULL;
	}
	*p = q;
	char *s = wd_sb_steal(&sb);
	if (!s)
		s = wd_strdup("");
	return s;
}

/* A word bash reads literally as it is: letters, digits and . _ / - + = :
 * , @ % only, followed by a space. Returns a copy or NULL. */
static char *eat_bare_word(const char **p)
{
	const char *q = *p;
	size_t n = 0;
	while (q[n] && (isalnum((unsigned char)q[n]) || strchr("._/-+=:,@%", q[n])))
		n++;
	if (n == 0 || q[n] != ' ')
		return NULL;
	*p = q + n;
	return wd_strndup(q, n);
}

/* Zero or more plain directory names, each followed by '/', under /tmp
 * (Claude Code's $TMPDIR, such as /tmp/claude-0/). No "." or "..". */
static bool eat_tmp_subdirs(const char **p)
{
	const char *q = *p;
	for (int depth = 0; depth < 8; depth++) {
		size_t n = 0;
		while (q[n] && (isalnum((unsigned char)q[n]) || strchr("._-", q[n])))
			n++;
		if (n == 0 || q[n] != '/')
			break;
		if ((n == 1 && q[0] == '.') || (n == 2 && q[0] == '.' && q[1] == '.'))
			return false;
		q += n + 1;
	}
	*p = q;
	return true;
}

static const char *const extglob_parts[] = {
	"shopt -u extglob && ",
	"shopt -u extglob 2>/dev/null || true && ",
};

/* The model's command inside a Claude Code wrapper script, or NULL. */
static char *claude_inner(const char *script, const char *home)
{
	const char *p = script;
	if (eat(&p, "source ")) {
		if (!eat_snapshot(&p, home) || !eat(&p, " 2>/dev/null || true && "))
			return NULL;
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(extglob_parts); i++)
		if (eat(&p, extglob_parts[i]))
			break;
	if (!eat(&p, "eval "))
		return NULL;
	/* A one-word command comes unquoted (eval ls < /dev/null). */
	char *cmd = *p == '\'' ? eat_quoted(&p) : eat_bare_word(&p);
	if (!cmd)
		return NULL;
	/* The tail, to the last byte: nothing may follow the cwd file, which
	 * lies in /tmp or a plain directory below it ($TMPDIR there). */
	if (!eat(&p, " < /dev/null && pwd -P >| /tmp/") || !eat_tmp_subdirs(&p) ||
	    !eat(&p, "claude-") || !eat_span(&p, "abcdef0123456789", false, 64) ||
	    strcmp(p, "-cwd") != 0 || cmd[0] == '\0') {
		free(cmd);
		return NULL;
	}
	return cmd;
}

enum pol_harness hn_unwrap(char *const *argv, size_t argc, const char *name, const char *home,
			   char **inner)
{
	*inner = NULL;
	if (argc != 3 || !argv[2][0])
		return POL_HARNESS_NONE;
	if (strcmp(name, "bash") == 0 && strcmp(argv[1], "-c") == 0) {
		*inner = claude_inner(argv[2], home);
		if (*inner)
			return POL_HARNESS_CLAUDE_CODE;
		return POL_HARNESS_NONE;
	}
	if (strcmp(name, "bash") == 0 && strcmp(argv[1], "-lc") == 0) {
		*inner = wd_strdup(argv[2]);
		return POL_HARNESS_CODEX;
	}
	if (strcmp(name, "sh") == 0 && strcmp(argv[1], "-c") == 0) {
		*inner = wd_strdup(argv[2]);
		return POL_HARNESS_AIDER;
	}
	return POL_HARNESS_NONE;
}

enum pol_harness pol_harness_unwrap(char *const argv[], const struct pol_config *c, char **inner)
{
	size_t argc = 0;
	while (argv && argv[argc])
		argc++;
	if (inner)
		*inner = NULL;
	if (argc == 0 || !inner)
		return POL_HARNESS_NONE;
	return hn_unwrap(argv, argc, cls_prog_name(argv[0]), c ? c->home : NULL, inner);
}

bool hn_inner_view(const struct pol_request *r, const char *home, struct pol_request *view)
{
	memset(view, 0, sizeof(*view));
	if (r->kind != POL_EXEC || r->interp || r->argc == 0)
		return false;
	char buf[128];
	const char *name = cls_identity(r->path, r->argv[0], buf, sizeof(buf));
	char *inner = NULL;
	if (hn_unwrap(r->argv, r->argc, name, home, &inner) != POL_HARNESS_CLAUDE_CODE) {
		free(inner); /* the Codex and aider shapes hand one back too */
		return false;
	}
	struct sh_script sc;
	sh_split(inner, &sc);
	free(inner);
	bool one = sc.plain && sc.ntoks > 0;
	for (size_t i = 0; one && i < sc.ntoks; i++)
		one = sc.toks[i].kind == SH_WORD;
	if (one) {
		view->kind = POL_EXEC;
		view->argv = wd_calloc(sc.ntoks + 1, sizeof(char *));
		for (size_t i = 0; i < sc.ntoks; i++)
			view->argv[i] = wd_strdup(sc.toks[i].text);
		view->argc = sc.ntoks;
		/* Shared with |r|, never freed through the view. */
		view->env = r->env;
		view->envc = r->envc;
		view->env_risky = r->env_risky;
		view->project = r->project;
	}
	sh_script_free(&sc);
	return one;
}

void hn_inner_view_free(struct pol_request *view)
{
	pol_strv_free(view->argv);
	memset(view, 0, sizeof(*view));
}

/* ---- multi-call binaries -------------------------------------------------------- */

void pol_config_set_agent_binary(struct pol_config *c, const char *path)
{
	if (!c)
		return;
	/* A path that does not fit is not kept: nothing is then classified
	 * as the agent's tools (fail closed). */
	if (!path || path[0] != '/' || strlen(path) >= sizeof(c->agent_binary))
		c->agent_binary[0] = '\0';
	else
		snprintf(c->agent_binary, sizeof(c->agent_binary), "%s", path);
}

/* The names under which Claude Code runs its own binary as a search tool. */
static const char *const agent_tools[] = {"rg", "bfs", "ugrep"};

const char *hn_multicall_name(const struct cls_env *e, const char *identity, const char *arg0)
{
	const char *called = cls_prog_name(arg0);
	if (e->path && e->cfg && e->cfg->agent_binary[0] &&
	    strcmp(e->path, e->cfg->agent_binary) == 0) {
		for (size_t i = 0; i < WD_ARRAY_SIZE(agent_tools); i++)
			if (strcmp(called, agent_tools[i]) == 0)
				return agent_tools[i];
		return identity;
	}
	/* busybox ls, or /bin/ls -> busybox: the applet is argv[0]. */
	if (strcmp(identity, "busybox") == 0 && called[0] && strcmp(called, "busybox") != 0)
		return called;
	return identity;
}

char **hn_tool_argv(const char *name, char *const *argv, size_t argc, const char **tool,
		    struct cls_result *r)
{
	*tool = name;
	if (strcmp(name, "bfs") == 0) {
		/* bfs is find with a few more actions: -rm is -delete. */
		static char del[] = "-delete";
		char **v = wd_calloc(argc + 1, sizeof(char *));
		for (size_t i = 0; i < argc; i++)
			v[i] = strcmp(argv[i], "-rm") == 0 ? del : argv[i];
		*tool = "find";
		return v;
	}
	if (strcmp(name, "ugrep") == 0) {
		/* ugrep is grep plus options that run programs (--filter,
		 * --pager, --view), write a file (--save-config) or open an
		 * editor (-Q), parsed its own way: warden has no table of its
		 * options, so it is not read-only. Hard deny and the sensitive
		 * markers still look at its words with grep's name. */
		cls_raise(r, POL_CLASS_OTHER, "ugrep",
			  "ugrep's options (some run programs, write a file or open an editor) "
			  "are not in warden's tables");
		(void)argc;
		(void)argv;
		*tool = "grep";
	}
	return NULL;
}

/* ---- start-up execs ---------------------------------------------------------------- */

static bool is_named(const char *arg0, const char *name)
{
	return strcmp(cls_prog_name(arg0), name) == 0;
}

/* Every write redirect of |script| goes to "$SNAPSHOT_FILE", /dev/null or
 * another fd, and the script is fully understood by the splitter. */
static bool writes_only_snapshot(const char *script)
{
	struct sh_script sc;
	sh_split(script, &sc);
	bool ok = !sc.unterminated;
	for (size_t i = 0; ok && i < sc.ntoks; i++) {
		const struct sh_tok *t = &sc.toks[i];
		if (t->kind != SH_REDIR || !t->write_redir)
			continue;
		const char *target = i + 1 < sc.ntoks ? sc.toks[i + 1].text : "";
		bool dup = wd_str_has_suffix(t->text, ">&");
		ok = strcmp(target, "$SNAPSHOT_FILE") == 0 ||
		     strcmp(target, "${SNAPSHOT_FILE}") == 0 || strcmp(target, "/dev/null") == 0 ||
		     (dup && target[0] && strspn(target, "0123456789") == strlen(target));
	}
	sh_script_free(&sc);
	return ok;
}

/* bash -c -l 'SNAPSHOT_FILE=HOME/.claude/shell-snapshots/snapshot-bash-ID.sh\n...' */
static bool claude_snapshot_shell(char *const *argv, size_t argc, const char *home)
{
	if (argc != 4 || !is_named(argv[0], "bash"))
		return false;
	bool flags = (strcmp(argv[1], "-c") == 0 && strcmp(argv[2], "-l") == 0) ||
		     (strcmp(argv[1], "-l") == 0 && strcmp(argv[2], "-c") == 0);
	if (!flags)
		return false;
	const char *p = argv[3];
	p += strspn(p, " \t\n");
	if (!eat(&p, "SNAPSHOT_FILE=")) /* unquoted, as with a plain HOME */
		return false;
	if (!eat_snapshot(&p, home) || *p != '\n')
		return false;
	return writes_only_snapshot(p);
}

/* sh -c 'ps aux | grep WORDS [| grep WORDS]...' with plain words only. */
static bool claude_ide_probe(char *const *argv, size_t argc)
{
	if (argc != 3 || !is_named(argv[0], "sh") || strcmp(argv[1], "-c") != 0)
		return false;
	struct sh_script sc;
	sh_split(argv[2], &sc);
	bool ok = sc.plain && sc.ntoks >= 5 && strcmp(sc.toks[0].text, "ps") == 0 &&
		  strcmp(sc.toks[1].text, "aux") == 0;
	for (size_t i = 2; ok && i < sc.ntoks; i++) {
		const struct sh_tok *t = &sc.toks[i];
		if (t->kind == SH_OP_PIPE)
			ok = i + 2 < sc.ntoks && sc.toks[i + 1].kind == SH_WORD &&
			     strcmp(sc.toks[i + 1].text, "grep") == 0 &&
			     sc.toks[i + 2].kind == SH_WORD;
		else
			ok = t->kind == SH_WORD && i > 2;
	}
	sh_script_free(&sc);
	return ok;
}

static bool argv_is(char *const *argv, size_t argc, const char *name, const char *const *rest,
		    size_t nrest)
{
	if (argc != nrest + 1 || !is_named(argv[0], name))
		return false;
	for (size_t i = 0; i < nrest; i++)
		if (strcmp(argv[i + 1], rest[i]) != 0)
			return false;
	return true;
}

/* Claude Code 2.1.197 asks git whether its local settings file is tracked:
 * git -c core.hooksPath=/dev/null -c core.fsmonitor= -C DIR ls-files
 *     --error-unmatch -- ':(icase).claude/settings.local.json'
 * Exactly that (hooks and fsmonitor off, so git runs nothing else), with
 * any DIR. */
static bool claude_settings_probe(char *const argv[], size_t argc)
{
	static const char *const want[] = {"-c",       "core.hooksPath=/dev/null",
					   "-c",       "core.fsmonitor=",
					   "-C",       NULL,
					   "ls-files", "--error-unmatch",
					   "--",       ":(icase).claude/settings.local.json"};
	if (argc != 1 + WD_ARRAY_SIZE(want) || strcmp(cls_prog_name(argv[0]), "git") != 0)
		return false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(want); i++)
		if (want[i] && strcmp(argv[i + 1], want[i]) != 0)
			return false;
	return argv[6][0] == '/';
}

bool pol_is_harness_startup(enum pol_harness kind, char *const argv[], const struct pol_config *c)
{
	size_t argc = 0;
	while (argv && argv[argc])
		argc++;
	if (kind != POL_HARNESS_CLAUDE_CODE || argc == 0)
		return false;
	static const char *const env_c[] = {"-c", "env"};
	static const char *const ls_files[] = {"ls-files"};
	static const char *const origin[] = {"config", "--get", "remote.origin.url"};
	static const char *const user_name[] = {"config", "user.name"};
	static const char *const user_email[] = {"config", "user.email"};
	return argv_is(argv, argc, "bash", env_c, 2) || argv_is(argv, argc, "git", ls_files, 1) ||
	       argv_is(argv, argc, "git", origin, 3) || argv_is(argv, argc, "git", user_name, 2) ||
	       argv_is(argv, argc, "git", user_email, 2) || claude_settings_probe(argv, argc) ||
	       claude_snapshot_shell(argv, argc, c ? c->home : NULL) ||
	       claude_ide_probe(argv, argc);
}
