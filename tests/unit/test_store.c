/*
 * test_store.c: the SQLite audit on real files in a temporary directory:
 * round trips of every column, filters, group commits, reopening,
 * migrations, a newer schema, a concurrent reader process, the three print
 * formats, and durability across a SIGKILL of the writing process.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "common.h"
#include "store.h"
#include "store_int.h"

/* ---- fixtures ---------------------------------------------------------- */

struct fx {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fx *fx = wd_calloc(1, sizeof(*fx));
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/wd-test-store-XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->path, sizeof(fx->path), "%s/.warden/audit.db", fx->dir);
	*state = fx;
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static struct sto_db *open_ok(const char *path)
{
	struct sto_db *db = NULL;
	char *err = NULL;
	int r = sto_open(path, &db, &err);
	if (r != 0)
		print_error("sto_open: %d %s\n", r, err ? err : "");
	assert_int_equal(r, 0);
	assert_null(err);
	assert_non_null(db);
	return db;
}

/* A row with every column set; |i| varies it. */
static struct sto_row sample(int i, const char *session, const char *source, const char *kind,
			     int64_t ts_us)
{
	struct sto_row r = {
		.ts_us = ts_us,
		.session = session,
		.pid = 1000 + i,
		.ppid = 999,
		.kind = kind,
		.request = "{\"kind\":\"exec\",\"argv\":[\"ls\",\"-l\"],\"cwd\":\"src\"}",
		.summary = "ls -l",
		.decision = "allow",
		.source = source,
		.reason = "read-only command",
		.decided_by = "warden",
		.note = NULL,
		.tool_call = 0,
		.judge = NULL,
		.latency_us = 17 + i,
	};
	return r;
}

static int count_cb(const struct sto_row *row, void *arg)
{
	(void)row;
	(*(int *)arg)++;
	return 0;
}

static int count(struct sto_db *db, const struct sto_filter *f)
{
	int n = 0;
	assert_int_equal(sto_query(db, f, count_cb, &n), 0);
	return n;
}

/* Collects row ids (and pids, to check the order of a filter). */
struct ids {
	int64_t id[4096];
	int pid[4096];
	size_t n;
};

static int ids_cb(const struct sto_row *row, void *arg)
{
	struct ids *ids = arg;
	if (ids->n < WD_ARRAY_SIZE(ids->id)) {
		ids->id[ids->n] = row->id;
		ids->pid[ids->n] = row->pid;
	}
	ids->n++;
	return 0;
}

/* ---- open, modes, schema ---------------------------------------------- */

static void test_open_creates_private_files(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	struct stat st;
	char dir[160];
	snprintf(dir, sizeof(dir), "%s/.warden", fx->dir);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(sto_check(db), 0);
	assert_int_equal(sto_schema_version(), 2);
	/* SQLite gives the WAL the main file's mode. */
	struct sto_row row = sample(0, "s", "fast_path", "exec", 1);
	assert_int_equal(sto_append(db, &row), 0);
	char wal[200];
	snprintf(wal, sizeof(wal), "%s-wal", fx->path);
	assert_int_equal(stat(wal, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	sto_close(db);

	/* WAL survives in the file header. */
	sqlite3 *h = NULL;
	assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
	sqlite3_stmt *q = NULL;
	assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(q, 0), "wal");
	sqlite3_finalize(q);
	sqlite3_close(h);
}

static void test_open_empty_path_fails(void **state)
{
	(void)state;
	struct sto_db *db = NULL;
	char *err = NULL;
	assert_int_equal(sto_open("", &db, &err), -EINVAL);
	assert_null(db);
	assert_non_null(err);
	free(err);
}

static void test_open_missing_grandparent_fails(void **state)
{
	struct fx *fx = *state;
	char p[200];
	snprintf(p, sizeof(p), "%s/no/such/audit.db", fx->dir);
	struct sto_db *db = NULL;
	char *err = NULL;
	assert_int_equal(sto_open(p, &db, &err), -ENOENT);
	assert_non_null(strstr(err, "cannot create the directory"));
	free(err);
}

/* Runs |sql| on |path| with a plain connection (what a hand edit would do). */
static void exec_sql(const char *path, const char *sql)
{
	sqlite3 *h = NULL;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	char *msg = NULL;
	int rc = sqlite3_exec(h, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		print_error("%s: %s\n", sql, msg ? msg : "");
	assert_int_equal(rc, SQLITE_OK);
	sqlite3_close(h);
}

static int64_t query_int(const char *path, const char *sql)
{
	sqlite3 *h = NULL;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	sqlite3_stmt *q = NULL;
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	sqlite3_close(h);
	return v;
}

static void test_migrate_from_empty_file(void **state)
{
	struct fx *fx = *state;
	char dir[160];
	snprintf(dir, sizeof(dir), "%s/.warden", fx->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	int fd = open(fx->path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);

	struct sto_db *db = open_ok(fx->path);
	sto_close(db);
	assert_int_equal(query_int(fx->path, "SELECT max(version) FROM schema_version"), 2);
	/* v2 dropped the two cross-session indexes; the per-session one stays. */
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM sqlite_schema WHERE type = "
					     "'index' AND name IN ('decisions_ts', "
					     "'decisions_source_ts', 'decisions_session_ts')"),
			 1);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM sqlite_schema WHERE type = "
					     "'table' AND name IN ('sessions', 'decisions')"),
			 2);
	/* Opening again applies nothing twice. */
	db = open_ok(fx->path);
	sto_close(db);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM schema_version"), 2);
}

