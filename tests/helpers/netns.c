/*
 * netns.c: see netns.h.
 *
 * The remote namespace is held by a child that unshared CLONE_NEWNET and
 * waits; servers join it with setns() in children of the test. Every child
 * dies with the test (PR_SET_PDEATHSIG) and is killed by wt_netns_leave();
 * the remote namespace and its end of the veth pair go with the last of
 * them, the local namespace with the test process.
 */
#include "netns.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void die(const char *what)
{
	fprintf(stderr, "netns: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A child that dies with the test. In the child, returns 0. */
static pid_t child(void)
{
	pid_t parent = getpid();
	pid_t p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
	}
	return p;
}

static int wait_status(pid_t p)
{
	int st;
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Runs `ip ARGS...` (NULL-terminated) in the remote namespace when
 * |nsfd| >= 0, else here; 0 when it exits 0. */
static int ip(int nsfd, ...)
{
	const char *argv[24] = {"ip"};
	size_t k = 1;
	va_list ap;
	va_start(ap, nsfd);
	for (const char *a; k < 23 && (a = va_arg(ap, const char *));)
		argv[k++] = a;
	va_end(ap);
	argv[k] = NULL;
	pid_t p = child();
	if (p == 0) {
		if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) < 0)
			_exit(126);
		execvp("ip", (char *const *)argv);
		_exit(127);
	}
	int st = wait_status(p);
	if (st != 0) {
		fprintf(stderr, "netns: `ip");
		for (size_t i = 1; argv[i]; i++)
			fprintf(stderr, " %s", argv[i]);
		fprintf(stderr, "` exited %d\n", st);
		return -1;
	}
	return 0;
}

static void ip_or_die(int rc)
{
	if (rc != 0)
		exit(1);
}

static void track(struct wt_netns *n, pid_t p)
{
	if (n->npids >= sizeof(n->pids) / sizeof(n->pids[0])) {
		fprintf(stderr, "netns: too many servers\n");
		kill(p, SIGKILL);
		exit(1);
	}
	n->pids[n->npids++] = p;
}

static bool have_ip(void)
{
	const char *path = getenv("PATH");
	char *dirs = strdup(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
	bool found = false;
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char buf[4096];
		snprintf(buf, sizeof(buf), "%s/ip", d);
		found = access(buf, X_OK) == 0;
	}
	free(dirs);
	return found;
}

static int make_remote(struct wt_netns *n)
{
	int sync[2];
	if (pipe2(sync, O_CLOEXEC) < 0)
		return -errno;
	pid_t p = child();
	if (p == 0) {
		close(sync[0]);
		char ok = unshare(CLONE_NEWNET) == 0 ? 'y' : 'n';
		if (write(sync[1], &ok, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(sync[1]);
	char ok = 0;
	ssize_t got = read(sync[0], &ok, 1);
	close(sync[0]);
	n->remote = p;
	if (got != 1 || ok != 'y')
		return -EPERM;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)p);
	n->remote_fd = open(path, O_RDONLY | O_CLOEXEC);
	return n->remote_fd < 0 ? -errno : 0;
}

static int link_up(struct wt_netns *n)
{
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)n->remote);
	int rc = 0;
	rc |= ip(-1, "link", "set", "lo", "up", NULL);
	rc |= ip(-1, "link", "add", "wtl0", "type", "veth", "peer", "name", "wtr0", NULL);
	if (rc)
		return -1;
	rc |= ip(-1, "link", "set", "wtr0", "netns", pid, NULL);
	rc |= ip(-1, "addr", "add", "10.77.0.1/24", "dev", "wtl0", NULL);
	rc |= ip(-1, "-6", "addr", "add", "fd77::1/64", "dev", "wtl0", "nodad", NULL);
	rc |= ip(-1, "link", "set", "wtl0", "up", NULL);
	int fd = n->remote_fd;
	rc |= ip(fd, "link", "set", "lo", "up", NULL);
	rc |= ip(fd, "addr", "add", "10.77.0.2/24", "dev", "wtr0", NULL);
	rc |= ip(fd, "-6", "addr", "add", "fd77::2/64", "dev", "wtr0", "nodad", NULL);
	rc |= ip(fd, "link", "set", "wtr0", "up", NULL);
	return rc ? -1 : 0;
}

