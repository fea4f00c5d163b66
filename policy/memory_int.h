/*
 * memory_int.h: approval memory's private structures, shared by memory.c,
 * memory_rules.c, the config parser (accepted_rules) and pol_decide().
 * Nothing here is part of the contract in policy.h.
 *
 * See docs/design.md, section "Approval memory".
 */
#ifndef WARDEN_POLICY_MEMORY_INT_H
#define WARDEN_POLICY_MEMORY_INT_H

#include "policy_int.h"

#include <cjson/cJSON.h>

/* The most values an "in" condition holds. */
#define MEM_MAX_IN 10
/* How deep similarity looks into nested arguments. */
#define MEM_MAX_DEPTH 3

/* One value of a condition: a number or a string, never both. The type is
 * part of the value: the string "15" is not the number 15. */
struct pol_mem_value {
	bool num;
	double d;
	char *s;
};

enum pol_mem_op { MEM_EQ, MEM_IN, MEM_RANGE };

struct pol_mem_cond {
	char *field;
	enum pol_mem_op op;
	struct pol_mem_value *v; /* MEM_EQ: 1 value; MEM_IN: 1..MEM_MAX_IN */
	size_t nv;
	double lo, hi; /* MEM_RANGE, both inclusive */
};

/* One entry of accepted_rules, validated by the config parser. */
struct pol_accepted {
	char *id;   /* may be NULL (a hand-written rule) */
	char *tool; /* "exec:/usr/bin/make" or "open" */
	char *by;
	int64_t at_us;
	int review_days;
	struct pol_mem_cond *conds;
	size_t nconds;
};

/* True when a field |name| looks like it holds a secret (api_key,
 * password, token, secret, auth, credential, private_key, access_key,
 * bearer, ...): never compared, never named, never in a rule. */
bool pol_mem_field_is_secret(const char *name);

/* The memory arguments of a request given as its audit JSON
 * (pol_request_json()): a cJSON object (caller frees with cJSON_Delete)
 * and, in *tool, the tool name (caller frees). NULL when the text is not a
 * request. */
cJSON *pol_mem_args_from_request(const char *request_json, char **tool);

/* True when |v| is a scalar of the condition's type inside its bounds. */
bool pol_mem_cond_holds(const struct pol_mem_cond *c, const cJSON *v);

/* True when |args| has exactly the non-secret top-level fields of |conds|
 * and each value satisfies its condition. */
bool pol_mem_conds_cover(const struct pol_mem_cond *conds, size_t n, const cJSON *args);

/* True when |a| covers the request (|tool|, |args|) at |now_us|: same tool,
 * exactly the covered fields inside their bounds, and the review date
 * (at + review_days) not yet reached. A rule dated after |now_us| is not
 * valid yet. */
bool pol_mem_rule_covers(const struct pol_accepted *a, const char *tool, const cJSON *args,
			 int64_t now_us);

void pol_mem_cond_clear(struct pol_mem_cond *c);

#endif
