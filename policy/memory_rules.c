/*
 * memory_rules.c: confirm rules proposed from people's past decisions, and
 * the explicit step that turns one into an accepted_rules entry.
 *
 * A proposal is data: proposing changes nothing. One rule per tool and
 * argument shape, bounded by what people approved as-is: "==" for a value
 * that never changed, "in" for up to ten seen values, "lo <= x <= hi" for
 * numbers. A nested value or a text field with more than ten values gets no
 * rule; denials and edited approvals inside the bounds are counter-evidence.
 * Pure: the time of acceptance is a parameter.
 *
 * See docs/design.md, section "Approval memory".
 */
#include "memory_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One usable record: a person's decision, parsed. */
struct prec {
	char *tool;
	char *shape; /* sorted non-secret top-level field names, "\x1f"-joined */
	cJSON *args;
	bool approved, edited;
	const char *by;
	int64_t ts_us;
};

struct pol_proposal {
	char id[16];
	char *tool;
	cJSON *conds; /* field -> {"eq": v} | {"in": [...]} | {"min": lo, "max": hi} */
	struct pol_mem_cond *mc;
	size_t nmc;
	size_t approved;
	char **deciders; /* NULL-terminated */
	size_t ndeciders;
	size_t denied_inside, denied_outside;
	int64_t first_us, last_us;
	int review_days;
};

struct pol_proposals {
	struct pol_proposal **items;
	size_t n;
};

/* ---- grouping ------------------------------------------------------------------- */

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *shape_of(const cJSON *args)
{
	size_t n = 0;
	for (const cJSON *k = args->child; k; k = k->next)
		n++;
	const char **names = wd_calloc(n + 1, sizeof(char *));
	size_t m = 0;
	for (const cJSON *k = args->child; k; k = k->next)
		if (k->string && !pol_mem_field_is_secret(k->string))
			names[m++] = k->string;
	qsort(names, m, sizeof(char *), str_cmp);
	struct wd_sb sb = {0};
	wd_sb_puts(&sb, "");
	for (size_t i = 0; i < m; i++) {
		if (i)
			wd_sb_putc(&sb, '\x1f');
		wd_sb_puts(&sb, names[i]);
	}
	free(names);
	return wd_sb_steal(&sb);
}

static int prec_cmp(const void *x, const void *y)
{
	const struct prec *a = x, *b = y;
	int c = strcmp(a->tool, b->tool);
	if (c)
		return c;
	c = strcmp(a->shape, b->shape);
	if (c)
		return c;
	return a->ts_us < b->ts_us ? -1 : a->ts_us > b->ts_us;
}

/* ---- conditions from approvals -------------------------------------------------- */

static int value_cmp(const void *x, const void *y)
{
	const cJSON *a = *(const cJSON *const *)x, *b = *(const cJSON *const *)y;
	if (cJSON_IsNumber(a) != cJSON_IsNumber(b))
		return cJSON_IsNumber(a) ? -1 : 1;
	if (cJSON_IsNumber(a))
		return a->valuedouble < b->valuedouble ? -1 : a->valuedouble > b->valuedouble;
	return strcmp(a->valuestring, b->valuestring);
}

/* The condition of |field| over the approvals |g[0..n)|, or NULL when the
 * field gets none (a nested value, a bool, more than ten text values). */
