/*
 * harness_codex.c: Codex's exec shapes: its per-call wrapper (a fixed
 * template around its shell snapshot), the snapshot's inert form, its
 * set-up re-exec, its start-up probes and its launcher's native child.
 *
 * See docs/design.md, section "Agent harnesses".
 */
#include "policy_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* ---- Codex --------------------------------------------------------------------------- */

/* The variables Codex 0.169.0's tool-call wrapper saves before sourcing its
 * shell snapshot and restores after it, in its order: its own, then (under
 * one condition) the proxy and certificate ones. */
static const char *const codex_vars[] = {
	"CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS",
	"CODEX_PERMISSION_PROFILE",
	"CODEX_PLUGIN_METRICS_OUTPUT",
	"CODEX_SESSION_ID",
	"CODEX_THREAD_ID",
	"CODEX_TOOL_CALL_ID",
	"CODEX_VERSION",
};
static const char *const codex_proxy_vars[] = {
	"ALL_PROXY",
	"BUNDLE_HTTPS_PROXY",
	"BUNDLE_HTTP_PROXY",
	"BUNDLE_NO_PROXY",
	"BUNDLE_SSL_CA_CERT",
	"CARGO_HTTP_CAINFO",
	"CODEX_CA_CERTIFICATE",
	"CODEX_NETWORK_ALLOW_LOCAL_BINDING",
	"CODEX_NETWORK_PROXY_ACTIVE",
	"CODEX_NETWORK_PROXY_ATTRIBUTION",
	"CODEX_NETWORK_PROXY_BROKERED_CREDENTIALS",
	"CODEX_NETWORK_PROXY_CREDENTIAL_BROKER_ACTIVE",
	"CURL_CA_BUNDLE",
	"DOCKER_HTTPS_PROXY",
	"DOCKER_HTTP_PROXY",
	"ELECTRON_GET_USE_PROXY",
	"FTP_PROXY",
	"GIT_SSL_CAINFO",
	"HTTPS_PROXY",
	"HTTP_PROXY",
	"NODE_EXTRA_CA_CERTS",
	"NODE_USE_ENV_PROXY",
	"NO_PROXY",
	"NPM_CONFIG_CAFILE",
	"NPM_CONFIG_HTTPS_PROXY",
	"NPM_CONFIG_HTTP_PROXY",
	"NPM_CONFIG_NOPROXY",
	"NPM_CONFIG_PROXY",
	"PIP_CERT",
	"PIP_PROXY",
	"REQUESTS_CA_BUNDLE",
	"SSL_CERT_FILE",
	"WSS_PROXY",
	"WS_PROXY",
	"YARN_HTTPS_PROXY",
	"YARN_HTTP_PROXY",
	"YARN_NO_PROXY",
	"all_proxy",
	"ftp_proxy",
	"http_proxy",
	"https_proxy",
	"no_proxy",
	"npm_config_cafile",
	"npm_config_http_proxy",
	"npm_config_https_proxy",
	"npm_config_noproxy",
	"npm_config_proxy",
	"ws_proxy",
	"wss_proxy",
};

/* The save lines of one table: PFX_SET_i="${V+x}"\nPFX_i="${V-}"\n. */
static void codex_save(struct wd_sb *sb, const char *pfx, const char *const *vars, size_t n)
{
	for (size_t i = 0; i < n; i++)
		wd_sb_printf(sb, "%s_SET_%zu=\"${%s+x}\"\n%s_%zu=\"${%s-}\"\n", pfx, i, vars[i],
			     pfx, i, vars[i]);
}

/* The restore block of one table, as Codex writes it. */
static void codex_restore(struct wd_sb *sb, const char *pfx, const char *const *vars, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = vars[i];
		wd_sb_printf(
			sb,
			"if [ -n \"${%s_SET_%zu}\" ]; then\n"
			"  if [ -z \"${%s+x}\" ] || [ \"${%s-}\" != \"${%s_%zu}\" ]; then "
			"export %s=\"${%s_%zu}\"; else export %s; fi\n"
			"else builtin unset %s 2>/dev/null || command unset %s; fi\n"
			"builtin unset %s_SET_%zu %s_%zu 2>/dev/null || command unset %s_SET_%zu "
			"%s_%zu\n",
			pfx, i, v, v, pfx, i, v, pfx, i, v, v, v, pfx, i, pfx, i, pfx, i, pfx, i);
	}
}

