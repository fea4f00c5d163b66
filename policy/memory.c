/*
 * memory.c: approval memory's request arguments, similarity and the context
 * shown to a person, and the matching of accepted confirm rules.
 *
 * Memory is advice: nothing here allows anything. The context it builds
 * holds counts, deciders, times, scores and the names of equal fields, never
 * an argument value, and never names a secret-named field. Proposals and
 * accepting are in memory_rules.c. Pure: no I/O, no clock (time is a
 * parameter).
 *
 * See docs/design.md, section "Approval memory".
 */
#include "memory_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MIN_SIMILARITY 0.5
/* How many decisions the JSON context lists (counts cover all). */
#define CONTEXT_LIST_MAX 20
/* How many deciders the summary line names before "+N more". */
#define SUMMARY_NAMES_MAX 3

/* ---- names ---------------------------------------------------------------------- */

bool pol_mem_field_is_secret(const char *name)
{
	if (!name)
		return false;
	size_t n = strlen(name);
	if (pol_name_is_secret(name, n))
		return true;
	if (pol_icontains(name, "bearer") || pol_icontains(name, "credential") ||
	    pol_icontains(name, "passw"))
		return true;
	/* "auth" as a word ("auth", "auth_header", "basic-auth"), not "author". */
	char low[96];
	if (n >= sizeof(low))
		return false;
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
	return strcmp(low, "auth") == 0 || wd_str_has_prefix(low, "auth_") ||
	       wd_str_has_prefix(low, "auth-") || wd_str_has_suffix(low, "_auth") ||
	       wd_str_has_suffix(low, "-auth");
}

/* ---- arguments ------------------------------------------------------------------ */

/* A plain decimal number: -?(0|[1-9][0-9]*)(\.[0-9]+)?, at most 15 digits,
 * so that the double holds it exactly. "007", "1e5", "+3" and "0x10" stay
 * text: they do not read back as the same string. */
static bool plain_number(const char *s, double *out)
{
	const char *p = s;
	size_t digits = 0;
	if (*p == '-')
		p++;
	if (*p == '0' && p[1] >= '0' && p[1] <= '9')
		return false;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9') {
		p++;
		digits++;
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9') {
			p++;
			digits++;
		}
	}
	if (*p || digits > 15)
		return false;
	*out = strtod(s, NULL);
	return true;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

cJSON *pol_mem_exec_args(const cJSON *root, char **tool)
{
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(root, "path");
	const cJSON *argv = cJSON_GetObjectItemCaseSensitive(root, "argv");
	if (!cJSON_IsString(path) || !cJSON_IsArray(argv))
		return NULL;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "program", path->valuestring);
	size_t i = 0;
	for (const cJSON *e = argv->child; e; e = e->next, i++) {
		if (!cJSON_IsString(e)) {
			cJSON_Delete(a);
			return NULL;
		}
		const char *v = e->valuestring;
		if (i == 0) {
			/* argv[0] picks the applet of a multi-call binary. */
			if (strcmp(pol_cls_prog_name(v), base_name(path->valuestring)) != 0)
				cJSON_AddStringToObject(a, "arg0", v);
			continue;
		}
		char name[32];
		snprintf(name, sizeof(name), "arg%zu", i);
		double d;
		if (plain_number(v, &d))
			cJSON_AddNumberToObject(a, name, d);
		else
			cJSON_AddStringToObject(a, name, v);
	}
	const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(root, "cwd");
	if (cJSON_IsString(cwd))
		cJSON_AddStringToObject(a, "cwd", cwd->valuestring);
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(root, "env");
	if (cJSON_IsObject(env) && env->child)
		cJSON_AddItemToObject(a, "env", cJSON_Duplicate(env, true));
	*tool = wd_asprintf("exec:%s", path->valuestring);
	return a;
}

