/*
 * test_esc_names: the names warden gives to the sandbox's connections,
 * under the real `warden run`, in a network namespace of the test's own
 * (tests/helpers/netns.h): a "remote" host 10.77.0.2 (and 10.77.0.3,
 * 169.254.169.254) behind a veth pair, whose DNS server is the nameserver
 * of the test's /etc/resolv.conf, so that the warden the test runs
 * forwards the sandbox's queries there.
 *
 * The session's resolver: the sandbox's /etc/resolv.conf names it, it
 * forwards and records what the sandbox resolved under the name asked,
 * refuses metadata names, and a flood of queries does not grow warden.
 *
 * Safety: no packet leaves the test's namespaces (nothing routes out of
 * them); the files over /etc are binds in the test's private mount
 * namespace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "judge_server.h"
#include "netns.h"
#include "wt.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#define PY "/usr/bin/python3"

static struct wt_netns ns;

/* The listeners: port 8080 on the remote's addresses and on the local
 * host's own (loopback, its veth address), each counting connections. */
#define PORT	 "8080"
#define PORT_NUM 8080
enum {
	L_ALLOWED, /* 10.77.0.2 */
	L_EVIL,	   /* 10.77.0.3 */
	L_LIE8,	   /* 10.77.0.8 */
	L_LIE9,	   /* 10.77.0.9 */
	L_META,	   /* 169.254.169.254 */
	L_LOOP,	   /* 127.0.0.1, local */
	L_OWN,	   /* 10.77.0.1, local */
	L_COUNT,
};
static int lst[L_COUNT];

enum {
	DNS_ALLOWED,
	DNS_EVIL,
	DNS_CNAME,
	DNS_LIAR,
	DNS_META,
	DNS_REBIND,
	DNS_SILENT,
	DNS_SIX,
	DNS_BIG,
	DNS_JUDGED,
};

static const struct wt_dns_entry dns[] = {
	[DNS_ALLOWED] = {"allowed.test", "A allowed.test 10.77.0.2", NULL, false, false},
	[DNS_EVIL] = {"evil.test", "A evil.test 10.77.0.3", NULL, false, false},
	/* A CNAME to a name the rules know: the address is the alias's. */
	[DNS_CNAME] = {"alias.test", "CNAME alias.test trusted.test; A trusted.test 10.77.0.3",
		       NULL, false, false},
	/* An answer that adds records for other names in its sections. */
	[DNS_LIAR] = {"liar.test", "A liar.test 10.77.0.3; A trusted.test 10.77.0.9",
		      "A trusted.test 10.77.0.8; A liar.test 10.77.0.7", false, false},
	[DNS_META] = {"metadata.google.internal", "A metadata.google.internal 169.254.169.254",
		      NULL, false, false},
	[DNS_REBIND] = {"rebind.test",
			"A rebind.test 10.77.0.2 | A rebind.test 127.0.0.1 | "
			"A rebind.test 169.254.169.254 | A rebind.test 10.77.0.1",
			NULL, false, false},
	[DNS_SILENT] = {"*.silent.test", NULL, NULL, false, true},
	[DNS_SIX] = {"six.test", "AAAA six.test fd77::2", NULL, false, false},
	/* Too large for UDP: the answer comes over TCP. */
	[DNS_BIG] = {"big.test", "A big.test 10.77.0.3", NULL, true, false},
	[DNS_JUDGED] = {"judged.test", "A judged.test 10.77.0.3", NULL, false, false},
};

