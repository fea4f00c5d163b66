/*
 * agent.c: what warden learns about the agent it starts: its program in
 * PATH, its harness profile and launcher, the person who runs it, its
 * environment and the places it may write.
 */
#include "sup.h"

#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>

extern char **environ;

/* Finds |cmd| in PATH the way execvp would. Caller frees. */
char *sup_find_program(const char *cmd)
{
	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0 ? realpath(cmd, NULL) : NULL;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	wd_autofree char *copy = wd_strdup(path);
	char *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *full = wd_asprintf("%s/%s", *dir ? dir : ".", cmd);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
			return full;
		free(full);
	}
	return NULL;
}

/* The agent's environment: warden's own variables (the judge's key among
 * them) never reach it, nor do variables that look like secrets
 * (pol_env_name_is_secret: *_API_KEY, *_TOKEN, *SECRET*, SSH_AUTH_SOCK...)
 * unless its harness needs them (its own API key) or the config keeps them.
 * The names removed are said once on stderr, never the values.
 * WARDEN_SESSION tells it which session it is in. */
char **sup_agent_environ(const char *session, const struct pol_config *c, enum pol_harness h)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = wd_calloc(n + 2, sizeof(char *));
	size_t k = 0;
	struct wd_sb gone = {0};
	for (size_t i = 0; i < n; i++) {
		if (wd_str_has_prefix(environ[i], "WARDEN_"))
			continue;
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		if (pol_env_name_is_secret(environ[i], len) &&
		    !pol_env_keeps(c, h, environ[i], len)) {
			wd_sb_printf(&gone, "%s%.*s", gone.len ? ", " : "", (int)len, environ[i]);
			continue;
		}
		env[k++] = environ[i];
	}
	env[k++] = wd_asprintf("WARDEN_SESSION=%s", session);
	env[k] = NULL;
	if (gone.len)
		wd_info("removed from the agent's environment (they look like secrets; keep one "
			"with \"env\": {\"keep\": [NAME]} in .warden/permissions.json): %s",
			gone.buf);
	wd_sb_free(&gone);
	return env;
}

void sup_free_env(char **env)
{
	for (size_t i = 0; env[i]; i++)
		if (wd_str_has_prefix(env[i], "WARDEN_SESSION="))
			free(env[i]);
	free(env);
}

char *sup_person_name(void)
{
	const char *sudo = getenv("SUDO_USER");
	if (sudo && *sudo && getuid() == 0)
		return wd_strdup(sudo);
	struct passwd *pw = getpwuid(getuid());
	if (pw)
		return wd_strdup(pw->pw_name);
	return wd_asprintf("uid %u", (unsigned)getuid());
}

/* The profile of a known agent, from its program (resolved path, then the
 * name it was called by). */
enum pol_harness sup_detect_agent(const char *real, const char *arg0)
{
	const char *names[2] = {real, arg0};
	for (size_t i = 0; i < 2; i++) {
		const char *b = strrchr(names[i], '/');
		b = b ? b + 1 : names[i];
		if (strcmp(b, "claude") == 0 || strstr(names[i], "/@anthropic-ai/claude-code/"))
			return POL_HARNESS_CLAUDE_CODE;
		if (strcmp(b, "codex") == 0 || strstr(names[i], "/@openai/codex/"))
			return POL_HARNESS_CODEX;
		if (strcmp(b, "aider") == 0)
			return POL_HARNESS_AIDER;
	}
	return POL_HARNESS_NONE;
}

/* The agent's launcher script, when the person ran one whose native child
 * becomes the agent (startup.c): Codex's bin/codex.js, run as itself or
 * as `node codex.js`. |real| is the program's canonical path. With --agent
 * auto, `node .../@openai/codex/bin/codex.js` selects the codex profile. */
void sup_find_launcher(struct sup_run *r, const char *real)
{
	static const char tail[] = "/@openai/codex/bin/codex.js";
	if (!real)
		return;
	if (wd_str_has_suffix(real, tail)) {
		if (r->opts.agent == POL_HARNESS_CODEX) {
			r->launcher = wd_strdup(real);
			r->launcher_argi = 1;
		}
		return;
	}
	const char *b = strrchr(real, '/');
	b = b ? b + 1 : real;
	if (strncmp(b, "node", 4) != 0 || !r->opts.argv[1])
		return;
	char *script = realpath(r->opts.argv[1], NULL);
	if (script && wd_str_has_suffix(script, tail)) {
		if (!r->opts.agent_set || r->opts.agent_auto)
			r->opts.agent = POL_HARNESS_CODEX;
		if (r->opts.agent == POL_HARNESS_CODEX) {
			r->launcher = script;
			r->launcher_argi = 2;
			return;
		}
	}
	free(script);
}

/* What each agent's harness must be able to write in the home directory
 * (its configuration and session state); its temporary files are under
 * /tmp, the session's own and writable. */
const char *const *sup_profile_writable(enum pol_harness h)
{
	return pol_harness_profile(h)->home_writable;
}

/* Where Landlock lets the agent write: the project (through the view),
 * the temporary directories (the session's private ones: tmpdir.c),
 * harmless devices, the agent profile's places and the config's list. */
char **sup_writable_list(const struct pol_config *c, const char *project, enum pol_harness h)
{
	static const char *const base[] = {"/tmp",	"/var/tmp", "/dev/null", "/dev/zero",
					   "/dev/full", "/dev/tty", "/dev/pts",	 "/dev/shm"};
	const char *const *prof = sup_profile_writable(h);
	const char *home = getenv("HOME");
	size_t n = pol_config_writable_count(c), np = 0;
	while (prof[np])
		np++;
	char **v = wd_calloc(n + np + WD_ARRAY_SIZE(base) + 2, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; home && home[0] == '/' && i < np; i++)
		v[k++] = wd_asprintf("%s/%s", home, prof[i]);
	v[k++] = wd_strdup(project);
	for (size_t i = 0; i < WD_ARRAY_SIZE(base); i++)
		v[k++] = wd_strdup(base[i]);
	for (size_t i = 0; i < n; i++)
		v[k++] = wd_strdup(pol_config_writable(c, i));
	return v;
}
