/*
 * esc_tmp: the agent of the temporary-directory escapes. Runs each
 * operation of its command line with plain syscalls (no exec, so nothing
 * is decided but what the kernel, Landlock and the mounts allow) and
 * prints one line each: "OP PATH: ok" or "OP PATH: <errno name>", and for
 * read the content.
 *
 *   write PATH TEXT     create or truncate, then write
 *   append PATH TEXT
 *   read PATH
 *   unlink PATH | rmdir PATH | mkdir PATH
 *   rename FROM TO | symlink TARGET LINK | link FROM TO
 *   chmod OCTAL PATH
 *   deep DIR N          a chain of N directories under DIR, every fifth
 *                       one made 0555 and the last 000 once filled
 *   connect PATH        a Unix stream socket
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static void say(const char *op, const char *path, int rc)
{
	if (rc == 0)
		printf("%s %s: ok\n", op, path);
	else
		printf("%s %s: %s\n", op, path, strerrorname_np(errno));
	fflush(stdout);
}

static int put(const char *path, const char *text, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int deep(const char *dir, int n)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	if (chdir(dir) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (mkdir("d", 0755) < 0 || chdir("d") < 0)
			return -1;
		if (put("f", "x", O_TRUNC) < 0)
			return -1;
	}
	/* From the bottom up: every fifth directory read-only, the deepest
	 * closed altogether. */
	if (chdir("..") < 0 || chmod("d", 0) < 0)
		return -1;
	for (int i = n - 1; i > 0; i--) {
		if (i % 5 == 0 && chmod("d", 0555) < 0)
			return -1;
		if (chdir("..") < 0)
			return -1;
	}
	return 0;
}

static int do_connect(const char *path)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	int rc = connect(s, (struct sockaddr *)&a, sizeof(a));
	int e = errno;
	close(s);
	errno = e;
	return rc;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *op = argv[i];
		const char *a = i + 1 < argc ? argv[i + 1] : "";
		const char *b = i + 2 < argc ? argv[i + 2] : "";
		if (strcmp(op, "write") == 0 || strcmp(op, "append") == 0) {
			say(op, a, put(a, b, op[0] == 'w' ? O_TRUNC : O_APPEND));
			i += 2;
		} else if (strcmp(op, "read") == 0) {
			char buf[4096] = "";
			int fd = open(a, O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
			if (n >= 0) {
				buf[n] = '\0';
				printf("read %s: ok: %s\n", a, buf);
				fflush(stdout);
			} else {
				say(op, a, -1);
			}
			if (fd >= 0)
				close(fd);
			i += 1;
		} else if (strcmp(op, "unlink") == 0) {
			say(op, a, unlink(a));
			i += 1;
		} else if (strcmp(op, "rmdir") == 0) {
			say(op, a, rmdir(a));
			i += 1;
		} else if (strcmp(op, "mkdir") == 0) {
			say(op, a, mkdir(a, 0755));
			i += 1;
		} else if (strcmp(op, "rename") == 0) {
			say(op, a, rename(a, b));
			i += 2;
		} else if (strcmp(op, "symlink") == 0) {
			say(op, b, symlink(a, b));
			i += 2;
		} else if (strcmp(op, "link") == 0) {
			say(op, b, link(a, b));
			i += 2;
		} else if (strcmp(op, "chmod") == 0) {
			say(op, b, chmod(b, (mode_t)strtol(a, NULL, 8)));
			i += 2;
		} else if (strcmp(op, "deep") == 0) {
			say(op, a, deep(a, atoi(b)));
			i += 2;
		} else if (strcmp(op, "connect") == 0) {
			say(op, a, do_connect(a));
			i += 1;
		} else {
			fprintf(stderr, "esc_tmp: unknown operation %s\n", op);
			return 2;
		}
	}
	return 0;
}
