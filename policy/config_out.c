/*
 * config_out.c: the config's lifetime, accessors, persistent grants and its
 * serialisation back to JSON.
 *
 * See docs/design.md, section "Configuration".
 */
#include "policy_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int pol_parse_iso_time(const char *s, int64_t *out_us)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		return -EINVAL;
	int64_t frac = 0;
	if (*rest == '.') {
		int digits = 0;
		rest++;
		while (*rest >= '0' && *rest <= '9') {
			if (digits < 6) {
				frac = frac * 10 + (*rest - '0');
				digits++;
			}
			rest++;
		}
		if (digits == 0)
			return -EINVAL;
		while (digits++ < 6)
			frac *= 10;
	}
	if (strcmp(rest, "Z") != 0)
		return -EINVAL;
	time_t t = timegm(&tm);
	/* 1970 to 9999: what the audit's time format writes back. */
	if (t < 0 || (int64_t)t >= 253402300800LL)
		return -EINVAL;
	*out_us = (int64_t)t * 1000000 + frac;
	return 0;
}

/* ---- lifetime ------------------------------------------------------------------- */

/*
 * The built-in outside places. "~/" entries are expanded for every home
 * the config was given (pol_config_set_paths, pol_config_add_home). The
 * home itself is seen through a markers view; the rest is hidden inside it
 * (the view answers ENOENT for those names, whenever they appear).
 * History files are hidden too: they hold what was typed, pasted tokens and
 * `mysql -p...` included, and no tool needs another shell's history.
 */
static const struct {
	const char *path;
	enum pol_outside_mode mode;
} builtin_outside[] = {
	{"~/", POL_OUTSIDE_MARKERS},
	/* ssh, gpg, and the generic token files */
	{"~/.ssh", POL_OUTSIDE_HIDE},
	{"~/.gnupg", POL_OUTSIDE_HIDE},
	{"~/.netrc", POL_OUTSIDE_HIDE},
	{"~/.git-credentials", POL_OUTSIDE_HIDE},
	{"~/.password-store", POL_OUTSIDE_HIDE},
	{"~/.local/share/keyrings", POL_OUTSIDE_HIDE},
	{"~/.vault-token", POL_OUTSIDE_HIDE},
	/* forges and package registries */
	{"~/.config/gh", POL_OUTSIDE_HIDE},
	{"~/.config/hub", POL_OUTSIDE_HIDE},
	{"~/.config/glab-cli", POL_OUTSIDE_HIDE},
	{"~/.npmrc", POL_OUTSIDE_HIDE},
	{"~/.pypirc", POL_OUTSIDE_HIDE},
	{"~/.cargo/credentials", POL_OUTSIDE_HIDE},
	{"~/.cargo/credentials.toml", POL_OUTSIDE_HIDE},
	{"~/.gem/credentials", POL_OUTSIDE_HIDE},
	{"~/.m2/settings.xml", POL_OUTSIDE_HIDE},
	{"~/.huggingface/token", POL_OUTSIDE_HIDE},
	{"~/.cache/huggingface/token", POL_OUTSIDE_HIDE},
	{"~/.terraform.d/credentials.tfrc.json", POL_OUTSIDE_HIDE},
	/* containers and clouds */
	{"~/.docker", POL_OUTSIDE_HIDE},
	{"~/.kube", POL_OUTSIDE_HIDE},
	{"~/.aws", POL_OUTSIDE_HIDE},
	{"~/.config/gcloud", POL_OUTSIDE_HIDE},
	{"~/.azure", POL_OUTSIDE_HIDE},
	{"~/.oci", POL_OUTSIDE_HIDE},
	{"~/.config/doctl", POL_OUTSIDE_HIDE},
	{"~/.config/rclone", POL_OUTSIDE_HIDE},
	{"~/.s3cfg", POL_OUTSIDE_HIDE},
	{"~/.boto", POL_OUTSIDE_HIDE},
	/* databases */
	{"~/.pgpass", POL_OUTSIDE_HIDE},
	{"~/.my.cnf", POL_OUTSIDE_HIDE},
	/* browsers: cookies, saved logins and their keys */
	{"~/.mozilla", POL_OUTSIDE_HIDE},
	{"~/.config/google-chrome", POL_OUTSIDE_HIDE},
	{"~/.config/chromium", POL_OUTSIDE_HIDE},
	/* what was typed */
	{"~/.bash_history", POL_OUTSIDE_HIDE},
	{"~/.zsh_history", POL_OUTSIDE_HIDE},
	{"~/.local/share/fish/fish_history", POL_OUTSIDE_HIDE},
	{"~/.python_history", POL_OUTSIDE_HIDE},
	{"~/.psql_history", POL_OUTSIDE_HIDE},
	{"~/.mysql_history", POL_OUTSIDE_HIDE},
	{"~/.node_repl_history", POL_OUTSIDE_HIDE},
	/* the system's secrets: readable by a root run's uid (it owns them,
	 * capabilities or not); unreadable otherwise, and hidden all the same */
	{"/etc/shadow", POL_OUTSIDE_HIDE},
	{"/etc/shadow-", POL_OUTSIDE_HIDE},
	{"/etc/gshadow", POL_OUTSIDE_HIDE},
	{"/etc/gshadow-", POL_OUTSIDE_HIDE},
	{"/etc/ssh/ssh_host_rsa_key", POL_OUTSIDE_HIDE},
	{"/etc/ssh/ssh_host_ecdsa_key", POL_OUTSIDE_HIDE},
	{"/etc/ssh/ssh_host_ed25519_key", POL_OUTSIDE_HIDE},
	{"/etc/ssh/ssh_host_dsa_key", POL_OUTSIDE_HIDE},
	{"/etc/ssl/private", POL_OUTSIDE_HIDE},
};

