/*
 * esc_identity: execs whose program is not what its name or its path in the
 * supervisor's world says (the identity tests, test_esc_identity).
 *
 *   mark FILE             creates FILE (what a re-exec'd copy of this
 *                         program does) and exits 0.
 *   selfexe FILE          a forked child execs /proc/self/exe as "mark FILE";
 *                         prints "child exit=E" (or "errno=NAME").
 *   threadexe FILE        the same through /proc/thread-self/exe.
 *   fdexe FILE            the same through /proc/self/fd/N, an O_PATH fd of
 *                         its own program (fexecve's way).
 *   errno PATH [DIR]      from DIR (default: here), a forked child execs
 *                         PATH; prints "errno=NAME" when the exec fails, the
 *                         parent prints "child exit=E".
 *   swap N LINK A B FILE  a second thread flips the symlink LINK between A
 *                         and B (by rename, so it always exists) while N
 *                         forked children exec LINK with argv {"x", FILE};
 *                         prints "ran=R refused=F killed=K".
 *   forkexec FILE         forks a child that waits (no exec), then execs
 *                         /usr/bin/touch FILE itself; prints "errno=NAME"
 *                         when that exec fails.
 *   deepfd N FILE         makes a directory N levels below a new one in
 *                         /tmp, copies /usr/bin/touch there as "ls", goes
 *                         back to / and execs it through /proc/self/fd/D/ls
 *                         (D: that directory) as {"ls", FILE}; prints
 *                         "child exit=E" or "errno=NAME".
 *   deepcwd N             the same directory as its cwd (a name longer than
 *                         PATH_MAX), a forked child execs /bin/pwd; prints
 *                         "child exit=E" or "errno=NAME".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int wait_child(pid_t pid);

/* deepfd and deepcwd: see the header. */
static int deep(bool by_fd, int levels, const char *file)
{
	char tmpl[] = "/tmp/wd-deep-XXXXXX";
	if (!mkdtemp(tmpl) || chdir(tmpl) < 0)
		return 1;
	for (int i = 0; i < levels; i++)
		if ((mkdir("a", 0755) < 0 && errno != EEXIST) || chdir("a") < 0)
			return 1;
	char path[64];
	if (by_fd) {
		int in = open("/usr/bin/touch", O_RDONLY | O_CLOEXEC);
		int out = open("ls", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
		char buf[65536];
		ssize_t n;
		while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				return 1;
		if (in < 0 || out < 0 || close(out) < 0)
			return 1;
		close(in);
		int dir = open(".", O_PATH | O_DIRECTORY);
		if (dir < 0 || chdir("/") < 0)
			return 1;
		snprintf(path, sizeof(path), "/proc/self/fd/%d/ls", dir);
	} else {
		snprintf(path, sizeof(path), "/bin/pwd");
	}
	pid_t pid = fork();
	if (pid == 0) {
		char *av[] = {by_fd ? "ls" : "pwd", (char *)file, NULL};
		execve(path, av, environ);
		printf("errno=%s\n", strerrorname_np(errno));
		fflush(stdout);
		_exit(127);
	}
	wait_child(pid);
	return 0;
}

static int wait_child(pid_t pid)
{
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st))
		printf("child exit=%d\n", WEXITSTATUS(st));
	else
		printf("child signal=%d\n", WTERMSIG(st));
	fflush(stdout);
	return st;
}

static const char *link_path, *flip_a, *flip_b;

static void *flipper(void *arg)
{
	(void)arg;
	char tmp_a[4096], tmp_b[4096];
	snprintf(tmp_a, sizeof(tmp_a), "%s.a", link_path);
	snprintf(tmp_b, sizeof(tmp_b), "%s.b", link_path);
	unlink(tmp_a);
	unlink(tmp_b);
	for (;;) {
		if (symlink(flip_a, tmp_a) == 0)
			rename(tmp_a, link_path);
		if (symlink(flip_b, tmp_b) == 0)
			rename(tmp_b, link_path);
	}
	return NULL;
}

static int swap(int n, char *file)
{
	pthread_t t;
	if (symlink(flip_a, link_path) < 0 && errno != EEXIST)
		return 1;
	pthread_create(&t, NULL, flipper, NULL);
	int ran = 0, refused = 0, killed = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			char *av[] = {"x", file, NULL};
			execve(link_path, av, environ);
			_exit(errno == EACCES || errno == EPERM ? 126 : 127);
		}
		int st = 0;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(st))
			killed++;
		else if (WEXITSTATUS(st) >= 126)
			refused++;
		else
			ran++;
	}
	printf("ran=%d refused=%d killed=%d\n", ran, refused, killed);
	fflush(stdout);
	_exit(0); /* the flipper never stops */
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "mark") == 0) {
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		return fd < 0 ? 1 : 0;
	}
	if (argc >= 3 && (strcmp(argv[1], "selfexe") == 0 || strcmp(argv[1], "threadexe") == 0 ||
			  strcmp(argv[1], "fdexe") == 0)) {
		int fd = open("/proc/self/exe", O_PATH); /* inherited by the child */
		pid_t pid = fork();
		if (pid == 0) {
			char *av[] = {"esc_identity", "mark", argv[2], NULL};
			char fdp[64];
			snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", fd);
			execve(argv[1][0] == 's'   ? "/proc/self/exe"
			       : argv[1][0] == 't' ? "/proc/thread-self/exe"
						   : fdp,
			       av, environ);
			printf("errno=%s\n", strerrorname_np(errno));
			fflush(stdout);
			_exit(127);
		}
		wait_child(pid);
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "errno") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			if (argc >= 4 && chdir(argv[3]) < 0) {
				printf("chdir errno=%s\n", strerrorname_np(errno));
				fflush(stdout);
				_exit(1);
			}
			char *av[] = {argv[2], NULL};
			execve(argv[2], av, environ);
			printf("errno=%s\n", strerrorname_np(errno));
			fflush(stdout);
			_exit(127);
		}
		wait_child(pid);
		return 0;
	}
	if (argc >= 7 && strcmp(argv[1], "swap") == 0) {
		link_path = argv[3];
		flip_a = argv[4];
		flip_b = argv[5];
		return swap(atoi(argv[2]), argv[6]);
	}
	if (argc >= 3 && strcmp(argv[1], "forkexec") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			pause();
			_exit(0);
		}
		char *av[] = {"touch", argv[2], NULL};
		execve("/usr/bin/touch", av, environ);
		printf("errno=%s\n", strerrorname_np(errno));
		fflush(stdout);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 0;
	}
	if (argc >= 3 && (strcmp(argv[1], "deepfd") == 0 || strcmp(argv[1], "deepcwd") == 0))
		return deep(strcmp(argv[1], "deepfd") == 0, atoi(argv[2]),
			    argc >= 4 ? argv[3] : NULL);
	fprintf(stderr,
		"usage: esc_identity mark|selfexe|errno|swap|forkexec|deepfd|deepcwd ...\n");
	return 2;
}
