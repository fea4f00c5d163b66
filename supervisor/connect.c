/*
 * connect.c: IP destinations as requests. A connect, or a send with an
 * address, on an AF_INET/AF_INET6 socket by a process of the agent's tree
 * (sandbox/sock.c read the destination once from the stopped caller) is a
 * request of kind POL_CONNECT, named with what the session saw resolve to
 * the address (names.c), and run through the pipeline like an exec: policy
 * (hard deny, network.deny, grants, network.allow, the harness's own
 * endpoint), the judge, the tier, a person. An allowed call is done by
 * warden on the caller's own socket with the bytes decided (sockets.c,
 * sup_sock_do); a refused one fails with EACCES and a line on the caller's
 * stderr.
 *
 * Why what is decided is what is connected: the destination is the copy
 * sock.c made, and the call warden does passes that copy, never the
 * caller's memory, on our descriptor of the socket (the same open file),
 * so neither another thread rewriting the address nor one swapping the
 * descriptor number changes where the packets go. Why no descriptor leaks:
 * the only descriptor made here (a pidfd for the datagram cache; the
 * local-address probe is netaddr.c's) is O_CLOEXEC and never passed on;
 * sockets.c says the same of the call's.
 *
 * Datagrams: the first send from a process to a destination is decided
 * and audited; later ones from that process to an allowed destination go
 * without a row (sup_dgrams, for as long as the process lives). TCP
 * connects are decided every time.
 */
#include "sup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#define REASON_REVIEW                                                                              \
	"review run: a connection the config does not allow is refused (list it in "               \
	"\"network\": {\"allow\": [...]} of .warden/permissions.json)"

/* ---- the datagram cache ------------------------------------------------- */

#define DGRAM_PROCS_MAX 256
#define DGRAM_DESTS_MAX 256

struct dgram_dest {
	struct sbx_inet d;
	int proto;
};

struct dgram_proc {
	pid_t tgid;
	int pidfd;
	struct dgram_dest *dests;
	size_t n, cap;
	uint64_t used; /* for eviction: the least recently added goes */
};

struct sup_dgrams {
	pthread_mutex_t lock;
	struct dgram_proc procs[DGRAM_PROCS_MAX];
	size_t n;
	uint64_t clock;
};

