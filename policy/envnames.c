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

/* A name of the lists below, its length counted once by the compiler
 * (every variable of every exec's environment is looked up in them). */
struct env_name {
	const char *s;
	unsigned char len;
	bool prefix; /* matches every name that starts with |s| */
};
/* clang-format off */
#define EXACT(x) {x, sizeof(x) - 1, false}
#define PREFIX(x) {x, sizeof(x) - 1, true}
/* clang-format on */

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
static const struct env_name env_read_harmless[] = {
	EXACT("PATH"),
	EXACT("HOME"),
	EXACT("USER"),
	EXACT("LOGNAME"),
	EXACT("SHELL"),
	EXACT("TERM"),
	EXACT("LANG"),
	EXACT("LANGUAGE"),
	EXACT("TZ"),
	EXACT("PWD"),
	EXACT("OLDPWD"),
	EXACT("SHLVL"),
	EXACT("_"),
	EXACT("COLUMNS"),
	EXACT("LINES"),
	EXACT("TMPDIR"),
	EXACT("NO_COLOR"),
	EXACT("CLICOLOR"),
	EXACT("LS_COLORS"),
	EXACT("QUOTING_STYLE"),
	EXACT("TIME_STYLE"),
	EXACT("TABSIZE"),
	EXACT("GREP_COLOR"),
	EXACT("GREP_COLORS"),
	EXACT("BLOCK_SIZE"),
	EXACT("BLOCKSIZE"),
	EXACT("DF_BLOCK_SIZE"),
	EXACT("DU_BLOCK_SIZE"),
	EXACT("LS_BLOCK_SIZE"),
	EXACT("XDG_CONFIG_HOME"),
	EXACT("GIT_TERMINAL_PROMPT"),
	EXACT("GIT_SSL_CAINFO"),
	EXACT("GIT_SSL_CAPATH"),
	EXACT("GIT_OPTIONAL_LOCKS"),
	EXACT("GIT_AUTHOR_NAME"),
	EXACT("GIT_AUTHOR_EMAIL"),
	EXACT("GIT_COMMITTER_NAME"),
	EXACT("GIT_COMMITTER_EMAIL"),
	EXACT("GIT_FLUSH"),
	EXACT("GIT_NO_REPLACE_OBJECTS"),
	EXACT("GIT_LITERAL_PATHSPECS"),
	EXACT("GIT_CEILING_DIRECTORIES"),
	EXACT("MAIL"),
};

/* Variables a fast-path program (or glibc under it) reads whose value can
 * make it write, run or load something, or change how it parses its
 * words: never on the fast path. */
static const struct env_name env_read_harmful[] = {
	PREFIX("LD_"),
	EXACT("GCONV_PATH"),
	EXACT("LOCPATH"),
	EXACT("NLSPATH"),
	EXACT("GLIBC_TUNABLES"),
	PREFIX("MALLOC_"),
	EXACT("HOSTALIASES"),
	EXACT("RES_OPTIONS"),
	EXACT("LOCALDOMAIN"),
	EXACT("TZDIR"),
	EXACT("POSIXLY_CORRECT"),
	EXACT("_POSIX2_VERSION"),
	EXACT("GREP_OPTIONS"),
	EXACT("SIMPLE_BACKUP_SUFFIX"),
	EXACT("VERSION_CONTROL"),
	PREFIX("GIT_"),
	EXACT("XDG_CONFIG_DIRS"),
	EXACT("PAGER"),
	EXACT("EDITOR"),
	EXACT("VISUAL"),
	EXACT("LESS"),
	EXACT("LESSOPEN"),
	EXACT("LESSCLOSE"),
	EXACT("ENV"),
	EXACT("BASH_ENV"),
	EXACT("CDPATH"),
	EXACT("IFS"),
	EXACT("PS4"),
	EXACT("SHELLOPTS"),
	EXACT("BASHOPTS"),
	PREFIX("BASH_FUNC_"),
	EXACT("PROMPT_COMMAND"),
	EXACT("ZDOTDIR"),
	EXACT("KSH_VERSION"),
	EXACT("BASH_XTRACEFD"),
	EXACT("BASH_COMPAT"),
	EXACT("EXECIGNORE"),
	EXACT("GLOBIGNORE"),
	EXACT("TIMEFORMAT"),
	EXACT("MAGIC"),
	EXACT("RIPGREP_CONFIG_PATH"),
	EXACT("SSH_ASKPASS"),
	EXACT("FIGNORE"),
	EXACT("HISTFILE"),
	EXACT("INPUTRC"),
	EXACT("TERMINFO"),
	EXACT("TERMINFO_DIRS"),
	EXACT("TERMCAP"),
};

static bool name_in_list(const struct env_name *list, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		const struct env_name *e = &list[i];
		if (e->s[0] != name[0] || (e->prefix ? len < e->len : len != e->len))
			continue;
		if (memcmp(e->s, name, e->len) == 0)
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
	static const struct env_name editors[] = {EXACT("EDITOR"), EXACT("VISUAL"),
						  EXACT("GIT_EDITOR"),
						  EXACT("GIT_SEQUENCE_EDITOR")};
	if (eq && (strcmp(eq + 1, "true") == 0 || strcmp(eq + 1, ":") == 0) &&
	    name_in_list(editors, WD_ARRAY_SIZE(editors), entry, len))
		return true;
	/* A pager that only copies (Codex runs every call with PAGER=cat and
	 * GIT_PAGER=cat): the system's cat, found on PATH, reads nothing
	 * else. */
	static const struct env_name pagers[] = {EXACT("PAGER"), EXACT("GIT_PAGER"),
						 EXACT("MANPAGER")};
	if (eq && strcmp(eq + 1, "cat") == 0 &&
	    name_in_list(pagers, WD_ARRAY_SIZE(pagers), entry, len))
		return true;
	if (name_in_list(env_read_harmless, WD_ARRAY_SIZE(env_read_harmless), entry, len))
		return true;
	return !name_in_list(env_read_harmful, WD_ARRAY_SIZE(env_read_harmful), entry, len);
}
