/*
 * dns_msg.c: reads the DNS messages the session's resolver relays (RFC
 * 1035 section 4). Pure: bytes in, a question or a list of addresses out;
 * no I/O, no allocation. The metadata names are the policy's.
 *
 * Both sides are untrusted: the query comes from the agent, the response
 * from whatever answers the host's nameserver address. Every read is
 * checked against the message's length; a compression pointer must point
 * strictly before the place it is read from, so a name's reading always
 * moves backwards through the message and ends (no pointer loop can be
 * written), a name follows at most JUMPS_MAX pointers, and is at most 255
 * bytes on the wire like the RFC says.
 *
 * What a response is believed for: only the addresses its answer section
 * gives for the question's own name, or for the names a CNAME chain from
 * it reaches inside the same answer section; they are reported as the
 * question's (the caller records them under the queried name only). A
 * server can put any record in its answer: "evil.test CNAME github.com,
 * github.com A 1.2.3.4" names 1.2.3.4 "evil.test", never "github.com".
 */
#include "dns_int.h"
#include "policy.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#define HDR	  12
#define WIRE_NAME 255
#define CHAIN_MAX 16 /* names a CNAME chain may reach, the question's included */
#define JUMPS_MAX 32 /* compression pointers followed in one name */
#define CLASS_IN  1
#define OPCODE(f) (((f) >> 11) & 0xf)
#define FLAG_QR	  0x8000
#define FLAG_TC	  0x0200
#define RCODE(f)  ((f)&0xf)

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * Reads the name at |at| into |out| (lower-case text, labels joined by
 * '.', "" for the root). *next is the offset after the name where it
 * appears (after its first pointer, if any). *plain is false when a label
 * holds a byte outside the printable ASCII range or a '.' (the text would
 * not say which name it is). 0 or -EINVAL.
 */
static int read_name(const uint8_t *msg, size_t len, size_t at, char *out, size_t *next,
		     bool *plain)
{
	size_t pos = at, wire = 0, o = 0;
	unsigned jumps = 0;
	bool jumped = false;
	*plain = true;
	for (;;) {
		if (pos >= len)
			return -EINVAL;
		uint8_t b = msg[pos];
		if ((b & 0xc0) == 0xc0) {
			if (pos + 1 >= len)
				return -EINVAL;
			size_t ptr = (size_t)((b & 0x3f) << 8 | msg[pos + 1]);
			/* Strictly backwards: every jump lowers pos, so the
			 * reading ends whatever the message says; and at most
			 * JUMPS_MAX of them (a pointer to a pointer adds no
			 * byte to the name, so the 255-byte bound alone would
			 * let one name cost a walk through the whole message). */
			if (ptr >= pos || ++jumps > JUMPS_MAX)
				return -EINVAL;
			if (!jumped)
				*next = pos + 2;
			jumped = true;
			pos = ptr;
			continue;
		}
		if (b & 0xc0) /* the extended label types of RFC 6891 (obsolete) */
			return -EINVAL;
		wire += (size_t)b + 1;
		if (wire > WIRE_NAME)
			return -EINVAL;
		if (b == 0) {
			if (!jumped)
				*next = pos + 1;
			out[o] = 0;
			return 0;
		}
		if (pos + 1 + b > len)
			return -EINVAL;
		if (o)
			out[o++] = '.';
		for (size_t i = 0; i < b; i++) {
			uint8_t c = msg[pos + 1 + i];
			if (c <= 0x20 || c >= 0x7f || c == '.')
				*plain = false;
			if (c >= 'A' && c <= 'Z')
				c = (uint8_t)(c - 'A' + 'a');
			/* The wire bound (255) keeps o below 254. */
			out[o++] = (char)(c ? c : '?');
		}
		pos += 1 + b;
	}
}

/* Reads the header and the single question. */
static int read_question(const uint8_t *msg, size_t len, struct sup_dns_question *q,
			 uint16_t *flags)
{
	if (len < HDR)
		return -EINVAL;
	q->id = get16(msg);
	*flags = get16(msg + 2);
	if (OPCODE(*flags) != 0 || get16(msg + 4) != 1)
		return -EOPNOTSUPP;
	size_t at;
	if (read_name(msg, len, HDR, q->name, &at, &q->plain) < 0 || at + 4 > len)
		return -EINVAL;
	q->qtype = get16(msg + at);
	q->qclass = get16(msg + at + 2);
	q->end = at + 4;
	return 0;
}

int sup_dns_parse_query(const uint8_t *msg, size_t len, struct sup_dns_question *q)
{
	uint16_t flags;
	memset(q, 0, sizeof(*q));
	int rc = read_question(msg, len, q, &flags);
	if (rc < 0)
		return rc;
	return flags & FLAG_QR ? -EINVAL : 0;
}

/* One resource record's fixed part. */
struct rr {
	char owner[SUP_DNS_NAME_MAX];
	bool plain;
	uint16_t type, class;
	size_t rdata, rdlen;
};