cJSON *pol_mem_open_args(const cJSON *root, char **tool)
{
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(root, "path");
	const cJSON *path2 = cJSON_GetObjectItemCaseSensitive(root, "path2");
	const cJSON *acc = cJSON_GetObjectItemCaseSensitive(root, "access");
	if (!cJSON_IsString(path))
		return NULL;
	struct wd_sb sb = {0};
	if (cJSON_IsString(acc))
		wd_sb_puts(&sb, acc->valuestring);
	for (const cJSON *e = cJSON_IsArray(acc) ? acc->child : NULL; e; e = e->next) {
		if (!cJSON_IsString(e))
			continue;
		if (sb.len)
			wd_sb_putc(&sb, '+');
		wd_sb_puts(&sb, e->valuestring);
	}
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "path", path->valuestring);
	if (cJSON_IsString(path2))
		cJSON_AddStringToObject(a, "path2", path2->valuestring);
	cJSON_AddStringToObject(a, "access", sb.buf ? sb.buf : "");
	wd_sb_free(&sb);
	*tool = wd_strdup("open");
	return a;
}

cJSON *pol_mem_args_from_request(const char *request_json, char **tool)
{
	*tool = NULL;
	if (!request_json)
		return NULL;
	cJSON *root = cJSON_Parse(request_json);
	const cJSON *kind = root ? cJSON_GetObjectItemCaseSensitive(root, "kind") : NULL;
	cJSON *a = NULL;
	enum pol_kind k;
	/* A kind without arguments (a socket's row) has nothing to compare. */
	const struct pol_kind_ops *ops = NULL;
	if (cJSON_IsString(kind) && pol_kind_parse(kind->valuestring, &k) == 0)
		ops = pol_kind_ops(k);
	else if (pol_net_json_is_connect(root))
		ops = pol_kind_ops(POL_CONNECT);
	if (ops && ops->mem_args)
		a = ops->mem_args(root, tool);
	cJSON_Delete(root);
	return a;
}

/* The request's memory arguments (from its redacted JSON, the same text the
 * audit holds, so that a live request and a past record compare alike). */
static cJSON *request_args(const struct pol_request *r, char **tool)
{
	char *json = pol_request_json(r);
	cJSON *a = pol_mem_args_from_request(json, tool);
	free(json);
	return a;
}

static char *print_take(cJSON *v)
{
	char *t = v ? cJSON_PrintUnformatted(v) : NULL;
	cJSON_Delete(v);
	char *out = t ? wd_strdup(t) : NULL;
	cJSON_free(t);
	return out;
}

char *pol_mem_args_json(const struct pol_request *r)
{
	char *tool = NULL;
	char *out = print_take(r ? request_args(r, &tool) : NULL);
	free(tool);
	return out;
}

char *pol_mem_tool(const struct pol_request *r)
{
	char *tool = NULL;
	cJSON_Delete(r ? request_args(r, &tool) : NULL);
	return tool;
}

/* ---- similarity ----------------------------------------------------------------- */

struct sim {
	double sum;
	size_t fields;
	char **equal; /* reported names of equal fields, deduplicated */
	size_t nequal;
};

static void sim_equal_name(struct sim *s, const char *name)
{
	for (size_t i = 0; i < s->nequal; i++)
		if (strcmp(s->equal[i], name) == 0)
			return;
	s->equal = wd_realloc(s->equal, (s->nequal + 1) * sizeof(char *));
	s->equal[s->nequal++] = wd_strdup(name);
}

static bool scalar_equal(const cJSON *a, const cJSON *b)
{
	if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
		return a->valuedouble == b->valuedouble;
	return cJSON_Compare(a, b, true);
}

static const cJSON *item(const cJSON *obj, const char *key)
{
	for (const cJSON *k = obj->child; k; k = k->next)
		if (k->string && strcmp(k->string, key) == 0)
			return k;
	return NULL;
}

/* Compares the fields of objects |a| and |b| at |depth| (1: top level).
 * |top| is the top-level field they belong to (NULL at the top): a match
 * below it is named "top.*", because a nested key can be data. */