#define CODEX_PFX	"__CODEX_SNAPSHOT_OVERRIDE"
#define CODEX_PROXY_PFX "__CODEX_SNAPSHOT_PROXY_OVERRIDE"

/* The fixed text before the snapshot path and after it, up to the PATH
 * entry (built once per call: it is only ~37 KB of appends). */
static char *codex_head(void)
{
	struct wd_sb sb = {0};
	codex_save(&sb, CODEX_PFX, codex_vars, WD_ARRAY_SIZE(codex_vars));
	codex_save(&sb, CODEX_PROXY_PFX, codex_proxy_vars, WD_ARRAY_SIZE(codex_proxy_vars));
	wd_sb_puts(&sb, "__CODEX_SNAPSHOT_PROXY_ENV_SET=\"${CODEX_NETWORK_PROXY_ACTIVE+x}\"\n\n"
			"if . '");
	return wd_sb_steal(&sb);
}

static char *codex_middle(void)
{
	struct wd_sb sb = {0};
	wd_sb_puts(&sb, "' >/dev/null 2>&1; then :; fi\n\n");
	codex_restore(&sb, CODEX_PFX, codex_vars, WD_ARRAY_SIZE(codex_vars));
	wd_sb_puts(&sb, "if [ -n \"$__CODEX_SNAPSHOT_PROXY_ENV_SET\" ] || [ -n "
			"\"${CODEX_NETWORK_PROXY_ACTIVE+x}\" ]; then\n");
	codex_restore(&sb, CODEX_PROXY_PFX, codex_proxy_vars, WD_ARRAY_SIZE(codex_proxy_vars));
	wd_sb_puts(&sb, "fi\nif [ -n \"${PATH:-}\" ]; then export PATH='");
	return wd_sb_steal(&sb);
}

/* HOME/.codex/shell_snapshots/THREAD.NS.sh at *p (THREAD a UUID-like word of
 * [0-9a-f-], NS digits), or with |tmp| the file before Codex renames it:
 * THREAD.tmp-NS. */
static bool eat_codex_snapshot(const char **p, const char *home, bool tmp)
{
	const char *q = *p;
	if (!pol_hn_home_is_plain(home) || !pol_hn_eat(&q, home) ||
	    !pol_hn_eat(&q, strcmp(home, "/") == 0 ? ".codex/shell_snapshots/"
						   : "/.codex/shell_snapshots/") ||
	    !pol_hn_eat_span(&q, "0123456789abcdef-", false, 64) ||
	    !pol_hn_eat(&q, tmp ? ".tmp-" : ".") || !pol_hn_eat_span(&q, "0123456789", false, 24) ||
	    (!tmp && !pol_hn_eat(&q, ".sh")))
		return false;
	*p = q;
	return true;
}

/* A directory bash reads literally inside single quotes: an absolute path
 * with no quote and no control character. */
static bool eat_quoted_dir(const char **p)
{
	const char *q = *p;
	if (*q != '/')
		return false;
	while (*q && *q != '\'' && (unsigned char)*q >= 0x20 && *q != 0x7f)
		q++;
	if (*q != '\'')
		return false;
	*p = q;
	return true;
}

/* The parts of a Codex wrapper that are not its fixed template. */
struct codex_parts {
	char *snap;   /* the snapshot it sources */
	char *dir;    /* the PATH entry it prepends */
	char *quoted; /* the command as quoted in the script */
};

static void codex_parts_free(struct codex_parts *w)
{
	free(w->snap);
	free(w->dir);
	free(w->quoted);
	memset(w, 0, sizeof(*w));
}

static char *codex_inner_parts(const char *script, const char *home, struct codex_parts *w);

/* The model's command inside Codex's snapshot wrapper, or NULL; *snap (when
 * not NULL) gets the snapshot's path (caller frees). */
char *pol_hn_codex_inner(const char *script, const char *home, char **snap)
{
	struct codex_parts w = {0};
	char *cmd = codex_inner_parts(script, home, &w);
	if (cmd && snap)
		*snap = wd_steal_pointer(&w.snap);
	codex_parts_free(&w);
	return cmd;
}

