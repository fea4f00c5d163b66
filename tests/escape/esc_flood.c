/*
 * esc_flood: keeps one request pending (a child's exec of touch MARKER,
 * which in standard mode waits for a person) and meanwhile floods the
 * supervisor with N execs of /bin/true (fast path), to show that a pending
 * request blocks nothing and that the supervisor's memory stays bounded.
 *
 * Prints "flood-done ok=K of N", then waits for the pending child and
 * prints "pending-child exit=E".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int n = atoi(argv[1]);
	pid_t pending = fork();
	if (pending == 0) {
		char *av[] = {"touch", argv[2], NULL};
		execv("/bin/touch", av);
		_exit(100);
	}
	usleep(200000); /* let the pending request reach the supervisor first */
	int ok = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid = vfork();
		if (pid == 0) {
			char *av[] = {"true", NULL};
			execv("/bin/true", av);
			_exit(100);
		}
		int st = 0;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
	}
	printf("flood-done ok=%d of %d\n", ok, n);
	fflush(stdout);
	int st = 0;
	waitpid(pending, &st, 0);
	printf("pending-child exit=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}