static void sim_fields(const cJSON *a, const cJSON *b, int depth, const char *top, struct sim *s)
{
	for (const cJSON *k = a->child; k; k = k->next) {
		if (!k->string || pol_mem_field_is_secret(k->string) || item(a, k->string) != k)
			continue;
		const cJSON *o = item(b, k->string);
		if (!o) {
			s->fields++;
			continue;
		}
		if (cJSON_IsObject(k) && cJSON_IsObject(o) && depth < MEM_MAX_DEPTH &&
		    (k->child || o->child)) {
			sim_fields(k, o, depth + 1, top ? top : k->string, s);
			continue;
		}
		s->fields++;
		if (scalar_equal(k, o)) {
			s->sum += 1.0;
			if (top) {
				char name[160];
				snprintf(name, sizeof(name), "%.120s.*", top);
				sim_equal_name(s, name);
			} else {
				sim_equal_name(s, k->string);
			}
		} else {
			s->sum += 0.5;
		}
	}
	/* Fields only |b| has. */
	for (const cJSON *k = b->child; k; k = k->next)
		if (k->string && !pol_mem_field_is_secret(k->string) && item(b, k->string) == k &&
		    !item(a, k->string))
			s->fields++;
}

static double sim_score(const struct sim *s)
{
	return s->fields ? s->sum / (double)s->fields : 1.0;
}

static void sim_free(struct sim *s)
{
	wd_strv_free(s->equal);
	memset(s, 0, sizeof(*s));
}

static void sim_run(const cJSON *a, const cJSON *b, struct sim *s)
{
	memset(s, 0, sizeof(*s));
	sim_fields(a, b, 1, NULL, s);
	/* NULL-terminate for wd_strv_free(). */
	s->equal = wd_realloc(s->equal, (s->nequal + 1) * sizeof(char *));
	s->equal[s->nequal] = NULL;
}

double pol_mem_similarity(const char *args_a, const char *args_b)
{
	cJSON *a = args_a ? cJSON_Parse(args_a) : NULL;
	cJSON *b = args_b ? cJSON_Parse(args_b) : NULL;
	double score = -1;
	if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
		struct sim s;
		sim_run(a, b, &s);
		score = sim_score(&s);
		sim_free(&s);
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
	return score;
}

/* ---- the context ---------------------------------------------------------------- */

struct mem_hit {
	double score;
	bool approved;
	char *by;
	int64_t ts_us;
	char **equal; /* NULL-terminated */
};

struct pol_mem_context {
	struct mem_hit *hits;
	size_t nhits;
	size_t approved, denied;
	char **deciders; /* distinct, in order of first appearance among hits */
	size_t ndeciders;
	double min_similarity;
};

static int hit_cmp(const void *x, const void *y)
{
	const struct mem_hit *a = x, *b = y;
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if (a->ts_us != b->ts_us)
		return a->ts_us > b->ts_us ? -1 : 1;
	return 0;
}

static void add_decider(struct pol_mem_context *m, const char *by)
{
	for (size_t i = 0; i < m->ndeciders; i++)
		if (strcmp(m->deciders[i], by) == 0)
			return;
	m->deciders = wd_realloc(m->deciders, (m->ndeciders + 2) * sizeof(char *));
	m->deciders[m->ndeciders++] = wd_strdup(by);
	m->deciders[m->ndeciders] = NULL;
}

/* True when |rec| is a person's decision ("user"): a timeout, a tier or
 * anything else is not one. */
static bool by_person(const struct pol_mem_record *rec)
{
	return rec->source && strcmp(rec->source, "user") == 0 && rec->request;
}