struct fx {
	char *proj, *db;
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# names\n");
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

/* `warden run --stats --tier TIER -- /bin/sh -c SCRIPT` in the project. */
static void run_sh(struct fx *f, const char *tier, const char *script, struct wt_result *r)
{
	char *argv[] = {"run",	   "--stats", "--tier",	      (char *)tier, "--",
			"/bin/sh", "-c",      (char *)script, NULL};
	wt_wardenv_prep(f->proj, argv, NULL, NULL, 120000, r);
}

/* The agent: python3 running |body| after a prelude defining
 * conn(host, port) -> "ok" or "errN" (connect, send a byte, read the
 * answer) and look(name) -> the IPv4 addresses it resolves to. */
static const char prelude[] = "import socket, sys\n"
			      "def conn(host, port):\n"
			      "  try:\n"
			      "    s = socket.create_connection((host, port), timeout=5)\n"
			      "    s.sendall(b'x'); s.recv(16); s.close()\n"
			      "    return 'ok'\n"
			      "  except OSError as e:\n"
			      "    return 'err%d' % (e.errno or 0)\n"
			      "def look(name):\n"
			      "  try:\n"
			      "    return socket.gethostbyname(name)\n"
			      "  except OSError as e:\n"
			      "    return 'none'\n";

/* `warden run --tier TIER -- python3 -c PRELUDE+BODY` with |config| as the
 * project's permissions.json (NULL: none). */
static void run_py(struct fx *f, const char *tier, const char *config, const char *body,
		   struct wt_result *r)
{
	if (config)
		wt_write(f->proj, ".warden/permissions.json", config);
	char *code = wd_asprintf("%s%s", prelude, body);
	/* No person to ask: a standard run refuses what the judge leaves. */
	char *argv[] = {"run", "--stats", "--prompt", "none", "--tier", (char *)tier,
			"--",  PY,	  "-c",	      code,   NULL};
	wt_wardenv_prep(f->proj, argv, NULL, NULL, 120000, r);
	print_message("%s%s", r->out, r->err);
	free(code);
}

static int rows(struct fx *f, const char *decision, const char *source, const char *summary,
		const char *request)
{
	struct wt_audit_q q = {.decision = decision,
			       .source = source,
			       .summary_sub = summary,
			       .request_sub = request};
	return wt_audit_match(f->db, &q);
}

/* ---- the session's resolver ---------------------------------------------- */

static void test_names_resolver_answers_and_records(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	int before = wt_netns_dns_hits(&ns, DNS_ALLOWED, 0);
	run_sh(f, "aggressive",
	       "cat /etc/resolv.conf; getent ahostsv4 allowed.test; " PY " -c 'import sys\n"
	       "try:\n"
	       "  open(\"/etc/resolv.conf\", \"w\").write(\"nameserver 10.77.0.9\\n\")\n"
	       "  print(\"write=0\")\n"
	       "except OSError as e:\n"
	       "  print(\"write=\", e.errno)\n'",
	       &r);
	print_message("%s%s", r.out, r.err);
	assert_int_equal(r.status, 0);
	/* The sandbox's resolv.conf names the session's resolver on
	 * loopback, with the host's search and options lines. */
	assert_non_null(strstr(r.out, "nameserver 127."));
	assert_null(strstr(r.out, "nameserver 10.77.0.2"));
	assert_non_null(strstr(r.out, "search corp.test"));
	assert_non_null(strstr(r.out, "options ndots:1"));
	/* Read-only for the agent; the test's own file is untouched. */
	assert_null(strstr(r.out, "write=0"));
	char *mine = wt_slurp("/etc/resolv.conf");
	assert_string_equal(mine, "nameserver 10.77.0.2\nsearch corp.test\noptions ndots:1\n");
	free(mine);
	/* The answer came from the host's nameserver, through warden. */
	assert_non_null(strstr(r.out, "10.77.0.2"));
	assert_true(wt_netns_dns_hits(&ns, DNS_ALLOWED, 0) > before);
	assert_non_null(strstr(r.err, "names: "));
	assert_non_null(strstr(r.err, "resolver: "));
	assert_null(strstr(r.err, " 0 addresses recorded"));
	wt_result_free(&r);
}

static void test_names_resolver_tcp_and_aaaa(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	int tcp_before = ns.sh->dns_tcp_queries;
	run_sh(f, "aggressive", "getent ahostsv4 big.test; getent ahostsv6 six.test", &r);
	print_message("%s%s", r.out, r.err);
	assert_int_equal(r.status, 0);
	/* TC over UDP: the client asks again over TCP, and so does warden. */
	assert_non_null(strstr(r.out, "10.77.0.3"));
	assert_true(ns.sh->dns_tcp_queries > tcp_before);
	assert_non_null(strstr(r.out, "fd77::2"));
	/* All of it through the session's resolver: no query went to the
	 * nameserver from the sandbox (it would be a decided datagram). */
	assert_int_equal(rows(f, NULL, NULL, NULL, "\"port\":53"), 0);
	assert_non_null(strstr(r.err, "resolver: "));
	wt_result_free(&r);
}

static void test_names_metadata_name_refused(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	int before = wt_netns_dns_hits(&ns, DNS_META, 0) + wt_netns_dns_hits(&ns, DNS_META, 1);
	run_sh(f, "aggressive",
	       "getent hosts metadata.google.internal; echo getent=$?; " PY " -c 'import socket\n"
	       "for n in (\"METADATA.Google.Internal.\", \"metadata.google.internal\"):\n"
	       "  try:\n"
	       "    print(\"got\", socket.getaddrinfo(n, 80))\n"
	       "  except socket.gaierror as e:\n"
	       "    print(\"refused\", e.errno)\n'",
	       &r);
	print_message("%s%s", r.out, r.err);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "getent=2"));
	assert_null(strstr(r.out, "got"));
	assert_null(strstr(r.out, "169.254.169.254"));
	/* Never forwarded: the nameserver that would answer saw nothing. */
	assert_int_equal(wt_netns_dns_hits(&ns, DNS_META, 0) + wt_netns_dns_hits(&ns, DNS_META, 1),
			 before);
	assert_non_null(strstr(r.err, "refused"));
	wt_result_free(&r);
}

