/*
 * test_policy_network.c: the connect request (policy/network.c): its JSON
 * and summary, the grammar of network entries, their matching, the
 * decision order (hard deny, network.deny, grants, network.allow, the
 * harness's endpoint, undecided), the config key "network" and connect
 * grants through the config's JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy.h"

/* ---- fixtures ------------------------------------------------------------------- */

struct want {
	const char *addr; /* IPv4 or IPv6 text */
	uint16_t port;
	const char *const *names;
	bool local;
	bool harness;
	enum pol_net_proto proto;
};

static struct pol_request *mk(const struct want *w)
{
	struct pol_connect_desc d = {
		.syscall = w->proto == POL_NET_UDP ? "sendto" : "connect",
		.port = w->port,
		.proto = w->proto,
		.names = w->names,
		.local = w->local,
		.harness = w->harness,
		.cmdline = "curl https://example.test/",
		.cwd = "/p",
	};
	d.family = strchr(w->addr, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(d.family, w->addr, d.addr), 1);
	struct pol_request *r = pol_request_connect(&d);
	assert_non_null(r);
	return r;
}

/* A request to |addr|:|port| named |name| (NULL: unnamed). */
static struct pol_request *to(const char *addr, uint16_t port, const char *name)
{
	const char *names[] = {name, NULL};
	struct want w = {.addr = addr, .port = port, .names = name ? names : NULL};
	return mk(&w);
}

static struct pol_config *cfg(const char *text)
{
	struct pol_config *c = NULL;
	struct pol_config_errors errs = {0};
	int rc = pol_config_parse(text, strlen(text), "permissions.json", &c, &errs);
	if (rc != 0)
		for (size_t i = 0; i < errs.count; i++)
			fprintf(stderr, "%s\n", errs.items[i].message);
	assert_int_equal(rc, 0);
	pol_config_errors_free(&errs);
	return c;
}

/* The one error a config text makes. */
static void cfg_error(const char *text, const char *want)
{
	struct pol_config *c = NULL;
	struct pol_config_errors errs = {0};
	assert_int_equal(pol_config_parse(text, strlen(text), "p.json", &c, &errs), -EINVAL);
	assert_null(c);
	assert_int_equal(errs.count, 1);
	if (!strstr(errs.items[0].message, want))
		fail_msg("error \"%s\" lacks \"%s\"", errs.items[0].message, want);
	pol_config_errors_free(&errs);
}

static struct pol_decision decide(const struct pol_request *r, const struct pol_config *c,
				  const struct pol_session *s)
{
	struct pol_decision d;
	pol_decide(r, c, s, NULL, 0, &d);
	return d;
}

static void expect(const struct pol_request *r, const struct pol_config *c, enum pol_verdict v,
		   enum pol_source src, const char *reason_part)
{
	struct pol_decision d = decide(r, c, NULL);
	if (d.verdict != v || d.source != src || (reason_part && !strstr(d.reason, reason_part)))
		fail_msg("%s: got %s/%s \"%s\", want %s/%s \"%s\"", pol_request_destination(r),
			 pol_verdict_name(d.verdict), pol_source_name(d.source), d.reason,
			 pol_verdict_name(v), pol_source_name(src), reason_part ? reason_part : "");
}

/* ---- the request ---------------------------------------------------------------- */

static void test_connect_json_and_summary(void **state)
{
	(void)state;
	const char *names[] = {"GitHub.com.", "gh.example", NULL};
	struct want w = {.addr = "140.82.112.3", .port = 443, .names = names};
	struct pol_request *r = mk(&w);
	assert_int_equal(pol_request_kind(r), POL_CONNECT);
	char *j = pol_request_json(r);
	assert_string_equal(j, "{\"syscall\":\"connect\",\"destination\":\"github.com:443\","
			       "\"address\":\"140.82.112.3\",\"port\":443,\"protocol\":\"tcp\","
			       "\"names\":[\"github.com\",\"gh.example\"],"
			       "\"command\":\"curl https://example.test/\"}");
	free(j);
	char *s = pol_request_summary(r);
	assert_string_equal(s, "connect github.com:443 (140.82.112.3)");
	free(s);
	assert_string_equal(pol_request_destination(r), "github.com:443");
	pol_request_free(r);

	r = to("140.82.112.3", 443, NULL);
	s = pol_request_summary(r);
	assert_string_equal(s, "connect 140.82.112.3:443 (no name resolved)");
	free(s);
	j = pol_request_json(r);
	assert_non_null(strstr(j, "\"destination\":\"140.82.112.3:443\""));
	assert_non_null(strstr(j, "\"names\":[],"));
	free(j);
	pol_request_free(r);

	const char *dns[] = {"dns.test", NULL};
	struct want u = {.addr = "10.77.0.2", .port = 53, .names = dns, .proto = POL_NET_UDP};
	r = mk(&u);
	s = pol_request_summary(r);
	assert_string_equal(s, "send udp dns.test:53 (10.77.0.2)");
	free(s);
	j = pol_request_json(r);
	assert_string_equal(j,
			    "{\"syscall\":\"sendto\",\"destination\":\"dns.test:53\","
			    "\"address\":\"10.77.0.2\",\"port\":53,\"protocol\":\"udp\","
			    "\"names\":[\"dns.test\"],\"command\":\"curl https://example.test/\"}");
	free(j);
	pol_request_free(r);

	r = to("fd77::2", 8080, NULL);
	assert_string_equal(pol_request_destination(r), "[fd77::2]:8080");
	s = pol_request_summary(r);
	assert_string_equal(s, "connect [fd77::2]:8080 (no name resolved)");
	free(s);
	pol_request_free(r);
	assert_null(pol_request_destination(NULL));
}

/* The command is redacted as an exec's parent line is; a name that is not
 * a DNS name never reaches the JSON or the summary. */
