/*
 * tell.c: one line on the stderr of the process a decision concerns,
 * written without ever blocking the supervisor's loop.
 */
#include "sup.h"

#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
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

	/* A stderr inside a view (the project, a gated place) is not touched at all: even
	 * closing our copy would send a FUSE flush, and the view's workers may
	 * all be waiting on this loop. readlink does not reach the view. */
	char link[64], target[4096];
	snprintf(link, sizeof(link), "/proc/%d/fd/2", tgid);
	ssize_t tl = readlink(link, target, sizeof(target) - 1);
	if (tl <= 0)
		return;
	target[tl] = '\0';
	for (size_t i = 0; r->tell_skip[i]; i++)
		if (wd_path_within(target, r->tell_skip[i]))
			return;

	/* The caller's own stderr, the same open file description (so a
	 * tool runner that captures stderr sees it), taken with pidfd_getfd:
	 * no path is reopened. */
	wd_autoclose int pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	if (pidfd < 0)
		return;
	wd_autoclose int fd = (int)syscall(SYS_pidfd_getfd, pidfd, 2, 0);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return;
	/* Never block the loop on the agent's pipe: write only what fits
	 * now (a full pipe drops the line, the audit keeps the reason). */
	if (S_ISFIFO(st.st_mode)) {
		int queued = 0, size = fcntl(fd, F_GETPIPE_SZ);
		if (ioctl(fd, FIONREAD, &queued) < 0 || size < 0 || size - queued < n)
			return;
		(void)!write(fd, msg, (size_t)n);
	} else if (S_ISSOCK(st.st_mode)) {
		(void)!send(fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	} else if (S_ISCHR(st.st_mode)) {
		/* A terminal can be stopped (^S) or never read: a new open
		 * file description in non-blocking mode, so the loop never
		 * waits on it. It is reopened through warden's own copy,
		 * /proc/self/fd/FD, never through the agent's /proc/PID/fd/2:
		 * a second thread of the agent could dup2 another file onto
		 * its fd 2 between the fstat above and the open, and root
		 * would open that file for writing. Warden's table is out of
		 * the agent's reach, so what is opened is the inode checked;
		 * the fstat of the new descriptor confirms it (same device,
		 * inode and device number). The agent's own descriptor must
		 * be open for writing: root writes only where the agent could
		 * have written itself. The new descriptor is O_CLOEXEC and
		 * closed on return; nothing is left to a child. */
		int acc = fcntl(fd, F_GETFL);
		if (acc < 0 || ((acc & O_ACCMODE) != O_WRONLY && (acc & O_ACCMODE) != O_RDWR))
			return;
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		wd_autoclose int nb = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		struct stat nst;
		if (nb >= 0 && fstat(nb, &nst) == 0 && nst.st_dev == st.st_dev &&
		    nst.st_ino == st.st_ino && nst.st_rdev == st.st_rdev)
			(void)!write(nb, msg, (size_t)n);
	} else if (S_ISREG(st.st_mode)) {
		(void)!write(fd, msg, (size_t)n);
	}
}