/* ---- where the sandbox's resolv.conf is --------------------------------- */

/* In warden's process: /etc as an overlay of the host's (in a mount
 * namespace of its own: the host's /etc is untouched) whose resolv.conf is
 * a symlink to |arg|. */
struct etc_link {
	const char *dir; /* upper/ and work/ are made here */
	const char *target;
};

static int etc_with_link(const void *arg)
{
	const struct etc_link *e = arg;
	char upper[512], work[512], opts[1200];
	snprintf(upper, sizeof(upper), "%s/upper", e->dir);
	snprintf(work, sizeof(work), "%s/work", e->dir);
	snprintf(opts, sizeof(opts), "lowerdir=/etc,upperdir=%s,workdir=%s", upper, work);
	if ((mkdir(upper, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(work, 0755) < 0 && errno != EEXIST))
		return -errno;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	if (mount("overlay", "/etc", "overlay", 0, opts) < 0)
		return -errno;
	if (unlink("/etc/resolv.conf") < 0 || symlink(e->target, "/etc/resolv.conf") < 0)
		return -errno;
	return 0;
}

static void run_linked(struct fx *f, const char *target, const char *script, struct wt_result *r)
{
	char tmpl[] = "/tmp/warden-names-etc-XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	struct etc_link e = {tmpl, target};
	char *argv[] = {"run",	   "--stats", "--tier",	      "aggressive", "--",
			"/bin/sh", "-c",      (char *)script, NULL};
	wt_wardenv_prep(f->proj, argv, etc_with_link, &e, 120000, r);
	print_message("%s%s", r->out, r->err);
	wt_rmtree(tmpl);
}

/* /etc/resolv.conf a symlink (as systemd-resolved makes it, to a file
 * under /run): the session's file is bound over what it leads to, in the
 * sandbox only. */
static void test_names_resolv_conf_symlink_followed(void **state)
{
	struct fx *f = *state;
	char *dir = wt_outside_dir("names");
	wt_write(dir, "linked-resolv.conf", "nameserver 10.77.0.2\n");
	char *target = wd_asprintf("%s/linked-resolv.conf", dir);
	struct wt_result r;
	char *script =
		wd_asprintf("cat /etc/resolv.conf; cat %s; getent hosts allowed.test", target);
	run_linked(f, target, script, &r);
	assert_int_equal(r.status, 0);
	/* Both names of the file show the session's resolver... */
	char *first = strstr(r.out, "nameserver 127.");
	assert_non_null(first);
	assert_non_null(strstr(first + 1, "nameserver 127."));
	assert_non_null(strstr(r.out, "10.77.0.2       allowed.test"));
	assert_non_null(strstr(r.err, "resolver: "));
	/* ...and the host's file is as it was. */
	char *host = wt_slurp(target);
	assert_string_equal(host, "nameserver 10.77.0.2\n");
	free(host);
	free(script);
	wt_result_free(&r);
	/* A symlink to nothing: no file to bind over. The run goes on
	 * without the resolver and says why. */
	char *missing = wd_asprintf("%s/missing.conf", dir);
	run_linked(f, missing, "echo ran", &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "ran"));
	assert_non_null(strstr(r.err, "no session resolver (/etc/resolv.conf is not a file"));
	wt_result_free(&r);
	/* A symlink into /tmp, which is the session's own in the sandbox. */
	char *in_tmp = wd_asprintf("%s/README.md", f->proj);
	run_linked(f, in_tmp, "echo ran", &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "no session resolver (/etc/resolv.conf leads to"));
	assert_non_null(strstr(r.err, "inside the sandbox's private /tmp"));
	wt_result_free(&r);
	free(in_tmp);
	free(missing);
	free(target);
	wt_rmtree(dir);
	free(dir);
}

