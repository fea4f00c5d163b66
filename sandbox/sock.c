/*
 * sock.c: the decoder of the socket calls the filter stops (connect, sendto
 * with an address, sendmsg, sendmmsg), the resolution of a pathname
 * destination as the caller would resolve it, and the mechanism that does an
 * allowed call on the caller's behalf. It decides nothing: the supervisor
 * (supervisor/sockets.c) says which destinations may be reached.
 *
 * Why a decision cannot be raced (a pathname destination is never let
 * through: warden connects the file decided, on the caller's own socket) and
 * why no descriptor leaks: docs/design.md, section "The sandbox: the socket
 * decoder".
 *
 * An IP destination (AF_INET/AF_INET6: connect, a datagram's address, a
 * TCP send with MSG_FASTOPEN) is read once from the caller's memory into
 * msgs[i].raw, decided on that copy (msgs[i].inet), and connected or sent
 * by sbx_sock_perform() with that copy on our descriptor of the caller's
 * socket: a thread (or a process sharing the pages) that rewrites the
 * sockaddr or the msghdr after the read changes memory nobody reads
 * again, and one that swaps the descriptor number changes a table we no
 * longer look at. Only a call whose outcome no memory can change (a TCP
 * send without MSG_FASTOPEN) is left to the kernel, from a single thread.
 */
#include "sandbox.h"
#include "sock_int.h"
#include "creds_int.h"
#include "proc_int.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

#define CONTROL_MAX  (64 * 1024)
#define IOV_MAX_K    1024 /* UIO_MAXIOV */
#define SYMLINKS_MAX 40

bool sbx_sock_call(int nr)
{
	return nr == __NR_connect || nr == __NR_sendto || nr == __NR_sendmsg || nr == __NR_sendmmsg;
}

void sbx_sock_event_free(struct sbx_sock_event *ev)
{
	if (!ev)
		return;
	for (size_t i = 0; i < ev->nmsgs; i++) {
		struct sbx_sock_msg *m = &ev->msgs[i];
		free(m->path);
		free(m->data);
		free(m->control);
		wd_close(&m->target_fd);
		for (size_t k = 0; k < m->nfds; k++)
			wd_close(&m->fds[k]);
		free(m->fds);
	}
	free(ev->msgs);
	wd_close(&ev->sockfd);
	wd_close(&ev->cwd_fd);
	sbx_creds_release(&ev->creds);
	free(ev);
}

