/*
 * resolver.c: the session's resolver. For a run that may bind port 53 (root
 * in the host's network namespace), warden listens on UDP and TCP port 53
 * of an address of 127.0.0.0/8 chosen at start, and the sandbox sees a
 * resolv.conf naming it at /etc/resolv.conf (a read-only file bind made by
 * the sandbox's init). Each query is forwarded to the host's nameservers
 * (read from the host's /etc/resolv.conf at start) from a socket of its
 * own with a fresh random id; the answer's A/AAAA addresses for the QUERIED
 * name are recorded in the session's names (names.c) before the answer is
 * relayed, so that the connection which follows is shown and decided as
 * "github.com:443".
 *
 * A query name is itself data leaving the host, so the QUERIED name is
 * decided before anything is forwarded (lookups.c says how, per tier, and
 * how each refusal becomes one audit row written by the loop's thread).
 *
 * What it does not do: cache, or speak DNSSEC. A
 * process that asks another server directly (its own resolv.conf, a
 * hard-coded 8.8.8.8) sends a datagram that is a connect request like any
 * other, and the addresses it learns are unnamed for warden.
 *
 * One thread serves everything with poll(): the two listening sockets, at
 * most RES_CLIENTS TCP clients and RES_JOBS queries in flight upstream,
 * each with a deadline; a query beyond that is answered SERVFAIL at once,
 * so a flood costs a bounded amount of memory and descriptors. Every
 * descriptor is O_CLOEXEC and the sandbox's init closes all it inherited
 * (sandbox/spawn_child.c), so none reaches the agent.
 */
#include "dns_int.h"
#include "sup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#define RES_SERVERS   3	    /* like glibc's MAXNS */
#define RES_JOBS      64    /* queries in flight upstream */
#define RES_CLIENTS   16    /* TCP clients at once */
#define RES_TRY_MS    2000  /* one upstream try */
#define RES_TRIES     3	    /* tries per query, over the servers in turn */
#define RES_CLIENT_MS 10000 /* a TCP client idle this long is closed */
#define RES_QUERY_MAX 4096  /* a query larger than this is dropped */
#define RES_TCP_MAX   (SUP_DNS_MAX_MSG + 2)

struct res_job {
	bool used;
	int client; /* index of the TCP client, -1 for UDP */
	struct sockaddr_storage from;
	socklen_t fromlen;
	uint8_t *q; /* the client's query: |qbuf|, or the caller's before it is taken */
	uint8_t qbuf[RES_QUERY_MAX];
	size_t qlen;
	struct sup_dns_question qq; /* its question, with the upstream id */
	uint16_t client_id;
	int ufd;     /* the upstream socket, -1 none */
	bool up_tcp; /* the client came over TCP: so does the upstream query */
	bool sent;   /* TCP: the query is written */
	int server, tries;
	uint8_t *in; /* TCP: the answer read so far (owned) */
	size_t have;
	int64_t deadline_ns;
};

struct res_client {
	int fd; /* -1: free */
	uint8_t buf[RES_TCP_MAX];
	size_t have;
	bool busy; /* a job answers it; not read meanwhile */
	int64_t deadline_ns;
};

struct sup_resolver {
	struct sup_names *names;
	struct sup_lookups *lookups; /* the decision on each name (lookups.c) */
	struct sockaddr_storage servers[RES_SERVERS];
	socklen_t server_len[RES_SERVERS];
	size_t nservers;
	int udp_fd, tcp_fd, stop_fd;
	pthread_t thread;
	bool running;
	struct res_job jobs[RES_JOBS];
	struct res_client clients[RES_CLIENTS];
	uint8_t buf[SUP_DNS_MAX_MSG]; /* one datagram */
	_Atomic uint64_t queries, recorded, refused, failed;
};

/* ---- the host's files --------------------------------------------------- */

