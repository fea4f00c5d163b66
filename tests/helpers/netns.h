/*
 * netns: network namespaces for the network tests. The test process moves
 * itself into a new network and mount namespace (so that the warden it runs
 * starts there), and a "remote" host lives in a second network namespace,
 * joined by a veth pair:
 *
 *   local (the test and its warden)      remote (listeners, a DNS server)
 *   10.77.0.1/24  fd77::1/64    <--->    10.77.0.2/24  fd77::2/64
 *
 * The remote addresses are not the local host's, so warden decides them as
 * another host; 10.77.0.1 and loopback are the local host's own. Nothing
 * here touches the host's network: the interfaces exist only in the two new
 * namespaces, the remote one dies with its last process, and the local one
 * with the test. /etc files replaced for the test are bind mounts in the
 * test's private mount namespace (propagation private: the host never sees
 * them).
 *
 * Needs root and the `ip` command (iproute2). Every function exits the test
 * with a message on a set-up failure, except wt_netns_enter, which says why
 * it cannot run so that the test can skip.
 */
#ifndef WARDEN_WT_NETNS_H
#define WARDEN_WT_NETNS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define WT_NETNS_MAX_LISTENERS 16
#define WT_NETNS_MAX_DNS       32
#define WT_NETNS_DATA	       512

/* What the remote's servers share with the test (one MAP_SHARED page). */
struct wt_netns_shared {
	struct {
		int port;		  /* the port bound (useful with port 0) */
		int hits;		  /* connections accepted / datagrams received */
		size_t len;		  /* bytes kept in data */
		char data[WT_NETNS_DATA]; /* the first bytes received, all connections */
	} l[WT_NETNS_MAX_LISTENERS];
	int dns_queries;		   /* every query the DNS server parsed */
	int dns_tcp_queries;		   /* of which over TCP */
	int dns_hits[WT_NETNS_MAX_DNS][3]; /* per entry: A, AAAA, other types */
};

/*
 * One name the DNS server knows. |answer| lists resource records separated
 * by ';', each "TYPE OWNER VALUE" with TYPE one of A, AAAA, CNAME:
 *   "CNAME www.a.test a.test; A a.test 10.77.0.2"
 * An OWNER of "*" is the name asked (for a "*.suffix" entry).
 * A query of type A gets the CNAME records and the A records, a query of
 * type AAAA the CNAME and AAAA records. Several answers separated by '|'
 * are given in turn, one per query of that type (the last one repeats): a
 * rebinding name, "A r.test 10.77.0.2 | A r.test 127.0.0.1".
 * |additional| is put in the additional section of every answer, as is,
 * whatever the type asked (a lying server). |tc|: a UDP query gets the
 * answer cut inside its last record, with TC set (the client must ask
 * again over TCP). A name no entry
 * knows gets NXDOMAIN.
 */
struct wt_dns_entry {
	const char *qname; /* "*.suffix": every name below suffix */
	const char *answer;
	const char *additional;
	bool tc;
	bool silent; /* never answers (a server that times out) */
};

struct wt_netns {
	pid_t remote;				/* the process holding the remote namespace */
	int remote_fd;				/* its /proc/PID/ns/net, O_CLOEXEC */
	pid_t pids[WT_NETNS_MAX_LISTENERS + 2]; /* the servers started */
	size_t npids;
	int nlisteners;
	struct wt_netns_shared *sh;
	char *dir; /* a temporary directory for the files bound over /etc */
	const struct wt_dns_entry *dns;
	size_t ndns;
};

/*
 * As root: moves the calling process (single-threaded, at the start of the
 * test) into a new network and mount namespace, brings up its loopback,
 * makes the remote and the veth pair. 0, or -errno after printing why on
 * stderr (not root, no `ip`, no network namespaces): the test then skips.
 */
int wt_netns_enter(struct wt_netns *n);
/* wt_netns_enter, or exit 77 (skipped) with the reason. */
void wt_netns_require(struct wt_netns *n);
/* Kills the remote and every server, unmounts nothing (the mount
 * namespace is the test's), removes the temporary files. */
void wt_netns_leave(struct wt_netns *n);

/* Gives the remote one more address |addr| (IPv4 or IPv6, no prefix) and
 * routes it from the local side through the veth pair: 10.77.0.3,
 * 169.254.169.254, fd77::3. */
void wt_netns_remote_addr(struct wt_netns *n, const char *addr);

/* Starts a TCP (|udp| false) or UDP listener on |addr|:|port| (port 0: any;
 * see n->sh->l[i].port) in the remote namespace (|remote|) or the local
 * one. TCP: accepts, reads what comes for up to 200 ms, answers "ok\n",
 * closes. UDP: answers each datagram with "ok\n". Returns the listener's
 * index once it is bound. */
int wt_netns_listen(struct wt_netns *n, bool remote, bool udp, const char *addr, int port);
/* Connections accepted (TCP) or datagrams received (UDP) by listener |i|. */
int wt_netns_hits(const struct wt_netns *n, int i);
/* Its port. */
int wt_netns_port(const struct wt_netns *n, int i);

/* Starts the DNS server on 10.77.0.2:53 (UDP and TCP) in the remote,
 * knowing |entries| (kept: they must outlive the server). */
void wt_netns_dns(struct wt_netns *n, const struct wt_dns_entry *entries, size_t count);
/* How many queries of type A (0), AAAA (1), other (2) reached the server
 * for entry |i|. */
int wt_netns_dns_hits(const struct wt_netns *n, size_t i, int type);

/* Binds a file with |text| over |path| (an existing file; a symlink is
 * followed) in the test's mount namespace: "/etc/resolv.conf" with
 * "nameserver 10.77.0.2\n" makes the warden the test runs forward to the
 * remote's DNS server. */
void wt_netns_etc(struct wt_netns *n, const char *path, const char *text);

/* Runs |fn(arg)| in a child in the remote namespace and returns its exit
 * status (fn's return value), waiting for it. */
int wt_netns_in_remote(struct wt_netns *n, int (*fn)(void *), void *arg);

#endif
