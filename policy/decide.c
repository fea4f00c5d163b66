/*
 * decide.c: pol_decide(), session grants and process-tree coverage.
 *
 * Order: hard deny; the config's deny rules and write_protected; session
 * grants, project grants, ask rules, accepted confirm rules, allow rules;
 * coverage; the fast path; otherwise undecided. Accepted rules come after
 * the ask rules, so that a person's "always ask" is never skipped by a rule
 * learned from history; like grants, they are never reached by a
 * hard-denied or deny-ruled request. A connection has its own order
 * (network.c, pol_connect_decide()).
 *
 * See docs/design.md, section "Policy".
 */
#include "memory_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *pol_source_name(enum pol_source s)
{
	switch (s) {
	case POL_SRC_NONE:
		return "none";
	case POL_SRC_HARD_DENY:
		return "hard_deny";
	case POL_SRC_RULE:
		return "rule";
	case POL_SRC_GRANT:
		return "grant";
	case POL_SRC_SESSION_GRANT:
		return "session_grant";
	case POL_SRC_ACCEPTED_RULE:
		return "accepted_rule";
	case POL_SRC_FAST_PATH:
		return "fast_path";
	case POL_SRC_COVERED:
		return "covered";
	case POL_SRC_STARTUP:
		return "startup";
	case POL_SRC_HARNESS:
		return "harness";
	case POL_SRC_JUDGE:
		return "judge";
	case POL_SRC_JUDGE_CACHE:
		return "judge_cache";
	case POL_SRC_TIER:
		return "tier";
	case POL_SRC_USER:
		return "user";
	case POL_SRC_TIMEOUT:
		return "timeout";
	case POL_SRC_STOPPED:
		return "stopped";
	case POL_SRC_LIMIT:
		return "limit";
	case POL_SRC_DECODER:
		return "decoder";
	case POL_SRC_REPEAT:
		return "repeat";
	case POL_SRC_BOUNDARY:
		return "boundary";
	case POL_SRC_INTEGRITY:
		return "integrity";
	case POL_SRC_ERROR:
		return "error";
	}
	return "unknown";
}

int pol_source_parse(const char *s, enum pol_source *out)
{
	for (int i = POL_SRC_NONE; s && i <= POL_SRC_ERROR; i++)
		if (strcmp(s, pol_source_name((enum pol_source)i)) == 0) {
			*out = (enum pol_source)i;
			return 0;
		}
	return -EINVAL;
}

static const char *const verdict_names[] = {
	[POL_DENY_CRITICAL] = "deny_critical",
	[POL_DENY] = "deny",
	[POL_ALLOW] = "allow",
	[POL_ASK] = "ask",
	[POL_UNDECIDED] = "undecided",
};

const char *pol_verdict_name(enum pol_verdict v)
{
	return pol_name_of(verdict_names, WD_ARRAY_SIZE(verdict_names), v, "unknown");
}

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* ---- session grants ----------------------------------------------------------- */

struct pol_session {
	struct pol_request **grants;
	size_t n;
};

struct pol_session *pol_session_new(void)
{
	return wd_calloc(1, sizeof(struct pol_session));
}

void pol_session_free(struct pol_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		pol_request_free(s->grants[i]);
	free(s->grants);
	free(s);
}

/* Exactly the same exec: program, argv and run-changing environment. */
bool pol_exec_same(const struct pol_request *a, const struct pol_request *b)
{
	return str_eq(a->path, b->path) && wd_strv_equal(a->argv, b->argv) &&
	       wd_strv_equal(a->env, b->env) && str_eq(a->interp, b->interp);
}

/* Exactly the same open: path, other path and access. */
bool pol_open_same(const struct pol_request *a, const struct pol_request *b)
{
	return str_eq(a->opath, b->opath) && str_eq(a->opath2, b->opath2) && a->access == b->access;
}

/* Exactly the same request, by its kind's measure. */
static bool same_request(const struct pol_request *a, const struct pol_request *b)
{
	if (a->kind != b->kind)
		return false;
	const struct pol_kind_ops *k = pol_kind_ops(a->kind);
	return k && k->same && k->same(a, b);
}

const struct pol_request *pol_session_covering(const struct pol_session *s,
					       const struct pol_request *r)
{
	for (size_t i = 0; s && r && i < s->n; i++)
		if (same_request(s->grants[i], r))
			return s->grants[i];
	return NULL;
}