static void test_open_refuses_newer_schema(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	struct sto_row row = sample(1, "s1", "fast_path", "exec", 100);
	assert_int_equal(sto_append(db, &row), 0);
	sto_close(db);
	exec_sql(fx->path, "INSERT INTO schema_version VALUES (999, 0)");

	char *err = NULL;
	db = NULL;
	assert_int_equal(sto_open(fx->path, &db, &err), -EPROTO);
	assert_null(db);
	assert_non_null(err);
	assert_non_null(strstr(err, "newer warden"));
	assert_non_null(strstr(err, "999"));
	assert_non_null(strstr(err, fx->path));
	free(err);
	/* Refusing touched nothing. */
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM decisions"), 1);
	assert_int_equal(query_int(fx->path, "SELECT max(version) FROM schema_version"), 999);
}

static void test_open_refuses_foreign_database(void **state)
{
	struct fx *fx = *state;
	char dir[160];
	snprintf(dir, sizeof(dir), "%s/.warden", fx->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	exec_sql(fx->path, "CREATE TABLE photos (id INTEGER)");
	struct sto_db *db = NULL;
	char *err = NULL;
	assert_int_equal(sto_open(fx->path, &db, &err), -EPROTO);
	assert_non_null(strstr(err, "not a warden audit"));
	free(err);
}

static void test_open_refuses_not_a_database(void **state)
{
	struct fx *fx = *state;
	char dir[160];
	snprintf(dir, sizeof(dir), "%s/.warden", fx->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	FILE *f = fopen(fx->path, "w");
	assert_non_null(f);
	for (int i = 0; i < 200; i++)
		fputs("this is not a database, it is a text file. ", f);
	fclose(f);
	struct sto_db *db = NULL;
	char *err = NULL;
	assert_int_equal(sto_open(fx->path, &db, &err), -EIO);
	assert_non_null(strstr(err, "not an SQLite database"));
	free(err);
}

/* The migration runner on a scratch list: a failing step leaves the version
 * and the tables as they were; the next good list applies. */
static void test_migrate_is_all_or_none(void **state)
{
	struct fx *fx = *state;
	char p[160];
	snprintf(p, sizeof(p), "%s/m.db", fx->dir);
	sqlite3 *h = NULL;
	assert_int_equal(sqlite3_open(p, &h), SQLITE_OK);
	const struct sto_migration v1[] = {{1, "CREATE TABLE a (x);"}};
	const struct sto_migration bad[] = {
		{1, "CREATE TABLE a (x);"},
		{2, "CREATE TABLE b (x); CREATE TABLE c (y); INSERT INTO nowhere VALUES (1);"},
	};
	const struct sto_migration good[] = {
		{1, "CREATE TABLE a (x);"},
		{2, "CREATE TABLE b (x); CREATE TABLE c (y);"},
	};
	const struct sto_migration gap[] = {{1, "SELECT 1;"}, {3, "SELECT 1;"}};
	char *err = NULL;
	assert_int_equal(sto_migrate(h, v1, 1, p, &err), 0);
	assert_int_equal(sto_migrate(h, bad, 2, p, &err), -EIO);
	assert_non_null(strstr(err, "version 2"));
	free(err);
	err = NULL;
	sqlite3_close(h);
	assert_int_equal(query_int(p, "SELECT max(version) FROM schema_version"), 1);
	assert_int_equal(query_int(p, "SELECT count(*) FROM sqlite_schema WHERE name = 'b'"), 0);

	assert_int_equal(sqlite3_open(p, &h), SQLITE_OK);
	assert_int_equal(sto_migrate(h, gap, 2, p, &err), -EINVAL);
	free(err);
	err = NULL;
	assert_int_equal(sto_migrate(h, good, 2, p, &err), 0);
	assert_null(err);
	sqlite3_close(h);
	assert_int_equal(query_int(p, "SELECT max(version) FROM schema_version"), 2);
	assert_int_equal(query_int(p, "SELECT count(*) FROM sqlite_schema WHERE name IN ('b', "
				      "'c')"),
			 2);
}

/* ---- sessions ---------------------------------------------------------- */

static void test_session_begin_end(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	struct sto_session s = {
		.id = "20261202-120643-4f2a",
		.parent = "20261202-110000-0000",
		.started_us = 1000,
		.project = "/home/ann/proj",
		.command = "claude --print 'fix it'",
		.tier = "standard",
		.role = "agent",
		.agent = "claude",
		.task = "fix the build",
	};
	assert_int_equal(sto_session_begin(db, &s), 0);
	assert_int_equal(sto_session_begin(db, &s), -EEXIST);
	assert_int_equal(sto_session_end(db, s.id, 5000, 3), 0);
	assert_int_equal(sto_session_end(db, "no-such", 5000, 3), -ENOENT);
	assert_true(strlen(sto_errmsg(db)) > 0);
	struct sto_session bad = {0};
	assert_int_equal(sto_session_begin(db, &bad), -EINVAL);
	sto_close(db);
	assert_int_equal(query_int(fx->path, "SELECT ended_us FROM sessions WHERE id = "
					     "'20261202-120643-4f2a'"),
			 5000);
	assert_int_equal(query_int(fx->path, "SELECT exit_status FROM sessions"), 3);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM sessions WHERE parent = "
					     "'20261202-110000-0000' AND task = 'fix the build'"),
			 1);
}

