/*
 * supervisor/dns_msg.c: the DNS messages the session's resolver reads,
 * built by hand here (compression, CNAME chains, pointer loops, truncated
 * messages, answers to another query, lying sections).
 */
#include "dns_int.h"
#include "sup.h"

#include <arpa/inet.h>
#include <errno.h>
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

struct msg {
	uint8_t b[4096];
	size_t n;
};

static void raw(struct msg *m, const void *p, size_t k)
{
	assert_true(m->n + k <= sizeof(m->b));
	memcpy(m->b + m->n, p, k);
	m->n += k;
}

static void u16(struct msg *m, unsigned v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	raw(m, b, 2);
}

/* "a.test" as labels; a name starting with '@' is a pointer "@12". */
static void name(struct msg *m, const char *s)
{
	if (s[0] == '@') {
		u16(m, 0xc000 | (unsigned)atoi(s + 1));
		return;
	}
	while (*s) {
		const char *dot = strchr(s, '.');
		size_t k = dot ? (size_t)(dot - s) : strlen(s);
		uint8_t lk = (uint8_t)k;
		raw(m, &lk, 1);
		raw(m, s, k);
		s += k + (dot ? 1 : 0);
	}
	raw(m, "", 1);
}

static void header(struct msg *m, unsigned id, unsigned flags, unsigned qd, unsigned an,
		   unsigned ns, unsigned ar)
{
	m->n = 0;
	u16(m, id);
	u16(m, flags);
	u16(m, qd);
	u16(m, an);
	u16(m, ns);
	u16(m, ar);
}

static void question(struct msg *m, const char *qname, unsigned qtype)
{
	name(m, qname);
	u16(m, qtype);
	u16(m, 1);
}

/* A record: owner, type, rdata (an address text for A/AAAA, a name for
 * CNAME). */
static void rr(struct msg *m, const char *owner, unsigned type, const char *data)
{
	name(m, owner);
	u16(m, type);
	u16(m, 1);
	u16(m, 0);
	u16(m, 60);
	if (type == SUP_DNS_T_A || type == SUP_DNS_T_AAAA) {
		uint8_t a[16];
		int fam = type == SUP_DNS_T_A ? AF_INET : AF_INET6;
		assert_int_equal(inet_pton(fam, data, a), 1);
		u16(m, fam == AF_INET ? 4 : 16);
		raw(m, a, fam == AF_INET ? 4 : 16);
	} else {
		size_t at = m->n;
		u16(m, 0);
		size_t start = m->n;
		name(m, data);
		m->b[at] = (uint8_t)((m->n - start) >> 8);
		m->b[at + 1] = (uint8_t)(m->n - start);
	}
}

static struct sup_dns_question query_for(const char *qname, unsigned qtype, unsigned id)
{
	struct msg m;
	header(&m, id, 0x0100, 1, 0, 0, 0);
	question(&m, qname, qtype);
	struct sup_dns_question q;
	assert_int_equal(sup_dns_parse_query(m.b, m.n, &q), 0);
	return q;
}

static const char *addr_text(const struct sup_dns_answer *a, size_t i)
{
	static char buf[64];
	inet_ntop(a->addrs[i].family, a->addrs[i].addr, buf, sizeof(buf));
	return buf;
}

static void test_dns_query_reads_the_question(void **state)
{
	(void)state;
	struct msg m;
	header(&m, 0x1234, 0x0100, 1, 0, 0, 0);
	question(&m, "WWW.Example.TEST", SUP_DNS_T_AAAA);
	struct sup_dns_question q;
	assert_int_equal(sup_dns_parse_query(m.b, m.n, &q), 0);
	assert_int_equal(q.id, 0x1234);
	assert_string_equal(q.name, "www.example.test");
	assert_true(q.plain);
	assert_int_equal(q.qtype, SUP_DNS_T_AAAA);
	assert_int_equal(q.qclass, 1);
	assert_int_equal(q.end, m.n);
	/* A response is not a query; two questions, another opcode are
	 * refused; every prefix of the message is malformed. */
	m.b[2] |= 0x80;
	assert_int_equal(sup_dns_parse_query(m.b, m.n, &q), -EINVAL);
	m.b[2] = 0x01;
	m.b[5] = 2;
	assert_int_equal(sup_dns_parse_query(m.b, m.n, &q), -EOPNOTSUPP);
	m.b[5] = 1;
	m.b[2] = 0x01 | (2 << 3);
	assert_int_equal(sup_dns_parse_query(m.b, m.n, &q), -EOPNOTSUPP);
	m.b[2] = 0x01;
	for (size_t k = 0; k < m.n; k++)
		assert_int_equal(sup_dns_parse_query(m.b, k, &q), k < 12 ? -EINVAL : -EINVAL);
}

