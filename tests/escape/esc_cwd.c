/*
 * esc_cwd: tries to run a command in another working directory than the
 * one warden decided it in, by changing the cwd the caller shares after
 * the decoder read it and before the exec.
 *
 *   esc_cwd thread  N A B  a second thread of the caller flips the cwd
 *                          between directories A and B (threads share it)
 *   esc_cwd clonefs N A B  the flipper is another process made with
 *                          clone(CLONE_FS), which shares the cwd without
 *                          being a thread
 *
 * Each of N attempts forks a child that starts in A, starts its flipper,
 * and execs /bin/pwd -P tI (I: the attempt's number, which pwd ignores
 * and the audit's summary shows) with its stdout on a pipe; the parent
 * prints "tag=tI cwd=DIR" for every pwd that ran, then "ran=R killed=K
 * refused=F clonefs=OK|EPERM". The driver compares each line with the
 * cwd of the audit row of that summary: any difference means a command ran
 * somewhere it was not decided for.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir_a, *dir_b;

static void *flip(void *arg)
{
	(void)arg;
	for (;;) {
		if (chdir(dir_b) < 0 || chdir(dir_a) < 0)
			_exit(3);
	}
	return NULL;
}

/* The clone flipper ends with the child whose cwd it flips: the exec'd
 * program's exit kills it. */
static int flip_main(void *arg)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(3);
	flip(arg);
	return 0;
}

/* The child: |mode|'s flipper, then the exec. 100: the flipper could not
 * be made (the clone was refused). */
static void attempt(const char *mode, int out, int i)
{
	if (chdir(dir_a) < 0)
		_exit(4);
	if (strcmp(mode, "thread") == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, flip, NULL) != 0)
			_exit(5);
	} else {
		static char stack[64 * 1024];
		int pid = clone(flip_main, stack + sizeof(stack), CLONE_FS | SIGCHLD, NULL);
		if (pid < 0)
			_exit(errno == EPERM ? 100 : 6);
	}
	/* The strings on the heap: the caller's own private memory. */
	char tag[32];
	snprintf(tag, sizeof(tag), "t%d", i);
	char *prog = strdup("/bin/pwd"), *a0 = strdup("pwd"), *a1 = strdup("-P"), *a2 = strdup(tag);
	char *av[] = {a0, a1, a2, NULL};
	if (dup2(out, 1) < 0)
		_exit(7);
	execv(prog, av);
	_exit(8);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: esc_cwd thread|clonefs N A B\n");
		return 2;
	}
	const char *mode = argv[1];
	int n = atoi(argv[2]);
	dir_a = argv[3];
	dir_b = argv[4];
	int ran = 0, killed = 0, refused = 0, eperm = 0;
	for (int i = 0; i < n; i++) {
		int p[2];
		if (pipe(p) < 0)
			return 1;
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			close(p[0]);
			attempt(mode, p[1], i);
		}
		close(p[1]);
		char buf[4096];
		size_t len = 0;
		ssize_t k;
		while (len < sizeof(buf) - 1 &&
		       ((k = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0 ||
			(k < 0 && errno == EINTR)))
			len += k > 0 ? (size_t)k : 0;
		buf[len] = '\0';
		close(p[0]);
		int st = 0;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(st)) {
			killed++;
		} else if (WEXITSTATUS(st) == 100) {
			eperm++;
		} else if (WEXITSTATUS(st) == 0 && len > 0) {
			ran++;
			buf[strcspn(buf, "\n")] = '\0';
			printf("tag=t%d cwd=%s\n", i, buf);
		} else {
			refused++;
		}
	}
	printf("ran=%d killed=%d refused=%d clonefs=%s\n", ran, killed, refused,
	       eperm ? "EPERM" : "OK");
	return 0;
}