struct pol_config *pol_config_default(void)
{
	struct pol_config *c = wd_calloc(1, sizeof(*c));
	pol_config_merge_outside(c);
	return c;
}

static char *expand_home(const char *p, const char *home)
{
	if (home && strncmp(p, "~/", 2) == 0)
		return wd_asprintf("%s%s", home, p + 1);
	return wd_strdup(p);
}

/* Adds |p| (|mode|) once for each home ("~/" paths) or once (others). */
static void merge_one(struct pol_config *c, const char *p, enum pol_outside_mode mode)
{
	size_t homes = strncmp(p, "~/", 2) == 0 ? 1 + c->nhomes : 1;
	c->merged = wd_realloc(c->merged, (c->nmerged + homes + 1) * sizeof(*c->merged));
	for (size_t h = 0; h < homes; h++) {
		c->merged[c->nmerged].path = expand_home(p, h ? c->homes[h - 1] : c->home);
		c->merged[c->nmerged++].mode = mode;
	}
	c->merged[c->nmerged].path = NULL;
}

void pol_config_merge_outside(struct pol_config *c)
{
	for (size_t i = 0; i < c->nmerged; i++)
		free(c->merged[i].path);
	free(c->merged);
	c->merged = NULL;
	c->nmerged = 0;
	for (size_t i = 0; i < WD_ARRAY_SIZE(builtin_outside); i++) {
		bool overridden = false;
		for (size_t k = 0; k < c->noutside; k++)
			if (strcmp(c->outside[k].path, builtin_outside[i].path) == 0)
				overridden = true;
		if (!overridden)
			merge_one(c, builtin_outside[i].path, builtin_outside[i].mode);
	}
	for (size_t k = 0; k < c->noutside; k++) {
		bool later = false;
		for (size_t j = k + 1; j < c->noutside; j++)
			if (strcmp(c->outside[k].path, c->outside[j].path) == 0)
				later = true;
		if (!later)
			merge_one(c, c->outside[k].path, c->outside[k].mode);
	}
}

void pol_config_add_home(struct pol_config *c, const char *home)
{
	if (!home || home[0] != '/')
		return;
	wd_autofree char *h = pol_path_lexical(home);
	if (c->home && strcmp(c->home, h) == 0)
		return;
	for (size_t i = 0; i < c->nhomes; i++)
		if (strcmp(c->homes[i], h) == 0)
			return;
	c->homes = wd_realloc(c->homes, (c->nhomes + 1) * sizeof(char *));
	c->homes[c->nhomes++] = wd_steal_pointer(&h);
	pol_config_merge_outside(c);
}

static void grant_free(struct pol_grant *g)
{
	wd_strv_free(g->argv);
	free(g->program);
	free(g->path);
	free(g->host);
	free(g->by);
}

void pol_config_free(struct pol_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nrules; i++) {
		wd_strv_free(c->rules[i].command);
		free(c->rules[i].glob);
	}
	free(c->rules);
	for (size_t i = 0; i < c->ngrants; i++)
		grant_free(&c->grants[i]);
	free(c->grants);
	wd_strv_free(c->markers);
	wd_strv_free(c->protect);
	wd_strv_free(c->control);
	pol_control_set_free(c->control_set);
	wd_strv_free(c->writable);
	wd_strv_free(c->tmp_share);
	wd_strv_free(c->sock_allow);
	wd_strv_free(c->env_keep);
	wd_strv_free(c->net_allow);
	wd_strv_free(c->net_deny);
	wd_strv_free(c->harness_ep);
	for (size_t i = 0; i < c->noutside; i++)
		free(c->outside[i].path);
	free(c->outside);
	for (size_t i = 0; i < c->nmerged; i++)
		free(c->merged[i].path);
	free(c->merged);
	free(c->accepted_json);
	pol_accepted_free(c->accepted, c->naccepted);
	free(c->judge_url);
	free(c->judge_model);
	free(c->project);
	free(c->home);
	for (size_t i = 0; i < c->nhomes; i++)
		free(c->homes[i]);
	free(c->homes);
	free(c);
}