/* /etc/hosts is the host's (root's: the agent cannot write it): its
 * names are the session's from the start, so "localhost" names loopback
 * in the audit. */
static void test_names_etc_hosts(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	run_py(f, "aggressive", "{\"network\": {\"allow\": [\"localhost\"]}}\n",
	       "print('local', conn('localhost', " PORT "))\n"
	       "try:\n"
	       "  open('/etc/hosts', 'a').write('10.77.0.3 allowed.test\\n')\n"
	       "  print('hosts written')\n"
	       "except OSError as e:\n"
	       "  print('hosts', e.errno)\n",
	       &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "local ok"));
	assert_null(strstr(r.out, "hosts written"));
	/* (glibc's getaddrinfo also sends to each address it sorts: rows
	 * "send udp localhost:8080".) */
	assert_int_equal(
		rows(f, "allow", "fast_path", "=connect localhost:" PORT " (127.0.0.1)", NULL), 1);
	wt_result_free(&r);
}

/* Not root: port 53 cannot be bound; warden doctor says what that means. */
static int become_nobody(const void *arg)
{
	(void)arg;
	if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
	    setresuid(65534, 65534, 65534) < 0)
		return -errno;
	return 0;
}

static void test_names_doctor_says_without_root(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	char *argv[] = {"doctor", NULL};
	wt_wardenv_prep(f->proj, argv, NULL, NULL, 60000, &r);
	print_message("%s", r.out);
	assert_non_null(strstr(r.out, "ok    session resolver"));
	wt_result_free(&r);
	chmod(f->proj, 0755);
	wt_wardenv_prep(f->proj, argv, become_nobody, NULL, 60000, &r);
	print_message("%s", r.out);
	assert_non_null(strstr(r.out, "warn  session resolver"));
	assert_non_null(strstr(r.out, "needs root"));
	wt_result_free(&r);
}

/* Without root warden runs the sandbox in a user namespace and cannot
 * bind port 53: no resolver, the sandbox keeps the host's resolv.conf,
 * and --stats says so. */
static int nobody_home(const void *arg)
{
	setenv("HOME", (const char *)arg, 1);
	return become_nobody(NULL);
}

static void test_names_userns_run_has_no_resolver(void **state)
{
	struct fx *f = *state;
	char *saved = wd_strdup(wt_bin());
	char *dir = wt_userns_warden("names");
	assert_int_equal(chown(f->proj, 65534, 65534), 0);
	char *home_before = getenv("HOME") ? wd_strdup(getenv("HOME")) : NULL;
	char *home = wt_home("names");
	assert_int_equal(chown(home, 65534, 65534), 0);
	char *argv[] = {"run",	   "--no-view",	 "--stats",
			"--tier",  "aggressive", "--",
			"/bin/sh", "-c",	 "cat /etc/resolv.conf",
			NULL};
	struct wt_result r;
	wt_wardenv_prep(f->proj, argv, nobody_home, home, 120000, &r);
	print_message("%s%s", r.out, r.err);
	setenv("WARDEN_BIN", saved, 1);
	if (home_before)
		setenv("HOME", home_before, 1);
	free(home_before);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "nameserver 10.77.0.2"));
	assert_null(strstr(r.out, "nameserver 127."));
	assert_non_null(strstr(r.err, "no session resolver (port 53 of 127.0.0.0/8 could not be "
				      "bound (Permission denied): it needs root"));
	wt_result_free(&r);
	wt_rmtree(home);
	wt_rmtree(dir);
	free(home);
	free(dir);
	free(saved);
}

/* ---- names in the decisions --------------------------------------------- */

/* A process that asks a nameserver itself, past the sandbox's resolv.conf:
 * its query is a datagram like any other (decided, in the audit), and the
 * address it learns stays unnamed for warden; in the passive tier both
 * are refused. */
