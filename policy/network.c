/*
 * network.c: the connect request (an IPv4 or IPv6 destination), the
 * grammar of the config's network entries, and the decision of a
 * connection: hard deny (cloud metadata, the host's own services), the
 * config's network.deny, grants, network.allow (the fast path), the
 * harness's own API endpoint, otherwise undecided.
 *
 * Pure: the supervisor hands in what the kernel said (the address read
 * from the stopped caller, whether the kernel routes it to this host) and
 * the names the session saw resolve to it; nothing here resolves a name,
 * opens a socket or reads a clock. An IPv4 address mapped into IPv6
 * (::ffff:a.b.c.d) is the IPv4 address: it is stored, shown and decided
 * as such, so that no entry, grant or hard deny can be dodged by writing
 * it the other way.
 *
 * Names are the session's record of what resolved to the address, which
 * the agent influences only through DNS answers for names it queried: a
 * deny entry refuses when ANY name of the address matches it; an allow
 * entry or a grant allows when one name does. A literal address entry
 * matches the address only. The host's own services (loopback, its own
 * interfaces) open only to an entry naming the address literally: a name
 * that resolves to 127.0.0.1 opens nothing.
 *
 * See docs/design.md, section "The network".
 */
#include "config_int.h"
#include "memory_int.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define NET_NAME_MAX  253
#define NET_ENTRY_MAX 300

/* ---- addresses ------------------------------------------------------------------ */

static const uint8_t v4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

/* Whether the first |bits| bits of |a| and |b| are equal. */
static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	size_t whole = bits / 8;
	if (memcmp(a, b, whole) != 0)
		return false;
	unsigned rest = bits % 8;
	if (!rest)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[whole] & mask) == (b[whole] & mask);
}

/* Whether any bit of |a| (|len| bytes) after the first |bits| is set. */
static bool host_bits_set(const uint8_t *a, size_t len, unsigned bits)
{
	for (size_t i = 0; i < len; i++) {
		unsigned lo = (unsigned)i * 8;
		uint8_t mask = lo >= bits	? 0xff
			       : lo + 8 <= bits ? 0
						: (uint8_t)(0xff >> (bits - lo));
		if (a[i] & mask)
			return true;
	}
	return false;
}

static bool is_loopback(int family, const uint8_t *a)
{
	static const uint8_t one[16] = {[15] = 1};
	return family == AF_INET ? a[0] == 127 : memcmp(a, one, 16) == 0;
}

/* 0.0.0.0/8 ("this network") and ::: the kernel connects them to this
 * host. */
static bool is_unspecified(int family, const uint8_t *a)
{
	static const uint8_t zero[16];
	return family == AF_INET ? a[0] == 0 : memcmp(a, zero, 16) == 0;
}

/* Multicast (224.0.0.0/4, ff00::/8) and the broadcast address: what is
 * sent there reaches this host's own listeners too. */
static bool is_group(int family, const uint8_t *a)
{
	static const uint8_t bcast[4] = {255, 255, 255, 255};
	if (family == AF_INET)
		return (a[0] & 0xf0) == 0xe0 || memcmp(a, bcast, 4) == 0;
	return a[0] == 0xff;
}

static void addr_text(int family, const uint8_t *a, char *buf, size_t n)
{
	if (!inet_ntop(family, a, buf, (socklen_t)n))
		snprintf(buf, n, "?");
}

/* |a| as HOST:PORT text: "10.0.0.1:443", "[::1]:443". */
static void addr_port_text(int family, const uint8_t *a, uint16_t port, char *buf, size_t n)
{
	char t[INET6_ADDRSTRLEN];
	addr_text(family, a, t, sizeof(t));
	snprintf(buf, n, family == AF_INET6 ? "[%s]:%u" : "%s:%u", t, port);
}

/* ---- cloud metadata ------------------------------------------------------------- */

static const char *const metadata_names[] = {
	"metadata.google.internal",   "metadata.goog", "metadata", "instance-data",
	"instance-data.ec2.internal",
};

/* |name| lower-cased with one final '.' dropped into |buf| (|n| bytes):
 * false when it does not fit. */
static bool name_fold(const char *name, char *buf, size_t n)
{
	size_t l = strlen(name);
	if (l && name[l - 1] == '.')
		l--;
	if (l >= n)
		return false;
	for (size_t i = 0; i < l; i++)
		buf[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
	buf[l] = '\0';
	return true;
}

bool pol_net_metadata_name(const char *name)
{
	char low[NET_NAME_MAX + 2];
	if (!name || !name_fold(name, low, sizeof(low)))
		return false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(metadata_names); i++)
		if (strcmp(low, metadata_names[i]) == 0)
			return true;
	return false;
}

