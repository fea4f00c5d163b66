/*
 * test_store_crash.c: the SQLite audit under concurrency and crashes: a
 * concurrent reader process, two processes opening a new file at once, and
 * durability of committed rows across a SIGKILL of the writing process.
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
			if (sto_query(rd, NULL, count_cb, &n, NULL) != 0)
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
		char *err = NULL;
		int rc = sto_append(db, &r, &err);
		if (rc != 0)
			print_error("append %d: %d %s\n", i, rc, err ? err : "");
		free(err);
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
				if (sto_append(db, &r, NULL) != 0)
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
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM schema_version"), 3);
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
			if (sto_append(db, &r, NULL) != 0)
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
	assert_int_equal(sto_check(db, NULL), 0);
	static struct ids ids;
	memset(&ids, 0, sizeof(ids));
	struct sto_filter f = {.session = "crash"};
	assert_int_equal(sto_query(db, &f, ids_cb, &ids, NULL), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_concurrent_reader_process),
		T(test_concurrent_first_open),
		T(test_crash_self_kill_keeps_committed_rows),
		T(test_crash_killed_mid_write_keeps_committed_rows),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
