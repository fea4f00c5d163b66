/*
 * harness_claude.c: Claude Code's exec shapes: the wrapper around each
 * tool call, recognised character for character, and its start-up execs.
 *
 * See docs/design.md, section "Agent harnesses".
 */
#include "policy_int.h"

#include <ctype.h>
#include <string.h>

/* HOME/.claude/shell-snapshots/snapshot-bash-ID.sh at *p. */
static bool eat_snapshot(const char **p, const char *home)
{
	const char *q = *p;
	if (!pol_hn_home_is_plain(home) || !pol_hn_eat(&q, home) ||
	    !pol_hn_eat(&q, strcmp(home, "/") == 0 ? ".claude/shell-snapshots/snapshot-bash-"
						   : "/.claude/shell-snapshots/snapshot-bash-") ||
	    !pol_hn_eat_span(&q, "_-", true, 128) || !pol_hn_eat(&q, ".sh"))
		return false;
	*p = q;
	return true;
}

static char *eat_quoted(const char **p)
{
	return pol_hn_eat_quoted_to(p, ' ');
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
char *pol_hn_claude_inner(const char *script, const char *home)
{
	const char *p = script;
	if (pol_hn_eat(&p, "source ")) {
		if (!eat_snapshot(&p, home) || !pol_hn_eat(&p, " 2>/dev/null || true && "))
			return NULL;
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(extglob_parts); i++)
		if (pol_hn_eat(&p, extglob_parts[i]))
			break;
	if (!pol_hn_eat(&p, "eval "))
		return NULL;
	/* A one-word command comes unquoted (eval ls < /dev/null). */
	char *cmd = *p == '\'' ? eat_quoted(&p) : eat_bare_word(&p);
	if (!cmd)
		return NULL;
	/* The tail, to the last byte: nothing may follow the cwd file, which
	 * lies in /tmp or a plain directory below it ($TMPDIR there). */
	if (!pol_hn_eat(&p, " < /dev/null && pwd -P >| /tmp/") || !eat_tmp_subdirs(&p) ||
	    !pol_hn_eat(&p, "claude-") || !pol_hn_eat_span(&p, "abcdef0123456789", false, 64) ||
	    strcmp(p, "-cwd") != 0 || cmd[0] == '\0') {
		free(cmd);
		return NULL;
	}
	return cmd;
}

/* Every write redirect of |script| goes to "$SNAPSHOT_FILE", /dev/null or
 * another fd, and the script is fully understood by the splitter. */
static bool writes_only_snapshot(const char *script)
{
	struct pol_sh_script sc;
	pol_sh_split(script, &sc);
	bool ok = !sc.unterminated;
	for (size_t i = 0; ok && i < sc.ntoks; i++) {
		const struct pol_sh_tok *t = &sc.toks[i];
		if (t->kind != SH_REDIR || !t->write_redir)
			continue;
		const char *target = i + 1 < sc.ntoks ? sc.toks[i + 1].text : "";
		bool dup = wd_str_has_suffix(t->text, ">&");
		ok = strcmp(target, "$SNAPSHOT_FILE") == 0 ||
		     strcmp(target, "${SNAPSHOT_FILE}") == 0 || strcmp(target, "/dev/null") == 0 ||
		     (dup && target[0] && strspn(target, "0123456789") == strlen(target));
	}
	pol_sh_script_free(&sc);
	return ok;
}

/* bash -c -l 'SNAPSHOT_FILE=HOME/.claude/shell-snapshots/snapshot-bash-ID.sh\n...' */
static bool claude_snapshot_shell(char *const *argv, size_t argc, const char *home)
{
	if (argc != 4 || !pol_hn_is_named(argv[0], "bash"))
		return false;
	bool flags = (strcmp(argv[1], "-c") == 0 && strcmp(argv[2], "-l") == 0) ||
		     (strcmp(argv[1], "-l") == 0 && strcmp(argv[2], "-c") == 0);
	if (!flags)
		return false;
	const char *p = argv[3];
	p += strspn(p, " \t\n");
	if (!pol_hn_eat(&p, "SNAPSHOT_FILE=")) /* unquoted, as with a plain HOME */
		return false;
	if (!eat_snapshot(&p, home) || *p != '\n')
		return false;
	return writes_only_snapshot(p);
}

/* sh -c 'ps aux | grep WORDS [| grep WORDS]...' with plain words only. */
static bool claude_ide_probe(char *const *argv, size_t argc)
{
	if (argc != 3 || !pol_hn_is_named(argv[0], "sh") || strcmp(argv[1], "-c") != 0)
		return false;
	struct pol_sh_script sc;
	pol_sh_split(argv[2], &sc);
	bool ok = sc.plain && sc.ntoks >= 5 && strcmp(sc.toks[0].text, "ps") == 0 &&
		  strcmp(sc.toks[1].text, "aux") == 0;
	for (size_t i = 2; ok && i < sc.ntoks; i++) {
		const struct pol_sh_tok *t = &sc.toks[i];
		if (t->kind == SH_OP_PIPE)
			ok = i + 2 < sc.ntoks && sc.toks[i + 1].kind == SH_WORD &&
			     strcmp(sc.toks[i + 1].text, "grep") == 0 &&
			     sc.toks[i + 2].kind == SH_WORD;
		else
			ok = t->kind == SH_WORD && i > 2;
	}
	pol_sh_script_free(&sc);
	return ok;
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
	if (argc != 1 + WD_ARRAY_SIZE(want) || strcmp(pol_cls_prog_name(argv[0]), "git") != 0)
		return false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(want); i++)
		if (want[i] && strcmp(argv[i + 1], want[i]) != 0)
			return false;
	return argv[6][0] == '/';
}

bool pol_hn_claude_startup(char *const *argv, size_t argc, const char *home)
{
	static const char *const env_c[] = {"-c", "env"};
	static const char *const ls_files[] = {"ls-files"};
	static const char *const origin[] = {"config", "--get", "remote.origin.url"};
	static const char *const user_name[] = {"config", "user.name"};
	static const char *const user_email[] = {"config", "user.email"};
	return pol_hn_argv_is(argv, argc, "bash", env_c, 2) ||
	       pol_hn_argv_is(argv, argc, "git", ls_files, 1) ||
	       pol_hn_argv_is(argv, argc, "git", origin, 3) ||
	       pol_hn_argv_is(argv, argc, "git", user_name, 2) ||
	       pol_hn_argv_is(argv, argc, "git", user_email, 2) ||
	       claude_settings_probe(argv, argc) || claude_snapshot_shell(argv, argc, home) ||
	       claude_ide_probe(argv, argc);
}