static cJSON *field_condition(const struct prec *g, size_t n, const char *field)
{
	const cJSON *seen[MEM_MAX_IN + 1];
	size_t nseen = 0;
	bool all_num = true, too_many = false;
	double lo = 0, hi = 0;
	for (size_t i = 0; i < n; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(g[i].args, field);
		if (!v || !(cJSON_IsString(v) || cJSON_IsNumber(v)))
			return NULL;
		if (cJSON_IsNumber(v)) {
			if (i == 0 || v->valuedouble < lo)
				lo = v->valuedouble;
			if (i == 0 || v->valuedouble > hi)
				hi = v->valuedouble;
		} else {
			all_num = false;
		}
		bool dup = false;
		for (size_t k = 0; k < nseen && !dup; k++)
			dup = cJSON_IsNumber(v) == cJSON_IsNumber(seen[k]) &&
			      (cJSON_IsNumber(v)
				       ? v->valuedouble == seen[k]->valuedouble
				       : strcmp(v->valuestring, seen[k]->valuestring) == 0);
		if (dup)
			continue;
		if (nseen == MEM_MAX_IN)
			too_many = true;
		else
			seen[nseen++] = v;
	}
	cJSON *c = cJSON_CreateObject();
	if (all_num && (nseen > 1 || too_many)) {
		cJSON_AddNumberToObject(c, "min", lo);
		cJSON_AddNumberToObject(c, "max", hi);
	} else if (too_many) {
		cJSON_Delete(c);
		return NULL;
	} else if (nseen == 1) {
		cJSON_AddItemToObject(c, "eq", cJSON_Duplicate(seen[0], false));
	} else {
		qsort(seen, nseen, sizeof(seen[0]), value_cmp);
		cJSON *in = cJSON_AddArrayToObject(c, "in");
		for (size_t k = 0; k < nseen; k++)
			cJSON_AddItemToArray(in, cJSON_Duplicate(seen[k], false));
	}
	return c;
}

/* The pol_mem_cond form of a generated condition (for counter-evidence). */
static void cond_from_json(const char *field, const cJSON *c, struct pol_mem_cond *out)
{
	memset(out, 0, sizeof(*out));
	out->field = wd_strdup(field);
	const cJSON *eq = cJSON_GetObjectItemCaseSensitive(c, "eq");
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(c, "in");
	if (!eq && !in) {
		out->op = MEM_RANGE;
		out->lo = cJSON_GetObjectItemCaseSensitive(c, "min")->valuedouble;
		out->hi = cJSON_GetObjectItemCaseSensitive(c, "max")->valuedouble;
		return;
	}
	out->op = eq ? MEM_EQ : MEM_IN;
	size_t n = eq ? 1 : (size_t)cJSON_GetArraySize(in);
	out->v = wd_calloc(n, sizeof(*out->v));
	const cJSON *v = eq ? eq : in->child;
	for (size_t i = 0; i < n && v; i++, v = v->next) {
		out->v[i].num = cJSON_IsNumber(v);
		out->v[i].d = v->valuedouble;
		out->v[i].s = cJSON_IsString(v) ? wd_strdup(v->valuestring) : NULL;
	}
	out->nv = n;
}

/* ---- one proposal --------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	h ^= 0x1f;
	return h * 1099511628211ULL;
}

static void proposal_free(struct pol_proposal *p)
{
	if (!p)
		return;
	free(p->tool);
	cJSON_Delete(p->conds);
	for (size_t i = 0; i < p->nmc; i++)
		pol_mem_cond_clear(&p->mc[i]);
	free(p->mc);
	wd_strv_free(p->deciders);
	free(p);
}

static void add_name(struct pol_proposal *p, const char *by)
{
	for (size_t i = 0; i < p->ndeciders; i++)
		if (strcmp(p->deciders[i], by) == 0)
			return;
	p->deciders = wd_realloc(p->deciders, (p->ndeciders + 2) * sizeof(char *));
	p->deciders[p->ndeciders++] = wd_strdup(by);
	p->deciders[p->ndeciders] = NULL;
}

/* A nested value anywhere in the group's non-secret fields: no rule. */
static bool group_nested(const struct prec *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (const cJSON *k = g[i].args->child; k; k = k->next)
			if (!pol_mem_field_is_secret(k->string) &&
			    (cJSON_IsObject(k) || cJSON_IsArray(k)))
				return true;
	return false;
}