/* ---- append and query --------------------------------------------------- */

struct copy {
	struct sto_row row;
	char *s[11];
	int n;
};

static const char *keep(struct copy *c, const char *s)
{
	if (!s)
		return NULL;
	c->s[c->n] = wd_strdup(s);
	return c->s[c->n++];
}

static int copy_cb(const struct sto_row *row, void *arg)
{
	struct copy *c = arg;
	c->row = *row;
	c->row.session = keep(c, row->session);
	c->row.kind = keep(c, row->kind);
	c->row.request = keep(c, row->request);
	c->row.summary = keep(c, row->summary);
	c->row.decision = keep(c, row->decision);
	c->row.source = keep(c, row->source);
	c->row.reason = keep(c, row->reason);
	c->row.decided_by = keep(c, row->decided_by);
	c->row.note = keep(c, row->note);
	c->row.judge = keep(c, row->judge);
	return 0;
}

static void assert_str_or_null(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void test_append_query_roundtrip(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	struct sto_row first = sample(0, "s1", "judge", "exec", 1700000000000001);
	assert_int_equal(sto_append(db, &first), 0);
	struct sto_row in = {
		.ts_us = 1764676803123456,
		.session = "20261202-120643-4f2a",
		.pid = 4242,
		.ppid = 4241,
		.kind = "open",
		.request = "{\"kind\":\"open\",\"path\":\".env\",\"access\":[\"read\"]}",
		.summary = "read .env, \"quoted\"\nsecond line \xc3\xa9",
		.decision = "deny",
		.source = "user",
		.reason = "no secrets, please",
		.decided_by = "ann",
		.note = "use .env.example instead",
		.tool_call = first.id,
		.judge = "{\"decision\":\"escalate\",\"risk_level\":\"high\",\"latency_ms\":812}",
		.latency_us = 812345,
	};
	assert_int_equal(sto_append(db, &in), 0);
	assert_true(in.id > first.id);

	struct copy c = {0};
	struct sto_filter f = {.source = "user"};
	assert_int_equal(sto_query(db, &f, copy_cb, &c), 0);
	assert_int_equal(c.row.id, in.id);
	assert_int_equal(c.row.ts_us, in.ts_us);
	assert_string_equal(c.row.session, in.session);
	assert_int_equal(c.row.pid, in.pid);
	assert_int_equal(c.row.ppid, in.ppid);
	assert_string_equal(c.row.kind, in.kind);
	assert_string_equal(c.row.request, in.request);
	assert_string_equal(c.row.summary, in.summary);
	assert_string_equal(c.row.decision, in.decision);
	assert_string_equal(c.row.source, in.source);
	assert_string_equal(c.row.reason, in.reason);
	assert_string_equal(c.row.decided_by, in.decided_by);
	assert_string_equal(c.row.note, in.note);
	assert_int_equal(c.row.tool_call, in.tool_call);
	assert_string_equal(c.row.judge, in.judge);
	assert_int_equal(c.row.latency_us, in.latency_us);
	for (int i = 0; i < c.n; i++)
		free(c.s[i]);

	/* NULL strings and a zero tool call come back as NULL and 0. */
	struct copy c0 = {0};
	f.source = "judge";
	assert_int_equal(sto_query(db, &f, copy_cb, &c0), 0);
	assert_int_equal(c0.row.id, first.id);
	assert_null(c0.row.note);
	assert_null(c0.row.judge);
	assert_int_equal(c0.row.tool_call, 0);
	assert_str_or_null(c0.row.summary, "ls -l");
	for (int i = 0; i < c0.n; i++)
		free(c0.s[i]);

	/* by_person is derived from source 'user'. */
	sto_close(db);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM decisions WHERE by_person"), 1);
}

static void test_append_rejects_incomplete_rows(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	struct sto_row r = sample(0, "s", "fast_path", "exec", 1);
	r.decision = "maybe";
	assert_int_equal(sto_append(db, &r), -EINVAL);
	assert_int_equal(r.id, 0);
	assert_non_null(strstr(sto_errmsg(db), "decision"));
	r = sample(0, "s", "fast_path", NULL, 1);
	assert_int_equal(sto_append(db, &r), -EINVAL);
	r = sample(0, "s", NULL, "exec", 1);
	assert_int_equal(sto_append(db, &r), -EINVAL);
	r = sample(0, "s", "fast_path", "exec", 1);
	r.decision = NULL;
	assert_int_equal(sto_append(db, &r), -EINVAL);
	assert_int_equal(count(db, NULL), 0);
	/* The connection is usable after a refusal. */
	r = sample(0, "s", "fast_path", "exec", 1);
	assert_int_equal(sto_append(db, &r), 0);
	assert_int_equal(count(db, NULL), 1);
	sto_close(db);
}

static void test_query_filters(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	/* 40 rows: sessions a/b alternate, every 4th a person's, every 5th an
	 * open, timestamps 1000, 2000, ... inserted out of order in pairs. */
	for (int i = 0; i < 40; i++) {
		int t = (i % 2) ? i - 1 : i + 1;
		struct sto_row r = sample(i, i % 2 ? "b" : "a", i % 4 == 0 ? "user" : "fast_path",
					  i % 5 == 0 ? "open" : "exec", 1000 * (int64_t)(t + 1));
		assert_int_equal(sto_append(db, &r), 0);
	}
	assert_int_equal(count(db, NULL), 40);
	assert_int_equal(count(db, &(struct sto_filter){.session = "a"}), 20);
	assert_int_equal(count(db, &(struct sto_filter){.session = "zz"}), 0);
	assert_int_equal(count(db, &(struct sto_filter){.source = "user"}), 10);
	assert_int_equal(count(db, &(struct sto_filter){.kind = "open"}), 8);
	assert_int_equal(count(db, &(struct sto_filter){.since_us = 31000}), 10);
	assert_int_equal(
		count(db, &(struct sto_filter){.session = "a", .source = "user", .kind = "open"}),
		2); /* i = 0, 20 */
	assert_int_equal(count(db, &(struct sto_filter){.limit = 7}), 7);

	/* Oldest first by time, not by insertion. */
	struct ids ids = {0};
	assert_int_equal(sto_query(db, NULL, ids_cb, &ids), 0);
	assert_int_equal(ids.n, 40);
	assert_int_equal(ids.pid[0], 1001); /* i = 1 has t = 0 */
	assert_int_equal(ids.pid[1], 1000);
	assert_int_equal(ids.pid[39], 1038);

	/* Newest first with a limit: the newest rows. */
	memset(&ids, 0, sizeof(ids));
	struct sto_filter nf = {.newest_first = true, .limit = 3, .session = "b"};
	assert_int_equal(sto_query(db, &nf, ids_cb, &ids), 0);
	assert_int_equal(ids.n, 3);
	assert_int_equal(ids.pid[0], 1039); /* i = 39 has t = 38 */
	assert_int_equal(ids.pid[1], 1037);
	assert_int_equal(ids.pid[2], 1035);
	sto_close(db);
}

static int stop_at_3(const struct sto_row *row, void *arg)
{
	(void)row;
	return ++*(int *)arg == 3 ? 42 : 0;
}

/* A callback that queries again (the cached statement is running). */
static int nested_cb(const struct sto_row *row, void *arg)
{
	struct sto_db *db = arg;
	(void)row;
	return count(db, NULL) == 5 ? 0 : -1;
}

static void test_query_callback_stops_and_nests(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	for (int i = 0; i < 5; i++) {
		struct sto_row r = sample(i, "s", "fast_path", "exec", i + 1);
		assert_int_equal(sto_append(db, &r), 0);
	}
	int n = 0;
	assert_int_equal(sto_query(db, NULL, stop_at_3, &n), 42);
	assert_int_equal(n, 3);
	/* The statement was reset: a new query sees everything. */
	assert_int_equal(count(db, NULL), 5);
	assert_int_equal(sto_query(db, NULL, nested_cb, db), 0);
	sto_close(db);
}

static void test_append_batch_all_or_none(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	struct sto_row rows[5];
	for (int i = 0; i < 5; i++)
		rows[i] = sample(i, "s", "judge", "exec", 100 + i);
	rows[3].decision = "perhaps"; /* refused after three inserts */
	assert_int_equal(sto_append_batch(db, rows, 5), -EINVAL);
	for (int i = 0; i < 5; i++)
		assert_int_equal(rows[i].id, 0);
	assert_int_equal(count(db, NULL), 0);

	rows[3].decision = "deny";
	assert_int_equal(sto_append_batch(db, rows, 5), 0);
	for (int i = 1; i < 5; i++)
		assert_int_equal(rows[i].id, rows[i - 1].id + 1);
	assert_int_equal(count(db, NULL), 5);
	assert_int_equal(sto_append_batch(db, rows, 0), 0);
	sto_close(db);
}

static void test_reopen_keeps_rows(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	int64_t last = 0;
	for (int i = 0; i < 100; i++) {
		struct sto_row r = sample(i, "s", "fast_path", "exec", i + 1);
		assert_int_equal(sto_append(db, &r), 0);
		last = r.id;
	}
	sto_close(db);
	db = open_ok(fx->path);
	assert_int_equal(count(db, NULL), 100);
	struct sto_row r = sample(100, "s", "fast_path", "exec", 101);
	assert_int_equal(sto_append(db, &r), 0);
	assert_int_equal(r.id, last + 1);
	assert_int_equal(sto_check(db), 0);
	sto_close(db);
}

/* ---- concurrency and crashes ------------------------------------------- */

/* A reader process (as `warden audit` is) queries over and over while this
 * process appends: the reader never fails, never sees the count go down, and
 * the writer never fails either. */
static void test_concurrent_reader_process(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	int stop[2], report[2];
	assert_int_equal(pipe2(stop, O_CLOEXEC), 0);
	assert_int_equal(pipe2(report, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(stop[1]);
		close(report[0]);
		struct sto_db *rd = NULL;
		int reads = 0, last = 0, status = 0;
		for (;;) {
			if (!rd && sto_open(fx->path, &rd, NULL) != 0)
				_exit(2);
			int n = 0;
			if (sto_query(rd, NULL, count_cb, &n) != 0)
				_exit(3);
			if (n < last)
				_exit(4);
			last = n;
			reads++;
			/* Now and then a fresh connection, as a new `warden audit`. */
			if (reads % 50 == 0) {
				sto_close(rd);
				rd = NULL;
			}
			struct timeval tv = {0, 0};
			fd_set set;
			FD_ZERO(&set);
			FD_SET(stop[0], &set);
			if (select(stop[0] + 1, &set, NULL, NULL, &tv) > 0)
				break;
		}
		sto_close(rd);
		if (write(report[1], &reads, sizeof(reads)) != sizeof(reads))
			status = 5;
		_exit(status);
	}
	close(stop[0]);
	close(report[1]);
	for (int i = 0; i < 2000; i++) {
		struct sto_row r = sample(i, "s", "fast_path", "exec", i + 1);
		int rc = sto_append(db, &r);
		if (rc != 0)
			print_error("append %d: %d %s\n", i, rc, sto_errmsg(db));
		assert_int_equal(rc, 0);
	}
	close(stop[1]);
	int reads = 0, status = 0;
	assert_int_equal(read(report[0], &reads, sizeof(reads)), sizeof(reads));
	close(report[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(reads > 10);
	assert_int_equal(count(db, NULL), 2000);
	sto_close(db);
}

/* Several processes open a fresh file at once (two `warden run` in one
 * project): one migrates, the others wait and find it done; all append. */
static void test_concurrent_first_open(void **state)
{
	struct fx *fx = *state;
	enum { N = 6 };
	pid_t pids[N];
	int go[2];
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	for (int i = 0; i < N; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			char c;
			close(go[1]);
			if (read(go[0], &c, 1) != 0) /* released when the pipe closes */
				_exit(6);
			struct sto_db *db = NULL;
			char *e = NULL;
			if (sto_open(fx->path, &db, &e) != 0) {
				fprintf(stderr, "sto_open: %s\n", e ? e : "?");
				_exit(2);
			}
			for (int k = 0; k < 50; k++) {
				struct sto_row r = sample(k, "p", "fast_path", "exec", k + 1);
				if (sto_append(db, &r) != 0)
					_exit(3);
			}
			sto_close(db);
			_exit(0);
		}
	}
	close(go[0]);
	close(go[1]);
	for (int i = 0; i < N; i++) {
		int status = 0;
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM schema_version"), 2);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM decisions"), N * 50);
}

/* The child appends and reports each id once sto_append() returned; it is
 * killed either by itself between rows or by the parent at any moment (in
 * the middle of a transaction, likely). Every reported id must be there. */
static void crash_run(const char *path, bool self_kill)
{
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		struct sto_db *db = NULL;
		if (sto_open(path, &db, NULL) != 0)
			_exit(2);
		for (int i = 0; i < 100000; i++) {
			struct sto_row r = sample(i, "crash", "fast_path", "exec", i + 1);
			if (sto_append(db, &r) != 0)
				_exit(3);
			if (wd_write_all(p[1], &r.id, sizeof(r.id)) != 0)
				_exit(4);
			if (self_kill && i == 777)
				raise(SIGKILL);
		}
		_exit(5);
	}
	close(p[1]);
	static int64_t got[100000];
	size_t n = 0;
	while (n < WD_ARRAY_SIZE(got)) {
		ssize_t k = read(p[0], &got[n], sizeof(got[n]));
		if (k != sizeof(got[n]))
			break;
		n++;
		if (!self_kill && n == 1500)
			kill(pid, SIGKILL);
	}
	close(p[0]);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_true(n >= (self_kill ? 778u : 1500u));

	struct sto_db *db = open_ok(path);
	assert_int_equal(sto_check(db), 0);
	static struct ids ids;
	memset(&ids, 0, sizeof(ids));
	struct sto_filter f = {.session = "crash"};
	assert_int_equal(sto_query(db, &f, ids_cb, &ids), 0);
	assert_true(ids.n >= n);
	/* Ids ascend with time here, so the first n rows are the reported ones. */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ids.id[i], got[i]);
	sto_close(db);
}

