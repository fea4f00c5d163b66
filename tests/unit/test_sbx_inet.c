/*
 * test_sbx_inet.c: the socket decoder's reading of an IP destination
 * (sandbox/sock.c, sbx_sock_inet_dest) as the kernel's inet code reads the
 * same bytes: IPv4-mapped IPv6 as IPv4, udp_sendmsg's AF_UNSPEC, an IPv6
 * datagram socket's IPv4 address, the lengths and families the kernel
 * refuses, and the addresses a TCP send ignores.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "sandbox.h"

static struct sockaddr_in in4(const char *a, int port)
{
	struct sockaddr_in s = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	assert_int_equal(inet_pton(AF_INET, a, &s.sin_addr), 1);
	return s;
}

static struct sockaddr_in6 in6(const char *a, int port)
{
	struct sockaddr_in6 s = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	assert_int_equal(inet_pton(AF_INET6, a, &s.sin6_addr), 1);
	return s;
}

static void assert_v4(const struct sbx_inet *d, const char *a, int port)
{
	char buf[INET_ADDRSTRLEN];
	assert_int_equal(d->family, AF_INET);
	assert_non_null(inet_ntop(AF_INET, d->addr, buf, sizeof(buf)));
	assert_string_equal(buf, a);
	assert_int_equal(d->port, port);
}

static void test_ipv4(void **state)
{
	(void)state;
	struct sbx_inet d;
	struct sockaddr_in s = in4("140.82.112.3", 443);
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET, SOCK_STREAM, SBX_INET_CONNECT, &s, sizeof(s), &d), 1);
	assert_v4(&d, "140.82.112.3", 443);
	assert_int_equal(sbx_sock_inet_dest(AF_INET, SOCK_DGRAM, SBX_INET_SEND, &s, sizeof(s), &d),
			 1);
	assert_v4(&d, "140.82.112.3", 443);
	/* Too short, or another family: the kernel's errors. */
	assert_int_equal(sbx_sock_inet_dest(AF_INET, SOCK_STREAM, SBX_INET_CONNECT, &s, 15, &d),
			 EINVAL);
	assert_int_equal(sbx_sock_inet_dest(AF_INET, SOCK_STREAM, SBX_INET_CONNECT, &s, 1, &d),
			 EINVAL);
	struct sockaddr_in6 s6 = in6("::1", 80);
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET, SOCK_STREAM, SBX_INET_CONNECT, &s6, sizeof(s6), &d),
		EAFNOSUPPORT);
}

/* connect(AF_UNSPEC) dissolves; udp_sendmsg() sends to sin_addr under
 * AF_UNSPEC: that is a destination, decided like any other. */
static void test_unspec(void **state)
{
	(void)state;
	struct sbx_inet d;
	struct sockaddr_in s = in4("169.254.169.254", 80);
	s.sin_family = AF_UNSPEC;
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET, SOCK_DGRAM, SBX_INET_CONNECT, &s, sizeof(s), &d), 0);
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET, SOCK_STREAM, SBX_INET_CONNECT, &s, sizeof(s), &d), 0);
	assert_int_equal(sbx_sock_inet_dest(AF_INET, SOCK_DGRAM, SBX_INET_SEND, &s, sizeof(s), &d),
			 1);
	assert_v4(&d, "169.254.169.254", 80);
	/* udpv6_sendmsg: AF_UNSPEC is the connected peer. */
	struct sockaddr_in6 s6 = in6("::1", 80);
	s6.sin6_family = AF_UNSPEC;
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET6, SOCK_DGRAM, SBX_INET_SEND, &s6, sizeof(s6), &d), 0);
}

/* ::ffff:a.b.c.d goes out as IPv4: decided as the IPv4 address. */
static void test_mapped(void **state)
{
	(void)state;
	struct sbx_inet d;
	struct sockaddr_in6 s = in6("::ffff:169.254.169.254", 80);
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET6, SOCK_STREAM, SBX_INET_CONNECT, &s, sizeof(s), &d), 1);
	assert_v4(&d, "169.254.169.254", 80);
	s = in6("::ffff:127.0.0.1", 8080);
	assert_int_equal(sbx_sock_inet_dest(AF_INET6, SOCK_DGRAM, SBX_INET_SEND, &s, sizeof(s), &d),
			 1);
	assert_v4(&d, "127.0.0.1", 8080);
	/* Not mapped: ::127.0.0.1 (compatible, deprecated) stays IPv6. */
	s = in6("::127.0.0.1", 80);
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET6, SOCK_STREAM, SBX_INET_CONNECT, &s, sizeof(s), &d), 1);
	assert_int_equal(d.family, AF_INET6);
}

