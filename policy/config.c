/*
 * config.c: the parser of .warden/permissions.json.
 *
 * cJSON parses; every value is then validated, and every problem becomes a
 * pol_config_error with the line of its key (from jsonlines.c), the key's
 * path and a sentence saying what to do. All problems are reported, up to
 * MAX_ERRORS, after which one more error says how many were left out. A
 * config with any problem yields no config at all: nothing runs on half a
 * config.
 *
 * See docs/design.md, section "Configuration".
 */
#include "config_int.h"
#include "memory_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void parse_rule(struct parser *p, const cJSON *v, const char *path, struct pol_rule *ru)
{
	if (!pol_cfg_check_object(p, v, path, "action command path access comment", "a rule"))
		return;
	const char *action = pol_cfg_string(p, v, path, "action", true);
	if (action) {
		if (strcmp(action, "allow") == 0)
			ru->action = RULE_ALLOW;
		else if (strcmp(action, "ask") == 0)
			ru->action = RULE_ASK;
		else if (strcmp(action, "deny") == 0)
			ru->action = RULE_DENY;
		else {
			wd_autofree char *kp = pol_cfg_child_path(path, "action");
			pol_cfg_error(
				p, kp, 0,
				"\"%.60s\" is not an action; use \"allow\", \"ask\" or \"deny\"",
				action);
		}
	}
	const cJSON *cmd = pol_cfg_get(v, "command");
	const cJSON *pth = pol_cfg_get(v, "path");
	const cJSON *acc = pol_cfg_get(v, "access");
	if (cmd && pth)
		pol_cfg_error(
			p, path, 0,
			"a rule has either \"command\" or \"path\", not both; split it in two");
	else if (!cmd && !pth)
		pol_cfg_error(p, path, 0,
			      "a rule needs \"command\" (an argv prefix) or \"path\" (a glob)");
	if (cmd) {
		wd_autofree char *kp = pol_cfg_child_path(path, "command");
		ru->command = pol_cfg_argv(p, cmd, kp, &ru->ncommand);
		if (acc) {
			wd_autofree char *ap = pol_cfg_child_path(path, "access");
			pol_cfg_error(p, ap, 0, "\"access\" applies to path rules only; remove it");
		}
	}
	if (pth) {
		const char *g = pol_cfg_string(p, v, path, "path", true);
		wd_autofree char *problem = NULL;
		if (g)
			pol_glob_check(g, &problem);
		wd_autofree char *kp = pol_cfg_child_path(path, "path");
		if (problem)
			pol_cfg_error(p, kp, 0, "bad glob \"%.60s\": %s", g, problem);
		else if (g)
			ru->glob = wd_strdup(g);
		ru->access = RACC_ANY;
		const char *a = acc ? pol_cfg_string(p, v, path, "access", false) : NULL;
		if (a) {
			if (strcmp(a, "read") == 0)
				ru->access = RACC_READ;
			else if (strcmp(a, "write") == 0)
				ru->access = RACC_WRITE;
			else if (strcmp(a, "any") != 0) {
				wd_autofree char *ap = pol_cfg_child_path(path, "access");
				pol_cfg_error(
					p, ap, 0,
					"\"%.60s\" is not an access; use \"read\", \"write\" or "
					"\"any\"",
					a);
			}
		}
	}
	if (pol_cfg_get(v, "comment"))
		(void)pol_cfg_string(p, v, path, "comment", false);
}

static unsigned parse_access_value(struct parser *p, const cJSON *v, const char *kp)
{
	unsigned acc = 0;
	if (cJSON_IsString(v)) {
		acc = pol_access_from_name(v->valuestring);
		if (!acc)
			pol_cfg_error(
				p, kp, 0,
				"\"%.40s\" is not an access; use read, write, create, delete, "
				"rename_from, rename_to, link, symlink, chmod, chown, utimes, "
				"xattr or truncate",
				v->valuestring);
		return acc;
	}
	if (!cJSON_IsArray(v) || !v->child) {
		pol_cfg_error(p, kp, 0, "must be an access name or a non-empty array of them");
		return 0;
	}
	size_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		wd_autofree char *ep = wd_asprintf("%s[%zu]", kp, i);
		unsigned bit = cJSON_IsString(e) ? pol_access_from_name(e->valuestring) : 0;
		if (!bit) {
			pol_cfg_error(
				p, ep, 0,
				"is not an access; use read, write, create, delete, "
				"rename_from, rename_to, link, symlink, chmod, chown, utimes, "
				"xattr or truncate");
			return 0;
		}
		acc |= bit;
	}
	return acc;
}

