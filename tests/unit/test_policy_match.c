/*
 * test_policy_match: pol_is_control(), pol_is_sensitive() and the two
 * rename predicates against straightforward reference implementations (the
 * pattern parsed on every call, strncasecmp at every position) on many
 * generated paths, patterns and configs; any difference fails. Also times
 * both on the same paths (printed, not asserted).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "policy.h"
#include "policy_int.h"

/* ---- the reference: the matching as first written ------------------------ */

#define REF_MAX 60

struct ref_pat {
	const char *comp[REF_MAX];
	size_t len[REF_MAX];
	size_t n;
	bool exclude;
};

static bool ref_split(const char *pat, struct ref_pat *out)
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
			if (out->n == REF_MAX)
				return false;
			out->comp[out->n] = pat;
			out->len[out->n++] = l;
		}
		pat += l + (e ? 1 : 0);
	}
	return true;
}

static bool ref_comp_match(const char *pc, size_t pl, const char *name, size_t nl)
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

static bool ref_star(const struct ref_pat *p, size_t i)
{
	return i < p->n && p->len[i] == 2 && strncmp(p->comp[i], "**", 2) == 0;
}

static uint64_t ref_closure(const struct ref_pat *p, uint64_t set)
{
	for (size_t i = 0; i < p->n; i++)
		if ((set & (1ull << i)) && ref_star(p, i))
			set |= 1ull << (i + 1);
	return set;
}

/* The automaton with no prefilter at all. */
static uint64_t ref_run(const struct ref_pat *p, const char *path)
{
	uint64_t set = ref_closure(p, 1);
	while (*path && set) {
		const char *e = strchr(path, '/');
		size_t l = e ? (size_t)(e - path) : strlen(path);
		if (l && !(l == 1 && path[0] == '.')) {
			uint64_t next = 0;
			for (size_t i = 0; i < p->n; i++) {
				if (!(set & (1ull << i)))
					continue;
				if (ref_star(p, i))
					next |= 1ull << i;
				else if (ref_comp_match(p->comp[i], p->len[i], path, l))
					next |= 1ull << (i + 1);
			}
			set = ref_closure(p, next);
		}
		path += l + (e ? 1 : 0);
	}
	return set;
}

static bool ref_is_control(const struct pol_config *c, const char *path, const char **pattern)
{
	const char *hit = NULL;
	bool in = false;
	*pattern = NULL;
	if (!path[0] || path[0] == '/')
		return false;
	for (size_t i = 0;; i++) {
		const char *pat = pol_control_pattern(c, i);
		struct ref_pat p;
		if (!pat)
			break;
		if (!ref_split(pat, &p))
			continue;
		if (ref_run(&p, path) & (1ull << p.n)) {
			in = !p.exclude;
			hit = pat;
		}
	}
	if (in)
		*pattern = hit;
	return in;
}

static bool ref_control_below_differs(const struct pol_config *c, const char *from, const char *to)
{
	for (size_t i = 0;; i++) {
		const char *pat = pol_control_pattern(c, i);
		struct ref_pat p;
		if (!pat)
			return false;
		if (ref_split(pat, &p) && ref_run(&p, from) != ref_run(&p, to))
			return true;
	}
}

static bool ref_icontains(const char *hay, const char *needle)
{
	size_t nl = strlen(needle);
	if (nl == 0)
		return false;
	for (; *hay; hay++)
		if (strncasecmp(hay, needle, nl) == 0)
			return true;
	return false;
}

static const char *ref_marker_in(const struct pol_config *c, const char *path)
{
	for (size_t i = 0;; i++) {
		const char *m = pol_sensitive_marker(c, i);
		if (!m || ref_icontains(path, m))
			return m;
	}
}

