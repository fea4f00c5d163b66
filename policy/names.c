/*
 * names.c: the names of the policy's enums as the config, the audit and the
 * command line spell them, and their parsers.
 *
 * A leaf of policy/. See docs/design.md, section "Policy".
 */
#include "policy_int.h"

#include <errno.h>
#include <string.h>

const char *pol_name_of(const char *const *names, size_t n, size_t i, const char *dflt)
{
	return i < n && names[i] ? names[i] : dflt;
}

int pol_name_find(const char *const *names, size_t from, size_t n, const char *s)
{
	for (size_t i = from; s && i < n; i++)
		if (names[i] && strcmp(s, names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

/* Unset reads as the default. */
static const char *const tier_names[] = {
	[POL_TIER_UNSET] = "standard",
	[POL_TIER_AGGRESSIVE] = "aggressive",
	[POL_TIER_STANDARD] = "standard",
	[POL_TIER_PASSIVE] = "passive",
};

const char *pol_tier_name(enum pol_tier t)
{
	return pol_name_of(tier_names, WD_ARRAY_SIZE(tier_names), t, "standard");
}

int pol_tier_parse(const char *s, enum pol_tier *out)
{
	/* From the first tier one can name: "standard" is not "unset". */
	int i = pol_name_find(tier_names, POL_TIER_AGGRESSIVE, WD_ARRAY_SIZE(tier_names), s);
	if (i < 0)
		return i;
	*out = (enum pol_tier)i;
	return 0;
}

static const char *const outside_modes[] = {
	[POL_OUTSIDE_HIDE] = "hide",
	[POL_OUTSIDE_GATE] = "gate",
	[POL_OUTSIDE_MARKERS] = "markers",
	[POL_OUTSIDE_OPEN] = "open",
};

const char *pol_outside_mode_name(enum pol_outside_mode m)
{
	return pol_name_of(outside_modes, WD_ARRAY_SIZE(outside_modes), m, "hide");
}

int pol_outside_mode_parse(const char *s, enum pol_outside_mode *m)
{
	int i = pol_name_find(outside_modes, 0, WD_ARRAY_SIZE(outside_modes), s);
	if (i < 0)
		return i;
	*m = (enum pol_outside_mode)i;
	return 0;
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
