/*
 * config_parse.c: the config parser's errors (with file:line from the JSON
 * line map) and its typed getters: what every section of config.c uses to
 * read a value and say, in a sentence, what is wrong with it.
 *
 * See docs/design.md, section "Configuration".
 */
#include "config_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_ERRORS 200

static int line_of(struct parser *p, const char *path, int nth)
{
	int line = pol_linemap_line(p->lm, path, nth);
	/* Fall back to the nearest ancestor the scanner mapped. */
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	while (!line && buf[0]) {
		char *cut = strrchr(buf, '.');
		char *br = strrchr(buf, '[');
		if (br > cut)
			cut = br;
		if (!cut)
			break;
		*cut = '\0';
		line = pol_linemap_line(p->lm, buf, 0);
	}
	return line;
}

void pol_cfg_error(struct parser *p, const char *path, int nth, const char *fmt, ...)
{
	if (p->errs->count >= MAX_ERRORS) {
		p->dropped++;
		return;
	}
	p->errs->items = wd_realloc(p->errs->items, (p->errs->count + 1) * sizeof(*p->errs->items));
	struct pol_config_error *e = &p->errs->items[p->errs->count++];
	memset(e, 0, sizeof(*e));
	e->line = path[0] ? line_of(p, path, nth) : 1;
	snprintf(e->key, sizeof(e->key), "%s", path[0] ? path : "(top level)");
	struct wd_sb sb = {0};
	if (e->line)
		wd_sb_printf(&sb, "%.60s:%d: %.100s: ", p->file, e->line, e->key);
	else
		wd_sb_printf(&sb, "%.60s: %.100s: ", p->file, e->key);
	char *what = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&what, fmt, ap) < 0)
		what = NULL;
	va_end(ap);
	wd_sb_puts(&sb, what ? what : "a problem");
	free(what);
	snprintf(e->message, sizeof(e->message), "%s", sb.buf);
	wd_sb_free(&sb);
}

const char *pol_cfg_type_name(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsArray(v))
		return "an array";
	return "an object";
}

char *pol_cfg_child_path(const char *path, const char *key)
{
	return path[0] ? wd_asprintf("%s.%s", path, key) : wd_strdup(key);
}

/* Checks an object's keys against |allowed| (a space-separated list) and
 * reports unknown and duplicate keys. Returns false when |v| is not an
 * object. */
bool pol_cfg_check_object(struct parser *p, const cJSON *v, const char *path, const char *allowed,
			  const char *what)
{
	if (!cJSON_IsObject(v)) {
		pol_cfg_error(p, path, 0, "%s must be an object, not %s", what,
			      pol_cfg_type_name(v));
		return false;
	}
	for (const cJSON *k = v->child; k; k = k->next) {
		int nth = 0;
		for (const cJSON *o = v->child; o != k; o = o->next)
			nth += strcmp(o->string, k->string) == 0;
		wd_autofree char *kp = pol_cfg_child_path(path, k->string);
		if (nth) {
			pol_cfg_error(p, kp, nth, "the key appears more than once; keep one");
			continue;
		}
		char pad[300];
		snprintf(pad, sizeof(pad), " %s ", allowed);
		char want[140];
		snprintf(want, sizeof(want), " %.120s ", k->string);
		if (!strstr(pad, want) || !k->string[0] || strchr(k->string, ' '))
			pol_cfg_error(p, kp, 0, "unknown key \"%.60s\"; the keys here are: %s",
				      k->string, allowed);
	}
	return true;
}

/* The first occurrence of |key| (duplicates are reported by check_object). */
const cJSON *pol_cfg_get(const cJSON *obj, const char *key)
{
	for (const cJSON *k = obj->child; k; k = k->next)
		if (strcmp(k->string, key) == 0)
			return k;
	return NULL;
}

/* A non-empty string, or NULL with an error. */
const char *pol_cfg_string(struct parser *p, const cJSON *obj, const char *path, const char *key,
			   bool required)
{
	const cJSON *v = pol_cfg_get(obj, key);
	wd_autofree char *kp = pol_cfg_child_path(path, key);
	if (!v) {
		if (required)
			pol_cfg_error(p, path, 0, "\"%s\" is missing; add it", key);
		return NULL;
	}
	if (!cJSON_IsString(v)) {
		pol_cfg_error(p, kp, 0, "must be a string, not %s", pol_cfg_type_name(v));
		return NULL;
	}
	if (!v->valuestring[0]) {
		pol_cfg_error(p, kp, 0, "is empty; give a value or remove the key");
		return NULL;
	}
	return v->valuestring;
}