static bool ref_is_sensitive(const struct pol_config *c, const char *path, const char **marker)
{
	*marker = NULL;
	if (!path[0])
		return false;
	const char *base = strrchr(path, '/');
	if (ref_icontains(base ? base + 1 : path, ".env.example"))
		return false;
	*marker = ref_marker_in(c, path);
	return *marker != NULL;
}

static bool ref_iends_with(const char *s, const char *suffix, size_t n)
{
	size_t l = strlen(s);
	return n <= l && strncasecmp(s + l - n, suffix, n) == 0;
}

static bool ref_sensitive_below_differs(const struct pol_config *c, const char *from,
					const char *to)
{
	bool in_from = ref_marker_in(c, from) != NULL, in_to = ref_marker_in(c, to) != NULL;
	if (in_from != in_to)
		return true;
	if (in_from)
		return false;
	for (size_t i = 0;; i++) {
		const char *m = pol_sensitive_marker(c, i);
		if (!m)
			return false;
		for (const char *sl = strchr(m, '/'); sl; sl = strchr(sl + 1, '/')) {
			size_t n = (size_t)(sl - m);
			if (ref_iends_with(from, m, n) != ref_iends_with(to, m, n))
				return true;
		}
	}
}

/* ---- generated paths -------------------------------------------------- */

