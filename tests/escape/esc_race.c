/*
 * esc_race: tries to get an undecided command executed by changing what an
 * exec runs after warden decided it (docs/design.md: "the argv the judge saw is
 * the argv that runs").
 *
 *   esc_race path   N MARKER  a second thread flips the exec path between
 *                             "/bin//echo" (fast path) and "/bin/touch"
 *                             (refused in passive mode); argv is {"echo",
 *                             MARKER}, so a touch that runs makes MARKER.
 *   esc_race argv   N MARKER  /bin/sh -c BUF, a second thread flips BUF
 *                             between "true" and "echo x >MARKER".
 *   esc_race shared N MARKER  as argv, but BUF is in a MAP_SHARED mapping
 *                             that another process (not a thread) flips.
 *   esc_race mem    N MARKER  as argv, but the flipper writes BUF through
 *                             /proc/self/mem (which also writes read-only
 *                             pages) instead of a plain store.
 *
 * Prints "ran=R refused=F killed=K" and exits 0. The escape wins when
 * MARKER exists afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf_a[256], buf_b[256];
static char *volatile target;
static size_t target_len;
static int mem_fd = -1;

static void put(const char *src)
{
	if (mem_fd >= 0)
		(void)!pwrite(mem_fd, src, target_len, (off_t)(uintptr_t)target);
	else
		memcpy(target, src, target_len);
	__sync_synchronize();
}

static void *flipper(void *arg)
{
	(void)arg;
	for (;;) {
		put(buf_a);
		put(buf_b);
	}
	return NULL;
}

static int wait_child(pid_t pid, int *ran, int *refused, int *killed)
{
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(st))
		(*killed)++;
	else if (WEXITSTATUS(st) == 100)
		(*refused)++;
	else
		(*ran)++;
	return 0;
}

/* One attempt from a fresh child with its own flipping thread. */
static void attempt_thread(const char *mode, const char *marker)
{
	char *mine = malloc(256);
	memcpy(mine, buf_a, target_len);
	target = mine;
	if (strcmp(mode, "mem") == 0)
		mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
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

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: esc_race path|argv|shared|mem N MARKER\n");
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
	if (strcmp(mode, "shared") == 0) {
		char *shm =
			mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (shm == MAP_FAILED)
			return 1;
		memcpy(shm, buf_a, target_len);
		target = shm;
		pid_t flip = fork();
		if (flip == 0) {
			flipper(NULL);
			_exit(0);
		}
		for (int i = 0; i < n; i++) {
			pid_t pid = fork();
			if (pid == 0) {
				char *av[] = {"sh", "-c", shm, NULL};
				execv("/bin/sh", av);
				_exit(100);
			}
			wait_child(pid, &ran, &refused, &killed);
		}
		kill(flip, SIGKILL);
		waitpid(flip, NULL, 0);
	} else {
		for (int i = 0; i < n; i++) {
			pid_t pid = fork();
			if (pid == 0)
				attempt_thread(mode, marker);
			wait_child(pid, &ran, &refused, &killed);
		}
	}
	printf("ran=%d refused=%d killed=%d\n", ran, refused, killed);
	return 0;
}
