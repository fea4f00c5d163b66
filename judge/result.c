/*
 * result.c: what a judged request came to, kept and shown: an owning copy
 * of a struct jdg_result and its JSON for the audit's "judge" column.
 */
#include "judge.h"
#include "judge_int.h"

#include "common.h"

#include <cjson/cJSON.h>
#include <string.h>

static char *dup_or_null(const char *s)
{
	return s ? wd_strdup(s) : NULL;
}

void jdg_result_dup(const struct jdg_result *r, struct jdg_result *out)
{
	*out = *r;
	out->reason = wd_strdup(r->reason ? r->reason : "");
	out->verdict = dup_or_null(r->verdict);
	out->error = dup_or_null(r->error);
}

void jdg_result_clear(struct jdg_result *r)
{
	free((char *)r->reason);
	free((char *)r->verdict);
	free((char *)r->error);
	memset(r, 0, sizeof(*r));
}

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

char *jdg_result_json(const struct jdg_result *r, const char *model)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "outcome", jdg_outcome_name(r->outcome));
	add_str_or_null(o, "decision", r->ok ? jdg_decision_name(r->decision) : NULL);
	add_str_or_null(o, "risk_level", r->ok ? jdg_risk_name(r->risk) : NULL);
	add_str_or_null(o, "reason", r->reason);
	add_str_or_null(o, "verdict", r->verdict);
	add_str_or_null(o, "error", r->error);
	add_str_or_null(o, "model", model);
	cJSON_AddNumberToObject(o, "http_status", (double)r->http_status);
	cJSON_AddNumberToObject(o, "attempts", r->attempts);
	cJSON_AddNumberToObject(o, "latency_us", (double)r->latency_us);
	cJSON *u = cJSON_AddObjectToObject(o, "usage");
	cJSON_AddNumberToObject(u, "prompt_tokens", (double)r->usage.prompt_tokens);
	cJSON_AddNumberToObject(u, "completion_tokens", (double)r->usage.completion_tokens);
	cJSON_AddNumberToObject(u, "cached_tokens", (double)r->usage.cached_tokens);
	char *p = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	char *s = wd_strdup(p ? p : "{}");
	cJSON_free(p);
	return s;
}