static char *codex_inner_parts(const char *script, const char *home, struct codex_parts *w)
{
	/* Most scripts are not the wrapper: say so before building it. */
	if (strncmp(script, CODEX_PFX "_SET_0=", strlen(CODEX_PFX "_SET_0=")) != 0)
		return NULL;
	wd_autofree char *head = codex_head();
	wd_autofree char *middle = codex_middle();
	const char *p = script;
	if (!head || !middle || !pol_hn_eat(&p, head))
		return NULL;
	const char *snap_at = p;
	if (!eat_codex_snapshot(&p, home, false))
		return NULL;
	const char *snap_end = p;
	if (!pol_hn_eat(&p, middle))
		return NULL;
	/* The PATH entry, twice the same directory. */
	const char *dir = p;
	if (!eat_quoted_dir(&p))
		return NULL;
	size_t dl = (size_t)(p - dir);
	if (!pol_hn_eat(&p, "':\"$PATH\"; else export PATH='") || strncmp(p, dir, dl) != 0)
		return NULL;
	p += dl;
	if (!pol_hn_eat(&p, "'; fi\n\nexec '/bin/bash' -c "))
		return NULL;
	/* The command, one single-quoted word to the very last byte. */
	const char *quoted = p;
	char *cmd = *p == '\'' ? pol_hn_eat_quoted_to(&p, '\0') : NULL;
	if (!cmd || *p != '\0' || cmd[0] == '\0') {
		free(cmd);
		return NULL;
	}
	w->snap = wd_strndup(snap_at, (size_t)(snap_end - snap_at));
	w->dir = wd_strndup(dir, dl);
	w->quoted = wd_strdup(quoted);
	return cmd;
}

char *pol_codex_wrapper_text(const char *snapshot, const char *path_entry, const char *quoted)
{
	if (!snapshot || !path_entry || !quoted)
		return NULL;
	wd_autofree char *head = codex_head();
	wd_autofree char *middle = codex_middle();
	return wd_asprintf(
		"%s%s%s%s':\"$PATH\"; else export PATH='%s'; fi\n\nexec '/bin/bash' -c %s", head,
		snapshot, middle, path_entry, path_entry, quoted);
}

bool pol_hn_codex_wrapper_parts(const char *script, const char *home, char **snap, char **dir,
				char **quoted)
{
	struct codex_parts w = {0};
	char *cmd = codex_inner_parts(script, home, &w);
	if (!cmd)
		return false;
	free(cmd);
	*snap = wd_steal_pointer(&w.snap);
	*dir = wd_steal_pointer(&w.dir);
	*quoted = wd_steal_pointer(&w.quoted);
	return true;
}

/* The login shell's script with which Codex 0.169.0 writes its shell
 * snapshot (bash -lc SCRIPT), character for character. */
static const char codex_snapshot_script[] =
	"if [ -z \"${BASH_ENV-}\" ] && [ -n \"${HOME-}\" ] && [ -r \"$HOME/.bashrc\" ]; then\n"
	"  . \"$HOME/.bashrc\"\n"
	"fi\n"
	"echo '# Snapshot file'\n"
	"echo '# Unset all aliases to avoid conflicts with functions'\n"
	"echo 'unalias -a 2>/dev/null || true'\n"
	"shopt -p || true\n"
	"echo '# Functions'\n"
	"declare -f\n"
	"echo ''\n"
	"\n"
	"__codex_snapshot_command() {\n"
	"  if command -v \"$1\" >/dev/null 2>&1; then\n"
	"    \"$@\"\n"
	"  else\n"
	"    command -p \"$@\"\n"
	"  fi\n"
	"}\n"
	"bash_opts=$(set -o | __codex_snapshot_command awk '$2==\"on\"{print $1}')\n"
	"bash_opt_count=$(printf '%s\\n' \"$bash_opts\" | __codex_snapshot_command sed '/^$/d' | "
	"__codex_snapshot_command wc -l | __codex_snapshot_command tr -d ' ')\n"
	"echo \"# setopts $bash_opt_count\"\n"
	"if [ -n \"$bash_opts\" ]; then\n"
	"  printf 'set -o %s\\n' $bash_opts\n"
	"fi\n"
	"echo ''\n"
	"printf '\\0'\n"
	"alias_count=$(\\alias -p | __codex_snapshot_command wc -l | __codex_snapshot_command tr "
	"-d "
	"' ')\n"
	"echo \"# aliases $alias_count\"\n"
	"\\alias -p\n"
	"echo ''\n"
	"\n"
	"printf '\\0'\n"
	"(\n"
	"  while IFS= read -r __codex_snapshot_export_name; do\n"
	"    case \"$__codex_snapshot_export_name\" in\n"
	"      \"\"|[0-9]*|*[!A-Za-z0-9_]*|PWD|OLDPWD) continue ;;\n"
	"    esac\n"
	"    printf '%s\\0' \"$__codex_snapshot_export_name\"\n"
	"    declare -xp \"$__codex_snapshot_export_name\" 2>/dev/null || true\n"
	"    printf '\\0'\n"
	"  done < <(compgen -e)\n"
	")\n"
	"\n"
	"printf '\\0'\n"
	"\n";