struct pol_mem_context *pol_mem_context_new(const char *tool, const char *args_json,
					    const struct pol_mem_record *recs, size_t n,
					    double min_similarity)
{
	cJSON *args = args_json ? cJSON_Parse(args_json) : NULL;
	if (!cJSON_IsObject(args) || !tool) {
		cJSON_Delete(args);
		errno = EINVAL;
		return NULL;
	}
	struct pol_mem_context *m = wd_calloc(1, sizeof(*m));
	m->min_similarity = min_similarity < 0 ? DEFAULT_MIN_SIMILARITY : min_similarity;
	for (size_t i = 0; i < n; i++) {
		if (!by_person(&recs[i]))
			continue;
		char *rtool = NULL;
		cJSON *ra = pol_mem_args_from_request(recs[i].request, &rtool);
		bool same = ra && strcmp(rtool, tool) == 0;
		free(rtool);
		if (!same) {
			cJSON_Delete(ra);
			continue;
		}
		struct sim s;
		sim_run(args, ra, &s);
		cJSON_Delete(ra);
		double score = sim_score(&s);
		if (score < m->min_similarity) {
			sim_free(&s);
			continue;
		}
		m->hits = wd_realloc(m->hits, (m->nhits + 1) * sizeof(*m->hits));
		struct mem_hit *h = &m->hits[m->nhits++];
		h->score = score;
		h->approved = recs[i].approved;
		h->by = wd_strdup(recs[i].decided_by ? recs[i].decided_by : "someone");
		h->ts_us = recs[i].ts_us;
		h->equal = s.equal;
		if (h->approved)
			m->approved++;
		else
			m->denied++;
	}
	cJSON_Delete(args);
	if (m->nhits)
		qsort(m->hits, m->nhits, sizeof(*m->hits), hit_cmp);
	for (size_t i = 0; i < m->nhits; i++)
		add_decider(m, m->hits[i].by);
	return m;
}

void pol_mem_context_free(struct pol_mem_context *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nhits; i++) {
		free(m->hits[i].by);
		wd_strv_free(m->hits[i].equal);
	}
	free(m->hits);
	wd_strv_free(m->deciders);
	free(m);
}

size_t pol_mem_context_count(const struct pol_mem_context *m, size_t *approved, size_t *denied)
{
	if (approved)
		*approved = m ? m->approved : 0;
	if (denied)
		*denied = m ? m->denied : 0;
	return m ? m->nhits : 0;
}

char *pol_mem_context_summary(const struct pol_mem_context *m)
{
	if (!m || m->nhits == 0)
		return wd_strdup("no similar decisions");
	struct wd_sb sb = {0};
	wd_sb_printf(&sb, "%zu similar: %zu approved, %zu denied (by ", m->nhits, m->approved,
		     m->denied);
	for (size_t i = 0; i < m->ndeciders && i < SUMMARY_NAMES_MAX; i++)
		wd_sb_printf(&sb, "%s%.40s", i ? ", " : "", m->deciders[i]);
	if (m->ndeciders > SUMMARY_NAMES_MAX)
		wd_sb_printf(&sb, ", +%zu more", m->ndeciders - SUMMARY_NAMES_MAX);
	wd_sb_putc(&sb, ')');
	return wd_sb_steal(&sb);
}

char *pol_mem_context_json(const struct pol_mem_context *m)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "similar", m ? (double)m->nhits : 0);
	cJSON_AddNumberToObject(o, "approved", m ? (double)m->approved : 0);
	cJSON_AddNumberToObject(o, "denied", m ? (double)m->denied : 0);
	cJSON *who = cJSON_AddArrayToObject(o, "deciders");
	for (size_t i = 0; m && i < m->ndeciders; i++)
		cJSON_AddItemToArray(who, cJSON_CreateString(m->deciders[i]));
	cJSON_AddNumberToObject(o, "min_similarity",
				m ? m->min_similarity : DEFAULT_MIN_SIMILARITY);
	cJSON *list = cJSON_AddArrayToObject(o, "decisions");
	for (size_t i = 0; m && i < m->nhits && i < CONTEXT_LIST_MAX; i++) {
		const struct mem_hit *h = &m->hits[i];
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "decision", h->approved ? "allow" : "deny");
		cJSON_AddStringToObject(d, "decided_by", h->by);
		char at[40];
		wd_format_time(h->ts_us, at, sizeof(at));
		cJSON_AddStringToObject(d, "at", at);
		cJSON_AddNumberToObject(d, "score", round(h->score * 1000) / 1000);
		cJSON *eq = cJSON_AddArrayToObject(d, "equal_fields");
		for (size_t k = 0; h->equal && h->equal[k]; k++)
			cJSON_AddItemToArray(eq, cJSON_CreateString(h->equal[k]));
		cJSON_AddItemToArray(list, d);
	}
	return print_take(o);
}

