/*
 * test_explain_net.c: `warden explain --connect HOST:PORT` says what a
 * tool call's connection would be decided as. The test runs in network
 * and mount namespaces of its own: one end of a veth pair carries this
 * "host's" own addresses (10.77.0.1, fd77::1), its neighbours on the same
 * networks (10.77.0.2, fd77::2) are not the host's, and a private
 * /etc/hosts (bound over the real one inside the test's own mount
 * namespace only) names them, so that names resolve without any outside
 * server.
 */
#include "common.h"
#include "wt.h"

#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmocka.h>

static char *g_proj, *g_listed, *g_hosts_dir;

/* `warden explain [--format json] --connect DEST` in |proj|. */
static void explain(const char *proj, bool json, const char *dest, struct wt_result *r)
{
	if (json)
		wt_warden(proj, r, "explain", "--format", "json", "--connect", dest, NULL);
	else
		wt_warden(proj, r, "explain", "--connect", dest, NULL);
	fprintf(stderr, "explain --connect %s: %d\n%s%s", dest, r->status, r->out, r->err);
}

static void has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("missing \"%s\" in:\n%s", want, text);
}

static void lacks(const char *text, const char *unwanted)
{
	if (strstr(text, unwanted))
		fail_msg("unexpected \"%s\" in:\n%s", unwanted, text);
}

/* Loopback is this host's own: refused by hard deny whatever the tier,
 * with the sentence that says how to list it. */
static void test_explain_connect_loopback(void **state)
{
	(void)state;
	struct wt_result r = {0};
	explain(g_proj, false, "127.0.0.1:8080", &r);
	assert_int_equal(r.status, 0);
	has(r.out, "request:  connect 127.0.0.1:8080 (no name resolved)\n");
	has(r.out, "local:    yes: the kernel routes it to this host\n");
	has(r.out, "verdict:  hard deny: no rule, judge or person can allow this\n");
	has(r.out, "source:   hard_deny\n");
	has(r.out, "reason:   127.0.0.1:8080 is this host's own service on loopback; list it in "
		   "network.allow of .warden/permissions.json to allow it\n");
	lacks(r.out, "next:");
	wt_result_free(&r);
	explain(g_proj, true, "[::1]:8080", &r);
	assert_int_equal(r.status, 0);
	has(r.out, "{\"host\":\"::1\",\"port\":8080,\"named\":false,\"addresses\":[{\"request\":"
		   "{\"syscall\":\"connect\",\"destination\":\"[::1]:8080\",\"address\":\"::1\","
		   "\"port\":8080,\"protocol\":\"tcp\",\"names\":[],\"command\":null},"
		   "\"local\":true,\"verdict\":\"hard_deny\",\"source\":\"hard_deny\"");
	wt_result_free(&r);
}

/* The kernel says which addresses are the host's: its interface's are,
 * the neighbour's are not (undecided: the judge, then the tier). */
static void test_explain_connect_own_address(void **state)
{
	(void)state;
	struct wt_result r = {0};
	static const char *const own[] = {"10.77.0.1:22", "[fd77::1]:22"};
	for (size_t i = 0; i < 2; i++) {
		explain(g_proj, false, own[i], &r);
		has(r.out, "local:    yes: the kernel routes it to this host\n");
		has(r.out, "is this host's own address, where its own services listen");
		wt_result_free(&r);
	}
	static const char *const other[] = {"10.77.0.2:22", "[fd77::2]:22"};
	for (size_t i = 0; i < 2; i++) {
		explain(g_proj, false, other[i], &r);
		has(r.out, "local:    no\n");
		has(r.out, "verdict:  undecided\n");
		has(r.out, "next:     the judge, then the tier (passive: refused)\n");
		has(r.out, "review:   refused in a review run (no judge, no person)\n");
		wt_result_free(&r);
	}
	explain(g_proj, true, "10.77.0.2:22", &r);
	has(r.out, "\"local\":false,\"verdict\":\"undecided\",\"source\":\"none\"");
	has(r.out, "\"tier\":\"passive: refused\",\"review\":\"refused\"}]}");
	wt_result_free(&r);
}

/* A name is looked up: every address is shown and decided with that name. */
static void test_explain_connect_name_all_addresses(void **state)
{
	(void)state;
	struct wt_result r = {0};
	explain(g_listed, false, "both.example.test:443", &r);
	assert_int_equal(r.status, 0);
	has(r.out, "lookup:   both.example.test resolves here to 2 addresses\n");
	has(r.out, "request:  connect both.example.test:443 (10.77.0.2)\n");
	has(r.out, "request:  connect both.example.test:443 (fd77::2)\n");
	has(r.out, "reason:   the project config's network.allow entry \"*.example.test\" matches "
		   "both.example.test\n");
	wt_result_free(&r);
	explain(g_listed, true, "both.example.test:443", &r);
	has(r.out, "\"named\":true");
	has(r.out, "\"names\":[\"both.example.test\"]");
	has(r.out, "\"address\":\"10.77.0.2\"");
	has(r.out, "\"address\":\"fd77::2\"");
	has(r.out, "\"matched\":\"network.allow[1]\"");
	wt_result_free(&r);
	/* A name of the host's own address opens nothing by that name. */
	explain(g_listed, false, "self.example.test:22", &r);
	has(r.out, "request:  connect self.example.test:22 (10.77.0.1)\n");
	has(r.out, "source:   hard_deny\n");
	wt_result_free(&r);
	/* A name that does not resolve. */
	explain(g_listed, false, "nothing.invalid:443", &r);
	assert_int_equal(r.status, 2);
	has(r.err, "nothing.invalid does not resolve here");
	wt_result_free(&r);
}