struct sup_dgrams *sup_dgrams_new(void)
{
	struct sup_dgrams *c = wd_calloc(1, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

static void proc_drop(struct sup_dgrams *c, size_t i)
{
	wd_close(&c->procs[i].pidfd);
	free(c->procs[i].dests);
	c->procs[i] = c->procs[--c->n];
}

void sup_dgrams_free(struct sup_dgrams *c)
{
	if (!c)
		return;
	while (c->n)
		proc_drop(c, c->n - 1);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Whether the process |pidfd| names has exited (its pidfd is readable). */
static bool exited(int pidfd)
{
	struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
	return poll(&pfd, 1, 0) != 0;
}

static bool same_dest(const struct sbx_inet *a, const struct sbx_inet *b)
{
	return a->family == b->family && a->port == b->port && a->scope == b->scope &&
	       memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

/* The entry of |tgid| whose process still lives, dropping one that has
 * exited (a later process with the same pid inherits nothing). */
static struct dgram_proc *proc_find(struct sup_dgrams *c, pid_t tgid)
{
	for (size_t i = 0; i < c->n; i++) {
		if (c->procs[i].tgid != tgid)
			continue;
		if (exited(c->procs[i].pidfd)) {
			proc_drop(c, i);
			return NULL;
		}
		return &c->procs[i];
	}
	return NULL;
}

bool sup_dgrams_has(struct sup_dgrams *c, pid_t tgid, const struct sbx_inet *d, int proto)
{
	if (!c)
		return false;
	pthread_mutex_lock(&c->lock);
	bool hit = false;
	struct dgram_proc *p = proc_find(c, tgid);
	for (size_t i = 0; p && i < p->n && !hit; i++)
		hit = p->dests[i].proto == proto && same_dest(&p->dests[i].d, d);
	pthread_mutex_unlock(&c->lock);
	return hit;
}

void sup_dgrams_forget(struct sup_dgrams *c, pid_t tgid)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n; i++)
		if (c->procs[i].tgid == tgid) {
			proc_drop(c, i);
			break;
		}
	pthread_mutex_unlock(&c->lock);
}

void sup_dgrams_add(struct sup_dgrams *c, pid_t tgid, int pidfd, const struct sbx_inet *d,
		    int proto)
{
	if (!c || pidfd < 0) {
		if (pidfd >= 0)
			close(pidfd);
		return;
	}
	pthread_mutex_lock(&c->lock);
	struct dgram_proc *p = proc_find(c, tgid);
	if (p) {
		close(pidfd); /* the entry's own pidfd names the same process */
	} else {
		/* Full: exited processes go first, then the oldest. */
		for (size_t i = 0; i < c->n;)
			if (c->n == DGRAM_PROCS_MAX && exited(c->procs[i].pidfd))
				proc_drop(c, i);
			else
				i++;
		if (c->n == DGRAM_PROCS_MAX) {
			size_t old = 0;
			for (size_t i = 1; i < c->n; i++)
				if (c->procs[i].used < c->procs[old].used)
					old = i;
			proc_drop(c, old);
		}
		p = &c->procs[c->n++];
		memset(p, 0, sizeof(*p));
		p->tgid = tgid;
		p->pidfd = pidfd;
	}
	p->used = ++c->clock;
	if (p->n == DGRAM_DESTS_MAX) {
		/* Forgetting one only means deciding it again. */
		memmove(p->dests, p->dests + 1, (p->n - 1) * sizeof(*p->dests));
		p->n--;
	}
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 8;
		p->dests = wd_realloc(p->dests, p->cap * sizeof(*p->dests));
	}
	p->dests[p->n++] = (struct dgram_dest){.d = *d, .proto = proto};
	pthread_mutex_unlock(&c->lock);
}

/* ---- facts about a destination ------------------------------------------ */

/* Whether |d| is the session's resolver (port 53): inside the boundary. */
static bool resolver(const struct sup_run *r, const struct sbx_inet *d)
{
	return r->resolver_on && d->port == 53 && d->family == r->resolver_family &&
	       memcmp(d->addr, r->resolver_addr, d->family == AF_INET ? 4 : 16) == 0;
}

static bool datagram(const struct sbx_sock_event *ev)
{
	return ev->type != SOCK_STREAM;
}

static enum pol_net_proto proto_of(const struct sbx_sock_event *ev)
{
	if (ev->type == SOCK_STREAM && ev->protocol == IPPROTO_TCP)
		return POL_NET_TCP;
	if (ev->type == SOCK_DGRAM &&
	    (ev->protocol == IPPROTO_UDP || ev->protocol == IPPROTO_UDPLITE))
		return POL_NET_UDP;
	return POL_NET_OTHER;
}

/* "1.2.3.4" or "::1". */
static void addr_text(const struct sbx_inet *d, char *out, size_t n)
{
	if (!inet_ntop(d->family, d->addr, out, (socklen_t)n))
		snprintf(out, n, "?");
}

/* Whether process |tgid| is the agent harness's own: the agent's initial
 * process (its start-up chain) or a known launcher's native child, never
 * a process either of them starts (a tool call). The entry's startup mark
 * is set by the exec the supervisor decided for it (trace.c, pipeline.c),
 * and an entry lives only as long as its process (sup_proc_get). */
static bool harness_process(struct sup_run *r, pid_t tgid)
{
	if (r->opts.agent == POL_HARNESS_NONE)
		return false;
	struct sup_proc *g = sup_proc_get(r, tgid);
	return g && g->startup && !g->orphan && g->tgid == tgid;
}

/* The caller's cwd from /proc (caller frees), or NULL. */
static char *proc_cwd(pid_t pid)
{
	char link[64], buf[4096];
	snprintf(link, sizeof(link), "/proc/%d/cwd", pid);
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return wd_strdup(buf);
}

/* The caller's command line for the decision: the arguments warden saw at
 * the process's own exec event (or at its creator's, for a process forked
 * since), which the process cannot rewrite afterwards. A process can write
 * anything into its own argv memory, which /proc/PID/cmdline shows; so a
 * process warden never saw exec is shown with what /proc says, marked as
 * its own claim. Caller frees; NULL when nothing can be read. */
static char *command_of(const struct sup_proc *p, pid_t tgid)
{
	char *seen = p ? sbx_args_quote(&p->args) : NULL;
	if (seen)
		return seen;
	wd_autofree char *says = sbx_proc_cmdline(tgid, SBX_CMDLINE_MAX);
	return says ? wd_asprintf("%s (as the process says)", says) : NULL;
}

/* ---- the requests --------------------------------------------------------- */

static void next(struct sup_run *r, struct sbx_sock_event *ev, int64_t t0);

/* Builds and runs the request for message |i| of |ev| (taken). */
static void ask(struct sup_run *r, struct sbx_sock_event *ev, size_t i, int64_t t0)
{
	const struct sbx_sock_msg *m = &ev->msgs[i];
	/* The process's entry (adopted when it has none), for the row's tool
	 * call and for whether it is the harness. */
	struct sup_proc *p = sup_proc_get(r, ev->tgid);
	if (!p) {
		p = sup_proc_adopt(r, ev->tgid, 0, 0);
		sup_proc_keep_untraced(r, p);
	}
	char *cmd = command_of(p, ev->tgid);
	wd_autofree char *cwd = proc_cwd(ev->tgid);
	bool harness = harness_process(r, ev->tgid);
	/* Everything above read /proc by pid: the id check says the caller
	 * (a thread of that very process) was alive all along. */
	if (!sbx_notify_id_valid(r->child.notify_fd, ev->id)) {
		free(cmd);
		sbx_sock_event_free(ev);
		return;
	}
	char **names = sup_names_of(r->names, m->inet.family, m->inet.addr);
	struct pol_connect_desc d = {
		.syscall = sup_sock_op_name(ev->op),
		.family = m->inet.family,
		.port = m->inet.port,
		.proto = proto_of(ev),
		.names = (const char *const *)names,
		.local = sup_addr_local(m->inet.family, m->inet.addr),
		.harness = harness,
		.cmdline = cmd,
		.cwd = cwd,
	};
	memcpy(d.addr, m->inet.addr, sizeof(d.addr));
	struct sup_request *rq = wd_calloc(1, sizeof(*rq));
	rq->kind = POL_CONNECT;
	rq->sock = ev;
	rq->sock_msg = i;
	rq->pid = ev->tgid;
	rq->tgid = ev->tgid;
	rq->t_recv_ns = t0;
	rq->command = cmd; /* the desk's and the prompt's, as the decision's */
	rq->req = pol_request_connect(&d);
	char addr[INET6_ADDRSTRLEN];
	addr_text(&m->inet, addr, sizeof(addr));
	if (!rq->req) {
		wd_strv_free(names);
		sup_refuse_unbuilt(r, rq,
				   wd_asprintf("connect %s%s%s:%u",
					       m->inet.family == AF_INET6 ? "[" : "", addr,
					       m->inet.family == AF_INET6 ? "]" : "",
					       (unsigned)m->inet.port));
		return;
	}
	rq->summary = pol_request_summary(rq->req);
	const char *dest = pol_request_destination(rq->req);
	rq->told = names ? wd_asprintf("%s (%s)", dest, addr) : wd_strdup(dest);
	wd_strv_free(names);
	sup_run_pipeline(r, rq, false);
}

/* Decides the next destination of |ev| (taken) not decided yet, or does
 * the call when none is left. */
static void next(struct sup_run *r, struct sbx_sock_event *ev, int64_t t0)
{
	for (size_t i = 0; i < ev->nmsgs; i++) {
		struct sbx_sock_msg *m = &ev->msgs[i];
		if (m->kind != SBX_ADDR_INET || m->decided)
			continue;
		bool known = resolver(r, &m->inet) ||
			     (datagram(ev) &&
			      sup_dgrams_has(r->dgrams, ev->tgid, &m->inet, ev->protocol));
		/* The same destination twice in one sendmmsg: decided once. */
		for (size_t k = 0; k < i && !known; k++)
			known = ev->msgs[k].kind == SBX_ADDR_INET && ev->msgs[k].decided &&
				same_dest(&ev->msgs[k].inet, &m->inet);
		if (known) {
			m->decided = true;
			continue;
		}
		ask(r, ev, i, t0);
		return;
	}
	sup_sock_do(r, ev);
}

void sup_connect_on_notify(struct sup_run *r, struct sbx_sock_event *ev, int64_t t0)
{
	if (!r->dgrams)
		r->dgrams = sup_dgrams_new();
	next(r, ev, t0);
}

void sup_connect_free(struct sup_run *r)
{
	sup_dgrams_free(r->dgrams);
	r->dgrams = NULL;
}

/* ---- the kind's functions (kinds.c) ------------------------------------- */

const char *sup_connect_verb(const struct sup_request *rq)
{
	(void)rq;
	return "connect";
}

/* A review run never asks the judge or a person about a connection: what
 * policy did not allow is refused. Nothing else about a connection is the
 * agent's machinery (its own endpoint is policy's, for its own process). */
bool sup_connect_machinery(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
			   bool *startup)
{
	(void)p;
	(void)startup;
	if (!r->opts.review || rq->pol.verdict == POL_ALLOW || rq->pol.verdict == POL_DENY ||
	    rq->pol.verdict == POL_DENY_CRITICAL)
		return false;
	sup_finish_warden(r, rq, false, POL_SRC_TIER, REASON_REVIEW);
	return true;
}

/* A killed caller leaves an invalid notification behind. */
bool sup_connect_waits(struct sup_run *r, const struct sup_request *rq)
{
	return rq->sock && sbx_notify_id_valid(r->child.notify_fd, rq->sock->id);
}

static void count(struct sup_run *r, const struct sup_request *rq, bool allowed)
{
	struct sup_stats *s = &r->stats;
	if (allowed)
		s->connects_allowed++;
	else
		s->connects_refused++;
	if (s->nconn_lat == s->capconn_lat) {
		s->capconn_lat = s->capconn_lat ? s->capconn_lat * 2 : 64;
		s->conn_lat_ns = wd_realloc(s->conn_lat_ns, s->capconn_lat * sizeof(int64_t));
	}
	s->conn_lat_ns[s->nconn_lat++] = wd_now_mono_ns() - rq->t_recv_ns;
}

/* The destination is allowed (its row written): on to the next one of the
 * call, or the call itself. */
void sup_connect_allow(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
		       const struct sup_outcome *o, bool covers_next, int64_t row_id)
{
	(void)p;
	(void)o;
	(void)covers_next;
	(void)row_id;
	count(r, rq, true);
	struct sbx_sock_event *ev = wd_steal_pointer(&rq->sock);
	struct sbx_sock_msg *m = &ev->msgs[rq->sock_msg];
	m->decided = true;
	if (datagram(ev)) {
		/* The pidfd is opened, then the id checked: the caller, a
		 * thread of |tgid|, was alive, so the pidfd is its process. */
		int pidfd = (int)syscall(SYS_pidfd_open, ev->tgid, 0);
		if (pidfd >= 0 && !sbx_notify_id_valid(r->child.notify_fd, ev->id)) {
			close(pidfd);
			pidfd = -1;
		}
		sup_dgrams_add(r->dgrams, ev->tgid, pidfd, &m->inet, ev->protocol);
	}
	next(r, ev, rq->t_recv_ns);
}

/* The whole call fails at its first refused destination. */
void sup_connect_refuse(struct sup_run *r, struct sup_request *rq, struct sup_proc *p, int err)
{
	(void)p;
	count(r, rq, false);
	if (rq->sock)
		sbx_notify_answer(r->child.notify_fd, rq->sock->id, -err);
}

char *sup_connect_cwd(const struct sup_request *rq)
{
	char *cwd = rq->pid > 0 ? proc_cwd(rq->pid) : NULL;
	return cwd ? cwd : wd_strdup("?");
}

char *sup_connect_command(const struct sup_request *rq)
{
	return wd_strdup(rq->command ? rq->command : "?");
}

/* A connection's question: the destination (with its address and
 * protocol, in the summary) and the process. */
void sup_connect_prompt(struct wd_sb *sb, const struct sup_request *rq, const char *code)
{
	char *what = wd_sanitize(rq->summary);
	char *clean = wd_sanitize(rq->command ? rq->command : "?");
	const char *proto = "other";
	if (rq->sock)
		proto = pol_net_proto_name(proto_of(rq->sock));
	wd_sb_printf(sb, "\nwarden [%s]: the agent wants to %s\n", code, what);
	wd_sb_printf(sb, "  protocol %s; pid %d: %.200s\n", proto, rq->pid, clean);
	free(clean);
	free(what);
}

/* ---- the harness's own endpoints -------------------------------------- */

static const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

/* "host:port" (IPv6 bracketed) of the URL |url|, with the scheme's port
 * when none is given, in |entry|, the bare host in |host|. False when
 * |url| is not an http(s) URL with a host. */
static bool url_endpoint(const char *url, char *entry, size_t en, char *host, size_t hn)
{
	unsigned port;
	if (wd_str_has_prefix(url, "https://")) {
		url += 8;
		port = 443;
	} else if (wd_str_has_prefix(url, "http://")) {
		url += 7;
		port = 80;
	} else {
		return false;
	}
	size_t len = strcspn(url, "/?#");
	char auth[512];
	if (len == 0 || len >= sizeof(auth))
		return false;
	memcpy(auth, url, len);
	auth[len] = '\0';
	char *h = strrchr(auth, '@');
	h = h ? h + 1 : auth;
	char *colon;
	if (h[0] == '[') {
		char *end = strchr(h, ']');
		if (!end)
			return false;
		*end = '\0';
		snprintf(host, hn, "%s", h + 1);
		colon = end[1] == ':' ? end + 1 : NULL;
	} else {
		colon = strchr(h, ':');
		if (colon)
			*colon = '\0';
		snprintf(host, hn, "%s", h);
	}
	if (colon && colon[1]) {
		char *e;
		unsigned long v = strtoul(colon + 1, &e, 10);
		if (*e || v == 0 || v > 65535)
			return false;
		port = (unsigned)v;
	}
	if (!host[0])
		return false;
	bool v6 = strchr(host, ':') != NULL;
	snprintf(entry, en, "%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", port);
	return true;
}

/* The value of |key| = "..." on line |line| (TOML, a basic string), or
 * NULL. Caller frees. */
static char *toml_string(const char *line, const char *key)
{
	while (*line == ' ' || *line == '\t')
		line++;
	size_t n = strlen(key);
	if (strncmp(line, key, n) != 0)
		return NULL;
	line += n;
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line++ != '=')
		return NULL;
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line != '"')
		return NULL;
	const char *end = strchr(line + 1, '"');
	return end ? wd_strndup(line + 1, (size_t)(end - line - 1)) : NULL;
}

