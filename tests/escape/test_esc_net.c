/*
 * test_esc_net: IP destinations under the real `warden run`. The agent
 * (tests/escape/esc_net.c, bash, python3) tries to reach listeners the
 * test makes on loopback and on the host's own address, the cloud
 * metadata address, by every spelling (IPv4-mapped IPv6, 0.0.0.0, ::1),
 * by connect, sendto and sendmmsg, while a thread rewrites the address,
 * through an inherited socket and by sockets that bypass connect (raw,
 * netlink, packet, io_uring). Each case asserts on the listener (what
 * arrived), on the errno, on the line the agent was told and on the audit
 * row; the positive cases check that what the config allows gets through
 * with its data.
 *
 * A case that finds an escape fails with "ESCAPE FOUND: ...".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

struct fx {
	char *proj;
	char *db;
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	free(f->proj);
	free(f->db);
	free(f);
	return 0;
}

static char *esc(void)
{
	const char *b = getenv("WARDEN_BUILD_DIR");
	return wd_asprintf("%s/tests/escape/esc_net", b ? b : ".");
}

/* The project's network config: |allow| entries, comma-separated JSON
 * strings ("\"127.0.0.1:80\""), or NULL for none. */
static void allow(const struct fx *f, const char *entries)
{
	wd_autofree char *cfg =
		wd_asprintf("{\"network\": {\"allow\": [%s]}}\n", entries ? entries : "");
	wt_write(f->proj, ".warden/permissions.json", cfg);
}

/* A listener of the test's own on |addr| (family |fam|), non-blocking;
 * its port in *port. */
static int listener(int fam, const char *addr, int type, int *port)
{
	int s = socket(fam, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	socklen_t sl;
	if (fam == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, addr, &a->sin6_addr), 1);
		sl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, addr, &a->sin_addr), 1);
		sl = sizeof(*a);
	}
	assert_int_equal(bind(s, (struct sockaddr *)&ss, sl), 0);
	if (type == SOCK_STREAM)
		assert_int_equal(listen(s, 4096), 0);
	getsockname(s, (struct sockaddr *)&ss, &sl);
	*port = ntohs(fam == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
				      : ((struct sockaddr_in *)&ss)->sin_port);
	return s;
}

/* The connections a stream listener got, each read for "PWN" (*pwn
 * counts them). */
static int accepted(int l, int *pwn)
{
	int n = 0;
	*pwn = 0;
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			break;
		n++;
		struct pollfd p = {.fd = c, .events = POLLIN};
		char buf[8] = {0};
		if (poll(&p, 1, 1000) == 1 && recv(c, buf, sizeof(buf) - 1, 0) == 3 &&
		    strcmp(buf, "PWN") == 0)
			(*pwn)++;
		close(c);
	}
	return n;
}

