/*
 * esc_splitfc: the agent of test_esc_split_failclosed. Plain system calls.
 *
 *   esc_splitfc DIR NAME HITS N
 *
 * Waits (printing "STEP 1") until the file "go1" exists in the working
 * directory, then forks N children WITHOUT exec: the supervisor attaches
 * to a process at its exec, so these are not traced and do not die with
 * the supervisor through PTRACE_O_EXITKILL; only the sandbox's end kills
 * them. Each child opens DIR/NAME for reading, again and again; an open
 * that succeeds appends "HIT <pid>" to HITS (a descriptor opened before
 * the fork, so that the one write(2) is all that stands between a
 * succeeded open and the mark) and prints what it read. The parent prints
 * "FORKED N" and waits for ever.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void child(int dir, const char *name, int hits)
{
	for (;;) {
		int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			char line[64];
			int n = snprintf(line, sizeof(line), "HIT %d\n", (int)getpid());
			if (write(hits, line, (size_t)n) < 0)
				_exit(3);
			char buf[256];
			ssize_t r = read(fd, buf, sizeof(buf));
			if (r > 0 && write(1, buf, (size_t)r) < 0)
				_exit(3);
			_exit(0);
		}
		/* Refused or failed (not what a waiting open does): again. */
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: esc_splitfc DIR NAME HITS N\n");
		return 2;
	}
	int n = atoi(argv[4]);
	int dir = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	int hits = open(argv[3], O_WRONLY | O_APPEND | O_CLOEXEC);
	if (dir < 0 || hits < 0 || n <= 0) {
		perror("esc_splitfc: open");
		return 2;
	}
	printf("STEP 1\n");
	fflush(stdout);
	struct stat st;
	while (stat("go1", &st) < 0)
		usleep(20000);
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0)
			child(dir, argv[2], hits);
		if (p < 0) {
			perror("esc_splitfc: fork");
			return 2;
		}
	}
	printf("FORKED %d\n", n);
	fflush(stdout);
	for (;;)
		pause();
}