static void parse_grant(struct parser *p, const cJSON *v, const char *path, struct pol_grant *g)
{
	if (!pol_cfg_check_object(p, v, path, "command program path access host by at", "a grant"))
		return;
	const cJSON *cmd = pol_cfg_get(v, "command");
	const cJSON *pth = pol_cfg_get(v, "path");
	const cJSON *host = pol_cfg_get(v, "host");
	if ((cmd != NULL) + (pth != NULL) + (host != NULL) > 1)
		pol_cfg_error(p, path, 0,
			      "a grant has one of \"command\", \"path\" or \"host\"; split it");
	else if (!cmd && !pth && !host)
		pol_cfg_error(p, path, 0,
			      "a grant needs \"command\" (an exact argv), \"path\" or \"host\" "
			      "(a destination's name or address)");
	if (host) {
		const char *h = pol_cfg_string(p, v, path, "host", true);
		wd_autofree char *hp = pol_cfg_child_path(path, "host");
		if (h && pol_net_host_canon(h, &g->host) < 0)
			pol_cfg_error(p, hp, 0,
				      "\"%.60s\" is not a host; write a name (github.com) or an "
				      "address (140.82.112.3, 2001:db8::1), without a port",
				      h);
		/* A host grant is any port of the host, nothing else. */
		static const char *const others[] = {"program", "access"};
		for (size_t i = 0; !cmd && !pth && i < WD_ARRAY_SIZE(others); i++) {
			wd_autofree char *op = pol_cfg_child_path(path, others[i]);
			if (pol_cfg_get(v, others[i]))
				pol_cfg_error(p, op, 0, "a host grant has no \"%s\"; remove it",
					      others[i]);
		}
	}
	if (cmd) {
		wd_autofree char *kp = pol_cfg_child_path(path, "command");
		size_t n;
		g->argv = pol_cfg_argv(p, cmd, kp, &n);
		const char *prog = pol_cfg_string(p, v, path, "program", false);
		if (prog && prog[0] != '/') {
			wd_autofree char *pp = pol_cfg_child_path(path, "program");
			pol_cfg_error(p, pp, 0, "must be an absolute path such as /usr/bin/make");
		} else if (prog) {
			g->program = wd_strdup(prog);
		}
	}
	if (pth) {
		const char *s = pol_cfg_string(p, v, path, "path", true);
		if (s)
			g->path = wd_strdup(s);
		const cJSON *acc = pol_cfg_get(v, "access");
		wd_autofree char *ap = pol_cfg_child_path(path, "access");
		if (!acc)
			pol_cfg_error(p, path, 0,
				      "\"access\" is missing; a path grant names its access");
		else
			g->access = parse_access_value(p, acc, ap);
	}
	const char *by = pol_cfg_string(p, v, path, "by", true);
	if (by)
		g->by = wd_strdup(by);
	const char *at = pol_cfg_string(p, v, path, "at", true);
	if (at && pol_parse_iso_time(at, &g->at_us) != 0) {
		wd_autofree char *tp = pol_cfg_child_path(path, "at");
		pol_cfg_error(p, tp, 0, "\"%.40s\" is not a time; use 2026-12-02T12:00:00Z", at);
	}
}

/* "tmp": {"share": [...]}: places under /tmp, /var/tmp or /dev/shm the
 * sandbox shows as the host has them, inside its private ones. Each is
 * an absolute path without "." or "..", strictly below one of the three
 * (sharing all of /tmp would undo the private one). */
bool pol_tmp_share_valid(const char *path)
{
	static const char *const roots[] = {"/tmp", "/var/tmp", "/dev/shm"};
	if (!path || path[0] != '/')
		return false;
	wd_autofree char *lex = pol_path_lexical(path);
	bool under = false;
	for (size_t k = 0; k < sizeof(roots) / sizeof(roots[0]); k++)
		under |= strcmp(lex, roots[k]) != 0 && wd_path_within(lex, roots[k]);
	return under && strcmp(lex, path) == 0;
}