int wt_netns_enter(struct wt_netns *n)
{
	memset(n, 0, sizeof(*n));
	n->remote_fd = -1;
	if (geteuid() != 0) {
		fprintf(stderr, "netns: network namespaces need root\n");
		return -EPERM;
	}
	if (!have_ip()) {
		fprintf(stderr, "netns: no `ip` command (iproute2)\n");
		return -ENOENT;
	}
	if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0) {
		int e = errno;
		fprintf(stderr, "netns: unshare: %s\n", strerror(e));
		return -e;
	}
	/* Private from here on: a bind made by the test never reaches the
	 * host's mount namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("make / private");
	n->sh = mmap(NULL, sizeof(*n->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		     0);
	if (n->sh == MAP_FAILED)
		die("mmap");
	memset(n->sh, 0, sizeof(*n->sh));
	int rc = make_remote(n);
	if (rc < 0) {
		fprintf(stderr, "netns: remote namespace: %s\n", strerror(-rc));
		return rc;
	}
	if (link_up(n) < 0) {
		fprintf(stderr, "netns: cannot set up the veth pair\n");
		return -EIO;
	}
	return 0;
}

void wt_netns_require(struct wt_netns *n)
{
	if (wt_netns_enter(n) < 0) {
		printf("SKIP: cannot make network namespaces here\n");
		exit(77);
	}
}

void wt_netns_leave(struct wt_netns *n)
{
	for (size_t i = 0; i < n->npids; i++) {
		kill(n->pids[i], SIGKILL);
		wait_status(n->pids[i]);
	}
	n->npids = 0;
	if (n->remote > 0) {
		kill(n->remote, SIGKILL);
		wait_status(n->remote);
		n->remote = 0;
	}
	if (n->remote_fd >= 0)
		close(n->remote_fd);
	n->remote_fd = -1;
	if (n->dir) {
		/* Only the files this helper wrote, by name: never a tree walk. */
		char path[4096];
		for (int i = 0; i < 16; i++) {
			snprintf(path, sizeof(path), "%s/etc%d", n->dir, i);
			unlink(path);
		}
		rmdir(n->dir);
		free(n->dir);
		n->dir = NULL;
	}
	if (n->sh && n->sh != MAP_FAILED)
		munmap(n->sh, sizeof(*n->sh));
	n->sh = NULL;
}

void wt_netns_remote_addr(struct wt_netns *n, const char *addr)
{
	bool v6 = strchr(addr, ':') != NULL;
	char pfx[80];
	snprintf(pfx, sizeof(pfx), "%s/%d", addr, v6 ? 128 : 32);
	if (v6)
		ip_or_die(ip(n->remote_fd, "-6", "addr", "add", pfx, "dev", "wtr0", "nodad", NULL));
	else
		ip_or_die(ip(n->remote_fd, "addr", "add", pfx, "dev", "wtr0", NULL));
	/* In the veth's own subnet the address is on-link; elsewhere a route
	 * through the remote. */
	if (v6 ? strncmp(addr, "fd77::", 6) != 0 : strncmp(addr, "10.77.0.", 8) != 0)
		ip_or_die(ip(-1, v6 ? "-6" : "-4", "route", "add", pfx, "via",
			     v6 ? "fd77::2" : "10.77.0.2", NULL));
}

static int enter_remote(struct wt_netns *n, bool remote)
{
	return remote ? setns(n->remote_fd, CLONE_NEWNET) : 0;
}

static int bind_addr(int type, const char *addr, int port, int *out_port)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	socklen_t len;
	int fam;
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1)
			return -EINVAL;
		len = sizeof(*s6);
		fam = AF_INET6;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
			return -EINVAL;
		len = sizeof(*s4);
		fam = AF_INET;
	}
	int fd = socket(fam, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0)) {
		int e = errno;
		close(fd);
		return -e;
	}
	if (out_port) {
		len = sizeof(ss);
		getsockname(fd, (struct sockaddr *)&ss, &len);
		*out_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							   : ((struct sockaddr_in *)&ss)->sin_port);
	}
	return fd;
}

static void keep_data(struct wt_netns *n, int i, const char *buf, size_t got)
{
	size_t room = WT_NETNS_DATA - n->sh->l[i].len;
	if (got > room)
		got = room;
	memcpy(n->sh->l[i].data + n->sh->l[i].len, buf, got);
	__atomic_store_n(&n->sh->l[i].len, n->sh->l[i].len + got, __ATOMIC_RELEASE);
}

static _Noreturn void serve_tcp(struct wt_netns *n, int i, int fd)
{
	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		__atomic_add_fetch(&n->sh->l[i].hits, 1, __ATOMIC_SEQ_CST);
		struct pollfd p = {.fd = c, .events = POLLIN};
		char buf[512];
		while (poll(&p, 1, 200) > 0) {
			ssize_t got = read(c, buf, sizeof(buf));
			if (got <= 0)
				break;
			keep_data(n, i, buf, (size_t)got);
		}
		if (write(c, "ok\n", 3) < 0) {
			/* the client went: nothing to answer */
		}
		close(c);
	}
}

