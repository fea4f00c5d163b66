/*
 * sensitive.c: sensitive markers, write-protected paths and the glob rules
 * the config uses.
 *
 * Matching is byte-wise ASCII case folding, so paths that are not UTF-8 and
 * paths of any length are handled without a fixed buffer.
 *
 * See docs/design.md, section "Sensitive files".
 */
#include "policy_int.h"

#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <string.h>

/* The built-in markers. The list is never put in a judge prompt (a model
 * told what is sensitive is a model told where to look). */
static const char *const builtin_markers[] = {
	".git-credentials",
	".docker/config.json",
	".env",
	"credentials",
	"credential",
	"secret",
	"secrets",
	"id_rsa",
	"id_ed25519",
	"id_ecdsa",
	"id_dsa",
	".pem",
	".key",
	"password",
	"passwd",
	"token",
	"wallet",
	".ssh",
	".netrc",
	"cookie",
	"login data",
	"keychain",
	".aws",
	".gnupg",
	".npmrc",
	".pypirc",
	".kube",
	"private_key",
	"api_key",
	"apikey",
	".p12",
	".pfx",
	"shadow",
	".htpasswd",
	".pgpass",
};

static unsigned char fold(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* |n| bytes of |s| lower-cased into |out| (NUL-terminated). */
static void lower_into(char *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (char)fold((unsigned char)s[i]);
	out[n] = '\0';
}

bool pol_icontains(const char *hay, const char *needle)
{
	size_t nl = strlen(needle);
	if (nl == 0)
		return false;
	const unsigned char *h = (const unsigned char *)hay;
	const unsigned char *n = (const unsigned char *)needle;
	unsigned char f = fold(n[0]);
	/* The first byte in both cases: a letter's upper case, or itself. */
	unsigned char g = (f >= 'a' && f <= 'z') ? (unsigned char)(f - 32) : f;
	for (; *h; h++) {
		if (*h != f && *h != g)
			continue;
		size_t i = 1;
		while (i < nl && h[i] && fold(h[i]) == fold(n[i]))
			i++;
		if (i == nl)
			return true;
		if (!h[i])
			return false;
	}
	return false;
}

bool pol_lcontains(const char *hay, size_t hl, const char *needle, size_t nl)
{
	if (nl == 0 || nl > hl)
		return false;
	/* memchr() finds the candidates (vectorised in libc); glibc's
	 * memmem() sets up a table per call, slower on paths this short. */
	const char *p = hay, *last = hay + (hl - nl);
	while (p <= last) {
		p = memchr(p, needle[0], (size_t)(last - p) + 1);
		if (!p)
			return false;
		if (memcmp(p + 1, needle + 1, nl - 1) == 0)
			return true;
		p++;
	}
	return false;
}

/* The built-in markers lower-cased, parsed once; shared read-only by the
 * view's threads after the pthread_once(). */
struct lmarker {
	char *s;
	size_t n;
};
static struct lmarker builtin_lower[WD_ARRAY_SIZE(builtin_markers)];
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_lowercase(void)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(builtin_markers); i++) {
		size_t n = strlen(builtin_markers[i]);
		builtin_lower[i].s = wd_malloc(n + 1);
		builtin_lower[i].n = n;
		lower_into(builtin_lower[i].s, builtin_markers[i], n);
	}
}

const char *pol_sensitive_marker(const struct pol_config *c, size_t i)
{
	size_t nc = c ? c->nmarkers : 0;
	if (i < nc)
		return c->markers[i];
	i -= nc;
	return i < WD_ARRAY_SIZE(builtin_markers) ? builtin_markers[i] : NULL;
}

/* Whether lower-cased |lhay| (|hl| bytes) contains |needle| folding case:
 * what pol_icontains(hay, needle) answers, with the hay lowered once. */
static bool lcontains(const char *lhay, size_t hl, const char *needle)
{
	size_t nl = strlen(needle);
	if (nl == 0)
		return false;
	char buf[128];
	char *heap = nl < sizeof(buf) ? NULL : wd_malloc(nl + 1);
	char *ln = heap ? heap : buf;
	lower_into(ln, needle, nl);
	bool hit = pol_lcontains(lhay, hl, ln, nl);
	free(heap);
	return hit;
}

/* The first marker (the config's, then the built-in ones) that occurs in
 * |path|, or NULL. The path is lowered once for all of them. */
static const char *marker_in(const struct pol_config *c, const char *path)
{
	pthread_once(&builtin_once, builtin_lowercase);
	size_t pl = strlen(path);
	char buf[512];
	char *heap = pl < sizeof(buf) ? NULL : wd_malloc(pl + 1);
	char *lp = heap ? heap : buf;
	const char *m = NULL;
	lower_into(lp, path, pl);
	for (size_t i = 0; c && i < c->nmarkers && !m; i++)
		if (lcontains(lp, pl, c->markers[i]))
			m = c->markers[i];
	for (size_t i = 0; i < WD_ARRAY_SIZE(builtin_markers) && !m; i++)
		if (pol_lcontains(lp, pl, builtin_lower[i].s, builtin_lower[i].n))
			m = builtin_markers[i];
	free(heap);
	return m;
}

bool pol_is_sensitive(const struct pol_config *c, const char *path, const char **marker)
{
	if (marker)
		*marker = NULL;
	if (!path || !path[0])
		return false;
	/* The example file is committed on purpose and documents names only.
	 * Its own name is what exempts it: a directory called
	 * "deploy.env.example" is no example file, and what lies below it is
	 * matched like anything else (so a rename of a directory cannot
	 * exempt its contents; see pol_sensitive_below_differs()). */
	const char *base = strrchr(path, '/');
	if (pol_icontains(base ? base + 1 : path, ".env.example"))
		return false;
	const char *m = marker_in(c, path);
	if (marker)
		*marker = m;
	return m != NULL;
}

