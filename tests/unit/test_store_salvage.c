/*
 * test_store_salvage.c: the audit when a page of it is damaged (every
 * readable row is still delivered, the others are named), the bounded quick
 * check of session start, the latest-N limit and the decision filter, and
 * the sessions listing with its counts and short ids.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "damage.h"
#include "store.h"
#include "store_fx.h"

/* Appends |n| rows to session |session| from time |t0|, row i at t0 + i;
 * every 7th is refused, every 11th was answered by a person. */
static void fill(struct sto_db *db, const char *session, int n, int64_t t0)
{
	for (int i = 0; i < n; i += 500) {
		struct sto_row rows[500];
		char sum[500][32];
		int k = n - i < 500 ? n - i : 500;
		for (int j = 0; j < k; j++) {
			snprintf(sum[j], sizeof(sum[j]), "cmd %d", i + j);
			rows[j] = (struct sto_row){
				.ts_us = t0 + i + j,
				.session = session,
				.pid = 100 + (i + j) % 50,
				.ppid = 1,
				.kind = "exec",
				.request =
					"{\"argv\":[\"cc\",\"-c\",\"src/file.c\"],\"cwd\":\".\"}",
				.summary = sum[j],
				.decision = (i + j) % 7 == 0 ? "deny" : "allow",
				.source = (i + j) % 11 == 0 ? "user" : "fast_path",
				.reason = "a reason long enough to make the rows take some room",
				.decided_by = "warden",
			};
		}
		assert_int_equal(sto_append_batch(db, rows, (size_t)k, NULL), 0);
	}
}

struct seen {
	int n;
	int64_t last_ts, last_id;
	bool ordered;
	int64_t min_id, max_id;
};

static int seen_cb(const struct sto_row *row, void *arg)
{
	struct seen *s = arg;
	if (s->n && (row->ts_us < s->last_ts || (row->ts_us == s->last_ts && row->id < s->last_id)))
		s->ordered = false;
	if (!s->n || row->id < s->min_id)
		s->min_id = row->id;
	if (row->id > s->max_id)
		s->max_id = row->id;
	s->last_ts = row->ts_us;
	s->last_id = row->id;
	s->n++;
	return 0;
}

/* A page of decisions overwritten in the middle of the table: the query
 * delivers every other row, in order, and names the lost ones. */
static void test_query_reads_around_a_damaged_page(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	fill(db, "s1", 3000, 1000000);
	sto_close(db);
	int64_t first = 0;
	int lost = dmg_decisions_leaf(fx->path, &first);
	assert_true(lost > 0 && first > 1 && first + lost <= 3000);

	db = open_ok(fx->path);
	struct seen s = {.ordered = true};
	wd_autofree char *m = NULL;
	assert_int_equal(sto_query(db, NULL, seen_cb, &s, &m), -EUCLEAN);
	assert_int_equal(s.n, 3000 - lost);
	assert_true(s.ordered);
	assert_int_equal(s.min_id, 1);
	assert_int_equal(s.max_id, 3000);
	assert_non_null(m);
	char want[64];
	snprintf(want, sizeof(want), "%d rows could not be read (ids %lld-%lld)", lost,
		 (long long)first, (long long)(first + lost - 1));
	if (!strstr(m, want))
		print_error("message: %s\nwanted: %s\n", m, want);
	assert_non_null(strstr(m, want));
	assert_non_null(strstr(m, fx->path));
	assert_non_null(strstr(m, ".recover"));

	/* With a session filter (an index walk that meets the damage after
	 * delivering rows): no row twice, none missing. */
	s = (struct seen){.ordered = true};
	assert_int_equal(sto_query(db, &(struct sto_filter){.session = "s1"}, seen_cb, &s, NULL),
			 -EUCLEAN);
	assert_int_equal(s.n, 3000 - lost);
	assert_true(s.ordered);

	/* The latest 10, newest first, and a filter the lost rows cannot
	 * be checked against. */
	s = (struct seen){.ordered = true};
	struct sto_filter nf = {.newest_first = true, .limit = 10};
	int r = sto_query(db, &nf, seen_cb, &s, NULL);
	assert_true(r == 0 || r == -EUCLEAN);
	assert_int_equal(s.n, 10);
	assert_int_equal(s.min_id, 2991);
	sto_close(db);
}

/* sto_print's table and CSV print every readable row of a damaged file. */
static void test_print_reads_around_a_damaged_page(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	fill(db, "s1", 3000, 1000000);
	sto_close(db);
	int64_t first = 0;
	int lost = dmg_decisions_leaf(fx->path, &first);
	db = open_ok(fx->path);
	for (int fmt = STO_FMT_TABLE; fmt <= STO_FMT_CSV; fmt++) {
		if (fmt == STO_FMT_JSON)
			continue;
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		assert_int_equal(sto_print(db, NULL, (enum sto_format)fmt, out, NULL), -EUCLEAN);
		fclose(out);
		int lines = 0;
		for (size_t i = 0; i < len; i++)
			lines += buf[i] == '\n';
		assert_int_equal(lines, 1 + 3000 - lost); /* a header, then the rows */
		char gone[32];
		/* Row id N has the summary "cmd N-1". */
		snprintf(gone, sizeof(gone), "cmd %lld%s", (long long)first - 2,
			 fmt == STO_FMT_CSV ? "," : " ");
		assert_non_null(strstr(buf, gone)); /* the row before the damage */
		snprintf(gone, sizeof(gone), "cmd %lld%s", (long long)first - 1,
			 fmt == STO_FMT_CSV ? "," : " ");
		assert_null(strstr(buf, gone)); /* the first lost row */
		free(buf);
	}
	sto_close(db);
}