/* Codex's configured provider's base_url (CODEX_HOME or ~/.codex's
 * config.toml: model_provider = "x", then [model_providers.x] base_url),
 * or NULL. Caller frees. */
static char *codex_base_url(char *const *envp)
{
	const char *home = env_get(envp, "CODEX_HOME");
	wd_autofree char *path = NULL;
	if (home && *home) {
		path = wd_asprintf("%s/config.toml", home);
	} else {
		home = env_get(envp, "HOME");
		if (!home || !*home)
			return NULL;
		path = wd_asprintf("%s/.codex/config.toml", home);
	}
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char line[1024];
	char *provider = NULL, *url = NULL;
	char section[256] = "";
	/* Two passes: the provider may be named after its table. */
	for (int pass = 0; pass < 2 && !url; pass++) {
		rewind(f);
		section[0] = '\0';
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\r\n")] = '\0';
			const char *s = line;
			while (*s == ' ' || *s == '\t')
				s++;
			if (*s == '[') {
				snprintf(section, sizeof(section), "%.255s", s);
				continue;
			}
			if (pass == 0 && !section[0] && !provider)
				provider = toml_string(s, "model_provider");
			if (pass == 1 && provider) {
				char want[300];
				snprintf(want, sizeof(want), "[model_providers.%s]", provider);
				if (strcmp(section, want) == 0 && !url)
					url = toml_string(s, "base_url");
			}
		}
	}
	fclose(f);
	free(provider);
	return url;
}