/* bash -c 'set -e; . "HOME/.codex/shell_snapshots/THREAD.tmp-NS"': Codex
 * checking the snapshot it has just written. *snap gets the path. */
static bool codex_validate_shape(char *const *argv, size_t argc, const char *home, char **snap)
{
	if (argc != 3 || !pol_hn_is_named(argv[0], "bash") || strcmp(argv[1], "-c") != 0)
		return false;
	const char *p = argv[2];
	if (!pol_hn_eat(&p, "set -e; . \""))
		return false;
	const char *at = p;
	if (!eat_codex_snapshot(&p, home, true) || strcmp(p, "\"") != 0)
		return false;
	if (snap)
		*snap = wd_strndup(at, (size_t)(p - at));
	return true;
}

/* Shell options a snapshot may set: none of them runs code (xtrace would
 * expand PS4, verbose and the rest change nothing Codex's wrapper relies
 * on are not needed either). */
static const char *const codex_set_ok[] = {
	"braceexpand",
	"emacs",
	"hashall",
	"histexpand",
	"history",
	"ignoreeof",
	"interactive-comments",
	"monitor",
	"noclobber",
	"notify",
	"physical",
	"pipefail",
	"vi",
};

/* One line of |s| (up to its newline, or the end) equals |lit|. */
static bool line_is(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && strncmp(s, lit, n) == 0;
}

/* An identifier of [A-Za-z_][A-Za-z0-9_]* at *p. */
static bool eat_ident(const char **p)
{
	const char *q = *p;
	if (!(isalpha((unsigned char)*q) || *q == '_'))
		return false;
	while (isalnum((unsigned char)*q) || *q == '_')
		q++;
	*p = q;
	return true;
}

/* declare -x NAME or declare -x NAME="VALUE" at *p, VALUE as bash's
 * declare -p writes it: in double quotes, with " \ $ ` only escaped by a
 * backslash (so nothing in it expands). Ends at the line's end. */
static bool eat_declare(const char **p)
{
	const char *q = *p;
	if (!pol_hn_eat(&q, "declare -x ") || !eat_ident(&q))
		return false;
	if (*q == '\n' || *q == '\0') {
		*p = q;
		return true;
	}
	if (!pol_hn_eat(&q, "=\""))
		return false;
	for (;;) {
		if (*q == '\0')
			return false;
		if (*q == '"')
			break;
		if (*q == '$' || *q == '`')
			return false;
		if (*q == '\\') {
			if (!q[1] || !strchr("\"\\$`", q[1]))
				return false;
			q++;
		}
		q++;
	}
	q++;
	if (*q != '\n' && *q != '\0')
		return false;
	*p = q;
	return true;
}

bool pol_codex_snapshot_inert(const char *text)
{
	if (!text)
		return false;
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		bool ok = n == 0 || p[0] == '#' || line_is(p, n, "unalias -a 2>/dev/null || true");
		if (!ok && (strncmp(p, "shopt -s ", 9) == 0 || strncmp(p, "shopt -u ", 9) == 0))
			ok = n > 9 &&
			     strspn(p + 9, "abcdefghijklmnopqrstuvwxyz0123456789_") == n - 9;
		if (!ok && strncmp(p, "set -o ", 7) == 0)
			for (size_t i = 0; !ok && i < WD_ARRAY_SIZE(codex_set_ok); i++)
				ok = line_is(p + 7, n - 7, codex_set_ok[i]);
		if (!ok && strncmp(p, "declare -x ", 11) == 0) {
			/* A value may span lines: the declaration ends the line
			 * its closing quote is on. */
			const char *q = p;
			if (!eat_declare(&q))
				return false;
			p = *q ? q + 1 : q;
			continue;
		}
		if (!ok)
			return false;
		p = nl ? nl + 1 : p + n;
	}
	return true;
}

