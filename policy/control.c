/*
 * control.c: control files, the files of a project the host runs code from
 * later without anyone running the project (git's config and hooks,
 * .envrc, editor tasks, dev container and pre-commit definitions). The
 * view makes every change to one a request; reading them stays free.
 *
 * Patterns are gitignore-like globs relative to the project, the built-in
 * list first and the config's control_files after it; the last pattern
 * that matches decides. Matching is a small automaton over the pattern's
 * components, which lets a directory rename be checked for everything
 * below it at once (pol_control_below_differs()).
 *
 * See docs/design.md, section "Control files".
 */
#include "policy_int.h"

#include <fnmatch.h>
#include <string.h>
#include <strings.h>

/* A control pattern has at most this many components (a bit each). */
#define CTL_MAX_COMPONENTS 60

static const char *const builtin_control[] = {
	/* git: the .git entry itself (a gitfile or a symlink there sends git
	 * to a directory the agent filled), the config (core.fsmonitor,
	 * core.pager, core.hooksPath, aliases, filter and diff drivers), the
	 * hooks, info/attributes (which selects those drivers), and the same
	 * for submodules' and worktrees' git directories. Nested repositories
	 * count: IDEs and prompts run git in them too. Sample hooks never
	 * run. */
	"**/.git",
	"**/.git/config",
	"**/.git/config.worktree",
	"**/.git/commondir",
	"**/.git/hooks/**",
	"!**/.git/hooks/*.sample",
	"**/.git/info/attributes",
	"**/.git/modules/**/config",
	"**/.git/modules/**/config.worktree",
	"**/.git/modules/**/hooks/**",
	"!**/.git/modules/**/hooks/*.sample",
	"**/.git/modules/**/info/attributes",
	"**/.git/worktrees/*/config.worktree",
	"**/.git/worktrees/*/commondir",
	".gitmodules",
	/* A directory holding a HEAD (with objects/ and refs/) is a bare
	 * repository to git run inside it (safe.bareRepository defaults to
	 * "all"): its plain "config" may set core.worktree and
	 * core.fsmonitor, run by the next `git status` there. git needs the
	 * HEAD, so a new one is the change to decide; git's own HEADs inside
	 * a .git directory are its ordinary writes (moving such a directory
	 * out is a rename that makes them control, pol_control_below_differs).
	 * A bare repository made inside a .git directory is git's directory
	 * there too: git writes no "config" below .git but the ones above. */
	"**/HEAD",
	"!**/.git/**/HEAD",
	"**/.git/**/config",
	/* Hook managers whose directories git is configured to run. */
	"**/.husky/**",
	"**/.githooks/**",
	".pre-commit-config.yaml",
	"lefthook.yml",
	".lefthook.yml",
	"lefthook-local.yml",
	".lefthook-local.yml",
	/* Run on `cd` into the directory. */
	".envrc",
	"mise.toml",
	".mise.toml",
	"mise.local.toml",
	".mise.local.toml",
	"mise.*.toml",
	".mise.*.toml",
	".config/mise.toml",
	".config/mise/**",
	"mise/config.toml",
	".mise/**",
	".tool-versions",
	/* Editors: tasks, launch and run configurations, settings that name
	 * programs; opened folders run them. */
	"**/.vscode/**",
	"*.code-workspace",
	"**/.idea/**",
	"**/.devcontainer/**",
	".devcontainer.json",
	"**/.zed/**",
	"**/.helix/**",
	/* Editors that read code from the folder they open, behind a trust
	 * prompt of their own (Neovim's exrc, Emacs's unsafe locals): the
	 * prompt is the person's, the file is still the agent's. */
	".nvim.lua",
	".nvimrc",
	".exrc",
	".dir-locals.el",
	".dir-locals-2.el",
};

/* Whether pattern component |pc| (|pl| bytes) matches |name| (|nl|). */
static bool comp_match(const char *pc, size_t pl, const char *name, size_t nl)
{
	char p[256], n[256];
	if (pl >= sizeof(p) || nl >= sizeof(n))
		return pl == nl && strncasecmp(pc, name, pl) == 0;
	memcpy(p, pc, pl);
	p[pl] = '\0';
	memcpy(n, name, nl);
	n[nl] = '\0';
	return fnmatch(p, n, FNM_CASEFOLD) == 0;
}

struct ctl_pat {
	const char *comp[CTL_MAX_COMPONENTS];
	size_t len[CTL_MAX_COMPONENTS];
	size_t n;
	bool exclude;
};

/* Splits |pat| into components; false when it has too many. */
static bool ctl_split(const char *pat, struct ctl_pat *out)
{
	out->n = 0;
	out->exclude = pat[0] == '!';
	if (out->exclude)
		pat++;
	if (!strchr(pat, '/')) {
		out->comp[0] = "**";
		out->len[0] = 2;
		out->n = 1;
	}
	while (*pat) {
		const char *e = strchr(pat, '/');
		size_t l = e ? (size_t)(e - pat) : strlen(pat);
		if (l) {
			if (out->n == CTL_MAX_COMPONENTS)
				return false;
			out->comp[out->n] = pat;
			out->len[out->n++] = l;
		}
		pat += l + (e ? 1 : 0);
	}
	return true;
}