static void test_connect_json_redacts_and_filters(void **state)
{
	(void)state;
	const char *names[] = {"evil\n.test", "a b", "ok.test", "OK.test", NULL};
	struct pol_connect_desc d = {
		.syscall = "sendmsg; rm -rf /",
		.family = AF_INET,
		.addr = {10, 77, 0, 2},
		.port = 80,
		.names = names,
		.cmdline = "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789' x",
	};
	struct pol_request *r = pol_request_connect(&d);
	char *j = pol_request_json(r);
	assert_null(strstr(j, "abcdefghijklmnopqrstuvwxyz0123456789"));
	assert_non_null(strstr(j, "<redacted>"));
	assert_non_null(strstr(j, "\"syscall\":\"connect\","));
	assert_non_null(strstr(j, "\"names\":[\"ok.test\"]"));
	free(j);
	pol_request_free(r);

	d.family = AF_UNIX;
	errno = 0;
	assert_null(pol_request_connect(&d));
	assert_int_equal(errno, EINVAL);
	assert_null(pol_request_connect(NULL));
	assert_string_equal(pol_net_proto_name(POL_NET_TCP), "tcp");
	assert_string_equal(pol_net_proto_name(POL_NET_UDP), "udp");
	assert_string_equal(pol_net_proto_name(POL_NET_OTHER), "other");
}

/* ::ffff:a.b.c.d is a.b.c.d: shown and decided as IPv4. */
static void test_connect_v4_mapped_is_v4(void **state)
{
	(void)state;
	struct pol_request *r = to("::ffff:10.77.0.2", 443, NULL);
	assert_string_equal(pol_request_destination(r), "10.77.0.2:443");
	struct pol_config *c = cfg("{\"network\": {\"allow\": [\"10.77.0.0/16\"]}}");
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, "10.77.0.0/16");
	pol_config_free(c);
	c = cfg("{\"network\": {\"allow\": [\"*\"], \"deny\": [\"10.77.0.2\"]}}");
	expect(r, c, POL_DENY, POL_SRC_RULE, "\"10.77.0.2\"");
	pol_config_free(c);
	pol_request_free(r);
}

/* ---- deciding ------------------------------------------------------------------- */

static void test_connect_hard_deny_metadata(void **state)
{
	(void)state;
	struct pol_config *c = cfg("{\"network\": {\"allow\": [\"*\", \"169.254.0.0/16\", "
				   "\"[::/0]\", \"0.0.0.0/0\", \"metadata.google.internal\"]}}");
	static const char *const addrs[] = {
		"169.254.169.254",	  "169.254.170.2",	  "169.254.1.1",
		"100.100.100.200",	  "fd00:ec2::254",	  "64:ff9b::a9fe:a9fe",
		"64:ff9b::169.254.170.2", "64:ff9b:1::a9fe:a9fe", "::ffff:169.254.169.254",
		"64:ff9b::6464:64c8",	  "fd20:ce::254",	  "fd00:c1::a9fe:a9fe",
	};
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct pol_request *r = to(addrs[i], 80, NULL);
		expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, "metadata");
		pol_request_free(r);
	}
	struct pol_request *r = to("169.254.169.254", 80, NULL);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY,
	       "169.254.169.254 is a cloud metadata address: it hands out the machine's "
	       "credentials");
	pol_request_free(r);
	r = to("64:ff9b::a9fe:a9fe", 80, NULL);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY,
	       "64:ff9b::a9fe:a9fe is the NAT64 form of 169.254.169.254");
	pol_request_free(r);
	/* A metadata name among the names, whatever the address. */
	static const char *const names[] = {"metadata.google.internal", "METADATA.goog.",
					    "metadata", "instance-data",
					    "instance-data.ec2.internal"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *nv[] = {"fine.test", names[i], NULL};
		struct want w = {.addr = "10.77.0.2", .port = 80, .names = nv};
		r = mk(&w);
		expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, "cloud metadata name");
		pol_request_free(r);
		assert_true(pol_net_metadata_name(names[i]));
	}
	assert_false(pol_net_metadata_name("metadata.google.internal.evil"));
	assert_false(pol_net_metadata_name("xmetadata"));
	assert_false(pol_net_metadata_name(NULL));
	/* Near the metadata addresses but not one. */
	r = to("169.255.169.254", 80, NULL);
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, NULL);
	pol_request_free(r);
	r = to("64:ff9b::a9ff:a9fe", 80, NULL);
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, NULL);
	pol_request_free(r);
	r = to("fd00:ec2::253", 80, NULL);
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, NULL);
	pol_request_free(r);
	pol_config_free(c);
}

/* The host's own services: refused unless an entry names the address
 * literally; "*", a name or a wider rule that is not literal opens
 * nothing. */