/* The proposal of one group (same tool and shape), or NULL. */
static struct pol_proposal *propose_group(const struct prec *g, size_t n,
					  const struct pol_propose_opts *o)
{
	if (group_nested(g, n))
		return NULL;
	/* The approvals decided as-is, contiguous for field_condition(). */
	struct prec *ok = wd_calloc(n + 1, sizeof(*ok));
	size_t nok = 0;
	struct pol_proposal *p = wd_calloc(1, sizeof(*p));
	for (size_t i = 0; i < n; i++) {
		if (!g[i].approved || g[i].edited)
			continue;
		ok[nok++] = g[i];
		add_name(p, g[i].by ? g[i].by : "someone");
		if (!p->first_us || g[i].ts_us < p->first_us)
			p->first_us = g[i].ts_us;
		if (g[i].ts_us > p->last_us)
			p->last_us = g[i].ts_us;
	}
	p->approved = nok;
	p->review_days = o->review_days;
	if (nok < o->min_count || nok == 0 || p->ndeciders < o->min_deciders)
		goto none;
	p->tool = wd_strdup(g[0].tool);
	p->conds = cJSON_CreateObject();
	/* Fields in the order of the first approval (program, arg1, ..., cwd). */
	for (const cJSON *k = ok[0].args->child; k; k = k->next) {
		if (pol_mem_field_is_secret(k->string))
			continue;
		cJSON *c = field_condition(ok, nok, k->string);
		if (!c)
			goto none;
		p->mc = wd_realloc(p->mc, (p->nmc + 1) * sizeof(*p->mc));
		cond_from_json(k->string, c, &p->mc[p->nmc++]);
		cJSON_AddItemToObject(p->conds, k->string, c);
	}
	for (size_t i = 0; i < n; i++) {
		if (g[i].approved && !g[i].edited)
			continue;
		if (pol_mem_conds_cover(p->mc, p->nmc, g[i].args))
			p->denied_inside++;
		else
			p->denied_outside++;
	}
	if (p->denied_inside > o->max_denied)
		goto none;
	char *conds = cJSON_PrintUnformatted(p->conds);
	uint64_t h = fnv1a(fnv1a(fnv1a(14695981039346656037ULL, p->tool), g[0].shape), conds);
	cJSON_free(conds);
	snprintf(p->id, sizeof(p->id), "r-%012llx", (unsigned long long)(h >> 16));
	free(ok);
	return p;
none:
	free(ok);
	proposal_free(p);
	return NULL;
}

/* ---- the list ------------------------------------------------------------------- */

static bool parse_record(const struct pol_mem_record *r, struct prec *out)
{
	if (!r->source || strcmp(r->source, "user") != 0 || !r->request)
		return false; /* a timeout or an unattended tier is not a decision */
	memset(out, 0, sizeof(*out));
	out->args = pol_mem_args_from_request(r->request, &out->tool);
	if (!out->args)
		return false;
	out->shape = shape_of(out->args);
	out->approved = r->approved;
	out->edited = r->edited;
	out->by = r->decided_by;
	out->ts_us = r->ts_us;
	return true;
}

struct pol_proposals *pol_propose(const struct pol_mem_record *recs, size_t n,
				  const struct pol_propose_opts *o)
{
	static const struct pol_propose_opts defaults = POL_PROPOSE_DEFAULTS;
	if (!o)
		o = &defaults;
	struct pol_proposals *out = wd_calloc(1, sizeof(*out));
	struct prec *pr = wd_calloc(n + 1, sizeof(*pr));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (parse_record(&recs[i], &pr[m]))
			m++;
	if (m)
		qsort(pr, m, sizeof(*pr), prec_cmp);
	for (size_t i = 0; i < m;) {
		size_t j = i + 1;
		while (j < m && strcmp(pr[j].tool, pr[i].tool) == 0 &&
		       strcmp(pr[j].shape, pr[i].shape) == 0)
			j++;
		struct pol_proposal *p = propose_group(pr + i, j - i, o);
		if (p) {
			out->items = wd_realloc(out->items, (out->n + 1) * sizeof(*out->items));
			out->items[out->n++] = p;
		}
		i = j;
	}
	for (size_t i = 0; i < m; i++) {
		free(pr[i].tool);
		free(pr[i].shape);
		cJSON_Delete(pr[i].args);
	}
	free(pr);
	return out;
}

void pol_proposals_free(struct pol_proposals *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		proposal_free(p->items[i]);
	free(p->items);
	free(p);
}

size_t pol_proposals_count(const struct pol_proposals *p)
{
	return p ? p->n : 0;
}

const struct pol_proposal *pol_proposals_get(const struct pol_proposals *p, size_t i)
{
	return p && i < p->n ? p->items[i] : NULL;
}