static void test_names_bypass_gets_unnamed(void **state)
{
	struct fx *f = *state;
	static const char body[] =
		"import struct\n"
		"def ask(server, name):\n"
		"  q = struct.pack('>HHHHHH', 0x4242, 0x100, 1, 0, 0, 0)\n"
		"  q += b''.join(bytes([len(p)]) + p.encode() for p in name.split('.')) + b'\\0'\n"
		"  q += struct.pack('>HH', 1, 1)\n"
		"  s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
		"  s.settimeout(3)\n"
		"  try:\n"
		"    s.sendto(q, (server, 53))\n"
		"    a = s.recv(512)\n"
		"  except OSError as e:\n"
		"    return 'err%d' % (e.errno or 0)\n"
		"  return socket.inet_ntoa(a[-4:])\n"
		"a = ask('10.77.0.2', 'allowed.test')\n"
		"print('asked', a)\n"
		"if a[0].isdigit(): print('conn', conn(a, " PORT "))\n";
	struct wt_result r;
	int hits = wt_netns_hits(&ns, lst[L_ALLOWED]);
	run_py(f, "aggressive", "{}\n", body, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "asked 10.77.0.2"));
	assert_non_null(strstr(r.out, "conn ok"));
	assert_int_equal(wt_netns_hits(&ns, lst[L_ALLOWED]), hits + 1);
	assert_int_equal(rows(f, "allow", "tier", "send udp 10.77.0.2:53 (no name resolved)", NULL),
			 1);
	assert_int_equal(rows(f, "allow", "tier", "=connect 10.77.0.2:" PORT " (no name resolved)",
			      "\"names\":[]"),
			 1);
	wt_result_free(&r);
	run_py(f, "passive", NULL, body, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "asked err13"));
	assert_int_equal(rows(f, "deny", "tier", "send udp 10.77.0.2:53 (no name resolved)", NULL),
			 1);
	wt_result_free(&r);
}

/* A name the sandbox resolved is the destination's name in the audit, and
 * an allow entry by name lets the connection through. */
static void test_names_resolved_name_in_the_audit(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	int hits = wt_netns_hits(&ns, lst[L_ALLOWED]);
	run_py(f, "passive", "{\"network\": {\"allow\": [\"allowed.test\"]}}\n",
	       "print('c1', conn('allowed.test', " PORT "))\n"
	       "print('c2', conn(look('allowed.test'), " PORT "))\n",
	       &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "c1 ok"));
	assert_non_null(strstr(r.out, "c2 ok"));
	assert_int_equal(wt_netns_hits(&ns, lst[L_ALLOWED]), hits + 2);
	assert_int_equal(rows(f, "allow", "fast_path", "allowed.test:" PORT " (10.77.0.2)",
			      "\"names\":[\"allowed.test\"]"),
			 2);
	wt_result_free(&r);
}

/* The same name with curl and getent in a shell (execs decided by the
 * tier): the name the resolver recorded is the row's. */
static void test_names_resolved_by_curl(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"network\": {\"allow\": [\"allowed.test:" PORT "\"]}}\n");
	run_sh(f, "aggressive",
	       "getent hosts allowed.test; curl -s --http0.9 -m 5 http://allowed.test:" PORT "/ ; "
	       "echo curl=$?",
	       &r);
	print_message("%s%s", r.out, r.err);
	assert_non_null(strstr(r.out, "curl=0"));
	assert_int_equal(rows(f, "allow", "fast_path", "allowed.test:" PORT " (10.77.0.2)", NULL),
			 1);
	wt_result_free(&r);
}

/* A deny entry by name refuses the connection, by its name and, once the
 * name was resolved, by its address: the agent cannot dodge the rule by
 * connecting to the address it learned. */
static void test_names_deny_by_name_and_by_its_address(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	int hits = wt_netns_hits(&ns, lst[L_EVIL]);
	int queries = wt_netns_dns_hits(&ns, DNS_EVIL, 0) + wt_netns_dns_hits(&ns, DNS_EVIL, 1);
	/* A name a deny entry matches is not even looked up (the session's
	 * resolver refuses it, and its DNS server never sees it), so the
	 * connection by name fails before it is made. By its address,
	 * named by nothing the session resolved, the address is undecided
	 * (test_esc_lookup has the address named by a denied name). */
	run_py(f, "aggressive", "{\"network\": {\"deny\": [\"evil.test\"]}}\n",
	       "print('byname', conn('evil.test', " PORT "))\n"
	       "a = look('evil.test')\n"
	       "print('addr', a)\n",
	       &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "addr none"));
	assert_null(strstr(r.out, "byname ok"));
	assert_int_equal(wt_netns_hits(&ns, lst[L_EVIL]), hits);
	assert_int_equal(wt_netns_dns_hits(&ns, DNS_EVIL, 0) + wt_netns_dns_hits(&ns, DNS_EVIL, 1),
			 queries);
	assert_int_equal(rows(f, "deny", "rule", "lookup evil.test", "\"name\":\"evil.test\""), 1);
	wt_result_free(&r);
}