static void test_crash_self_kill_keeps_committed_rows(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	sto_close(db);
	crash_run(fx->path, true);
}

static void test_crash_killed_mid_write_keeps_committed_rows(void **state)
{
	struct fx *fx = *state;
	char p[160];
	snprintf(p, sizeof(p), "%s/other/audit.db", fx->dir);
	crash_run(p, false);
}

/* ---- printing ---------------------------------------------------------- */

static const char tricky_summary[] = "echo \"a, b\" , 'c'\nsecond,line\r\nthird \"\"";
static const char tricky_note[] = "say \"why\"\n\x1b[31mred\x1b[0m";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static struct sto_db *print_fixture(const char *path)
{
	struct sto_db *db = open_ok(path);
	struct sto_row rows[3] = {
		sample(0, "20261202-120643-4f2a", "fast_path", "exec", 1764676803123456),
		sample(1, "20261202-120643-4f2a", "user", "exec", 1764676804000000),
		sample(2, "20261202-120643-4f2a", "tier", "open", 1764676805000000),
	};
	rows[1].summary = tricky_summary;
	rows[1].decision = "deny";
	rows[1].reason = "not now";
	rows[1].decided_by = "ann";
	rows[1].note = tricky_note;
	rows[1].judge = "{\"decision\":\"escalate\",\"risk_level\":\"high\"}";
	rows[2].summary = "read a/very/long/path/that/goes/on/and/on/and/on/and/on/and/on/"
			  "and/on/and/on/and/on/and/on/and/on/file.txt";
	rows[2].request = "not json \xff";
	rows[2].reason = "aggressive mode, auto-approve all escalated tool calls";
	rows[2].tool_call = 1;
	assert_int_equal(sto_append_batch(db, rows, 3), 0);
	return db;
}

