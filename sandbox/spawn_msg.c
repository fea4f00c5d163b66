/*
 * spawn_msg.c: what both sides of the set-up share: the set-up socket's
 * messages between the supervisor, init and the agent (a type byte,
 * optional text, an optional fd, and the sender's pid: SO_PASSCRED), and
 * how a view is named in a message for a person.
 */
#include "spawn_int.h"

#include "common.h"
#include "jail_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

/* One message: a type byte, optional text, optional fd. */
int sbx_msg_send(int sock, char type, const char *text, int fd)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "%c%s", type, text ? text : "");
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	/* Without a descriptor: send(), which the agent's filter lets
	 * through (sendmsg would wait for the supervisor's loop, which is not
	 * running yet). */
	while (fd < 0) {
		if (send(sock, buf, (size_t)n, MSG_NOSIGNAL) >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
	struct iovec iov = {.iov_base = buf, .iov_len = (size_t)n};
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		msg.msg_control = u.b;
		msg.msg_controllen = sizeof(u.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	for (;;) {
		if (sendmsg(sock, &msg, MSG_NOSIGNAL) >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

int sbx_msg_recv(int sock, struct sbx_msg *m)
{
	char buf[512];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf) - 1};
	union {
		char b[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.b,
			     .msg_controllen = sizeof(u.b)};
	ssize_t r;
	bool reset = false;
	/* A peer that died with our message unread (init failed before it
	 * read an ack) leaves ECONNRESET pending, reported before what it
	 * sent last (its failure): that error is consumed by reporting it,
	 * so the next read returns the message, or end of file. */
	do {
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (r < 0 && (errno == EINTR || (errno == ECONNRESET && !reset && (reset = true))));
	if (r < 0)
		return -errno;
	if (r == 0)
		return -EPIPE;
	buf[r] = '\0';
	m->type = buf[0];
	snprintf(m->text, sizeof(m->text), "%s", buf + 1);
	m->fd = -1;
	m->pid = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&m->fd, CMSG_DATA(c), sizeof(int));
		else if (c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred cr;
			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			m->pid = cr.pid;
		}
	}
	return 0;
}

const char *sbx_view_slot_what(const struct sbx_view_slot *v)
{
	switch (v->kind) {
	case VIEW_PROJECT:
		return "the project view";
	case VIEW_MARKERS:
		return "a markers view";
	case VIEW_GATE:
	default:
		return "a gated place's view";
	}
}