/* Why the IPv4 address |a| is a metadata address, or NULL. */
static const char *metadata_v4(const uint8_t *a)
{
	if (a[0] == 169 && a[1] == 254) {
		if ((a[2] == 169 && a[3] == 254) || (a[2] == 170 && a[3] == 2))
			return "a cloud metadata address: it hands out the machine's credentials";
		return "a link-local address (169.254.0.0/16), where clouds serve the machine's "
		       "metadata and credentials";
	}
	if (a[0] == 100 && a[1] == 100 && a[2] == 100 && a[3] == 200)
		return "Alibaba Cloud's metadata address: it hands out the machine's credentials";
	return NULL;
}

/* Why the address is a cloud metadata address (its own or through NAT64),
 * or NULL; *embedded gets the IPv4 address a NAT64 one carries. */
static const char *metadata_addr(int family, const uint8_t *a, const uint8_t **embedded)
{
	/* fd00:ec2::254 (AWS), fd20:ce::254 (Google Cloud), fd00:c1::a9fe:a9fe
	 * (Oracle Cloud) */
	static const uint8_t v6[][16] = {
		{0xfd, 0, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54},
		{0xfd, 0x20, 0, 0xce, [14] = 0x02, [15] = 0x54},
		{0xfd, 0, 0, 0xc1, [12] = 0xa9, [13] = 0xfe, [14] = 0xa9, [15] = 0xfe},
	};
	static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b};
	static const uint8_t nat64_local[6] = {0, 0x64, 0xff, 0x9b, 0, 1};
	*embedded = NULL;
	if (family == AF_INET)
		return metadata_v4(a);
	for (size_t i = 0; i < WD_ARRAY_SIZE(v6); i++)
		if (memcmp(a, v6[i], 16) == 0)
			return "a cloud's IPv6 metadata address: it hands out the machine's "
			       "credentials";
	/* NAT64 (64:ff9b::/96, and the local-use 64:ff9b:1::/48 with the
	 * address in its last 32 bits): the gateway connects to the IPv4
	 * address inside, its own metadata service among them. */
	if (memcmp(a, nat64, 12) == 0 || memcmp(a, nat64_local, 6) == 0) {
		const char *why = metadata_v4(a + 12);
		if (why)
			*embedded = a + 12;
		return why;
	}
	return NULL;
}

/* ---- entries -------------------------------------------------------------------- */

enum ne_type {
	NE_ANY,	      /* "*" */
	NE_NAME,      /* github.com */
	NE_BELOW,     /* *.npmjs.org: names strictly below */
	NE_ADDR,      /* an address or CIDR */
	NE_LOCALHOST, /* 127.0.0.0/8 and ::1 */
};

struct net_entry {
	enum ne_type type;
	char name[NET_NAME_MAX + 1]; /* NE_NAME, NE_BELOW: lower case, no final dot */
	int family;		     /* NE_ADDR */
	uint8_t addr[16];
	unsigned prefix;   /* NE_ADDR: bits that count */
	uint16_t port;	   /* 0: any port */
	bool port_written; /* ":PORT" or ":*" was written */
};

/* A DNS name: labels of letters, digits and '-' (not at either end), 1-63
 * bytes each, 253 in all, one final '.' allowed; the last label not all
 * digits (that reads as an address). Lower-cased into |out|. */
static const char *name_parse(const char *s, size_t len, char *out)
{
	if (len && s[len - 1] == '.')
		len--;
	if (len == 0)
		return "the name is empty; write a host such as github.com";
	if (len > NET_NAME_MAX)
		return "the name is longer than 253 characters";
	size_t label = 0;
	bool digits = true;
	for (size_t i = 0; i <= len; i++) {
		char ch = i < len ? s[i] : '.';
		if (ch == '.') {
			if (label == 0)
				return "the name has an empty label (\"..\" or a leading dot)";
			if (s[i - 1] == '-')
				return "a label of the name ends with '-'";
			if (i == len && digits)
				return "the name's last label is all digits, which reads as an "
				       "address; write an IPv4 address as four numbers (10.0.0.1)";
			out[i] = '.';
			label = 0;
			digits = true;
			continue;
		}
		bool alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
		bool digit = ch >= '0' && ch <= '9';
		if (ch == '*')
			return "a wildcard is \"*\" alone or \"*.\" before a name (*.npmjs.org)";
		if (!alpha && !digit && ch != '-')
			return "a name has only letters, digits, '-' and '.'";
		if (ch == '-' && label == 0)
			return "a label of the name starts with '-'";
		if (++label > 63)
			return "a label of the name is longer than 63 characters";
		digits &= digit;
		out[i] = alpha ? (char)(ch | 0x20) : ch;
	}
	out[len] = '\0';
	return NULL;
}