static _Noreturn void serve_udp(struct wt_netns *n, int i, int fd)
{
	for (;;) {
		char buf[2048];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t got = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (got < 0)
			continue;
		__atomic_add_fetch(&n->sh->l[i].hits, 1, __ATOMIC_SEQ_CST);
		keep_data(n, i, buf, (size_t)got);
		sendto(fd, "ok\n", 3, 0, (struct sockaddr *)&from, fl);
	}
}

int wt_netns_listen(struct wt_netns *n, bool remote, bool udp, const char *addr, int port)
{
	if (n->nlisteners >= WT_NETNS_MAX_LISTENERS) {
		fprintf(stderr, "netns: too many listeners\n");
		exit(1);
	}
	int i = n->nlisteners++;
	int sync[2];
	if (pipe2(sync, O_CLOEXEC) < 0)
		die("pipe");
	pid_t p = child();
	if (p == 0) {
		close(sync[0]);
		int err = 0, fd = -1;
		if (enter_remote(n, remote) < 0)
			err = errno;
		else if ((fd = bind_addr(udp ? SOCK_DGRAM : SOCK_STREAM, addr, port,
					 &n->sh->l[i].port)) < 0)
			err = -fd;
		if (write(sync[1], &err, sizeof(err)) != sizeof(err) || err)
			_exit(1);
		close(sync[1]);
		if (udp)
			serve_udp(n, i, fd);
		serve_tcp(n, i, fd);
	}
	close(sync[1]);
	track(n, p);
	int err = -1;
	if (read(sync[0], &err, sizeof(err)) != sizeof(err) || err) {
		fprintf(stderr, "netns: listener on %s:%d: %s\n", addr, port,
			err > 0 ? strerror(err) : "died");
		exit(1);
	}
	close(sync[0]);
	return i;
}

int wt_netns_hits(const struct wt_netns *n, int i)
{
	return __atomic_load_n(&n->sh->l[i].hits, __ATOMIC_SEQ_CST);
}

int wt_netns_port(const struct wt_netns *n, int i)
{
	return n->sh->l[i].port;
}

/* ---- the DNS server ---------------------------------------------------- */

struct dns_out {
	uint8_t b[4096];
	size_t len;
	bool over;
};

static void put(struct dns_out *o, const void *p, size_t k)
{
	if (o->len + k > sizeof(o->b)) {
		o->over = true;
		return;
	}
	memcpy(o->b + o->len, p, k);
	o->len += k;
}

static void put16(struct dns_out *o, unsigned v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	put(o, b, 2);
}

/* |name| in wire form; the question's own name as a pointer to it. */
static void put_name(struct dns_out *o, const char *name, const char *qname)
{
	/* "*": the name asked (a wildcard entry's records). */
	if (strcmp(name, "*") == 0 || strcasecmp(name, qname) == 0) {
		put16(o, 0xc000 | 12);
		return;
	}
	const char *p = name;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t k = dot ? (size_t)(dot - p) : strlen(p);
		uint8_t lk = (uint8_t)k;
		put(o, &lk, 1);
		put(o, p, k);
		p += k + (dot ? 1 : 0);
	}
	put(o, "", 1);
}

/* Appends the records of |list| ("TYPE OWNER VALUE; ...") whose type is
 * CNAME or |want| (0: every record). Returns how many. */
static unsigned put_records(struct dns_out *o, const char *list, int want, const char *qname)
{
	unsigned count = 0;
	char *copy = strdup(list ? list : "");
	for (char *save = NULL, *rr = strtok_r(copy, ";", &save); rr;
	     rr = strtok_r(NULL, ";", &save)) {
		char type[16], owner[256], value[256];
		if (sscanf(rr, " %15s %255s %255s", type, owner, value) != 3)
			continue;
		int t = strcmp(type, "A") == 0 ? 1 : strcmp(type, "AAAA") == 0 ? 28 : 5;
		if (want && t != 5 && t != want)
			continue;
		put_name(o, owner, qname);
		put16(o, (unsigned)t);
		put16(o, 1);
		put16(o, 0);
		put16(o, 60);
		uint8_t a[16];
		if (t == 1 && inet_pton(AF_INET, value, a) == 1) {
			put16(o, 4);
			put(o, a, 4);
		} else if (t == 28 && inet_pton(AF_INET6, value, a) == 1) {
			put16(o, 16);
			put(o, a, 16);
		} else {
			size_t at = o->len;
			put16(o, 0);
			size_t start = o->len;
			put_name(o, value, "");
			if (!o->over) {
				o->b[at] = (uint8_t)((o->len - start) >> 8);
				o->b[at + 1] = (uint8_t)(o->len - start);
			}
		}
		count++;
	}
	free(copy);
	return count;
}