static void test_dns_query_odd_labels_are_not_plain(void **state)
{
	(void)state;
	struct msg m;
	header(&m, 1, 0x0100, 1, 0, 0, 0);
	/* One label "evil.test": not the two-label name evil.test. */
	uint8_t lab[] = {9, 'e', 'v', 'i', 'l', '.', 't', 'e', 's', 't', 0};
	raw(&m, lab, sizeof(lab));
	u16(&m, 1);
	u16(&m, 1);
	struct sup_dns_question q;
	assert_int_equal(sup_dns_parse_query(m.b, m.n, &q), 0);
	assert_false(q.plain);
	/* A NUL or a space inside a label too. */
	header(&m, 1, 0x0100, 1, 0, 0, 0);
	uint8_t nul[] = {3, 'a', 0, 'b', 4, 't', 'e', 's', 't', 0};
	raw(&m, nul, sizeof(nul));
	u16(&m, 1);
	u16(&m, 1);
	assert_int_equal(sup_dns_parse_query(m.b, m.n, &q), 0);
	assert_false(q.plain);
	assert_null(memchr(q.name, 0, 3));
}

static void test_dns_answer_compressed(void **state)
{
	(void)state;
	struct sup_dns_question q = query_for("a.test", SUP_DNS_T_A, 7);
	struct msg m;
	header(&m, 7, 0x8180, 1, 2, 0, 0);
	question(&m, "a.test", SUP_DNS_T_A);
	rr(&m, "@12", SUP_DNS_T_A, "10.77.0.2");
	rr(&m, "@12", SUP_DNS_T_A, "10.77.0.3");
	struct sup_dns_answer a;
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_int_equal(a.rcode, 0);
	assert_int_equal(a.naddrs, 2);
	assert_string_equal(addr_text(&a, 0), "10.77.0.2");
	assert_string_equal(addr_text(&a, 1), "10.77.0.3");
	assert_int_equal(a.addrs[0].family, AF_INET);
	/* The question's name in another case (0x20 randomisation). */
	header(&m, 7, 0x8180, 1, 1, 0, 0);
	question(&m, "A.TeSt", SUP_DNS_T_A);
	rr(&m, "@12", SUP_DNS_T_A, "10.77.0.2");
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_int_equal(a.naddrs, 1);
}

static void test_dns_answer_aaaa(void **state)
{
	(void)state;
	struct sup_dns_question q = query_for("six.test", SUP_DNS_T_AAAA, 9);
	struct msg m;
	header(&m, 9, 0x8180, 1, 1, 0, 0);
	question(&m, "six.test", SUP_DNS_T_AAAA);
	rr(&m, "six.test", SUP_DNS_T_AAAA, "fd77::2");
	struct sup_dns_answer a;
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_int_equal(a.naddrs, 1);
	assert_int_equal(a.addrs[0].family, AF_INET6);
	assert_string_equal(addr_text(&a, 0), "fd77::2");
}

static void test_dns_answer_cname_chain(void **state)
{
	(void)state;
	struct sup_dns_question q = query_for("www.a.test", SUP_DNS_T_A, 3);
	struct msg m;
	/* Out of order: the address first, then b -> c, then www -> b. */
	header(&m, 3, 0x8180, 1, 3, 0, 0);
	question(&m, "www.a.test", SUP_DNS_T_A);
	rr(&m, "c.test", SUP_DNS_T_A, "10.77.0.4");
	rr(&m, "b.test", SUP_DNS_T_CNAME, "c.test");
	rr(&m, "@12", SUP_DNS_T_CNAME, "b.test");
	struct sup_dns_answer a;
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_int_equal(a.naddrs, 1);
	assert_string_equal(addr_text(&a, 0), "10.77.0.4");
	assert_false(a.partial);
}

