/*
 * body.c: the HTTP request bodies the judge sends, and which API a URL
 * speaks: an OpenAI /v1/chat/completions body (temperature 0, a strict
 * JSON schema for the verdict, cache_prompt) or an Anthropic /v1/messages
 * body (the system prompt and the turn's prefix as two cached blocks).
 *
 * Pure: no I/O.
 */
#include "judge.h"
#include "judge_int.h"

#include "common.h"

#include <cjson/cJSON.h>
#include <string.h>

enum jdg_api jdg_api_detect(const char *url)
{
	if (!url)
		return JDG_API_OPENAI;
	size_t n = strcspn(url, "?#");
	while (n > 0 && url[n - 1] == '/')
		n--;
	static const char sfx[] = "/v1/messages";
	size_t sl = sizeof(sfx) - 1;
	if (n >= sl && strncmp(url + n - sl, sfx, sl) == 0)
		return JDG_API_ANTHROPIC;
	return JDG_API_OPENAI;
}

/* ---- request bodies ------------------------------------------------------ */

static cJSON *str_enum(const char *const *names, size_t n)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", "string");
	cJSON_AddItemToObject(o, "enum", cJSON_CreateStringArray(names, (int)n));
	return o;
}

static cJSON *verdict_schema(void)
{
	cJSON *s = cJSON_CreateObject();
	cJSON_AddStringToObject(s, "type", "object");
	cJSON *p = cJSON_AddObjectToObject(s, "properties");
	cJSON_AddItemToObject(p, "decision", str_enum(jdg_decision_names, JDG_DECISIONS));
	cJSON_AddItemToObject(p, "risk_level", str_enum(jdg_risk_names, JDG_RISKS));
	cJSON *r = cJSON_AddObjectToObject(p, "reason");
	cJSON_AddStringToObject(r, "type", "string");
	static const char *const req[] = {"decision", "risk_level", "reason"};
	cJSON_AddItemToObject(s, "required", cJSON_CreateStringArray(req, 3));
	cJSON_AddBoolToObject(s, "additionalProperties", 0);
	return s;
}

static cJSON *text_block(const char *text)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "type", "text");
	cJSON_AddStringToObject(b, "text", text);
	/* A cache breakpoint after each block: the system prompt is cached
	 * across turns, the prefix within a turn. */
	cJSON *cc = cJSON_AddObjectToObject(b, "cache_control");
	cJSON_AddStringToObject(cc, "type", "ephemeral");
	return b;
}

static cJSON *openai_body(const char *model, const char *prefix, const char *message)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "model", model);
	cJSON *msgs = cJSON_AddArrayToObject(o, "messages");
	cJSON *sys = cJSON_CreateObject();
	cJSON_AddStringToObject(sys, "role", "system");
	cJSON_AddStringToObject(sys, "content", jdg_system_prompt());
	cJSON_AddItemToArray(msgs, sys);
	char *user = wd_asprintf("%s%s", prefix, message);
	cJSON *u = cJSON_CreateObject();
	cJSON_AddStringToObject(u, "role", "user");
	cJSON_AddStringToObject(u, "content", user);
	free(user);
	cJSON_AddItemToArray(msgs, u);
	cJSON_AddNumberToObject(o, "temperature", 0);
	cJSON *rf = cJSON_AddObjectToObject(o, "response_format");
	cJSON_AddStringToObject(rf, "type", "json_schema");
	cJSON *js = cJSON_AddObjectToObject(rf, "json_schema");
	cJSON_AddStringToObject(js, "name", "verdict");
	cJSON_AddBoolToObject(js, "strict", 1);
	cJSON_AddItemToObject(js, "schema", verdict_schema());
	cJSON_AddBoolToObject(o, "cache_prompt", 1);
	return o;
}

static cJSON *anthropic_body(const char *model, const char *prefix, const char *message)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "model", model);
	cJSON_AddNumberToObject(o, "max_tokens", 300);
	cJSON_AddNumberToObject(o, "temperature", 0);
	cJSON *sys = cJSON_AddArrayToObject(o, "system");
	cJSON_AddItemToArray(sys, text_block(jdg_system_prompt()));
	cJSON_AddItemToArray(sys, text_block(prefix));
	cJSON *msgs = cJSON_AddArrayToObject(o, "messages");
	cJSON *u = cJSON_CreateObject();
	cJSON_AddStringToObject(u, "role", "user");
	cJSON_AddStringToObject(u, "content", message);
	cJSON_AddItemToArray(msgs, u);
	return o;
}

char *jdg_body_build(enum jdg_api api, const char *model, const char *prefix, const char *message)
{
	cJSON *o = api == JDG_API_ANTHROPIC ? anthropic_body(model, prefix, message)
					    : openai_body(model, prefix, message);
	char *p = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	if (!p)
		return NULL;
	char *r = wd_strdup(p);
	cJSON_free(p);
	return r;
}
