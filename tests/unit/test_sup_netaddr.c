/*
 * test_sup_netaddr.c: sup_addr_local() (supervisor/netaddr.c), the
 * kernel's word on whether an address is this host's own. It runs in a
 * network namespace of its own (root), where one end of a veth pair has
 * 10.78.0.1/24 and fd78::1/64 and the other end nothing, so that what is
 * local is known exactly; without root it is skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sup.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* |text| is local, as the kernel says. */
static bool local(const char *text)
{
	uint8_t a[16] = {0};
	int family = strchr(text, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(family, text, a), 1);
	return sup_addr_local(family, a);
}

static int fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static void test_addr_local_table(void **state)
{
	(void)state;
	static const struct {
		const char *addr;
		bool local;
	} rows[] = {
		{"127.0.0.1", true},
		{"127.200.0.9", true},
		{"0.0.0.0", true},
		{"::1", true},
		{"::", true},
		{"::ffff:127.0.0.1", true},
		{"10.78.0.1", true},
		{"::ffff:10.78.0.1", true},
		{"fd78::1", true},
		{"10.78.0.2", false},
		{"::ffff:10.78.0.2", false},
		{"fd78::2", false},
		{"8.8.8.8", false},
		{"2001:db8::1", false},
		{"fe80::1234", false},
		{"224.0.0.251", true},
		{"255.255.255.255", true},
	};
	int before = fds();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (local(rows[i].addr) != rows[i].local)
			fail_msg("%s: want %s", rows[i].addr,
				 rows[i].local ? "local" : "not local");
	/* Every descriptor it opened is closed. */
	assert_int_equal(fds(), before);
	/* What it cannot ask counts as local. */
	uint8_t a[16] = {10, 78, 0, 2};
	assert_true(sup_addr_local(AF_UNIX, a));
	assert_true(sup_addr_local(AF_INET, NULL));
}

/* A link-local address is the host's on its interface only: found with
 * that interface's scope. */
static void test_addr_local_link_local(void **state)
{
	(void)state;
	FILE *p = popen("ip -6 -o addr show dev wnt0 scope link", "r");
	assert_non_null(p);
	char line[512] = "", addr[64] = "";
	if (!fgets(line, sizeof(line), p) || sscanf(line, "%*d: %*s inet6 %63[^/]", addr) != 1) {
		pclose(p);
		skip(); /* no link-local address (IPv6 off on the link) */
	}
	pclose(p);
	assert_true(local(addr));
}

static void sh(const char *cmd)
{
	if (system(cmd) != 0) {
		printf("SKIP: `%s` failed\n", cmd);
		exit(77);
	}
}

int main(void)
{
	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0) {
		printf("SKIP: needs root to make a network namespace\n");
		return 77;
	}
	sh("ip link set lo up");
	sh("ip link add wnt0 type veth peer name wnt1");
	sh("ip addr add 10.78.0.1/24 dev wnt0");
	sh("ip -6 addr add fd78::1/64 dev wnt0 nodad");
	sh("ip link set wnt0 up");
	sh("ip link set wnt1 up");
	/* The link-local address appears once the link is up and DAD is
	 * done: wait a little for it. */
	sh("for i in $(seq 50); do ip -6 -o addr show dev wnt0 scope link | grep -qv tentative "
	   "&& ip -6 -o addr show dev wnt0 scope link | grep -q . && break; sleep 0.05; done; "
	   "true");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addr_local_table),
		cmocka_unit_test(test_addr_local_link_local),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