/* The |k|th '|'-separated variant of |answer| (the last repeats). Caller
 * frees. */
static char *variant(const char *answer, int k)
{
	const char *p = answer ? answer : "";
	for (; k > 0; k--) {
		const char *bar = strchr(p, '|');
		if (!bar)
			break;
		p = bar + 1;
	}
	const char *end = strchr(p, '|');
	return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

/* Reads the question of query |q|. 0 on success. */
static int read_question(const uint8_t *q, size_t len, char *name, size_t cap, int *qtype,
			 size_t *qend)
{
	if (len < 12 || q[4] != 0 || q[5] != 1)
		return -1;
	size_t at = 12, out = 0;
	for (;;) {
		if (at >= len)
			return -1;
		uint8_t k = q[at++];
		if (k == 0)
			break;
		if (k > 63 || at + k > len || out + k + 2 > cap)
			return -1;
		if (out)
			name[out++] = '.';
		memcpy(name + out, q + at, k);
		out += k;
		at += k;
	}
	name[out] = 0;
	if (at + 4 > len)
		return -1;
	*qtype = q[at] << 8 | q[at + 1];
	*qend = at + 4;
	return 0;
}

/* Whether |name| is what |pattern| ("a.test", "*.test") names. */
static bool name_is(const char *pattern, const char *name)
{
	if (strncmp(pattern, "*.", 2) != 0)
		return strcasecmp(pattern, name) == 0;
	size_t k = strlen(pattern + 1), n = strlen(name);
	return n > k && strcasecmp(name + n - k, pattern + 1) == 0;
}

/* The answer to query |q| into |o| (o->len 0: none). */
static void dns_answer(struct wt_netns *n, const uint8_t *q, size_t len, bool tcp,
		       struct dns_out *o)
{
	char name[256];
	int qtype;
	size_t qend;
	o->len = 0;
	o->over = false;
	if (read_question(q, len, name, sizeof(name), &qtype, &qend) < 0)
		return;
	__atomic_add_fetch(&n->sh->dns_queries, 1, __ATOMIC_SEQ_CST);
	if (tcp)
		__atomic_add_fetch(&n->sh->dns_tcp_queries, 1, __ATOMIC_SEQ_CST);
	size_t e = 0;
	while (e < n->ndns && !name_is(n->dns[e].qname, name))
		e++;
	bool known = e < n->ndns;
	int slot = qtype == 1 ? 0 : qtype == 28 ? 1 : 2;
	int nth = known ? __atomic_fetch_add(&n->sh->dns_hits[e][slot], 1, __ATOMIC_SEQ_CST) : 0;
	if (known && n->dns[e].silent)
		return;
	bool tc = known && n->dns[e].tc && !tcp;
	put(o, q, 2); /* the id */
	uint8_t flags[2] = {(uint8_t)(0x84 | (q[2] & 0x01) | (tc ? 0x02 : 0)),
			    (uint8_t)(0x80 | (known ? 0 : 3))};
	put(o, flags, 2);
	put16(o, 1);
	size_t counts = o->len;
	put16(o, 0);
	put16(o, 0);
	put16(o, 0);
	put(o, q + 12, qend - 12);
	if (!known)
		return;
	char *ans = variant(n->dns[e].answer, nth);
	unsigned an = put_records(o, ans, qtype == 1 || qtype == 28 ? qtype : -1, name);
	free(ans);
	unsigned ar = put_records(o, n->dns[e].additional, 0, name);
	if (o->over) {
		o->len = 0;
		return;
	}
	o->b[counts] = (uint8_t)(an >> 8);
	o->b[counts + 1] = (uint8_t)an;
	o->b[counts + 4] = (uint8_t)(ar >> 8);
	o->b[counts + 5] = (uint8_t)ar;
	/* Truncated as a server does it when the answer does not fit: cut
	 * inside the last record, the counts left as they were. */
	if (tc && o->len > qend + 3)
		o->len -= 3;
}

static bool read_full(int fd, void *buf, size_t k)
{
	uint8_t *p = buf;
	while (k) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		if (poll(&pf, 1, 2000) <= 0)
			return false;
		ssize_t got = read(fd, p, k);
		if (got <= 0)
			return false;
		p += got;
		k -= (size_t)got;
	}
	return true;
}

