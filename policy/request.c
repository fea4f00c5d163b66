/*
 * request.c: the request model (exec and open; connect is network.c's),
 * its stable redacted JSON and its one-line summary, each kind's own in
 * its pol_<kind>_json() and pol_<kind>_summary() (named in kinds.c's
 * table).
 *
 * Everything a request shows is redacted (redact.c): argv, the parent's
 * and the requester's command lines, and the run-changing environment.
 *
 * See docs/design.md, section "Requests".
 */
#include "policy_int.h"

#include <errno.h>
#include <string.h>

/* ---- construction ------------------------------------------------------------ */

static char *rel_to_project(const char *path, const char *project)
{
	if (!path)
		return NULL;
	if (project && project[0] == '/') {
		size_t pl = strlen(project);
		while (pl > 1 && project[pl - 1] == '/')
			pl--;
		if (strncmp(path, project, pl) == 0) {
			if (path[pl] == '\0')
				return wd_strdup(".");
			if (path[pl] == '/' && path[pl + 1])
				return wd_strdup(path + pl + 1);
			if (path[pl] == '/')
				return wd_strdup(".");
		}
	}
	return wd_strdup(path);
}

/* The harness wrapper |r| is, for the summary and the JSON: recognised
 * with the exec's own HOME (pol_decide() uses the config's). */
static void request_harness(struct pol_request *r, char *const *envp)
{
	const char *home = NULL;
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], "HOME=", 5) == 0)
			home = envp[i] + 5;
	if (!home || home[0] != '/')
		return;
	wd_autofree char *lex = pol_path_lexical(home);
	char buf[128];
	const char *name = pol_cls_identity(r->path, r->argv[0], buf, sizeof(buf));
	char *inner = NULL;
	r->harness =
		r->interp ? POL_HARNESS_NONE : pol_hn_unwrap(r->argv, r->argc, name, lex, &inner);
	if (r->harness == POL_HARNESS_CLAUDE_CODE) {
		r->inner = inner;
		return;
	}
	/* Codex's snapshot wrapper shows its command only when the snapshot it
	 * sources was read and is inert (pol_codex_shape() says so). */
	if (r->harness == POL_HARNESS_CODEX && strcmp(r->argv[1], "-c") == 0) {
		r->inner = inner;
		char *snap = NULL;
		if (pol_hn_codex_shape(r, lex, NULL) == POL_CODEX_WRAPPER &&
		    pol_hn_codex_wrapper_parts(r->argv[2], lex, &snap, &r->wrap_dir,
					       &r->wrap_quoted)) {
			free(snap); /* the same as harness_path */
			return;
		}
		r->inner = NULL;
	}
	free(inner);
}

struct pol_request *pol_request_exec(const struct pol_exec_desc *d, const char *project)
{
	if (!d || !d->path || !d->path[0] || !d->argv || !d->argv[0]) {
		errno = EINVAL;
		return NULL;
	}
	struct pol_request *r = wd_calloc(1, sizeof(*r));
	r->kind = POL_EXEC;
	/* The path as invoked; |resolved| below is the file that runs.
	 * Classification reads both (every name a program answers to). */
	r->path = wd_strdup(d->path);
	r->interp = d->interp ? wd_strdup(d->interp) : NULL;
	r->argv = wd_strv_dup(d->argv, &r->argc);
	size_t n = 0;
	for (size_t i = 0; d->envp && d->envp[i]; i++)
		n++;
	r->env = wd_calloc(n + 1, sizeof(char *));
	for (size_t i = 0; d->envp && d->envp[i]; i++) {
		const char *eq = strchr(d->envp[i], '=');
		size_t nl = eq ? (size_t)(eq - d->envp[i]) : strlen(d->envp[i]);
		/* A second HOME or XDG_CONFIG_HOME: programs disagree on which
		 * one counts (getenv() takes the first, a shell the last), so
		 * it is a variable warden does not understand. */
		if (strncmp(d->envp[i], "HOME=", 5) == 0 && !r->env_home)
			r->env_home = wd_strdup(d->envp[i] + 5);
		else if (strncmp(d->envp[i], "XDG_CONFIG_HOME=", 16) == 0 && !r->env_xdg_config)
			r->env_xdg_config = wd_strdup(d->envp[i] + 16);
		else if (strncmp(d->envp[i], "HOME=", 5) == 0 ||
			 strncmp(d->envp[i], "XDG_CONFIG_HOME=", 16) == 0)
			r->env[r->envc++] = wd_strdup(d->envp[i]);
		else if (!pol_env_entry_fast_ok(d->envp[i])) {
			r->env_risky += pol_env_name_is_risky(d->envp[i], nl);
			r->env[r->envc++] = wd_strdup(d->envp[i]);
		}
	}
	r->cwd_abs = d->cwd ? wd_strdup(d->cwd) : NULL;
	r->cwd = rel_to_project(d->cwd, project);
	r->parent = d->parent_cmdline ? wd_strdup(d->parent_cmdline) : NULL;
	r->project = project ? wd_strdup(project) : NULL;
	r->resolved = d->resolved ? wd_strdup(d->resolved) : NULL;
	r->agent_writable = d->agent_writable;
	r->writable_why = d->agent_writable_why ? wd_strdup(d->agent_writable_why) : NULL;
	if (d->harness_path && d->harness_file) {
		r->harness_path = wd_strdup(d->harness_path);
		r->harness_file = wd_strdup(d->harness_file);
	}
	request_harness(r, d->envp);
	return r;
}