/* A decimal number from |lo| to |hi|, digits only. */
static bool number_parse(const char *s, size_t len, unsigned lo, unsigned hi, unsigned *out)
{
	if (len == 0 || len > 5 || (len > 1 && s[0] == '0'))
		return false;
	unsigned v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* An address with an optional "/len" (|s|, |len| bytes) of |family|. */
static const char *addr_parse(const char *s, size_t len, int family, struct net_entry *e)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = memchr(s, '/', len);
	size_t alen = slash ? (size_t)(slash - s) : len;
	unsigned max = family == AF_INET ? 32 : 128;
	if (alen >= INET6_ADDRSTRLEN)
		return family == AF_INET ? "not an IPv4 address (four numbers 0-255: 10.0.0.1)"
					 : "not an IPv6 address";
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	if (inet_pton(family, buf, e->addr) != 1)
		return family == AF_INET ? "not an IPv4 address (four numbers 0-255: 10.0.0.1)"
					 : "not an IPv6 address";
	e->prefix = max;
	if (slash && !number_parse(slash + 1, len - alen - 1, 0, max, &e->prefix))
		return family == AF_INET ? "the prefix after '/' is a number from 0 to 32"
					 : "the prefix after '/' is a number from 0 to 128";
	if (host_bits_set(e->addr, addr_len(family), e->prefix))
		return "the address has bits set below its /prefix; write the network's first "
		       "address (10.0.0.0/8, [fd00::/8])";
	e->type = NE_ADDR;
	e->family = family;
	/* ::ffff:a.b.c.d is a.b.c.d: requests are decided as IPv4. */
	if (family == AF_INET6 && e->prefix >= 96 && memcmp(e->addr, v4_mapped_prefix, 12) == 0) {
		memmove(e->addr, e->addr + 12, 4);
		memset(e->addr + 4, 0, 12);
		e->family = AF_INET;
		e->prefix -= 96;
	}
	return NULL;
}

/* The host part of an entry without brackets. */
static const char *host_parse(const char *s, size_t len, struct net_entry *e)
{
	char low[16];
	if (len == 0)
		return "the host before ':' is empty; write a host such as github.com";
	if (len == 1 && s[0] == '*') {
		e->type = NE_ANY;
		return NULL;
	}
	if (len >= 2 && s[0] == '*' && s[1] == '.') {
		e->type = NE_BELOW;
		if (len == 2)
			return "\"*.\" needs a name after it (*.npmjs.org)";
		return name_parse(s + 2, len - 2, e->name);
	}
	if (len < sizeof(low)) {
		memcpy(low, s, len);
		low[len] = '\0';
		if (name_fold(low, low, sizeof(low)) && strcmp(low, "localhost") == 0) {
			e->type = NE_LOCALHOST;
			return NULL;
		}
	}
	const char *slash = memchr(s, '/', len);
	size_t before = slash ? (size_t)(slash - s) : len;
	if (strspn(s, "0123456789.") >= before && before > 0)
		return addr_parse(s, len, AF_INET, e);
	if (slash)
		return "'/' belongs only to a CIDR (10.0.0.0/8); write the host alone, without a "
		       "path";
	e->type = NE_NAME;
	return name_parse(s, len, e->name);
}

/* Parses |s| into |e|: NULL, or why it is not an entry (static). */
static const char *entry_parse(const char *s, struct net_entry *e)
{
	memset(e, 0, sizeof(*e));
	if (!s || !s[0])
		return "the entry is empty; write a host such as github.com";
	size_t len = strlen(s);
	if (len > NET_ENTRY_MAX)
		return "the entry is longer than 300 characters";
	if (strstr(s, "://"))
		return "write the host without a scheme (github.com, not https://github.com)";
	const char *port = NULL;
	const char *why;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close)
			return "an IPv6 address opened with '[' needs its ']'";
		why = addr_parse(s + 1, (size_t)(close - s - 1), AF_INET6, e);
		if (why)
			return why;
		if (close[1] && close[1] != ':')
			return "after ']' comes nothing or :PORT";
		port = close[1] ? close + 2 : NULL;
	} else {
		const char *colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':'))
			return "an IPv6 address is written in brackets: [::1]:8080, [fd00::/8]";
		why = host_parse(s, colon ? (size_t)(colon - s) : len, e);
		if (why)
			return why;
		port = colon ? colon + 1 : NULL;
	}
	if (port) {
		unsigned p = 0;
		e->port_written = true;
		if (strcmp(port, "*") != 0 && !number_parse(port, strlen(port), 1, 65535, &p))
			return "the port after ':' is a number from 1 to 65535, or *";
		e->port = (uint16_t)p;
	}
	return NULL;
}