static void test_dns_answer_cname_chain_too_long(void **state)
{
	(void)state;
	struct sup_dns_question q = query_for("n0.test", SUP_DNS_T_A, 3);
	struct msg m;
	header(&m, 3, 0x8180, 1, 21, 0, 0);
	question(&m, "n0.test", SUP_DNS_T_A);
	char from[32], to[32];
	for (int i = 0; i < 20; i++) {
		snprintf(from, sizeof(from), "n%d.test", i);
		snprintf(to, sizeof(to), "n%d.test", i + 1);
		rr(&m, from, SUP_DNS_T_CNAME, to);
	}
	rr(&m, "n20.test", SUP_DNS_T_A, "10.77.0.4");
	struct sup_dns_answer a;
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_int_equal(a.naddrs, 0);
	assert_true(a.partial);
}

static void test_dns_answer_cname_loop_ends(void **state)
{
	(void)state;
	struct sup_dns_question q = query_for("x.test", SUP_DNS_T_A, 3);
	struct msg m;
	header(&m, 3, 0x8180, 1, 3, 0, 0);
	question(&m, "x.test", SUP_DNS_T_A);
	rr(&m, "x.test", SUP_DNS_T_CNAME, "y.test");
	rr(&m, "y.test", SUP_DNS_T_CNAME, "x.test");
	rr(&m, "y.test", SUP_DNS_T_A, "10.77.0.5");
	struct sup_dns_answer a;
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_int_equal(a.naddrs, 1);
}

static void test_dns_answer_unrelated_records_ignored(void **state)
{
	(void)state;
	struct sup_dns_question q = query_for("evil.test", SUP_DNS_T_A, 11);
	struct msg m;
	/* An answer record for another name, not reached by a CNAME; an
	 * authority record and additional records for the question's name:
	 * none of them is believed. */
	header(&m, 11, 0x8180, 1, 2, 1, 2);
	question(&m, "evil.test", SUP_DNS_T_A);
	rr(&m, "github.com", SUP_DNS_T_A, "10.77.0.9");
	rr(&m, "@12", SUP_DNS_T_A, "10.77.0.3");
	rr(&m, "@12", SUP_DNS_T_A, "10.77.0.10");
	rr(&m, "@12", SUP_DNS_T_A, "169.254.169.254");
	rr(&m, "allowed.test", SUP_DNS_T_A, "10.77.0.11");
	struct sup_dns_answer a;
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_int_equal(a.naddrs, 1);
	assert_string_equal(addr_text(&a, 0), "10.77.0.3");
}

static void test_dns_answer_wrong_query(void **state)
{
	(void)state;
	struct sup_dns_question q = query_for("a.test", SUP_DNS_T_A, 5);
	struct msg m;
	struct sup_dns_answer a;
	/* Another id. */
	header(&m, 6, 0x8180, 1, 1, 0, 0);
	question(&m, "a.test", SUP_DNS_T_A);
	rr(&m, "@12", SUP_DNS_T_A, "10.77.0.2");
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), -EINVAL);
	/* Another name, another type, another class. */
	header(&m, 5, 0x8180, 1, 1, 0, 0);
	question(&m, "b.test", SUP_DNS_T_A);
	rr(&m, "@12", SUP_DNS_T_A, "10.77.0.2");
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), -EINVAL);
	header(&m, 5, 0x8180, 1, 1, 0, 0);
	question(&m, "a.test", SUP_DNS_T_AAAA);
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), -EINVAL);
	header(&m, 5, 0x8180, 1, 0, 0, 0);
	name(&m, "a.test");
	u16(&m, 1);
	u16(&m, 3);
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), -EINVAL);
	/* A query (QR clear) is not an answer. */
	header(&m, 5, 0x0100, 1, 1, 0, 0);
	question(&m, "a.test", SUP_DNS_T_A);
	rr(&m, "@12", SUP_DNS_T_A, "10.77.0.2");
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), -EINVAL);
}

/* "a.test CNAME L; L A 10.77.0.2" where L is |labels| labels of 63 bytes,
 * each written once and reached by pointers (in a record of another type
 * before). Returns how many addresses the answer gives. */