struct pol_request *pol_request_open(const char *path, const char *path2, unsigned access,
				     const char *cmdline)
{
	if (!path || !path[0]) {
		errno = EINVAL;
		return NULL;
	}
	struct pol_request *r = wd_calloc(1, sizeof(*r));
	r->kind = POL_OPEN;
	r->opath = wd_strdup(path);
	r->opath2 = path2 ? wd_strdup(path2) : NULL;
	r->access = access;
	r->cmdline = cmdline ? wd_strdup(cmdline) : NULL;
	return r;
}

void pol_request_free(struct pol_request *r)
{
	if (!r)
		return;
	free(r->path);
	free(r->interp);
	wd_strv_free(r->argv);
	wd_strv_free(r->env);
	free(r->cwd);
	free(r->cwd_abs);
	free(r->parent);
	free(r->project);
	free(r->resolved);
	free(r->writable_why);
	free(r->env_home);
	free(r->env_xdg_config);
	free(r->harness_path);
	free(r->harness_file);
	free(r->wrap_dir);
	free(r->wrap_quoted);
	free(r->opath);
	free(r->opath2);
	free(r->cmdline);
	free(r->inner);
	free(r->net_syscall);
	wd_strv_free(r->net_names);
	free(r->net_address);
	free(r->net_dest);
	free(r);
}

enum pol_kind pol_request_kind(const struct pol_request *r)
{
	return r->kind;
}

const char *pol_request_resolved(const struct pol_request *r)
{
	return r->resolved;
}

const char *pol_request_codex_path_entry(const struct pol_request *r)
{
	return r->wrap_dir;
}

enum pol_harness pol_request_harness(const struct pol_request *r, const char **inner)
{
	if (inner)
		*inner = r->inner;
	return r->inner ? r->harness : POL_HARNESS_NONE;
}

bool pol_request_agent_writable(const struct pol_request *r, const char **why)
{
	if (why)
		*why = r->writable_why;
	return r->agent_writable;
}

/* ---- JSON -------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at |s|, or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	size_t n = (s[0] & 0xe0) == 0xc0   ? 2
		   : (s[0] & 0xf0) == 0xe0 ? 3
		   : (s[0] & 0xf8) == 0xf0 ? 4
					   : 0;
	if (n == 0 || (n == 2 && s[0] < 0xc2))
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* A JSON string; bytes that are not UTF-8 are shown as the text \xNN so the
 * output is always valid JSON. */
static void json_str(struct wd_sb *sb, const char *s)
{
	if (!s) {
		wd_sb_puts(sb, "null");
		return;
	}
	wd_sb_putc(sb, '"');
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		if (*p == '"' || *p == '\\') {
			wd_sb_putc(sb, '\\');
			wd_sb_putc(sb, (char)*p++);
		} else if (*p == '\n') {
			wd_sb_puts(sb, "\\n");
			p++;
		} else if (*p == '\t') {
			wd_sb_puts(sb, "\\t");
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			wd_sb_printf(sb, "\\u%04x", *p++);
		} else {
			size_t n = utf8_len(p);
			if (n == 0) {
				wd_sb_printf(sb, "\\\\x%02x", *p++);
			} else {
				wd_sb_add(sb, (const char *)p, n);
				p += n;
			}
		}
	}
	wd_sb_putc(sb, '"');
}

static void json_redacted(struct wd_sb *sb, const char *s)
{
	if (!s) {
		wd_sb_puts(sb, "null");
		return;
	}
	char *red = pol_redact_text(s);
	json_str(sb, red);
	free(red);
}

