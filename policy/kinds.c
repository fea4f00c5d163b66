/*
 * kinds.c: the request kinds' table: for each enum pol_kind, the audit's
 * word for it and the functions that show, match, decide, grant and
 * remember its requests. A new kind is one entry here; its functions
 * live with their part (request.c, decide.c, config_out.c, memory.c;
 * network.c has all of connect's).
 *
 * See docs/design.md, sections "Requests" and "Where to add things".
 */
#include "policy_int.h"

#include <errno.h>
#include <string.h>

static const struct pol_kind_ops kinds[POL_KIND_COUNT] = {
	[POL_EXEC] =
		{
			.name = "exec",
			.json = pol_exec_json,
			.summary = pol_exec_summary,
			.same = pol_exec_same,
			.grant_matches = pol_exec_grant_matches,
			.rule_matches = pol_exec_rule_matches,
			.decide = pol_exec_decide,
			.to_grant = pol_exec_to_grant,
			.mem_args = pol_mem_exec_args,
			.sensitive_voids_allow_rules = true,
		},
	[POL_OPEN] =
		{
			.name = "open",
			.json = pol_open_json,
			.summary = pol_open_summary,
			.same = pol_open_same,
			.grant_matches = pol_open_grant_matches,
			.rule_matches = pol_open_rule_matches,
			.decide = pol_open_decide,
			.to_grant = pol_open_to_grant,
			.mem_args = pol_mem_open_args,
			/* An open's allow rule names the file it allows. */
			.sensitive_voids_allow_rules = false,
		},
	/* An IP destination (network.c). A Unix socket outside the sandbox
	 * has this kind in the audit too, but no pol_request: the supervisor
	 * decides it at the boundary (sockets.c) by the config's
	 * "sockets": {"allow"} list, with no rule, grant, judge or person. */
	[POL_CONNECT] =
		{
			.name = "connect",
			.json = pol_connect_json,
			.summary = pol_connect_summary,
			.same = pol_connect_same,
			.grant_matches = pol_connect_grant_matches,
			.rule_matches = pol_connect_rule_matches,
			.decide = pol_connect_decide,
			.to_grant = pol_connect_to_grant,
			.mem_args = pol_mem_connect_args,
			/* No allow rule matches a connect. */
			.sensitive_voids_allow_rules = false,
		},
};

const struct pol_kind_ops *pol_kind_ops(enum pol_kind k)
{
	return (unsigned)k < POL_KIND_COUNT ? &kinds[k] : NULL;
}

const char *pol_kind_name(enum pol_kind k)
{
	/* An unknown value reads as the first kind, as the audit always did. */
	const struct pol_kind_ops *o = pol_kind_ops(k);
	return o ? o->name : kinds[POL_EXEC].name;
}

int pol_kind_parse(const char *s, enum pol_kind *out)
{
	for (unsigned k = 0; s && k < POL_KIND_COUNT; k++) {
		if (strcmp(s, kinds[k].name) == 0) {
			*out = (enum pol_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}
