/*
 * net_lookup.c: the decision on a lookup, a name the session's resolver is
 * asked for (supervisor/lookups.c), made before any DNS server sees the
 * name: a query name is itself data leaving the host. The same entries
 * as a connection's, by name only: address and CIDR entries name no name,
 * and ports do not count.
 *
 * Pure, as the rest of policy/.
 */
#include "config_int.h"

#include <stdio.h>
#include <string.h>

#define NET_NAME_MAX 253

/* ---- lookups -------------------------------------------------------------------- */

/* The first of the |n| entries |list| that names |low| (lower case, no
 * final dot), ports ignored: its index, or -1. Address and CIDR entries
 * never name anything; "*" names every name. */
static long list_names(char *const *list, size_t n, const char *low)
{
	for (size_t i = 0; i < n; i++)
		if (pol_net_entry_names(list[i], low))
			return (long)i;
	return -1;
}

static void lookup_set(char *reason, size_t n, char *matched, size_t mn, const char *m,
		       const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void lookup_set(char *reason, size_t n, char *matched, size_t mn, const char *m,
		       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (reason && n)
		vsnprintf(reason, n, fmt, ap);
	va_end(ap);
	if (matched && mn)
		snprintf(matched, mn, "%s", m);
}

bool pol_net_name_denied(const struct pol_config *c, const char *name)
{
	char low[NET_NAME_MAX + 2];
	if (!pol_net_name_fold(name, low, sizeof(low)))
		return false;
	return pol_net_metadata_name(low) || (c && list_names(c->net_deny, c->nnet_deny, low) >= 0);
}

enum pol_verdict pol_net_lookup_decide(const struct pol_config *c, const char *name, char *reason,
				       size_t n, char *matched, size_t mn)
{
	char low[NET_NAME_MAX + 2];
	if (!pol_net_name_fold(name, low, sizeof(low))) {
		/* Not a name any entry could match: nothing allows it. */
		lookup_set(reason, n, matched, mn, "", "the name is longer than a DNS name");
		return POL_UNDECIDED;
	}
	if (pol_net_metadata_name(low)) {
		lookup_set(reason, n, matched, mn, low,
			   "%s is a cloud metadata name: its service hands out the machine's "
			   "credentials, so it is not looked up",
			   low);
		return POL_DENY_CRITICAL;
	}
	char m[48];
	long i = c ? list_names(c->net_deny, c->nnet_deny, low) : -1;
	if (i >= 0) {
		snprintf(m, sizeof(m), "network.deny[%ld]", i);
		lookup_set(reason, n, matched, mn, m,
			   "the project config's network.deny entry \"%s\" matches %s, so it is "
			   "not looked up (its DNS servers would see the name)",
			   c->net_deny[i], low);
		return POL_DENY;
	}
	i = c ? list_names(c->net_allow, c->nnet_allow, low) : -1;
	if (i >= 0) {
		snprintf(m, sizeof(m), "network.allow[%ld]", i);
		lookup_set(reason, n, matched, mn, m,
			   "the project config's network.allow entry \"%s\" matches %s",
			   c->net_allow[i], low);
		return POL_ALLOW;
	}
	/* The resolver cannot tell the harness's own process from its tool
	 * calls: the endpoint's name resolves for both, and the connection
	 * that follows is decided by who makes it. */
	i = c ? list_names(c->harness_ep, c->nharness_ep, low) : -1;
	if (i >= 0) {
		lookup_set(reason, n, matched, mn, c->harness_ep[i],
			   "%s is the agent harness's own API endpoint (%s)", low,
			   c->harness_ep[i]);
		return POL_ALLOW;
	}
	lookup_set(reason, n, matched, mn, "", "%s is not in network.allow", low);
	return POL_UNDECIDED;
}
