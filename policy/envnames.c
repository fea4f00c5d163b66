/*
 * envnames.c: the environment variables that change what a program runs or
 * loads, and those known harmless for every program of the fast path.
 *
 * A leaf of policy/. See docs/design.md, section "The environment".
 */
#include "policy_int.h"

#include <string.h>

/* ---- names ---------------------------------------------------------------- */

static const char *const risky_env_exact[] = {
	"BASH_ENV",
	"ENV",
	"SHELLOPTS",
	"BASHOPTS",
	"IFS",
	"PROMPT_COMMAND",
	"PS4",
	"GIT_EXEC_PATH",
	"GIT_ASKPASS",
	"GIT_EXTERNAL_DIFF",
	"GIT_PROXY_COMMAND",
	"GIT_TEMPLATE_DIR",
	"GIT_DIR",
	"NODE_OPTIONS",
	"NODE_PATH",
	"PYTHONSTARTUP",
	"PYTHONPATH",
	"PYTHONHOME",
	"PERL5OPT",
	"PERL5LIB",
	"PERLLIB",
	"PERL5DB",
	"RUBYOPT",
	"RUBYLIB",
	"JAVA_TOOL_OPTIONS",
	"_JAVA_OPTIONS",
	"JDK_JAVA_OPTIONS",
	"LUA_INIT",
	"GCONV_PATH",
	"ZDOTDIR",
};

/* Prefixes: the dynamic loader, git's config and ssh overrides, exported
 * bash functions (BASH_FUNC_ls%%=() { ... } replaces "ls" in any bash). */
static const char *const risky_env_prefix[] = {"LD_", "GIT_CONFIG", "GIT_SSH", "BASH_FUNC_"};

/* Every variable of every exec's environment comes here: a name is
 * compared only with the entries that start with its first letter. */
bool pol_env_name_is_risky(const char *name, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(risky_env_exact); i++) {
		const char *e = risky_env_exact[i];
		if (e[0] == name[0] && strncmp(e, name, len) == 0 && e[len] == '\0')
			return true;
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(risky_env_prefix); i++) {
		const char *e = risky_env_prefix[i];
		if (e[0] != name[0])
			continue;
		size_t pl = strlen(e);
		if (len >= pl && memcmp(e, name, pl) == 0)
			return true;
	}
	return false;
}

/* The environment of a fast-path exec, by allow list. The fast path's
 * programs are a closed set (readonly.c, git.c, the shells and wrappers of
 * unwrap.c) whose environment reads are known: glibc's (the loader's
 * LD_*, GCONV_PATH, LOCPATH, NLSPATH, GLIBC_TUNABLES, MALLOC_*, HOSTALIASES,
 * RES_OPTIONS, LOCALDOMAIN, TZDIR, the locale's LANG, LANGUAGE, LC_*, TZ),
 * each program's own (coreutils' POSIXLY_CORRECT, QUOTING_STYLE,
 * TIME_STYLE, *BLOCK_SIZE, TABSIZE, LS_COLORS, COLUMNS, TMPDIR, _POSIX2_
 * VERSION; grep's GREP_COLOR(S); git's GIT_* and its global configuration
 * through HOME and XDG_CONFIG_HOME, its pager and editor; the shells' ENV,
 * BASH_ENV, CDPATH, IFS, PS4, SHELLOPTS, BASH_FUNC_*). A variable none of
 * them reads cannot change what they do; a variable one of them reads is
 * allowed only when it is in the list below of those known harmless. HOME
 * and XDG_CONFIG_HOME are judged against warden's own HOME where it matters
 * (git, classify.c). */
static const char *const env_read_harmless[] = {
	"PATH",
	"HOME",
	"USER",
	"LOGNAME",
	"SHELL",
	"TERM",
	"LANG",
	"LANGUAGE",
	"TZ",
	"PWD",
	"OLDPWD",
	"SHLVL",
	"_",
	"COLUMNS",
	"LINES",
	"TMPDIR",
	"NO_COLOR",
	"CLICOLOR",
	"LS_COLORS",
	"QUOTING_STYLE",
	"TIME_STYLE",
	"TABSIZE",
	"GREP_COLOR",
	"GREP_COLORS",
	"BLOCK_SIZE",
	"BLOCKSIZE",
	"DF_BLOCK_SIZE",
	"DU_BLOCK_SIZE",
	"LS_BLOCK_SIZE",
	"XDG_CONFIG_HOME",
	"GIT_TERMINAL_PROMPT",
	"GIT_SSL_CAINFO",
	"GIT_SSL_CAPATH",
	"GIT_OPTIONAL_LOCKS",
	"GIT_AUTHOR_NAME",
	"GIT_AUTHOR_EMAIL",
	"GIT_COMMITTER_NAME",
	"GIT_COMMITTER_EMAIL",
	"GIT_FLUSH",
	"GIT_NO_REPLACE_OBJECTS",
	"GIT_LITERAL_PATHSPECS",
	"GIT_CEILING_DIRECTORIES",
	"MAIL",
};