/* The datagrams a datagram listener got. */
static int datagrams(int l)
{
	int n = 0;
	char buf[64];
	while (recv(l, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

static void assert_unreached(int l, const char *what)
{
	int pwn, n = accepted(l, &pwn);
	if (n)
		fail_msg("ESCAPE FOUND: the listener at %s got %d connection(s)", what, n);
	close(l);
}

static void runv(const struct fx *f, struct wt_result *r, const char *tier, char **args)
{
	char *argv[40] = {"run", "--tier", (char *)tier, "--prompt", "none", "--"};
	size_t n = 6;
	for (size_t i = 0; args[i] && n < 39; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	wt_wardenv(f->proj, argv, r);
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", r->status, r->out, r->err);
}

/* Runs esc_net with |...| (NULL-terminated) under |tier|. */
static void run(const struct fx *f, struct wt_result *r, const char *tier, ...)
{
	char *args[32];
	size_t n = 0;
	args[n++] = esc();
	va_list ap;
	va_start(ap, tier);
	while (n < 31 && (args[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	args[n] = NULL;
	runv(f, r, tier, args);
	free(args[0]);
}

/* The request's JSON fragment of destination |dest| ("127.0.0.1:80",
 * "[::1]:80"): its address and port, whatever name it is shown by. */
static char *dest_json(const char *dest)
{
	const char *colon = strrchr(dest, ':');
	bool v6 = dest[0] == '[';
	return wd_asprintf("\"address\":\"%.*s\",\"port\":%s,", (int)(colon - dest - (v6 ? 2 : 0)),
			   dest + (v6 ? 1 : 0), colon + 1);
}

/* Rows refused (|deny|) or allowed for destination |dest|: its address
 * and port in the request. Loopback is shown by the name the host's
 * /etc/hosts gives it ("localhost:80 (127.0.0.1)"), other addresses as
 * themselves. */
static int dest_rows(const struct fx *f, const char *decision, const char *source,
		     const char *summary_sub, const char *dest)
{
	wd_autofree char *req = dest_json(dest);
	struct wt_audit_q q = {.decision = decision,
			       .source = source,
			       .summary_sub = summary_sub,
			       .request_sub = req};
	return wt_audit_match(f->db, &q);
}

/* Connect rows refused (|deny|) or allowed for |dest|. */
static int rows(const struct fx *f, bool deny, const char *dest)
{
	return dest_rows(f, deny ? "deny" : "allow", NULL, "connect ", dest);
}

/* Whether |err| holds warden's refusal of |dest|: "warden: refused
 * connect to 127.0.0.1:80", or to "localhost:80 (127.0.0.1)" when the
 * session has a name for it. */
static bool told_refused(const char *err, const char *dest)
{
	wd_autofree char *plain = wd_asprintf("warden: refused connect to %s", dest);
	if (strstr(err, plain))
		return true;
	const char *colon = strrchr(dest, ':');
	bool v6 = dest[0] == '[';
	wd_autofree char *tail = wd_asprintf("%s (%.*s)", colon, (int)(colon - dest - (v6 ? 2 : 0)),
					     dest + (v6 ? 1 : 0));
	const char *prefix = "warden: refused connect to ";
	for (const char *p = strstr(err, prefix); p; p = strstr(p + 1, prefix)) {
		const char *name = p + strlen(prefix);
		size_t n = strcspn(name, " :\n");
		if (n > 0 && strncmp(name + n, tail, strlen(tail)) == 0)
			return true;
	}
	return false;
}

/* The refusal of |dest| as the agent sees it: EACCES, one line on its
 * stderr, one row. */
static void assert_refused(const struct fx *f, const struct wt_result *r, const char *dest)
{
	if (!strstr(r->out, "errno=13"))
		fail_msg("ESCAPE FOUND: %s was not refused with EACCES", dest);
	assert_true(told_refused(r->err, dest));
	assert_true(rows(f, true, dest) >= 1);
}

static const char *const tiers[] = {"aggressive", "standard", "passive"};

/* ---- loopback --------------------------------------------------------- */

/* The config lists the port: the connection gets through, data flows, and
 * an allowed row names it. */
static void test_esc_net_allowed(void **state)
{
	struct fx *f = *state;
	int port;
	int l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
	char p[16], entry[64];
	snprintf(p, sizeof(p), "%d", port);
	snprintf(entry, sizeof(entry), "\"127.0.0.1:%d\"", port);
	allow(f, entry);
	struct wt_result r;
	run(f, &r, "passive", "connect", "4", "127.0.0.1", p, NULL);
	assert_non_null(strstr(r.out, "CONNECTED wrote=3"));
	int pwn;
	assert_int_equal(accepted(l, &pwn), 1);
	assert_int_equal(pwn, 1);
	close(l);
	wd_autofree char *dest = wd_asprintf("127.0.0.1:%d", port);
	assert_true(rows(f, false, dest) == 1);
	wt_result_free(&r);
}

/* An unlisted loopback port (the host's own service) is refused in every
 * tier, before any packet: the listener never sees a connection. */
static void test_esc_net_loopback_every_tier(void **state)
{
	struct fx *f = *state;
	for (size_t t = 0; t < WD_ARRAY_SIZE(tiers); t++) {
		int port;
		int l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
		char p[16];
		snprintf(p, sizeof(p), "%d", port);
		allow(f, NULL);
		struct wt_result r;
		run(f, &r, tiers[t], "connect", "4", "127.0.0.1", p, NULL);
		wd_autofree char *dest = wd_asprintf("127.0.0.1:%d", port);
		assert_unreached(l, dest);
		assert_refused(f, &r, dest);
		wt_result_free(&r);
	}
}

/* The metadata address, in every tier: refused before any packet leaves
 * (nothing listens there; an allowed connect would time out or fail with
 * another errno). */
static void test_esc_net_metadata_every_tier(void **state)
{
	struct fx *f = *state;
	for (size_t t = 0; t < WD_ARRAY_SIZE(tiers); t++) {
		/* Even a config that allows everything does not open it. */
		allow(f, "\"*\"");
		struct wt_result r;
		run(f, &r, tiers[t], "connect", "4", "169.254.169.254", "80", NULL);
		assert_refused(f, &r, "169.254.169.254:80");
		assert_true(wt_audit_count(f->db, "deny", "hard_deny", "169.254.169.254:80",
					   NULL) >= 1);
		wt_result_free(&r);
	}
}

/* What a process was let send goes with its program: after an exec, the
 * same destination is decided again (a new row), not let through by the
 * old program's allowance. */
static void test_esc_net_udp_exec(void **state)
{
	struct fx *f = *state;
	int port;
	int l = listener(AF_INET, "127.0.0.1", SOCK_DGRAM, &port);
	char p[16], entry[64];
	snprintf(p, sizeof(p), "%d", port);
	snprintf(entry, sizeof(entry), "\"127.0.0.1:%d\"", port);
	allow(f, entry);
	struct wt_result r;
	run(f, &r, "aggressive", "udp_exec", "127.0.0.1", p, NULL);
	assert_non_null(strstr(r.out, "UDP sent=1"));
	assert_int_equal(datagrams(l), 2);
	close(l);
	wd_autofree char *dest = wd_asprintf("127.0.0.1:%d", port);
	assert_int_equal(dest_rows(f, "allow", NULL, NULL, dest), 2);
	wt_result_free(&r);
}

/* The command line the decision is shown is the one warden saw at the
 * process's exec, not what the process later wrote into its own argv
 * (which /proc/PID/cmdline shows): a tool cannot pass for "git fetch". */
static void test_esc_net_spoofed_command(void **state)
{
	struct fx *f = *state;
	allow(f, NULL);
	struct wt_result r;
	run(f, &r, "passive", "spoof", "169.254.169.254", "80", NULL);
	assert_refused(f, &r, "169.254.169.254:80");
	struct wt_audit_q lie = {.summary_sub = "169.254.169.254:80", .request_sub = "git fetch"};
	assert_int_equal(wt_audit_match(f->db, &lie), 0);
	struct wt_audit_q seen = {.summary_sub = "169.254.169.254:80",
				  .request_sub = "esc_net spoof 169.254.169.254 80"};
	assert_int_equal(wt_audit_match(f->db, &seen), 1);
	wt_result_free(&r);
}

/* IPv4-mapped IPv6 on an AF_INET6 socket is the IPv4 address: decided
 * (and named) as 127.0.0.1 and 169.254.169.254; allowed as 127.0.0.1 when
 * that is what the config lists. */
static void test_esc_net_mapped(void **state)
{
	struct fx *f = *state;
	int port;
	int l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
	char p[16];
	snprintf(p, sizeof(p), "%d", port);
	allow(f, NULL);
	struct wt_result r;
	run(f, &r, "aggressive", "connect", "6", "::ffff:127.0.0.1", p, NULL);
	wd_autofree char *dest = wd_asprintf("127.0.0.1:%d", port);
	assert_unreached(l, dest);
	assert_refused(f, &r, dest);
	wt_result_free(&r);

	allow(f, "\"*\"");
	run(f, &r, "aggressive", "connect", "6", "::ffff:169.254.169.254", "80", NULL);
	assert_refused(f, &r, "169.254.169.254:80");
	wt_result_free(&r);

	l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
	snprintf(p, sizeof(p), "%d", port);
	char entry[64];
	snprintf(entry, sizeof(entry), "\"127.0.0.1:%d\"", port);
	allow(f, entry);
	run(f, &r, "passive", "connect", "6", "::ffff:127.0.0.1", p, NULL);
	assert_non_null(strstr(r.out, "CONNECTED"));
	int pwn;
	assert_int_equal(accepted(l, &pwn), 1);
	close(l);
	wt_result_free(&r);
}

/* 0.0.0.0 reaches the host's own listeners on 127.0.0.1. */
static void test_esc_net_unspecified(void **state)
{
	struct fx *f = *state;
	int port;
	int l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
	char p[16];
	snprintf(p, sizeof(p), "%d", port);
	allow(f, NULL);
	struct wt_result r;
	run(f, &r, "aggressive", "connect", "4", "0.0.0.0", p, NULL);
	wd_autofree char *dest = wd_asprintf("0.0.0.0:%d", port);
	assert_unreached(l, dest);
	assert_refused(f, &r, dest);
	wt_result_free(&r);
}

/* The host's own non-loopback address (its interface's), when it has one. */
static void test_esc_net_own_address(void **state)
{
	struct fx *f = *state;
	struct ifaddrs *ifa = NULL;
	char addr[INET_ADDRSTRLEN] = "";
	assert_int_equal(getifaddrs(&ifa), 0);
	for (struct ifaddrs *i = ifa; i && !addr[0]; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, addr,
			  sizeof(addr));
	}
	freeifaddrs(ifa);
	if (!addr[0]) {
		print_message("no non-loopback IPv4 address here: skipped\n");
		skip();
	}
	int port;
	int l = listener(AF_INET, addr, SOCK_STREAM, &port);
	char p[16];
	snprintf(p, sizeof(p), "%d", port);
	allow(f, NULL);
	struct wt_result r;
	run(f, &r, "aggressive", "connect", "4", addr, p, NULL);
	wd_autofree char *dest = wd_asprintf("%s:%d", addr, port);
	assert_unreached(l, dest);
	assert_refused(f, &r, dest);
	wt_result_free(&r);
}

/* IPv6 loopback: refused unlisted, allowed listed. */
static void test_esc_net_ipv6(void **state)
{
	struct fx *f = *state;
	int port;
	int l = listener(AF_INET6, "::1", SOCK_STREAM, &port);
	char p[16];
	snprintf(p, sizeof(p), "%d", port);
	allow(f, NULL);
	struct wt_result r;
	run(f, &r, "aggressive", "connect", "6", "::1", p, NULL);
	wd_autofree char *dest = wd_asprintf("[::1]:%d", port);
	assert_unreached(l, dest);
	assert_refused(f, &r, dest);
	wt_result_free(&r);

	l = listener(AF_INET6, "::1", SOCK_STREAM, &port);
	snprintf(p, sizeof(p), "%d", port);
	char entry[64];
	snprintf(entry, sizeof(entry), "\"[::1]:%d\"", port);
	allow(f, entry);
	run(f, &r, "passive", "connect", "6", "::1", p, NULL);
	assert_non_null(strstr(r.out, "CONNECTED wrote=3"));
	int pwn;
	assert_int_equal(accepted(l, &pwn), 1);
	assert_int_equal(pwn, 1);
	close(l);
	wt_result_free(&r);
}

/* A non-blocking connect: EINPROGRESS from warden's connect on the
 * caller's socket, then success through poll, data flowing. */
static void test_esc_net_nonblocking(void **state)
{
	struct fx *f = *state;
	int port;
	int l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
	char p[16], entry[64];
	snprintf(p, sizeof(p), "%d", port);
	snprintf(entry, sizeof(entry), "\"127.0.0.1:%d\"", port);
	allow(f, entry);
	struct wt_result r;
	run(f, &r, "passive", "nonblock", "127.0.0.1", p, NULL);
	assert_non_null(strstr(r.out, "NB connected wrote=3"));
	int pwn;
	assert_int_equal(accepted(l, &pwn), 1);
	assert_int_equal(pwn, 1);
	close(l);
	wt_result_free(&r);
	/* Unlisted: refused at once, not EINPROGRESS. */
	l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
	snprintf(p, sizeof(p), "%d", port);
	run(f, &r, "aggressive", "nonblock", "127.0.0.1", p, NULL);
	wd_autofree char *dest = wd_asprintf("127.0.0.1:%d", port);
	assert_unreached(l, dest);
	assert_refused(f, &r, dest);
	wt_result_free(&r);
}

/* A second thread flips the port in the address between the allowed
 * listener's and another while the first connects: what is connected is
 * what was decided, so the other listener never gets a connection. */
static void test_esc_net_race(void **state)
{
	struct fx *f = *state;
	int in_port, out_port;
	int in = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &in_port);
	int out = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &out_port);
	char pi[16], po[16], entry[64];
	snprintf(pi, sizeof(pi), "%d", in_port);
	snprintf(po, sizeof(po), "%d", out_port);
	snprintf(entry, sizeof(entry), "\"127.0.0.1:%d\"", in_port);
	allow(f, entry);
	struct wt_result r;
	run(f, &r, "passive", "race", pi, po, "300", NULL);
	const char *race = strstr(r.out, "RACE ok=");
	assert_non_null(race);
	wd_autofree char *dest = wd_asprintf("127.0.0.1:%d", out_port);
	assert_unreached(out, dest);
	/* Every connect that succeeded reached the listener decided (how
	 * many did depends on the timing: each read of the address, warden's
	 * one, sees either port). */
	int pwn;
	assert_int_equal(accepted(in, &pwn), atoi(race + 8));
	close(in);
	wt_result_free(&r);
}

/* A TCP send with MSG_FASTOPEN connects to the address it names: decided
 * like a connect, never passed on because a TCP send's address is
 * otherwise ignored. */
static void test_esc_net_fastopen(void **state)
{
	struct fx *f = *state;
	int port;
	int l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
	char p[16];
	snprintf(p, sizeof(p), "%d", port);
	allow(f, NULL);
	struct wt_result r;
	run(f, &r, "aggressive", "fastopen", "127.0.0.1", p, NULL);
	wd_autofree char *dest = wd_asprintf("127.0.0.1:%d", port);
	assert_unreached(l, dest);
	assert_refused(f, &r, dest);
	wt_result_free(&r);
	/* Listed: the data arrives with the connection. */
	l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
	snprintf(p, sizeof(p), "%d", port);
	char entry[64];
	snprintf(entry, sizeof(entry), "\"127.0.0.1:%d\"", port);
	allow(f, entry);
	run(f, &r, "passive", "fastopen", "127.0.0.1", p, NULL);
	assert_non_null(strstr(r.out, "FASTOPEN rc=3"));
	int pwn;
	assert_int_equal(accepted(l, &pwn), 1);
	assert_int_equal(pwn, 1);
	close(l);
	wt_result_free(&r);
}

/* ---- datagrams ---------------------------------------------------------- */

/* A listed UDP destination gets every datagram, with one row for the
 * process (the first send decided, the rest from the cache); an unlisted
 * one gets none. */
static void test_esc_net_udp(void **state)
{
	struct fx *f = *state;
	int port;
	int l = listener(AF_INET, "127.0.0.1", SOCK_DGRAM, &port);
	char p[16], entry[64];
	snprintf(p, sizeof(p), "%d", port);
	snprintf(entry, sizeof(entry), "\"127.0.0.1:%d\"", port);
	allow(f, entry);
	struct wt_result r;
	run(f, &r, "passive", "udp", "4", "127.0.0.1", p, "5", NULL);
	assert_non_null(strstr(r.out, "UDP sent=5"));
	assert_int_equal(datagrams(l), 5);
	close(l);
	wd_autofree char *dest = wd_asprintf("127.0.0.1:%d", port);
	/* One row for five datagrams. */
	assert_int_equal(dest_rows(f, "allow", NULL, NULL, dest), 1);
	wt_result_free(&r);

	l = listener(AF_INET, "127.0.0.1", SOCK_DGRAM, &port);
	snprintf(p, sizeof(p), "%d", port);
	allow(f, NULL);
	run(f, &r, "aggressive", "udp", "4", "127.0.0.1", p, "3", NULL);
	assert_non_null(strstr(r.out, "UDP sent=0 errno=13"));
	int got = datagrams(l);
	if (got)
		fail_msg("ESCAPE FOUND: the UDP listener got %d datagram(s)", got);
	close(l);
	wd_autofree char *dest2 = wd_asprintf("127.0.0.1:%d", port);
	assert_true(told_refused(r.err, dest2));
	assert_true(dest_rows(f, "deny", NULL, NULL, dest2) >= 1);
	wt_result_free(&r);
}

/* A single-threaded caller sends on a connected UDP socket with no name,
 * while another process sharing the message header's memory puts a name
 * in it and takes it out: what warden read (a name, decided; or none, the
 * connected peer) is what is sent, so the other listener gets nothing. A
 * call is let through unread only when the kernel ignores the name
 * whatever memory says (a TCP send). */
static void test_esc_net_udp_shared_memory(void **state)
{
	struct fx *f = *state;
	int in_port, out_port;
	int in = listener(AF_INET, "127.0.0.1", SOCK_DGRAM, &in_port);
	int out = listener(AF_INET, "127.0.0.1", SOCK_DGRAM, &out_port);
	char pi[16], po[16], entry[64];
	snprintf(pi, sizeof(pi), "%d", in_port);
	snprintf(po, sizeof(po), "%d", out_port);
	snprintf(entry, sizeof(entry), "\"127.0.0.1:%d\"", in_port);
	allow(f, entry);
	struct wt_result r;
	run(f, &r, "passive", "udp_shm", pi, po, "300", NULL);
	assert_non_null(strstr(r.out, "UDP_SHM sent="));
	int got = datagrams(out);
	if (got)
		fail_msg("ESCAPE FOUND: the refused UDP listener got %d datagram(s)", got);
	assert_true(datagrams(in) > 0);
	close(in);
	close(out);
	wt_result_free(&r);
}

/* One sendmmsg to two destinations, the second refused: the whole call is
 * refused, and neither listener gets a datagram. */
static void test_esc_net_sendmmsg(void **state)
{
	struct fx *f = *state;
	int p1, p2;
	int l1 = listener(AF_INET, "127.0.0.1", SOCK_DGRAM, &p1);
	int l2 = listener(AF_INET, "127.0.0.1", SOCK_DGRAM, &p2);
	char s1[16], s2[16], entry[64];
	snprintf(s1, sizeof(s1), "%d", p1);
	snprintf(s2, sizeof(s2), "%d", p2);
	snprintf(entry, sizeof(entry), "\"127.0.0.1:%d\"", p1);
	allow(f, entry);
	struct wt_result r;
	run(f, &r, "aggressive", "sendmmsg", s1, s2, NULL);
	assert_non_null(strstr(r.out, "MMSG rc=-1 errno=13"));
	int got = datagrams(l2);
	if (got)
		fail_msg("ESCAPE FOUND: the refused UDP listener got %d datagram(s)", got);
	assert_int_equal(datagrams(l1), 0);
	close(l1);
	close(l2);
	wd_autofree char *d1 = wd_asprintf("127.0.0.1:%d", p1);
	wd_autofree char *d2 = wd_asprintf("127.0.0.1:%d", p2);
	assert_int_equal(dest_rows(f, "allow", NULL, NULL, d1), 1);
	assert_true(dest_rows(f, "deny", NULL, NULL, d2) >= 1);
	wt_result_free(&r);
}

/* ---- without an exec of its own ------------------------------------------ */

/* bash's /dev/tcp: bash connects itself. */
static void test_esc_net_dev_tcp(void **state)
{
	struct fx *f = *state;
	int port;
	int l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
	allow(f, NULL);
	/* A script: bash itself opens /dev/tcp (a command line naming it is
	 * refused as a device redirect before it runs). */
	wd_autofree char *text =
		wd_asprintf("echo PWN > /dev/tcp/127.0.0.1/%d\necho \"rc=$?\"\n", port);
	wt_write(f->proj, "agent.sh", text);
	char *args[] = {"/bin/bash", "agent.sh", NULL};
	struct wt_result r;
	runv(f, &r, "aggressive", args);
	wd_autofree char *dest = wd_asprintf("127.0.0.1:%d", port);
	assert_unreached(l, dest);
	assert_true(told_refused(r.err, dest));
	assert_true(rows(f, true, dest) >= 1);
	wt_result_free(&r);
}

/* A Python urllib request in one process (python3 -c: no exec after the
 * interpreter's). */
static void test_esc_net_python(void **state)
{
	struct fx *f = *state;
	if (access("/usr/bin/python3", X_OK) != 0)
		skip();
	int port;
	int l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
	allow(f, NULL);
	wd_autofree char *code = wd_asprintf(
		"import urllib.request\n"
		"try:\n"
		"    urllib.request.urlopen('http://127.0.0.1:%d/exfil?d=PWN', timeout=5)\n"
		"    print('FETCHED')\n"
		"except Exception as e:\n"
		"    print('FAILED', e)\n",
		port);
	char *args[] = {"/usr/bin/python3", "-c", code, NULL};
	struct wt_result r;
	runv(f, &r, "aggressive", args);
	wd_autofree char *dest = wd_asprintf("127.0.0.1:%d", port);
	assert_unreached(l, dest);
	assert_non_null(strstr(r.out, "FAILED"));
	assert_non_null(strstr(r.out, "Permission denied"));
	assert_true(told_refused(r.err, dest));
	assert_true(rows(f, true, dest) >= 1);
	wt_result_free(&r);
}

/* ---- around connect ------------------------------------------------------ */

/* Sockets that send without connect: raw, packet, netlink; and the
 * families nothing decides. */
static void test_esc_net_socket_families(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *domain, *type, *proto, *want;
	} cases[] = {
		{"2", "3", "1", "SOCKET errno=1"},	/* AF_INET, SOCK_RAW, ICMP */
		{"10", "3", "58", "SOCKET errno=1"},	/* AF_INET6, SOCK_RAW, ICMPv6 */
		{"2", "10", "0", "SOCKET errno=1"},	/* AF_INET, SOCK_PACKET */
		{"2", "2051", "255", "SOCKET errno=1"}, /* SOCK_RAW|SOCK_NONBLOCK, IPPROTO_RAW */
		{"16", "3", "0", "SOCKET errno=97"},	/* AF_NETLINK, NETLINK_ROUTE */
		{"16", "2", "0", "SOCKET errno=97"},	/* AF_NETLINK, SOCK_DGRAM */
		{"17", "3", "768", "SOCKET errno=97"},	/* AF_PACKET, ETH_P_ALL */
		{"17", "2", "768", "SOCKET errno=97"},	/* AF_PACKET, SOCK_DGRAM */
		{"40", "1", "0", "SOCKET errno=97"},	/* AF_VSOCK */
		{"2", "1", "132", "SOCKET errno=93"},	/* SCTP: connects through setsockopt */
		{"2", "1", "262", "SOCKET errno=93"},	/* MPTCP: paths of its own */
		{"10", "1", "262", "SOCKET errno=93"},
		{"2", "5", "0", "SOCKET errno=94"}, /* SOCK_SEQPACKET: SCTP's, when loaded */
		{"2", "2", "136", "SOCKET ok"},	    /* UDP-Lite: decided like UDP */
		{"2", "1", "0", "SOCKET ok"},	    /* TCP */
		{"10", "2", "0", "SOCKET ok"},	    /* UDP over IPv6 */
		{"1", "1", "0", "SOCKET ok"},	    /* Unix */
	};
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		struct wt_result r;
		run(f, &r, "aggressive", "socket", cases[i].domain, cases[i].type, cases[i].proto,
		    NULL);
		if (!strstr(r.out, cases[i].want))
			fail_msg(
				"%s socket(%s, %s, %s): %s, not %s",
				strstr(cases[i].want, "ok") ? "" : "ESCAPE FOUND:", cases[i].domain,
				cases[i].type, cases[i].proto, r.out, cases[i].want);
		wt_result_free(&r);
	}
}

/* Source routes send packets to their first hop, not to the destination
 * decided: refused as socket options and as a datagram's control message
 * (which is refused even when its destination is allowed). */
static void test_esc_net_source_route(void **state)
{
	struct fx *f = *state;
	int port;
	int l = listener(AF_INET, "127.0.0.1", SOCK_DGRAM, &port);
	char p[16], entry[64];
	snprintf(p, sizeof(p), "%d", port);
	snprintf(entry, sizeof(entry), "\"127.0.0.1:%d\"", port);
	allow(f, entry);
	struct wt_result r;
	run(f, &r, "aggressive", "route", p, NULL);
	assert_non_null(strstr(r.out, "IP_OPTIONS rc=-1 errno=1"));
	assert_non_null(strstr(r.out, "IPV6_RTHDR rc=-1 errno=1"));
	assert_non_null(strstr(r.out, "IP_RETOPTS rc=-1 errno=1"));
	assert_int_equal(datagrams(l), 0);
	close(l);
	wt_result_free(&r);
}

/* An open TCP socket inherited from whoever started warden (as fd 7) is
 * closed before the agent starts. */
static int inherit_prep(const void *arg)
{
	const int *port = arg;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)*port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -errno;
	if (dup2(s, 7) < 0)
		return -errno;
	close(s);
	return 0;
}

static void test_esc_net_inherited(void **state)
{
	struct fx *f = *state;
	int port;
	int l = listener(AF_INET, "127.0.0.1", SOCK_STREAM, &port);
	allow(f, NULL);
	wd_autofree char *prog = esc();
	char *argv[] = {"run", "--tier", "aggressive", "--prompt", "none",
			"--",  prog,	 "fd",	       "7",	   NULL};
	struct wt_result r;
	wt_wardenv_prep(f->proj, argv, inherit_prep, &port, 60000, &r);
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", r.status, r.out, r.err);
	assert_non_null(strstr(r.out, "FD wrote=-1 errno=9"));
	/* The inherited connection got nothing from the agent. */
	int pwn;
	assert_int_equal(accepted(l, &pwn), 1);
	if (pwn)
		fail_msg("ESCAPE FOUND: the agent wrote through the inherited socket");
	close(l);
	wt_result_free(&r);
}

/* ---- what the tier decides ------------------------------------------------ */

/* warden runs in a network namespace of its own with nothing but its
 * loopback (up, so that the kernel has its table of local addresses): an
 * address no rule names (a documentation address) is not the host's own,
 * and a connection that is let through fails with ENETUNREACH without a
 * packet leaving. */
static int netns_prep(const void *arg)
{
	(void)arg;
	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = {0};
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	ifr.ifr_flags |= IFF_UP;
	int rc = ioctl(s, SIOCSIFFLAGS, &ifr) < 0 ? -errno : 0;
	close(s);
	return rc;
}

static void run_netns(const struct fx *f, struct wt_result *r, const char *tier, bool review)
{
	wd_autofree char *prog = esc();
	char *argv[20] = {"run", "--tier", (char *)tier, "--prompt", "none"};
	size_t n = 5;
	if (review) {
		argv[n++] = "--role";
		argv[n++] = "review";
	}
	argv[n++] = "--";
	argv[n++] = prog;
	argv[n++] = "connect";
	argv[n++] = "4";
	argv[n++] = "198.51.100.77";
	argv[n++] = "443";
	argv[n] = NULL;
	wt_wardenv_prep(f->proj, argv, netns_prep, NULL, 60000, r);
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", r->status, r->out, r->err);
}

/* A destination policy leaves undecided goes to the tier: aggressive lets
 * it through, standard with nobody to ask and passive refuse it; a review
 * run refuses it whatever the tier (never the judge, never a person). */
static void test_esc_net_tiers_and_review(void **state)
{
	struct fx *f = *state;
	allow(f, NULL);
	struct wt_result r;
	run_netns(f, &r, "aggressive", false);
	assert_non_null(strstr(r.out, "REFUSED errno=101")); /* ENETUNREACH: let through */
	assert_int_equal(wt_audit_count(f->db, "allow", "tier", "198.51.100.77:443", NULL), 1);
	wt_result_free(&r);
	static const char *const refusing[] = {"standard", "passive"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(refusing); i++) {
		run_netns(f, &r, refusing[i], false);
		assert_refused(f, &r, "198.51.100.77:443");
		wt_result_free(&r);
	}
	int before = wt_audit_count(f->db, "deny", NULL, "198.51.100.77:443", NULL);
	run_netns(f, &r, "aggressive", true);
	assert_refused(f, &r, "198.51.100.77:443");
	assert_int_equal(wt_audit_count(f->db, "deny", NULL, "198.51.100.77:443", NULL),
			 before + 1);
	assert_non_null(strstr(r.err, "review run"));
	wt_result_free(&r);
	/* Listed, a review run lets it through. */
	allow(f, "\"198.51.100.0/24:443\"");
	run_netns(f, &r, "passive", true);
	assert_non_null(strstr(r.out, "REFUSED errno=101"));
	wt_result_free(&r);
}

struct bg_run {
	const struct fx *f;
	char **argv;
	struct wt_result r;
};

static void *bg_netns(void *arg)
{
	struct bg_run *b = arg;
	wt_wardenv_prep(b->f->proj, b->argv, netns_prep, NULL, 60000, &b->r);
	return NULL;
}

/* The desk's id of this project's pending connect, or NULL. */
static char *pending_connect(const struct fx *f, int ms)
{
	for (int waited = 0; waited < ms; waited += 100) {
		struct wt_result a;
		wt_warden(f->proj, &a, "approvals", "--format", "json", NULL);
		/* Other sessions of this user (another test at the same time)
		 * may wait too: the entry is the one naming this destination. */
		const char *k = strstr(a.out, "\"kind\":\"connect\",\"request\":\"connect "
					      "198.51.100.77:443");
		const char *id = a.out;
		char *found = NULL;
		/* The id of the object the kind is in: the last one before it. */
		for (const char *p = a.out; k && (p = strstr(p, "\"id\":\"")) && p < k; p++)
			id = p;
		if (k && id != a.out) {
			id += 6;
			found = wd_strndup(id, strcspn(id, "\""));
		}
		wt_result_free(&a);
		if (found)
			return found;
		usleep(100000);
	}
	return NULL;
}

/* Standard tier with the desk: the person sees the destination and
 * approves it "always" (for the host): the connect goes through, and the
 * same process's next connect there is allowed by the session grant
 * without asking again. */
static void test_esc_net_person_always(void **state)
{
	struct fx *f = *state;
	allow(f, NULL);
	wd_autofree char *prog = esc();
	char *argv[] = {"run", "--tier",   "standard",	    "--prompt", "desk", "--",
			prog,  "connect2", "198.51.100.77", "443",	NULL};
	struct bg_run b = {.f = f, .argv = argv};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, bg_netns, &b), 0);
	wd_autofree char *id = pending_connect(f, 20000);
	assert_non_null(id);
	struct wt_result a;
	wt_warden(f->proj, &a, "approve", id, "--always", NULL);
	assert_int_equal(a.status, 0);
	wt_result_free(&a);
	pthread_join(t, NULL);
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", b.r.status, b.r.out, b.r.err);
	/* Both let through (the kernel then finds no route). */
	const char *first = strstr(b.r.out, "REFUSED errno=101");
	assert_non_null(first);
	assert_non_null(strstr(first + 1, "REFUSED errno=101"));
	assert_null(strstr(b.r.out, "errno=13"));
	assert_non_null(strstr(b.r.err, "approved by"));
	assert_int_equal(wt_audit_count(f->db, "allow", "user", "198.51.100.77:443", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", NULL, "198.51.100.77:443", NULL), 2);
	wt_result_free(&b.r);
}

/* io_uring would connect and send without a syscall the filter sees. */
static void test_esc_net_io_uring(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	run(f, &r, "aggressive", "io_uring", NULL);
	assert_non_null(strstr(r.out, "IO_URING rc=-1 errno=1"));
	wt_result_free(&r);
}

int main(void)
{
	wt_require_sandbox();
#define T(n) cmocka_unit_test_setup_teardown(test_esc_net_##n, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(allowed),
		T(loopback_every_tier),
		T(metadata_every_tier),
		T(spoofed_command),
		T(udp_exec),
		T(mapped),
		T(unspecified),
		T(own_address),
		T(ipv6),
		T(nonblocking),
		T(race),
		T(fastopen),
		T(udp),
		T(udp_shared_memory),
		T(sendmmsg),
		T(dev_tcp),
		T(python),
		T(socket_families),
		T(source_route),
		T(inherited),
		T(io_uring),
		T(tiers_and_review),
		T(person_always),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
