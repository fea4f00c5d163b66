/*
 * esc_view: changes files of the project with direct syscalls, with no
 * exec to decide, so that only the project view (and the kernel's checks
 * on it) stand in the way. The agent runs it as root without capabilities.
 *
 * Arguments are a sequence of operations, each with a fixed number of
 * arguments; each prints one line "OP ARG rc=N errno=NAME":
 *
 *   copy SRC DST        creates DST (0755) with SRC's bytes
 *   chown PATH UID GID  chmod PATH OCTAL   truncate PATH LEN
 *   utimes PATH SEC     (both times, explicitly; needs ownership)
 *   touch PATH          (utimensat with NULL: the current time)
 *   setxattr PATH NAME VALUE               removexattr PATH NAME
 *   listxattr PATH      prints "PATH xattrs=[name,name,]"
 *   open PATH MODE      MODE is r, w or rw: opens, reads or writes a byte
 *   read PATH           prints "PATH content=[...]" on success
 *   write PATH TEXT     O_WRONLY|O_CREAT|O_TRUNC, 0644
 *   unlink PATH   rmdir PATH   mkdir PATH   rename OLD NEW
 *   link OLD NEW  symlink TARGET PATH
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static void result(const char *op, const char *arg, int rc)
{
	printf("%s %s rc=%d errno=%s\n", op, arg, rc, rc < 0 ? strerrorname_np(errno) : "0");
	fflush(stdout);
}

static int copy(const char *src, const char *dst)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			rc = -1;
			break;
		}
	close(in);
	if (close(out) < 0)
		rc = -1;
	return n < 0 ? -1 : rc;
}

static int open_mode(const char *path, const char *mode)
{
	int flags = strcmp(mode, "r") == 0 ? O_RDONLY : strcmp(mode, "w") == 0 ? O_WRONLY : O_RDWR;
	int fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void do_read(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		result("read", path, -1);
		return;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		result("read", path, -1);
		return;
	}
	buf[n] = '\0';
	printf("%s content=[%s]\n", path, buf);
	result("read", path, 0);
}

static int do_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int rc = n == (ssize_t)strlen(text) ? 0 : -1;
	if (close(fd) < 0)
		rc = -1;
	return rc;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc;) {
		const char *op = argv[i];
		int left = argc - i - 1;
		char **a = argv + i + 1;
		int need = 1;
		int rc = 0;

		if (!strcmp(op, "copy") || !strcmp(op, "chmod") || !strcmp(op, "truncate") ||
		    !strcmp(op, "utimes") || !strcmp(op, "open") || !strcmp(op, "write") ||
		    !strcmp(op, "rename") || !strcmp(op, "link") || !strcmp(op, "symlink") ||
		    !strcmp(op, "removexattr"))
			need = 2;
		else if (!strcmp(op, "chown") || !strcmp(op, "setxattr"))
			need = 3;
		if (left < need) {
			fprintf(stderr, "esc_view: %s needs %d arguments\n", op, need);
			return 2;
		}
		errno = 0;
		if (!strcmp(op, "copy"))
			rc = copy(a[0], a[1]);
		else if (!strcmp(op, "chown"))
			rc = chown(a[0], (uid_t)atoi(a[1]), (gid_t)atoi(a[2]));
		else if (!strcmp(op, "chmod"))
			rc = chmod(a[0], (mode_t)strtoul(a[1], NULL, 8));
		else if (!strcmp(op, "truncate"))
			rc = truncate(a[0], atol(a[1]));
		else if (!strcmp(op, "utimes")) {
			struct timespec ts[2] = {{.tv_sec = atol(a[1])}, {.tv_sec = atol(a[1])}};
			rc = utimensat(AT_FDCWD, a[0], ts, 0);
		} else if (!strcmp(op, "touch"))
			rc = utimensat(AT_FDCWD, a[0], NULL, 0);
		else if (!strcmp(op, "setxattr"))
			rc = setxattr(a[0], a[1], a[2], strlen(a[2]), 0);
		else if (!strcmp(op, "removexattr"))
			rc = removexattr(a[0], a[1]);
		else if (!strcmp(op, "open"))
			rc = open_mode(a[0], a[1]);
		else if (!strcmp(op, "listxattr")) {
			char names[4096];
			ssize_t n = listxattr(a[0], names, sizeof(names));
			printf("%s xattrs=[", a[0]);
			for (ssize_t k = 0; k < n; k += (ssize_t)strlen(names + k) + 1)
				printf("%s,", names + k);
			printf("]\n");
			rc = n < 0 ? -1 : 0;
		} else if (!strcmp(op, "read")) {
			do_read(a[0]);
			i += 1 + need;
			continue;
		} else if (!strcmp(op, "write"))
			rc = do_write(a[0], a[1]);
		else if (!strcmp(op, "unlink"))
			rc = unlink(a[0]);
		else if (!strcmp(op, "rmdir"))
			rc = rmdir(a[0]);
		else if (!strcmp(op, "mkdir"))
			rc = mkdir(a[0], 0755);
		else if (!strcmp(op, "rename"))
			rc = rename(a[0], a[1]);
		else if (!strcmp(op, "link"))
			rc = link(a[0], a[1]);
		else if (!strcmp(op, "symlink"))
			rc = symlink(a[0], a[1]);
		else {
			fprintf(stderr, "esc_view: unknown operation %s\n", op);
			return 2;
		}
		result(op,
		       need == 2 && (!strcmp(op, "rename") || !strcmp(op, "link") ||
				     !strcmp(op, "symlink") || !strcmp(op, "copy"))
			       ? a[1]
			       : a[0],
		       rc);
		i += 1 + need;
	}
	return 0;
}