static void dns_tcp_client(struct wt_netns *n, int c)
{
	for (;;) {
		uint8_t lb[2], q[4096];
		if (!read_full(c, lb, 2))
			return;
		size_t len = (size_t)(lb[0] << 8 | lb[1]);
		if (len > sizeof(q) || !read_full(c, q, len))
			return;
		struct dns_out o;
		dns_answer(n, q, len, true, &o);
		if (!o.len)
			return;
		uint8_t ol[2] = {(uint8_t)(o.len >> 8), (uint8_t)o.len};
		if (write(c, ol, 2) != 2 || write(c, o.b, o.len) != (ssize_t)o.len)
			return;
	}
}

static _Noreturn void serve_dns(struct wt_netns *n, int udp, int tcp)
{
	struct pollfd p[2] = {{.fd = udp, .events = POLLIN}, {.fd = tcp, .events = POLLIN}};
	for (;;) {
		if (poll(p, 2, -1) <= 0)
			continue;
		if (p[0].revents & POLLIN) {
			uint8_t q[4096];
			struct sockaddr_storage from;
			socklen_t fl = sizeof(from);
			ssize_t got = recvfrom(udp, q, sizeof(q), 0, (struct sockaddr *)&from, &fl);
			struct dns_out o;
			if (got > 0) {
				dns_answer(n, q, (size_t)got, false, &o);
				if (o.len)
					sendto(udp, o.b, o.len, 0, (struct sockaddr *)&from, fl);
			}
		}
		if (p[1].revents & POLLIN) {
			int c = accept4(tcp, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0) {
				dns_tcp_client(n, c);
				close(c);
			}
		}
	}
}

void wt_netns_dns(struct wt_netns *n, const struct wt_dns_entry *entries, size_t count)
{
	if (count > WT_NETNS_MAX_DNS) {
		fprintf(stderr, "netns: too many DNS entries\n");
		exit(1);
	}
	n->dns = entries;
	n->ndns = count;
	int sync[2];
	if (pipe2(sync, O_CLOEXEC) < 0)
		die("pipe");
	pid_t p = child();
	if (p == 0) {
		close(sync[0]);
		int err = 0, u = -1, t = -1;
		if (setns(n->remote_fd, CLONE_NEWNET) < 0)
			err = errno;
		else if ((u = bind_addr(SOCK_DGRAM, "10.77.0.2", 53, NULL)) < 0)
			err = -u;
		else if ((t = bind_addr(SOCK_STREAM, "10.77.0.2", 53, NULL)) < 0)
			err = -t;
		if (write(sync[1], &err, sizeof(err)) != sizeof(err) || err)
			_exit(1);
		close(sync[1]);
		serve_dns(n, u, t);
	}
	close(sync[1]);
	track(n, p);
	int err = -1;
	if (read(sync[0], &err, sizeof(err)) != sizeof(err) || err) {
		fprintf(stderr, "netns: DNS server: %s\n", err > 0 ? strerror(err) : "died");
		exit(1);
	}
	close(sync[0]);
}

int wt_netns_dns_hits(const struct wt_netns *n, size_t i, int type)
{
	return __atomic_load_n(&n->sh->dns_hits[i][type], __ATOMIC_SEQ_CST);
}

/* ---- files over /etc ---------------------------------------------------- */

void wt_netns_etc(struct wt_netns *n, const char *path, const char *text)
{
	static int seq;
	if (!n->dir) {
		char tmpl[] = "/tmp/wt-netns-XXXXXX";
		if (!mkdtemp(tmpl))
			die("mkdtemp");
		chmod(tmpl, 0755);
		n->dir = strdup(tmpl);
	}
	if (seq >= 16) {
		fprintf(stderr, "netns: too many files\n");
		exit(1);
	}
	char src[4096];
	snprintf(src, sizeof(src), "%s/etc%d", n->dir, seq++);
	int fd = open(src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		die(src);
	size_t k = strlen(text);
	if (write(fd, text, k) != (ssize_t)k)
		die(src);
	close(fd);
	/* The test's mount namespace is private (wt_netns_enter): this bind
	 * exists only there and in the namespaces made from it. */
	if (mount(src, path, NULL, MS_BIND, NULL) < 0)
		die(path);
}

int wt_netns_in_remote(struct wt_netns *n, int (*fn)(void *), void *arg)
{
	pid_t p = child();
	if (p == 0) {
		if (setns(n->remote_fd, CLONE_NEWNET) < 0)
			_exit(126);
		_exit(fn(arg));
	}
	return wait_status(p);
}