void pol_session_grant(struct pol_session *s, const struct pol_request *r)
{
	if (!s || !r)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (same_request(s->grants[i], r))
			return;
	struct pol_request *c = wd_calloc(1, sizeof(*c));
	c->kind = r->kind;
	c->path = r->path ? wd_strdup(r->path) : NULL;
	c->interp = r->interp ? wd_strdup(r->interp) : NULL;
	c->argv = r->argv ? wd_strv_dup(r->argv, &c->argc) : NULL;
	c->env = r->env ? wd_strv_dup(r->env, &c->envc) : NULL;
	c->env_risky = r->env_risky;
	c->opath = r->opath ? wd_strdup(r->opath) : NULL;
	c->opath2 = r->opath2 ? wd_strdup(r->opath2) : NULL;
	c->access = r->access;
	if (r->kind == POL_CONNECT)
		pol_connect_copy(c, r);
	s->grants = wd_realloc(s->grants, (s->n + 1) * sizeof(*s->grants));
	s->grants[s->n++] = c;
}

/* ---- matching ------------------------------------------------------------------- */

bool pol_exec_grant_matches(const struct pol_grant *g, const struct pol_request *r)
{
	/* A grant was given for the command, not for the command with a
	 * preloaded library: any run-changing variable voids it. */
	return g->argv && r->env_risky == 0 && wd_strv_equal(g->argv, r->argv) &&
	       (!g->program || str_eq(g->program, r->path));
}

bool pol_open_grant_matches(const struct pol_grant *g, const struct pol_request *r)
{
	return g->path && !r->opath2 && strcmp(g->path, r->opath) == 0 && g->access == r->access;
}

static bool grant_matches(const struct pol_grant *g, const struct pol_request *r)
{
	const struct pol_kind_ops *k = pol_kind_ops(r->kind);
	return k && k->grant_matches && k->grant_matches(g, r);
}

/* The rule's argv prefix against |argv| from |k|; element 0 by program name
 * (or by exact path when the rule names one). */
static bool prefix_at(const struct pol_rule *ru, const struct pol_request *r, size_t k)
{
	if (k + ru->ncommand > r->argc)
		return false;
	const char *first = ru->command[0];
	if (strchr(first, '/')) {
		if (strcmp(first, r->argv[k]) != 0 && !(k == 0 && str_eq(first, r->path)))
			return false;
	} else if (k == 0) {
		/* Every name the program answers to: the name it was invoked by
		 * and the name of the file that starts (a symlink "x" to touch
		 * is touch). A deny or ask rule holds if any of them is its
		 * name; an allow rule only if each of them is. */
		char inv[128], res[128];
		pol_cls_identity(r->path, r->argv[0], inv, sizeof(inv));
		if (r->resolved)
			pol_cls_identity(r->resolved, inv, res, sizeof(res));
		else
			snprintf(res, sizeof(res), "%s", inv);
		bool a = strcmp(first, inv) == 0, b = strcmp(first, res) == 0;
		if (ru->action == RULE_ALLOW ? !(a && b) : !(a || b))
			return false;
	} else if (strcmp(first, pol_cls_prog_name(r->argv[k])) != 0) {
		return false;
	}
	for (size_t i = 1; i < ru->ncommand; i++)
		if (strcmp(ru->command[i], r->argv[k + i]) != 0)
			return false;
	return true;
}

static bool access_matches(enum rule_access a, unsigned access)
{
	switch (a) {
	case RACC_READ:
		return access == POL_ACC_READ;
	case RACC_WRITE:
		return (access & ~(unsigned)POL_ACC_READ) != 0;
	case RACC_ANY:
		return true;
	}
	return false;
}

/* Whether a path of an open request needs its own decision whatever else
 * the request does: a sensitive file or a control file. */
static bool guarded(const struct pol_config *c, const char *path)
{
	return path[0] == '/' || pol_is_sensitive(c, path, NULL) || pol_is_control(c, path, NULL);
}

/* |deep|: deny and ask rules also match the command behind wrappers
 * (sudo git push, env X=1 git push). */