const struct pol_proposal *pol_proposals_find(const struct pol_proposals *p, const char *id)
{
	for (size_t i = 0; p && id && i < p->n; i++)
		if (strcmp(p->items[i]->id, id) == 0)
			return p->items[i];
	return NULL;
}

const char *pol_proposal_id(const struct pol_proposal *p)
{
	return p->id;
}

const char *pol_proposal_tool(const struct pol_proposal *p)
{
	return p->tool;
}

void pol_proposal_evidence(const struct pol_proposal *p, size_t *approved, size_t *deciders,
			   size_t *denied_inside, size_t *denied_outside)
{
	if (approved)
		*approved = p->approved;
	if (deciders)
		*deciders = p->ndeciders;
	if (denied_inside)
		*denied_inside = p->denied_inside;
	if (denied_outside)
		*denied_outside = p->denied_outside;
}

/* ---- showing -------------------------------------------------------------------- */

static void put_value(struct wd_sb *sb, const cJSON *v)
{
	char *t = cJSON_PrintUnformatted(v);
	wd_sb_puts(sb, t ? t : "null");
	cJSON_free(t);
}

static void put_condition(struct wd_sb *sb, const cJSON *c)
{
	const cJSON *eq = cJSON_GetObjectItemCaseSensitive(c, "eq");
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(c, "in");
	if (eq) {
		wd_sb_printf(sb, "%s == ", c->string);
		put_value(sb, eq);
	} else if (in) {
		wd_sb_printf(sb, "%s in [", c->string);
		for (const cJSON *v = in->child; v; v = v->next) {
			put_value(sb, v);
			if (v->next)
				wd_sb_puts(sb, ", ");
		}
		wd_sb_putc(sb, ']');
	} else {
		put_value(sb, cJSON_GetObjectItemCaseSensitive(c, "min"));
		wd_sb_printf(sb, " <= %s <= ", c->string);
		put_value(sb, cJSON_GetObjectItemCaseSensitive(c, "max"));
	}
}

char *pol_proposal_describe(const struct pol_proposal *p)
{
	struct wd_sb sb = {0};
	wd_sb_printf(&sb, "%s: ", p->tool);
	for (const cJSON *c = p->conds->child; c; c = c->next) {
		put_condition(&sb, c);
		if (c->next)
			wd_sb_puts(&sb, ", ");
	}
	wd_sb_printf(&sb, " (%zu approved as-is by ", p->approved);
	for (size_t i = 0; i < p->ndeciders; i++)
		wd_sb_printf(&sb, "%s%s", i ? ", " : "", p->deciders[i]);
	wd_sb_printf(&sb, "; %zu denied inside, %zu outside)", p->denied_inside, p->denied_outside);
	return wd_sb_steal(&sb);
}

char *pol_proposal_conditions(const struct pol_proposal *p, const char *indent)
{
	struct wd_sb sb = {0};
	wd_sb_puts(&sb, "");
	for (const cJSON *c = p->conds->child; c; c = c->next) {
		wd_sb_puts(&sb, indent ? indent : "");
		put_condition(&sb, c);
		wd_sb_putc(&sb, '\n');
	}
	return wd_sb_steal(&sb);
}

char *pol_proposal_json(const struct pol_proposal *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", p->id);
	cJSON_AddStringToObject(o, "tool", p->tool);
	cJSON *fields = cJSON_AddArrayToObject(o, "fields");
	for (const cJSON *c = p->conds->child; c; c = c->next)
		cJSON_AddItemToArray(fields, cJSON_CreateString(c->string));
	cJSON_AddItemToObject(o, "conditions", cJSON_Duplicate(p->conds, true));
	cJSON *ev = cJSON_AddObjectToObject(o, "evidence");
	cJSON_AddNumberToObject(ev, "approved", (double)p->approved);
	cJSON *who = cJSON_AddArrayToObject(ev, "deciders");
	for (size_t i = 0; i < p->ndeciders; i++)
		cJSON_AddItemToArray(who, cJSON_CreateString(p->deciders[i]));
	cJSON_AddNumberToObject(ev, "denied_inside", (double)p->denied_inside);
	cJSON_AddNumberToObject(ev, "denied_outside", (double)p->denied_outside);
	char t[40];
	wd_format_time(p->first_us, t, sizeof(t));
	cJSON_AddStringToObject(ev, "first", t);
	wd_format_time(p->last_us, t, sizeof(t));
	cJSON_AddStringToObject(ev, "last", t);
	cJSON_AddNumberToObject(o, "review_days", p->review_days);
	char *d = pol_proposal_describe(p);
	cJSON_AddStringToObject(o, "describe", d);
	free(d);
	char *s = cJSON_PrintUnformatted(o);
	char *out = wd_strdup(s);
	cJSON_free(s);
	cJSON_Delete(o);
	return out;
}