static size_t long_chain(const struct sup_dns_question *q, int labels)
{
	static struct msg m;
	header(&m, 5, 0x8180, 1, 3, 0, 0);
	question(&m, "a.test", SUP_DNS_T_A);
	name(&m, "@12");
	u16(&m, 16);
	u16(&m, 1);
	u16(&m, 0);
	u16(&m, 60);
	size_t rdlen_at = m.n;
	u16(&m, 0);
	size_t first = m.n, last = 0;
	uint8_t lab[64];
	lab[0] = 63;
	memset(lab + 1, 'x', 63);
	raw(&m, lab, 64);
	raw(&m, "", 1);
	last = first;
	for (int i = 1; i < labels; i++) {
		size_t at = m.n;
		raw(&m, lab, 64);
		u16(&m, 0xc000 | (unsigned)last);
		last = at;
	}
	m.b[rdlen_at] = (uint8_t)((m.n - first) >> 8);
	m.b[rdlen_at + 1] = (uint8_t)(m.n - first);
	char ptr[16];
	snprintf(ptr, sizeof(ptr), "@%zu", last);
	rr(&m, "@12", SUP_DNS_T_CNAME, ptr);
	rr(&m, ptr, SUP_DNS_T_A, "10.77.0.2");
	struct sup_dns_answer a;
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, q, &a), 0);
	return a.naddrs;
}

/* "a.test A 10.77.0.2" whose owner is reached through |jumps| pointers,
 * each to the one before, the first to the question's name (held as the
 * data of a record of another type before it). Returns how many
 * addresses the answer gives. */
static size_t pointer_chain(const struct sup_dns_question *q, int jumps)
{
	static struct msg r;
	header(&r, 5, 0x8180, 1, 2, 0, 0);
	question(&r, "a.test", SUP_DNS_T_A);
	name(&r, "@12");
	u16(&r, 16);
	u16(&r, 1);
	u16(&r, 0);
	u16(&r, 60);
	u16(&r, 0);
	size_t data = r.n, last = 12;
	for (int i = 0; i < jumps - 1; i++) {
		size_t at = r.n;
		u16(&r, 0xc000 | (unsigned)last);
		last = at;
	}
	r.b[data - 2] = (uint8_t)((r.n - data) >> 8);
	r.b[data - 1] = (uint8_t)(r.n - data);
	char ptr[16];
	snprintf(ptr, sizeof(ptr), "@%zu", last);
	rr(&r, ptr, SUP_DNS_T_A, "10.77.0.2");
	struct sup_dns_answer a;
	assert_int_equal(sup_dns_parse_answer(r.b, r.n, q, &a), 0);
	return a.naddrs;
}

static void test_dns_answer_pointer_loops(void **state)
{
	(void)state;
	struct sup_dns_question q = query_for("a.test", SUP_DNS_T_A, 5);
	struct msg m;
	struct sup_dns_answer a;
	/* The record's owner points at itself. */
	header(&m, 5, 0x8180, 1, 1, 0, 0);
	question(&m, "a.test", SUP_DNS_T_A);
	size_t here = m.n;
	char self[16];
	snprintf(self, sizeof(self), "@%zu", here);
	rr(&m, self, SUP_DNS_T_A, "10.77.0.2");
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_int_equal(a.naddrs, 0);
	/* Forwards: a pointer to a later pointer back to the first. */
	header(&m, 5, 0x8180, 1, 2, 0, 0);
	question(&m, "a.test", SUP_DNS_T_A);
	here = m.n;
	snprintf(self, sizeof(self), "@%zu", here + 16);
	rr(&m, self, SUP_DNS_T_A, "10.77.0.2");
	snprintf(self, sizeof(self), "@%zu", here);
	rr(&m, self, SUP_DNS_T_A, "10.77.0.3");
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_int_equal(a.naddrs, 0);
	/* The question's own name a pointer to itself: malformed. */
	header(&m, 5, 0x8180, 1, 0, 0, 0);
	u16(&m, 0xc000 | 12);
	u16(&m, 1);
	u16(&m, 1);
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), -EINVAL);
	/* A name longer than 255 bytes through pointers to labels. */
	assert_int_equal(long_chain(&q, 3), 1);
	assert_int_equal(long_chain(&q, 5), 0);
	/* Pointers to pointers: a few are followed, a walk of hundreds is
	 * refused. */
	assert_int_equal(pointer_chain(&q, 4), 1);
	assert_int_equal(pointer_chain(&q, 32), 1);
	assert_int_equal(pointer_chain(&q, 300), 0);
}