/* X --codex-run-as-process-setup FD PID pipe "" CWD PROG ARGV0 [ARG...]:
 * Codex's own binary re-run to set up a tool call's process (pipes, its
 * parent-death signal) before it execs PROG, as 0.169.0 does for a
 * non-interactive call. */
static bool codex_setup_shape(char *const *argv, size_t argc)
{
	if (argc < 9 || strcmp(argv[1], "--codex-run-as-process-setup") != 0)
		return false;
	for (int i = 2; i <= 3; i++)
		if (!argv[i][0] || strspn(argv[i], "0123456789") != strlen(argv[i]) ||
		    strlen(argv[i]) > 10)
			return false;
	return strcmp(argv[4], "pipe") == 0 && argv[5][0] == '\0' && argv[6][0] == '/' &&
	       argv[7][0] == '/' && argv[8][0] != '\0';
}

enum pol_codex_shape pol_codex_shape(const struct pol_request *r, const struct pol_config *c,
				     const char **inner)
{
	if (inner)
		*inner = NULL;
	return c ? pol_hn_codex_shape(r, c->home, inner) : POL_CODEX_NONE;
}

enum pol_codex_shape pol_hn_codex_shape(const struct pol_request *r, const char *home,
					const char **inner)
{
	if (inner)
		*inner = NULL;
	if (!r || r->kind != POL_EXEC || r->interp || r->argc == 0 || !home)
		return POL_CODEX_NONE;
	if (codex_setup_shape(r->argv, r->argc))
		return POL_CODEX_SETUP;
	char buf[128];
	const char *name = pol_cls_identity(r->path, r->argv[0], buf, sizeof(buf));
	if (strcmp(name, "bash") != 0 || !r->harness_file)
		return POL_CODEX_NONE;
	char *snap = NULL;
	enum pol_codex_shape shape = POL_CODEX_NONE;
	if (r->argc == 3 && strcmp(r->argv[1], "-c") == 0) {
		char *cmd = pol_hn_codex_inner(r->argv[2], home, &snap);
		if (cmd) {
			free(cmd);
			shape = POL_CODEX_WRAPPER;
		} else if (codex_validate_shape(r->argv, r->argc, home, &snap)) {
			shape = POL_CODEX_VALIDATE;
		}
	}
	/* The file read must be the one this exec sources, and inert. */
	if (shape != POL_CODEX_NONE &&
	    !(r->harness_path && snap && strcmp(r->harness_path, snap) == 0 &&
	      pol_codex_snapshot_inert(r->harness_file)))
		shape = POL_CODEX_NONE;
	free(snap);
	if (shape == POL_CODEX_WRAPPER && inner)
		*inner = r->inner;
	return shape;
}

char *pol_codex_snapshot_path(char *const argv[], const struct pol_config *c)
{
	size_t argc = 0;
	while (argv && argv[argc])
		argc++;
	if (!c || argc != 3 || !pol_hn_is_named(argv[0], "bash") || strcmp(argv[1], "-c") != 0)
		return NULL;
	char *snap = NULL;
	char *cmd = pol_hn_codex_inner(argv[2], c->home, &snap);
	if (cmd) {
		free(cmd);
		return snap;
	}
	free(snap);
	snap = NULL;
	if (codex_validate_shape(argv, argc, c->home, &snap))
		return snap;
	return NULL;
}

/* Where 0.169.0's bin/codex.js finds the native binary, relative to the
 * directory above its package (node_modules/@openai) or to the package. */
static const char *const codex_native_sibling[] = {
	"/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
	"/codex-linux-arm64/vendor/aarch64-unknown-linux-musl/bin/codex",
};
static const char *const codex_native_nested[] = {
	"/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
	"/codex/node_modules/@openai/codex-linux-arm64/vendor/aarch64-unknown-linux-musl/bin/codex",
	"/codex/vendor/x86_64-unknown-linux-musl/bin/codex",
	"/codex/vendor/aarch64-unknown-linux-musl/bin/codex",
};

