/*
 * verdict.c: the judge's wire formats: the request bodies of both APIs,
 * their response envelopes (lenient about unknown keys), the verdict object
 * (strict: exactly three known keys of the right types and values) and the
 * outcome table of issue 5.
 *
 * Pure: no I/O. cJSON NULLs become -EBADMSG or an abort-free fallback here,
 * at the module edge.
 */
#include "judge.h"
#include "judge_int.h"

#include "common.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>

/* Stores a malloc'd message in *err (when |err| is not NULL) and returns
 * -EBADMSG. */
static int fail(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(char **err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		*err = wd_vasprintf(fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

/* ---- names --------------------------------------------------------------- */

static const char *const decision_names[] = {
	[JDG_DECISION_ALLOW] = "allow",
	[JDG_DECISION_DENY] = "deny",
	[JDG_DECISION_ESCALATE] = "escalate",
};
static const char *const risk_names[] = {
	[JDG_RISK_LOW] = "low",
	[JDG_RISK_MEDIUM] = "medium",
	[JDG_RISK_HIGH] = "high",
	[JDG_RISK_CRITICAL] = "critical",
};

const char *jdg_decision_name(enum jdg_decision d)
{
	return (unsigned)d < WD_ARRAY_SIZE(decision_names) ? decision_names[d] : "unknown";
}

const char *jdg_risk_name(enum jdg_risk r)
{
	return (unsigned)r < WD_ARRAY_SIZE(risk_names) ? risk_names[r] : "unknown";
}

const char *jdg_outcome_name(enum jdg_outcome o)
{
	switch (o) {
	case JDG_ALLOW:
		return "allow";
	case JDG_REJECT:
		return "reject";
	case JDG_ESCALATE:
	default:
		return "escalate";
	}
}

static int lookup(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

/* ---- the verdict ---------------------------------------------------------- */

/* Copies |s| into |dst| (|n| bytes), cut on a UTF-8 boundary. */
static void copy_utf8(char *dst, size_t n, const char *s)
{
	size_t len = strlen(s);
	if (len >= n) {
		len = n - 1;
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	memcpy(dst, s, len);
	dst[len] = '\0';
}

int jdg_verdict_parse(const char *text, size_t len, struct jdg_verdict *out, char **err)
{
	if (!text)
		return fail(err, "no verdict text");
	if (memchr(text, '\0', len))
		return fail(err, "the verdict contains a NUL byte");
	char *s = wd_strndup(text, len);
	const char *end = NULL;
	/* require_null_terminated: anything but whitespace after the object
	 * is a failure ("extra text"). */
	cJSON *j = cJSON_ParseWithOpts(s, &end, 1);
	int rc = 0;
	if (!j) {
		rc = fail(err, "the verdict is not one JSON value (error near byte %zu)",
			  end && end >= s ? (size_t)(end - s) : (size_t)0);
		goto out;
	}
	if (!cJSON_IsObject(j)) {
		rc = fail(err, "the verdict is not a JSON object");
		goto out;
	}
	const cJSON *dec = NULL, *risk = NULL, *reason = NULL;
	for (const cJSON *c = j->child; c; c = c->next) {
		const cJSON **slot = NULL;
		if (c->string && strcmp(c->string, "decision") == 0)
			slot = &dec;
		else if (c->string && strcmp(c->string, "risk_level") == 0)
			slot = &risk;
		else if (c->string && strcmp(c->string, "reason") == 0)
			slot = &reason;
		if (!slot) {
			rc = fail(err, "the verdict has an unknown key \"%.40s\"",
				  c->string ? c->string : "");
			goto out;
		}
		if (*slot) {
			rc = fail(err, "the verdict repeats the key \"%s\"", c->string);
			goto out;
		}
		if (!cJSON_IsString(c) || !c->valuestring) {
			rc = fail(err, "the verdict's \"%s\" is not a string", c->string);
			goto out;
		}
		*slot = c;
	}
	if (!dec || !risk || !reason) {
		rc = fail(err, "the verdict lacks \"%s\"",
			  !dec	  ? "decision"
			  : !risk ? "risk_level"
				  : "reason");
		goto out;
	}
	int d = lookup(decision_names, WD_ARRAY_SIZE(decision_names), dec->valuestring);
	int r = lookup(risk_names, WD_ARRAY_SIZE(risk_names), risk->valuestring);
	if (d < 0) {
		rc = fail(err, "the verdict's decision \"%.40s\" is not allow, deny or escalate",
			  dec->valuestring);
		goto out;
	}
	if (r < 0) {
		rc = fail(err,
			  "the verdict's risk_level \"%.40s\" is not low, medium, high or critical",
			  risk->valuestring);
		goto out;
	}
	out->decision = (enum jdg_decision)d;
	out->risk = (enum jdg_risk)r;
	copy_utf8(out->reason, sizeof(out->reason), reason->valuestring);
out:
	cJSON_Delete(j);
	free(s);
	return rc;
}

enum jdg_outcome jdg_verdict_outcome(const struct jdg_verdict *v)
{
	switch (v->decision) {
	case JDG_DECISION_ALLOW:
		return v->risk == JDG_RISK_CRITICAL ? JDG_ESCALATE : JDG_ALLOW;
	case JDG_DECISION_DENY:
		return v->risk == JDG_RISK_CRITICAL ? JDG_REJECT : JDG_ESCALATE;
	case JDG_DECISION_ESCALATE:
	default: /* fail closed */
		return JDG_ESCALATE;
	}
}

/* ---- the envelopes ------------------------------------------------------- */

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

static int64_t num_or(const cJSON *obj, const char *key, int64_t dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9e15)
		return dflt;
	return (int64_t)v->valuedouble;
}

static int openai_content(const cJSON *j, char **content, struct jdg_usage *u, char **err)
{
	const cJSON *usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
	if (cJSON_IsObject(usage)) {
		u->prompt_tokens = num_or(usage, "prompt_tokens", -1);
		u->completion_tokens = num_or(usage, "completion_tokens", -1);
		const cJSON *det = cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens_details");
		if (cJSON_IsObject(det))
			u->cached_tokens = num_or(det, "cached_tokens", -1);
	}
	const cJSON *choices = cJSON_GetObjectItemCaseSensitive(j, "choices");
	const cJSON *c0 = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
	const cJSON *msg =
		cJSON_IsObject(c0) ? cJSON_GetObjectItemCaseSensitive(c0, "message") : NULL;
	if (!cJSON_IsObject(msg))
		return fail(err, "the response has no choices[0].message");
	const cJSON *refusal = cJSON_GetObjectItemCaseSensitive(msg, "refusal");
	if (cJSON_IsString(refusal) && refusal->valuestring && *refusal->valuestring)
		return fail(err, "the model refused to answer");
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(msg, "content");
	if (!cJSON_IsString(text) || !text->valuestring)
		return fail(err, "choices[0].message.content is not a string");
	*content = wd_strdup(text->valuestring);
	return 0;
}

static int anthropic_content(const cJSON *j, char **content, struct jdg_usage *u, char **err)
{
	const cJSON *usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
	if (cJSON_IsObject(usage)) {
		/* Anthropic counts cached and cache-writing input apart from
		 * input_tokens; prompt_tokens is their sum, as OpenAI counts. */
		int64_t in = num_or(usage, "input_tokens", -1);
		int64_t rd = num_or(usage, "cache_read_input_tokens", -1);
		int64_t wr = num_or(usage, "cache_creation_input_tokens", -1);
		u->prompt_tokens = in < 0 ? -1 : in + (rd > 0 ? rd : 0) + (wr > 0 ? wr : 0);
		u->completion_tokens = num_or(usage, "output_tokens", -1);
		u->cached_tokens = rd;
	}
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
	if (cJSON_IsString(type) && type->valuestring && strcmp(type->valuestring, "error") == 0)
		return fail(err, "the server answered with an error object");
	const cJSON *blocks = cJSON_GetObjectItemCaseSensitive(j, "content");
	if (!cJSON_IsArray(blocks))
		return fail(err, "the response has no content[]");
	struct wd_sb sb = {0};
	bool any = false;
	const cJSON *b;
	cJSON_ArrayForEach(b, blocks)
	{
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(b, "type");
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(b, "text");
		if (!cJSON_IsString(t) || !t->valuestring || strcmp(t->valuestring, "text") != 0)
			continue;
		if (!cJSON_IsString(x) || !x->valuestring) {
			wd_sb_free(&sb);
			return fail(err, "a text block of content[] has no string text");
		}
		wd_sb_puts(&sb, x->valuestring);
		any = true;
	}
	if (!any) {
		wd_sb_free(&sb);
		return fail(err, "content[] has no text block");
	}
	*content = wd_sb_steal(&sb);
	return 0;
}

int jdg_envelope_parse(enum jdg_api api, const char *body, size_t len, char **content,
		       struct jdg_usage *usage, char **err)
{
	*content = NULL;
	usage->prompt_tokens = usage->completion_tokens = usage->cached_tokens = -1;
	if (!body || len == 0)
		return fail(err, "the response body is empty");
	cJSON *j = cJSON_ParseWithLength(body, len);
	if (!j)
		return fail(err, "the response body is not JSON");
	int rc;
	if (!cJSON_IsObject(j))
		rc = fail(err, "the response body is not a JSON object");
	else if (api == JDG_API_ANTHROPIC)
		rc = anthropic_content(j, content, usage, err);
	else
		rc = openai_content(j, content, usage, err);
	cJSON_Delete(j);
	return rc;
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
	cJSON_AddItemToObject(p, "decision",
			      str_enum(decision_names, WD_ARRAY_SIZE(decision_names)));
	cJSON_AddItemToObject(p, "risk_level", str_enum(risk_names, WD_ARRAY_SIZE(risk_names)));
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

/* ---- results --------------------------------------------------------------- */

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