void pol_config_set_paths(struct pol_config *c, const char *project, const char *home)
{
	free(c->project);
	free(c->home);
	c->project = project ? pol_path_lexical(project) : NULL;
	c->home = home ? pol_path_lexical(home) : NULL;
	pol_config_merge_outside(c);
}

enum pol_tier pol_config_tier(const struct pol_config *c)
{
	return c ? c->tier : POL_TIER_UNSET;
}

/* The accessors of the config's lists of strings: the count, and the
 * |i|th entry (NULL past the end or without a config). */
#define POL_CONFIG_LIST(fn, list, count)                                                           \
	size_t fn##_count(const struct pol_config *c)                                              \
	{                                                                                          \
		return c ? c->count : 0;                                                           \
	}                                                                                          \
	const char *fn(const struct pol_config *c, size_t i)                                       \
	{                                                                                          \
		return c && i < c->count ? c->list[i] : NULL;                                      \
	}

POL_CONFIG_LIST(pol_config_writable, writable, nwritable)
POL_CONFIG_LIST(pol_config_tmp_share, tmp_share, ntmp_share)
POL_CONFIG_LIST(pol_config_socket_allow, sock_allow, nsock_allow)
POL_CONFIG_LIST(pol_config_env_keep, env_keep, nenv_keep)

size_t pol_config_outside_count(const struct pol_config *c)
{
	return c ? c->nmerged : 0;
}

const char *pol_config_outside(const struct pol_config *c, size_t i, enum pol_outside_mode *mode)
{
	if (!c || i >= c->nmerged)
		return NULL;
	if (mode)
		*mode = c->merged[i].mode;
	return c->merged[i].path;
}

bool pol_config_judge(const struct pol_config *c, struct pol_judge_settings *out)
{
	memset(out, 0, sizeof(*out));
	if (!c || !c->has_judge)
		return false;
	out->url = c->judge_url;
	out->model = c->judge_model;
	out->timeout_ms = c->judge_timeout_ms;
	out->connect_timeout_ms = c->judge_connect_timeout_ms;
	return true;
}

/* ---- grants --------------------------------------------------------------------- */

int pol_exec_to_grant(const struct pol_request *r, struct pol_grant *g)
{
	g->argv = wd_strv_dup(r->argv, NULL);
	g->program = r->path ? wd_strdup(r->path) : NULL;
	return 0;
}

int pol_open_to_grant(const struct pol_request *r, struct pol_grant *g)
{
	if (r->opath2)
		return -EINVAL; /* a rename or link pair is not a grant of one path */
	g->path = wd_strdup(r->opath);
	g->access = r->access;
	return 0;
}

int pol_config_add_grant(struct pol_config *c, const struct pol_request *r, const char *by,
			 int64_t at_us)
{
	if (!c || !r || !by || !by[0])
		return -EINVAL;
	const struct pol_kind_ops *k = pol_kind_ops(r->kind);
	struct pol_grant g = {0};
	if (!k || !k->to_grant || k->to_grant(r, &g) < 0)
		return -EINVAL;
	g.by = wd_strdup(by);
	g.at_us = at_us;
	c->grants = wd_realloc(c->grants, (c->ngrants + 1) * sizeof(*c->grants));
	c->grants[c->ngrants++] = g;
	return 0;
}

/* ---- serialisation -------------------------------------------------------------- */