bool pol_exec_rule_matches(const struct pol_rule *ru, const struct pol_request *r,
			   const struct pol_config *c, bool deep)
{
	(void)c;
	if (!ru->command)
		return false;
	if (prefix_at(ru, r, 0))
		return true;
	if (!deep)
		return false;
	long k = pol_cls_unwrap(r->argv, r->argc, NULL, NULL);
	return k > 0 && prefix_at(ru, r, (size_t)k);
}

bool pol_open_rule_matches(const struct pol_rule *ru, const struct pol_request *r,
			   const struct pol_config *c, bool deep)
{
	if (!ru->glob || !access_matches(ru->access, r->access))
		return false;
	/* The project's rules are written for its own (relative) paths: a
	 * path outside it (a gated place, absolute) matches only a rule whose
	 * glob is absolute too. */
	if (r->opath[0] == '/' && ru->glob[0] != '/')
		return false;
	bool m1 = pol_glob_match(ru->glob, r->opath);
	bool m2 = r->opath2 && (r->opath2[0] != '/' || ru->glob[0] == '/') &&
		  pol_glob_match(ru->glob, r->opath2);
	if (deep)
		return m1 || m2;
	/* An allow rule names what it allows: a rename or link with one side
	 * it names allows the other side only when that side is neither
	 * sensitive nor a control file (a rule for docs/ must not allow moving
	 * docs/x over .git/config or .env; ".git/config" allows git's rename
	 * of config.lock over it). */
	if (!m1 && !m2)
		return false;
	if (!m1 && guarded(c, r->opath))
		return false;
	return !r->opath2 || m2 || !guarded(c, r->opath2);
}

static bool rule_matches(const struct pol_rule *ru, const struct pol_request *r,
			 const struct pol_config *c, bool deep)
{
	const struct pol_kind_ops *k = pol_kind_ops(r->kind);
	return k && k->rule_matches && k->rule_matches(ru, r, c, deep);
}

/* ---- deciding ------------------------------------------------------------------- */

void pol_decision_set(struct pol_decision *out, enum pol_verdict v, enum pol_source src,
		      const char *matched, const char *fmt, ...)
{
	out->verdict = v;
	out->source = src;
	va_list ap;
	va_start(ap, fmt);
	pol_reason_vset(out->reason, sizeof(out->reason), out->matched, sizeof(out->matched),
			matched, fmt, ap);
	va_end(ap);
}

/* A "#!" script of the system's whose words the fast path's tables know
 * (debianutils' which): read-only when the agent cannot have written it and
 * the system's sh runs it. A non-interactive sh reads no start-up file;
 * the variables that would make it (ENV, BASH_ENV) are not known harmless,
 * so they keep the request off the fast path anyway. */
static bool system_script(const struct pol_request *r, const struct pol_config *c)
{
	static const char *const scripts[] = {"which.debianutils"};
	static const char *const shells[] = {"/bin/sh", "/usr/bin/sh", "/bin/dash",
					     "/usr/bin/dash"};
	(void)c;
	if (r->agent_writable || !r->interp)
		return false;
	const char *file = r->resolved ? r->resolved : r->path;
	const char *base = strrchr(file, '/');
	if (file[0] != '/' || !base)
		return false;
	bool known = false, sh = false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(scripts); i++)
		known |= strcmp(base + 1, scripts[i]) == 0 &&
			 (strncmp(file, "/usr/bin/", 9) == 0 || strncmp(file, "/bin/", 5) == 0);
	for (size_t i = 0; i < WD_ARRAY_SIZE(shells); i++)
		sh |= strcmp(r->interp, shells[i]) == 0;
	return known && sh;
}

