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
#include <pthread.h>
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
	const char *src; /* the pattern as written (with its '!') */
	const char *comp[CTL_MAX_COMPONENTS];
	size_t len[CTL_MAX_COMPONENTS];
	size_t n;
	uint64_t star; /* bit i: component i is "**" */
	bool exclude;
	bool ok; /* false: refused by the parser (too many components) */
	/* The prefilter's literal runs (may_match()), lower-cased, each
	 * followed by a NUL; |nlit| of them, |litlen| their lengths. */
	char *lit;
	size_t *litlen;
	size_t nlit;
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

static unsigned char lower(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') ? (unsigned char)(ch + 32) : ch;
}

/* Parses |pat| once: its components, which are "**", and the literal runs
 * the prefilter looks for. A component without wildcards must occur in
 * the path as it is (most paths of a project contain none of ".git",
 * ".vscode", ...), so the automaton runs only for the few that might
 * match: each run of bytes between '*' and '?' of a component with no
 * '[' and no '\\' is in every path the pattern matches. */
static void ctl_compile(const char *pat, struct ctl_pat *out)
{
	memset(out, 0, sizeof(*out));
	out->src = pat;
	out->ok = ctl_split(pat, out);
	if (!out->ok)
		return;
	size_t pl = strlen(pat);
	char *w = out->lit = wd_malloc(pl + 1);
	/* At most one run per two bytes of the pattern, and one more. */
	out->litlen = wd_malloc((pl / 2 + 1) * sizeof(*out->litlen));
	for (size_t i = 0; i < out->n; i++) {
		const char *c = out->comp[i], *end = c + out->len[i];
		if (out->len[i] == 2 && strncmp(c, "**", 2) == 0) {
			out->star |= 1ull << i;
			continue;
		}
		if (memchr(c, '[', out->len[i]) || memchr(c, '\\', out->len[i]))
			continue;
		while (c < end) {
			const char *r = c;
			while (r < end && *r != '*' && *r != '?')
				r++;
			if (r > c) {
				out->litlen[out->nlit] = (size_t)(r - c);
				for (; c < r; c++)
					*w++ = (char)lower((unsigned char)*c);
				*w++ = '\0';
				out->nlit++;
			}
			c = r + 1;
		}
	}
}

static void ctl_release(struct ctl_pat *p)
{
	free(p->lit);
	free(p->litlen);
	p->lit = NULL;
	p->litlen = NULL;
}

/* Adds the positions "**" lets the automaton skip to. */
static uint64_t closure(const struct ctl_pat *p, uint64_t set)
{
	for (size_t i = 0; i < p->n; i++)
		if ((set & (1ull << i)) && (p->star & (1ull << i)))
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
				if (p->star & (1ull << i))
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

/* A set of parsed patterns (the built-in ones, or a config's). */
struct pol_ctl_set {
	size_t n;
	struct ctl_pat pat[];
};

struct pol_ctl_set *pol_control_compile(char *const *pats, size_t n)
{
	struct pol_ctl_set *s = wd_malloc(sizeof(*s) + n * sizeof(s->pat[0]));
	s->n = n;
	for (size_t i = 0; i < n; i++)
		ctl_compile(pats[i], &s->pat[i]);
	return s;
}

void pol_control_set_free(struct pol_ctl_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		ctl_release(&s->pat[i]);
	free(s);
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
const char *pol_control_pattern(const struct pol_config *c, size_t i)
{
	size_t nb = WD_ARRAY_SIZE(builtin_control);
	if (i < nb)
		return builtin_control[i];
	i -= nb;
	return c && i < c->ncontrol ? c->control[i] : NULL;
}

/* The built-in patterns, parsed once into static storage; the view's
 * threads share them read-only after the pthread_once(). */
static struct ctl_pat builtin_pat[WD_ARRAY_SIZE(builtin_control)];
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_parse(void)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(builtin_control); i++)
		ctl_compile(builtin_control[i], &builtin_pat[i]);
}

/* Whether every literal run of |p| occurs in |lpath| (the path, |plen|
 * bytes, lower-cased): a quick refusal before the automaton. */
static bool may_match(const struct ctl_pat *p, const char *lpath, size_t plen)
{
	const char *r = p->lit;
	for (size_t k = 0; k < p->nlit; k++) {
		if (!pol_lcontains(lpath, plen, r, p->litlen[k]))
			return false;
		r += p->litlen[k] + 1;
	}
	return true;
}

/* Applies |p| to |path| under the last-match rule. */
static void ctl_apply(const struct ctl_pat *p, const char *path, const char *lpath, size_t plen,
		      bool *in, const char **hit)
{
	if (!p->ok)
		return; /* refused by the parser; built-ins are short */
	if (may_match(p, lpath, plen) && (ctl_run(p, path) & (1ull << p->n))) {
		*in = !p->exclude;
		*hit = p->src;
	}
}

/* The config's patterns, parsed at load (config.c); NULL when they were
 * not (a config put together by hand), and the caller parses each. */
static const struct pol_ctl_set *config_set(const struct pol_config *c)
{
	if (c && c->control_set && c->control_set->n == c->ncontrol)
		return c->control_set;
	return NULL;
}

bool pol_is_control(const struct pol_config *c, const char *path, const char **pattern)
{
	const char *hit = NULL;
	bool in = false;
	if (pattern)
		*pattern = NULL;
	if (!path || !path[0] || path[0] == '/')
		return false;
	pthread_once(&builtin_once, builtin_parse);

	/* The path lower-cased once, for every pattern's prefilter. */
	size_t plen = strlen(path);
	char buf[512];
	char *heap = plen < sizeof(buf) ? NULL : wd_malloc(plen + 1);
	char *lpath = heap ? heap : buf;
	for (size_t i = 0; i <= plen; i++)
		lpath[i] = (char)lower((unsigned char)path[i]);

	for (size_t i = 0; i < WD_ARRAY_SIZE(builtin_pat); i++)
		ctl_apply(&builtin_pat[i], path, lpath, plen, &in, &hit);
	const struct pol_ctl_set *set = config_set(c);
	for (size_t i = 0; c && i < c->ncontrol; i++) {
		if (set) {
			ctl_apply(&set->pat[i], path, lpath, plen, &in, &hit);
			continue;
		}
		struct ctl_pat p;
		ctl_compile(c->control[i], &p);
		ctl_apply(&p, path, lpath, plen, &in, &hit);
		ctl_release(&p);
	}
	free(heap);
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
static bool run_differs(const struct ctl_pat *p, const char *from, const char *to)
{
	return p->ok && ctl_run(p, from) != ctl_run(p, to);
}

bool pol_control_below_differs(const struct pol_config *c, const char *from, const char *to)
{
	pthread_once(&builtin_once, builtin_parse);
	for (size_t i = 0; i < WD_ARRAY_SIZE(builtin_pat); i++)
		if (run_differs(&builtin_pat[i], from, to))
			return true;
	const struct pol_ctl_set *set = config_set(c);
	for (size_t i = 0; c && i < c->ncontrol; i++) {
		if (set) {
			if (run_differs(&set->pat[i], from, to))
				return true;
			continue;
		}
		struct ctl_pat p;
		ctl_compile(c->control[i], &p);
		bool d = run_differs(&p, from, to);
		ctl_release(&p);
		if (d)
			return true;
	}
	return false;
}