/* Prints through a real FILE (an unnamed temporary file), as `warden audit`
 * prints to stdout, and returns what was written. Caller frees. */
static char *print_to_string(struct sto_db *db, enum sto_format fmt)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	assert_int_equal(sto_print(db, NULL, fmt, f), 0);
	long len = ftell(f);
	assert_true(len >= 0);
	char *buf = wd_malloc((size_t)len + 1);
	rewind(f);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static void test_print_table(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = print_fixture(fx->path);
	char *out = print_to_string(db, STO_FMT_TABLE);
	sto_close(db);
	/* A header and one line per row; nothing that drives a terminal. */
	int lines = 0;
	for (char *p = out; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 4);
	assert_null(strchr(out, '\x1b'));
	assert_null(strchr(out, '\r'));
	assert_true(wd_str_has_prefix(out, "TIME"));
	assert_non_null(strstr(out, "REASON/NOTE"));
	assert_non_null(strstr(out, "2025-12-02T12:00:03.123Z"));
	assert_non_null(strstr(out, "not now (note: say \"why\"\\n\\x1b[31mred"));
	/* The long summary is cut for the table only, with an ellipsis. */
	assert_non_null(strstr(out, "\xe2\x80\xa6"));
	assert_null(strstr(out, "file.txt"));
	/* Aligned: the DECISION column starts at the same place on every
	 * line (all columns before it are ASCII here). */
	const char *hdr = strstr(out, "DECISION");
	size_t col = (size_t)(hdr - out);
	char *line = out;
	for (int i = 0; i < 4; i++) {
		char *nl = strchr(line, '\n');
		assert_true((size_t)(nl - line) > col);
		assert_true(line[col - 1] == ' ' && line[col] != ' ');
		line = nl + 1;
	}
	assert_non_null(strstr(out, "  deny  "));
	free(out);
}