static void classify_request(const struct pol_request *r, const struct pol_config *c,
			     struct pol_cls_result *res, struct wd_sb *trace)
{
	struct pol_cls_env e = {.cfg = c, .path = r->path, .cwd = r->cwd_abs};
	e.project = c && c->project ? c->project : r->project;
	e.home = c ? c->home : NULL;
	e.resolved = r->resolved;
	e.agent_writable = r->agent_writable;
	e.env_home = r->env_home;
	e.env_xdg_config = r->env_xdg_config;
	e.trace = trace;
	if (!e.cwd)
		e.cwd = e.project;
	memset(res, 0, sizeof(*res));
	res->cls = POL_CLASS_READ_ONLY;
	if (r->envc) {
		const char *eq = strchr(r->env[0], '=');
		int nl = eq ? (int)(eq - r->env[0]) : (int)strlen(r->env[0]);
		pol_cls_raise(res, POL_CLASS_OTHER, "",
			      "the environment sets %.*s, which is not a variable known harmless",
			      nl, r->env[0]);
		snprintf(res->matched, sizeof(res->matched), "%.*s", nl, r->env[0]);
		res->risky_env = true;
		if (trace) {
			wd_sb_puts(trace, "environment not known harmless:");
			for (size_t i = 0; i < r->envc; i++) {
				const char *q = strchr(r->env[i], '=');
				wd_sb_printf(trace, " %.*s",
					     q ? (int)(q - r->env[i]) : (int)strlen(r->env[i]),
					     r->env[i]);
			}
			wd_sb_putc(trace, '\n');
		}
	}
	if (r->interp && !system_script(r, c))
		pol_cls_raise(res, POL_CLASS_OTHER, r->path, "%.100s is a script run by %.100s",
			      r->path, r->interp);
	pol_cls_argv(&e, r->argv, r->argc, 0, res);
}

char *pol_explain_grammar(const struct pol_request *r, const struct pol_config *c)
{
	if (!r || r->kind != POL_EXEC)
		return NULL;
	struct wd_sb sb = {0};
	struct pol_cls_result res;
	classify_request(r, c, &res, &sb);
	return wd_sb_steal(&sb);
}

static bool program_in_project(const struct pol_request *r, const struct pol_config *c)
{
	const char *project = c && c->project ? c->project : r->project;
	if (!project || !r->path || r->path[0] != '/')
		return r->path && r->path[0] != '/';
	size_t l = strlen(project);
	return strncmp(r->path, project, l) == 0 && r->path[l] == '/';
}

/* Session grants, project grants, ask rules, allow rules. True when one
 * decided. */
