/*
 * test_sup_connect.c: the supervisor's side of IP destinations that needs
 * no run (supervisor/connect.c, stats.c): the datagram cache (per process,
 * per destination and protocol, gone with its process) and the connects
 * line of --stats.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sup.h"

static struct sbx_inet dest(int family, const char *a, int port)
{
	struct sbx_inet d = {.family = family, .port = (uint16_t)port};
	assert_int_equal(inet_pton(family, a, d.addr), 1);
	return d;
}

static int pidfd_of(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	assert_true(fd >= 0);
	return fd;
}

static void test_dgrams(void **state)
{
	(void)state;
	struct sup_dgrams *c = sup_dgrams_new();
	struct sbx_inet a = dest(AF_INET, "10.0.0.53", 53);
	struct sbx_inet b = dest(AF_INET, "10.0.0.53", 54);
	struct sbx_inet v6 = dest(AF_INET6, "fd77::2", 53);
	pid_t me = getpid();
	assert_false(sup_dgrams_has(c, me, &a, IPPROTO_UDP));
	sup_dgrams_add(c, me, pidfd_of(me), &a, IPPROTO_UDP);
	assert_true(sup_dgrams_has(c, me, &a, IPPROTO_UDP));
	/* Another port, protocol, family or process: not this one. */
	assert_false(sup_dgrams_has(c, me, &b, IPPROTO_UDP));
	assert_false(sup_dgrams_has(c, me, &a, IPPROTO_ICMP));
	assert_false(sup_dgrams_has(c, me, &v6, IPPROTO_UDP));
	assert_false(sup_dgrams_has(c, me + 1, &a, IPPROTO_UDP));
	sup_dgrams_add(c, me, pidfd_of(me), &v6, IPPROTO_UDP);
	assert_true(sup_dgrams_has(c, me, &v6, IPPROTO_UDP));
	assert_true(sup_dgrams_has(c, me, &a, IPPROTO_UDP));
	/* A scope id makes another destination. */
	struct sbx_inet scoped = v6;
	scoped.scope = 2;
	assert_false(sup_dgrams_has(c, me, &scoped, IPPROTO_UDP));
	/* An exec forgets them all: the new program is decided again. */
	sup_dgrams_forget(c, me);
	assert_false(sup_dgrams_has(c, me, &a, IPPROTO_UDP));
	assert_false(sup_dgrams_has(c, me, &v6, IPPROTO_UDP));
	sup_dgrams_free(c);
}

/* An entry lives as long as its process: a later process with the same
 * pid would inherit nothing. */
static void test_dgrams_process_gone(void **state)
{
	(void)state;
	struct sup_dgrams *c = sup_dgrams_new();
	struct sbx_inet a = dest(AF_INET, "10.0.0.53", 53);
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	sup_dgrams_add(c, child, pidfd_of(child), &a, IPPROTO_UDP);
	assert_true(sup_dgrams_has(c, child, &a, IPPROTO_UDP));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_false(sup_dgrams_has(c, child, &a, IPPROTO_UDP));
	sup_dgrams_free(c);
}

/* Many destinations: bounded, and what is forgotten is only decided again. */
static void test_dgrams_bounded(void **state)
{
	(void)state;
	struct sup_dgrams *c = sup_dgrams_new();
	pid_t me = getpid();
	for (int port = 1; port <= 1000; port++) {
		struct sbx_inet d = dest(AF_INET, "10.0.0.1", port);
		sup_dgrams_add(c, me, pidfd_of(me), &d, IPPROTO_UDP);
	}
	struct sbx_inet last = dest(AF_INET, "10.0.0.1", 1000);
	struct sbx_inet first = dest(AF_INET, "10.0.0.1", 1);
	assert_true(sup_dgrams_has(c, me, &last, IPPROTO_UDP));
	assert_false(sup_dgrams_has(c, me, &first, IPPROTO_UDP));
	/* A pidfd of -1 (the caller was gone) records nothing. */
	struct sbx_inet d = dest(AF_INET, "10.9.9.9", 9);
	sup_dgrams_add(c, me + 7, -1, &d, IPPROTO_UDP);
	assert_false(sup_dgrams_has(c, me + 7, &d, IPPROTO_UDP));
	sup_dgrams_free(c);
}

static void test_stats_line(void **state)
{
	(void)state;
	struct sup_stats s = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	sup_stats_print(&s, out);
	fclose(out);
	assert_non_null(strstr(buf, "connects: none decided"));
	free(buf);
	s.connects_allowed = 2;
	s.connects_refused = 1;
	s.capconn_lat = 4;
	s.conn_lat_ns = calloc(4, sizeof(int64_t));
	s.conn_lat_ns[0] = 1000;
	s.conn_lat_ns[1] = 3000;
	s.conn_lat_ns[2] = 2000;
	s.nconn_lat = 3;
	out = open_memstream(&buf, &len);
	sup_stats_print(&s, out);
	fclose(out);
	assert_non_null(
		strstr(buf, "connects: 3 decided, 2 allowed, 1 refused; decision p50 2.0 µs"));
	free(buf);
	sup_stats_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dgrams),
		cmocka_unit_test(test_dgrams_process_gone),
		cmocka_unit_test(test_dgrams_bounded),
		cmocka_unit_test(test_stats_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
