/*
 * race_exec: tries to get an undecided command executed by rewriting the
 * exec's path or argv from a second thread while warden decides it.
 *
 *   race_exec path  N MARKER   path flips "/bin//echo" <-> "/bin/touch",
 *                              argv = {"echo", MARKER}: if touch runs, MARKER
 *                              appears.
 *   race_exec argv  N MARKER   /bin/sh -c BUF, BUF flips between a plain
 *                              "true" (fast path) and "echo x >MARKER" (a
 *                              redirect: refused in passive mode), which
 *                              creates MARKER with no further exec.
 *   race_exec vfork N MARKER   as argv, but exec'd from a vfork child while
 *                              the flipping thread runs in the parent, whose
 *                              memory the child shares.
 *
 * Prints "ran=R refused=F killed=K" and exits 0.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf_a[256], buf_b[256];
static char *volatile target;
static size_t target_len;
static volatile int stop;

static void *flipper(void *arg)
{
	(void)arg;
	while (!stop) {
		memcpy(target, buf_a, target_len);
		__sync_synchronize();
		memcpy(target, buf_b, target_len);
		__sync_synchronize();
	}
	return NULL;
}

static char shared[256];

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: race_exec path|argv|vfork N MARKER\n");
		return 2;
	}
	const char *mode = argv[1];
	int n = atoi(argv[2]);
	const char *marker = argv[3];
	if (strcmp(mode, "path") == 0) {
		strcpy(buf_a, "/bin//echo");
		strcpy(buf_b, "/bin/touch");
	} else {
		snprintf(buf_b, sizeof(buf_b), "echo x >%s", marker);
		memset(buf_a, ' ', strlen(buf_b));
		memcpy(buf_a, "true", 4);
		buf_a[strlen(buf_b)] = '\0';
	}
	target_len = strlen(buf_a) + 1;
	int ran = 0, refused = 0, killed = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(mode, "vfork") == 0) {
			memcpy(shared, buf_a, target_len);
			target = shared;
			stop = 0;
			pthread_t t;
			pthread_create(&t, NULL, flipper, NULL);
			char *av[] = {"sh", "-c", shared, NULL};
			pid_t pid = vfork();
			if (pid == 0) {
				execv("/bin/sh", av);
				_exit(100);
			}
			stop = 1;
			pthread_join(t, NULL);
			int st = 0;
			waitpid(pid, &st, 0);
			if (WIFSIGNALED(st))
				killed++;
			else if (WEXITSTATUS(st) == 100)
				refused++;
			else
				ran++;
			continue;
		}
		pid_t pid = fork();
		if (pid == 0) {
			char *mine = malloc(256);
			memcpy(mine, buf_a, target_len);
			target = mine;
			pthread_t t;
			pthread_create(&t, NULL, flipper, NULL);
			if (strcmp(mode, "path") == 0) {
				char *av[] = {"echo", (char *)marker, NULL};
				execv(mine, av);
			} else {
				char *av[] = {"sh", "-c", mine, NULL};
				execv("/bin/sh", av);
			}
			_exit(100);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		if (WIFSIGNALED(st))
			killed++;
		else if (WEXITSTATUS(st) == 100)
			refused++;
		else
			ran++;
	}
	printf("ran=%d refused=%d killed=%d\n", ran, refused, killed);
	return 0;
}