/* Never resolved in the session: the address has no name, the
 * connection is undecided and the passive tier refuses it; the row says
 * no name was resolved. */
static void test_names_unresolved_address_is_unnamed(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	int hits = wt_netns_hits(&ns, lst[L_EVIL]);
	run_py(f, "passive", "{\"network\": {\"deny\": [\"evil.test\"]}}\n",
	       "print('byaddr', conn('10.77.0.3', " PORT "))\n", &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "byaddr err13"));
	assert_int_equal(wt_netns_hits(&ns, lst[L_EVIL]), hits);
	assert_int_equal(
		rows(f, "deny", "tier", "10.77.0.3:" PORT " (no name resolved)", "\"names\":[]"),
		1);
	wt_result_free(&r);
}

/* The addresses are recorded under the name asked, and only those the
 * answer gives for it (the addresses its client uses): not those of
 * another record of the answer section, nor of the additional section,
 * whatever names they carry. An allow entry for the name asked or for
 * the other name does not reach them. A CNAME's target gives its address
 * to the name asked, never its own name. */
static void test_names_only_the_queried_name(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	int h8 = wt_netns_hits(&ns, lst[L_LIE8]), h9 = wt_netns_hits(&ns, lst[L_LIE9]);
	int h3 = wt_netns_hits(&ns, lst[L_EVIL]);
	run_py(f, "passive",
	       "{\"network\": {\"allow\": [\"trusted.test\", \"alias.test\", "
	       "\"liar.test\"]}}\n",
	       "print('liar', look('liar.test'))\n"
	       "print('c8', conn('10.77.0.8', " PORT "))\n"
	       "print('c9', conn('10.77.0.9', " PORT "))\n"
	       "print('alias', conn('alias.test', " PORT "))\n",
	       &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "liar 10.77.0.3"));
	/* 10.77.0.8 and .9 were "trusted.test" in the liar's answer. */
	assert_non_null(strstr(r.out, "c8 err13"));
	assert_non_null(strstr(r.out, "c9 err13"));
	assert_int_equal(wt_netns_hits(&ns, lst[L_LIE8]), h8);
	assert_int_equal(wt_netns_hits(&ns, lst[L_LIE9]), h9);
	assert_int_equal(rows(f, "deny", "tier", "10.77.0.8:" PORT " (no name resolved)", NULL), 1);
	assert_int_equal(rows(f, "deny", "tier", "10.77.0.9:" PORT " (no name resolved)", NULL), 1);
	/* alias.test CNAME trusted.test: the address is alias.test's. */
	assert_non_null(strstr(r.out, "alias ok"));
	assert_int_equal(wt_netns_hits(&ns, lst[L_EVIL]), h3 + 1);
	assert_int_equal(rows(f, "allow", "fast_path", "alias.test:" PORT " (10.77.0.3)",
			      "\"names\":[\"alias.test\",\"liar.test\"]"),
			 1);
	assert_int_equal(rows(f, NULL, NULL, NULL, "trusted.test\""), 0);
	wt_result_free(&r);
}

/* DNS rebinding: an allowed name answers a remote address, then loopback,
 * the metadata address and the host's own address. The name is allowed;
 * each address is decided as what it is, whatever its name. */
static void test_names_rebinding_refused_by_address(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	int remote = wt_netns_hits(&ns, lst[L_ALLOWED]), loop = wt_netns_hits(&ns, lst[L_LOOP]);
	int meta = wt_netns_hits(&ns, lst[L_META]), own = wt_netns_hits(&ns, lst[L_OWN]);
	run_py(f, "aggressive", "{\"network\": {\"allow\": [\"rebind.test\"]}}\n",
	       "for i in range(4):\n"
	       "  a = look('rebind.test')\n"
	       "  print('step', i, a, conn(a, " PORT "))\n",
	       &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "step 0 10.77.0.2 ok"));
	assert_non_null(strstr(r.out, "step 1 127.0.0.1 err13"));
	assert_non_null(strstr(r.out, "step 2 169.254.169.254 err13"));
	assert_non_null(strstr(r.out, "step 3 10.77.0.1 err13"));
	assert_int_equal(wt_netns_hits(&ns, lst[L_ALLOWED]), remote + 1);
	assert_int_equal(wt_netns_hits(&ns, lst[L_LOOP]), loop);
	assert_int_equal(wt_netns_hits(&ns, lst[L_META]), meta);
	assert_int_equal(wt_netns_hits(&ns, lst[L_OWN]), own);
	assert_int_equal(rows(f, "deny", "hard_deny", "rebind.test:" PORT, NULL), 3);
	wt_result_free(&r);
}