/* A small RFC 4180 reader: fields of one record; returns the number of
 * fields and advances *p past the record's CRLF. */
static int csv_record(const char **p, char fields[][256], int max)
{
	int n = 0;
	const char *s = *p;
	for (;;) {
		char *f = fields[n];
		size_t k = 0;
		if (*s == '"') {
			s++;
			for (;;) {
				assert_true(*s != '\0');
				if (s[0] == '"' && s[1] == '"') {
					f[k++] = '"';
					s += 2;
				} else if (s[0] == '"') {
					s++;
					break;
				} else {
					f[k++] = *s++;
				}
				assert_true(k < 255);
			}
		} else {
			while (*s && *s != ',' && *s != '\r' && *s != '\n')
				f[k++] = *s++;
		}
		f[k] = '\0';
		n++;
		assert_true(n <= max);
		if (*s == ',') {
			s++;
			continue;
		}
		assert_true(s[0] == '\r' && s[1] == '\n');
		*p = s + 2;
		return n;
	}
}

static void test_print_csv_quotes_round_trip(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = print_fixture(fx->path);
	char *out = print_to_string(db, STO_FMT_CSV);
	sto_close(db);
	static char f[20][256];
	const char *p = out;
	assert_int_equal(csv_record(&p, f, 20), 17);
	assert_string_equal(f[0], "id");
	assert_string_equal(f[8], "summary");
	assert_string_equal(f[13], "note");
	assert_int_equal(csv_record(&p, f, 20), 17);
	assert_string_equal(f[8], "ls -l");
	assert_string_equal(f[14], ""); /* no tool call */
	assert_string_equal(f[15], ""); /* no judge */
	assert_int_equal(csv_record(&p, f, 20), 17);
	assert_string_equal(f[1], "2025-12-02T12:00:04.000Z");
	assert_string_equal(f[8], tricky_summary);
	assert_string_equal(f[13], tricky_note);
	assert_string_equal(f[15], "{\"decision\":\"escalate\",\"risk_level\":\"high\"}");
	assert_int_equal(csv_record(&p, f, 20), 17);
	assert_string_equal(f[14], "1");
	assert_string_equal(f[16], "19");
	assert_string_equal(p, "");
	free(out);
}