static bool is_globstar(const struct ctl_pat *p, size_t i)
{
	return i < p->n && p->len[i] == 2 && strncmp(p->comp[i], "**", 2) == 0;
}

/* Adds the positions "**" lets the automaton skip to. */
static uint64_t closure(const struct ctl_pat *p, uint64_t set)
{
	for (size_t i = 0; i < p->n; i++)
		if ((set & (1ull << i)) && is_globstar(p, i))
			set |= 1ull << (i + 1);
	return set;
}

/* The automaton's positions after every component of |path| (relative,
 * '/'-separated; empty components are skipped). Position n is "matched". */
static uint64_t ctl_run(const struct ctl_pat *p, const char *path)
{
	uint64_t set = closure(p, 1);
	while (*path && set) {
		const char *e = strchr(path, '/');
		size_t l = e ? (size_t)(e - path) : strlen(path);
		if (l && !(l == 1 && path[0] == '.')) {
			uint64_t next = 0;
			for (size_t i = 0; i < p->n; i++) {
				if (!(set & (1ull << i)))
					continue;
				if (is_globstar(p, i))
					next |= 1ull << i;
				else if (comp_match(p->comp[i], p->len[i], path, l))
					next |= 1ull << (i + 1);
			}
			set = closure(p, next);
		}
		path += l + (e ? 1 : 0);
	}
	return set;
}

int pol_control_check(const char *pat, char **err)
{
	struct ctl_pat p;
	const char *body = pat[0] == '!' ? pat + 1 : pat;
	if (!body[0])
		return pol_invalid("the pattern is empty", err);
	if (body[0] == '/')
		return pol_invalid(
			"a control file is named relative to the project, without a leading '/'",
			err);
	if (strstr(body, "..") && (strcmp(body, "..") == 0 || strstr(body, "../") == body ||
				   strstr(body, "/../") || wd_str_has_suffix(body, "/..")))
		return pol_invalid("a pattern may not contain \"..\"", err);
	if (!ctl_split(pat, &p))
		return pol_invalid("the pattern has too many components (at most 60)", err);
	return pol_glob_check(body, err);
}

/* The |i|th pattern, the built-in ones first, then the config's; NULL past
 * the last. */
static const char *ctl_pattern(const struct pol_config *c, size_t i)
{
	size_t nb = WD_ARRAY_SIZE(builtin_control);
	if (i < nb)
		return builtin_control[i];
	i -= nb;
	return c && i < c->ncontrol ? c->control[i] : NULL;
}

/* Whether |hay| contains the |n| bytes of |needle|, folding ASCII case. */
static bool icontains_n(const char *hay, const char *needle, size_t n)
{
	unsigned char first = (unsigned char)needle[0] | 0x20, alt = (unsigned char)needle[0];

	for (; *hay; hay++) {
		unsigned char h = (unsigned char)*hay;
		/* Cheap first-byte test (case-folded letters, or the byte). */
		if ((h | 0x20) != first && h != alt)
			continue;
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	}
	return false;
}

/* A quick refusal: a component without wildcards must occur in the path
 * as it is (most paths of a project contain none of ".git", ".vscode",
 * ...), so the automaton runs only for the few that might match. */
static bool may_match(const struct ctl_pat *p, const char *path)
{
	for (size_t i = 0; i < p->n; i++) {
		const char *c = p->comp[i], *end = c + p->len[i];

		if (is_globstar(p, i) || memchr(c, '[', p->len[i]) || memchr(c, '\\', p->len[i]))
			continue;
		/* Each run of bytes between '*' and '?' is in the path. */
		while (c < end) {
			const char *w = c;
			while (w < end && *w != '*' && *w != '?')
				w++;
			if (w > c && !icontains_n(path, c, (size_t)(w - c)))
				return false;
			c = w + 1;
		}
	}
	return true;
}

bool pol_is_control(const struct pol_config *c, const char *path, const char **pattern)
{
	const char *hit = NULL;
	bool in = false;
	if (pattern)
		*pattern = NULL;
	if (!path || !path[0] || path[0] == '/')
		return false;
	for (size_t i = 0;; i++) {
		const char *pat = ctl_pattern(c, i);
		struct ctl_pat p;
		if (!pat)
			break;
		if (!ctl_split(pat, &p))
			continue; /* refused by the parser; built-ins are short */
		if (may_match(&p, path) && (ctl_run(&p, path) & (1ull << p.n))) {
			in = !p.exclude;
			hit = pat;
		}
	}
	if (pattern && in)
		*pattern = hit;
	return in;
}

/*
 * "DIR/s" matches a pattern exactly when the automaton, started from its
 * positions after DIR, ends on "matched" after s. So when every pattern
 * (included and excluded alike) has the same positions after |from| as
 * after |to|, every pattern answers the same for every s, and so does the
 * last-match rule; when one differs, some s may be answered differently,
 * and the rename is reported.
 */
bool pol_control_below_differs(const struct pol_config *c, const char *from, const char *to)
{
	for (size_t i = 0;; i++) {
		const char *pat = ctl_pattern(c, i);
		struct ctl_pat p;
		if (!pat)
			return false;
		if (!ctl_split(pat, &p))
			continue;
		if (ctl_run(&p, from) != ctl_run(&p, to))
			return true;
	}
}