/* ---- accepting ------------------------------------------------------------------ */

/* Seconds only: the config's time format reads them back exactly. */
static void iso_seconds(int64_t us, char *buf, size_t n)
{
	char full[40];
	wd_format_time(us - us % 1000000, full, sizeof(full));
	char *dot = strchr(full, '.');
	if (dot)
		snprintf(dot, sizeof(full) - (size_t)(dot - full), "Z");
	snprintf(buf, n, "%s", full);
}

char *pol_proposal_accept(const struct pol_proposal *p, const char *by, int64_t at_us)
{
	if (!p || !by || !by[0]) {
		errno = EINVAL;
		return NULL;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", p->id);
	cJSON_AddStringToObject(o, "tool", p->tool);
	cJSON_AddItemToObject(o, "conditions", cJSON_Duplicate(p->conds, true));
	char at[40];
	iso_seconds(at_us, at, sizeof(at));
	cJSON_AddStringToObject(o, "accepted_at", at);
	cJSON_AddStringToObject(o, "accepted_by", by);
	cJSON_AddNumberToObject(o, "review_days", p->review_days);
	struct wd_sb sb = {0};
	pol_json_pretty(&sb, o, 0);
	wd_sb_putc(&sb, '\n');
	cJSON_Delete(o);
	return wd_sb_steal(&sb);
}

static bool only_space(const char *t, size_t len)
{
	for (size_t i = 0; t && i < len; i++)
		if (!strchr(" \t\r\n", t[i]))
			return false;
	return true;
}

int pol_config_text_accept(const char *text, size_t len, const char *filename,
			   const char *rule_json, char **out, struct pol_config_errors *errs)
{
	*out = NULL;
	errs->items = NULL;
	errs->count = 0;
	const char *file = filename ? filename : "permissions.json";
	/* A file that does not parse is reported as it stands, untouched. */
	struct pol_config *check = NULL;
	if (!only_space(text, len)) {
		if (pol_config_parse(text, len, file, &check, errs) < 0)
			return -EINVAL;
		pol_config_free(check);
	}
	cJSON *rule = rule_json ? cJSON_Parse(rule_json) : NULL;
	cJSON *root =
		only_space(text, len) ? cJSON_CreateObject() : cJSON_ParseWithLength(text, len);
	if (!cJSON_IsObject(rule) || !root) {
		cJSON_Delete(rule);
		cJSON_Delete(root);
		return -EINVAL;
	}
	cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "accepted_rules");
	if (!list)
		list = cJSON_AddArrayToObject(root, "accepted_rules");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(rule, "id");
	for (cJSON *e = list->child, *next; e && cJSON_IsString(id); e = next) {
		next = e->next;
		const cJSON *eid = cJSON_GetObjectItemCaseSensitive(e, "id");
		if (cJSON_IsString(eid) && strcmp(eid->valuestring, id->valuestring) == 0)
			cJSON_Delete(cJSON_DetachItemViaPointer(list, e));
	}
	cJSON_AddItemToArray(list, rule);
	struct wd_sb sb = {0};
	pol_json_pretty(&sb, root, 0);
	wd_sb_putc(&sb, '\n');
	cJSON_Delete(root);
	char *res = wd_sb_steal(&sb);
	if (pol_config_parse(res, strlen(res), file, &check, errs) < 0) {
		free(res);
		return -EINVAL;
	}
	pol_config_free(check);
	*out = res;
	return 0;
}