bool pol_net_entry_valid(const char *entry, const char **why)
{
	struct net_entry e;
	const char *w = entry_parse(entry, &e);
	if (why)
		*why = w;
	return w == NULL;
}

/* Whether |e| (a name entry) matches the folded name |name|. */
static bool entry_names(const struct net_entry *e, const char *name)
{
	if (e->type == NE_NAME)
		return strcmp(e->name, name) == 0;
	if (e->type == NE_BELOW) {
		size_t nl = strlen(name), sl = strlen(e->name);
		return nl > sl + 1 && name[nl - sl - 1] == '.' &&
		       strcmp(name + nl - sl, e->name) == 0;
	}
	return e->type == NE_LOCALHOST && strcmp(name, "localhost") == 0;
}

/* Whether |e| names the address of |r| literally (an address, a CIDR,
 * localhost): what opens the host's own services. */
static bool entry_literal(const struct net_entry *e, const struct pol_request *r)
{
	if (e->type == NE_LOCALHOST)
		return is_loopback(r->net_family, r->net_addr);
	return e->type == NE_ADDR && e->family == r->net_family &&
	       prefix_equal(e->addr, r->net_addr, e->prefix);
}

static bool entry_port(const struct net_entry *e, const struct pol_request *r)
{
	return e->port == 0 || e->port == r->net_port;
}

/* What of |r| the entry |e| matches (the address as text, or a name), or
 * NULL. |literal|: only an entry that names the address, localhost or a
 * network does; 0.0.0.0/0 and [::/0] mean "anywhere", as "*" does, and
 * open none of the host's own services. */
static const char *entry_matches(const struct net_entry *e, const struct pol_request *r,
				 bool literal)
{
	if (!entry_port(e, r))
		return NULL;
	if (literal) {
		bool anywhere = e->type == NE_ADDR && e->prefix == 0;
		return !anywhere && entry_literal(e, r) ? r->net_address : NULL;
	}
	if (entry_literal(e, r))
		return r->net_address;
	if (e->type == NE_ANY)
		return r->net_address;
	for (size_t i = 0; r->net_names[i]; i++)
		if (entry_names(e, r->net_names[i]))
			return r->net_names[i];
	return NULL;
}

/* The first of the |n| entries |list| matching |r|: its index, with what
 * matched in *what; -1 when none. */
static long list_match(char *const *list, size_t n, const struct pol_request *r, bool literal,
		       const char **what)
{
	for (size_t i = 0; i < n; i++) {
		struct net_entry e;
		if (entry_parse(list[i], &e))
			continue; /* the parser refused it: never in a config */
		const char *m = entry_matches(&e, r, literal);
		if (m) {
			*what = m;
			return (long)i;
		}
	}
	return -1;
}

/* ---- the request ---------------------------------------------------------------- */

const char *pol_net_proto_name(enum pol_net_proto p)
{
	switch (p) {
	case POL_NET_TCP:
		return "tcp";
	case POL_NET_UDP:
		return "udp";
	case POL_NET_OTHER:
		return "other";
	}
	return "other";
}

static const char *const syscalls[] = {"connect", "sendto", "sendmsg", "sendmmsg"};