int pol_mem_advice(const struct pol_request *r, const struct pol_mem_record *recs, size_t n,
		   char **summary, char **json)
{
	*summary = NULL;
	*json = NULL;
	char *tool = NULL;
	cJSON *a = r ? request_args(r, &tool) : NULL;
	char *args = print_take(a);
	struct pol_mem_context *m = args ? pol_mem_context_new(tool, args, recs, n, -1) : NULL;
	free(args);
	free(tool);
	if (!m)
		return -EINVAL;
	*summary = pol_mem_context_summary(m);
	*json = pol_mem_context_json(m);
	pol_mem_context_free(m);
	return 0;
}

/* ---- conditions and accepted rules ---------------------------------------------- */

bool pol_mem_cond_holds(const struct pol_mem_cond *c, const cJSON *v)
{
	if (!v || !(cJSON_IsNumber(v) || cJSON_IsString(v)))
		return false; /* a nested value, a bool or null is never covered */
	bool num = cJSON_IsNumber(v);
	switch (c->op) {
	case MEM_RANGE:
		return num && v->valuedouble >= c->lo && v->valuedouble <= c->hi;
	case MEM_EQ:
	case MEM_IN:
		for (size_t i = 0; i < c->nv; i++) {
			const struct pol_mem_value *x = &c->v[i];
			if (x->num != num)
				continue; /* "15" is not 15 */
			if (num ? x->d == v->valuedouble : strcmp(x->s, v->valuestring) == 0)
				return true;
		}
		return false;
	}
	return false;
}

bool pol_mem_conds_cover(const struct pol_mem_cond *conds, size_t n, const cJSON *args)
{
	size_t fields = 0;
	for (const cJSON *k = args->child; k; k = k->next) {
		if (!k->string || pol_mem_field_is_secret(k->string))
			continue;
		if (item(args, k->string) != k)
			return false; /* a duplicate key: not what anyone approved */
		fields++;
	}
	if (fields != n)
		return false; /* a new field or a missing one */
	for (size_t i = 0; i < n; i++)
		if (!pol_mem_cond_holds(&conds[i], item(args, conds[i].field)))
			return false;
	return true;
}

#define US_PER_DAY (86400LL * 1000000LL)

bool pol_mem_rule_covers(const struct pol_accepted *a, const char *tool, const cJSON *args,
			 int64_t now_us)
{
	if (!a->tool || strcmp(a->tool, tool) != 0)
		return false;
	if (now_us < a->at_us || now_us - a->at_us >= (int64_t)a->review_days * US_PER_DAY)
		return false; /* not yet valid, or past its review date */
	return pol_mem_conds_cover(a->conds, a->nconds, args);
}

static bool covers_parsed(const struct pol_config *c, const char *tool, const cJSON *args,
			  int64_t now_us, size_t *index)
{
	for (size_t i = 0; c && args && i < c->naccepted; i++) {
		if (pol_mem_rule_covers(&c->accepted[i], tool, args, now_us)) {
			if (index)
				*index = i;
			return true;
		}
	}
	return false;
}

bool pol_accepted_covers(const struct pol_config *c, const struct pol_request *r, int64_t now_us,
			 size_t *index)
{
	if (!c || !r || c->naccepted == 0 || !c->accepted)
		return false;
	char *tool = NULL;
	cJSON *args = request_args(r, &tool);
	bool ok = tool && covers_parsed(c, tool, args, now_us, index);
	cJSON_Delete(args);
	free(tool);
	return ok;
}