/* Reads |n| bytes at |addr| of |pid| into |out|. 0 or -EFAULT. */
static int peek(pid_t pid, uint64_t addr, void *out, size_t n)
{
	if (n == 0)
		return 0;
	if (addr == 0 || n - 1 > UINT64_MAX - addr)
		return -EFAULT;
	struct iovec l = {.iov_base = out, .iov_len = n};
	struct iovec rv = {.iov_base = (void *)(uintptr_t)addr, .iov_len = n};
	return process_vm_readv(pid, &l, 1, &rv, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/* Sorts the address bytes copied into |m| as the kernel's AF_UNIX code
 * would read them (unix_validate_addr, unix_mkname_bsd). */
static void classify(struct sbx_sock_msg *m, int family)
{
	const struct sockaddr_un *sun = (const struct sockaddr_un *)(const void *)m->raw;
	m->kind = SBX_ADDR_RAW;
	if (family != AF_UNIX || m->rawlen <= offsetof(struct sockaddr_un, sun_path) ||
	    m->rawlen > sizeof(struct sockaddr_un) || sun->sun_family != AF_UNIX)
		return; /* not a Unix destination: the kernel refuses or ignores it */
	size_t max = m->rawlen - offsetof(struct sockaddr_un, sun_path);
	if (sun->sun_path[0] == '\0') {
		m->kind = SBX_ADDR_ABSTRACT;
		return;
	}
	m->kind = SBX_ADDR_PATH;
	m->path = wd_strndup(sun->sun_path, strnlen(sun->sun_path, max));
}

/* Copies the address at |addr| (|len| bytes) into |m|. |clamp|: sendmsg's
 * rule (a longer name is cut to sockaddr_storage); else connect's and
 * sendto's (a longer one is EINVAL). 0 or a positive errno. */
static int copy_addr(pid_t pid, struct sbx_sock_msg *m, uint64_t addr, uint64_t len, bool clamp,
		     int family)
{
	if (addr == 0 || len == 0) {
		m->kind = addr == 0 ? SBX_ADDR_NONE : SBX_ADDR_RAW;
		m->rawlen = 0;
		return 0;
	}
	if (len > sizeof(m->raw) && !clamp)
		return EINVAL;
	if ((int64_t)(int32_t)len < 0)
		return EINVAL;
	m->rawlen = len > sizeof(m->raw) ? sizeof(m->raw) : (unsigned)len;
	if (peek(pid, addr, m->raw, m->rawlen) < 0)
		return EFAULT;
	classify(m, family);
	return 0;
}

/* ---- IP destinations ------------------------------------------------------ */

static void inet_set(struct sbx_inet *out, int family, const void *addr, uint16_t nport)
{
	memset(out, 0, sizeof(*out));
	out->family = family;
	memcpy(out->addr, addr, family == AF_INET ? 4 : 16);
	out->port = ntohs(nport);
}

int sbx_sock_inet_dest(int sfamily, int stype, enum sbx_inet_use use, const void *raw, size_t len,
		       struct sbx_inet *out)
{
	if (use == SBX_INET_IGNORED)
		return 0;
	sa_family_t fam;
	if (len < sizeof(fam))
		return EINVAL;
	memcpy(&fam, raw, sizeof(fam));
	/* connect(AF_UNSPEC) dissolves the association (inet_dgram_connect,
	 * __inet_stream_connect): it reaches nobody. */
	if (use == SBX_INET_CONNECT && fam == AF_UNSPEC)
		return 0;
	struct sockaddr_in sin;
	if (sfamily == AF_INET) {
		if (len < sizeof(sin))
			return EINVAL;
		/* udp_sendmsg() takes sin_addr under AF_UNSPEC as well. */
		if (fam != AF_INET && !(use == SBX_INET_SEND && fam == AF_UNSPEC))
			return EAFNOSUPPORT;
		memcpy(&sin, raw, sizeof(sin));
		inet_set(out, AF_INET, &sin.sin_addr, sin.sin_port);
		return 1;
	}
	if (sfamily != AF_INET6)
		return EAFNOSUPPORT;
	if (fam == AF_INET) {
		/* An IPv6 datagram socket sends to and connects IPv4
		 * addresses given as such (udpv6_sendmsg,
		 * __ip6_datagram_connect); tcp_v6_connect refuses them. */
		if (stype == SOCK_STREAM)
			return EAFNOSUPPORT;
		if (len < sizeof(sin))
			return EINVAL;
		memcpy(&sin, raw, sizeof(sin));
		inet_set(out, AF_INET, &sin.sin_addr, sin.sin_port);
		return 1;
	}
	if (fam == AF_UNSPEC)
		return 0; /* udpv6_sendmsg: the connected peer, as with no address */
	if (fam != AF_INET6)
		return use == SBX_INET_SEND ? EINVAL : EAFNOSUPPORT;
	struct sockaddr_in6 sin6;
	if (len < 24) /* SIN6_LEN_RFC2133: sin6_scope_id may be left out */
		return EINVAL;
	memset(&sin6, 0, sizeof(sin6));
	memcpy(&sin6, raw, len < sizeof(sin6) ? len : sizeof(sin6));
	const uint8_t *a = sin6.sin6_addr.s6_addr;
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (memcmp(a, mapped, sizeof(mapped)) == 0) {
		inet_set(out, AF_INET, a + 12, sin6.sin6_port); /* sent as IPv4 */
	} else {
		inet_set(out, AF_INET6, a, sin6.sin6_port);
		out->scope = sin6.sin6_scope_id;
	}
	return 1;
}

static bool inet_family(int family)
{
	return family == AF_INET || family == AF_INET6;
}

/* What the kernel does with an address of a call on an IP socket. */
static enum sbx_inet_use inet_use(const struct sbx_sock_event *ev)
{
	if (ev->op == SBX_SOCK_CONNECT)
		return SBX_INET_CONNECT;
	if (ev->type != SOCK_STREAM)
		return SBX_INET_SEND;
	if (ev->protocol != IPPROTO_TCP)
		return SBX_INET_CONNECT; /* another stream protocol may connect on a send */
	/* tcp_sendmsg() reads msg_name only to connect with MSG_FASTOPEN
	 * (tcp_sendmsg_fastopen); the flags are the call's register
	 * argument, never memory. A socket whose connect was deferred
	 * (TCP_FASTOPEN_CONNECT) goes there too, but its destination is
	 * the one its connect gave, decided then. */
	return (ev->flags & MSG_FASTOPEN) ? SBX_INET_CONNECT : SBX_INET_IGNORED;
}

struct cmsghdr *sbx_cmsg_next(void *ctl, size_t len, struct cmsghdr *c, bool *bad)
{
	*bad = false;
	size_t off;
	if (!c) {
		off = 0; /* CMSG_FIRSTHDR */
	} else {
		/* __cmsg_nxthdr: the next header starts CMSG_ALIGN(cmsg_len)
		 * on, and must fit whole. |c| passed CMSG_OK, so its length is
		 * within the buffer and the sum cannot wrap. */
		off = (size_t)((uint8_t *)c - (uint8_t *)ctl) + CMSG_ALIGN(c->cmsg_len);
	}
	if (off > len || len - off < sizeof(struct cmsghdr))
		return NULL;
	struct cmsghdr *n = (struct cmsghdr *)(void *)((uint8_t *)ctl + off);
	/* CMSG_OK: at least a header, at most what is left of the buffer. */
	if (n->cmsg_len < sizeof(struct cmsghdr) || n->cmsg_len > len - off) {
		*bad = true;
		return NULL;
	}
	return n;
}

/* Control messages that make an IP datagram go elsewhere than its
 * destination: a source route (IP_RETOPTS: LSRR/SSRR options send the
 * packet to their first hop) or an IPv6 routing header (sent to its first
 * address). The filter refuses the same through setsockopt. */
static int inet_control_ok(const struct sbx_sock_msg *m)
{
	if (!m->control)
		return 0;
	bool bad = false;
	for (struct cmsghdr *c = sbx_cmsg_next(m->control, m->controllen, NULL, &bad); c;
	     c = sbx_cmsg_next(m->control, m->controllen, c, &bad)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RETOPTS)
			return EPERM;
		if (c->cmsg_level == IPPROTO_IPV6 &&
		    (c->cmsg_type == IPV6_RTHDR || c->cmsg_type == IPV6_2292RTHDR))
			return EPERM;
	}
	return bad ? EINVAL : 0;
}

/* Reads the IP destination of each message of |ev|. 0 or a positive errno. */
static int inet_decode(struct sbx_sock_event *ev)
{
	enum sbx_inet_use use = inet_use(ev);
	for (size_t i = 0; i < ev->nmsgs; i++) {
		struct sbx_sock_msg *m = &ev->msgs[i];
		int err = inet_control_ok(m);
		if (err)
			return err;
		if (m->kind == SBX_ADDR_NONE)
			continue;
		int rc = sbx_sock_inet_dest(ev->family, ev->type, use, m->raw, m->rawlen, &m->inet);
		if (rc < 0 || rc > 1)
			return rc < 0 ? EINVAL : rc;
		if (rc == 1) {
			m->kind = SBX_ADDR_INET;
		} else if (use == SBX_INET_IGNORED) {
			/* Sent without the address the kernel would ignore. */
			m->kind = SBX_ADDR_NONE;
			m->rawlen = 0;
		} else {
			m->kind = SBX_ADDR_RAW; /* AF_UNSPEC: nobody new is reached */
		}
	}
	return 0;
}

/* Whether data beyond SBX_SOCK_DATA_MAX may be cut (a stream sends part of
 * it and says how much) rather than refused (a datagram is whole or not). */
static bool stream(const struct sbx_sock_event *ev)
{
	return ev->type == SOCK_STREAM;
}

/* Gathers the |n| iovecs at |iov| into m->data. 0 or a positive errno. */
static int copy_iov(const struct sbx_sock_event *ev, struct sbx_sock_msg *m, uint64_t iov,
		    uint64_t n)
{
	if (n > IOV_MAX_K)
		return EMSGSIZE;
	if (n == 0)
		return 0;
	struct iovec *v = wd_calloc(n, sizeof(*v));
	if (peek(ev->pid, iov, v, n * sizeof(*v)) < 0) {
		free(v);
		return EFAULT;
	}
	size_t total = 0;
	for (uint64_t i = 0; i < n; i++) {
		if ((ssize_t)v[i].iov_len < 0 || total + v[i].iov_len < total) {
			free(v);
			return EINVAL;
		}
		total += v[i].iov_len;
	}
	if (total > SBX_SOCK_DATA_MAX) {
		if (!stream(ev)) {
			free(v);
			return EMSGSIZE;
		}
		total = SBX_SOCK_DATA_MAX; /* a short write, as a full buffer gives */
	}
	m->data = wd_malloc(total ? total : 1);
	size_t got = 0;
	for (uint64_t i = 0; i < n && got < total; i++) {
		size_t take = v[i].iov_len < total - got ? v[i].iov_len : total - got;
		if (peek(ev->pid, (uint64_t)(uintptr_t)v[i].iov_base, m->data + got, take) < 0) {
			free(v);
			return EFAULT;
		}
		got += take;
	}
	m->len = total;
	free(v);
	return 0;
}

/* Copies the ancillary data; on a Unix socket, each descriptor SCM_RIGHTS
 * passes is replaced by our copy of the caller's (pidfd_getfd: the same
 * open file), so that what is sent is what the caller holds now. */
static int copy_control(const struct sbx_sock_event *ev, int pidfd, struct sbx_sock_msg *m,
			uint64_t at, uint64_t len)
{
	if (len == 0 || at == 0)
		return 0;
	if (len > CONTROL_MAX)
		return ENOBUFS;
	m->control = wd_malloc(len);
	m->controllen = len;
	if (peek(ev->pid, at, m->control, len) < 0)
		return EFAULT;
	if (ev->family != AF_UNIX)
		return 0;
	/* The kernel's own walk over this very copy, which is what warden
	 * hands the kernel: no message it acts on is skipped here. */
	bool bad = false;
	for (struct cmsghdr *c = sbx_cmsg_next(m->control, len, NULL, &bad); c;
	     c = sbx_cmsg_next(m->control, len, c, &bad)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *fds = (int *)(void *)CMSG_DATA(c);
		m->fds = wd_realloc(m->fds, (m->nfds + n) * sizeof(int));
		for (size_t i = 0; i < n; i++) {
			int theirs;
			memcpy(&theirs, &fds[i], sizeof(int));
			int ours = (int)syscall(SYS_pidfd_getfd, pidfd, theirs, 0);
			if (ours < 0)
				return EBADF;
			m->fds[m->nfds++] = ours;
			memcpy(&fds[i], &ours, sizeof(int));
		}
	}
	return bad ? EINVAL : 0;
}

/* struct msghdr as the x86_64 caller lays it out. */
struct user_msghdr {
	uint64_t name;
	uint32_t namelen;
	uint32_t pad0;
	uint64_t iov;
	uint64_t iovlen;
	uint64_t control;
	uint64_t controllen;
	uint32_t flags;
	uint32_t pad1;
};

static int copy_msghdr(struct sbx_sock_event *ev, int pidfd, struct sbx_sock_msg *m, uint64_t at)
{
	struct user_msghdr h;
	if (peek(ev->pid, at, &h, sizeof(h)) < 0)
		return EFAULT;
	/* A zero msg_namelen is no name (____sys_sendmsg). */
	int err = copy_addr(ev->pid, m, h.namelen ? h.name : 0, h.name ? h.namelen : 0, true,
			    ev->family);
	if (!err)
		err = copy_iov(ev, m, h.iov, h.iovlen);
	if (!err && h.controllen > INT32_MAX)
		err = ENOBUFS;
	if (!err)
		err = copy_control(ev, pidfd, m, h.control, h.controllen);
	return err;
}

static struct sbx_sock_msg *add_msg(struct sbx_sock_event *ev)
{
	ev->msgs = wd_realloc(ev->msgs, (ev->nmsgs + 1) * sizeof(*ev->msgs));
	struct sbx_sock_msg *m = &ev->msgs[ev->nmsgs++];
	memset(m, 0, sizeof(*m));
	m->target_fd = -1;
	return m;
}

/* Reads what the call needs from the caller; sets ev->err on a failure the
 * kernel would report (a bad descriptor, an unreadable address). */
static void copy_call(struct sbx_sock_event *ev, int pidfd, const uint64_t *a)
{
	int err = 0;
	switch (ev->op) {
	case SBX_SOCK_CONNECT:
		err = copy_addr(ev->pid, add_msg(ev), a[1], (uint32_t)a[2], false, ev->family);
		break;
	case SBX_SOCK_SENDTO: {
		struct sbx_sock_msg *m = add_msg(ev);
		err = copy_addr(ev->pid, m, a[4], (uint32_t)a[5], false, ev->family);
		uint64_t len = a[2];
		if (!err && len > SBX_SOCK_DATA_MAX) {
			if (stream(ev))
				len = SBX_SOCK_DATA_MAX;
			else
				err = EMSGSIZE;
		}
		if (!err) {
			m->data = wd_malloc(len ? len : 1);
			m->len = len;
			if (peek(ev->pid, a[1], m->data, len) < 0)
				err = EFAULT;
		}
		break;
	}
	case SBX_SOCK_SENDMSG:
		err = copy_msghdr(ev, pidfd, add_msg(ev), a[1]);
		break;
	case SBX_SOCK_SENDMMSG: {
		/* A caller may get fewer messages sent than it asked, as from
		 * the kernel (which stops at UIO_MAXIOV). */
		uint64_t n = (uint32_t)a[2];
		if (n > SBX_SOCK_MSGS_MAX)
			n = SBX_SOCK_MSGS_MAX;
		const uint64_t sz = sizeof(struct user_msghdr) + 8; /* struct mmsghdr */
		for (uint64_t i = 0; i < n && !err; i++) {
			struct sbx_sock_msg *m = add_msg(ev);
			m->len_at = a[1] + i * sz + sizeof(struct user_msghdr);
			err = copy_msghdr(ev, pidfd, m, a[1] + i * sz);
		}
		break;
	}
	}
	ev->err = err;
}

int sbx_sock_decode(int nfd, const struct seccomp_notif *req, struct sbx_sock_event **out)
{
	struct sbx_sock_event *ev = wd_calloc(1, sizeof(*ev));
	ev->id = req->id;
	ev->pid = (pid_t)req->pid;
	ev->sockfd = ev->cwd_fd = -1;
	switch (req->data.nr) {
	case __NR_connect:
		ev->op = SBX_SOCK_CONNECT;
		break;
	case __NR_sendto:
		ev->op = SBX_SOCK_SENDTO;
		break;
	case __NR_sendmsg:
		ev->op = SBX_SOCK_SENDMSG;
		break;
	default:
		ev->op = SBX_SOCK_SENDMMSG;
		break;
	}
	uint64_t a[6];
	for (int i = 0; i < 6; i++)
		a[i] = req->data.args[i];
	unsigned threads = 0;
	/* A pidfd of the calling thread (Linux 6.9), else of its process:
	 * the descriptor table is the process's either way. */
	wd_autoclose int pidfd = (int)syscall(SYS_pidfd_open, ev->pid, PIDFD_THREAD);
	if (pidfd < 0)
		pidfd = (int)syscall(SYS_pidfd_open, ev->pid, 0);
	if (sbx_creds_of(ev->pid, &ev->creds, &ev->tgid, &threads) < 0 || pidfd < 0) {
		/* Gone, or unreadable: nothing is let through unread. */
		ev->err = EPERM;
		goto check;
	}
	ev->sockfd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)a[0], 0);
	if (ev->sockfd < 0) {
		ev->err = errno == EBADF ? EBADF : EPERM;
		goto check;
	}
	socklen_t l = sizeof(int);
	if (getsockopt(ev->sockfd, SOL_SOCKET, SO_DOMAIN, &ev->family, &l) < 0) {
		ev->err = errno == ENOTSOCK ? ENOTSOCK : EPERM;
		goto check;
	}
	l = sizeof(int);
	if (getsockopt(ev->sockfd, SOL_SOCKET, SO_TYPE, &ev->type, &l) < 0) {
		ev->err = EPERM;
		goto check;
	}
	l = sizeof(int);
	if (getsockopt(ev->sockfd, SOL_SOCKET, SO_PROTOCOL, &ev->protocol, &l) < 0)
		ev->protocol = 0;
	/* The send flags are the call's register argument, never memory. */
	ev->flags = ev->op == SBX_SOCK_SENDMSG	 ? (int)a[2]
		    : ev->op == SBX_SOCK_CONNECT ? 0
						 : (int)a[3];
	bool inet = inet_family(ev->family);
	if (ev->family != AF_UNIX && !inet) {
		/* The filter lets the agent make no socket of another family;
		 * one received from outside (SCM_RIGHTS) reaches nothing. */
		ev->err = EAFNOSUPPORT;
		goto check;
	}
	/*
	 * When the kernel may run the call as it is: only when what the
	 * caller's memory says cannot matter, since another thread, or a
	 * process sharing the pages, can rewrite it after it was read. That
	 * is a facts-of-the-socket question (family, type: the socket's own,
	 * read from our copy of it) and of the flags (a register):
	 *  - an AF_UNIX stream or seqpacket send: the kernel ignores or
	 *    refuses the address; a Unix socket reaches no IP destination;
	 *  - a TCP send without MSG_FASTOPEN: tcp_sendmsg() never reads
	 *    msg_name (nor any control message that could route it).
	 * A connect, a datagram send (with a name or not: a name can appear
	 * in memory after we read none) and a TCP send with MSG_FASTOPEN
	 * are never let through: their bytes are copied once and warden does
	 * the call itself with that copy (sbx_sock_perform). And only a
	 * single-threaded caller: the descriptor number cannot then be made
	 * to name another socket meanwhile (the filter refuses
	 * clone(CLONE_FILES) without CLONE_THREAD, so nobody else shares the
	 * descriptor table). docs/design.md, "The sandbox: the socket
	 * decoder".
	 */
	bool ignored =
		ev->op != SBX_SOCK_CONNECT && ((ev->family == AF_UNIX && ev->type != SOCK_DGRAM) ||
					       (inet && inet_use(ev) == SBX_INET_IGNORED));
	if (ignored && threads == 1) {
		ev->pass = true;
		goto check;
	}
	copy_call(ev, pidfd, a);
	if (!ev->err && inet)
		ev->err = inet_decode(ev);
	for (size_t i = 0; i < ev->nmsgs && ev->cwd_fd < 0; i++)
		if (ev->msgs[i].kind == SBX_ADDR_PATH && ev->msgs[i].path[0] != '/') {
			ev->cwd_fd = sbx_proc_open(ev->pid, "cwd");
		}