static cJSON *strv_json(char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

static cJSON *access_json(unsigned access)
{
	size_t bits = 0;
	for (unsigned b = 1; b <= POL_ACC_LAST; b <<= 1)
		bits += (access & b) != 0;
	if (bits == 1)
		return cJSON_CreateString(pol_access_name(access));
	cJSON *a = cJSON_CreateArray();
	for (unsigned b = 1; b <= POL_ACC_LAST; b <<= 1)
		if (access & b)
			cJSON_AddItemToArray(a, cJSON_CreateString(pol_access_name(b)));
	return a;
}

static cJSON *rules_json(const struct pol_config *c)
{
	static const char *const actions[] = {"allow", "ask", "deny"};
	static const char *const accs[] = {"read", "write", "any"};
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < c->nrules; i++) {
		const struct pol_rule *ru = &c->rules[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "action", actions[ru->action]);
		if (ru->command) {
			cJSON_AddItemToObject(o, "command", strv_json(ru->command, ru->ncommand));
		} else {
			cJSON_AddStringToObject(o, "path", ru->glob ? ru->glob : "");
			cJSON_AddStringToObject(o, "access", accs[ru->access]);
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *grants_json(const struct pol_config *c)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < c->ngrants; i++) {
		const struct pol_grant *g = &c->grants[i];
		cJSON *o = cJSON_CreateObject();
		if (g->argv) {
			size_t n = 0;
			while (g->argv[n])
				n++;
			cJSON_AddItemToObject(o, "command", strv_json(g->argv, n));
			if (g->program)
				cJSON_AddStringToObject(o, "program", g->program);
		} else if (g->host) {
			cJSON_AddStringToObject(o, "host", g->host);
		} else {
			cJSON_AddStringToObject(o, "path", g->path);
			cJSON_AddItemToObject(o, "access", access_json(g->access));
		}
		cJSON_AddStringToObject(o, "by", g->by ? g->by : "");
		char at[40];
		wd_format_time(g->at_us, at, sizeof(at));
		cJSON_AddStringToObject(o, "at", at);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

char *pol_config_to_json(const struct pol_config *c)
{
	cJSON *root = cJSON_CreateObject();
	if (c->tier != POL_TIER_UNSET)
		cJSON_AddStringToObject(root, "tier", pol_tier_name(c->tier));
	cJSON_AddItemToObject(root, "rules", rules_json(c));
	cJSON_AddItemToObject(root, "grants", grants_json(c));
	cJSON_AddItemToObject(root, "sensitive_resources", strv_json(c->markers, c->nmarkers));
	cJSON_AddItemToObject(root, "write_protected", strv_json(c->protect, c->nprotect));
	if (c->ncontrol)
		cJSON_AddItemToObject(root, "control_files", strv_json(c->control, c->ncontrol));
	if (c->nwritable)
		cJSON_AddItemToObject(root, "writable", strv_json(c->writable, c->nwritable));
	if (c->ntmp_share) {
		cJSON *t = cJSON_CreateObject();
		cJSON_AddItemToObject(t, "share", strv_json(c->tmp_share, c->ntmp_share));
		cJSON_AddItemToObject(root, "tmp", t);
	}
	if (c->nsock_allow) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "allow", strv_json(c->sock_allow, c->nsock_allow));
		cJSON_AddItemToObject(root, "sockets", o);
	}
	if (c->nenv_keep) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "keep", strv_json(c->env_keep, c->nenv_keep));
		cJSON_AddItemToObject(root, "env", o);
	}
	if (c->nnet_allow || c->nnet_deny) {
		cJSON *o = cJSON_CreateObject();
		if (c->nnet_allow)
			cJSON_AddItemToObject(o, "allow", strv_json(c->net_allow, c->nnet_allow));
		if (c->nnet_deny)
			cJSON_AddItemToObject(o, "deny", strv_json(c->net_deny, c->nnet_deny));
		cJSON_AddItemToObject(root, "network", o);
	}
	if (c->noutside) {
		cJSON *a = cJSON_CreateArray();
		for (size_t i = 0; i < c->noutside; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "path", c->outside[i].path);
			cJSON_AddStringToObject(o, "mode",
						pol_outside_mode_name(c->outside[i].mode));
			cJSON_AddItemToArray(a, o);
		}
		cJSON_AddItemToObject(root, "outside", a);
	}
	cJSON *acc = c->accepted_json ? cJSON_Parse(c->accepted_json) : NULL;
	cJSON_AddItemToObject(root, "accepted_rules", acc ? acc : cJSON_CreateArray());
	if (c->has_judge) {
		cJSON *j = cJSON_CreateObject();
		if (c->judge_url)
			cJSON_AddStringToObject(j, "url", c->judge_url);
		if (c->judge_model)
			cJSON_AddStringToObject(j, "model", c->judge_model);
		if (c->judge_timeout_ms)
			cJSON_AddNumberToObject(j, "timeout_ms", c->judge_timeout_ms);
		if (c->judge_connect_timeout_ms)
			cJSON_AddNumberToObject(j, "connect_timeout_ms",
						c->judge_connect_timeout_ms);
		cJSON_AddItemToObject(root, "judge", j);
	}
	struct wd_sb sb = {0};
	pol_json_pretty(&sb, root, 0);
	wd_sb_putc(&sb, '\n');
	cJSON_Delete(root);
	return wd_sb_steal(&sb);
}

size_t pol_config_grant_count(const struct pol_config *c)
{
	return c->ngrants;
}

char *pol_config_grant_json(const struct pol_config *c, size_t i)
{
	if (i >= c->ngrants)
		return NULL;
	cJSON *a = grants_json(c);
	cJSON *o = cJSON_DetachItemFromArray(a, (int)i);
	cJSON_Delete(a);
	char *p = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	char *s = wd_strdup(p);
	cJSON_free(p);
	return s;
}
