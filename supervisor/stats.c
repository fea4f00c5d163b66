/*
 * stats.c: `warden run --stats`: requests by source and the decision
 * latency (from receiving a notification to answering it) as p50, p99 and
 * max per source, and the audit's write rate with its real durability
 * settings (WAL, synchronous=NORMAL); and, at the end of a run, the rest
 * of what --stats prints (the resolver, the emulated name changes, the
 * view, the split view and its walk).
 */
#include "dns_int.h"
#include "sup.h"

#include <string.h>

/* The rows of --stats: sup_stats' indexes. */
enum {
	ST_STARTUP,
	ST_HARNESS,
	ST_HARD_DENY,
	ST_RULE,
	ST_GRANT,
	ST_FAST_PATH,
	ST_COVERED,
	ST_JUDGE,
	ST_TIER,
	ST_USER,
	ST_OTHER,
};

static const char *const source_names[16] = {
	[ST_STARTUP] = "startup", [ST_HARNESS] = "harness", [ST_HARD_DENY] = "hard_deny",
	[ST_RULE] = "rule",	  [ST_GRANT] = "grant",	    [ST_FAST_PATH] = "fast_path",
	[ST_COVERED] = "covered", [ST_JUDGE] = "judge",	    [ST_TIER] = "tier",
	[ST_USER] = "user",	  [ST_OTHER] = "other",
};

/* The row of |source|: grants of every kind together, the judge's cached
 * verdicts with the judge's, and what warden refuses on its own as other. */
static int stat_index(enum pol_source source)
{
	switch (source) {
	case POL_SRC_STARTUP:
		return ST_STARTUP;
	case POL_SRC_HARNESS:
		return ST_HARNESS;
	case POL_SRC_HARD_DENY:
		return ST_HARD_DENY;
	case POL_SRC_RULE:
		return ST_RULE;
	case POL_SRC_GRANT:
	case POL_SRC_SESSION_GRANT:
	case POL_SRC_ACCEPTED_RULE:
		return ST_GRANT;
	case POL_SRC_FAST_PATH:
		return ST_FAST_PATH;
	case POL_SRC_COVERED:
		return ST_COVERED;
	case POL_SRC_JUDGE:
	case POL_SRC_JUDGE_CACHE:
		return ST_JUDGE;
	case POL_SRC_TIER:
		return ST_TIER;
	case POL_SRC_USER:
		return ST_USER;
	case POL_SRC_NONE:
	case POL_SRC_TIMEOUT:
	case POL_SRC_STOPPED:
	case POL_SRC_LIMIT:
	case POL_SRC_DECODER:
	case POL_SRC_REPEAT:
	case POL_SRC_BOUNDARY:
	case POL_SRC_INTEGRITY:
	case POL_SRC_ERROR:
		break;
	}
	return ST_OTHER;
}

void sup_stats_add(struct sup_stats *s, enum pol_source src, int64_t ns)
{
	int source = stat_index(src);
	s->count[source]++;
	if (s->nlat[source] == s->caplat[source]) {
		s->caplat[source] = s->caplat[source] ? s->caplat[source] * 2 : 256;
		s->lat_ns[source] =
			wd_realloc(s->lat_ns[source], s->caplat[source] * sizeof(int64_t));
	}
	s->lat_ns[source][s->nlat[source]++] = ns;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static double pct(const int64_t *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i < n ? i : n - 1] / 1000.0;
}