check:
	/* Everything above may have read a recycled pid if the caller died:
	 * the id check says it was our caller all along. */
	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &ev->id) < 0) {
		sbx_sock_event_free(ev);
		return -ENOENT;
	}
	*out = ev;
	return 0;
}

/* ---- resolving a path as the caller would ----------------------------- */

static int in_root(int root, const char *path)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT};
	for (int i = 0; i < 64; i++) {
		int fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno != EAGAIN)
			return -errno;
	}
	return -EAGAIN;
}

/* Walks the relative |path| from |dirfd| one name at a time, so that an
 * absolute symlink met on the way continues inside |root| (the caller's
 * root), not in warden's. */
static int walk(int root, int dirfd, const char *path, int *links)
{
	int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return -errno;
	wd_autofree char *copy = wd_strdup(path);
	char *s = copy;
	while (*s) {
		char *slash = strchr(s, '/');
		if (slash)
			*slash = '\0';
		char *rest = slash ? slash + 1 : NULL;
		if (!*s || strcmp(s, ".") == 0) {
			s = rest ? rest : s + strlen(s);
			continue;
		}
		int next = openat(cur, s, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (next < 0 || fstat(next, &st) < 0) {
			int e = errno;
			if (next >= 0)
				close(next);
			close(cur);
			return -e;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlinkat(next, "", target, sizeof(target) - 1);
			close(next);
			if (n <= 0 || ++*links > SYMLINKS_MAX) {
				close(cur);
				return n <= 0 ? -ENOENT : -ELOOP;
			}
			target[n] = '\0';
			wd_autofree char *np = rest && *rest ? wd_asprintf("%s/%s", target, rest)
							     : wd_strdup(target);
			int fd = np[0] == '/' ? in_root(root, np) : walk(root, cur, np, links);
			close(cur);
			return fd;
		}
		if (rest && !S_ISDIR(st.st_mode)) {
			close(next);
			close(cur);
			return -ENOTDIR;
		}
		close(cur);
		cur = next;
		s = rest ? rest : s + strlen(s);
	}
	return cur;
}

int sbx_sock_resolve(const struct sbx_sock_event *ev, int root_fd, const char *path)
{
	if (!path[0])
		return -ENOENT;
	wd_autoclose int own = -1;
	if (root_fd < 0) {
		root_fd = own = sbx_proc_open(ev->pid, "root");
		if (root_fd < 0)
			return -errno;
	}
	if (path[0] == '/')
		return in_root(root_fd, path);
	if (ev->cwd_fd < 0)
		return -ENOENT;
	int links = 0;
	return walk(root_fd, ev->cwd_fd, path, &links);
}

/* ---- doing the call on the caller's behalf ----------------------------- */

/* The address to pass for |m|: the decided file for a path, the copied
 * bytes otherwise. */
static socklen_t addr_of(const struct sbx_sock_msg *m, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (m->kind == SBX_ADDR_PATH) {
		struct sockaddr_un *sun = (struct sockaddr_un *)(void *)ss;
		sun->sun_family = AF_UNIX;
		int n = snprintf(sun->sun_path, sizeof(sun->sun_path), "/proc/self/fd/%d",
				 m->target_fd);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
	}
	if (m->kind == SBX_ADDR_NONE)
		return 0;
	memcpy(ss, m->raw, m->rawlen);
	return m->rawlen;
}

static long send_one(const struct sbx_sock_event *ev, const struct sbx_sock_msg *m)
{
	struct sockaddr_storage ss;
	socklen_t sl = addr_of(m, &ss);
	struct iovec iov = {.iov_base = m->data, .iov_len = m->len};
	struct msghdr mh = {
		.msg_name = sl ? &ss : NULL,
		.msg_namelen = sl,
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = m->control,
		.msg_controllen = m->controllen,
	};
	ssize_t n = sendmsg(ev->sockfd, &mh, ev->flags);
	return n < 0 ? -errno : (long)n;
}

long sbx_sock_perform(int notify_fd, const struct sbx_sock_event *ev)
{
	struct sbx_creds_saved saved;
	long rc = sbx_creds_enter(&ev->creds, SBX_CREDS_FOR_GOOD, &saved);
	if (rc < 0) {
		rc = -EPERM; /* never done with more than the caller's rights */
	} else if (ev->op == SBX_SOCK_CONNECT) {
		struct sockaddr_storage ss;
		socklen_t sl = addr_of(&ev->msgs[0], &ss);
		rc = connect(ev->sockfd, (struct sockaddr *)&ss, sl) < 0 ? -errno : 0;
	} else if (ev->op != SBX_SOCK_SENDMMSG) {
		rc = send_one(ev, &ev->msgs[0]);
	} else {
		size_t i = 0;
		for (; i < ev->nmsgs; i++) {
			long n = send_one(ev, &ev->msgs[i]);
			if (n < 0) {
				if (i == 0)
					rc = n;
				break;
			}
			/* msg_len, as the kernel fills it in; the caller waits
			 * in the call, so its memory is its own still. */
			uint32_t len = (uint32_t)n;
			struct iovec l = {.iov_base = &len, .iov_len = sizeof(len)};
			struct iovec rv = {.iov_base = (void *)(uintptr_t)ev->msgs[i].len_at,
					   .iov_len = sizeof(len)};
			if (sbx_notify_id_valid(notify_fd, ev->id))
				(void)process_vm_writev(ev->pid, &l, 1, &rv, 1, 0);
		}
		if (i > 0)
			rc = (long)i;
	}
	(void)sbx_notify_answer(notify_fd, ev->id, rc);
	return rc;
}