struct pol_request *pol_request_connect(const struct pol_connect_desc *d)
{
	if (!d || (d->family != AF_INET && d->family != AF_INET6)) {
		errno = EINVAL;
		return NULL;
	}
	struct pol_request *r = wd_calloc(1, sizeof(*r));
	r->kind = POL_CONNECT;
	/* The syscall's name is shown: only the four known words. */
	r->net_syscall = wd_strdup(syscalls[0]);
	for (size_t i = 0; d->syscall && i < WD_ARRAY_SIZE(syscalls); i++)
		if (strcmp(d->syscall, syscalls[i]) == 0) {
			free(r->net_syscall);
			r->net_syscall = wd_strdup(syscalls[i]);
		}
	r->net_family = d->family;
	memcpy(r->net_addr, d->addr, addr_len(d->family));
	if (d->family == AF_INET6 && memcmp(d->addr, v4_mapped_prefix, 12) == 0) {
		r->net_family = AF_INET;
		memset(r->net_addr, 0, sizeof(r->net_addr));
		memcpy(r->net_addr, d->addr + 12, 4);
	}
	r->net_port = d->port;
	r->net_proto =
		d->proto == POL_NET_TCP || d->proto == POL_NET_UDP ? d->proto : POL_NET_OTHER;
	/* Only names that are names: nothing else reaches a summary, a
	 * terminal or the judge, and every name compares folded. */
	r->net_names = wd_calloc(1, sizeof(char *));
	for (size_t i = 0; d->names && d->names[i]; i++) {
		char buf[NET_NAME_MAX + 1];
		bool dup = false;
		if (name_parse(d->names[i], strlen(d->names[i]), buf) != NULL)
			continue;
		for (size_t k = 0; r->net_names[k]; k++)
			dup |= strcmp(r->net_names[k], buf) == 0;
		if (!dup)
			wd_strv_push(&r->net_names, buf);
	}
	/* Multicast and broadcast count as local whatever the kernel's bind
	 * said: the host's own listeners hear them (a bind of ff02::1 with no
	 * scope fails, yet a send to it with one reaches a service on ::). */
	r->net_local = d->local || is_loopback(r->net_family, r->net_addr) ||
		       is_unspecified(r->net_family, r->net_addr) ||
		       is_group(r->net_family, r->net_addr);
	r->net_harness = d->harness;
	char t[INET6_ADDRSTRLEN];
	addr_text(r->net_family, r->net_addr, t, sizeof(t));
	r->net_address = wd_strdup(t);
	if (r->net_names[0])
		r->net_dest = wd_asprintf("%s:%u", r->net_names[0], r->net_port);
	else
		r->net_dest = wd_asprintf(r->net_family == AF_INET6 ? "[%s]:%u" : "%s:%u", t,
					  r->net_port);
	r->cmdline = d->cmdline ? wd_strdup(d->cmdline) : NULL;
	r->cwd_abs = d->cwd ? wd_strdup(d->cwd) : NULL;
	return r;
}

const char *pol_request_destination(const struct pol_request *r)
{
	return r && r->kind == POL_CONNECT ? r->net_dest : NULL;
}

void pol_connect_copy(struct pol_request *c, const struct pol_request *r)
{
	c->net_syscall = r->net_syscall ? wd_strdup(r->net_syscall) : NULL;
	c->net_family = r->net_family;
	memcpy(c->net_addr, r->net_addr, sizeof(c->net_addr));
	c->net_port = r->net_port;
	c->net_proto = r->net_proto;
	c->net_names = r->net_names ? wd_strv_dup(r->net_names, NULL) : NULL;
	c->net_local = r->net_local;
	c->net_harness = r->net_harness;
	c->net_address = r->net_address ? wd_strdup(r->net_address) : NULL;
	c->net_dest = r->net_dest ? wd_strdup(r->net_dest) : NULL;
}

void pol_connect_json(struct wd_sb *sb, const struct pol_request *r)
{
	wd_sb_puts(sb, "{\"syscall\":");
	pol_json_str(sb, r->net_syscall);
	wd_sb_puts(sb, ",\"destination\":");
	pol_json_str(sb, r->net_dest);
	wd_sb_puts(sb, ",\"address\":");
	pol_json_str(sb, r->net_address);
	wd_sb_printf(sb, ",\"port\":%u,\"protocol\":", r->net_port);
	pol_json_str(sb, pol_net_proto_name(r->net_proto));
	wd_sb_puts(sb, ",\"names\":[");
	for (size_t i = 0; r->net_names[i]; i++) {
		if (i)
			wd_sb_putc(sb, ',');
		pol_json_str(sb, r->net_names[i]);
	}
	wd_sb_puts(sb, "],\"command\":");
	pol_json_redacted(sb, r->cmdline);
	wd_sb_putc(sb, '}');
}

void pol_connect_summary(struct wd_sb *sb, const struct pol_request *r)
{
	switch (r->net_proto) {
	case POL_NET_TCP:
		wd_sb_puts(sb, "connect ");
		break;
	case POL_NET_UDP:
		wd_sb_puts(sb, "send udp ");
		break;
	case POL_NET_OTHER:
		wd_sb_puts(sb, "connect other ");
		break;
	}
	wd_sb_puts(sb, r->net_dest);
	if (r->net_names[0])
		wd_sb_printf(sb, " (%s)", r->net_address);
	else
		wd_sb_puts(sb, " (no name resolved)");
}

/* ---- grants --------------------------------------------------------------------- */