static void test_connect_hard_deny_local(void **state)
{
	(void)state;
	struct pol_config *c = cfg("{\"network\": {\"allow\": [\"*\", \"my.test\"]}}");
	const char *names[] = {"my.test", NULL};
	struct want w = {.addr = "127.0.0.1", .port = 8080, .names = names};
	struct pol_request *r = mk(&w);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY,
	       "127.0.0.1:8080 is this host's own service on loopback; list it in "
	       "network.allow of .warden/permissions.json to allow it");
	pol_request_free(r);
	/* Loopback and unspecified are local whatever the caller says. */
	static const char *const always[] = {"127.0.0.1", "127.9.9.9", "::1", "0.0.0.0", "::"};
	for (size_t i = 0; i < sizeof(always) / sizeof(always[0]); i++) {
		r = to(always[i], 80, NULL);
		expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, "this host's own");
		pol_request_free(r);
	}
	/* The kernel's word for an address of one of its interfaces. */
	struct want own = {.addr = "10.77.0.1", .port = 22, .local = true};
	r = mk(&own);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, "10.77.0.1:22 is this host's own");
	pol_request_free(r);
	/* Group addresses the kernel calls local. */
	struct want group = {.addr = "224.0.0.251", .port = 5353, .local = true};
	r = mk(&group);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY,
	       "224.0.0.251:5353 is a multicast or broadcast address");
	pol_request_free(r);
	/* And those it does not: a scoped IPv6 group (ff02::1, ff01::1: a
	 * bind with no scope fails, yet a send with one reaches a service
	 * on ::), any multicast, the broadcast address. */
	static const char *const groups[] = {"ff02::1", "ff01::1", "ff05::2", "239.1.2.3",
					     "255.255.255.255"};
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		r = to(groups[i], 5999, NULL);
		expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY,
		       "is a multicast or broadcast address");
		pol_request_free(r);
	}
	pol_config_free(c);

	/* Listed literally: an address, a CIDR, localhost; the port counts. */
	c = cfg("{\"network\": {\"allow\": [\"127.0.0.1:8080\", \"10.77.0.0/24\", "
		"\"localhost:9000\", \"[::1]:7000\"]}}");
	r = to("127.0.0.1", 8080, NULL);
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, "\"127.0.0.1:8080\"");
	pol_request_free(r);
	r = to("127.0.0.1", 8081, NULL);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, NULL);
	pol_request_free(r);
	r = mk(&own);
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, "10.77.0.0/24");
	pol_request_free(r);
	r = to("127.3.2.1", 9000, NULL);
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, "\"localhost:9000\"");
	pol_request_free(r);
	r = to("::1", 9000, NULL);
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, "\"localhost:9000\"");
	pol_request_free(r);
	r = to("::1", 7000, NULL);
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, "\"[::1]:7000\"");
	pol_request_free(r);
	r = to("0.0.0.0", 9000, NULL);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, "unspecified");
	pol_request_free(r);
	pol_config_free(c);
	/* "Anywhere" is not "here". */
	c = cfg("{\"network\": {\"allow\": [\"0.0.0.0/0\", \"[::/0]\"]}}");
	r = to("127.0.0.1", 80, NULL);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, NULL);
	pol_request_free(r);
	r = to("::1", 80, NULL);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, NULL);
	pol_request_free(r);
	r = mk(&own);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, NULL);
	pol_request_free(r);
	r = to("10.77.0.2", 80, NULL);
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, "0.0.0.0/0");
	pol_request_free(r);
	pol_config_free(c);
	c = cfg("{\"network\": {\"allow\": [\"127.0.0.0/8\"]}}");
	r = to("127.0.0.53", 53, NULL);
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, "127.0.0.0/8");
	pol_request_free(r);
	pol_config_free(c);
	/* A name entry whose name resolved to loopback opens nothing, nor
	 * does "localhost" as a name of another address. */
	c = cfg("{\"network\": {\"allow\": [\"localhost\"]}}");
	const char *lh[] = {"localhost", NULL};
	struct want ext = {.addr = "10.77.0.1", .port = 80, .names = lh, .local = true};
	r = mk(&ext);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, NULL);
	pol_request_free(r);
	pol_config_free(c);
}

/* The harness's endpoint: its own process only, loopback included. */
static void test_connect_harness_endpoint(void **state)
{
	(void)state;
	struct pol_config *c = cfg("{}");
	assert_int_equal(pol_config_add_harness_endpoint(c, "api.anthropic.com"), 0);
	assert_int_equal(pol_config_add_harness_endpoint(c, "127.0.0.1:8080"), 0);
	assert_int_equal(pol_config_add_harness_endpoint(c, "[::1]:9000"), 0);
	assert_int_equal(pol_config_add_harness_endpoint(c, "127.0.0.1:8080"), 0);
	assert_int_equal(pol_config_harness_endpoint_count(c), 3);
	assert_string_equal(pol_config_harness_endpoint(c, 0), "api.anthropic.com:443");
	assert_string_equal(pol_config_harness_endpoint(c, 1), "127.0.0.1:8080");
	assert_null(pol_config_harness_endpoint(c, 3));
	static const char *const bad[] = {
		"*", "*.anthropic.com", "10.0.0.0/8", "a.test:*", "", "a b", "[::1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(pol_config_add_harness_endpoint(c, bad[i]), -EINVAL);
	assert_int_equal(pol_config_harness_endpoint_count(c), 3);

	const char *api[] = {"api.anthropic.com", NULL};
	struct want w = {.addr = "160.79.104.10", .port = 443, .names = api, .harness = true};
	struct pol_request *r = mk(&w);
	expect(r, c, POL_ALLOW, POL_SRC_HARNESS, "api.anthropic.com:443");
	pol_request_free(r);
	w.harness = false; /* a tool call: undecided */
	r = mk(&w);
	expect(r, c, POL_UNDECIDED, POL_SRC_NONE, "api.anthropic.com:443");
	pol_request_free(r);
	w.harness = true;
	w.port = 80; /* another port */
	r = mk(&w);
	expect(r, c, POL_UNDECIDED, POL_SRC_NONE, NULL);
	pol_request_free(r);
	/* On loopback: the harness's own process passes the hard deny. */
	struct want lo = {.addr = "127.0.0.1", .port = 8080, .harness = true};
	r = mk(&lo);
	expect(r, c, POL_ALLOW, POL_SRC_HARNESS, NULL);
	pol_request_free(r);
	lo.harness = false;
	r = mk(&lo);
	expect(r, c, POL_DENY_CRITICAL, POL_SRC_HARD_DENY, NULL);
	pol_request_free(r);
	struct want lo6 = {.addr = "::1", .port = 9000, .harness = true};
	r = mk(&lo6);
	expect(r, c, POL_ALLOW, POL_SRC_HARNESS, NULL);
	pol_request_free(r);
	pol_config_free(c);
}

/* network.deny beats network.allow, and matches any name of the address. */
static void test_connect_deny_beats_allow(void **state)
{
	(void)state;
	struct pol_config *c = cfg("{\"network\": {\"allow\": [\"*.example.test\", \"*\"], "
				   "\"deny\": [\"evil.test\", \"10.66.0.0/16:25\"]}}");
	const char *names[] = {"cdn.example.test", "evil.test", NULL};
	struct want w = {.addr = "10.77.0.2", .port = 443, .names = names};
	struct pol_request *r = mk(&w);
	expect(r, c, POL_DENY, POL_SRC_RULE,
	       "the project config's network.deny entry \"evil.test\" matches evil.test");
	struct pol_decision d = decide(r, c, NULL);
	assert_string_equal(d.matched, "network.deny[0]");
	pol_request_free(r);
	r = to("10.66.1.1", 25, NULL);
	expect(r, c, POL_DENY, POL_SRC_RULE, "\"10.66.0.0/16:25\" matches 10.66.1.1");
	pol_request_free(r);
	r = to("10.66.1.1", 26, NULL);
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, "\"*\"");
	pol_request_free(r);
	r = to("10.77.0.2", 443, "cdn.example.test");
	expect(r, c, POL_ALLOW, POL_SRC_FAST_PATH, "\"*.example.test\" matches cdn.example.test");
	d = decide(r, c, NULL);
	assert_string_equal(d.matched, "network.allow[0]");
	pol_request_free(r);
	pol_config_free(c);

	/* Nothing listed: undecided, with the destination. */
	c = cfg("{}");
	r = to("10.77.0.2", 443, "github.com");
	expect(r, c, POL_UNDECIDED, POL_SRC_NONE,
	       "github.com:443 is a destination no entry of network.allow in "
	       ".warden/permissions.json names");
	pol_request_free(r);
	pol_config_free(c);
}