/* A host only the judge allows: it sees the destination by its name, with
 * the command line; its allow lets the connection through, its deny
 * refuses it. */
static void test_names_judge_sees_the_name(void **state)
{
	struct fx *f = *state;
	struct js_server *js = js_start();
	assert_non_null(js);
	char *url = js_url(js, "/v1/chat/completions");
	setenv("WARDEN_JUDGE_URL", url, 1);
	setenv("WARDEN_JUDGE_MODEL", "test-model", 1);
	setenv("WARDEN_JUDGE_API_KEY", "test-key", 1);
	free(url);
	struct js_reply allow = {
		.content = "{\"decision\":\"allow\",\"risk_level\":\"low\",\"reason\":\"ok\"}"};
	struct js_reply deny = {
		.content = "{\"decision\":\"deny\",\"risk_level\":\"high\",\"reason\":\"no\"}"};
	int hits = wt_netns_hits(&ns, lst[L_EVIL]);
	js_push(js, &allow);
	js_push(js, &deny);
	js_push(js, &deny);
	struct wt_result r;
	/* Standard, not passive: in passive a name no entry allows is not
	 * looked up at all (test_esc_lookup), so nothing would reach the
	 * judge; with no person to ask, the judge is what decides here. */
	run_py(f, "standard", NULL,
	       "print('first', conn('judged.test', " PORT "))\n"
	       "print('second', conn('judged.test', 8081))\n",
	       &r);
	unsetenv("WARDEN_JUDGE_URL");
	unsetenv("WARDEN_JUDGE_MODEL");
	unsetenv("WARDEN_JUDGE_API_KEY");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "first ok"));
	assert_non_null(strstr(r.out, "second err13"));
	assert_int_equal(wt_netns_hits(&ns, lst[L_EVIL]), hits + 1);
	bool named = false;
	for (size_t i = 0; i < js_count(js); i++) {
		char *body = NULL;
		js_request(js, i, &body, NULL, NULL);
		named |= body && strstr(body, "judged.test:" PORT) != NULL;
		free(body);
	}
	assert_true(named);
	assert_int_equal(rows(f, "allow", "judge", "judged.test:" PORT " (10.77.0.3)", NULL), 1);
	js_stop(js);
	wt_result_free(&r);
}

/* A nameserver that never answers: after its tries warden answers
 * SERVFAIL, to the client's own id (the id sent upstream never comes
 * back to the sandbox). */
static void test_names_silent_server_servfail(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	run_py(f, "aggressive", NULL,
	       "import struct, time\n"
	       "ns = [l.split()[1] for l in open('/etc/resolv.conf') if "
	       "l.startswith('nameserver')][0]\n"
	       "q = struct.pack('>HHHHHH', 0x4242, 0x100, 1, 0, 0, 0)\n"
	       "q += b'\\x01x\\x06silent\\x04test\\x00' + struct.pack('>HH', 1, 1)\n"
	       "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
	       "s.settimeout(15)\n"
	       "t = time.time()\n"
	       "s.sendto(q, (ns, 53))\n"
	       "a = s.recv(512)\n"
	       "print('answer id=%x rcode=%d after=%d' % (struct.unpack('>H', a[:2])[0], "
	       "a[3] & 15, time.time() - t))\n",
	       &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "answer id=4242 rcode=2"));
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

/* 20,000 queries as fast as a script sends them, to a nameserver that
 * never answers: warden holds at most its bound of queries in flight and
 * answers the rest SERVFAIL at once; its descriptors and memory stay
 * where they were, and it resolves again once the flood is over. */