/* Adds |entry| as the harness's endpoint and records the addresses of
 * |host| (when it is a name) under it. */
static void add_endpoint(struct sup_run *r, const char *entry, const char *host)
{
	if (pol_config_add_harness_endpoint(r->config, entry) < 0) {
		wd_warn("the harness's endpoint %s is not a valid destination: not allowed", entry);
		return;
	}
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
	struct addrinfo *res = NULL;
	if (getaddrinfo(host, NULL, &hints, &res) == 0) {
		freeaddrinfo(res); /* an address: nothing to name */
		return;
	}
	hints.ai_flags = 0;
	if (getaddrinfo(host, NULL, &hints, &res) != 0) {
		wd_debug("the harness's endpoint %s does not resolve here", host);
		return;
	}
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		if (a->ai_family == AF_INET) {
			const struct sockaddr_in *s = (const void *)a->ai_addr;
			sup_names_add(r->names, host, AF_INET, (const uint8_t *)&s->sin_addr);
		} else if (a->ai_family == AF_INET6) {
			const struct sockaddr_in6 *s = (const void *)a->ai_addr;
			const uint8_t *b = s->sin6_addr.s6_addr;
			if (IN6_IS_ADDR_V4MAPPED(&s->sin6_addr))
				sup_names_add(r->names, host, AF_INET, b + 12);
			else
				sup_names_add(r->names, host, AF_INET6, b);
		}
	}
	freeaddrinfo(res);
}

