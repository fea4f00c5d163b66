/*
 * harness_scan.c: a cursor over a harness's script, for the exact shapes
 * of harness_claude.c and harness_codex.c: literals, spans, single-quoted
 * words as bash reads them, and argv comparisons by program name.
 *
 * See docs/design.md, section "Agent harnesses".
 */
#include "policy_int.h"

#include <ctype.h>
#include <string.h>

/* Consumes the literal |lit| at *p. */
bool pol_hn_eat(const char **p, const char *lit)
{
	size_t n = strlen(lit);
	if (strncmp(*p, lit, n) != 0)
		return false;
	*p += n;
	return true;
}

/* Consumes 1..|max| characters of |set| (or of [A-Za-z0-9] plus |set| when
 * |alnum|). */
bool pol_hn_eat_span(const char **p, const char *set, bool alnum, size_t max)
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
bool pol_hn_home_is_plain(const char *home)
{
	if (!home || home[0] != '/')
		return false;
	for (const char *c = home; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("/._+@-", *c))
			return false;
	return true;
}

/* The single-quoted word at *p with '\'' read as a quote, as bash reads it:
 * returns the unquoted text (caller frees) or NULL when *p is not exactly
 * such a word followed by |term| (a space, or '\0' for the end). */
char *pol_hn_eat_quoted_to(const char **p, char term)
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
	if (*q != term) {
		wd_sb_free(&sb);
		return NULL;
	}
	*p = q;
	char *s = wd_sb_steal(&sb);
	if (!s)
		s = wd_strdup("");
	return s;
}

bool pol_hn_is_named(const char *arg0, const char *name)
{
	return strcmp(pol_cls_prog_name(arg0), name) == 0;
}

bool pol_hn_argv_is(char *const *argv, size_t argc, const char *name, const char *const *rest,
		    size_t nrest)
{
	if (argc != nrest + 1 || !pol_hn_is_named(argv[0], name))
		return false;
	for (size_t i = 0; i < nrest; i++)
		if (strcmp(argv[i + 1], rest[i]) != 0)
			return false;
	return true;
}