/* A nameserver line's address ("8.8.8.8", "fe80::1%eth0") at port 53. */
static bool parse_server(const char *text, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	char a[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	if (strlen(text) >= sizeof(a))
		return false;
	memcpy(a, text, strlen(text) + 1);
	char *pct = strchr(a, '%');
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	if (!pct && inet_pton(AF_INET, a, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(53);
		*len = sizeof(*s4);
		return true;
	}
	if (pct)
		*pct = '\0';
	if (inet_pton(AF_INET6, a, &s6->sin6_addr) != 1)
		return false;
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(53);
	s6->sin6_scope_id = pct ? if_nametoindex(pct + 1) : 0;
	*len = sizeof(*s6);
	return true;
}

/* Reads the host's resolv.conf: its nameservers into |rs|, and its
 * search, domain and options lines (for the sandbox's file) into |keep|. */
static void read_host_conf(struct sup_resolver *rs, const char *path, struct wd_sb *keep)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		char word[16], arg[256];
		if (sscanf(line, "%15s %255s", word, arg) != 2)
			continue;
		if (strcmp(word, "nameserver") == 0) {
			if (rs->nservers < RES_SERVERS &&
			    parse_server(arg, &rs->servers[rs->nservers],
					 &rs->server_len[rs->nservers]))
				rs->nservers++;
		} else if (strcmp(word, "search") == 0 || strcmp(word, "domain") == 0 ||
			   strcmp(word, "options") == 0) {
			size_t k = strcspn(line, "\n");
			wd_sb_add(keep, line, k);
			wd_sb_puts(keep, "\n");
		}
	}
	fclose(f);
}

/* One line of a hosts file, parsed. */
struct hosts_line {
	int family;
	uint8_t addr[16];
	char **names; /* canonical first, then aliases */
};

size_t sup_hosts_load(struct sup_names *t, const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	struct hosts_line *lines = NULL;
	size_t nlines = 0, cap = 0;
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "#\n")] = '\0';
		char *save = NULL;
		char *addr = strtok_r(line, " \t", &save);
		if (!addr)
			continue;
		struct hosts_line h = {.family = AF_INET};
		if (inet_pton(AF_INET, addr, h.addr) != 1) {
			h.family = AF_INET6;
			if (inet_pton(AF_INET6, addr, h.addr) != 1)
				continue;
		}
		for (char *name = strtok_r(NULL, " \t", &save); name;
		     name = strtok_r(NULL, " \t", &save))
			wd_strv_push(&h.names, name);
		if (!h.names)
			continue;
		if (nlines == cap) {
			cap = cap ? cap * 2 : 16;
			lines = wd_realloc(lines, cap * sizeof(*lines));
		}
		lines[nlines++] = h;
	}
	fclose(f);
	/*
	 * The names an address is shown by: the newest one added. The
	 * resolver (glibc's files backend) answers an address with the
	 * first line that lists it, and a line's first name is its
	 * canonical one, the rest aliases. So the lines are added from the
	 * last to the first and each line's names from its last to its
	 * first: the first line's canonical name is added last. (A host
	 * file with "127.0.0.1 localhost" then "127.0.0.1 vm" shows
	 * loopback as localhost.)
	 */
	size_t n = 0;
	for (size_t i = nlines; i-- > 0;) {
		size_t k = wd_strv_len(lines[i].names);
		while (k > 0) {
			sup_names_add(t, lines[i].names[--k], lines[i].family, lines[i].addr);
			n++;
		}
		wd_strv_free(lines[i].names);
	}
	free(lines);
	return n;
}

/* ---- the listening address ---------------------------------------------- */

/* Binds UDP and TCP port 53 on a random address of 127.0.0.0/8 that is
 * free on both (127.128.0.1 to 127.254.255.254: clear of 127.0.0.1,
 * 127.0.0.53 and 127.0.1.1, which the host's own services use). */
static int bind_listeners(struct sup_resolver *rs, struct sockaddr_in *at)
{
	int rc = -EADDRINUSE;
	for (int tries = 0; tries < 32 && rc == -EADDRINUSE; tries++) {
		uint8_t rnd[3];
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -EIO;
		uint8_t a[4] = {127, (uint8_t)(128 + rnd[0] % 127), rnd[1],
				(uint8_t)(1 + rnd[2] % 254)};
		*at = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(53)};
		memcpy(&at->sin_addr, a, 4);
		rs->udp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		rs->tcp_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int one = 1;
		rc = 0;
		if (rs->udp_fd < 0 || rs->tcp_fd < 0 ||
		    setsockopt(rs->tcp_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    bind(rs->udp_fd, (struct sockaddr *)at, sizeof(*at)) < 0 ||
		    bind(rs->tcp_fd, (struct sockaddr *)at, sizeof(*at)) < 0 ||
		    listen(rs->tcp_fd, RES_CLIENTS) < 0)
			rc = -errno;
		if (rc < 0) {
			wd_close(&rs->udp_fd);
			wd_close(&rs->tcp_fd);
		}
	}
	return rc;
}

