/*
 * boundary.c: what crosses the sandbox's boundary by name, decided from the
 * config and the agent's profile: which variables of warden's environment
 * are secrets the agent's environment loses (and which it keeps), and which
 * Unix sockets outside the project the agent may connect to.
 *
 * Pure: the supervisor hands in names and canonical paths (the kernel's
 * name of a file it resolved), and gets a verdict.
 *
 * See docs/design.md, section "The boundary".
 */
#include "policy_int.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* Variables that are secrets whatever their shape, or that hand the agent a
 * credential without being one (an ssh-agent's socket signs for it). */
static const char *const env_secret_exact[] = {
	"AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN",
	"AWS_SECURITY_TOKEN",
	"GITHUB_TOKEN",
	"GH_TOKEN",
	"GH_ENTERPRISE_TOKEN",
	"NPM_TOKEN",
	"SSH_AUTH_SOCK",
	"GPG_AGENT_INFO",
	"TOKEN",
	"PASSWORD",
	"PASSWD",
	"API_KEY",
	"APIKEY",
	"SECRET",
	"VAULT_TOKEN",
};

/* Name endings that say "secret" (compared without case). */
static const char *const env_secret_suffix[] = {
	"_API_KEY",	"_APIKEY",     "_TOKEN",       "_PASSWORD",   "_PASSWD",
	"_PASSPHRASE",	"_ACCESS_KEY", "_PRIVATE_KEY", "_SECRET_KEY", "_AUTH_TOKEN",
	"_CREDENTIALS", "_CREDENTIAL", "_PAT",
};

static bool ieq_suffix(const char *s, size_t n, const char *suf)
{
	size_t m = strlen(suf);
	return n >= m && strncasecmp(s + n - m, suf, m) == 0;
}

bool pol_env_name_is_secret(const char *name, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(env_secret_exact); i++)
		if (strlen(env_secret_exact[i]) == len &&
		    strncasecmp(name, env_secret_exact[i], len) == 0)
			return true;
	for (size_t i = 0; i < WD_ARRAY_SIZE(env_secret_suffix); i++)
		if (ieq_suffix(name, len, env_secret_suffix[i]))
			return true;
	/* *_SECRET*: AZURE_CLIENT_SECRET, JWT_SECRET_BASE, SECRET_KEY_BASE. */
	for (size_t i = 0; i + 6 <= len; i++)
		if (strncasecmp(name + i, "SECRET", 6) == 0)
			return true;
	return false;
}

bool pol_env_keeps(const struct pol_config *c, enum pol_harness h, const char *name, size_t len)
{
	const char *const *need = pol_harness_profile(h)->env_keep;
	for (size_t i = 0; need[i]; i++)
		if (strlen(need[i]) == len && memcmp(need[i], name, len) == 0)
			return true;
	for (size_t i = 0; c && i < c->nenv_keep; i++)
		if (strlen(c->env_keep[i]) == len && memcmp(c->env_keep[i], name, len) == 0)
			return true;
	return false;
}

bool pol_env_name_valid(const char *name)
{
	if (!name[0] || isdigit((unsigned char)name[0]))
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return false;
	return true;
}

const char *pol_socket_allowed(const struct pol_config *c, const char *path)
{
	if (!c || !path || path[0] != '/')
		return NULL;
	for (size_t i = 0; i < c->nsock_allow; i++)
		if (pol_glob_match(c->sock_allow[i], path))
			return c->sock_allow[i];
	return NULL;
}