/* The project's lists: an address listed literally opens the host's own
 * service on that port only; deny beats allow; metadata stays refused
 * even under "*". */
static void test_explain_connect_listed(void **state)
{
	(void)state;
	struct wt_result r = {0};
	explain(g_listed, false, "127.0.0.1:8080", &r);
	has(r.out, "verdict:  allow\n");
	has(r.out, "source:   fast_path\n");
	has(r.out, "matched:  network.allow[0]\n");
	wt_result_free(&r);
	explain(g_listed, false, "127.0.0.1:8081", &r);
	has(r.out, "source:   hard_deny\n");
	wt_result_free(&r);
	explain(g_listed, false, "denied.example.test:443", &r);
	has(r.out, "verdict:  deny\n");
	has(r.out, "source:   rule\n");
	has(r.out, "reason:   the project config's network.deny entry \"10.77.0.3\" matches "
		   "10.77.0.3\n");
	wt_result_free(&r);
	static const char *const meta[] = {"169.254.169.254:80", "[fd00:ec2::254]:80",
					   "[64:ff9b::a9fe:a9fe]:80",
					   "metadata.google.internal:80"};
	for (size_t i = 0; i < 4; i++) {
		explain(g_listed, false, meta[i], &r);
		has(r.out, "source:   hard_deny\n");
		has(r.out, "metadata");
		wt_result_free(&r);
	}
	/* Everything else "*" allows. */
	explain(g_listed, false, "10.77.0.9:5", &r);
	has(r.out, "matched:  network.allow[2]\n");
	wt_result_free(&r);
}

static void test_explain_connect_usage(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"example.test", "example.test:", "example.test:0", "example.test:65536", "::1:80",
		"[::1]",	"[::1]80",	 ":443",	   "example.test:-1"};
	struct wt_result r = {0};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		explain(g_proj, false, bad[i], &r);
		assert_int_equal(r.status, 2);
		has(r.err, "--connect");
		wt_result_free(&r);
	}
	wt_warden(g_proj, &r, "explain", "--connect", "10.77.0.2:1", "--open", "x", NULL);
	assert_int_equal(r.status, 2);
	wt_result_free(&r);
	wt_warden(g_proj, &r, "explain", "--connect", "10.77.0.2:1", "--", "ls", NULL);
	assert_int_equal(r.status, 2);
	wt_result_free(&r);
}

/* Runs |cmd| (a fixed command line of this test), failing the test when
 * it fails. */
static void sh(const char *cmd)
{
	if (system(cmd) != 0) {
		printf("SKIP: `%s` failed\n", cmd);
		exit(77);
	}
}

/* This process's own network and mount namespaces, with the dummy
 * network and the private /etc/hosts. */
static void enter_namespaces(void)
{
	if (geteuid() != 0 || unshare(CLONE_NEWNET | CLONE_NEWNS) < 0) {
		printf("SKIP: needs root to make network and mount namespaces\n");
		exit(77);
	}
	/* Nothing mounted here reaches the host's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("mount --make-rprivate /");
		exit(1);
	}
	sh("ip link set lo up");
	/* A veth pair, both ends here: the addresses are on one end only. */
	sh("ip link add wdt0 type veth peer name wdt1");
	sh("ip addr add 10.77.0.1/24 dev wdt0");
	sh("ip -6 addr add fd77::1/64 dev wdt0 nodad");
	sh("ip link set wdt0 up");
	sh("ip link set wdt1 up");
	g_hosts_dir = wt_project();
	wt_write(g_hosts_dir, "hosts",
		 "127.0.0.1 localhost\n"
		 "10.77.0.2 both.example.test\n"
		 "fd77::2 both.example.test\n"
		 "10.77.0.1 self.example.test\n"
		 "10.77.0.3 denied.example.test\n"
		 "10.77.0.4 metadata.google.internal\n");
	char *hosts = wd_asprintf("%s/hosts", g_hosts_dir);
	if (mount(hosts, "/etc/hosts", NULL, MS_BIND, NULL) < 0) {
		perror("bind /etc/hosts");
		exit(1);
	}
	free(hosts);
}

int main(void)
{
	wt_require_sandbox();
	enter_namespaces();
	g_proj = wt_project();
	wt_write(g_proj, ".warden/permissions.json", "{\"tier\": \"passive\"}\n");
	g_listed = wt_project();
	wt_write(g_listed, ".warden/permissions.json",
		 "{\"network\": {\"allow\": [\"127.0.0.1:8080\", \"*.example.test\", \"*\"], "
		 "\"deny\": [\"10.77.0.3\"]}}\n");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explain_connect_loopback),
		cmocka_unit_test(test_explain_connect_own_address),
		cmocka_unit_test(test_explain_connect_name_all_addresses),
		cmocka_unit_test(test_explain_connect_listed),
		cmocka_unit_test(test_explain_connect_usage),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	wt_rmtree(g_proj);
	wt_rmtree(g_listed);
	free(g_proj);
	free(g_listed);
	/* /etc/hosts is bound from it: unbind before removing (the mount
	 * namespace goes with this process anyway). */
	umount2("/etc/hosts", MNT_DETACH);
	wt_rmtree(g_hosts_dir);
	free(g_hosts_dir);
	return rc;
}