static bool decide_grants_rules(const struct pol_request *r, const struct pol_config *c,
				const struct pol_session *s, bool sensitive, int64_t now_us,
				struct pol_decision *out)
{
	for (size_t i = 0; s && i < s->n; i++) {
		if (same_request(s->grants[i], r)) {
			pol_decision_set(out, POL_ALLOW, POL_SRC_SESSION_GRANT, "session",
					 "you allowed exactly this for the rest of the session");
			return true;
		}
	}
	char m[32];
	for (size_t i = 0; c && i < c->ngrants; i++) {
		if (grant_matches(&c->grants[i], r)) {
			snprintf(m, sizeof(m), "grants[%zu]", i);
			pol_decision_set(out, POL_ALLOW, POL_SRC_GRANT, m,
					 "a project grant by %.60s allows exactly this",
					 c->grants[i].by ? c->grants[i].by : "someone");
			return true;
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		enum rule_action want = pass == 0 ? RULE_ASK : RULE_ALLOW;
		size_t k;
		/* An accepted rule covers a request exactly, as a grant does; a
		 * run-changing environment is an extra field, so it never matches. */
		if (pass == 1 && pol_accepted_covers(c, r, now_us, &k)) {
			snprintf(m, sizeof(m), "accepted_rules[%zu]", k);
			pol_decision_set(out, POL_ALLOW, POL_SRC_ACCEPTED_RULE, m,
					 "accepted rule %zu (by %.60s) covers exactly this", k,
					 c->accepted[k].by ? c->accepted[k].by : "someone");
			return true;
		}
		for (size_t i = 0; c && i < c->nrules; i++) {
			const struct pol_rule *ru = &c->rules[i];
			if (ru->action != want || !rule_matches(ru, r, c, want == RULE_ASK))
				continue;
			/* A command prefix was not written with secrets in mind: an
			 * allow rule does not cover a sensitive argument. */
			if (want == RULE_ALLOW &&
			    pol_kind_ops(r->kind)->sensitive_voids_allow_rules &&
			    (sensitive || r->env_risky))
				continue;
			snprintf(m, sizeof(m), "rules[%zu]", i);
			if (want == RULE_ASK)
				pol_decision_set(
					out, POL_ASK, POL_SRC_RULE, m,
					"rule %zu of the project config asks a person for this", i);
			else
				pol_decision_set(out, POL_ALLOW, POL_SRC_RULE, m,
						 "rule %zu of the project config allows this", i);
			return true;
		}
	}
	return false;
}

/* Ask rules alone (decide_grants_rules() runs them before allowances). */
static bool ask_rules(const struct pol_request *r, const struct pol_config *c,
		      struct pol_decision *out)
{
	char m[32];
	for (size_t i = 0; c && i < c->nrules; i++) {
		if (c->rules[i].action == RULE_ASK && rule_matches(&c->rules[i], r, c, true)) {
			snprintf(m, sizeof(m), "rules[%zu]", i);
			pol_decision_set(out, POL_ASK, POL_SRC_RULE, m,
					 "rule %zu of the project config asks a person for this",
					 i);
			return true;
		}
	}
	return false;
}

static bool deny_rules(const struct pol_request *r, const struct pol_config *c,
		       struct pol_decision *out)
{
	char m[32];
	for (size_t i = 0; c && i < c->nrules; i++) {
		if (c->rules[i].action == RULE_DENY && rule_matches(&c->rules[i], r, c, true)) {
			snprintf(m, sizeof(m), "rules[%zu]", i);
			pol_decision_set(out, POL_DENY, POL_SRC_RULE, m,
					 "rule %zu of the project config denies this", i);
			return true;
		}
	}
	return false;
}

/* agent harnesses: a Claude Code wrapper around one plain command meets
 * deny rules, grants and rules as that command would alone (harness.c). */
static bool harness_deny(const struct pol_request *r, const struct pol_config *c,
			 struct pol_decision *out)
{
	struct pol_request v;
	if (!c || !pol_hn_inner_view(r, c->home, &v))
		return false;
	bool hit = deny_rules(&v, c, out);
	pol_hn_inner_view_free(&v);
	return hit;
}

static bool harness_grants(const struct pol_request *r, const struct pol_config *c,
			   const struct pol_session *s, bool sensitive, int64_t now_us,
			   struct pol_decision *out)
{
	struct pol_request v;
	if (!c || !pol_hn_inner_view(r, c->home, &v))
		return false;
	bool hit = decide_grants_rules(&v, c, s, sensitive, now_us, out);
	pol_hn_inner_view_free(&v);
	return hit;
}

/*
 * A program the agent can have written (a copy of touch named ls in /tmp, a
 * symlink in the project, anything under a place Landlock lets it write, or
 * owned by someone else than root or the invoking user) is not what its
 * name says: every allowance by name (grants, session grants, accepted and
 * allow rules, the fast path) is skipped and it goes to the judge, then the
 * tier. What refuses by name (hard deny, deny and ask rules) still applies,
 * and so does the cover of an allowed tree, which never depended on names.
 */
static bool agent_written(const struct pol_request *r, const struct pol_context *ctx,
			  bool sensitive, struct pol_decision *out)
{
	if (!r->agent_writable)
		return false;
	if (ctx && ctx->covered && !sensitive) {
		pol_decision_set(out, POL_ALLOW, POL_SRC_COVERED, "",
				 "an allowed command higher in this process tree covers it");
		out->covers = pol_exec_covers(r);
		return true;
	}
	const char *why = r->writable_why ? r->writable_why : "written where the agent can write";
	const char *file = r->resolved ? r->resolved : r->path; /* the file that runs */
	/* The reason starts with the phrase explain and the audit search for. */
	if (strncmp(why, "written where the agent can write", 33) == 0)
		pol_decision_set(out, POL_UNDECIDED, POL_SRC_NONE, file, "%.120s: %.200s", file,
				 why);
	else
		pol_decision_set(out, POL_UNDECIDED, POL_SRC_NONE, file,
				 "%.120s: written where the agent can write (%.200s)", file, why);
	return true;
}

void pol_exec_decide(const struct pol_request *r, const struct pol_config *c,
		     const struct pol_session *s, const struct pol_context *ctx, int64_t now_us,
		     struct pol_decision *out)
{
	struct pol_cls_result cls;
	classify_request(r, c, &cls, NULL);
	if (cls.cls == POL_CLASS_CRITICAL) {
		pol_decision_set(out, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, cls.matched, "%s",
				 cls.reason);
		return;
	}
	if (deny_rules(r, c, out) || harness_deny(r, c, out))
		return;
	if (r->agent_writable && ask_rules(r, c, out))
		return;
	if (agent_written(r, ctx, cls.sensitive, out))
		return;
	if (decide_grants_rules(r, c, s, cls.sensitive, now_us, out) ||
	    harness_grants(r, c, s, cls.sensitive, now_us, out)) {
		out->covers = out->verdict == POL_ALLOW && pol_exec_covers(r);
		return;
	}
	if (ctx && ctx->covered && !cls.sensitive) {
		pol_decision_set(out, POL_ALLOW, POL_SRC_COVERED, "",
				 "an allowed command higher in this process tree covers it");
		out->covers = pol_exec_covers(r);
		return;
	}
	bool fast = cls.cls == POL_CLASS_READ_ONLY && !(ctx && ctx->no_fast_path);
	/* Review runs skip the sensitive branch for reads (docs/design.md,
	 * section "Review runs"): a command that is read-only but for a
	 * sensitive argument runs. */
	bool review_read = ctx && ctx->review && cls.cls == POL_CLASS_OTHER && cls.sensitive &&
			   !(ctx && ctx->no_fast_path);
	if ((fast || review_read) && program_in_project(r, c)) {
		pol_decision_set(out, POL_UNDECIDED, POL_SRC_NONE, r->path,
				 "the program %.120s comes from the project, not the system",
				 r->path);
		return;
	}
	if (fast) {
		pol_decision_set(out, POL_ALLOW, POL_SRC_FAST_PATH, cls.matched, "%s", cls.reason);
		out->covers = false;
		return;
	}
	if (review_read) {
		pol_decision_set(out, POL_ALLOW, POL_SRC_FAST_PATH, cls.matched,
				 "a review run reads sensitive files without asking");
		out->covers = false;
		return;
	}
	pol_decision_set(out, POL_UNDECIDED, POL_SRC_NONE, cls.matched, "%s", cls.reason);
}

static bool open_writes(unsigned access)
{
	return (access & ~(unsigned)POL_ACC_READ) != 0;
}

static bool hard_deny_open(const struct pol_request *r, const struct pol_config *c,
			   struct pol_decision *out)
{
	if (!open_writes(r->access))
		return false;
	const char *paths[2] = {r->opath, r->opath2};
	for (int i = 0; i < 2; i++) {
		const char *p = paths[i];
		if (!p)
			continue;
		const char *dir;
		if (pol_hd_is_system_path(p, &dir)) {
			pol_decision_set(out, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, dir,
					 "it changes %.120s inside %s, a system directory", p, dir);
			return true;
		}
		if (pol_is_write_protected(NULL, p)) {
			pol_decision_set(
				out, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, ".warden/",
				"%.120s is warden's own state, which the agent may not change", p);
			return true;
		}
		if (pol_is_write_protected(c, p)) {
			pol_decision_set(out, POL_DENY, POL_SRC_RULE, "write_protected",
					 "%.120s is write-protected by the project config", p);
			return true;
		}
	}
	return false;
}

void pol_open_decide(const struct pol_request *r, const struct pol_config *c,
		     const struct pol_session *s, const struct pol_context *ctx, int64_t now_us,
		     struct pol_decision *out)
{
	if (hard_deny_open(r, c, out) || deny_rules(r, c, out))
		return;
	const char *marker = NULL;
	bool sensitive = pol_is_sensitive(c, r->opath, &marker);
	if (!sensitive && r->opath2)
		sensitive = pol_is_sensitive(c, r->opath2, &marker);
	/* The views name the project's files by relative path; an absolute
	 * one is in a gated place outside it, where the user asked for every
	 * open to be decided, whatever its name. */
	if (!sensitive && r->opath[0] == '/') {
		sensitive = true;
		marker = "a gated place outside the project";
	}
	/* Review runs read the project without a person: the sensitive branch
	 * is skipped for reads, never for writes, and never outside the
	 * project (a gated place's paths are absolute): there the user asked
	 * for every open to be decided. */
	if (ctx && ctx->review && r->access == POL_ACC_READ && r->opath[0] != '/') {
		pol_decision_set(out, POL_ALLOW, POL_SRC_FAST_PATH, sensitive ? marker : "",
				 "a review run reads files without asking");
		return;
	}
	if (decide_grants_rules(r, c, s, sensitive, now_us, out))
		return;
	/* A control file is never covered: what plants code for the host
	 * needs its own decision, whoever runs it. */
	bool control = pol_is_control(c, r->opath, NULL) ||
		       (r->opath2 && pol_is_control(c, r->opath2, NULL));
	if (ctx && ctx->covered && !sensitive && !control) {
		pol_decision_set(out, POL_ALLOW, POL_SRC_COVERED, "",
				 "an allowed command higher in this process tree covers it");
		return;
	}
	if (sensitive) {
		pol_decision_set(out, POL_UNDECIDED, POL_SRC_NONE, marker,
				 "%.120s matches the sensitive marker \"%s\"", r->opath, marker);
		return;
	}
	const char *pattern = NULL;
	const char *cpath = r->opath;
	if (!pol_is_control(c, cpath, &pattern) && r->opath2 &&
	    pol_is_control(c, r->opath2, &pattern))
		cpath = r->opath2;
	if (pattern) {
		pol_decision_set(
			out, POL_UNDECIDED, POL_SRC_NONE, pattern,
			"%.120s is a control file (\"%s\"): the host runs code from it later "
			"(git, direnv, an editor), outside the sandbox",
			cpath, pattern);
		return;
	}
	if (r->access == POL_ACC_READ && !(ctx && ctx->no_fast_path)) {
		pol_decision_set(out, POL_ALLOW, POL_SRC_FAST_PATH, "",
				 "reading a file that is not sensitive");
		return;
	}
	if (r->access == POL_ACC_READ) {
		pol_decision_set(
			out, POL_UNDECIDED, POL_SRC_NONE, "",
			"%.120s is a sensitive file under another name (a hard link, or below a "
			"sensitive directory)",
			r->opath);
		return;
	}
	pol_decision_set(out, POL_UNDECIDED, POL_SRC_NONE, "",
			 "a change to %.120s needs a decision", r->opath);
}

void pol_decide(const struct pol_request *r, const struct pol_config *c,
		const struct pol_session *s, const struct pol_context *ctx, int64_t now_us,
		struct pol_decision *out)
{
	memset(out, 0, sizeof(*out));
	pol_decision_set(out, POL_UNDECIDED, POL_SRC_NONE, "", "nothing decided this request");
	if (!r) {
		pol_decision_set(out, POL_UNDECIDED, POL_SRC_NONE, "",
				 "there is no request to decide");
		return;
	}
	const struct pol_kind_ops *k = pol_kind_ops(r->kind);
	if (k && k->decide)
		k->decide(r, c, s, ctx, now_us, out);
}

/* ---- coverage ------------------------------------------------------------------- */

static const char *const repls[] = {"python", "python2", "python3", "node", "perl", "ruby",
				    "php",    "irb",	 "lua",	    "deno", "bun",  NULL};

bool pol_exec_covers(const struct pol_request *r)
{
	if (!r || r->kind != POL_EXEC || r->interp)
		return false;
	long k = pol_cls_unwrap(r->argv, r->argc, NULL, NULL);
	if (k < 0)
		return false;
	char buf[128], rbuf[128];
	const char *name = k == 0 ? pol_cls_identity(r->path, r->argv[0], buf, sizeof(buf))
				  : pol_cls_prog_name(r->argv[k]);
	/* A shell under another name (a symlink "x" to bash) is a shell. */
	const char *rname = k == 0 && r->resolved
				    ? pol_cls_identity(r->resolved, name, rbuf, sizeof(rbuf))
				    : name;
	char *const *argv = r->argv + k;
	size_t argc = r->argc - (size_t)k;
	if (pol_cls_is_shell(name) || pol_cls_is_shell(rname) || strcmp(name, "busybox") == 0 ||
	    strcmp(rname, "busybox") == 0) {
		/* Only sh -c SCRIPT covers: a shell reading a terminal, a pipe or
		 * a script file would launder whatever comes later. */
		for (size_t i = 1; i < argc; i++) {
			const char *a = argv[i];
			if (a[0] != '-' || a[1] == '-')
				break;
			if (strchr(a, 'c'))
				return i + 1 < argc;
		}
		return false;
	}
	for (size_t i = 0; repls[i]; i++) {
		if (strncmp(name, repls[i], strlen(repls[i])) != 0)
			continue;
		const char *rest = name + strlen(repls[i]);
		if (strspn(rest, "0123456789.") != strlen(rest))
			continue;
		/* An interpreter with no program reads one from its input. */
		return argc > 1 && strcmp(argv[argc - 1], "-") != 0 && strcmp(argv[1], "-i") != 0;
	}
	return true;
}
