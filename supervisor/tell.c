/*
 * tell.c: one line on the stderr of the process a decision concerns,
 * written without ever blocking the supervisor's loop.
 */
#include "sup.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

void sup_tell_skip(struct sup_run *r, const char *place)
{
	for (size_t i = 0; i < SBX_MAX_VIEWS; i++)
		if (!r->tell_skip[i]) {
			r->tell_skip[i] = place;
			return;
		}
}

static void *close_thread(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

/* Closes |fd| on a detached thread: the close of a file in a view waits for
 * the view, which may be waiting for the loop. If no thread can be made,
 * the descriptor stays open (a leak of one fd beats a stalled loop). */
static void close_aside(int fd)
{
	pthread_t t;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, close_thread, (void *)(intptr_t)fd) != 0)
		wd_debug("a descriptor of a view stays open: no thread to close it");
	pthread_attr_destroy(&a);
}

static void tell_on(int fd, const char *msg, size_t n);

void sup_tell(const struct sup_run *r, pid_t tgid, const char *fmt, ...)
{
	char body[1000], msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	/* One line, at most sizeof(msg) - 1 bytes, always newline-ended, and
	 * nothing in it that drives a terminal. */
	char *clean = wd_sanitize(body);
	int n = snprintf(msg, sizeof(msg), "warden: %s\n", clean);
	free(clean);
	if (n >= (int)sizeof(msg)) {
		n = (int)sizeof(msg) - 1;
		msg[n - 1] = '\n';
	}
	if (n < 0)
		return;

	/* The caller's own stderr, the same open file description (so a
	 * tool runner that captures stderr sees it), taken with pidfd_getfd:
	 * from here on only warden's own copy is used. The agent may dup2()
	 * another file onto its fd 2 at any moment, but not change warden's
	 * descriptor table, so what is checked below is what is written. */
	wd_autoclose int pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	if (pidfd < 0)
		return;
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, 2, 0);
	if (fd < 0)
		return;
	/* A stderr inside a view (the project, a gated place) is not touched:
	 * fstat or a write would be FUSE requests, and the view's workers
	 * may all be waiting on this loop. readlink of warden's own copy does
	 * not reach the view; the copy is closed on a thread of its own, since
	 * even a close sends the view a flush. */
	char link[64], target[4096];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t tl = readlink(link, target, sizeof(target) - 1);
	target[tl > 0 ? tl : 0] = '\0';
	for (size_t i = 0; tl > 0 && r->tell_skip[i]; i++)
		if (wd_path_within(target, r->tell_skip[i])) {
			close_aside(fd);
			return;
		}
	if (tl <= 0) {
		close_aside(fd);
		return;
	}
	tell_on(fd, msg, (size_t)n);
	close(fd);
}

/* Writes |msg| to |fd|, warden's copy of a caller's stderr, without ever
 * blocking, and only where the caller itself may write. */
static void tell_on(int fd, const char *msg, size_t n)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	/* Only where the agent itself may write: never a file it holds
	 * open for reading only. */
	if (fl < 0 || ((fl & O_ACCMODE) != O_WRONLY && (fl & O_ACCMODE) != O_RDWR) ||
	    fstat(fd, &st) < 0)
		return;
	if (S_ISSOCK(st.st_mode)) {
		(void)!send(fd, msg, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	} else if (S_ISREG(st.st_mode)) {
		(void)!write(fd, msg, n);
	} else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
		/* A pipe can be full and a terminal stopped (^S) or never read:
		 * a new open file description in non-blocking mode, so the loop
		 * never waits on it (a full pipe drops the line, the audit keeps
		 * the reason). It is opened through warden's own descriptor
		 * (/proc/self/fd), never through the agent's table, and used
		 * only if it is the very object checked. A write of at most
		 * PIPE_BUF bytes to a pipe is whole or nothing. */
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		wd_autoclose int nb = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		struct stat nst;
		if (nb >= 0 && fstat(nb, &nst) == 0 && nst.st_dev == st.st_dev &&
		    nst.st_ino == st.st_ino && nst.st_rdev == st.st_rdev)
			(void)!write(nb, msg, n);
	}
}