/* The strings under the one key |key| of the object |v| at |kp|
 * ("tmp": {"share": [...]}), each that |valid| accepts (an error, "\"S\"
 * |rule|", for each other); *n is their count. NULL when the key is
 * absent. Caller frees. */
static char **parse_keyed_list(struct parser *p, const cJSON *v, const char *kp, const char *key,
			       const char *what, bool absolute, bool (*valid)(const char *),
			       const char *rule, size_t *n)
{
	*n = 0;
	if (!pol_cfg_check_object(p, v, kp, key, what))
		return NULL;
	const cJSON *a = pol_cfg_get(v, key);
	if (!a)
		return NULL;
	wd_autofree char *ap = pol_cfg_child_path(kp, key);
	size_t k = 0;
	char **s = pol_cfg_strings(p, a, ap, &k, false, false, absolute);
	char **out = wd_calloc(k + 1, sizeof(char *));
	for (size_t i = 0; i < k; i++) {
		if (!valid(s[i])) {
			wd_autofree char *ep = wd_asprintf("%s[%zu]", ap, i);
			pol_cfg_error(p, ep, 0, "\"%.60s\" %s", s[i], rule);
			free(s[i]);
			continue;
		}
		out[(*n)++] = s[i];
	}
	free(s);
	return out;
}

static void parse_tmp(struct parser *p, const cJSON *v, const char *kp)
{
	size_t n;
	char **l =
		parse_keyed_list(p, v, kp, "share", "\"tmp\"", true, pol_tmp_share_valid,
				 "must be a clean absolute path below /tmp, /var/tmp or /dev/shm "
				 "(such as \"/tmp/.X11-unix\"), not one of them",
				 &n);
	if (l) {
		p->c->tmp_share = l;
		p->c->ntmp_share = n;
	}
}

/* One control_files pattern (control.c), checked. */
static char *take_control(struct parser *p, const char *s, const char *ep, const void *arg)
{
	(void)arg;
	wd_autofree char *problem = NULL;
	if (pol_control_check(s, &problem) < 0) {
		pol_cfg_error(p, ep, 0, "bad pattern \"%.60s\": %s", s, problem);
		return NULL;
	}
	return wd_strdup(s);
}

static void parse_outside(struct parser *p, const cJSON *v, const char *kp)
{
	if (!cJSON_IsArray(v)) {
		pol_cfg_error(p, kp, 0,
			      "must be an array of {\"path\": ..., \"mode\": "
			      "\"hide\"|\"gate\"|\"markers\"|\"open\"}");
		return;
	}
	struct pol_config *c = p->c;
	c->outside = wd_calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(*c->outside));
	size_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		wd_autofree char *ep = wd_asprintf("%s[%zu]", kp, i);
		if (!pol_cfg_check_object(p, e, ep, "path mode", "an outside place"))
			continue;
		const char *path = pol_cfg_string(p, e, ep, "path", true);
		const char *mode = pol_cfg_string(p, e, ep, "mode", true);
		bool ok = true;
		if (path && path[0] != '/' && strncmp(path, "~/", 2) != 0) {
			wd_autofree char *pp = pol_cfg_child_path(ep, "path");
			pol_cfg_error(p, pp, 0, "\"%.60s\" must be absolute or start with ~/",
				      path);
			ok = false;
		}
		enum pol_outside_mode m = POL_OUTSIDE_HIDE;
		if (mode && pol_outside_mode_parse(mode, &m) < 0) {
			wd_autofree char *mp = pol_cfg_child_path(ep, "mode");
			pol_cfg_error(
				p, mp, 0,
				"\"%.40s\" is not a mode; use \"hide\", \"gate\", \"markers\" or "
				"\"open\"",
				mode);
			ok = false;
		}
		if (ok && path && mode) {
			/* "~/.ssh/" is "~/.ssh": the same place, so that this
			 * entry replaces the built-in one instead of adding a
			 * second (a hide over the gate). "/" and "~/" stay. */
			char *clean = wd_strdup(path);
			size_t len = strlen(clean);
			while (len > 1 && clean[len - 1] == '/' && strcmp(clean, "~/") != 0)
				clean[--len] = '\0';
			c->outside[c->noutside].path = clean;
			c->outside[c->noutside].mode = m;
			c->noutside++;
		}
	}
}