void sup_stats_print(const struct sup_stats *s, FILE *out)
{
	fprintf(out, "warden: decisions by source (latency from notification to answer, µs)\n");
	fprintf(out, "  %-10s %8s %10s %10s %10s\n", "source", "count", "p50", "p99", "max");
	for (int i = 0; i < 16; i++) {
		if (!s->count[i])
			continue;
		int64_t *v = wd_malloc(s->nlat[i] * sizeof(int64_t));
		memcpy(v, s->lat_ns[i], s->nlat[i] * sizeof(int64_t));
		qsort(v, s->nlat[i], sizeof(int64_t), cmp_i64);
		fprintf(out, "  %-10s %8llu %10.1f %10.1f %10.1f\n",
			source_names[i] ? source_names[i] : "?", (unsigned long long)s->count[i],
			pct(v, s->nlat[i], 0.50), pct(v, s->nlat[i], 0.99),
			(double)v[s->nlat[i] - 1] / 1000.0);
		free(v);
	}
	if (s->rows && s->rows_ns > 0)
		fprintf(out, "  audit: %llu rows, %.0f rows/s, %.1f µs per row (%s)\n",
			(unsigned long long)s->rows, (double)s->rows * 1e9 / (double)s->rows_ns,
			(double)s->rows_ns / (double)s->rows / 1000.0,
			s->journal ? "one write to the journal before the answer, committed to "
				     "SQLite in batches"
				   : "WAL, synchronous=NORMAL, one transaction per row");
	uint64_t decided = s->connects_allowed + s->connects_refused;
	if (decided && s->nconn_lat) {
		int64_t *v = wd_malloc(s->nconn_lat * sizeof(int64_t));
		memcpy(v, s->conn_lat_ns, s->nconn_lat * sizeof(int64_t));
		qsort(v, s->nconn_lat, sizeof(int64_t), cmp_i64);
		fprintf(out,
			"  connects: %llu decided, %llu allowed, %llu refused; decision p50 %.1f "
			"µs, p99 %.1f µs\n",
			(unsigned long long)decided, (unsigned long long)s->connects_allowed,
			(unsigned long long)s->connects_refused, pct(v, s->nconn_lat, 0.50),
			pct(v, s->nconn_lat, 0.99));
		free(v);
	} else {
		fprintf(out, "  connects: none decided\n");
	}
}

void sup_stats_free(struct sup_stats *s)
{
	for (int i = 0; i < 16; i++)
		free(s->lat_ns[i]);
	free(s->conn_lat_ns);
	memset(s, 0, sizeof(*s));
}

/* Everything --stats prints at the end of a run: the decisions, the
 * resolver, the emulated name changes, the view and the split view. */
void sup_stats_print_run(const struct sup_run *r, FILE *out)
{
	sup_stats_print(&r->stats, out);
	sup_resolver_print_stats(r, out);
	sup_fs_print_stats(r, out);
	if (!r->view)
		return;
	size_t nodes;
	uint64_t evicted;
	sbx_view_counts(r->view, &nodes, &evicted);
	fprintf(out,
		"  view: %zu objects held at exit, %llu entries dropped to stay within its "
		"descriptors\n",
		nodes, (unsigned long long)evicted);
	struct sbx_view_pt_status pt;
	sbx_view_passthrough(r->view, &pt);
	if (pt.on)
		fprintf(out,
			"  view passthrough: %llu of %llu opens of files passed through; %llu "
			"files served by the view%s%s\n",
			(unsigned long long)pt.opens, (unsigned long long)pt.all,
			(unsigned long long)pt.failed,
			pt.failed ? ", their backing registration failed: " : "",
			pt.failed ? strerror(pt.last_err) : "");
	else
		fprintf(out, "  view passthrough: off (%s)\n", pt.why);
	if (r->fan) {
		struct sbx_fan_counts c;
		sbx_fan_counts(r->fan, &c);
		char left[96] = "";
		if (c.fast_left)
			snprintf(left, sizeof(left),
				 " (and %zu fast subtrees gone or replaced during start-up)",
				 c.fast_left);
		fprintf(out,
			"  split view: %zu fast subtrees (%zu files), %zu directories through "
			"FUSE%s; %llu open events, %llu decided, %llu refused, %llu files "
			"marked at open, %llu pre-marked in %.3f s (%.3f s of it standing aside "
			"for the agent's commands)%s\n",
			c.fast_subtrees, c.fast_files, c.fuse_dirs, left,
			(unsigned long long)c.events, (unsigned long long)c.decided,
			(unsigned long long)c.denied, (unsigned long long)c.marked,
			(unsigned long long)c.premarked, c.premark_s, c.aside_s,
			c.premark_running ? " (the walk had not ended when the session did)" : "");
	} else if (r->split_why[0]) {
		fprintf(out, "  project view: FUSE (%s)\n", r->split_why);
	}
}