static void test_dns_answer_truncated(void **state)
{
	(void)state;
	struct sup_dns_question q = query_for("a.test", SUP_DNS_T_A, 5);
	struct msg m;
	header(&m, 5, 0x8180, 1, 2, 0, 0);
	question(&m, "a.test", SUP_DNS_T_A);
	rr(&m, "@12", SUP_DNS_T_CNAME, "b.test");
	rr(&m, "b.test", SUP_DNS_T_A, "10.77.0.2");
	struct sup_dns_answer a;
	/* Every prefix: no read beyond it (ASan watches), at most the
	 * whole answer. */
	for (size_t k = 0; k <= m.n; k++) {
		int rc = sup_dns_parse_answer(m.b, k, &q, &a);
		assert_true(rc == 0 || rc == -EINVAL);
		assert_int_equal(a.naddrs, k == m.n ? 1 : 0);
	}
	/* A count beyond the records there are. */
	assert_false(a.partial);
	m.b[7] = 200;
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_int_equal(a.naddrs, 0);
	assert_true(a.partial);
	/* An A record with 5 bytes of data is not an address. */
	header(&m, 5, 0x8180, 1, 1, 0, 0);
	question(&m, "a.test", SUP_DNS_T_A);
	name(&m, "@12");
	u16(&m, 1);
	u16(&m, 1);
	u16(&m, 0);
	u16(&m, 60);
	u16(&m, 5);
	raw(&m, "\x0a\x4d\x00\x02\x00", 5);
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_int_equal(a.naddrs, 0);
	/* TC and an error code are reported; an error gives no address. */
	header(&m, 5, 0x8383, 1, 1, 0, 0);
	question(&m, "a.test", SUP_DNS_T_A);
	rr(&m, "@12", SUP_DNS_T_A, "10.77.0.2");
	assert_int_equal(sup_dns_parse_answer(m.b, m.n, &q, &a), 0);
	assert_true(a.tc);
	assert_int_equal(a.rcode, 3);
	assert_int_equal(a.naddrs, 0);
}

static void test_dns_answer_many_records_bounded(void **state)
{
	(void)state;
	struct sup_dns_question q = query_for("a.test", SUP_DNS_T_A, 5);
	static struct msg big;
	header(&big, 5, 0x8180, 1, 0, 0, 0);
	question(&big, "a.test", SUP_DNS_T_A);
	unsigned n = 0;
	while (big.n + 16 <= sizeof(big.b)) {
		rr(&big, "@12", SUP_DNS_T_A, "10.77.0.2");
		n++;
	}
	big.b[6] = (uint8_t)(n >> 8);
	big.b[7] = (uint8_t)n;
	struct sup_dns_answer a;
	assert_int_equal(sup_dns_parse_answer(big.b, big.n, &q, &a), 0);
	assert_true(n > SUP_DNS_MAX_ADDRS);
	assert_int_equal(a.naddrs, SUP_DNS_MAX_ADDRS);
	assert_true(a.partial);
	/* Exactly as many as fit: whole. */
	big.n = 0;
	header(&big, 5, 0x8180, 1, SUP_DNS_MAX_ADDRS, 0, 0);
	question(&big, "a.test", SUP_DNS_T_A);
	for (int i = 0; i < SUP_DNS_MAX_ADDRS; i++)
		rr(&big, "@12", SUP_DNS_T_A, "10.77.0.2");
	assert_int_equal(sup_dns_parse_answer(big.b, big.n, &q, &a), 0);
	assert_int_equal(a.naddrs, SUP_DNS_MAX_ADDRS);
	assert_false(a.partial);
}