void pol_json_str(struct wd_sb *sb, const char *s)
{
	json_str(sb, s);
}

void pol_json_redacted(struct wd_sb *sb, const char *s)
{
	json_redacted(sb, s);
}

/* The redacted argv, as a NULL-terminated vector. Caller frees. */
static char **redacted_argv(const struct pol_request *r)
{
	char **v = wd_calloc(r->argc + 1, sizeof(char *));
	for (size_t i = 0; i < r->argc; i++)
		v[i] = pol_redact_arg(i ? r->argv[i - 1] : NULL, r->argv[i]);
	return v;
}

static void env_entry(const char *e, char **name, char **value)
{
	const char *eq = strchr(e, '=');
	size_t nl = eq ? (size_t)(eq - e) : strlen(e);
	*name = wd_strndup(e, nl);
	if (!eq)
		*value = wd_strdup("");
	else if (pol_name_is_secret(e, nl))
		*value = wd_strdup(POL_REDACTED);
	else
		*value = pol_redact_text(eq + 1);
}

static void access_json(struct wd_sb *sb, unsigned access)
{
	wd_sb_putc(sb, '[');
	bool first = true;
	for (unsigned bit = 1; bit <= POL_ACC_LAST; bit <<= 1) {
		if (!(access & bit))
			continue;
		if (!first)
			wd_sb_putc(sb, ',');
		json_str(sb, pol_access_name(bit));
		first = false;
	}
	wd_sb_putc(sb, ']');
}

void pol_open_json(struct wd_sb *sb, const struct pol_request *r)
{
	wd_sb_puts(sb, "{\"kind\":\"open\",\"path\":");
	json_str(sb, r->opath);
	wd_sb_puts(sb, ",\"path2\":");
	json_str(sb, r->opath2);
	wd_sb_puts(sb, ",\"access\":");
	access_json(sb, r->access);
	wd_sb_puts(sb, ",\"cmdline\":");
	json_redacted(sb, r->cmdline);
	wd_sb_putc(sb, '}');
}

void pol_exec_json(struct wd_sb *sb, const struct pol_request *r)
{
	wd_sb_puts(sb, "{\"kind\":\"exec\",\"path\":");
	json_str(sb, r->path);
	wd_sb_puts(sb, ",\"interp\":");
	json_str(sb, r->interp);
	wd_sb_puts(sb, ",\"argv\":[");
	char **red = redacted_argv(r);
	for (size_t i = 0; i < r->argc; i++) {
		if (i)
			wd_sb_putc(sb, ',');
		/* Codex's 38 KB wrapper is kept by its parts (below), from
		 * which pol_codex_wrapper_text() rebuilds it exactly. */
		if (i == 2 && r->wrap_quoted)
			wd_sb_printf(sb,
				     "\"(codex 0.169.0 wrapper, %zu bytes: see \\\"wrapper\\\")\"",
				     strlen(r->argv[2]));
		else
			json_str(sb, red[i]);
	}
	wd_strv_free(red);
	wd_sb_putc(sb, ']');
	if (r->inner) {
		wd_sb_puts(sb, ",\"harness\":");
		json_str(sb, pol_harness_name(r->harness));
		wd_sb_puts(sb, ",\"inner\":");
		json_redacted(sb, r->inner);
	}
	if (r->wrap_quoted) {
		wd_sb_puts(sb, ",\"wrapper\":{\"shape\":\"codex-0.169.0\",\"snapshot\":");
		json_str(sb, r->harness_path);
		wd_sb_puts(sb, ",\"path_entry\":");
		json_str(sb, r->wrap_dir);
		wd_sb_puts(sb, ",\"exec\":");
		json_redacted(sb, r->wrap_quoted);
		wd_sb_putc(sb, '}');
	}
	wd_sb_puts(sb, ",\"env\":{");
	for (size_t i = 0; i < r->envc; i++) {
		char *name, *value;
		env_entry(r->env[i], &name, &value);
		if (i)
			wd_sb_putc(sb, ',');
		json_str(sb, name);
		wd_sb_putc(sb, ':');
		json_str(sb, value);
		free(name);
		free(value);
	}
	wd_sb_puts(sb, "},\"cwd\":");
	json_str(sb, r->cwd);
	if (r->agent_writable) {
		/* The judge and the audit see that the name proves nothing. */
		wd_sb_puts(sb, ",\"agent_writable\":");
		json_str(sb,
			 r->writable_why ? r->writable_why : "written where the agent can write");
	}
	wd_sb_puts(sb, ",\"parent\":");
	json_redacted(sb, r->parent);
	wd_sb_putc(sb, '}');
}

