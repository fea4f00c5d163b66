/*
 * openq.c: the one answer to "does this open need a decision, and what
 * would the pipeline say", for `warden explain --open`. It asks the view's
 * own rules by path (sandbox/view_rules.c, which the running view calls
 * for every open) and, for the outside places, the same list run.c mounts
 * (hidden, gated, seen through a markers view, left open); what needs a
 * decision then goes to pol_decide() with the request the loop builds
 * for the view (sup_on_view). What only a running view knows (a hard link
 * to a sensitive file under another name) is not visible here.
 */
#include "sup.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* |path| made absolute and canonical as far as it exists (the agent's
 * open follows the same symlinks): its directory's real path, then the
 * name. Caller frees. */
static char *canonical(const char *project, const char *path)
{
	wd_autofree char *abs =
		path[0] == '/' ? wd_strdup(path) : wd_asprintf("%s/%s", project, path);
	char *real = realpath(abs, NULL);
	if (real)
		return real;
	char *slash = strrchr(abs, '/');
	if (!slash || slash == abs)
		return wd_strdup(abs);
	*slash = '\0';
	wd_autofree char *dir = realpath(abs, NULL);
	return dir ? wd_asprintf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, slash + 1)
		   : wd_asprintf("%s/%s", abs, slash + 1);
}

/* The outside place holding |abs| that run.c treats it by: the deepest
 * one (a later entry of the same path wins, as pol_config_outside says),
 * without a trailing "/" (the home is "~/"). Caller frees; NULL if none. */
static char *outside_place(const struct pol_config *cfg, const char *abs,
			   enum pol_outside_mode *mode)
{
	char *best = NULL;
	size_t n = pol_config_outside_count(cfg);
	for (size_t i = 0; i < n; i++) {
		enum pol_outside_mode m;
		const char *given = pol_config_outside(cfg, i, &m);
		if (!given || given[0] != '/')
			continue;
		char *p = wd_strdup(given);
		for (size_t k = strlen(p); k > 1 && p[k - 1] == '/'; k--)
			p[k - 1] = '\0';
		if (wd_path_within(abs, p) && (!best || strlen(p) >= strlen(best))) {
			free(best);
			best = p;
			*mode = m;
		} else {
			free(p);
		}
	}
	return best;
}

/* Whether Landlock lets some agent profile write |abs|. */
static bool writable_place(const struct pol_config *cfg, const char *project, const char *abs)
{
	static const enum pol_harness hs[] = {POL_HARNESS_CLAUDE_CODE, POL_HARNESS_CODEX,
					      POL_HARNESS_AIDER};
	bool found = false;
	for (size_t h = 0; h < WD_ARRAY_SIZE(hs); h++) {
		char **v = sup_writable_list(cfg, project, hs[h]);
		for (size_t i = 0; v[i]; i++) {
			found = found || wd_path_within(abs, v[i]);
			free(v[i]);
		}
		free(v);
	}
	return found;
}

static void decide(struct sup_open_answer *a, const struct pol_config *cfg, const char *path,
		   unsigned access)
{
	a->decided = true;
	struct pol_request *req = pol_request_open(path, NULL, access, NULL);
	if (!req) {
		a->decision.verdict = POL_DENY;
		snprintf(a->decision.reason, sizeof(a->decision.reason),
			 "the request could not be built: refused");
		return;
	}
	struct pol_context ctx = {0};
	pol_decide(req, cfg, NULL, &ctx, wd_now_real_us(), &a->decision);
	a->summary = pol_request_summary(req);
	pol_request_free(req);
}

