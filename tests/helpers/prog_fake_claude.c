/*
 * fake_claude: a scripted stand-in for Claude Code that reproduces its exec
 * shapes exactly, for tests/integration/test_agents.c.
 *
 *   fake_claude SCRIPT   runs, like Claude Code 2.1.x, `bash -c env` at
 *                        start-up, then one tool call per line of SCRIPT:
 *                        a vfork+exec of
 *                          /bin/bash -c "source $HOME/.claude/shell-snapshots/
 *                          snapshot-bash-123.sh 2>/dev/null || true && shopt -u
 *                          extglob && eval 'CMD' < /dev/null && pwd -P >|
 *                          /tmp/claude-abcd-cwd"
 *                        with CMD single-quote escaped as the harness does
 *                        (' becomes '\''), waiting for it; a line
 *                        "@bfs ARGS..." instead execs its own binary with
 *                        argv[0] "bfs" and ARGS split on spaces, as Claude
 *                        Code runs its built-in find. After each call it
 *                        prints "call N: CMD -> status S".
 *   bfs ROOT... [EXPR]   (argv[0] "bfs") a tiny find that only prints the
 *                        paths under each ROOT: it never deletes or runs
 *                        anything, whatever the expression says.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_ARGS 64

static int print_path(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	printf("%s\n", path);
	return 0;
}

/* argv[0] "bfs": print the paths of each root, nothing more. */
static int tiny_find(int argc, char **argv)
{
	int roots = 0;
	for (int i = 1; i < argc && argv[i][0] != '-' && argv[i][0] != '(' && argv[i][0] != '!';
	     i++) {
		roots++;
		if (nftw(argv[i], print_path, 16, FTW_PHYS) != 0)
			fprintf(stderr, "bfs: %s: %s\n", argv[i], strerror(errno));
	}
	if (roots == 0)
		nftw(".", print_path, 16, FTW_PHYS);
	return 0;
}

/* Runs |path| with |argv| in a vforked child and returns its wait status
 * as a shell would report it (126 when the exec was refused). */
static int run(const char *path, char *const argv[])
{
	fflush(stdout);
	pid_t pid = vfork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execve(path, argv, environ);
		_exit(errno == ENOENT ? 127 : 126);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Claude Code's wrapper around |cmd|. Caller frees. */
static char *wrapper(const char *home, const char *cmd)
{
	size_t n = strlen(home) + 4 * strlen(cmd) + 256;
	char *s = malloc(n);
	if (!s)
		abort();
	int k = snprintf(s, n,
			 "source %s/.claude/shell-snapshots/snapshot-bash-123.sh 2>/dev/null || "
			 "true && shopt -u extglob && eval '",
			 home);
	char *p = s + k;
	for (const char *c = cmd; *c; c++) {
		if (*c == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = *c;
		}
	}
	snprintf(p, n - (size_t)(p - s), "' < /dev/null && pwd -P >| /tmp/claude-abcd-cwd");
	return s;
}

/* "@bfs ARGS": the agent's own binary as bfs. */
static int run_bfs(char *args)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return -1;
	self[n] = '\0';
	char *argv[MAX_ARGS + 2] = {"bfs"};
	int argc = 1;
	char *save = NULL;
	for (char *w = strtok_r(args, " ", &save); w && argc < MAX_ARGS;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	return run(self, argv);
}

int main(int argc, char **argv)
{
	const char *me = strrchr(argv[0], '/');
	me = me ? me + 1 : argv[0];
	if (strcmp(me, "bfs") == 0)
		return tiny_find(argc, argv);
	if (argc != 2) {
		fprintf(stderr, "usage: fake_claude SCRIPT\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	FILE *f = fopen(argv[1], "re");
	if (!f) {
		fprintf(stderr, "fake_claude: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	const char *home = getenv("HOME");
	if (!home || !*home)
		home = "/root";

	/* Start-up: Claude Code reads the login environment first. */
	int st = run("/bin/bash", (char *[]){"/bin/bash", "-c", "env", NULL});
	printf("startup: bash -c env -> status %d\n", st);

	char line[4096];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		n++;
		char shown[4096];
		snprintf(shown, sizeof(shown), "%s", line);
		if (strncmp(line, "@bfs ", 5) == 0) {
			st = run_bfs(line + 5);
		} else {
			char *script = wrapper(home, line);
			st = run("/bin/bash", (char *[]){"/bin/bash", "-c", script, NULL});
			free(script);
		}
		printf("call %d: %s -> status %d\n", n, shown, st);
	}
	fclose(f);
	return 0;
}