static void test_names_query_flood_bounded(void **state)
{
	struct fx *f = *state;
	const char *script =
		PY " -c 'import socket, struct, os, time\n"
		   "ns = [l.split()[1] for l in open(\"/etc/resolv.conf\") if "
		   "l.startswith(\"nameserver\")][0]\n"
		   "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
		   "s.setblocking(False)\n"
		   "print(\"ready\", flush=True)\n"
		   "time.sleep(1)\n"
		   "fails = 0\n"
		   "for i in range(20000):\n"
		   "  name = b\"\".join(bytes([len(p)]) + p for p in (b\"q%d\" % i, b\"silent\", "
		   "b\"test\")) + b\"\\0\"\n"
		   "  q = struct.pack(\">HHHHHH\", i & 0xffff, 0x100, 1, 0, 0, 0) + name + "
		   "struct.pack(\">HH\", 1, 1)\n"
		   "  try:\n"
		   "    s.sendto(q, (ns, 53))\n"
		   "  except BlockingIOError:\n"
		   "    time.sleep(0.001)\n"
		   "  try:\n"
		   "    while True:\n"
		   "      a = s.recv(4096)\n"
		   "      fails += (a[3] & 15) == 2\n"
		   "  except BlockingIOError:\n"
		   "    pass\n"
		   "time.sleep(1)\n"
		   "try:\n"
		   "  while True:\n"
		   "    a = s.recv(4096)\n"
		   "    fails += (a[3] & 15) == 2\n"
		   "except BlockingIOError:\n"
		   "  pass\n"
		   "print(\"flood-done servfail=%d\" % fails, flush=True)\n"
		   "time.sleep(7)\n"
		   "print(\"after\", socket.gethostbyname(\"allowed.test\"), flush=True)\n'";
	char *argv[] = {"run",	   "--stats", "--tier",	      "aggressive", "--",
			"/bin/sh", "-c",      (char *)script, NULL};
	struct wt_bg bg;
	wt_warden_bg(f->proj, argv, &bg);
	int fds0 = -1, fds_max = 0;
	long rss0 = -1, rss_max = 0;
	char *out = NULL;
	for (int i = 0; i < 300; i++) {
		free(out);
		out = wt_bg_out(&bg);
		if (strstr(out, "after "))
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
	wt_bg_wait(&bg, 30000, &r);
	print_message("%s%s", r.out, r.err);
	print_message("warden: fds %d -> max %d, VmRSS %ld kB -> max %ld kB\n", fds0, fds_max, rss0,
		      rss_max);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "flood-done servfail="));
	assert_null(strstr(r.out, "flood-done servfail=0\n"));
	assert_non_null(strstr(r.out, "after 10.77.0.2"));
	assert_true(fds0 > 0);
	/* At most the queries in flight (64) and TCP clients (16) more. */
	assert_true(fds_max <= fds0 + 64 + 16 + 8);
	assert_true(rss_max - rss0 < 32 * 1024);
	free(out);
	wt_result_free(&r);
}

int main(void)
{
	wt_require_sandbox();
	wt_netns_require(&ns);
	wt_netns_remote_addr(&ns, "10.77.0.3");
	wt_netns_remote_addr(&ns, "169.254.169.254");
	wt_netns_etc(&ns, "/etc/resolv.conf",
		     "nameserver 10.77.0.2\nsearch corp.test\noptions ndots:1\n");
	wt_netns_dns(&ns, dns, sizeof(dns) / sizeof(dns[0]));
	wt_netns_remote_addr(&ns, "10.77.0.8");
	wt_netns_remote_addr(&ns, "10.77.0.9");
	lst[L_ALLOWED] = wt_netns_listen(&ns, true, false, "10.77.0.2", PORT_NUM);
	lst[L_EVIL] = wt_netns_listen(&ns, true, false, "10.77.0.3", PORT_NUM);
	lst[L_LIE8] = wt_netns_listen(&ns, true, false, "10.77.0.8", PORT_NUM);
	lst[L_LIE9] = wt_netns_listen(&ns, true, false, "10.77.0.9", PORT_NUM);
	lst[L_META] = wt_netns_listen(&ns, true, false, "169.254.169.254", PORT_NUM);
	lst[L_LOOP] = wt_netns_listen(&ns, false, false, "127.0.0.1", PORT_NUM);
	lst[L_OWN] = wt_netns_listen(&ns, false, false, "10.77.0.1", PORT_NUM);
	const struct CMUnitTest tests[] = {
#define T(n) cmocka_unit_test_setup_teardown(test_names_##n, setup, teardown)
		T(resolver_answers_and_records),
		T(resolver_tcp_and_aaaa),
		T(metadata_name_refused),
		T(resolved_name_in_the_audit),
		T(resolved_by_curl),
		T(deny_by_name_and_by_its_address),
		T(unresolved_address_is_unnamed),
		T(only_the_queried_name),
		T(rebinding_refused_by_address),
		T(judge_sees_the_name),
		T(bypass_gets_unnamed),
		T(silent_server_servfail),
		T(query_flood_bounded),
		T(resolv_conf_symlink_followed),
		T(etc_hosts),
		T(doctor_says_without_root),
		T(userns_run_has_no_resolver),
#undef T
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	wt_netns_leave(&ns);
	return rc;
}