/* ---- serving ------------------------------------------------------------ */

static void client_close(struct sup_resolver *rs, int i)
{
	struct res_client *c = &rs->clients[i];
	wd_close(&c->fd);
	c->have = 0;
	c->busy = false;
	/* A job still answering it answers nobody. */
	for (size_t k = 0; k < RES_JOBS; k++)
		if (rs->jobs[k].used && rs->jobs[k].client == i)
			rs->jobs[k].client = -2;
}

static void job_free(struct res_job *j)
{
	/* The TCP answer's buffer stays with the slot, for the next job
	 * (resolver_free frees it). */
	uint8_t *in = j->in;
	wd_close(&j->ufd);
	*j = (struct res_job){.ufd = -1, .in = in};
}

/* Sends |msg| (the client's id already in it) to the job's client. */
static void reply(struct sup_resolver *rs, struct res_job *j, const uint8_t *msg, size_t len)
{
	if (j->client == -1) {
		/* A datagram to the address it came from: the kernel writes
		 * it or drops it, never blocks (the socket is non-blocking). */
		sendto(rs->udp_fd, msg, len, MSG_DONTWAIT, (struct sockaddr *)&j->from, j->fromlen);
		return;
	}
	if (j->client < 0)
		return;
	struct res_client *c = &rs->clients[j->client];
	uint8_t lb[2] = {(uint8_t)(len >> 8), (uint8_t)len};
	struct iovec iov[2] = {{lb, 2}, {(void *)msg, len}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
	/* Never waits for a client that does not read: a short write closes
	 * the connection. */
	if (sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(len + 2)) {
		client_close(rs, j->client);
		return;
	}
	c->busy = false;
	c->have = 0;
	c->deadline_ns = wd_now_mono_ns() + (int64_t)RES_CLIENT_MS * 1000000;
}

/* Answers the query |msg| (its question |q|) with |rcode| and no records. */
static void reply_error(struct sup_resolver *rs, struct res_job *j, int rcode)
{
	uint8_t out[SUP_DNS_NAME_MAX + 32];
	if (j->qq.end > sizeof(out))
		return;
	struct sup_dns_question q = j->qq;
	q.id = j->client_id;
	size_t k = sup_dns_error(j->q, &q, rcode, out);
	reply(rs, j, out, k);
	if (rcode == SUP_DNS_SERVFAIL)
		atomic_fetch_add(&rs->failed, 1);
}

/* The answer |msg| came for job |j|: recorded, relayed. False when it is
 * not the answer to the job's query (it is then ignored). */
static bool answered(struct sup_resolver *rs, struct res_job *j, uint8_t *msg, size_t len)
{
	struct sup_dns_answer a;
	if (sup_dns_parse_answer(msg, len, &j->qq, &a) < 0)
		return false;
	if (a.tc) {
		/* Truncated: its client asks again over TCP and uses that
		 * answer; a truncated message may end inside a record, so it
		 * is relayed as it is and nothing of it is recorded. */
		msg[0] = (uint8_t)(j->client_id >> 8);
		msg[1] = (uint8_t)j->client_id;
		reply(rs, j, msg, len);
		return true;
	}
	if (a.partial) {
		/* The client could read addresses warden could not: not
		 * relayed, so every address the sandbox learns from here is
		 * named. */
		reply_error(rs, j, SUP_DNS_SERVFAIL);
		return true;
	}
	/* Recorded before the client has the answer: the connection that
	 * follows finds its name. Under the QUERIED name only. */
	for (size_t i = 0; i < a.naddrs; i++) {
		int family = a.addrs[i].family;
		const uint8_t *addr = a.addrs[i].addr;
		static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		if (family == AF_INET6 && memcmp(addr, mapped, 12) == 0) {
			family = AF_INET;
			addr += 12;
		}
		sup_names_add(rs->names, j->qq.name, family, addr);
		atomic_fetch_add(&rs->recorded, 1);
	}
	msg[0] = (uint8_t)(j->client_id >> 8);
	msg[1] = (uint8_t)j->client_id;
	reply(rs, j, msg, len);
	return true;
}

/* Sends the job's query to its next server. False when none is left. */
static bool job_try(struct sup_resolver *rs, struct res_job *j)
{
	wd_close(&j->ufd);
	j->have = 0;
	j->sent = false;
	while (j->tries < RES_TRIES) {
		const struct sockaddr_storage *s = &rs->servers[j->server % rs->nservers];
		socklen_t slen = rs->server_len[j->server % rs->nservers];
		j->server++;
		j->tries++;
		/* A fresh id for each try: an answer is the one to this try's
		 * query or ignored. Whatever the client's id was, it never
		 * leaves (the client's id is restored in the answer). */
		uint16_t id;
		if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
			return false;
		j->qq.id = id;
		j->q[0] = (uint8_t)(id >> 8);
		j->q[1] = (uint8_t)id;
		j->ufd = socket(
			s->ss_family,
			(j->up_tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (j->ufd < 0)
			continue;
		/* Connected: the kernel delivers only datagrams from the
		 * server's address and port to this socket. */
		int rc = connect(j->ufd, (const struct sockaddr *)s, slen);
		if (rc < 0 && !(j->up_tcp && errno == EINPROGRESS)) {
			wd_close(&j->ufd);
			continue;
		}
		if (!j->up_tcp) {
			if (send(j->ufd, j->q, j->qlen, MSG_DONTWAIT) != (ssize_t)j->qlen) {
				wd_close(&j->ufd);
				continue;
			}
			j->sent = true;
		}
		j->deadline_ns = wd_now_mono_ns() + (int64_t)RES_TRY_MS * 1000000;
		return true;
	}
	return false;
}

static void job_fail(struct sup_resolver *rs, struct res_job *j)
{
	reply_error(rs, j, SUP_DNS_SERVFAIL);
	job_free(j);
}

/* A query |q| (|len| bytes, copied) from a client: refused, or forwarded.
 * |client| is the TCP client's index, -1 for UDP (|from| its address). */
static void take_query(struct sup_resolver *rs, const uint8_t *q, size_t len, int client,
		       const struct sockaddr_storage *from, socklen_t fromlen)
{
	struct res_job *j = NULL;
	struct res_job tmp = {.client = client, .ufd = -1};
	/* Not a query it can answer: dropped (UDP) or closed (TCP). Real
	 * queries are a few hundred bytes; a longer one is not forwarded. */
	if (len > RES_QUERY_MAX || sup_dns_parse_query(q, len, &tmp.qq) < 0)
		return;
	atomic_fetch_add(&rs->queries, 1);
	tmp.q = (uint8_t *)q;
	tmp.qlen = len;
	tmp.client_id = tmp.qq.id;
	if (from) {
		tmp.from = *from;
		tmp.fromlen = fromlen;
	}
	/* A name text cannot show is not forwarded (nothing could be
	 * recorded or decided for it); a metadata name is refused below,
	 * by the decision, with a row. */
	if (!tmp.qq.plain) {
		atomic_fetch_add(&rs->refused, 1);
		wd_debug("resolver: refused a query for %s", tmp.qq.plain ? tmp.qq.name : "?");
		reply_error(rs, &tmp, SUP_DNS_REFUSED);
		return;
	}
	if (!sup_lookups_allow(rs->lookups, tmp.qq.name, tmp.qq.qtype)) {
		atomic_fetch_add(&rs->refused, 1);
		reply_error(rs, &tmp, SUP_DNS_REFUSED);
		return;
	}
	for (size_t i = 0; i < RES_JOBS && !j; i++)
		if (!rs->jobs[i].used)
			j = &rs->jobs[i];
	if (!j) {
		reply_error(rs, &tmp, SUP_DNS_SERVFAIL);
		return;
	}
	uint8_t *in = j->in;
	*j = tmp;
	j->in = in;
	j->used = true;
	j->up_tcp = client >= 0;
	/* A buffer of the job's own: a flood of queries allocates nothing. */
	j->q = j->qbuf;
	memcpy(j->q, q, len);
	j->server = 0; /* the host's order, as its own resolver would */
	if (!job_try(rs, j))
		job_fail(rs, j);
}

static void on_udp_query(struct sup_resolver *rs)
{
	/* At most a few per wake-up, so that upstream answers get their turn
	 * under a flood. */
	for (int k = 0; k < 32; k++) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		/* MSG_TRUNC: the datagram's own length, so that a longer one
		 * is dropped rather than read cut. */
		ssize_t got = recvfrom(rs->udp_fd, rs->buf, RES_QUERY_MAX, MSG_DONTWAIT | MSG_TRUNC,
				       (struct sockaddr *)&from, &fl);
		if (got < 0)
			return;
		take_query(rs, rs->buf, (size_t)got, -1, &from, fl);
	}
}

static void on_accept(struct sup_resolver *rs)
{
	int fd = accept4(rs->tcp_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (int i = 0; i < RES_CLIENTS; i++) {
		struct res_client *c = &rs->clients[i];
		if (c->fd >= 0)
			continue;
		c->fd = fd;
		c->have = 0;
		c->busy = false;
		c->deadline_ns = wd_now_mono_ns() + (int64_t)RES_CLIENT_MS * 1000000;
		return;
	}
	close(fd); /* too many clients: this one tries again */
}

static void on_client(struct sup_resolver *rs, int i)
{
	struct res_client *c = &rs->clients[i];
	size_t want = c->have < 2 ? 2 : 2 + (size_t)(c->buf[0] << 8 | c->buf[1]);
	ssize_t got = recv(c->fd, c->buf + c->have, want - c->have, MSG_DONTWAIT);
	if (got <= 0) {
		if (got == 0 || (errno != EAGAIN && errno != EINTR))
			client_close(rs, i);
		return;
	}
	c->have += (size_t)got;
	if (c->have < 2 || c->have < 2 + (size_t)(c->buf[0] << 8 | c->buf[1]))
		return;
	c->busy = true;
	take_query(rs, c->buf + 2, c->have - 2, i, NULL, 0);
	/* Dropped without an answer (not a query): the connection goes. */
	bool pending = false;
	for (size_t k = 0; k < RES_JOBS; k++)
		pending |= rs->jobs[k].used && rs->jobs[k].client == i;
	if (c->busy && !pending)
		client_close(rs, i);
}

static void on_upstream(struct sup_resolver *rs, struct res_job *j, short revents)
{
	if (!j->up_tcp) {
		ssize_t got = recv(j->ufd, rs->buf, sizeof(rs->buf), MSG_DONTWAIT);
		if (got > 0 && answered(rs, j, rs->buf, (size_t)got))
			job_free(j);
		else if (got < 0 && errno != EAGAIN && errno != EINTR && !job_try(rs, j))
			job_fail(rs, j);
		return;
	}
	if (!j->sent) {
		if (!(revents & POLLOUT))
			goto broken;
		uint8_t lb[2] = {(uint8_t)(j->qlen >> 8), (uint8_t)j->qlen};
		struct iovec iov[2] = {{lb, 2}, {j->q, j->qlen}};
		struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
		if (sendmsg(j->ufd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(j->qlen + 2))
			goto broken;
		j->sent = true;
		if (!j->in)
			j->in = wd_malloc(RES_TCP_MAX);
		return;
	}
	size_t want = j->have < 2 ? 2 : 2 + (size_t)(j->in[0] << 8 | j->in[1]);
	ssize_t got = recv(j->ufd, j->in + j->have, want - j->have, MSG_DONTWAIT);
	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (got <= 0)
		goto broken;
	j->have += (size_t)got;
	if (j->have < 2 || j->have < 2 + (size_t)(j->in[0] << 8 | j->in[1]))
		return;
	if (answered(rs, j, j->in + 2, j->have - 2)) {
		job_free(j);
		return;
	}
broken:
	if (!job_try(rs, j))
		job_fail(rs, j);
}

/* Deadlines: a try that timed out goes to the next server; an idle
 * client is closed. Returns the poll timeout until the next one. */
static int expire(struct sup_resolver *rs)
{
	int64_t now = wd_now_mono_ns(), next = now + 1000000000LL;
	for (size_t i = 0; i < RES_JOBS; i++) {
		struct res_job *j = &rs->jobs[i];
		if (!j->used)
			continue;
		if (j->deadline_ns <= now && !job_try(rs, j)) {
			job_fail(rs, j);
			continue;
		}
		if (j->used && j->deadline_ns < next)
			next = j->deadline_ns;
	}
	for (int i = 0; i < RES_CLIENTS; i++) {
		struct res_client *c = &rs->clients[i];
		if (c->fd < 0 || c->busy)
			continue;
		if (c->deadline_ns <= now) {
			client_close(rs, i);
			continue;
		}
		if (c->deadline_ns < next)
			next = c->deadline_ns;
	}
	return (int)((next - now) / 1000000) + 1;
}

static void *serve(void *arg)
{
	struct sup_resolver *rs = arg;
	for (;;) {
		struct pollfd p[3 + RES_CLIENTS + RES_JOBS];
		int owner[3 + RES_CLIENTS + RES_JOBS]; /* client i: i; job k: 1000 + k */
		size_t n = 0;
		p[n++] = (struct pollfd){.fd = rs->stop_fd, .events = POLLIN};
		p[n++] = (struct pollfd){.fd = rs->udp_fd, .events = POLLIN};
		p[n++] = (struct pollfd){.fd = rs->tcp_fd, .events = POLLIN};
		for (int i = 0; i < RES_CLIENTS; i++) {
			if (rs->clients[i].fd < 0 || rs->clients[i].busy)
				continue;
			owner[n] = i;
			p[n++] = (struct pollfd){.fd = rs->clients[i].fd, .events = POLLIN};
		}
		for (int k = 0; k < RES_JOBS; k++) {
			struct res_job *j = &rs->jobs[k];
			if (!j->used || j->ufd < 0)
				continue;
			owner[n] = 1000 + k;
			p[n++] = (struct pollfd){.fd = j->ufd,
						 .events = (short)(j->sent ? POLLIN : POLLOUT)};
		}
		int timeout = expire(rs);
		if (poll(p, n, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		for (size_t i = 3; i < n; i++) {
			if (!p[i].revents)
				continue;
			if (owner[i] >= 1000) {
				struct res_job *j = &rs->jobs[owner[i] - 1000];
				if (j->used && j->ufd == p[i].fd)
					on_upstream(rs, j, p[i].revents);
			} else if (rs->clients[owner[i]].fd == p[i].fd) {
				on_client(rs, owner[i]);
			}
		}
		if (p[1].revents & POLLIN)
			on_udp_query(rs);
		if (p[2].revents & POLLIN)
			on_accept(rs);
	}
	return NULL;
}

/* ---- set-up and end ------------------------------------------------------ */

static void resolver_free(struct sup_resolver *rs)
{
	if (!rs)
		return;
	for (size_t k = 0; k < RES_JOBS; k++) {
		if (rs->jobs[k].used)
			job_free(&rs->jobs[k]);
		free(rs->jobs[k].in);
	}
	for (int i = 0; i < RES_CLIENTS; i++)
		if (rs->clients[i].fd >= 0)
			client_close(rs, i);
	wd_close(&rs->udp_fd);
	wd_close(&rs->tcp_fd);
	wd_close(&rs->stop_fd);
	sup_lookups_free(rs->lookups);
	free(rs);
}

/* Where the sandbox reads its resolv.conf: /etc/resolv.conf, or what it
 * links to, as the host resolves it (the sandbox sees the host's tree
 * there). NULL after saying why in |why|. */
static char *conf_target(struct sup_run *r, char **why)
{
	char *real = realpath("/etc/resolv.conf", NULL);
	struct stat st;
	if (!real || stat(real, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = wd_asprintf("/etc/resolv.conf is not a file (%s): nothing to bind the "
				   "session's over",
				   real ? "not a regular file" : strerror(errno));
		free(real);
		return NULL;
	}
	/* Under a private directory the host's file is not what the sandbox
	 * sees there (and the bind would land in the session's directory). */
	for (size_t i = 0; r->private_dirs && r->private_dirs[i]; i++)
		if (wd_path_within(real, r->private_dirs[i])) {
			*why = wd_asprintf("/etc/resolv.conf leads to %s, inside the sandbox's "
					   "private %s",
					   real, r->private_dirs[i]);
			free(real);
			return NULL;
		}
	return real;
}

/* Writes the sandbox's resolv.conf in the session's directory. */
static int write_conf(struct sup_run *r, const struct sockaddr_in *at, const char *keep)
{
	char a[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &at->sin_addr, a, sizeof(a));
	wd_autofree char *text = wd_asprintf("# warden: the session's resolver\n"
					     "nameserver %s\n%s",
					     a, keep ? keep : "");
	/* The session's directory is warden's own (0700, opened by
	 * descriptor): nothing else can have made this name. */
	wd_autoclose int fd = openat(r->tmp_fd, "resolv.conf",
				     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	size_t k = strlen(text);
	if (write(fd, text, k) != (ssize_t)k)
		return -EIO;
	if (fchmod(fd, 0644) < 0)
		return -errno;
	return 0;
}

static int setup(struct sup_run *r, struct sup_resolver *rs, char **why)
{
	wd_autofree char *dst = conf_target(r, why);
	if (!dst)
		return -ENOENT;
	struct wd_sb keep = {0};
	read_host_conf(rs, "/etc/resolv.conf", &keep);
	wd_autofree char *kept = wd_sb_steal(&keep);
	if (rs->nservers == 0) {
		*why = wd_strdup("the host's /etc/resolv.conf names no nameserver");
		return -ENOENT;
	}
	if (r->tmp_fd < 0) {
		*why = wd_strdup("the session has no private directory for its resolv.conf");
		return -ENOENT;
	}
	struct sockaddr_in at;
	int rc = bind_listeners(rs, &at);
	if (rc < 0) {
		*why = wd_asprintf(
			"port 53 of 127.0.0.0/8 could not be bound (%s)%s", strerror(-rc),
			rc == -EACCES ? ": it needs root in the host's network namespace" : "");
		return rc;
	}
	if ((rc = write_conf(r, &at, kept)) < 0) {
		*why = wd_asprintf("the session's resolv.conf could not be written: %s",
				   strerror(-rc));
		return rc;
	}
	rs->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rs->lookups = sup_lookups_new();
	if (rs->stop_fd < 0 || !rs->lookups) {
		*why = wd_asprintf("eventfd: %s", strerror(errno));
		return -errno;
	}
	/* The sandbox's init binds it read-only over the file the sandbox
	 * reads (sandbox/jail.c): the agent cannot change it, and a process
	 * that reads another file or asks another server gets no names. */
	r->binds = wd_realloc(r->binds, (r->nbinds + 1) * sizeof(*r->binds));
	r->binds[r->nbinds++] = (struct sbx_bind){wd_asprintf("%s/resolv.conf", r->tmp_dir),
						  wd_strdup(dst), false, false};
	r->resolver_family = AF_INET;
	memset(r->resolver_addr, 0, sizeof(r->resolver_addr));
	memcpy(r->resolver_addr, &at.sin_addr, 4);
	char a[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &at.sin_addr, a, sizeof(a));
	wd_debug("resolver: %s:53 for the sandbox's %s, forwarding to %zu nameserver(s)", a, dst,
		 rs->nservers);
	return 0;
}

int sup_resolver_start(struct sup_run *r, char **why)
{
	*why = NULL;
	struct sup_resolver *rs = wd_calloc(1, sizeof(*rs));
	rs->udp_fd = rs->tcp_fd = rs->stop_fd = -1;
	rs->names = r->names;
	for (size_t k = 0; k < RES_JOBS; k++)
		rs->jobs[k].ufd = -1;
	for (int i = 0; i < RES_CLIENTS; i++)
		rs->clients[i].fd = -1;
	int rc = setup(r, rs, why);
	if (rc < 0) {
		resolver_free(rs);
		return rc;
	}
	r->resolver = rs;
	r->resolver_on = true;
	return 0;
}

int sup_resolver_serve(struct sup_run *r)
{
	struct sup_resolver *rs = r->resolver;
	if (!rs || rs->running)
		return 0;
	/* Signals are the loop's (signalfd): the thread starts with every
	 * signal blocked, so none is ever delivered to it, not even before
	 * it could block them itself. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = -pthread_create(&rs->thread, NULL, serve, rs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		/* The sandbox's resolv.conf names it already: its lookups go
		 * unanswered (they fail; nothing is forwarded undecided). */
		free(r->resolver_why);
		r->resolver_why = wd_asprintf("its thread could not start: %s", strerror(-rc));
		wd_warn("the session's resolver %s: the agent's name lookups will fail",
			r->resolver_why);
		return rc;
	}
	rs->running = true;
	return 0;
}

static void stop_thread(struct sup_resolver *rs)
{
	if (!rs->running)
		return;
	uint64_t one = 1;
	if (write(rs->stop_fd, &one, sizeof(one)) != sizeof(one))
		wd_warn("the resolver's thread could not be told to stop");
	pthread_join(rs->thread, NULL);
	rs->running = false;
}

void sup_resolver_arm(struct sup_run *r)
{
	if (r->resolver)
		sup_lookups_arm(r->resolver->lookups, r);
}

int sup_resolver_watch(struct sup_run *r)
{
	return r->resolver ? sup_lookups_watch(r->resolver->lookups, r) : 0;
}

void sup_resolver_finish(struct sup_run *r)
{
	struct sup_resolver *rs = r->resolver;
	if (!rs)
		return;
	/* Joined first: nothing is published after the rows are written. */
	stop_thread(rs);
	sup_lookups_finish(rs->lookups, r);
}

void sup_resolver_stop(struct sup_run *r)
{
	struct sup_resolver *rs = r->resolver;
	if (!rs)
		return;
	/* The loop is gone by now (sup_resolver_finish took the descriptor
	 * out of it): it is closed here. */
	stop_thread(rs);
	resolver_free(rs);
	r->resolver = NULL;
}

void sup_resolver_print_stats(const struct sup_run *r, FILE *out)
{
	struct sup_resolver *rs = r->resolver;
	size_t named = r->names ? sup_names_count(r->names) : 0;
	uint64_t by_policy, dropped;
	sup_lookups_counts(rs ? rs->lookups : NULL, &by_policy, &dropped);
	if (rs)
		fprintf(out,
			"  names: %zu addresses named; resolver: %llu queries, %llu addresses "
			"recorded, %llu refused, %llu failed, %llu refused by policy (%llu lookup "
			"rows dropped)\n",
			named, (unsigned long long)atomic_load(&rs->queries),
			(unsigned long long)atomic_load(&rs->recorded),
			(unsigned long long)atomic_load(&rs->refused),
			(unsigned long long)atomic_load(&rs->failed), (unsigned long long)by_policy,
			(unsigned long long)dropped);
	else
		fprintf(out,
			"  names: %zu addresses named; no session resolver (%s): names come "
			"from /etc/hosts and warden's own lookups only\n",
			named, r->resolver_why ? r->resolver_why : "not started");
}

int sup_resolver_probe(char **why)
{
	*why = NULL;
	struct sup_resolver *rs = wd_calloc(1, sizeof(*rs));
	rs->udp_fd = rs->tcp_fd = rs->stop_fd = -1;
	for (size_t k = 0; k < RES_JOBS; k++)
		rs->jobs[k].ufd = -1;
	for (int i = 0; i < RES_CLIENTS; i++)
		rs->clients[i].fd = -1;
	struct wd_sb keep = {0};
	read_host_conf(rs, "/etc/resolv.conf", &keep);
	free(wd_sb_steal(&keep));
	struct sup_run none = {.tmp_fd = -1};
	wd_autofree char *dst = NULL;
	int rc = 0;
	if (rs->nservers == 0) {
		*why = wd_strdup("the host's /etc/resolv.conf names no nameserver");
		rc = -ENOENT;
	} else if (!(dst = conf_target(&none, why))) {
		rc = -ENOENT;
	} else {
		struct sockaddr_in at;
		rc = bind_listeners(rs, &at);
		if (rc < 0)
			*why = wd_asprintf("port 53 of 127.0.0.0/8 cannot be bound (%s)%s",
					   strerror(-rc),
					   rc == -EACCES ? ": it needs root in the host's network "
							   "namespace"
							 : "");
		else
			*why = wd_asprintf("names what the sandbox resolves (%zu nameserver%s "
					   "from /etc/resolv.conf)",
					   rs->nservers, rs->nservers == 1 ? "" : "s");
	}
	resolver_free(rs);
	return rc;
}