static void test_quick_check(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	fill(db, "s1", 20000, 1000000);
	bool whole = false;
	char *err = NULL;
	assert_int_equal(sto_quick_check(db, 0, &whole, &err), 0);
	assert_true(whole);
	assert_null(err);
	/* A bound it cannot meet: it stops, and says it did not see all. */
	assert_int_equal(sto_quick_check(db, 1, &whole, &err), 0);
	assert_false(whole);
	sto_close(db);

	int64_t first;
	dmg_decisions_leaf(fx->path, &first);
	db = open_ok(fx->path);
	assert_int_equal(sto_quick_check(db, 10000, &whole, &err), -EUCLEAN);
	assert_non_null(err);
	assert_non_null(strstr(err, fx->path));
	assert_non_null(strstr(err, "damaged"));
	assert_non_null(strstr(err, "sqlite3"));
	assert_non_null(strstr(err, ".recover"));
	assert_null(strstr(err, "(null)"));
	free(err);
	sto_close(db);
}

struct pids {
	int pid[16];
	char sum[16][16];
	int n;
};

static int pids_cb(const struct sto_row *row, void *arg)
{
	struct pids *p = arg;
	if (p->n < 16)
		snprintf(p->sum[p->n], sizeof(p->sum[0]), "%s", row->summary);
	p->n++;
	return 0;
}

/* --limit N means the latest N, still oldest first; --decision filters. */
static void test_limit_is_the_latest_and_decision_filters(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	fill(db, "s1", 100, 1000000);
	struct pids p = {0};
	assert_int_equal(sto_query(db, &(struct sto_filter){.limit = 3}, pids_cb, &p, NULL), 0);
	assert_int_equal(p.n, 3);
	assert_string_equal(p.sum[0], "cmd 97");
	assert_string_equal(p.sum[1], "cmd 98");
	assert_string_equal(p.sum[2], "cmd 99");

	memset(&p, 0, sizeof(p));
	struct sto_filter d = {.decision = "deny"};
	assert_int_equal(sto_query(db, &d, pids_cb, &p, NULL), 0);
	assert_int_equal(p.n, 15); /* 0, 7, ... 98 */
	memset(&p, 0, sizeof(p));
	d.limit = 2;
	assert_int_equal(sto_query(db, &d, pids_cb, &p, NULL), 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.sum[0], "cmd 91");
	assert_string_equal(p.sum[1], "cmd 98");
	memset(&p, 0, sizeof(p));
	d.decision = "allow";
	d.limit = 0;
	assert_int_equal(sto_query(db, &d, pids_cb, &p, NULL), 0);
	assert_int_equal(p.n, 85);
	sto_close(db);
}

struct listing {
	int n;
	char id[4][32];
	int64_t allowed[4], refused[4], asked[4], ended[4];
	int exit_status[4];
	bool has_exit[4];
};

static int list_cb(const struct sto_session_info *s, void *arg)
{
	struct listing *l = arg;
	if (l->n < 4) {
		snprintf(l->id[l->n], sizeof(l->id[0]), "%s", s->id);
		l->allowed[l->n] = s->allowed;
		l->refused[l->n] = s->refused;
		l->asked[l->n] = s->asked;
		l->ended[l->n] = s->ended_us;
		l->exit_status[l->n] = s->exit_status;
		l->has_exit[l->n] = s->has_exit;
	}
	l->n++;
	return 0;
}

static void begin(struct sto_db *db, const char *id, int64_t t)
{
	struct sto_session s = {.id = id, .started_us = t, .tier = "standard", .role = "agent"};
	assert_int_equal(sto_session_begin(db, &s, NULL), 0);
}