/* "Always for this host": the newest name, or the address when unnamed. */
static const char *host_of(const struct pol_request *r)
{
	return r->net_names[0] ? r->net_names[0] : r->net_address;
}

/* Whether |host| (a grant's) is the address of |r| or one of its names. */
static bool host_covers(const char *host, const struct pol_request *r)
{
	if (!host)
		return false;
	if (strcmp(host, r->net_address) == 0)
		return true;
	for (size_t i = 0; r->net_names[i]; i++)
		if (strcmp(host, r->net_names[i]) == 0)
			return true;
	return false;
}

/* A session grant |a| covers |b| when its host is |b|'s address or one of
 * its names, on any port and protocol: the grant is for the host. */
bool pol_connect_same(const struct pol_request *a, const struct pol_request *b)
{
	return host_covers(host_of(a), b);
}

bool pol_connect_grant_matches(const struct pol_grant *g, const struct pol_request *r)
{
	return g->host && host_covers(g->host, r);
}

int pol_connect_to_grant(const struct pol_request *r, struct pol_grant *g)
{
	g->host = wd_strdup(host_of(r));
	return 0;
}

int pol_net_host_canon(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return -EINVAL;
	uint8_t a[16];
	char t[INET6_ADDRSTRLEN];
	if (inet_pton(AF_INET, s, a) == 1) {
		addr_text(AF_INET, a, t, sizeof(t));
	} else if (inet_pton(AF_INET6, s, a) == 1) {
		bool mapped = memcmp(a, v4_mapped_prefix, 12) == 0;
		addr_text(mapped ? AF_INET : AF_INET6, mapped ? a + 12 : a, t, sizeof(t));
	} else {
		char name[NET_NAME_MAX + 1];
		if (strspn(s, "0123456789.") == strlen(s) || name_parse(s, strlen(s), name))
			return -EINVAL;
		*out = wd_strdup(name);
		return 0;
	}
	*out = wd_strdup(t);
	return 0;
}

/* ---- rules ---------------------------------------------------------------------- */

/* The config's "rules" are command and path rules: none names a
 * destination, so none matches a connect. Destinations have their own
 * lists ("network": {"allow", "deny"}). */
bool pol_connect_rule_matches(const struct pol_rule *ru, const struct pol_request *r,
			      const struct pol_config *c, bool deep)
{
	(void)ru;
	(void)r;
	(void)c;
	(void)deep;
	return false;
}

/* ---- approval memory ------------------------------------------------------------ */

bool pol_net_json_is_connect(const cJSON *root)
{
	return cJSON_IsObject(root) && !cJSON_GetObjectItemCaseSensitive(root, "kind") &&
	       cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "syscall")) &&
	       cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "destination"));
}

/* {"host": newest name or address, "port": N, "protocol": "tcp"}, tool
 * "connect". */
cJSON *pol_mem_connect_args(const cJSON *root, char **tool)
{
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(root, "names");
	const cJSON *address = cJSON_GetObjectItemCaseSensitive(root, "address");
	const cJSON *port = cJSON_GetObjectItemCaseSensitive(root, "port");
	const cJSON *proto = cJSON_GetObjectItemCaseSensitive(root, "protocol");
	const cJSON *first = cJSON_IsArray(names) ? names->child : NULL;
	const cJSON *host = cJSON_IsString(first) ? first : address;
	if (!cJSON_IsString(host) || !cJSON_IsNumber(port) || !cJSON_IsString(proto))
		return NULL;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "host", host->valuestring);
	cJSON_AddNumberToObject(a, "port", port->valuedouble);
	cJSON_AddStringToObject(a, "protocol", proto->valuestring);
	*tool = wd_strdup("connect");
	return a;
}

/* ---- deciding ------------------------------------------------------------------- */

/* The harness endpoint matching |r|, or NULL. */
static const char *harness_endpoint(const struct pol_request *r, const struct pol_config *c,
				    bool literal)
{
	if (!r->net_harness || !c)
		return NULL;
	const char *what;
	long i = list_match(c->harness_ep, c->nharness_ep, r, literal, &what);
	return i < 0 ? NULL : c->harness_ep[i];
}

