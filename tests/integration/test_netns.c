/*
 * The network tests' harness (tests/helpers/netns.c) on its own: the
 * remote is another host reachable through the veth pair, its listeners
 * count, its DNS server answers what it was told (in turn for a rebinding
 * name, over TCP after TC), and the /etc file bound for the test is what a
 * process of the test reads while the host's stays as it was.
 */
#include "netns.h"
#include "wt.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

static struct wt_netns ns;

static const struct wt_dns_entry dns[] = {
	{.qname = "a.test", .answer = "A a.test 10.77.0.2; AAAA a.test fd77::2"},
	{.qname = "r.test", .answer = "A r.test 10.77.0.2 | A r.test 127.0.0.1"},
	{.qname = "tc.test", .answer = "A tc.test 10.77.0.3", .tc = true},
	{.qname = "c.test",
	 .answer = "CNAME c.test a.test; A a.test 10.77.0.2",
	 .additional = "A x.test 10.77.0.9"},
};

static int tcp_to(const char *addr, int port)
{
	struct sockaddr_in s = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, addr, &s.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	int rc = connect(fd, (struct sockaddr *)&s, sizeof(s));
	if (rc == 0) {
		assert_int_equal(write(fd, "hi", 2), 2);
		char buf[8];
		assert_true(read(fd, buf, sizeof(buf)) > 0);
	}
	close(fd);
	return rc;
}

/* The addresses getaddrinfo gives for |name| (AF_INET), space-separated. */
static void lookup(const char *name, char *out, size_t cap)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	out[0] = 0;
	if (getaddrinfo(name, NULL, &hints, &res) != 0)
		return;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		char b[64];
		inet_ntop(AF_INET, &((struct sockaddr_in *)a->ai_addr)->sin_addr, b, sizeof(b));
		if (!strstr(out, b))
			snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? " " : "",
				 b);
	}
	freeaddrinfo(res);
}

static void test_netns_remote_listener_counts(void **state)
{
	(void)state;
	int l = wt_netns_listen(&ns, true, false, "10.77.0.2", 0);
	assert_int_equal(tcp_to("10.77.0.2", wt_netns_port(&ns, l)), 0);
	assert_int_equal(tcp_to("10.77.0.2", wt_netns_port(&ns, l)), 0);
	assert_int_equal(wt_netns_hits(&ns, l), 2);
	assert_memory_equal(ns.sh->l[l].data, "hihi", 4);
	/* The remote is not this host: nothing listens on 10.77.0.2 here. */
	int mine = wt_netns_listen(&ns, false, false, "10.77.0.1", 0);
	assert_int_equal(tcp_to("10.77.0.1", wt_netns_port(&ns, mine)), 0);
	assert_int_equal(wt_netns_hits(&ns, mine), 1);
	assert_int_equal(wt_netns_hits(&ns, l), 2);
}

static void test_netns_extra_addresses(void **state)
{
	(void)state;
	wt_netns_remote_addr(&ns, "10.77.0.3");
	wt_netns_remote_addr(&ns, "169.254.169.254");
	int a = wt_netns_listen(&ns, true, false, "10.77.0.3", 0);
	int m = wt_netns_listen(&ns, true, false, "169.254.169.254", 80);
	assert_int_equal(tcp_to("10.77.0.3", wt_netns_port(&ns, a)), 0);
	assert_int_equal(tcp_to("169.254.169.254", 80), 0);
	assert_int_equal(wt_netns_hits(&ns, a), 1);
	assert_int_equal(wt_netns_hits(&ns, m), 1);
}

static void test_netns_dns_answers(void **state)
{
	(void)state;
	char out[256];
	lookup("a.test", out, sizeof(out));
	assert_string_equal(out, "10.77.0.2");
	lookup("nothing.test", out, sizeof(out));
	assert_string_equal(out, "");
	/* Rebinding: the first A query gets one address, the next another. */
	lookup("r.test", out, sizeof(out));
	assert_string_equal(out, "10.77.0.2");
	lookup("r.test", out, sizeof(out));
	assert_string_equal(out, "127.0.0.1");
	/* TC over UDP: the resolver asks again over TCP. */
	int tcp_before = ns.sh->dns_tcp_queries;
	lookup("tc.test", out, sizeof(out));
	assert_string_equal(out, "10.77.0.3");
	assert_true(ns.sh->dns_tcp_queries > tcp_before);
	/* A CNAME chain: glibc follows it to the address. */
	lookup("c.test", out, sizeof(out));
	assert_string_equal(out, "10.77.0.2");
	assert_true(wt_netns_dns_hits(&ns, 0, 0) >= 1);
}

static void test_netns_etc_is_the_tests_only(void **state)
{
	(void)state;
	char *mine = wt_slurp("/etc/resolv.conf");
	assert_string_equal(mine, "nameserver 10.77.0.2\n");
	free(mine);
	/* The host's mount namespace (pid 1's) still has its own file. */
	char *host = wt_slurp("/proc/1/root/etc/resolv.conf");
	assert_null(strstr(host, "10.77.0.2"));
	free(host);
}

/* Binds 10.77.0.2: possible only where that address is the host's. */
static int bind_remote(void *arg)
{
	(void)arg;
	struct sockaddr_in s = {.sin_family = AF_INET};
	inet_pton(AF_INET, "10.77.0.2", &s.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int rc = fd >= 0 && bind(fd, (struct sockaddr *)&s, sizeof(s)) == 0 ? 0 : 1;
	close(fd);
	return rc;
}

static void test_netns_in_remote_runs_there(void **state)
{
	(void)state;
	assert_int_equal(wt_netns_in_remote(&ns, bind_remote, NULL), 0);
	assert_int_equal(bind_remote(NULL), 1);
}

int main(void)
{
	wt_netns_require(&ns);
	wt_netns_etc(&ns, "/etc/resolv.conf", "nameserver 10.77.0.2\n");
	wt_netns_dns(&ns, dns, sizeof(dns) / sizeof(dns[0]));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_netns_remote_listener_counts),
		cmocka_unit_test(test_netns_extra_addresses),
		cmocka_unit_test(test_netns_dns_answers),
		cmocka_unit_test(test_netns_etc_is_the_tests_only),
		cmocka_unit_test(test_netns_in_remote_runs_there),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	wt_netns_leave(&ns);
	return rc;
}