static void test_sessions_counts_and_short_ids(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	begin(db, "20261201-100000-4f2a", 1000);
	fill(db, "20261201-100000-4f2a", 22, 2000); /* deny: 0 7 14 21; user: 0 11 */
	struct sto_row t = {.ts_us = 3000,
			    .session = "20261201-100000-4f2a",
			    .kind = "exec",
			    .decision = "deny",
			    .source = "timeout"};
	assert_int_equal(sto_append(db, &t, NULL), 0);
	assert_int_equal(sto_session_end(db, "20261201-100000-4f2a", 61000000 + 1000, 3, NULL), 0);
	begin(db, "20261202-110000-beef", 5000);
	begin(db, "20261203-120000-4F2A", 9000); /* the same short id, any case */

	struct listing l = {0};
	assert_int_equal(sto_sessions(db, 0, list_cb, &l, NULL), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.id[0], "20261201-100000-4f2a");
	assert_int_equal(l.allowed[0], 18);
	assert_int_equal(l.refused[0], 5);
	assert_int_equal(l.asked[0], 3);
	assert_true(l.has_exit[0]);
	assert_int_equal(l.exit_status[0], 3);
	assert_int_equal(l.ended[0], 61001000);
	assert_false(l.has_exit[1]);
	assert_int_equal(l.ended[1], 0);
	memset(&l, 0, sizeof(l));
	assert_int_equal(sto_sessions(db, 2, list_cb, &l, NULL), 0);
	assert_int_equal(l.n, 2); /* the latest two, oldest first */
	assert_string_equal(l.id[0], "20261202-110000-beef");

	char *id = NULL, *err = NULL;
	assert_int_equal(sto_session_find(db, "beef", &id, &err), 0);
	assert_string_equal(id, "20261202-110000-beef");
	free(id);
	assert_int_equal(sto_session_find(db, "BEEF", &id, &err), 0);
	free(id);
	assert_int_equal(sto_session_find(db, "last", &id, &err), 0);
	assert_string_equal(id, "20261203-120000-4F2A");
	free(id);
	assert_int_equal(sto_session_find(db, "20261201-100000-4f2a", &id, &err), 0);
	free(id);
	assert_int_equal(sto_session_find(db, "4f2a", &id, &err), -ENOTUNIQ);
	assert_null(id);
	assert_non_null(strstr(err, "full id"));
	free(err);
	err = NULL;
	assert_int_equal(sto_session_find(db, "dead", &id, &err), -ENOENT);
	assert_non_null(strstr(err, "dead"));
	free(err);
	err = NULL;
	/* Not a suffix match on anything longer or shorter. */
	assert_int_equal(sto_session_find(db, "eef", &id, &err), -ENOENT);
	free(err);
	sto_close(db);
}

static void test_sessions_of_a_damaged_file(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	begin(db, "20261201-100000-4f2a", 1000);
	fill(db, "20261201-100000-4f2a", 3000, 2000);
	sto_close(db);
	int64_t first;
	dmg_decisions_leaf(fx->path, &first);
	db = open_ok(fx->path);
	struct listing l = {0};
	wd_autofree char *err = NULL;
	assert_int_equal(sto_sessions(db, 0, list_cb, &l, &err), -EUCLEAN);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.allowed[0], -1);
	assert_non_null(err);
	assert_non_null(strstr(err, "damaged"));
	sto_close(db);
}

/* Overwrites |len| bytes of page 1 from |at| with garbage, after the audit
 * was closed (its WAL folded in and removed by the last close). */
static void damage_page_one(const char *path, off_t at, size_t len)
{
	char wal[160];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	assert_int_equal(access(wal, F_OK), -1);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	unsigned char junk[4096];
	memset(junk, 0x5a, sizeof(junk));
	assert_true(len <= sizeof(junk));
	assert_int_equal(pwrite(fd, junk, len, at), (ssize_t)len);
	close(fd);
}

/* A file whose first page is damaged (its header, or the schema after it)
 * cannot be opened; the message says what to save, and how, before the
 * file is moved aside, as the quick check's does. */
static void test_open_of_a_damaged_first_page_says_what_to_do(void **state)
{
	struct fx *fx = *state;
	char want[256];
	snprintf(want, sizeof(want), "save what can be read with `sqlite3 %s .recover > saved.sql`",
		 fx->path);
	/* The header (magic string, page size ...), the schema's b-tree page
	 * that follows it, then the page of the table of schema versions
	 * (len 0). */
	static const struct {
		off_t at;
		size_t len;
	} cases[] = {{0, 100}, {100, 1000}, {0, 0}};
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		struct sto_db *db = open_ok(fx->path);
		fill(db, "s1", 50, 1000);
		sto_close(db);
		if (cases[i].len)
			damage_page_one(fx->path, cases[i].at, cases[i].len);
		else
			assert_true(dmg_table_root(fx->path, "schema_version") > 1);
		db = NULL;
		wd_autofree char *err = NULL;
		int r = sto_open(fx->path, &db, &err);
		assert_null(db);
		assert_true(r < 0);
		assert_non_null(err);
		if (!strstr(err, want))
			print_error("case %zu: %d %s\nwanted: %s\n", i, r, err, want);
		assert_non_null(strstr(err, want));
		assert_non_null(strstr(err, "damaged"));
		assert_non_null(strstr(err, "then move the file aside"));
		assert_null(strchr(err, '\n'));
		assert_int_equal(unlink(fx->path), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_query_reads_around_a_damaged_page),
		T(test_print_reads_around_a_damaged_page),
		T(test_quick_check),
		T(test_limit_is_the_latest_and_decision_filters),
		T(test_sessions_counts_and_short_ids),
		T(test_sessions_of_a_damaged_file),
		T(test_open_of_a_damaged_first_page_says_what_to_do),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