/* ---- accepted_rules (approval memory) ------------------------------------------ */

/* One value of a condition: a string or a number, nothing else. */
static bool parse_cond_value(struct parser *p, const cJSON *v, const char *kp,
			     struct pol_mem_value *out)
{
	if (cJSON_IsNumber(v)) {
		out->num = true;
		out->d = v->valuedouble;
		return true;
	}
	if (cJSON_IsString(v)) {
		out->s = wd_strdup(v->valuestring);
		return true;
	}
	pol_cfg_error(p, kp, 0, "a value must be a string or a number, not %s",
		      pol_cfg_type_name(v));
	return false;
}

static bool parse_cond_bounds(struct parser *p, const cJSON *v, const char *kp,
			      struct pol_mem_cond *out)
{
	const cJSON *lo = pol_cfg_get(v, "min"), *hi = pol_cfg_get(v, "max");
	bool ok = true;
	const cJSON *b[2] = {lo, hi};
	for (int i = 0; i < 2; i++) {
		wd_autofree char *bp = pol_cfg_child_path(kp, i ? "max" : "min");
		if (!b[i]) {
			pol_cfg_error(p, kp, 0, "\"%s\" is missing; a range has both min and max",
				      i ? "max" : "min");
			ok = false;
		} else if (!cJSON_IsNumber(b[i])) {
			pol_cfg_error(p, bp, 0, "a bound must be a number, not %s",
				      pol_cfg_type_name(b[i]));
			ok = false;
		}
	}
	if (!ok)
		return false;
	if (lo->valuedouble > hi->valuedouble) {
		wd_autofree char *bp = pol_cfg_child_path(kp, "min");
		pol_cfg_error(p, bp, 0, "min %g is over max %g; swap them", lo->valuedouble,
			      hi->valuedouble);
		return false;
	}
	out->op = MEM_RANGE;
	out->lo = lo->valuedouble;
	out->hi = hi->valuedouble;
	return true;
}

static bool parse_cond_in(struct parser *p, const cJSON *in, const char *kp,
			  struct pol_mem_cond *out)
{
	wd_autofree char *ip = pol_cfg_child_path(kp, "in");
	int n = cJSON_IsArray(in) ? cJSON_GetArraySize(in) : 0;
	if (n < 1 || n > MEM_MAX_IN) {
		pol_cfg_error(p, ip, 0, "must be an array of 1 to %d strings or numbers",
			      MEM_MAX_IN);
		return false;
	}
	out->op = MEM_IN;
	out->v = wd_calloc((size_t)n, sizeof(*out->v));
	bool ok = true;
	size_t i = 0;
	for (const cJSON *e = in->child; e; e = e->next, i++) {
		wd_autofree char *ep = wd_asprintf("%s[%zu]", ip, i);
		if (parse_cond_value(p, e, ep, &out->v[out->nv]))
			out->nv++;
		else
			ok = false;
	}
	return ok;
}

/* A condition: a bare string or number (shorthand for eq), or an object
 * with exactly one of "eq", "in", or "min" and "max". */
static bool parse_condition(struct parser *p, const cJSON *v, const char *kp,
			    struct pol_mem_cond *out)
{
	if (cJSON_IsString(v) || cJSON_IsNumber(v)) {
		out->op = MEM_EQ;
		out->v = wd_calloc(1, sizeof(*out->v));
		out->nv = 1;
		return parse_cond_value(p, v, kp, &out->v[0]);
	}
	if (!cJSON_IsObject(v)) {
		pol_cfg_error(p, kp, 0,
			      "must be a value or {\"eq\": v}, {\"in\": [...]} or {\"min\": lo, "
			      "\"max\": hi}, not %s",
			      pol_cfg_type_name(v));
		return false;
	}
	size_t errs = p->errs->count;
	if (!pol_cfg_check_object(p, v, kp, "eq in min max", "a condition") ||
	    p->errs->count > errs)
		return false;
	const cJSON *eq = pol_cfg_get(v, "eq"), *in = pol_cfg_get(v, "in");
	bool range = pol_cfg_get(v, "min") || pol_cfg_get(v, "max");
	if ((eq != NULL) + (in != NULL) + range != 1) {
		pol_cfg_error(p, kp, 0,
			      "give exactly one of \"eq\", \"in\", or \"min\" and \"max\"");
		return false;
	}
	if (range)
		return parse_cond_bounds(p, v, kp, out);
	if (in)
		return parse_cond_in(p, in, kp, out);
	wd_autofree char *ep = pol_cfg_child_path(kp, "eq");
	out->op = MEM_EQ;
	out->v = wd_calloc(1, sizeof(*out->v));
	out->nv = 1;
	return parse_cond_value(p, eq, ep, &out->v[0]);
}