static const char *const words[] = {
	".git",
	".GIT",
	".Git",
	"hooks",
	"HOOKS",
	"pre-commit",
	"pre-commit.sample",
	"post-merge.SAMPLE",
	"config",
	"CONFIG",
	"config.worktree",
	"commondir",
	"HEAD",
	"head",
	"objects",
	"refs",
	"info",
	"attributes",
	"modules",
	"sub",
	"worktrees",
	"wt1",
	".gitmodules",
	".GitModules",
	".husky",
	".githooks",
	".pre-commit-config.yaml",
	"lefthook.yml",
	".envrc",
	".ENVRC",
	"mise.toml",
	"mise.dev.toml",
	"MISE.Prod.TOML",
	".mise",
	".config",
	"mise",
	".tool-versions",
	".vscode",
	".VSCode",
	"tasks.json",
	"x.code-workspace",
	".idea",
	".devcontainer",
	".devcontainer.json",
	".zed",
	".helix",
	".nvim.lua",
	".exrc",
	".dir-locals.el",
	".env",
	".ENV",
	".env.example",
	"deploy.ENV.Example",
	"id_rsa",
	"ID_RSA.pub",
	"Secret",
	"secrets.yml",
	"credentials",
	"token",
	"tok",
	"en",
	"pass",
	"word",
	"private_key",
	"a",
	"b",
	"x",
	"y",
	"z",
	"tools",
	"Tools",
	"run.sh",
	"RUN.SH",
	"Justfile",
	"JUSTFILE",
	"src",
	"main.c",
	"README.md",
	"docs",
	"lit*x",
	"a?b",
	"aXb",
	"Makefile",
	".",
	"",
	"node_modules",
	"lib",
	"PrivKey.txt",
	"privkey",
	"mixed",
	"MiXeD",
	"\xc3\xa9t\xc3\xa9",
	"\xff\xfe",
	"caf\xc3\x89",
	"[x]",
	"back\\slash",
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

/* A random component: a word (its case sometimes flipped), or random bytes. */
static size_t gen_comp(char *out, size_t room)
{
	size_t n = 0;
	if (rnd(6) == 0) {
		static const char alpha[] = "aAbBxXyY.-_*?[]!gGiItT\xc3\xa9\xff/";
		size_t l = 1 + rnd(8);
		for (; n < l && n + 1 < room; n++)
			out[n] = alpha[rnd(sizeof(alpha) - 1)];
		return n;
	}
	const char *w = words[rnd(WD_ARRAY_SIZE(words))];
	bool flip = rnd(4) == 0;
	for (; w[n] && n + 1 < room; n++) {
		char ch = w[n];
		if (flip && rnd(2)) {
			if (ch >= 'a' && ch <= 'z')
				ch = (char)(ch - 32);
			else if (ch >= 'A' && ch <= 'Z')
				ch = (char)(ch + 32);
		}
		out[n] = ch;
	}
	return n;
}

/* A random relative path (sometimes with "//", "./", a trailing '/', a
 * leading '/', or longer than any stack buffer). */
static void gen_path(char *out, size_t room)
{
	size_t n = 0, parts = 1 + rnd(rnd(20) == 0 ? 120 : 7);
	if (rnd(50) == 0)
		out[n++] = '/';
	if (rnd(30) == 0) {
		out[n++] = '.';
		out[n++] = '/';
	}
	for (size_t i = 0; i < parts && n + 80 < room; i++) {
		if (i) {
			out[n++] = '/';
			if (rnd(40) == 0)
				out[n++] = '/';
		}
		n += gen_comp(out + n, room - n - 1);
	}
	if (rnd(30) == 0 && n + 1 < room)
		out[n++] = '/';
	out[n] = '\0';
}

/* ---- the comparison ---------------------------------------------------- */

static struct pol_config *parse(const char *text)
{
	struct pol_config *c = NULL;
	struct pol_config_errors e;
	if (pol_config_parse(text, strlen(text), "p.json", &c, &e) != 0) {
		for (size_t i = 0; i < e.count; i++)
			print_message("%s\n", e.items[i].message);
		pol_config_errors_free(&e);
		fail_msg("config did not parse: %s", text);
	}
	return c;
}

static const char *const configs[] = {
	"{}",
	"{\"control_files\": [\"**\", \"tools/*.sh\", \"!.vscode/**\", \"**/Justfile\", "
	"\"x/**/y\", "
	"\"!**/.git/config\", \"*.MD\", \"a?b/**\", \"[Tt]ools/run.sh\", \"!**/HEAD\", "
	"\"**/*.ENV*\", \"docs/lit\\\\*x\", \"**/mixed/**\", \"!**/.git/hooks/**\", "
	"\"src/**/main.c\", \"!src/**\"], "
	"\"sensitive_resources\": [\"PrivKey\", \"a/b\", \"MiXeD\", \"tok/en\", \"caf\xc3\xa9\", "
	"\"x/y/z\"]}",
	"{\"control_files\": [\"!**\", \"**/.git/**\", \"!**/.GIT/hooks/*.sample\", \"*\", "
	"\"!*.c\", \"b/*/\", \"z\"], \"sensitive_resources\": [\"/\", \"SRC/\", \"/b\"]}",
	"{\"control_files\": [\"!.envrc\", \"!**/.vscode/**\", \"!.gitmodules\", "
	"\"**/[!a]/y\", \"**/?\"]}",
};

struct tally {
	double t_new, t_ref;
	size_t checked, control, sensitive;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void compare_one(const struct pol_config *c, const char *path, const char *other,
			struct tally *t)
{
	const char *pn = NULL, *pr = NULL;
	bool n = pol_is_control(c, path, &pn), r = ref_is_control(c, path, &pr);
	if (n != r || pn != pr)
		fail_msg("pol_is_control(\"%s\"): %d (%s), reference %d (%s)", path, n,
			 pn ? pn : "-", r, pr ? pr : "-");
	const char *mn = NULL, *mr = NULL;
	n = pol_is_sensitive(c, path, &mn);
	r = ref_is_sensitive(c, path, &mr);
	if (n != r || mn != mr)
		fail_msg("pol_is_sensitive(\"%s\"): %d (%s), reference %d (%s)", path, n,
			 mn ? mn : "-", r, mr ? mr : "-");
	if (pol_control_below_differs(c, path, other) != ref_control_below_differs(c, path, other))
		fail_msg("pol_control_below_differs(\"%s\", \"%s\") differs", path, other);
	if (pol_sensitive_below_differs(c, path, other) !=
	    ref_sensitive_below_differs(c, path, other))
		fail_msg("pol_sensitive_below_differs(\"%s\", \"%s\") differs", path, other);
	for (size_t i = 0; i < 3; i++) {
		const char *m = pol_sensitive_marker(c, rnd(40));
		if (m && pol_icontains(path, m) != ref_icontains(path, m))
			fail_msg("pol_icontains(\"%s\", \"%s\") differs", path, m);
	}
	char needle[8];
	gen_comp(needle, 1 + rnd(sizeof(needle) - 1));
	if (pol_icontains(path, needle) != ref_icontains(path, needle))
		fail_msg("pol_icontains(\"%s\", \"%s\") differs", path, needle);
	t->checked++;
	t->control += pn != NULL;
	t->sensitive += mn != NULL;
}

#define NPATHS 4000

static void compare_config(struct pol_config *c, struct tally *t)
{
	static char paths[NPATHS][1200];
	for (size_t i = 0; i < NPATHS; i++)
		gen_path(paths[i], sizeof(paths[i]));
	for (size_t i = 0; i < NPATHS; i++)
		compare_one(c, paths[i], paths[(i * 7 + 3) % NPATHS], t);

	/* The same paths timed: the predicates the split view's walk asks. */
	const char *p = NULL;
	size_t hits = 0;
	double t0 = now_s();
	for (size_t i = 0; i < NPATHS; i++)
		hits += pol_is_control(c, paths[i], &p) + pol_is_sensitive(c, paths[i], &p);
	double t1 = now_s();
	for (size_t i = 0; i < NPATHS; i++)
		hits += ref_is_control(c, paths[i], &p) + ref_is_sensitive(c, paths[i], &p);
	double t2 = now_s();
	assert_int_equal(hits % 2, 0); /* each hit counted twice, once per side */
	t->t_new += t1 - t0;
	t->t_ref += t2 - t1;
}

static void test_pol_match_against_reference(void **state)
{
	(void)state;
	struct tally t = {0};
	for (size_t k = 0; k < WD_ARRAY_SIZE(configs); k++) {
		struct pol_config *c = parse(configs[k]);
		compare_config(c, &t);
		/* A config whose patterns were not parsed at load (put together
		 * by hand) gets the same answers. */
		pol_control_set_free(c->control_set);
		c->control_set = NULL;
		compare_config(c, &t);
		pol_config_free(c);
	}
	compare_config(NULL, &t);
	/* The generator reaches both answers of both predicates. */
	assert_true(t.control > 1000 && t.control < t.checked - 1000);
	assert_true(t.sensitive > 1000 && t.sensitive < t.checked - 1000);
	print_message("%zu paths: pol_is_control+pol_is_sensitive %.3f s, reference %.3f s\n",
		      t.checked, t.t_new, t.t_ref);
}

/* Names the built-in lists reach, in every case. */
static void test_pol_match_known_answers(void **state)
{
	(void)state;
	const char *p = NULL;
	assert_true(pol_is_control(NULL, "A/.GIT/Hooks/pre-commit", &p));
	assert_string_equal(p, "**/.git/hooks/**");
	assert_false(pol_is_control(NULL, "a/.git/hooks/pre-commit.SAMPLE", &p));
	assert_true(pol_is_control(NULL, "MISE.Dev.TOML", &p));
	assert_string_equal(p, "mise.*.toml");
	assert_true(pol_is_sensitive(NULL, "x/ID_Rsa", &p));
	assert_string_equal(p, "id_rsa");
	assert_false(pol_is_sensitive(NULL, "x/Deploy.ENV.Example", &p));
	assert_true(pol_icontains("ab\xc3\xa9XYz", "xy"));
	assert_false(pol_icontains("ab\xc3\xa9XYz", "\xc3\x89"));
	assert_false(pol_icontains("abc", ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pol_match_against_reference),
		cmocka_unit_test(test_pol_match_known_answers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