static void test_ipv6(void **state)
{
	(void)state;
	struct sbx_inet d;
	struct sockaddr_in6 s = in6("fe80::1", 22);
	s.sin6_scope_id = 3;
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET6, SOCK_STREAM, SBX_INET_CONNECT, &s, sizeof(s), &d), 1);
	assert_int_equal(d.family, AF_INET6);
	assert_int_equal(d.port, 22);
	assert_int_equal(d.scope, 3);
	assert_memory_equal(d.addr, s.sin6_addr.s6_addr, 16);
	/* RFC 2133's length (no scope id) is enough; less is not. */
	assert_int_equal(sbx_sock_inet_dest(AF_INET6, SOCK_STREAM, SBX_INET_CONNECT, &s, 24, &d),
			 1);
	assert_int_equal(d.scope, 0);
	assert_int_equal(sbx_sock_inet_dest(AF_INET6, SOCK_STREAM, SBX_INET_CONNECT, &s, 23, &d),
			 EINVAL);
	/* An IPv4 address given as such: a datagram socket takes it, TCP
	 * refuses it. */
	struct sockaddr_in s4 = in4("10.1.2.3", 53);
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET6, SOCK_DGRAM, SBX_INET_SEND, &s4, sizeof(s4), &d), 1);
	assert_v4(&d, "10.1.2.3", 53);
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET6, SOCK_DGRAM, SBX_INET_CONNECT, &s4, sizeof(s4), &d), 1);
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET6, SOCK_STREAM, SBX_INET_CONNECT, &s4, sizeof(s4), &d),
		EAFNOSUPPORT);
	assert_int_equal(sbx_sock_inet_dest(AF_INET6, SOCK_DGRAM, SBX_INET_SEND, &s4, 8, &d),
			 EINVAL);
	/* Another family. */
	s.sin6_family = AF_UNIX;
	assert_int_equal(sbx_sock_inet_dest(AF_INET6, SOCK_DGRAM, SBX_INET_SEND, &s, sizeof(s), &d),
			 EINVAL);
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET6, SOCK_STREAM, SBX_INET_CONNECT, &s, sizeof(s), &d),
		EAFNOSUPPORT);
}

/* A TCP send without MSG_FASTOPEN: the kernel never reads the address. */
static void test_ignored(void **state)
{
	(void)state;
	struct sbx_inet d;
	struct sockaddr_in s = in4("169.254.169.254", 80);
	assert_int_equal(
		sbx_sock_inet_dest(AF_INET, SOCK_STREAM, SBX_INET_IGNORED, &s, sizeof(s), &d), 0);
	assert_int_equal(sbx_sock_inet_dest(AF_INET, SOCK_STREAM, SBX_INET_IGNORED, &s, 0, &d), 0);
}

/* The control buffer is walked as the kernel walks it: a last message
 * whose aligned length passes the end, but whose own length fits, is
 * seen (glibc before 2.38 stopped before it, and the kernel acted on it:
 * an SCM_RIGHTS there would have sent warden's own descriptors). */
static void test_cmsg_walk_as_the_kernel(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) uint8_t buf[64];
	memset(buf, 0, sizeof(buf));
	struct cmsghdr *a = (struct cmsghdr *)(void *)buf;
	a->cmsg_len = 16;
	a->cmsg_level = 0x7777;
	struct cmsghdr *b = (struct cmsghdr *)(void *)(buf + 16);
	b->cmsg_len = 20;
	b->cmsg_level = SOL_SOCKET;
	b->cmsg_type = SCM_RIGHTS;
	bool bad = true;
	struct cmsghdr *c = sbx_cmsg_next(buf, 36, NULL, &bad);
	assert_ptr_equal(c, a);
	assert_false(bad);
	c = sbx_cmsg_next(buf, 36, c, &bad);
	assert_ptr_equal(c, b);
	assert_false(bad);
	assert_null(sbx_cmsg_next(buf, 36, c, &bad));
	assert_false(bad);

	/* Too short for a header: nothing, and nothing wrong (the kernel
	 * ignores it). */
	assert_null(sbx_cmsg_next(buf, 15, NULL, &bad));
	assert_false(bad);
	/* A length under a header's, or past the buffer: the kernel refuses
	 * the call (EINVAL), and so does the walk. */
	a->cmsg_len = 8;
	assert_null(sbx_cmsg_next(buf, 36, NULL, &bad));
	assert_true(bad);
	a->cmsg_len = 16;
	b->cmsg_len = 21;
	assert_non_null(sbx_cmsg_next(buf, 36, NULL, &bad));
	assert_null(sbx_cmsg_next(buf, 36, a, &bad));
	assert_true(bad);
	/* A huge length cannot wrap the walk. */
	a->cmsg_len = (size_t)-8;
	assert_null(sbx_cmsg_next(buf, 36, NULL, &bad));
	assert_true(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4),	cmocka_unit_test(test_unspec),
		cmocka_unit_test(test_mapped),	cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_ignored), cmocka_unit_test(test_cmsg_walk_as_the_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