static void parse_conditions(struct parser *p, const cJSON *cond, const char *ep,
			     struct pol_accepted *a)
{
	wd_autofree char *cp = pol_cfg_child_path(ep, "conditions");
	if (!cond) {
		pol_cfg_error(p, ep, 0, "\"conditions\" is missing; add it");
		return;
	}
	if (!cJSON_IsObject(cond)) {
		pol_cfg_error(p, cp, 0,
			      "must be an object of conditions, one per field, such as "
			      "{\"arg1\": {\"in\": [\"a\", \"b\"]}}, not %s",
			      pol_cfg_type_name(cond));
		return;
	}
	if (!cond->child) {
		pol_cfg_error(p, cp, 0, "is empty; a rule names every field it covers");
		return;
	}
	a->conds = wd_calloc((size_t)cJSON_GetArraySize(cond), sizeof(*a->conds));
	for (const cJSON *k = cond->child; k; k = k->next) {
		wd_autofree char *fp = pol_cfg_child_path(cp, k->string);
		if (pol_cfg_get(cond, k->string) != k) {
			int nth = 0;
			for (const cJSON *o = cond->child; o != k; o = o->next)
				nth += strcmp(o->string, k->string) == 0;
			pol_cfg_error(p, fp, nth, "the field appears more than once; keep one");
			continue;
		}
		if (!k->string[0]) {
			pol_cfg_error(p, fp, 0, "a field needs a name");
			continue;
		}
		if (pol_mem_field_is_secret(k->string)) {
			pol_cfg_error(p, fp, 0,
				      "\"%.60s\" is a secret-named field; a rule never names one, "
				      "remove it",
				      k->string);
			continue;
		}
		struct pol_mem_cond *c = &a->conds[a->nconds++];
		c->field = wd_strdup(k->string);
		(void)parse_condition(p, k, fp, c);
	}
}

static void parse_accepted(struct parser *p, const cJSON *v, const char *kp)
{
	if (!cJSON_IsArray(v)) {
		pol_cfg_error(p, kp, 0, "must be an array of accepted rules, not %s",
			      pol_cfg_type_name(v));
		return;
	}
	size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
	p->c->accepted = wd_calloc(n + 1, sizeof(*p->c->accepted));
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		struct pol_accepted *a = &p->c->accepted[i];
		wd_autofree char *ep = wd_asprintf("%s[%zu]", kp, i);
		if (!pol_cfg_check_object(p, e, ep,
					  "id tool conditions accepted_at accepted_by review_days",
					  "an accepted rule"))
			continue;
		const char *id =
			pol_cfg_get(e, "id") ? pol_cfg_string(p, e, ep, "id", false) : NULL;
		const char *tool = pol_cfg_string(p, e, ep, "tool", true);
		const char *by = pol_cfg_string(p, e, ep, "accepted_by", true);
		a->id = id ? wd_strdup(id) : NULL;
		a->tool = tool ? wd_strdup(tool) : NULL;
		a->by = by ? wd_strdup(by) : NULL;
		const char *at = pol_cfg_string(p, e, ep, "accepted_at", true);
		if (at && pol_parse_iso_time(at, &a->at_us) != 0) {
			wd_autofree char *tp = pol_cfg_child_path(ep, "accepted_at");
			pol_cfg_error(p, tp, 0, "\"%.40s\" is not a time; use 2026-12-02T12:00:00Z",
				      at);
		}
		parse_conditions(p, pol_cfg_get(e, "conditions"), ep, a);
		if (!pol_cfg_get(e, "review_days"))
			pol_cfg_error(p, ep, 0, "\"review_days\" is missing; add it (1 to 3650)");
		else
			(void)pol_cfg_int(p, e, ep, "review_days", 1, 3650, &a->review_days);
	}
	p->c->naccepted = i;
	p->c->accepted_json = cJSON_PrintUnformatted(v);
}

