/*
 * test_store.c: the SQLite audit on real files in a temporary directory:
 * opening and file modes, migrations and a newer or foreign schema,
 * sessions, round trips of every column, filters, group commits and
 * reopening. Concurrency and crashes are in test_store_crash.c, the print
 * formats and the integrity check in test_store_print.c, the fixture in
 * store_fx.c.
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

#include "store_fx.h"

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
	assert_int_equal(sto_check(db, NULL), 0);
	assert_int_equal(sto_schema_version(), 3);
	/* SQLite gives the WAL the main file's mode. */
	struct sto_row row = sample(0, "s", "fast_path", "exec", 1);
	assert_int_equal(sto_append(db, &row, NULL), 0);
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
	assert_int_equal(query_int(fx->path, "SELECT max(version) FROM schema_version"), 3);
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
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM schema_version"), 3);
}

static void test_open_refuses_newer_schema(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	struct sto_row row = sample(1, "s1", "fast_path", "exec", 100);
	assert_int_equal(sto_append(db, &row, NULL), 0);
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
	assert_int_equal(sto_session_begin(db, &s, NULL), 0);
	assert_int_equal(sto_session_begin(db, &s, NULL), -EEXIST);
	assert_int_equal(sto_session_end(db, s.id, 5000, 3, NULL), 0);
	char *err = NULL;
	assert_int_equal(sto_session_end(db, "no-such", 5000, 3, &err), -ENOENT);
	assert_non_null(err);
	assert_true(strlen(err) > 0);
	free(err);
	struct sto_session bad = {0};
	assert_int_equal(sto_session_begin(db, &bad, NULL), -EINVAL);
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
	assert_int_equal(sto_append(db, &first, NULL), 0);
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
	assert_int_equal(sto_append(db, &in, NULL), 0);
	assert_true(in.id > first.id);

	struct copy c = {0};
	struct sto_filter f = {.source = "user"};
	assert_int_equal(sto_query(db, &f, copy_cb, &c, NULL), 0);
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
	assert_int_equal(sto_query(db, &f, copy_cb, &c0, NULL), 0);
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
	char *err = NULL;
	assert_int_equal(sto_append(db, &r, &err), -EINVAL);
	assert_int_equal(r.id, 0);
	assert_non_null(err);
	assert_non_null(strstr(err, "decision"));
	free(err);
	r = sample(0, "s", "fast_path", NULL, 1);
	assert_int_equal(sto_append(db, &r, NULL), -EINVAL);
	r = sample(0, "s", NULL, "exec", 1);
	assert_int_equal(sto_append(db, &r, NULL), -EINVAL);
	r = sample(0, "s", "fast_path", "exec", 1);
	r.decision = NULL;
	assert_int_equal(sto_append(db, &r, NULL), -EINVAL);
	assert_int_equal(count(db, NULL), 0);
	/* The connection is usable after a refusal. */
	r = sample(0, "s", "fast_path", "exec", 1);
	assert_int_equal(sto_append(db, &r, NULL), 0);
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
		assert_int_equal(sto_append(db, &r, NULL), 0);
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
	assert_int_equal(sto_query(db, NULL, ids_cb, &ids, NULL), 0);
	assert_int_equal(ids.n, 40);
	assert_int_equal(ids.pid[0], 1001); /* i = 1 has t = 0 */
	assert_int_equal(ids.pid[1], 1000);
	assert_int_equal(ids.pid[39], 1038);

	/* Newest first with a limit: the newest rows. */
	memset(&ids, 0, sizeof(ids));
	struct sto_filter nf = {.newest_first = true, .limit = 3, .session = "b"};
	assert_int_equal(sto_query(db, &nf, ids_cb, &ids, NULL), 0);
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
		assert_int_equal(sto_append(db, &r, NULL), 0);
	}
	int n = 0;
	assert_int_equal(sto_query(db, NULL, stop_at_3, &n, NULL), 42);
	assert_int_equal(n, 3);
	/* The statement was reset: a new query sees everything. */
	assert_int_equal(count(db, NULL), 5);
	assert_int_equal(sto_query(db, NULL, nested_cb, db, NULL), 0);
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
	assert_int_equal(sto_append_batch(db, rows, 5, NULL), -EINVAL);
	for (int i = 0; i < 5; i++)
		assert_int_equal(rows[i].id, 0);
	assert_int_equal(count(db, NULL), 0);

	rows[3].decision = "deny";
	assert_int_equal(sto_append_batch(db, rows, 5, NULL), 0);
	for (int i = 1; i < 5; i++)
		assert_int_equal(rows[i].id, rows[i - 1].id + 1);
	assert_int_equal(count(db, NULL), 5);
	assert_int_equal(sto_append_batch(db, rows, 0, NULL), 0);
	sto_close(db);
}

static void test_reopen_keeps_rows(void **state)
{
	struct fx *fx = *state;
	struct sto_db *db = open_ok(fx->path);
	int64_t last = 0;
	for (int i = 0; i < 100; i++) {
		struct sto_row r = sample(i, "s", "fast_path", "exec", i + 1);
		assert_int_equal(sto_append(db, &r, NULL), 0);
		last = r.id;
	}
	sto_close(db);
	db = open_ok(fx->path);
	assert_int_equal(count(db, NULL), 100);
	struct sto_row r = sample(100, "s", "fast_path", "exec", 101);
	assert_int_equal(sto_append(db, &r, NULL), 0);
	assert_int_equal(r.id, last + 1);
	assert_int_equal(sto_check(db, NULL), 0);
	sto_close(db);
}

/* A symlink in the audit's place is refused, dangling or not: nothing is
 * created or written where it points. */
static void test_open_refuses_a_symlink(void **state)
{
	struct fx *fx = *state;
	char target[160];
	snprintf(target, sizeof(target), "%s/elsewhere.db", fx->dir);
	char wdir[160];
	snprintf(wdir, sizeof(wdir), "%s/.warden", fx->dir);
	assert_int_equal(mkdir(wdir, 0700), 0);
	assert_int_equal(symlink(target, fx->path), 0);
	struct sto_db *db = NULL;
	char *err = NULL;
	assert_true(sto_open(fx->path, &db, &err) < 0);
	assert_null(db);
	assert_non_null(err);
	assert_non_null(strstr(err, "symbolic link"));
	free(err);
	assert_int_equal(access(target, F_OK), -1); /* a dangling link stays dangling */
	/* and one that points at a real audit */
	struct sto_db *real = open_ok(target);
	sto_close(real);
	err = NULL;
	assert_true(sto_open(fx->path, &db, &err) < 0);
	assert_non_null(strstr(err, "symbolic link"));
	free(err);
	/* teardown removes the directory without following links */
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
		T(test_open_refuses_a_symlink),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
