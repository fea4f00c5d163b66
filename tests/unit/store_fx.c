/*
 * store_fx.c: the store tests' shared fixture and helpers (store_fx.h).
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

int setup(void **state)
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

int teardown(void **state)
{
	struct fx *fx = *state;
	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

struct sto_db *open_ok(const char *path)
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
struct sto_row sample(int i, const char *session, const char *source, const char *kind,
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

int count_cb(const struct sto_row *row, void *arg)
{
	(void)row;
	(*(int *)arg)++;
	return 0;
}

int count(struct sto_db *db, const struct sto_filter *f)
{
	int n = 0;
	assert_int_equal(sto_query(db, f, count_cb, &n, NULL), 0);
	return n;
}

/* Collects row ids (and pids, to check the order of a filter). */

int ids_cb(const struct sto_row *row, void *arg)
{
	struct ids *ids = arg;
	if (ids->n < WD_ARRAY_SIZE(ids->id)) {
		ids->id[ids->n] = row->id;
		ids->pid[ids->n] = row->pid;
	}
	ids->n++;
	return 0;
}

/* Runs |sql| on |path| with a plain connection (what a hand edit would do). */
void exec_sql(const char *path, const char *sql)
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

int64_t query_int(const char *path, const char *sql)
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