/* ---- entries -------------------------------------------------------------------- */

static void test_net_entry_valid_table(void **state)
{
	(void)state;
	static const char *const good[] = {
		"github.com",
		"GitHub.COM.",
		"registry.npmjs.org:443",
		"*.npmjs.org",
		"*.npmjs.org:*",
		"*",
		"*:443",
		"10.0.0.1",
		"10.0.0.0/8",
		"0.0.0.0/0",
		"10.0.0.1/32:22",
		"[::1]",
		"[::1]:8080",
		"[fd00::/8]",
		"[fd00::/8]:*",
		"[::/0]",
		"localhost",
		"LOCALHOST.:9000",
		"a-b.c-d.test",
		"1password.com",
		"x:65535",
		"[::ffff:10.0.0.0/104]",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const char *why = "unset";
		if (!pol_net_entry_valid(good[i], &why))
			fail_msg("\"%s\" refused: %s", good[i], why);
		assert_null(why);
	}
	static const struct {
		const char *entry, *why;
	} bad[] = {
		{"", "the entry is empty"},
		{"*.", "\"*.\" needs a name after it"},
		{"*x.test", "a wildcard is \"*\" alone or \"*.\" before a name"},
		{"a.*.test", "a wildcard is \"*\" alone or \"*.\" before a name"},
		{"bad_name.test", "a name has only letters, digits, '-' and '.'"},
		{"a..b", "empty label"},
		{".a", "empty label"},
		{"-a.test", "starts with '-'"},
		{"a-.test", "ends with '-'"},
		{"a.123", "last label is all digits"},
		{"1.2.3", "not an IPv4 address"},
		{"256.0.0.1", "not an IPv4 address"},
		{"10.0.0.1/33", "a number from 0 to 32"},
		{"10.0.0.1/8", "bits set below its /prefix"},
		{"10.0.0.0/", "a number from 0 to 32"},
		{"10.0.0.0/08", "a number from 0 to 32"},
		{"::1", "an IPv6 address is written in brackets"},
		{"fd00::/8", "an IPv6 address is written in brackets"},
		{"[::1", "needs its ']'"},
		{"[::1]x", "after ']' comes nothing or :PORT"},
		{"[::g]", "not an IPv6 address"},
		{"[fd00::1/8]", "bits set below its /prefix"},
		{"[::/129]", "a number from 0 to 128"},
		{"[10.0.0.1]", "not an IPv6 address"},
		{"github.com:", "a number from 1 to 65535, or *"},
		{"github.com:0", "a number from 1 to 65535, or *"},
		{"github.com:65536", "a number from 1 to 65535, or *"},
		{"github.com:http", "a number from 1 to 65535, or *"},
		{"github.com:0443", "a number from 1 to 65535, or *"},
		{":443", "the host before ':' is empty"},
		{"github.com/path", "'/' belongs only to a CIDR"},
		{"/8", "'/' belongs only to a CIDR"},
		{"https://github.com", "without a scheme"},
		{"git hub.com", "a name has only letters"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *why = NULL;
		if (pol_net_entry_valid(bad[i].entry, &why))
			fail_msg("\"%s\" accepted", bad[i].entry);
		if (!why || !strstr(why, bad[i].why))
			fail_msg("\"%s\": \"%s\", want \"%s\"", bad[i].entry, why ? why : "",
				 bad[i].why);
	}
	char longname[300];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	const char *why = NULL;
	assert_false(pol_net_entry_valid(longname, &why));
	assert_false(pol_net_entry_valid(NULL, NULL));
}

/* One row: does |entry| (in network.allow) allow a connect to |addr|:|port|
 * named |name|? */
static void matches(const char *entry, const char *addr, uint16_t port, const char *name, bool want)
{
	char text[400];
	snprintf(text, sizeof(text), "{\"network\": {\"allow\": [\"%s\"]}}", entry);
	struct pol_config *c = cfg(text);
	struct pol_request *r = to(addr, port, name);
	struct pol_decision d = decide(r, c, NULL);
	bool got = d.verdict == POL_ALLOW && d.source == POL_SRC_FAST_PATH;
	if (got != want)
		fail_msg("%s vs %s:%u (%s): %s \"%s\"", entry, addr, port, name ? name : "-",
			 pol_verdict_name(d.verdict), d.reason);
	pol_request_free(r);
	pol_config_free(c);
}

static void test_net_entry_matching(void **state)
{
	(void)state;
	/* names: exact, any case, the final dot ignored */
	matches("github.com", "10.77.0.2", 443, "github.com", true);
	matches("GitHub.Com.", "10.77.0.2", 443, "github.com", true);
	matches("github.com", "10.77.0.2", 443, "GITHUB.COM.", true);
	matches("github.com", "10.77.0.2", 443, "api.github.com", false);
	matches("github.com", "10.77.0.2", 443, "notgithub.com", false);
	matches("github.com", "10.77.0.2", 443, NULL, false);
	/* wildcards: strictly below, never the apex nor a look-alike */
	matches("*.npmjs.org", "10.77.0.2", 443, "registry.npmjs.org", true);
	matches("*.npmjs.org", "10.77.0.2", 443, "a.b.npmjs.org", true);
	matches("*.npmjs.org", "10.77.0.2", 443, "npmjs.org", false);
	matches("*.npmjs.org", "10.77.0.2", 443, "evilnpmjs.org", false);
	matches("*.npmjs.org", "10.77.0.2", 443, "npmjs.org.evil.test", false);
	matches("*", "10.77.0.2", 1, NULL, true);
	matches("*", "fd77::2", 1, NULL, true);
	/* ports */
	matches("registry.npmjs.org:443", "10.77.0.2", 443, "registry.npmjs.org", true);
	matches("registry.npmjs.org:443", "10.77.0.2", 80, "registry.npmjs.org", false);
	matches("registry.npmjs.org:*", "10.77.0.2", 80, "registry.npmjs.org", true);
	matches("*:443", "10.77.0.2", 443, NULL, true);
	matches("*:443", "10.77.0.2", 444, NULL, false);
	/* IPv4 and CIDR edges */
	matches("10.77.0.2", "10.77.0.2", 80, NULL, true);
	matches("10.77.0.2", "10.77.0.3", 80, NULL, false);
	matches("10.77.0.0/24", "10.77.0.255", 80, NULL, true);
	matches("10.77.0.0/24", "10.77.1.0", 80, NULL, false);
	matches("10.77.0.0/23", "10.77.1.255", 80, NULL, true);
	matches("10.77.0.0/23", "10.77.2.0", 80, NULL, false);
	matches("10.76.0.0/15", "10.77.255.255", 80, NULL, true);
	matches("0.0.0.0/0", "8.8.8.8", 80, NULL, true);
	matches("0.0.0.0/0", "fd77::2", 80, NULL, false);
	/* an address entry matches the address, not a name */
	matches("10.77.0.2", "10.77.0.9", 80, "10.77.0.2", false);
	/* IPv6 */
	matches("[fd77::2]", "fd77::2", 80, NULL, true);
	matches("[fd77::2]", "fd77::3", 80, NULL, false);
	matches("[fd77::/16]", "fd77:ffff::1", 80, NULL, true);
	matches("[fd77::/16]", "fd78::1", 80, NULL, false);
	matches("[fd77::/17]", "fd77:7fff::1", 80, NULL, true);
	matches("[fd77::/17]", "fd77:8000::1", 80, NULL, false);
	matches("[fd77::2]:8080", "fd77::2", 8080, NULL, true);
	matches("[fd77::2]:8080", "fd77::2", 8081, NULL, false);
	matches("[::/0]", "10.77.0.2", 80, NULL, false);
	/* IPv4-mapped: an entry written mapped is the IPv4 one, and a mapped
	 * request is the IPv4 address */
	matches("[::ffff:10.77.0.2]", "10.77.0.2", 80, NULL, true);
	matches("[::ffff:10.77.0.0/120]", "::ffff:10.77.0.200", 80, NULL, true);
	matches("10.77.0.2", "::ffff:10.77.0.2", 80, NULL, true);
	matches("[fd77::2]", "::ffff:10.77.0.2", 80, NULL, false);
}

/* ---- grants --------------------------------------------------------------------- */

static void test_connect_session_grant(void **state)
{
	(void)state;
	struct pol_config *c = cfg("{}");
	struct pol_session *s = pol_session_new();
	const char *names[] = {"github.com", "gh.test", NULL};
	struct want w = {.addr = "10.77.0.2", .port = 443, .names = names};
	struct pol_request *r = mk(&w);
	pol_session_grant(s, r);
	pol_session_grant(s, r); /* once */
	/* Any port, any address named so: "always for this host". */
	struct pol_request *other = to("10.77.0.9", 22, "github.com");
	struct pol_decision d = decide(other, c, s);
	assert_int_equal(d.verdict, POL_ALLOW);
	assert_int_equal(d.source, POL_SRC_SESSION_GRANT);
	assert_string_equal(d.reason, "you allowed connections to github.com for the rest of the "
				      "session");
	pol_request_free(other);
	/* The host is the newest name: another name of the address is not
	 * granted, nor is the address without the name. */
	other = to("10.77.0.3", 443, "gh.test");
	assert_int_equal(decide(other, c, s).verdict, POL_UNDECIDED);
	pol_request_free(other);
	other = to("10.77.0.2", 443, NULL);
	assert_int_equal(decide(other, c, s).verdict, POL_UNDECIDED);
	pol_request_free(other);
	pol_request_free(r);
	/* An unnamed destination's grant is its address, named or not later. */
	r = to("10.77.0.5", 8080, NULL);
	pol_session_grant(s, r);
	pol_request_free(r);
	r = to("10.77.0.5", 80, "later.test");
	assert_int_equal(decide(r, c, s).source, POL_SRC_SESSION_GRANT);
	pol_request_free(r);
	pol_config_free(c);
	/* A grant never lifts a hard deny or a deny entry. */
	c = cfg("{\"network\": {\"deny\": [\"github.com\"]}}");
	r = to("10.77.0.2", 443, "github.com");
	pol_session_grant(s, r);
	expect(r, c, POL_DENY, POL_SRC_RULE, NULL);
	assert_int_equal(decide(r, c, s).verdict, POL_DENY);
	pol_request_free(r);
	r = to("127.0.0.1", 443, "github.com");
	assert_int_equal(decide(r, c, s).verdict, POL_DENY_CRITICAL);
	pol_request_free(r);
	pol_session_free(s);
	pol_config_free(c);
}

static void test_connect_project_grant_round_trip(void **state)
{
	(void)state;
	struct pol_config *c = cfg("{}");
	struct pol_request *named = to("10.77.0.2", 443, "GitHub.com");
	struct pol_request *bare = to("fd77::2", 8443, NULL);
	struct pol_request *mapped = to("::ffff:10.77.0.7", 80, NULL);
	assert_int_equal(pol_config_add_grant(c, named, "ann", 1764763200000000LL), 0);
	assert_int_equal(pol_config_add_grant(c, bare, "bob", 1764763200000000LL), 0);
	assert_int_equal(pol_config_add_grant(c, mapped, "bob", 1764763200000000LL), 0);
	char *g = pol_config_grant_json(c, 0);
	assert_string_equal(
		g, "{\"host\":\"github.com\",\"by\":\"ann\",\"at\":\"2025-12-03T12:00:00.000Z\"}");
	free(g);
	g = pol_config_grant_json(c, 1);
	assert_string_equal(
		g, "{\"host\":\"fd77::2\",\"by\":\"bob\",\"at\":\"2025-12-03T12:00:00.000Z\"}");
	free(g);
	g = pol_config_grant_json(c, 2);
	assert_string_equal(
		g, "{\"host\":\"10.77.0.7\",\"by\":\"bob\",\"at\":\"2025-12-03T12:00:00.000Z\"}");
	free(g);
	char *json = pol_config_to_json(c);
	pol_config_free(c);
	c = cfg(json);
	char *again = pol_config_to_json(c);
	assert_string_equal(json, again);
	free(json);
	free(again);
	assert_int_equal(pol_config_grant_count(c), 3);
	struct pol_request *r = to("10.77.0.99", 22, "github.com");
	struct pol_decision d = decide(r, c, NULL);
	assert_int_equal(d.source, POL_SRC_GRANT);
	assert_string_equal(d.matched, "grants[0]");
	assert_string_equal(d.reason, "a project grant by ann allows connections to github.com");
	pol_request_free(r);
	r = to("fd77:0::2", 1, NULL);
	assert_int_equal(decide(r, c, NULL).source, POL_SRC_GRANT);
	pol_request_free(r);
	r = to("10.77.0.7", 1, NULL);
	assert_int_equal(decide(r, c, NULL).source, POL_SRC_GRANT);
	pol_request_free(r);
	r = to("10.77.0.8", 1, "github.com.evil.test");
	assert_int_equal(decide(r, c, NULL).verdict, POL_UNDECIDED);
	pol_request_free(r);
	pol_request_free(named);
	pol_request_free(bare);
	pol_request_free(mapped);
	pol_config_free(c);

	/* Written by hand: a name or an address, canonicalised; nothing else. */
	c = cfg("{\"grants\": [{\"host\": \"Example.TEST.\", \"by\": \"ann\", \"at\": "
		"\"2026-01-01T00:00:00Z\"}, {\"host\": \"::ffff:10.0.0.1\", \"by\": \"ann\", "
		"\"at\": \"2026-01-01T00:00:00Z\"}]}");
	g = pol_config_grant_json(c, 0);
	assert_non_null(strstr(g, "\"host\":\"example.test\""));
	free(g);
	g = pol_config_grant_json(c, 1);
	assert_non_null(strstr(g, "\"host\":\"10.0.0.1\""));
	free(g);
	pol_config_free(c);
	cfg_error("{\"grants\": [{\"host\": \"github.com:443\", \"by\": \"a\", \"at\": "
		  "\"2026-01-01T00:00:00Z\"}]}",
		  "grants[0].host: \"github.com:443\" is not a host; write a name (github.com) or "
		  "an address (140.82.112.3, 2001:db8::1), without a port");
	cfg_error("{\"grants\": [{\"host\": \"*.github.com\", \"by\": \"a\", \"at\": "
		  "\"2026-01-01T00:00:00Z\"}]}",
		  "is not a host");
	cfg_error("{\"grants\": [{\"host\": \"1.2.3\", \"by\": \"a\", \"at\": "
		  "\"2026-01-01T00:00:00Z\"}]}",
		  "is not a host");
	cfg_error("{\"grants\": [{\"host\": \"a.test\", \"path\": \"x\", \"access\": \"read\", "
		  "\"by\": \"a\", \"at\": \"2026-01-01T00:00:00Z\"}]}",
		  "a grant has one of \"command\", \"path\" or \"host\"; split it");
	cfg_error("{\"grants\": [{\"host\": \"a.test\", \"access\": \"read\", \"by\": \"a\", "
		  "\"at\": \"2026-01-01T00:00:00Z\"}]}",
		  "grants[0].access: a host grant has no \"access\"; remove it");
	cfg_error("{\"grants\": [{\"host\": 5, \"by\": \"a\", \"at\": \"2026-01-01T00:00:00Z\"}]}",
		  "grants[0].host: must be a string, not a number");
}

/* Approval memory: the host, the port and the protocol; tool "connect". */
static void test_connect_memory_args(void **state)
{
	(void)state;
	const char *names[] = {"github.com", NULL};
	struct want w = {.addr = "10.77.0.2", .port = 443, .names = names};
	struct pol_request *r = mk(&w);
	char *args = pol_mem_args_json(r);
	assert_string_equal(args, "{\"host\":\"github.com\",\"port\":443,\"protocol\":\"tcp\"}");
	char *tool = pol_mem_tool(r);
	assert_string_equal(tool, "connect");
	free(args);
	free(tool);
	pol_request_free(r);
	r = to("fd77::2", 53, NULL);
	args = pol_mem_args_json(r);
	assert_string_equal(args, "{\"host\":\"fd77::2\",\"port\":53,\"protocol\":\"tcp\"}");
	free(args);
	pol_request_free(r);
	/* A Unix socket's row has no arguments to compare. */
	struct pol_mem_record rec = {
		.request = "{\"syscall\":\"connect\",\"path\":\"/run/x.sock\"}",
		.source = "user",
		.approved = true,
		.decided_by = "ann",
	};
	struct pol_mem_context *m = pol_mem_context_new(
		"connect", "{\"host\":\"github.com\",\"port\":443,\"protocol\":\"tcp\"}", &rec, 1,
		-1);
	assert_int_equal(pol_mem_context_count(m, NULL, NULL), 0);
	pol_mem_context_free(m);
	/* A past connect decision counts for the same host. */
	rec.request = "{\"syscall\":\"connect\",\"destination\":\"github.com:443\",\"address\":"
		      "\"10.77.0.9\",\"port\":443,\"protocol\":\"tcp\",\"names\":[\"github.com\"],"
		      "\"command\":null}";
	m = pol_mem_context_new("connect",
				"{\"host\":\"github.com\",\"port\":443,\"protocol\":\"tcp\"}", &rec,
				1, -1);
	assert_int_equal(pol_mem_context_count(m, NULL, NULL), 1);
	pol_mem_context_free(m);
}

/* An accepted rule of tool "connect" allows, after the deny list. */
static void test_connect_accepted_rule(void **state)
{
	(void)state;
	struct pol_config *c = cfg(
		"{\"accepted_rules\": [{\"id\": \"r-1\", \"tool\": \"connect\", \"conditions\": "
		"{\"host\": \"github.com\", \"port\": 443, \"protocol\": \"tcp\"}, "
		"\"accepted_at\": \"2026-01-01T00:00:00Z\", \"accepted_by\": \"ann\", "
		"\"review_days\": 90}], \"network\": {\"deny\": [\"evil.test\"]}}");
	struct pol_request *r = to("10.77.0.2", 443, "github.com");
	struct pol_decision d;
	pol_decide(r, c, NULL, NULL, 1767225600000000LL + 1000000, &d);
	assert_int_equal(d.source, POL_SRC_ACCEPTED_RULE);
	pol_request_free(r);
	const char *names[] = {"github.com", "evil.test", NULL};
	struct want w = {.addr = "10.77.0.2", .port = 443, .names = names};
	r = mk(&w);
	pol_decide(r, c, NULL, NULL, 1767225600000000LL + 1000000, &d);
	assert_int_equal(d.verdict, POL_DENY);
	pol_request_free(r);
	r = to("10.77.0.2", 80, "github.com");
	pol_decide(r, c, NULL, NULL, 1767225600000000LL + 1000000, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	pol_request_free(r);
	pol_config_free(c);
}

/* Neither process-tree coverage nor a review run changes a connect's
 * decision in policy: coverage is for what a tree runs, and a review
 * run's refusal of the undecided is the supervisor's. Command rules never
 * match a connect. */
static void test_connect_context_and_rules(void **state)
{
	(void)state;
	struct pol_config *c = cfg("{\"rules\": [{\"action\": \"allow\", \"command\": "
				   "[\"curl\"]}, {\"action\": \"deny\", \"path\": \"**\"}]}");
	struct pol_request *r = to("10.77.0.2", 443, "github.com");
	struct pol_context ctx = {.covered = true, .review = true};
	struct pol_decision d;
	pol_decide(r, c, NULL, &ctx, 0, &d);
	assert_int_equal(d.verdict, POL_UNDECIDED);
	assert_int_equal(d.source, POL_SRC_NONE);
	assert_false(d.covers);
	pol_request_free(r);
	pol_config_free(c);
}

/* The config's lists, printed back as written. */
static void test_config_network_round_trip(void **state)
{
	(void)state;
	struct pol_config *c = cfg("{\"network\": {\"allow\": [\"github.com\", \"*.npmjs.org\", "
				   "\"[fd00::/8]:443\"], \"deny\": [\"10.0.0.0/8\"]}}");
	assert_int_equal(pol_config_net_allow_count(c), 3);
	assert_string_equal(pol_config_net_allow(c, 2), "[fd00::/8]:443");
	assert_null(pol_config_net_allow(c, 3));
	assert_int_equal(pol_config_net_deny_count(c), 1);
	assert_string_equal(pol_config_net_deny(c, 0), "10.0.0.0/8");
	assert_null(pol_config_net_deny(c, 1));
	char *json = pol_config_to_json(c);
	assert_non_null(strstr(json, "\"network\": {\n    \"allow\": [\"github.com\", "
				     "\"*.npmjs.org\", \"[fd00::/8]:443\"],\n    \"deny\": "
				     "[\"10.0.0.0/8\"]\n  }"));
	pol_config_free(c);
	c = cfg(json);
	char *again = pol_config_to_json(c);
	assert_string_equal(json, again);
	free(json);
	free(again);
	pol_config_free(c);
	c = cfg("{\"network\": {}}");
	assert_int_equal(pol_config_net_allow_count(c), 0);
	json = pol_config_to_json(c);
	assert_null(strstr(json, "network"));
	free(json);
	pol_config_free(c);
	assert_int_equal(pol_config_net_allow_count(NULL), 0);
	assert_null(pol_config_net_deny(NULL, 0));
}

/* ---- the config ----------------------------------------------------------------- */

static void test_config_network_errors(void **state)
{
	(void)state;
	cfg_error("{\"network\": []}", "p.json:1: network: \"network\" must be an object");
	cfg_error("{\"network\": {\"allow\": [\"a.test\"], \"alow\": []}}",
		  "p.json:1: network.alow: unknown key \"alow\"; the keys here are: allow deny");
	cfg_error("{\"network\": {\"allow\": \"github.com\"}}",
		  "network.allow: must be an array of network entries, not a string");
	cfg_error(
		"{\n  \"network\": {\n    \"deny\": [\n      \"ok.test\",\n      5\n    ]\n  }\n}",
		"p.json:5: network.deny[1]: must be a string, not a number");
	cfg_error("{\n\"network\": {\"allow\": [\n\"ok.test\", \"bad_name.test\"]}}",
		  "p.json:3: network.allow[1]: \"bad_name.test\" is not a network entry: a name "
		  "has only letters, digits, '-' and '.'. Write a name (github.com), *.suffix, *, "
		  "an address or CIDR (10.0.0.0/8, [fd00::/8]), with an optional :PORT");
}

/* ---- lookups --------------------------------------------------------------------- */

static void test_lookup_decide(void **state)
{
	(void)state;
	struct pol_config *c =
		cfg("{\"network\": {\"allow\": [\"github.com:443\", \"*.npmjs.org\", "
		    "\"localhost:8080\", "
		    "\"10.0.0.0/8\"], \"deny\": [\"evil.test\", \"*.bad.test:443\", \"0.0.0.0/0\", "
		    "\"[::/0]\"]}}");
	char why[512], m[64];
	/* Metadata names: critical, with or without a config. */
	assert_int_equal(pol_net_lookup_decide(c, "Metadata.Google.Internal.", why, sizeof(why), m,
					       sizeof(m)),
			 POL_DENY_CRITICAL);
	assert_non_null(strstr(why, "metadata"));
	assert_int_equal(pol_net_lookup_decide(NULL, "metadata.google.internal", NULL, 0, NULL, 0),
			 POL_DENY_CRITICAL);
	/* Deny by name and below a suffix (the port does not count). */
	assert_int_equal(pol_net_lookup_decide(c, "EVIL.test", why, sizeof(why), m, sizeof(m)),
			 POL_DENY);
	assert_string_equal(m, "network.deny[0]");
	assert_non_null(strstr(why, "\"evil.test\" matches evil.test"));
	assert_int_equal(pol_net_lookup_decide(c, "x.y.bad.test.", why, sizeof(why), m, sizeof(m)),
			 POL_DENY);
	assert_string_equal(m, "network.deny[1]");
	/* "*.suffix" is strictly below: the suffix itself is not denied;
	 * the CIDR deny entries (even 0.0.0.0/0) name no name. */
	assert_int_equal(pol_net_lookup_decide(c, "bad.test", why, sizeof(why), m, sizeof(m)),
			 POL_UNDECIDED);
	assert_string_equal(m, "");
	assert_int_equal(pol_net_lookup_decide(c, "sub.evil.test", NULL, 0, NULL, 0),
			 POL_UNDECIDED);
	/* Allow by name, suffix, localhost; ports ignored; CIDRs name nothing. */
	assert_int_equal(pol_net_lookup_decide(c, "github.com", why, sizeof(why), m, sizeof(m)),
			 POL_ALLOW);
	assert_string_equal(m, "network.allow[0]");
	assert_int_equal(pol_net_lookup_decide(c, "registry.npmjs.org", NULL, 0, NULL, 0),
			 POL_ALLOW);
	assert_int_equal(pol_net_lookup_decide(c, "npmjs.org", NULL, 0, NULL, 0), POL_UNDECIDED);
	assert_int_equal(pol_net_lookup_decide(c, "localhost", NULL, 0, NULL, 0), POL_ALLOW);
	assert_int_equal(pol_net_lookup_decide(c, "api.github.com", NULL, 0, NULL, 0),
			 POL_UNDECIDED);
	assert_int_equal(pol_net_lookup_decide(c, "10.in-addr.arpa", NULL, 0, NULL, 0),
			 POL_UNDECIDED);
	/* The harness's endpoint's host resolves; its port does not count. */
	assert_int_equal(pol_net_lookup_decide(c, "api.anthropic.com", NULL, 0, NULL, 0),
			 POL_UNDECIDED);
	assert_int_equal(pol_config_add_harness_endpoint(c, "api.anthropic.com:8443"), 0);
	assert_int_equal(
		pol_net_lookup_decide(c, "API.anthropic.com", why, sizeof(why), m, sizeof(m)),
		POL_ALLOW);
	assert_string_equal(m, "api.anthropic.com:8443");
	/* A name longer than any DNS name is undecided, never allowed. */
	char big[400];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(pol_net_lookup_decide(c, big, why, sizeof(why), m, sizeof(m)),
			 POL_UNDECIDED);
	/* A short reason buffer is cut, not overrun. */
	char tiny[8];
	assert_int_equal(pol_net_lookup_decide(c, "evil.test", tiny, sizeof(tiny), NULL, 0),
			 POL_DENY);
	assert_int_equal(strlen(tiny), 7);
	/* The names predicate names.c keeps by. */
	assert_true(pol_net_name_denied(c, "Evil.Test."));
	assert_true(pol_net_name_denied(c, "a.bad.test"));
	assert_true(pol_net_name_denied(NULL, "metadata.google.internal"));
	assert_false(pol_net_name_denied(c, "github.com"));
	assert_false(pol_net_name_denied(NULL, "evil.test"));
	assert_false(pol_net_name_denied(c, NULL));
	pol_config_free(c);
	/* "*" in deny denies every lookup; in allow allows every one. */
	c = cfg("{\"network\": {\"deny\": [\"*:25\"]}}");
	assert_int_equal(pol_net_lookup_decide(c, "github.com", NULL, 0, NULL, 0), POL_DENY);
	pol_config_free(c);
	c = cfg("{\"network\": {\"allow\": [\"*\"]}}");
	assert_int_equal(pol_net_lookup_decide(c, "anything.test", NULL, 0, NULL, 0), POL_ALLOW);
	assert_int_equal(pol_net_lookup_decide(c, "metadata.google.internal", NULL, 0, NULL, 0),
			 POL_DENY_CRITICAL);
	pol_config_free(c);
	assert_int_equal(pol_net_lookup_decide(NULL, "github.com", NULL, 0, NULL, 0),
			 POL_UNDECIDED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_json_and_summary),
		cmocka_unit_test(test_connect_json_redacts_and_filters),
		cmocka_unit_test(test_connect_v4_mapped_is_v4),
		cmocka_unit_test(test_connect_hard_deny_metadata),
		cmocka_unit_test(test_connect_hard_deny_local),
		cmocka_unit_test(test_connect_harness_endpoint),
		cmocka_unit_test(test_connect_deny_beats_allow),
		cmocka_unit_test(test_config_network_errors),
		cmocka_unit_test(test_net_entry_valid_table),
		cmocka_unit_test(test_net_entry_matching),
		cmocka_unit_test(test_connect_session_grant),
		cmocka_unit_test(test_connect_project_grant_round_trip),
		cmocka_unit_test(test_connect_memory_args),
		cmocka_unit_test(test_connect_accepted_rule),
		cmocka_unit_test(test_connect_context_and_rules),
		cmocka_unit_test(test_config_network_round_trip),
		cmocka_unit_test(test_lookup_decide),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