/* Cloud metadata, by address or by any name. */
static bool hard_deny_metadata(const struct pol_request *r, const char *ap,
			       struct pol_decision *out)
{
	const uint8_t *inner;
	const char *why = metadata_addr(r->net_family, r->net_addr, &inner);
	if (why && inner) {
		char t[INET_ADDRSTRLEN];
		addr_text(AF_INET, inner, t, sizeof(t));
		pol_decision_set(out, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, r->net_address,
				 "%s is the NAT64 form of %s, %s", r->net_address, t, why);
		return true;
	}
	if (why) {
		pol_decision_set(out, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, r->net_address,
				 "%s is %s", r->net_address, why);
		return true;
	}
	for (size_t i = 0; r->net_names[i]; i++) {
		if (pol_net_metadata_name(r->net_names[i])) {
			pol_decision_set(
				out, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, r->net_names[i],
				"%s (%s) is named %s, a cloud metadata name: its service hands out "
				"the machine's credentials",
				ap, r->net_address, r->net_names[i]);
			return true;
		}
	}
	return false;
}

/* Hard deny: cloud metadata; then this host's own services, unless an
 * allow entry names the address literally or the harness's own process
 * reaches its endpoint. */
static bool hard_deny(const struct pol_request *r, const struct pol_config *c,
		      struct pol_decision *out)
{
	char ap[INET6_ADDRSTRLEN + 8];
	addr_port_text(r->net_family, r->net_addr, r->net_port, ap, sizeof(ap));
	if (hard_deny_metadata(r, ap, out))
		return true;
	if (!r->net_local)
		return false;
	const char *what;
	if (c && list_match(c->net_allow, c->nnet_allow, r, true, &what) >= 0)
		return false;
	if (harness_endpoint(r, c, false))
		return false;
	const char *hint = "list it in network.allow of .warden/permissions.json to allow it";
	const char *is = is_loopback(r->net_family, r->net_addr)
				 ? "is this host's own service on loopback"
			 : is_group(r->net_family, r->net_addr)
				 ? "is a multicast or broadcast address, which this host's own "
				   "services hear too"
			 : is_unspecified(r->net_family, r->net_addr)
				 ? "reaches this host's own services (an unspecified address)"
				 : "is this host's own address, where its own services listen";
	pol_decision_set(out, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, r->net_address, "%s %s; %s", ap,
			 is, hint);
	return true;
}

/* Session grants, project grants, accepted rules. */
static bool grants(const struct pol_request *r, const struct pol_config *c,
		   const struct pol_session *s, int64_t now_us, struct pol_decision *out)
{
	const struct pol_request *g = pol_session_covering(s, r);
	if (g) {
		pol_decision_set(out, POL_ALLOW, POL_SRC_SESSION_GRANT, "session",
				 "you allowed connections to %s for the rest of the session",
				 host_of(g));
		return true;
	}
	char m[32];
	for (size_t i = 0; c && i < c->ngrants; i++) {
		if (pol_connect_grant_matches(&c->grants[i], r)) {
			snprintf(m, sizeof(m), "grants[%zu]", i);
			pol_decision_set(out, POL_ALLOW, POL_SRC_GRANT, m,
					 "a project grant by %.60s allows connections to %s",
					 c->grants[i].by ? c->grants[i].by : "someone",
					 c->grants[i].host);
			return true;
		}
	}
	size_t k;
	if (pol_accepted_covers(c, r, now_us, &k)) {
		snprintf(m, sizeof(m), "accepted_rules[%zu]", k);
		pol_decision_set(out, POL_ALLOW, POL_SRC_ACCEPTED_RULE, m,
				 "accepted rule %zu (by %.60s) covers exactly this", k,
				 c->accepted[k].by ? c->accepted[k].by : "someone");
		return true;
	}
	return false;
}

/*
 * The order is policy.h's: hard deny; network.deny; grants; network.allow
 * (the fast path); the harness's endpoint; undecided. |ctx| does not
 * apply: an allowed command's tree is covered for what it runs, not for
 * where it connects, and a review run's rule (no judge, no person) is the
 * supervisor's.
 */
void pol_connect_decide(const struct pol_request *r, const struct pol_config *c,
			const struct pol_session *s, const struct pol_context *ctx, int64_t now_us,
			struct pol_decision *out)
{
	(void)ctx;
	if (hard_deny(r, c, out))
		return;
	const char *what = NULL;
	char m[48];
	long i = c ? list_match(c->net_deny, c->nnet_deny, r, false, &what) : -1;
	if (i >= 0) {
		snprintf(m, sizeof(m), "network.deny[%ld]", i);
		pol_decision_set(out, POL_DENY, POL_SRC_RULE, m,
				 "the project config's network.deny entry \"%s\" matches %s",
				 c->net_deny[i], what);
		return;
	}
	if (grants(r, c, s, now_us, out))
		return;
	i = c ? list_match(c->net_allow, c->nnet_allow, r, false, &what) : -1;
	if (i >= 0) {
		snprintf(m, sizeof(m), "network.allow[%ld]", i);
		pol_decision_set(out, POL_ALLOW, POL_SRC_FAST_PATH, m,
				 "the project config's network.allow entry \"%s\" matches %s",
				 c->net_allow[i], what);
		return;
	}
	const char *ep = harness_endpoint(r, c, false);
	if (ep) {
		pol_decision_set(
			out, POL_ALLOW, POL_SRC_HARNESS, ep,
			"%s is the agent harness's own API endpoint (%s), reached by the harness's "
			"own process",
			r->net_dest, ep);
		return;
	}
	pol_decision_set(
		out, POL_UNDECIDED, POL_SRC_NONE, "",
		"%s is a destination no entry of network.allow in .warden/permissions.json names",
		r->net_dest);
}

