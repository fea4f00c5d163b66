/*
 * verdict.c: the model's answer: the response envelopes of both APIs
 * (lenient about unknown keys), the verdict object inside (strict: exactly
 * three known keys of the right types and values), the names of its values
 * and the outcome table.
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

const char *const jdg_decision_names[] = {
	[JDG_DECISION_ALLOW] = "allow",
	[JDG_DECISION_DENY] = "deny",
	[JDG_DECISION_ESCALATE] = "escalate",
};
const char *const jdg_risk_names[] = {
	[JDG_RISK_LOW] = "low",
	[JDG_RISK_MEDIUM] = "medium",
	[JDG_RISK_HIGH] = "high",
	[JDG_RISK_CRITICAL] = "critical",
};

const char *jdg_decision_name(enum jdg_decision d)
{
	return (unsigned)d < WD_ARRAY_SIZE(jdg_decision_names) ? jdg_decision_names[d] : "unknown";
}

const char *jdg_risk_name(enum jdg_risk r)
{
	return (unsigned)r < WD_ARRAY_SIZE(jdg_risk_names) ? jdg_risk_names[r] : "unknown";
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

/* Finds the verdict's three string members in |j|, refusing any other key,
 * a repeated key, a value that is not a string and a missing key. */
static int verdict_keys(const cJSON *j, const cJSON **dec, const cJSON **risk, const cJSON **reason,
			char **err)
{
	*dec = *risk = *reason = NULL;
	for (const cJSON *c = j->child; c; c = c->next) {
		const cJSON **slot = NULL;
		if (c->string && strcmp(c->string, "decision") == 0)
			slot = dec;
		else if (c->string && strcmp(c->string, "risk_level") == 0)
			slot = risk;
		else if (c->string && strcmp(c->string, "reason") == 0)
			slot = reason;
		if (!slot)
			return fail(err, "the verdict has an unknown key \"%.40s\"",
				    c->string ? c->string : "");
		if (*slot)
			return fail(err, "the verdict repeats the key \"%s\"", c->string);
		if (!cJSON_IsString(c) || !c->valuestring)
			return fail(err, "the verdict's \"%s\" is not a string", c->string);
		*slot = c;
	}
	if (!*dec || !*risk || !*reason)
		return fail(err, "the verdict lacks \"%s\"",
			    !*dec    ? "decision"
			    : !*risk ? "risk_level"
				     : "reason");
	return 0;
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
	const cJSON *dec, *risk, *reason;
	rc = verdict_keys(j, &dec, &risk, &reason, err);
	if (rc < 0)
		goto out;
	int d = lookup(jdg_decision_names, WD_ARRAY_SIZE(jdg_decision_names), dec->valuestring);
	int r = lookup(jdg_risk_names, WD_ARRAY_SIZE(jdg_risk_names), risk->valuestring);
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
