/*
 * dns_int.h: the session's resolver (resolver.c) and the DNS messages it
 * reads (dns_msg.c), inside the supervisor.
 */
#ifndef WARDEN_SUP_DNS_INT_H
#define WARDEN_SUP_DNS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sup_run;

/* ---- DNS messages (dns_msg.c): pure, on untrusted bytes ----------------- */

#define SUP_DNS_MAX_MSG	  65535
#define SUP_DNS_MAX_ADDRS 64
#define SUP_DNS_NAME_MAX  254 /* 253 characters and the NUL */

enum {
	SUP_DNS_T_A = 1,
	SUP_DNS_T_CNAME = 5,
	SUP_DNS_T_AAAA = 28,
	SUP_DNS_FORMERR = 1,
	SUP_DNS_SERVFAIL = 2,
	SUP_DNS_NOTIMP = 4,
	SUP_DNS_REFUSED = 5,
};

/* A query's single question. |name| is lower-case text without the final
 * dot ("" for the root); |plain| is false when a label holds a byte that
 * text cannot show without ambiguity (a dot, a space, a control or
 * non-ASCII byte): such a name is never recorded. */
struct sup_dns_question {
	uint16_t id;
	char name[SUP_DNS_NAME_MAX];
	bool plain;
	uint16_t qtype, qclass;
	size_t end; /* the offset just past the question */
};

/* What a response says about the question it answers. */
struct sup_dns_answer {
	int rcode;
	bool tc;
	/* The answer section says more than was read: a record that is
	 * malformed or runs past the message, more addresses than fit, a
	 * CNAME chain longer than can be followed. A client could read
	 * addresses from it that are not in |addrs|: the resolver does not
	 * relay it. */
	bool partial;
	size_t naddrs;
	struct {
		int family; /* AF_INET or AF_INET6 */
		uint8_t addr[16];
	} addrs[SUP_DNS_MAX_ADDRS];
};

/* Reads a standard query with one question. 0, or -EINVAL (not a query,
 * malformed), -EOPNOTSUPP (another opcode, not one question). */
int sup_dns_parse_query(const uint8_t *msg, size_t len, struct sup_dns_question *q);
/* Reads |msg|, the response to the query whose question is |q|: the
 * addresses (A and AAAA of class IN) the answer section gives for q's
 * name, directly or through CNAME records of the same answer section that
 * start at q's name. Addresses of any other name, of the authority and
 * additional sections, are not returned. 0, or -EINVAL (malformed, not a
 * response, another id or question than |q|'s). */
int sup_dns_parse_answer(const uint8_t *msg, size_t len, const struct sup_dns_question *q,
			 struct sup_dns_answer *a);
/* Writes into |out| (at least |q->end| bytes) the response to query
 * |msg| with rcode |rcode|, id |q->id| and no records. Returns its
 * length. */
size_t sup_dns_error(const uint8_t *msg, const struct sup_dns_question *q, int rcode, uint8_t *out);
/* Whether |name| (text, as in sup_dns_question) is a cloud metadata
 * service's name (policy's list). */
bool sup_dns_metadata_name(const char *name);

/* ---- the session's resolver (resolver.c) -------------------------------- */

/* Before the sandbox is made (after the private temporary directories):
 * binds the resolver's address (port 53, UDP and TCP, on 127.0.0.0/8),
 * reads the host's nameservers, writes the sandbox's resolv.conf in the
 * session's directory and adds its bind over the sandbox's
 * /etc/resolv.conf to r->binds. Sets r->resolver_on. 0, or -errno with
 * *why (caller frees) saying why the run goes on without it. Starts no
 * thread: see sup_resolver_serve(). */
int sup_resolver_start(struct sup_run *r, char **why);
/* Once the sandbox is made: starts serving, on a thread of its own.
 * Not before: init is started with a raw clone(), which runs no atfork
 * handler, and runs code (malloc) before its exec; a lock another thread
 * held at the instant of the clone (the allocator's, stdio's) would never
 * be released in the child, whose set-up would then hang. The supervisor
 * is single-threaded until the sandbox exists. Queries sent meanwhile wait
 * in the sockets' queues. 0, or -errno (warned: the lookups then fail). */
int sup_resolver_serve(struct sup_run *r);
/* Once the config is complete (the harness's endpoints added) and before
 * the agent starts: from here on the resolver decides each queried name
 * (pol_net_lookup_decide) with the run's effective tier; before it, every
 * query is refused (nothing of the sandbox exists yet to ask). */
void sup_resolver_arm(struct sup_run *r);
/* Registers, in the loop, the descriptor on which the resolver hands over
 * the audit rows of the lookups it refused. 0 or -errno; 0 without one. */
int sup_resolver_watch(struct sup_run *r);
/* At the end of the run (the sandbox gone), before the session's row is
 * closed: stops serving and writes the rows still handed over, and one row
 * for the refusals past the bound. The counts stay for --stats. */
void sup_resolver_finish(struct sup_run *r);
/* Stops serving and frees it; nothing when it never started. */
void sup_resolver_stop(struct sup_run *r);
/* The --stats line on names: how many addresses are named, what the
 * resolver did, or why there is none. */
void sup_resolver_print_stats(const struct sup_run *r, FILE *out);
/* For warden doctor: whether a run here would have the resolver (the same
 * steps, undone). 0, or -errno with *why (caller frees). On success *why
 * names the host's nameservers. */
int sup_resolver_probe(char **why);

/* ---- the decision on each queried name (lookups.c) ---------------------- */

struct sup_lookups;
/* NULL, errno set, when its eventfd cannot be made. */
struct sup_lookups *sup_lookups_new(void);
void sup_lookups_free(struct sup_lookups *l);
/* The config and the run's effective tier; until then every name is
 * refused. */
void sup_lookups_arm(struct sup_lookups *l, const struct sup_run *r);
/* The resolver's thread: whether the queried |name| (as the query says it)
 * may be forwarded; when not, the row is handed to the loop. */
bool sup_lookups_allow(struct sup_lookups *l, const char *name, uint16_t qtype);
/* The loop's thread: registers the rows' eventfd; at the end, writes what
 * is left and the row for the refusals past the bound. */
int sup_lookups_watch(struct sup_lookups *l, struct sup_run *r);
void sup_lookups_finish(struct sup_lookups *l, struct sup_run *r);
/* Lookups refused by policy, and refusals past the rows' bound. */
void sup_lookups_counts(const struct sup_lookups *l, uint64_t *refused, uint64_t *dropped);

/* Adds the entries of the hosts file |path| (/etc/hosts) to |t|: every
 * name of a line under its address. Returns how many names. */
struct sup_names;
size_t sup_hosts_load(struct sup_names *t, const char *path);

#endif
