/*
 * harness.c: the exec shapes of agent harnesses (Claude Code, Codex,
 * aider) and the multi-call binaries they run: which shape an argv is, the
 * model's command inside it, its start-up execs.
 *
 * A harness's wrapper is recognised only in exactly the shape the harness
 * writes (harness_claude.c, harness_codex.c); anything else is decided as
 * the ordinary shell script it is. No I/O, nothing executed.
 *
 * See docs/design.md, section "Agent harnesses".
 */
#include "policy_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* ---- a cursor over a script ------------------------------------------------- */

enum pol_harness pol_hn_unwrap(char *const *argv, size_t argc, const char *name, const char *home,
			       char **inner)
{
	*inner = NULL;
	if (argc != 3 || !argv[2][0])
		return POL_HARNESS_NONE;
	if (strcmp(name, "bash") == 0 && strcmp(argv[1], "-c") == 0) {
		*inner = pol_hn_claude_inner(argv[2], home);
		if (*inner)
			return POL_HARNESS_CLAUDE_CODE;
		*inner = pol_hn_codex_inner(argv[2], home, NULL);
		return *inner ? POL_HARNESS_CODEX : POL_HARNESS_NONE;
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
	return pol_hn_unwrap(argv, argc, pol_cls_prog_name(argv[0]), c ? c->home : NULL, inner);
}

bool pol_hn_inner_view(const struct pol_request *r, const char *home, struct pol_request *view)
{
	memset(view, 0, sizeof(*view));
	if (r->kind != POL_EXEC || r->interp || r->argc == 0)
		return false;
	char buf[128];
	const char *name = pol_cls_identity(r->path, r->argv[0], buf, sizeof(buf));
	char *inner = NULL;
	if (pol_hn_unwrap(r->argv, r->argc, name, home, &inner) != POL_HARNESS_CLAUDE_CODE) {
		free(inner); /* the Codex and aider shapes hand one back too */
		return false;
	}
	struct pol_sh_script sc;
	pol_sh_split(inner, &sc);
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
	pol_sh_script_free(&sc);
	return one;
}

void pol_hn_inner_view_free(struct pol_request *view)
{
	wd_strv_free(view->argv);
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

const char *pol_hn_multicall_name(const struct pol_cls_env *e, const char *identity,
				  const char *arg0)
{
	const char *called = pol_cls_prog_name(arg0);
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

char **pol_hn_tool_argv(const char *name, char *const *argv, size_t argc, const char **tool,
			struct pol_cls_result *r)
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
		pol_cls_raise(r, POL_CLASS_OTHER, "ugrep",
			      "ugrep's options (some run programs, write a file or open an editor) "
			      "are not in warden's tables");
		(void)argc;
		(void)argv;
		*tool = "grep";
	}
	return NULL;
}

/* ---- start-up execs ---------------------------------------------------------------- */

bool pol_is_harness_startup(enum pol_harness kind, char *const argv[], const struct pol_config *c)
{
	size_t argc = 0;
	while (argv && argv[argc])
		argc++;
	if (argc == 0)
		return false;
	if (kind == POL_HARNESS_CODEX)
		return pol_hn_codex_startup(argv, argc);
	if (kind != POL_HARNESS_CLAUDE_CODE)
		return false;
	return pol_hn_claude_startup(argv, argc, c ? c->home : NULL);
}