bool pol_cfg_int(struct parser *p, const cJSON *obj, const char *path, const char *key, int lo,
		 int hi, int *out)
{
	const cJSON *v = pol_cfg_get(obj, key);
	if (!v)
		return false;
	wd_autofree char *kp = pol_cfg_child_path(path, key);
	double d = cJSON_IsNumber(v) ? v->valuedouble : 0.5;
	/* Whole numbers only; the bounds below keep the cast in range. */
	bool whole = d > -1e15 && d < 1e15 && d == (double)(long long)d;
	if (!cJSON_IsNumber(v) || !whole) {
		pol_cfg_error(p, kp, 0, "must be a whole number, not %s", pol_cfg_type_name(v));
		return false;
	}
	if (d < lo || d > hi) {
		pol_cfg_error(p, kp, 0, "%.0f is out of bounds; use a value from %d to %d", d, lo,
			      hi);
		return false;
	}
	*out = (int)d;
	return true;
}

/* An array of non-empty strings: NULL-terminated copy, or NULL on error. */
char **pol_cfg_argv(struct parser *p, const cJSON *v, const char *kp, size_t *n)
{
	if (!cJSON_IsArray(v) || !v->child) {
		pol_cfg_error(p, kp, 0,
			      "must be a non-empty array of strings such as [\"git\", \"push\"]");
		return NULL;
	}
	size_t cnt = (size_t)cJSON_GetArraySize(v), i = 0;
	char **out = wd_calloc(cnt + 1, sizeof(char *));
	bool ok = true;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		if (!cJSON_IsString(e) || !e->valuestring[0]) {
			wd_autofree char *ep = wd_asprintf("%s[%zu]", kp, i);
			pol_cfg_error(p, ep, 0, "must be a non-empty string");
			ok = false;
			continue;
		}
		out[i] = wd_strdup(e->valuestring);
	}
	if (!ok) {
		for (size_t k = 0; k < cnt; k++)
			free(out[k]);
		free(out);
		return NULL;
	}
	*n = cnt;
	return out;
}

char **pol_cfg_list(struct parser *p, const cJSON *v, const char *kp, const char *what,
		    pol_cfg_take_fn take, const void *arg, size_t *n)
{
	*n = 0;
	if (!cJSON_IsArray(v)) {
		pol_cfg_error(p, kp, 0, "must be an array of %s, not %s", what,
			      pol_cfg_type_name(v));
		return NULL;
	}
	char **out = wd_calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(char *));
	size_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		wd_autofree char *ep = wd_asprintf("%s[%zu]", kp, i);
		if (!cJSON_IsString(e)) {
			pol_cfg_error(p, ep, 0, "must be a string, not %s", pol_cfg_type_name(e));
			continue;
		}
		char *t = take(p, e->valuestring, ep, arg);
		if (t)
			out[(*n)++] = t;
	}
	return out;
}

struct strings_rule {
	bool drop_blank, glob, absolute;
};

/* One string of pol_cfg_strings(): trimmed and checked by |arg|'s rule. */
static char *take_string(struct parser *p, const char *s, const char *ep, const void *arg)
{
	const struct strings_rule *rule = arg;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	size_t l = strlen(s);
	while (l && strchr(" \t\r\n", s[l - 1]))
		l--;
	if (l == 0) {
		if (!rule->drop_blank)
			pol_cfg_error(p, ep, 0, "the pattern is empty; remove it or write one");
		return NULL;
	}
	char *t = wd_strndup(s, l);
	wd_autofree char *problem = NULL;
	if (rule->glob && pol_glob_check(t, &problem) < 0) {
		pol_cfg_error(p, ep, 0, "bad glob \"%.60s\": %s", t, problem);
		free(t);
		return NULL;
	}
	if (rule->absolute) {
		wd_autofree char *lex = pol_path_lexical(t);
		if (t[0] != '/' || strstr(t, "/../") || wd_str_has_suffix(t, "/..")) {
			pol_cfg_error(p, ep, 0, "\"%.60s\" must be an absolute path without \"..\"",
				      t);
			free(t);
			return NULL;
		}
		if (strcmp(lex, "/") == 0) {
			pol_cfg_error(p, ep, 0,
				      "\"/\" would let the agent write everywhere; name a "
				      "directory");
			free(t);
			return NULL;
		}
	}
	return t;
}

/* An array of strings: trimmed; blanks dropped (|drop_blank|) or errors;
 * globs checked (|glob|); absolute required (|absolute|). */
char **pol_cfg_strings(struct parser *p, const cJSON *v, const char *kp, size_t *n, bool drop_blank,
		       bool glob, bool absolute)
{
	struct strings_rule rule = {drop_blank, glob, absolute};
	return pol_cfg_list(p, v, kp, "strings", take_string, &rule, n);
}