bool pol_accepted_covers_args(const struct pol_config *c, const char *tool, const char *args_json,
			      int64_t now_us, size_t *index)
{
	if (!c || !tool || !args_json || !c->accepted)
		return false;
	cJSON *args = cJSON_Parse(args_json);
	bool ok = cJSON_IsObject(args) && covers_parsed(c, tool, args, now_us, index);
	cJSON_Delete(args);
	return ok;
}

void pol_mem_cond_clear(struct pol_mem_cond *c)
{
	free(c->field);
	for (size_t i = 0; i < c->nv; i++)
		free(c->v[i].s);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

void pol_accepted_free(struct pol_accepted *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++) {
		free(a[i].id);
		free(a[i].tool);
		free(a[i].by);
		for (size_t k = 0; k < a[i].nconds; k++)
			pol_mem_cond_clear(&a[i].conds[k]);
		free(a[i].conds);
	}
	free(a);
}

/* ---- pretty printing ------------------------------------------------------------ */

/* A condition ({"eq": v}, {"in": [...]}, {"min": lo, "max": hi}) reads best
 * on one line. */
static bool is_condition(const cJSON *v)
{
	if (!cJSON_IsObject(v) || !v->child)
		return false;
	for (const cJSON *k = v->child; k; k = k->next)
		if (!k->string ||
		    (strcmp(k->string, "eq") && strcmp(k->string, "in") &&
		     strcmp(k->string, "min") && strcmp(k->string, "max")) ||
		    cJSON_IsObject(k) ||
		    (cJSON_IsArray(k) && k->child && !cJSON_IsString(k->child) &&
		     !cJSON_IsNumber(k->child)))
			return false;
	return true;
}

void pol_json_pretty(struct wd_sb *sb, const cJSON *v, int indent)
{
	if (is_condition(v)) {
		wd_sb_putc(sb, '{');
		for (const cJSON *k = v->child; k; k = k->next) {
			cJSON *name = cJSON_CreateString(k->string);
			char *t = cJSON_PrintUnformatted(name);
			wd_sb_printf(sb, "%s: ", t);
			cJSON_free(t);
			cJSON_Delete(name);
			pol_json_pretty(sb, k, indent);
			if (k->next)
				wd_sb_puts(sb, ", ");
		}
		wd_sb_putc(sb, '}');
		return;
	}
	bool obj = cJSON_IsObject(v);
	bool deep = cJSON_IsArray(v) && v->child &&
		    (cJSON_IsObject(v->child) || cJSON_IsArray(v->child));
	if ((obj || deep) && !v->child) {
		wd_sb_puts(sb, obj ? "{}" : "[]");
		return;
	}
	if (obj || deep) {
		wd_sb_puts(sb, obj ? "{\n" : "[\n");
		for (const cJSON *k = v->child; k; k = k->next) {
			wd_sb_printf(sb, "%*s", indent + 2, "");
			if (obj) {
				cJSON *name = cJSON_CreateString(k->string);
				char *t = cJSON_PrintUnformatted(name);
				wd_sb_printf(sb, "%s: ", t);
				cJSON_free(t);
				cJSON_Delete(name);
			}
			pol_json_pretty(sb, k, indent + 2);
			wd_sb_puts(sb, k->next ? ",\n" : "\n");
		}
		wd_sb_printf(sb, "%*s%s", indent, "", obj ? "}" : "]");
		return;
	}
	if (cJSON_IsArray(v)) {
		wd_sb_putc(sb, '[');
		for (const cJSON *k = v->child; k; k = k->next) {
			pol_json_pretty(sb, k, indent);
			if (k->next)
				wd_sb_puts(sb, ", ");
		}
		wd_sb_putc(sb, ']');
		return;
	}
	char *t = cJSON_PrintUnformatted(v);
	wd_sb_puts(sb, t ? t : "null");
	cJSON_free(t);
}