static void parse_judge(struct parser *p, const cJSON *v, const char *kp)
{
	struct pol_config *c = p->c;
	if (!pol_cfg_check_object(p, v, kp, "url model timeout_ms connect_timeout_ms", "\"judge\""))
		return;
	c->has_judge = true;
	const char *url = pol_cfg_string(p, v, kp, "url", false);
	if (url && strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
		wd_autofree char *up = pol_cfg_child_path(kp, "url");
		pol_cfg_error(p, up, 0, "\"%.60s\" is not an http:// or https:// URL", url);
	} else if (url) {
		c->judge_url = wd_strdup(url);
	}
	const char *model = pol_cfg_string(p, v, kp, "model", false);
	if (model)
		c->judge_model = wd_strdup(model);
	(void)pol_cfg_int(p, v, kp, "timeout_ms", 1, 600000, &c->judge_timeout_ms);
	(void)pol_cfg_int(p, v, kp, "connect_timeout_ms", 1, 600000, &c->judge_connect_timeout_ms);
}

/* "sockets": {"allow": ["/run/app.sock", "/srv/app" (all under it)]}: absolute
 * paths or globs, without "..". */
static void parse_sockets(struct parser *p, const cJSON *v, const char *kp)
{
	if (!pol_cfg_check_object(p, v, kp, "allow", "\"sockets\""))
		return;
	const cJSON *a = pol_cfg_get(v, "allow");
	if (!a)
		return;
	wd_autofree char *ap = pol_cfg_child_path(kp, "allow");
	char **list = pol_cfg_strings(p, a, ap, &p->c->nsock_allow, false, true, true);
	p->c->sock_allow = list;
}

/* "env": {"keep": ["NAME", ...]}: variable names the agent keeps although
 * they look like secrets. */
static void parse_env(struct parser *p, const cJSON *v, const char *kp)
{
	size_t n;
	char **l = parse_keyed_list(p, v, kp, "keep", "\"env\"", false, pol_env_name_valid,
				    "is not a variable name (letters, digits and _, not starting "
				    "with a digit)",
				    &n);
	if (l) {
		p->c->env_keep = l;
		p->c->nenv_keep = n;
	}
}

static void parse_top(struct parser *p, const cJSON *root)
{
	static const char *const keys = "rules grants sensitive_resources write_protected writable "
					"outside accepted_rules tier judge tmp control_files "
					"sockets env network";
	if (!pol_cfg_check_object(p, root, "", keys, "the config"))
		return;
	struct pol_config *c = p->c;
	for (const cJSON *k = root->child; k; k = k->next) {
		if (pol_cfg_get(root, k->string) != k)
			continue; /* a duplicate, already reported */
		const char *key = k->string;
		if (strcmp(key, "rules") == 0 || strcmp(key, "grants") == 0) {
			bool rules = key[0] == 'r';
			if (!cJSON_IsArray(k)) {
				pol_cfg_error(p, key, 0, "must be an array of objects, not %s",
					      pol_cfg_type_name(k));
				continue;
			}
			size_t n = (size_t)cJSON_GetArraySize(k), i = 0;
			if (rules)
				c->rules = wd_calloc(n + 1, sizeof(*c->rules));
			else
				c->grants = wd_calloc(n + 1, sizeof(*c->grants));
			for (const cJSON *e = k->child; e; e = e->next, i++) {
				wd_autofree char *ep = wd_asprintf("%s[%zu]", key, i);
				if (rules)
					parse_rule(p, e, ep, &c->rules[c->nrules++]);
				else
					parse_grant(p, e, ep, &c->grants[c->ngrants++]);
			}
		} else if (strcmp(key, "sensitive_resources") == 0) {
			c->markers = pol_cfg_strings(p, k, key, &c->nmarkers, true, false, false);
		} else if (strcmp(key, "write_protected") == 0) {
			c->protect = pol_cfg_strings(p, k, key, &c->nprotect, false, true, false);
		} else if (strcmp(key, "control_files") == 0) {
			c->control = pol_cfg_list(p, k, key, "patterns", take_control, NULL,
						  &c->ncontrol);
			pol_control_set_free(c->control_set);
			c->control_set = pol_control_compile(c->control, c->ncontrol);
		} else if (strcmp(key, "writable") == 0) {
			c->writable = pol_cfg_strings(p, k, key, &c->nwritable, false, false, true);
		} else if (strcmp(key, "outside") == 0) {
			parse_outside(p, k, key);
		} else if (strcmp(key, "tmp") == 0) {
			parse_tmp(p, k, key);
		} else if (strcmp(key, "accepted_rules") == 0) {
			parse_accepted(p, k, key);
		} else if (strcmp(key, "tier") == 0) {
			const char *t = cJSON_IsString(k) ? k->valuestring : NULL;
			if (pol_tier_parse(t, &c->tier) < 0)
				pol_cfg_error(
					p, key, 0,
					"must be \"aggressive\", \"standard\" or \"passive\"");
		} else if (strcmp(key, "judge") == 0) {
			parse_judge(p, k, key);
		} else if (strcmp(key, "sockets") == 0) {
			parse_sockets(p, k, key);
		} else if (strcmp(key, "env") == 0) {
			parse_env(p, k, key);
		} else if (strcmp(key, "network") == 0) {
			pol_cfg_parse_network(p, k, key);
		}
	}
}

