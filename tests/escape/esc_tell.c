/*
 * esc_tell: the agent of the refusal-line race (test_esc_tell). Warden
 * tells a refused process why on its stderr; the agent tries to make it
 * write that line, as root, into a file the agent can only read.
 *
 *   esc_tell TARGET ATTEMPTS SECONDS
 *
 * It opens TARGET read-only and /dev/null write-only; THREADS threads
 * swap fd 2 between the two (dup2) without pause, while the main thread
 * asks for execs that passive refuses (execve of /usr/bin/touch with a
 * new argument each time, so no two requests are the same). The execve
 * is the main thread's own: the process warden tells is the one whose
 * descriptor table the threads change. It stops after ATTEMPTS refusals,
 * after SECONDS, or as soon as TARGET's size changed, and prints on
 * stdout (which nobody swaps) one line:
 *   "open TARGET: ok" or "open TARGET: <error>", then
 *   "tries N refused M changed 0|1".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS 2

static int target_fd = -1, null_fd = -1;
static atomic_bool stop;

static void *swapper(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		dup2(null_fd, 2);
		dup2(target_fd, 2);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		printf("usage: esc_tell TARGET ATTEMPTS SECONDS\n");
		return 2;
	}
	const char *target = argv[1];
	long attempts = atol(argv[2]), seconds = atol(argv[3]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	target_fd = open(target, O_RDONLY | O_CLOEXEC);
	if (target_fd < 0) {
		printf("open %s: %s\n", target, strerror(errno));
		return 1;
	}
	printf("open %s: ok\n", target);
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null_fd < 0) {
		printf("open /dev/null: %s\n", strerror(errno));
		return 1;
	}
	struct stat before;
	if (fstat(target_fd, &before) < 0)
		return 1;
	/* Warden allows the agent's own start-up chain of execs; an exec by
	 * another process of the tree ends it (trace.c). A child asks for
	 * one first, so the main thread's execs below are decided. */
	pid_t kid = fork();
	if (kid == 0) {
		char *const av[] = {"touch", "start", NULL};
		char *const ev[] = {NULL};
		execve("/usr/bin/touch", av, ev);
		_exit(0);
	}
	if (kid < 0 || waitpid(kid, NULL, 0) < 0)
		return 1;
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, swapper, NULL) != 0)
			return 1;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long tries = 0, refused = 0;
	bool changed = false;
	char arg[32];
	for (; tries < attempts; tries++) {
		snprintf(arg, sizeof(arg), "x%ld", tries);
		char *const av[] = {"touch", arg, NULL};
		char *const ev[] = {NULL};
		/* Refused: execve returns; were it allowed, touch would
		 * replace this process and the run would end with no
		 * "tries" line, which the test takes as a failure. */
		if (execve("/usr/bin/touch", av, ev) < 0)
			refused++;
		struct stat st;
		if (fstat(target_fd, &st) == 0 &&
		    (st.st_size != before.st_size || st.st_mtim.tv_sec != before.st_mtim.tv_sec ||
		     st.st_mtim.tv_nsec != before.st_mtim.tv_nsec)) {
			changed = true;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= seconds)
			break;
	}
	atomic_store(&stop, true);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	dup2(null_fd, 2);
	printf("tries %ld refused %ld changed %d\n", tries, refused, changed ? 1 : 0);
	return 0;
}