/* Variables a fast-path program (or glibc under it) reads whose value can
 * make it write, run or load something, or change how it parses its
 * words: never on the fast path. Names with a trailing '*' are prefixes. */
static const char *const env_read_harmful[] = {
	"LD_*",
	"GCONV_PATH",
	"LOCPATH",
	"NLSPATH",
	"GLIBC_TUNABLES",
	"MALLOC_*",
	"HOSTALIASES",
	"RES_OPTIONS",
	"LOCALDOMAIN",
	"TZDIR",
	"POSIXLY_CORRECT",
	"_POSIX2_VERSION",
	"GREP_OPTIONS",
	"SIMPLE_BACKUP_SUFFIX",
	"VERSION_CONTROL",
	"GIT_*",
	"XDG_CONFIG_DIRS",
	"PAGER",
	"EDITOR",
	"VISUAL",
	"LESS",
	"LESSOPEN",
	"LESSCLOSE",
	"ENV",
	"BASH_ENV",
	"CDPATH",
	"IFS",
	"PS4",
	"SHELLOPTS",
	"BASHOPTS",
	"BASH_FUNC_*",
	"PROMPT_COMMAND",
	"ZDOTDIR",
	"KSH_VERSION",
	"BASH_XTRACEFD",
	"BASH_COMPAT",
	"EXECIGNORE",
	"GLOBIGNORE",
	"TIMEFORMAT",
	"MAGIC",
	"RIPGREP_CONFIG_PATH",
	"SSH_ASKPASS",
	"FIGNORE",
	"HISTFILE",
	"INPUTRC",
	"TERMINFO",
	"TERMINFO_DIRS",
	"TERMCAP",
};

static bool name_in_list(const char *const *list, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		const char *e = list[i];
		size_t el = strlen(e);
		if (e[el - 1] == '*') {
			if (len >= el - 1 && memcmp(e, name, el - 1) == 0)
				return true;
		} else if (el == len && memcmp(e, name, len) == 0)
			return true;
	}
	return false;
}

bool pol_env_entry_fast_ok(const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t len = eq ? (size_t)(eq - entry) : strlen(entry);
	if (len == 0 || pol_env_name_is_risky(entry, len))
		return false;
	/* LC_ALL=C and its kind name a locale the system has; a path would
	 * load one the agent wrote. */
	bool locale = (len > 3 && memcmp(entry, "LC_", 3) == 0) ||
		      (len == 4 && memcmp(entry, "LANG", 4) == 0) ||
		      (len == 8 && memcmp(entry, "LANGUAGE", 8) == 0) ||
		      (len == 2 && memcmp(entry, "TZ", 2) == 0);
	if (locale)
		return !eq || !strchr(eq + 1, '/');
	/* An editor that does nothing: Claude Code runs every call with
	 * GIT_EDITOR=true, and "true" and ":" run no code of anyone's. */
	static const char *const editors[] = {"EDITOR", "VISUAL", "GIT_EDITOR",
					      "GIT_SEQUENCE_EDITOR"};
	if (eq && (strcmp(eq + 1, "true") == 0 || strcmp(eq + 1, ":") == 0) &&
	    name_in_list(editors, WD_ARRAY_SIZE(editors), entry, len))
		return true;
	/* A pager that only copies (Codex runs every call with PAGER=cat and
	 * GIT_PAGER=cat): the system's cat, found on PATH, reads nothing
	 * else. */
	static const char *const pagers[] = {"PAGER", "GIT_PAGER", "MANPAGER"};
	if (eq && strcmp(eq + 1, "cat") == 0 &&
	    name_in_list(pagers, WD_ARRAY_SIZE(pagers), entry, len))
		return true;
	if (name_in_list(env_read_harmless, WD_ARRAY_SIZE(env_read_harmless), entry, len))
		return true;
	return !name_in_list(env_read_harmful, WD_ARRAY_SIZE(env_read_harmful), entry, len);
}