static void test_print_json_is_valid(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = print_fixture(fx->path);
	char *out = print_to_string(db, STO_FMT_JSON);
	sto_close(db);
	if (system("python3 -c '' >/dev/null 2>&1") != 0) {
		free(out);
		print_message("python3 is missing: cannot check the JSON, skipped\n");
		skip();
	}
	/* Parse it with Python's json module and check the types the format
	 * promises; the expected strings travel as files, byte for byte. */
	char json[160], script[160], sum[160], note[160], cmd[800];
	snprintf(json, sizeof(json), "%s/out.json", fx->dir);
	snprintf(script, sizeof(script), "%s/check.py", fx->dir);
	snprintf(sum, sizeof(sum), "%s/summary.txt", fx->dir);
	snprintf(note, sizeof(note), "%s/note.txt", fx->dir);
	write_file(json, out);
	write_file(sum, tricky_summary);
	write_file(note, tricky_note);
	write_file(script,
		   "import json, sys\n"
		   "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
		   "exp_sum = open(sys.argv[2], 'rb').read().decode()\n"
		   "exp_note = open(sys.argv[3], 'rb').read().decode()\n"
		   "assert isinstance(d, list) and len(d) == 3, d\n"
		   "keys = {'id', 'time', 'ts_us', 'session', 'pid', 'ppid', 'kind', 'request',\n"
		   "        'summary', 'decision', 'source', 'by_person', 'reason', 'decided_by',\n"
		   "        'note', 'tool_call', 'judge', 'latency_us'}\n"
		   "assert all(set(o) == keys for o in d), [set(o) ^ keys for o in d]\n"
		   "assert d[0]['request']['argv'] == ['ls', '-l'], d[0]\n"
		   "assert d[0]['judge'] is None and d[0]['tool_call'] is None, d[0]\n"
		   "assert d[0]['ts_us'] == 1764676803123456, d[0]\n"
		   "assert d[1]['summary'] == exp_sum, d[1]\n"
		   "assert d[1]['note'] == exp_note, d[1]\n"
		   "assert d[1]['judge']['risk_level'] == 'high', d[1]\n"
		   "assert d[1]['by_person'] is True and d[0]['by_person'] is False\n"
		   "assert d[2]['request'] == 'not json \\ufffd', d[2]\n"
		   "assert d[2]['tool_call'] == 1, d[2]\n");
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s %s", script, json, sum, note);
	int st = system(cmd);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		print_error("JSON was:\n%s\n", out);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	free(out);

	/* An empty audit is an empty array. */
	char p[160];
	snprintf(p, sizeof(p), "%s/empty.db", fx->dir);
	db = open_ok(p);
	out = print_to_string(db, STO_FMT_JSON);
	assert_string_equal(out, "[]\n");
	free(out);
	sto_close(db);
}