/* ---- the config ----------------------------------------------------------------- */

size_t pol_config_net_allow_count(const struct pol_config *c)
{
	return c ? c->nnet_allow : 0;
}

const char *pol_config_net_allow(const struct pol_config *c, size_t i)
{
	return c && i < c->nnet_allow ? c->net_allow[i] : NULL;
}

size_t pol_config_net_deny_count(const struct pol_config *c)
{
	return c ? c->nnet_deny : 0;
}

const char *pol_config_net_deny(const struct pol_config *c, size_t i)
{
	return c && i < c->nnet_deny ? c->net_deny[i] : NULL;
}

int pol_config_add_harness_endpoint(struct pol_config *c, const char *entry)
{
	struct net_entry e;
	if (!c || entry_parse(entry, &e))
		return -EINVAL;
	/* One host and one port: an endpoint is where the harness's API is,
	 * never a pattern. */
	if (e.type == NE_ANY || e.type == NE_BELOW ||
	    (e.type == NE_ADDR && e.prefix != (e.family == AF_INET ? 32u : 128u)) ||
	    (e.port_written && e.port == 0))
		return -EINVAL;
	char *ep = e.port_written ? wd_strdup(entry) : wd_asprintf("%s:443", entry);
	for (size_t i = 0; i < c->nharness_ep; i++)
		if (strcmp(c->harness_ep[i], ep) == 0) {
			free(ep);
			return 0;
		}
	c->harness_ep = wd_realloc(c->harness_ep, (c->nharness_ep + 2) * sizeof(char *));
	c->harness_ep[c->nharness_ep++] = ep;
	c->harness_ep[c->nharness_ep] = NULL;
	return 0;
}

size_t pol_config_harness_endpoint_count(const struct pol_config *c)
{
	return c ? c->nharness_ep : 0;
}

const char *pol_config_harness_endpoint(const struct pol_config *c, size_t i)
{
	return c && i < c->nharness_ep ? c->harness_ep[i] : NULL;
}

/* One network entry of the config, checked. */
static char *take_entry(struct parser *p, const char *s, const char *ep, const void *arg)
{
	(void)arg;
	const char *why;
	if (!pol_net_entry_valid(s, &why)) {
		pol_cfg_error(p, ep, 0,
			      "\"%.60s\" is not a network entry: %s. Write a name (github.com), "
			      "*.suffix, *, an address or CIDR (10.0.0.0/8, [fd00::/8]), with an "
			      "optional :PORT",
			      s, why);
		return NULL;
	}
	return wd_strdup(s);
}

void pol_cfg_parse_network(struct parser *p, const cJSON *v, const char *kp)
{
	if (!pol_cfg_check_object(p, v, kp, "allow deny", "\"network\""))
		return;
	const cJSON *a = pol_cfg_get(v, "allow"), *d = pol_cfg_get(v, "deny");
	if (a) {
		wd_autofree char *ap = pol_cfg_child_path(kp, "allow");
		p->c->net_allow = pol_cfg_list(p, a, ap, "network entries", take_entry, NULL,
					       &p->c->nnet_allow);
	}
	if (d) {
		wd_autofree char *dp = pol_cfg_child_path(kp, "deny");
		p->c->net_deny = pol_cfg_list(p, d, dp, "network entries", take_entry, NULL,
					      &p->c->nnet_deny);
	}
}

/* ---- for lookups (net_lookup.c) ------------------------------------------------- */

bool pol_net_name_fold(const char *name, char *buf, size_t n)
{
	return name && name_fold(name, buf, n);
}

bool pol_net_entry_names(const char *entry, const char *low)
{
	struct net_entry e;
	if (entry_parse(entry, &e))
		return false; /* the parser refused it: never in a config */
	return e.type == NE_ANY || entry_names(&e, low);
}
