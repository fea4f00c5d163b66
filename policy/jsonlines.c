/*
 * jsonlines.c: the line of every key and array element of a JSON text.
 *
 * cJSON keeps no positions, so the config parser asks this small scanner,
 * which walks the same text and records, for each path such as
 * "rules[2].action", the 1-based line where that key (or element) starts.
 * Duplicate keys are recorded once per occurrence. It stops quietly at the
 * first syntax error: cJSON reports that one.
 *
 * See docs/design.md, section "Configuration".
 */
#include "policy_int.h"

#include <string.h>

#define MAX_NEST 1000

struct lm_entry {
	char *path;
	int line;
};

struct pol_linemap {
	struct lm_entry *e;
	size_t n, cap;
	bool bad;
	size_t bad_off;
};

struct scan {
	const char *s;
	size_t len, i;
	int line;
	struct pol_linemap *m;
	bool bad;
};

static void record(struct scan *sc, const char *path, int line)
{
	struct pol_linemap *m = sc->m;
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 32;
		m->e = wd_realloc(m->e, m->cap * sizeof(*m->e));
	}
	m->e[m->n].path = wd_strdup(path);
	m->e[m->n].line = line;
	m->n++;
}

static void skip_ws(struct scan *sc)
{
	while (sc->i < sc->len) {
		char c = sc->s[sc->i];
		if (c == '\n')
			sc->line++;
		else if (c != ' ' && c != '\t' && c != '\r')
			return;
		sc->i++;
	}
}

/* A string at sc->i; its raw text (escapes kept) goes to |out| if given. */
static void scan_string(struct scan *sc, struct wd_sb *out)
{
	sc->i++; /* the opening quote */
	size_t start = sc->i;
	while (sc->i < sc->len && sc->s[sc->i] != '"') {
		if (sc->s[sc->i] == '\\')
			sc->i++;
		else if (sc->s[sc->i] == '\n')
			sc->line++;
		sc->i++;
	}
	if (sc->i >= sc->len) {
		sc->bad = true;
		return;
	}
	if (out)
		wd_sb_add(out, sc->s + start, sc->i - start);
	sc->i++;
}

/* Past an opening bracket: false when |close| follows at once (consumed). */
static bool scan_open(struct scan *sc, char close)
{
	sc->i++;
	skip_ws(sc);
	if (sc->i < sc->len && sc->s[sc->i] == close) {
		sc->i++;
		return false;
	}
	return true;
}

/* After a member or an element: true when a ',' says another follows;
 * false at |close| (consumed) or on a syntax error (sc->bad set). */
static bool scan_next(struct scan *sc, char close)
{
	if (sc->bad)
		return false;
	skip_ws(sc);
	if (sc->i < sc->len && sc->s[sc->i] == ',') {
		sc->i++;
		return true;
	}
	if (sc->i < sc->len && sc->s[sc->i] == close) {
		sc->i++;
		return false;
	}
	sc->bad = true;
	return false;
}

static void scan_value(struct scan *sc, const char *path, int depth);

static void scan_object(struct scan *sc, const char *path, int depth)
{
	if (!scan_open(sc, '}'))
		return;
	while (!sc->bad && sc->i < sc->len) {
		skip_ws(sc);
		if (sc->i >= sc->len || sc->s[sc->i] != '"') {
			sc->bad = true;
			return;
		}
		int line = sc->line;
		struct wd_sb key = {0};
		scan_string(sc, &key);
		char *k = wd_sb_steal(&key);
		char *sub = path[0] ? wd_asprintf("%s.%s", path, k) : wd_strdup(k);
		free(k);
		record(sc, sub, line);
		skip_ws(sc);
		if (sc->i >= sc->len || sc->s[sc->i] != ':') {
			sc->bad = true;
			free(sub);
			return;
		}
		sc->i++;
		scan_value(sc, sub, depth + 1);
		free(sub);
		if (!scan_next(sc, '}'))
			return;
	}
}

static void scan_array(struct scan *sc, const char *path, int depth)
{
	if (!scan_open(sc, ']'))
		return;
	for (size_t idx = 0; !sc->bad && sc->i < sc->len; idx++) {
		skip_ws(sc);
		char *sub = wd_asprintf("%s[%zu]", path, idx);
		record(sc, sub, sc->line);
		scan_value(sc, sub, depth + 1);
		free(sub);
		if (!scan_next(sc, ']'))
			return;
	}
}

static void scan_value(struct scan *sc, const char *path, int depth)
{
	skip_ws(sc);
	if (sc->i >= sc->len || depth > MAX_NEST) {
		sc->bad = true;
		return;
	}
	char c = sc->s[sc->i];
	if (c == '{') {
		scan_object(sc, path, depth);
	} else if (c == '[') {
		scan_array(sc, path, depth);
	} else if (c == '"') {
		scan_string(sc, NULL);
	} else {
		/* number, true, false, null: up to a delimiter */
		size_t start = sc->i;
		while (sc->i < sc->len && !strchr(",]} \t\r\n", sc->s[sc->i]))
			sc->i++;
		if (sc->i == start)
			sc->bad = true;
	}
}

struct pol_linemap *pol_linemap_build(const char *text, size_t len)
{
	struct pol_linemap *m = wd_calloc(1, sizeof(*m));
	struct scan sc = {.s = text, .len = len, .line = 1, .m = m};
	scan_value(&sc, "", 0);
	m->bad = sc.bad;
	m->bad_off = sc.i;
	return m;
}

void pol_linemap_free(struct pol_linemap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->e[i].path);
	free(m->e);
	free(m);
}

int pol_linemap_line(const struct pol_linemap *m, const char *path, int nth)
{
	for (size_t i = 0; m && i < m->n; i++)
		if (strcmp(m->e[i].path, path) == 0 && nth-- == 0)
			return m->e[i].line;
	return 0;
}

bool pol_linemap_error(const struct pol_linemap *m, size_t *off)
{
	if (m && m->bad)
		*off = m->bad_off;
	return m && m->bad;
}

int pol_line_of_offset(const char *text, size_t len, size_t off)
{
	int line = 1;
	for (size_t i = 0; i < off && i < len; i++)
		if (text[i] == '\n')
			line++;
	return line;
}