/* A canonical absolute path: no empty, "." or ".." component. */
static bool path_canonical(const char *p)
{
	if (p[0] != '/')
		return false;
	for (const char *c = p; *c; c++) {
		if (c[0] != '/')
			continue;
		if (c[1] == '/' || c[1] == '\0')
			return false;
		if (c[1] == '.' && (c[2] == '/' || c[2] == '\0'))
			return false;
		if (c[1] == '.' && c[2] == '.' && (c[3] == '/' || c[3] == '\0'))
			return false;
	}
	return true;
}

bool pol_harness_launcher_child(enum pol_harness kind, const char *launcher, const char *resolved)
{
	static const char launcher_tail[] = "/codex/bin/codex.js";
	if (!pol_harness_profile(kind)->launcher || !launcher || !resolved ||
	    !path_canonical(launcher) || !path_canonical(resolved) ||
	    !wd_str_has_suffix(launcher, launcher_tail))
		return false;
	/* <NM>/@openai, the directory that holds the launcher's package. */
	size_t base = strlen(launcher) - strlen(launcher_tail);
	if (base < 8 || strncmp(launcher + base - 8, "/@openai", 8) != 0 ||
	    strncmp(resolved, launcher, base) != 0)
		return false;
	const char *rest = resolved + base;
	for (size_t i = 0; i < WD_ARRAY_SIZE(codex_native_sibling); i++)
		if (strcmp(rest, codex_native_sibling[i]) == 0)
			return true;
	for (size_t i = 0; i < WD_ARRAY_SIZE(codex_native_nested); i++)
		if (strcmp(rest, codex_native_nested[i]) == 0)
			return true;
	return false;
}

/* Codex 0.169.0's probes of the project, all with
 * git -c safe.bareRepository=explicit [-c core.hooksPath=/dev/null
 * -c core.fsmonitor=false]: hooks and fsmonitor off, so git runs nothing
 * else. */
static bool codex_git_probe(char *const *argv, size_t argc)
{
	static const char *const safe[] = {"-c", "safe.bareRepository=explicit",
					   "-c", "core.hooksPath=/dev/null",
					   "-c", "core.fsmonitor=false"};
	static const char *const probes[][4] = {
		{"rev-parse", "--git-dir"},
		{"rev-parse", "HEAD"},
		{"rev-parse", "--abbrev-ref", "HEAD"},
		{"remote", "get-url", "origin"},
		{"remote", "-v"},
		{"status", "--porcelain", "--ignore-submodules=dirty"},
	};
	if (argc < 2 || !pol_hn_is_named(argv[0], "git"))
		return false;
	/* git -c safe.bareRepository=explicit config --null --get core.fsmonitor */
	static const char *const fsmon[] = {"-c",     "safe.bareRepository=explicit",
					    "config", "--null",
					    "--get",  "core.fsmonitor"};
	if (pol_hn_argv_is(argv, argc, "git", fsmon, WD_ARRAY_SIZE(fsmon)))
		return true;
	if (argc < 1 + WD_ARRAY_SIZE(safe))
		return false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(safe); i++)
		if (strcmp(argv[1 + i], safe[i]) != 0)
			return false;
	char *const *rest = argv + 1 + WD_ARRAY_SIZE(safe);
	size_t nrest = argc - 1 - WD_ARRAY_SIZE(safe);
	for (size_t k = 0; k < WD_ARRAY_SIZE(probes); k++) {
		size_t n = 0;
		while (n < 4 && probes[k][n] && n < nrest && strcmp(probes[k][n], rest[n]) == 0)
			n++;
		if ((n == 4 || !probes[k][n]) && n == nrest)
			return true;
	}
	return false;
}

bool pol_hn_codex_startup(char *const *argv, size_t argc)
{
	static const char *const lsb[] = {"-a"};
	static const char *const long_bit[] = {"LONG_BIT"};
	static const char *const lc[] = {"-lc", codex_snapshot_script};
	return pol_hn_argv_is(argv, argc, "lsb_release", lsb, 1) ||
	       pol_hn_argv_is(argv, argc, "getconf", long_bit, 1) || codex_git_probe(argv, argc) ||
	       pol_hn_argv_is(argv, argc, "bash", lc, 2);
}
