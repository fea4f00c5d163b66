/*
 * esc_open: opens files directly, with no exec to decide, so that only the
 * project view, the mount namespace and Landlock stand in the way.
 *
 *   read PATH...      prints each file's content or "PATH errno=NAME"
 *   write PATH        creates/truncates PATH and writes "pwned"
 *   link OLD NEW      hard link
 *   rename OLD NEW    rename
 *   fd N              uses an inherited fd N: fstat, openat(N, ".env"),
 *                     /proc/self/fd/N/.env
 *   dirfd             opens the project dir as fd N, then /dev/fd/N/.env
 *                     and /proc/self/fd/N/.env (magic links)
 *   symswap N         a thread flips the directory symlink "d" between
 *                     "d1" and "d2" while N children exec /bin/cat d/f,
 *                     where d1/f is a plain file and d2/f a symlink to
 *                     ../.env (both made before warden started): the
 *                     exec's argument names no sensitive file, so cat
 *                     takes the fast path, and the open resolves to .env
 *                     half of the time
 *   longpath          opens ./././...(1500 times)/.env
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void dump(const char *path, int dirfd)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("%s errno=%s\n", path, strerrorname_np(errno));
		return;
	}
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		printf("%s read errno=%s\n", path, strerrorname_np(errno));
	} else {
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = '\n'; /* /proc/PID/environ and cmdline */
		buf[n] = '\0';
		printf("%s content=[%s]\n", path, buf);
	}
	close(fd);
}

static void result(const char *what, int rc)
{
	printf("%s rc=%d errno=%s\n", what, rc, rc < 0 ? strerrorname_np(errno) : "0");
}

static volatile int stop;

static void *flip(void *arg)
{
	(void)arg;
	while (!stop) {
		unlink("d.a");
		if (symlink("d1", "d.a") == 0)
			rename("d.a", "d");
		unlink("d.b");
		if (symlink("d2", "d.b") == 0)
			rename("d.b", "d");
	}
	return NULL;
}

static int symswap(int n)
{
	pthread_t t;
	pthread_create(&t, NULL, flip, NULL);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			char *av[] = {"cat", "d/f", NULL};
			execv("/bin/cat", av);
			_exit(100);
		}
		waitpid(pid, NULL, 0);
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("symswap done\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *m = argv[1];
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(m, "read")) {
		for (int i = 2; i < argc; i++)
			dump(argv[i], AT_FDCWD);
		return 0;
	}
	if (!strcmp(m, "write") && argc == 3) {
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		result("open_write", fd);
		if (fd >= 0)
			result("write", (int)write(fd, "pwned\n", 6));
		return 0;
	}
	if (!strcmp(m, "link") && argc == 4) {
		result("link", link(argv[2], argv[3]));
		dump(argv[3], AT_FDCWD);
		return 0;
	}
	if (!strcmp(m, "rename") && argc == 4) {
		result("rename", rename(argv[2], argv[3]));
		dump(argv[3], AT_FDCWD);
		return 0;
	}
	if (!strcmp(m, "fd") && argc == 3) {
		int n = atoi(argv[2]);
		struct stat st;
		result("fstat", fstat(n, &st));
		dump(".env", n);
		char p[64];
		snprintf(p, sizeof(p), "/proc/self/fd/%d/.env", n);
		dump(p, AT_FDCWD);
		return 0;
	}
	if (!strcmp(m, "dirfd")) {
		int n = open(".", O_RDONLY | O_DIRECTORY);
		char p[64];
		snprintf(p, sizeof(p), "/dev/fd/%d/.env", n);
		dump(p, AT_FDCWD);
		snprintf(p, sizeof(p), "/proc/self/fd/%d/.env", n);
		dump(p, AT_FDCWD);
		snprintf(p, sizeof(p), "/proc/self/fd/%d/../%s/.env", n, argc > 2 ? argv[2] : ".");
		dump(p, AT_FDCWD);
		return 0;
	}
	if (!strcmp(m, "symswap") && argc == 3)
		return symswap(atoi(argv[2]));
	if (!strcmp(m, "longpath")) {
		char *p = malloc(3100);
		p[0] = '\0';
		for (int i = 0; i < 1500; i++)
			strcat(p, "./");
		strcat(p, ".env");
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			printf("longpath errno=%s\n", strerrorname_np(errno));
		} else {
			char buf[256];
			ssize_t k = read(fd, buf, sizeof(buf) - 1);
			buf[k > 0 ? k : 0] = '\0';
			printf("longpath content=[%s]\n", buf);
		}
		free(p);
		return 0;
	}
	return 2;
}