static void add_url(struct sup_run *r, const char *url, const char *var)
{
	char entry[600], host[512];
	if (url_endpoint(url, entry, sizeof(entry), host, sizeof(host)))
		add_endpoint(r, entry, host);
	else
		wd_warn("%s is not an http(s) URL with a host: the harness's endpoint is not known",
			var);
}

void sup_connect_harness_endpoints(struct sup_run *r, char *const *envp)
{
	switch (r->opts.agent) {
	case POL_HARNESS_CLAUDE_CODE: {
		const char *url = env_get(envp, "ANTHROPIC_BASE_URL");
		if (url && *url)
			add_url(r, url, "ANTHROPIC_BASE_URL");
		else
			add_endpoint(r, "api.anthropic.com:443", "api.anthropic.com");
		return;
	}
	case POL_HARNESS_CODEX: {
		const char *url = env_get(envp, "OPENAI_BASE_URL");
		wd_autofree char *cfg = codex_base_url(envp);
		if (url && *url)
			add_url(r, url, "OPENAI_BASE_URL");
		if (cfg && *cfg)
			add_url(r, cfg, "the Codex config's base_url");
		if ((!url || !*url) && (!cfg || !*cfg)) {
			add_endpoint(r, "api.openai.com:443", "api.openai.com");
			add_endpoint(r, "chatgpt.com:443", "chatgpt.com");
		}
		return;
	}
	default:
		return;
	}
}