void pol_config_errors_free(struct pol_config_errors *e)
{
	if (!e)
		return;
	free(e->items);
	e->items = NULL;
	e->count = 0;
}

int pol_config_parse(const char *text, size_t len, const char *filename, struct pol_config **out,
		     struct pol_config_errors *errs)
{
	*out = NULL;
	errs->items = NULL;
	errs->count = 0;
	struct parser p = {.file = filename ? filename : "permissions.json", .errs = errs};
	if (!text)
		len = 0;
	const char *end = NULL;
	cJSON *root = len ? cJSON_ParseWithLengthOpts(text, len, &end, false) : NULL;
	if (!root) {
		const char *ep = cJSON_GetErrorPtr();
		size_t off =
			(ep && text && ep >= text && ep <= text + len) ? (size_t)(ep - text) : len;
		/* The scanner knows where a structural error is more precisely
		 * than cJSON, which may point past it. */
		struct pol_linemap *lm = len ? pol_linemap_build(text, len) : NULL;
		size_t soff;
		if (pol_linemap_error(lm, &soff) && soff < off)
			off = soff;
		pol_linemap_free(lm);
		p.lm = NULL;
		pol_cfg_error(&p, "", 0, "(syntax)"); /* line and text set below */
		struct pol_config_error *e = &errs->items[0];
		/* The error is at the next token: skip the white space cJSON
		 * stopped in front of. */
		while (off < len && strchr(" \t\r\n", text[off]))
			off++;
		e->line = len ? pol_line_of_offset(text, len, off) : 1;
		snprintf(e->key, sizeof(e->key), "(syntax)");
		snprintf(e->message, sizeof(e->message),
			 "%.60s:%d: %s: the file is not valid JSON; check this line for a missing "
			 "comma, quote or bracket",
			 p.file, e->line, len ? "(syntax)" : "(empty)");
		return -EINVAL;
	}
	/* Text after the value (cJSON stops at the end of the first value). */
	size_t used = end ? (size_t)(end - text) : len;
	while (used < len && strchr(" \t\r\n", text[used]))
		used++;
	p.lm = pol_linemap_build(text, len);
	p.c = pol_config_default();
	if (used < len) {
		pol_cfg_error(&p, "", 0, "(syntax)"); /* line and text set below */
		struct pol_config_error *e = &errs->items[errs->count - 1];
		e->line = pol_line_of_offset(text, len, used);
		snprintf(e->key, sizeof(e->key), "(syntax)");
		snprintf(e->message, sizeof(e->message),
			 "%.60s:%d: (syntax): text follows the end of the JSON object; remove it",
			 p.file, e->line);
	}
	parse_top(&p, root);
	cJSON_Delete(root);
	pol_linemap_free(p.lm);
	if (p.dropped && errs->count) {
		struct pol_config_error *e = &errs->items[errs->count - 1];
		snprintf(e->message, sizeof(e->message),
			 "%.60s: %zu more problems are not shown; fix the ones above first", p.file,
			 p.dropped + 1);
		e->line = 0;
		snprintf(e->key, sizeof(e->key), "(more)");
	}
	if (errs->count) {
		pol_config_free(p.c);
		return -EINVAL;
	}
	pol_config_merge_outside(p.c);
	*out = p.c;
	return 0;
}