/* Whether |s| ends with |suffix| (|n| bytes), folding ASCII case. */
static bool iends_with(const char *s, const char *suffix, size_t n)
{
	size_t l = strlen(s);
	if (n > l)
		return false;
	for (size_t i = 0; i < n; i++)
		if (fold((unsigned char)s[l - n + i]) != fold((unsigned char)suffix[i]))
			return false;
	return true;
}

/* Whether a marker containing '/' can match across the separator between
 * |from| (or |to|) and a name below it differently for the two: a marker
 * "a/b" split at one of its slashes matches across the boundary of
 * "DIR/s" exactly when DIR ends with the part before that slash and s
 * starts with the part after it; the second condition is the same for
 * both directories, so only the first can differ. */
static bool span_differs(const char *m, const char *from, const char *to)
{
	for (const char *sl = strchr(m, '/'); sl; sl = strchr(sl + 1, '/')) {
		size_t n = (size_t)(sl - m);
		if (iends_with(from, m, n) != iends_with(to, m, n))
			return true;
	}
	return false;
}

/*
 * For a name s below the directory, pol_is_sensitive("DIR/s") is: not
 * exempt by the last component of "DIR/s" (a component of s, the same for
 * both directories), and a marker occurs in "DIR/s". A marker occurs in
 * "DIR/s" when it occurs in DIR, in s, or across the '/' between them
 * (only a marker containing '/' can: span_differs()). So when a marker
 * occurs in both directories, or in neither and no spanning marker tells
 * them apart, every s gets the same answer; otherwise some s does not.
 */
bool pol_sensitive_below_differs(const struct pol_config *c, const char *from, const char *to)
{
	bool in_from = marker_in(c, from) != NULL, in_to = marker_in(c, to) != NULL;
	if (in_from != in_to)
		return true;
	if (in_from)
		return false;
	for (size_t i = 0; c && i < c->nmarkers; i++)
		if (span_differs(c->markers[i], from, to))
			return true;
	for (size_t i = 0; i < WD_ARRAY_SIZE(builtin_markers); i++)
		if (span_differs(builtin_markers[i], from, to))
			return true;
	return false;
}

static const char *glob_problem(const char *pat)
{
	if (!pat[0])
		return "the pattern is empty";
	for (const char *p = pat; *p; p++) {
		if (*p == '\\') {
			if (!p[1])
				return "the pattern ends with a lone backslash";
			p++;
			continue;
		}
		if (*p != '[')
			continue;
		const char *q = p + 1;
		if (*q == '!' || *q == '^')
			q++;
		if (*q == ']')
			q++; /* a leading ] is a literal member */
		while (*q && *q != ']')
			q++;
		if (!*q)
			return "a '[' has no closing ']'";
		p = q;
	}
	return NULL;
}

int pol_invalid(const char *what, char **err)
{
	if (err)
		*err = wd_strdup(what);
	return -EINVAL;
}

int pol_glob_check(const char *pat, char **err)
{
	const char *problem = glob_problem(pat);
	return problem ? pol_invalid(problem, err) : 0;
}

char *pol_path_lexical(const char *path)
{
	bool abs = path[0] == '/';
	size_t n = strlen(path);
	char *out = wd_malloc(n + 2);
	size_t o = 0, keep = 0; /* |keep|: bytes of leading ".." that stay */
	if (abs)
		out[o++] = '/';
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t len = (size_t)(e - p);
		if (len == 0 || (len == 1 && p[0] == '.')) {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (o > keep && o > (size_t)abs) {
				while (o > (size_t)abs && out[o - 1] != '/')
					o--;
				if (o > (size_t)abs)
					o--;
			} else if (!abs) {
				if (o)
					out[o++] = '/';
				out[o++] = '.';
				out[o++] = '.';
				keep = o;
			}
		} else {
			if (o > (size_t)abs)
				out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p = e;
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = '\0';
	return out;
}

static char *norm_rel(const char *path)
{
	return pol_path_lexical(path);
}

bool pol_glob_match(const char *pat, const char *path)
{
	wd_autofree char *p = norm_rel(path);
	wd_autofree char *g = norm_rel(pat);
	/* "**" crosses directories; a plain "*" stays inside one. */
	int flags = strstr(g, "**") ? 0 : FNM_PATHNAME;
	if (fnmatch(g, p, flags) == 0)
		return true;
	/* A pattern that names a directory covers everything under it. */
	for (char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		bool hit = fnmatch(g, p, flags) == 0;
		*s = '/';
		if (hit)
			return true;
	}
	return false;
}

bool pol_is_write_protected(const struct pol_config *c, const char *path)
{
	if (!path || !path[0])
		return false;
	wd_autofree char *p = norm_rel(path);
	/* warden's own state: the config, the audit, the socket. */
	if (strcmp(p, ".warden") == 0 || wd_str_has_prefix(p, ".warden/"))
		return true;
	if (c && c->project) {
		size_t pl = strlen(c->project);
		if (strncmp(p, c->project, pl) == 0 &&
		    (strcmp(p + pl, "/.warden") == 0 || wd_str_has_prefix(p + pl, "/.warden/")))
			return true;
	}
	for (size_t i = 0; c && i < c->nprotect; i++)
		if (pol_glob_match(c->protect[i], p))
			return true;
	return false;
}