char *pol_request_json(const struct pol_request *r)
{
	struct wd_sb sb = {0};
	const struct pol_kind_ops *k = pol_kind_ops(r->kind);
	if (k && k->json)
		k->json(&sb, r);
	else
		wd_sb_puts(&sb, "{}"); /* no request of a kind without one is ever built */
	return wd_sb_steal(&sb);
}

bool pol_request_env_changes_program(const struct pol_request *r)
{
	/* Only an exec has an environment: any other request counts none. */
	return r && r->env_risky > 0;
}

/* The summary's word for one access bit: what a person would call it. */
static const char *open_verb(unsigned bit)
{
	switch (bit) {
	case POL_ACC_RENAME_FROM:
	case POL_ACC_RENAME_TO:
		return "rename";
	case POL_ACC_XATTR:
		return "setxattr";
	default:
		return pol_access_name(bit);
	}
}

void pol_open_summary(struct wd_sb *sb, const struct pol_request *r)
{
	bool first = true;
	for (unsigned bit = 1; bit <= POL_ACC_LAST; bit <<= 1) {
		if (!(r->access & bit))
			continue;
		/* Both sides of a rename are one verb. */
		if (bit == POL_ACC_RENAME_TO && (r->access & POL_ACC_RENAME_FROM))
			continue;
		if (!first)
			wd_sb_putc(sb, '+');
		wd_sb_puts(sb, open_verb(bit));
		first = false;
	}
	if (first)
		wd_sb_puts(sb, "open");
	wd_sb_putc(sb, ' ');
	wd_sb_shell_quote(sb, r->opath);
	if (r->opath2) {
		wd_sb_puts(sb, " -> ");
		wd_sb_shell_quote(sb, r->opath2);
	}
}

void pol_exec_summary(struct wd_sb *sb, const struct pol_request *r)
{
	for (size_t i = 0; i < r->envc; i++) {
		char *name, *value;
		env_entry(r->env[i], &name, &value);
		wd_sb_puts(sb, name);
		wd_sb_putc(sb, '=');
		wd_sb_shell_quote(sb, value);
		wd_sb_putc(sb, ' ');
		free(name);
		free(value);
	}
	if (r->inner) {
		char *inner = pol_redact_text(r->inner);
		/* One line: a multi-line command shows its newlines as \n,
		 * and no other control byte reaches whoever reads it. */
		for (const unsigned char *c = (const unsigned char *)inner; *c; c++) {
			if (*c == '\n')
				wd_sb_puts(sb, "\\n");
			else if (*c == '\r' || *c == '\t')
				wd_sb_putc(sb, ' ');
			else if (*c < 0x20 || *c == 0x7f)
				wd_sb_printf(sb, "\\x%02x", *c);
			else
				wd_sb_putc(sb, (char)*c);
		}
		free(inner);
		return;
	}
	/* argv[0] is the caller's to choose: when it names another program
	 * than the one that runs (touch run as "cat", an fd or a memfd), the
	 * person sees the real one first. Shells standing in for each other
	 * (sh is dash) are not worth the noise. */
	char idbuf[256];
	const char *real = r->path && r->argc
				   ? pol_cls_identity(r->path, r->argv[0], idbuf, sizeof(idbuf))
				   : NULL;
	const char *named = r->argc ? pol_cls_prog_name(r->argv[0]) : "";
	if (real && strcmp(real, named) != 0 &&
	    !(pol_cls_is_shell(real) && pol_cls_is_shell(named))) {
		wd_sb_putc(sb, '[');
		wd_sb_shell_quote(sb, r->path);
		wd_sb_puts(sb, "] ");
	}
	char **red = redacted_argv(r);
	char *line = wd_argv_join(red);
	wd_strv_free(red);
	wd_sb_puts(sb, line);
	free(line);
}

char *pol_request_summary(const struct pol_request *r)
{
	struct wd_sb sb = {0};
	if (r->inner) {
		/* The model's command; the wrapper stays in the JSON's argv. */
		wd_sb_printf(&sb, "[%s] ", pol_harness_name(r->harness));
	}
	const struct pol_kind_ops *k = pol_kind_ops(r->kind);
	if (k && k->summary)
		k->summary(&sb, r);
	return wd_sb_steal(&sb);
}