static void in_project(struct sup_open_answer *a, const struct pol_config *cfg, const char *rel,
		       unsigned access)
{
	const char *shown = rel[0] ? rel : ".";
	if (strcmp(rel, ".warden/audit.db") == 0 || wd_str_has_prefix(rel, ".warden/audit.db-")) {
		a->route = SUP_OPEN_HIDDEN;
		snprintf(a->why, sizeof(a->why),
			 "%s is warden's audit: the view hides it (the agent does not see it)",
			 shown);
		return;
	}
	if ((access & ~POL_ACC_READ) && sbx_view_path_write_protected(cfg, NULL, rel)) {
		a->route = SUP_OPEN_READ_ONLY;
		snprintf(a->why, sizeof(a->why),
			 "%s is write-protected: the view refuses every change (EROFS)", shown);
		return;
	}
	bool sens = sbx_view_path_sensitive(cfg, NULL, rel);
	bool ctl = pol_is_control(cfg, rel, NULL);
	if (!sbx_view_open_decided(sens, ctl, access)) {
		a->route = SUP_OPEN_FREE;
		if (ctl)
			snprintf(a->why, sizeof(a->why),
				 "%s is a control file: the view decides only changes to it",
				 shown);
		else
			snprintf(a->why, sizeof(a->why),
				 "%s is an ordinary project file: the view passes it through (it "
				 "decides opens of sensitive files and changes to control files)",
				 shown);
		return;
	}
	a->route = SUP_OPEN_DECIDED;
	snprintf(a->why, sizeof(a->why), "%s is %s: the view asks warden", shown,
		 sens ? "sensitive" : "a control file");
	decide(a, cfg, rel, access);
}

static void outside(struct sup_open_answer *a, const struct pol_config *cfg, const char *project,
		    const char *abs, unsigned access)
{
	enum pol_outside_mode mode = POL_OUTSIDE_OPEN;
	wd_autofree char *place = outside_place(cfg, abs, &mode);
	bool write = access & ~POL_ACC_READ;
	if (place && mode == POL_OUTSIDE_HIDE) {
		a->route = SUP_OPEN_HIDDEN;
		snprintf(a->why, sizeof(a->why), "%s is hidden from the agent (outside place %s)",
			 abs, place);
		return;
	}
	if (place && mode == POL_OUTSIDE_GATE) {
		a->route = SUP_OPEN_DECIDED;
		snprintf(a->why, sizeof(a->why),
			 "%s is in the gated place %s: every open there is a request", abs, place);
		decide(a, cfg, abs, access);
		return;
	}
	if (write && !writable_place(cfg, project, abs)) {
		a->route = SUP_OPEN_LANDLOCK;
		snprintf(a->why, sizeof(a->why),
			 "%s is outside every place the agent may write: Landlock refuses "
			 "(EACCES), nobody is asked",
			 abs);
		return;
	}
	if (place && mode == POL_OUTSIDE_MARKERS) {
		size_t pl = strcmp(place, "/") == 0 ? 0 : strlen(place);
		const char *rel = abs[pl] == '/' ? abs + pl + 1 : abs + pl;
		bool ctl = pol_is_control(cfg, rel, NULL);
		if (sbx_view_open_decided(sbx_view_path_sensitive(cfg, NULL, rel), ctl, access)) {
			a->route = SUP_OPEN_DECIDED;
			snprintf(a->why, sizeof(a->why),
				 "%s is %s in %s, seen through a markers view: the view asks "
				 "warden",
				 abs, ctl ? "a control file" : "sensitive", place);
			decide(a, cfg, abs, access);
			return;
		}
	}
	a->route = SUP_OPEN_FREE;
	snprintf(a->why, sizeof(a->why),
		 "%s is outside the project, in no gated place and not sensitive: the agent "
		 "%s it without a decision",
		 abs, write ? "writes" : "reads");
}

int sup_open_question(const struct pol_config *cfg, const char *project, const char *path,
		      unsigned access, struct sup_open_answer *out)
{
	memset(out, 0, sizeof(*out));
	if (!path[0])
		return -EINVAL;
	out->path = canonical(project, path);
	const char *shown = out->path;
	if (wd_path_within(out->path, project)) {
		size_t pl = strlen(project);
		shown = out->path[pl] == '/' ? out->path + pl + 1 : out->path + pl;
		in_project(out, cfg, shown, access);
	} else {
		outside(out, cfg, project, out->path, access);
	}
	/* As the view's request would read, for an open nobody decides. */
	if (!out->summary)
		out->summary = wd_asprintf("%s %s", access & ~POL_ACC_READ ? "write" : "read",
					   shown[0] ? shown : ".");
	return 0;
}

void sup_open_answer_free(struct sup_open_answer *a)
{
	free(a->path);
	free(a->summary);
	a->path = a->summary = NULL;
}

const char *sup_tier_outcome(enum pol_tier t)
{
	switch (t) {
	case POL_TIER_AGGRESSIVE:
		return "aggressive: allowed";
	case POL_TIER_PASSIVE:
		return "passive: refused";
	case POL_TIER_STANDARD:
	case POL_TIER_UNSET:
	default:
		return "standard: a person is asked; refused when nobody can be";
	}
}