static void test_check_detects_damage(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	for (int i = 0; i < 2000; i++) {
		struct sto_row r = sample(i, "s", "fast_path", "exec", i + 1);
		assert_int_equal(sto_append(db, &r), 0);
	}
	assert_int_equal(sto_check(db), 0);
	sto_close(db);
	/* Fold the WAL into the main file, then scribble over an index page. */
	exec_sql(fx->path, "PRAGMA wal_checkpoint(TRUNCATE)");
	int64_t page = query_int(fx->path, "SELECT rootpage FROM sqlite_schema WHERE name = "
					   "'decisions_session_ts'");
	int64_t psize = query_int(fx->path, "PRAGMA page_size");
	int fd = open(fx->path, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	char junk[512];
	memset(junk, 0x5a, sizeof(junk));
	assert_int_equal(pwrite(fd, junk, sizeof(junk), (page - 1) * psize + 8),
			 (ssize_t)sizeof(junk));
	close(fd);
	db = NULL;
	char *err = NULL;
	int r = sto_open(fx->path, &db, &err);
	if (r == 0) {
		assert_int_equal(sto_check(db), -EIO);
		if (!strstr(sto_errmsg(db), "damaged"))
			print_error("message: %s\n", sto_errmsg(db));
		assert_non_null(strstr(sto_errmsg(db), "damaged"));
		sto_close(db);
	} else {
		assert_int_equal(r, -EIO);
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_open_creates_private_files),
		T(test_open_empty_path_fails),
		T(test_open_missing_grandparent_fails),
		T(test_migrate_from_empty_file),
		T(test_open_refuses_newer_schema),
		T(test_open_refuses_foreign_database),
		T(test_open_refuses_not_a_database),
		T(test_migrate_is_all_or_none),
		T(test_session_begin_end),
		T(test_append_query_roundtrip),
		T(test_append_rejects_incomplete_rows),
		T(test_query_filters),
		T(test_query_callback_stops_and_nests),
		T(test_append_batch_all_or_none),
		T(test_reopen_keeps_rows),
		T(test_concurrent_reader_process),
		T(test_concurrent_first_open),
		T(test_crash_self_kill_keeps_committed_rows),
		T(test_crash_killed_mid_write_keeps_committed_rows),
		T(test_print_table),
		T(test_print_csv_quotes_round_trip),
		T(test_print_json_is_valid),
		T(test_check_detects_damage),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
