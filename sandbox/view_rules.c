/*
 * view_rules.c: the view's rules by path, shared with `warden explain
 * --open`: which names are sensitive, which are write-protected, and which
 * opens go to the decide callback. The view adds what only a running view
 * knows (an object's identity: a hard link or a name seen before); explain
 * asks these same functions, so that the two cannot disagree on a path.
 * Pure: reads the policy it is handed, touches no file.
 */
#include "sandbox.h"

#include "common.h"
#include "policy.h"

#include <string.h>

bool sbx_view_path_sensitive(const struct pol_config *policy, const char *const *unmarked,
			     const char *path)
{
	for (const char *const *u = unmarked; u && *u; u++)
		if (wd_path_within(path, *u))
			return false;
	return pol_is_sensitive(policy, path, NULL);
}

bool sbx_view_path_write_protected(const struct pol_config *policy, const char *prefix,
				   const char *path)
{
	/* .warden/ is warden's own state: protected even if the policy
	 * module's list were to change. */
	if (!prefix && (strcmp(path, ".warden") == 0 || wd_str_has_prefix(path, ".warden/")))
		return true;
	if (!prefix)
		return pol_is_write_protected(policy, path);
	/* A place outside the project is named by absolute path: the
	 * project's patterns do not reach into it, but the project's own
	 * .warden/ does, should the project lie below and its view ever be
	 * gone from over it. */
	wd_autofree char *abs = path[0] ? wd_asprintf("%s/%s", prefix, path) : wd_strdup(prefix);
	return pol_is_write_protected(policy, abs);
}

bool sbx_view_open_decided(bool sensitive, bool control, unsigned access)
{
	/* Sensitive: every open. Control file: a change only. */
	return sensitive || (control && (access & POL_ACC_WRITE));
}