static void test_dns_error_answer(void **state)
{
	(void)state;
	struct msg m;
	header(&m, 0xbeef, 0x0100, 1, 0, 0, 1);
	question(&m, "metadata.google.internal", SUP_DNS_T_A);
	raw(&m, "\0\0\x29\x10\0\0\0\0\0\0\0", 11); /* an OPT record */
	struct sup_dns_question q;
	assert_int_equal(sup_dns_parse_query(m.b, m.n, &q), 0);
	assert_true(sup_dns_metadata_name(q.name));
	uint8_t out[1024];
	size_t k = sup_dns_error(m.b, &q, SUP_DNS_REFUSED, out);
	assert_int_equal(k, q.end);
	struct sup_dns_answer a;
	assert_int_equal(sup_dns_parse_answer(out, k, &q, &a), 0);
	assert_int_equal(a.rcode, SUP_DNS_REFUSED);
	assert_int_equal(out[0], 0xbe);
	assert_int_equal(out[11], 0); /* no additional record */
	/* The id is the question's: the client's, whatever id the message
	 * carries now (the resolver rewrote it for the nameserver). */
	m.b[0] = 0x12;
	m.b[1] = 0x34;
	k = sup_dns_error(m.b, &q, SUP_DNS_SERVFAIL, out);
	assert_int_equal(out[0], 0xbe);
	assert_int_equal(out[1], 0xef);
	assert_int_equal(out[3] & 0xf, SUP_DNS_SERVFAIL);
	assert_false(sup_dns_metadata_name("metadata.google.internal.evil.test"));
	assert_false(sup_dns_metadata_name("google.internal"));
	assert_true(sup_dns_metadata_name("instance-data"));
}

/* The hosts file: every name of a line under its address, comments and
 * malformed lines skipped, IPv6 too. An address on several lines is
 * shown by the first line's first name, as the resolver answers it. */
static void test_hosts_load(void **state)
{
	(void)state;
	char path[] = "/tmp/warden-test-hosts-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "# comment 10.0.0.1 nope\n"
			   "127.0.0.1\tlocalhost\n"
			   "127.0.0.1 vm runsc\n"
			   "::1 localhost ip6-localhost # trailing comment\n"
			   "10.77.0.5   Build.Test build   \n"
			   "not-an-address name.test\n"
			   "10.77.0.6\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct sup_names *t = sup_names_new();
	assert_int_equal(sup_hosts_load(t, path), 7);
	uint8_t a[16];
	inet_pton(AF_INET, "127.0.0.1", a);
	char **n = sup_names_of(t, AF_INET, a);
	assert_non_null(n);
	assert_string_equal(n[0], "localhost");
	assert_string_equal(n[1], "vm");
	assert_string_equal(n[2], "runsc");
	wd_strv_free(n);
	inet_pton(AF_INET6, "::1", a);
	n = sup_names_of(t, AF_INET6, a);
	assert_non_null(n);
	assert_string_equal(n[0], "localhost");
	assert_string_equal(n[1], "ip6-localhost");
	wd_strv_free(n);
	inet_pton(AF_INET, "10.77.0.5", a);
	n = sup_names_of(t, AF_INET, a);
	assert_non_null(n);
	assert_string_equal(n[0], "build.test");
	assert_string_equal(n[1], "build");
	wd_strv_free(n);
	inet_pton(AF_INET, "10.77.0.6", a);
	assert_null(sup_names_of(t, AF_INET, a));
	inet_pton(AF_INET, "10.0.0.1", a);
	assert_null(sup_names_of(t, AF_INET, a));
	assert_int_equal(sup_hosts_load(t, "/nonexistent/hosts"), 0);
	sup_names_free(t);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dns_query_reads_the_question),
		cmocka_unit_test(test_dns_query_odd_labels_are_not_plain),
		cmocka_unit_test(test_dns_answer_compressed),
		cmocka_unit_test(test_dns_answer_aaaa),
		cmocka_unit_test(test_dns_answer_cname_chain),
		cmocka_unit_test(test_dns_answer_cname_chain_too_long),
		cmocka_unit_test(test_dns_answer_cname_loop_ends),
		cmocka_unit_test(test_dns_answer_unrelated_records_ignored),
		cmocka_unit_test(test_dns_answer_wrong_query),
		cmocka_unit_test(test_dns_answer_pointer_loops),
		cmocka_unit_test(test_dns_answer_truncated),
		cmocka_unit_test(test_dns_answer_many_records_bounded),
		cmocka_unit_test(test_dns_error_answer),
		cmocka_unit_test(test_hosts_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
