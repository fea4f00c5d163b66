/*
 * names.c: the names of the policy's enums as the config, the audit and the
 * command line spell them, and their parsers.
 *
 * A leaf of policy/. See docs/design.md, section "Policy".
 */
#include "policy_int.h"

#include <errno.h>
#include <string.h>

const char *pol_kind_name(enum pol_kind k)
{
	return k == POL_OPEN ? "open" : "exec";
}

int pol_kind_parse(const char *s, enum pol_kind *out)
{
	if (s && strcmp(s, "exec") == 0)
		*out = POL_EXEC;
	else if (s && strcmp(s, "open") == 0)
		*out = POL_OPEN;
	else
		return -EINVAL;
	return 0;
}

const char *pol_tier_name(enum pol_tier t)
{
	switch (t) {
	case POL_TIER_AGGRESSIVE:
		return "aggressive";
	case POL_TIER_PASSIVE:
		return "passive";
	case POL_TIER_STANDARD:
	case POL_TIER_UNSET:
		break;
	}
	return "standard";
}

int pol_tier_parse(const char *s, enum pol_tier *out)
{
	static const enum pol_tier all[] = {POL_TIER_AGGRESSIVE, POL_TIER_STANDARD,
					    POL_TIER_PASSIVE};
	for (size_t i = 0; s && i < WD_ARRAY_SIZE(all); i++)
		if (strcmp(s, pol_tier_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	return -EINVAL;
}

static const char *const outside_modes[] = {
	[POL_OUTSIDE_HIDE] = "hide",
	[POL_OUTSIDE_GATE] = "gate",
	[POL_OUTSIDE_MARKERS] = "markers",
	[POL_OUTSIDE_OPEN] = "open",
};

const char *pol_outside_mode_name(enum pol_outside_mode m)
{
	return (size_t)m < WD_ARRAY_SIZE(outside_modes) ? outside_modes[m] : "hide";
}

int pol_outside_mode_parse(const char *s, enum pol_outside_mode *m)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(outside_modes); i++)
		if (strcmp(s, outside_modes[i]) == 0) {
			*m = (enum pol_outside_mode)i;
			return 0;
		}
	return -EINVAL;
}

static const char *const access_names[] = {"read",	"write", "create",  "delete", "rename_from",
					   "rename_to", "link",	 "symlink", "chmod",  "chown",
					   "utimes",	"xattr", "truncate"};

const char *pol_access_name(unsigned bit)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(access_names); i++)
		if (bit == 1u << i)
			return access_names[i];
	return "unknown";
}

unsigned pol_access_from_name(const char *s)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(access_names); i++)
		if (strcmp(s, access_names[i]) == 0)
			return 1u << i;
	return 0;
}