static int read_rr(const uint8_t *msg, size_t len, size_t *at, struct rr *rr)
{
	size_t p;
	if (read_name(msg, len, *at, rr->owner, &p, &rr->plain) < 0 || p + 10 > len)
		return -EINVAL;
	rr->type = get16(msg + p);
	rr->class = get16(msg + p + 2);
	rr->rdlen = get16(msg + p + 8);
	rr->rdata = p + 10;
	if (rr->rdata + rr->rdlen > len)
		return -EINVAL;
	*at = rr->rdata + rr->rdlen;
	return 0;
}

/* The names the question's name reaches through the answer's CNAMEs. */
struct chain {
	char names[CHAIN_MAX][SUP_DNS_NAME_MAX];
	size_t n;
};

static bool in_chain(const struct chain *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->names[i], name) == 0)
			return true;
	return false;
}

/* One pass over the answer section adding the targets of CNAMEs whose
 * owner is in |c|; *grew says whether it added any. -EINVAL on a
 * malformed record, -E2BIG when the chain grows past CHAIN_MAX. */
static int chain_pass(const uint8_t *msg, size_t len, size_t start, unsigned count, struct chain *c,
		      bool *grew)
{
	size_t at = start;
	*grew = false;
	for (unsigned i = 0; i < count; i++) {
		struct rr rr;
		if (read_rr(msg, len, &at, &rr) < 0)
			return -EINVAL;
		if (rr.type != SUP_DNS_T_CNAME || rr.class != CLASS_IN || !rr.plain ||
		    !in_chain(c, rr.owner))
			continue;
		char target[SUP_DNS_NAME_MAX];
		size_t end;
		bool plain;
		if (read_name(msg, len, rr.rdata, target, &end, &plain) < 0 ||
		    end != rr.rdata + rr.rdlen)
			return -EINVAL;
		if (!plain || in_chain(c, target))
			continue;
		if (c->n >= CHAIN_MAX)
			return -E2BIG;
		strcpy(c->names[c->n++], target);
		*grew = true;
	}
	return 0;
}

static void collect(const uint8_t *msg, size_t len, size_t start, unsigned count,
		    const struct chain *c, struct sup_dns_answer *a)
{
	size_t at = start;
	for (unsigned i = 0; i < count; i++) {
		struct rr rr;
		if (read_rr(msg, len, &at, &rr) < 0) {
			a->partial = true;
			return;
		}
		if (rr.class != CLASS_IN || !rr.plain || !in_chain(c, rr.owner))
			continue;
		int family;
		if (rr.type == SUP_DNS_T_A && rr.rdlen == 4)
			family = AF_INET;
		else if (rr.type == SUP_DNS_T_AAAA && rr.rdlen == 16)
			family = AF_INET6;
		else
			continue;
		if (a->naddrs == SUP_DNS_MAX_ADDRS) {
			a->partial = true;
			return;
		}
		a->addrs[a->naddrs].family = family;
		memset(a->addrs[a->naddrs].addr, 0, 16);
		memcpy(a->addrs[a->naddrs].addr, msg + rr.rdata, rr.rdlen);
		a->naddrs++;
	}
}

int sup_dns_parse_answer(const uint8_t *msg, size_t len, const struct sup_dns_question *q,
			 struct sup_dns_answer *a)
{
	memset(a, 0, sizeof(*a));
	struct sup_dns_question rq;
	uint16_t flags;
	if (read_question(msg, len, &rq, &flags) < 0 || !(flags & FLAG_QR))
		return -EINVAL;
	/* The answer to this query and no other: same id, same question. The
	 * name compares without case (a resolver may randomise it). */
	if (rq.id != q->id || rq.qtype != q->qtype || rq.qclass != q->qclass ||
	    strcmp(rq.name, q->name) != 0 || rq.plain != q->plain)
		return -EINVAL;
	a->rcode = RCODE(flags);
	a->tc = (flags & FLAG_TC) != 0;
	if (a->rcode != 0 || !q->plain || q->qclass != CLASS_IN)
		return 0;
	/* A count beyond the records there are is found by read_rr: every
	 * read is bounded by |len|. */
	unsigned count = get16(msg + 6);
	struct chain *c = &(struct chain){.n = 1};
	strcpy(c->names[0], q->name);
	/* A chain written in any order is found in at most CHAIN_MAX passes;
	 * each pass reads the section once. */
	for (int pass = 0; pass < CHAIN_MAX; pass++) {
		bool grew;
		if (chain_pass(msg, len, rq.end, count, c, &grew) < 0) {
			/* A malformed answer section gives nothing. */
			a->partial = true;
			return 0;
		}
		if (!grew)
			break;
	}
	collect(msg, len, rq.end, count, c, a);
	return 0;
}

size_t sup_dns_error(const uint8_t *msg, const struct sup_dns_question *q, int rcode, uint8_t *out)
{
	memcpy(out, msg, q->end);
	out[0] = (uint8_t)(q->id >> 8);
	out[1] = (uint8_t)q->id;
	out[2] = (uint8_t)(0x80 | (msg[2] & 0x79)); /* QR, the opcode, RD */
	out[3] = (uint8_t)(0x80 | (rcode & 0xf));   /* RA */
	memset(out + 6, 0, 6);			    /* no answer, authority, additional */
	return q->end;
}

bool sup_dns_metadata_name(const char *name)
{
	return pol_net_metadata_name(name);
}
