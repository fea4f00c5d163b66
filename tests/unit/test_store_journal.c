/*
 * test_store_journal.c: the audit's journal: rows recorded with one write()
 * and moved into SQLite later, replayed at every open, never twice, never
 * under an id another writer uses, and refused when the write fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "store.h"
#include "store_int.h"

#include "store_fx.h"

static char *journal_of(const struct fx *fx)
{
	return wd_asprintf("%s%s", fx->path, STO_JOURNAL_SUFFIX);
}

static off_t size_of(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* Rows go to the journal, not SQLite, until a flush; a query flushes. */
static void test_journal_append_then_flush(void **state)
{
	struct fx *fx = *state;
	wd_autofree char *j = journal_of(fx);
	struct sto_db *db = open_ok(fx->path);
	assert_int_equal(sto_journal_begin(db, NULL), 0);
	assert_int_equal(sto_flush_wait_ms(db), -1);
	struct sto_row rows[3];
	for (int i = 0; i < 3; i++) {
		rows[i] = sample(i, "s", "fast_path", "exec", 100 + i);
		assert_int_equal(sto_append(db, &rows[i], NULL), 0);
		assert_true(rows[i].id > 0);
	}
	assert_true(rows[1].id == rows[0].id + 1 && rows[2].id == rows[1].id + 1);
	assert_true(size_of(j) > 0);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM decisions"), 0);
	assert_true(sto_flush_wait_ms(db) >= 0);
	/* The query sees them: it flushes first. */
	assert_int_equal(count(db, NULL), 3);
	assert_int_equal(size_of(j), 0);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM decisions"), 3);
	assert_int_equal(query_int(fx->path, "SELECT max(id) FROM decisions"), rows[2].id);
	sto_close(db);
	/* The unused ids of the block were given back. */
	assert_int_equal(query_int(fx->path, "SELECT max(last) FROM id_blocks"), rows[2].id);
}

/* A second writer on the same audit (another `warden run`) does not get
 * the journal and commits directly, with ids above the first writer's
 * block: none collides, none is lost. */
static void test_journal_two_writers_ids_never_collide(void **state)
{
	struct fx *fx = *state;
	struct sto_db *a = open_ok(fx->path);
	struct sto_db *b = open_ok(fx->path);
	assert_int_equal(sto_journal_begin(a, NULL), 0);
	assert_int_equal(sto_journal_begin(b, NULL), -EBUSY);
	int64_t seen[60];
	int n = 0;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 10; i++) {
			struct sto_row ra = sample(i, "A", "fast_path", "exec", 1000 + n);
			assert_int_equal(sto_append(a, &ra, NULL), 0);
			seen[n++] = ra.id;
			struct sto_row rb = sample(i, "B", "fast_path", "exec", 1000 + n);
			assert_int_equal(sto_append(b, &rb, NULL), 0);
			seen[n++] = rb.id;
		}
		if (round == 1)
			assert_int_equal(sto_flush(a, NULL), 0);
	}
	for (int i = 0; i < n; i++)
		for (int k = i + 1; k < n; k++)
			assert_true(seen[i] != seen[k]);
	sto_close(a);
	sto_close(b);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM decisions"), 60);
	assert_int_equal(query_int(fx->path, "SELECT count(DISTINCT id) FROM decisions"), 60);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM decisions WHERE session = 'A'"),
			 30);
	/* Once the first writer is gone, the next one gets the journal. */
	struct sto_db *c = open_ok(fx->path);
	assert_int_equal(sto_journal_begin(c, NULL), 0);
	struct sto_row rc = sample(1, "C", "fast_path", "exec", 5000);
	assert_int_equal(sto_append(c, &rc, NULL), 0);
	sto_close(c);
	assert_int_equal(query_int(fx->path, "SELECT count(DISTINCT id) FROM decisions"), 61);
}

static char *slurp(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	char *buf = wd_malloc(1 << 20);
	ssize_t k = read(fd, buf, 1 << 20);
	assert_true(k >= 0);
	close(fd);
	*n = (size_t)k;
	return buf;
}

static void put_back(const char *path, const char *buf, size_t n)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	close(fd);
}

/* A crash after the commit, before the journal was emptied: the records
 * are replayed at the next open, and not one row is added twice. */
static void test_journal_crash_after_commit_no_duplicates(void **state)
{
	struct fx *fx = *state;
	wd_autofree char *j = journal_of(fx);
	struct sto_db *db = open_ok(fx->path);
	assert_int_equal(sto_journal_begin(db, NULL), 0);
	for (int i = 0; i < 5; i++) {
		struct sto_row r = sample(i, "s", "fast_path", "exec", 100 + i);
		assert_int_equal(sto_append(db, &r, NULL), 0);
	}
	size_t n = 0;
	wd_autofree char *buf = slurp(j, &n);
	assert_true(n > 0);
	assert_int_equal(sto_flush(db, NULL), 0);
	sto_close(db);
	put_back(j, buf, n);
	db = open_ok(fx->path);
	assert_int_equal(count(db, NULL), 5);
	assert_int_equal(size_of(j), 0);
	assert_int_equal(sto_check(db, NULL), 0);
	sto_close(db);
}

/* A writer killed while it appends: its whole records come back at the
 * next open, a torn last record is dropped, the file is sound. */
static void test_journal_killed_writer_torn_tail(void **state)
{
	struct fx *fx = *state;
	wd_autofree char *j = journal_of(fx);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sto_db *db = NULL;
		if (sto_open(fx->path, &db, NULL) < 0 || sto_journal_begin(db, NULL) < 0)
			_exit(1);
		for (int i = 0; i < 7; i++) {
			struct sto_row r = sample(i, "s", "fast_path", "exec", 100 + i);
			if (sto_append(db, &r, NULL) < 0)
				_exit(2);
		}
		/* Half a record, as a kill in the middle of a write leaves. */
		int fd = open(j, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0 || write(fd, "WDJ1\x40\x00\x00\x00garbage", 15) != 15)
			_exit(3);
		kill(getpid(), SIGKILL);
		_exit(4);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM decisions"), 0);
	struct sto_db *db = open_ok(fx->path);
	assert_int_equal(count(db, NULL), 7);
	assert_int_equal(size_of(j), 0);
	assert_int_equal(sto_check(db, NULL), 0);
	/* The next writer's ids follow, past the killed writer's block. */
	assert_int_equal(sto_journal_begin(db, NULL), 0);
	struct sto_row r = sample(9, "t", "fast_path", "exec", 900);
	assert_int_equal(sto_append(db, &r, NULL), 0);
	sto_close(db);
	assert_int_equal(query_int(fx->path, "SELECT count(DISTINCT id) FROM decisions"), 8);
}

/* A write that cannot be made (the file size limit here, as a full disk
 * would) refuses the row: no id, nothing recorded, and the journal holds
 * no part of it. */
static void test_journal_failed_write_refuses(void **state)
{
	struct fx *fx = *state;
	wd_autofree char *j = journal_of(fx);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		struct sto_db *db = NULL;
		if (sto_open(fx->path, &db, NULL) < 0 || sto_journal_begin(db, NULL) < 0)
			_exit(1);
		struct sto_row ok = sample(1, "s", "fast_path", "exec", 100);
		if (sto_append(db, &ok, NULL) < 0)
			_exit(2);
		/* Room for a few more bytes, not for a record. */
		struct rlimit rl = {.rlim_cur = 2000, .rlim_max = RLIM_INFINITY};
		struct stat st;
		if (fstat(db->jfd, &st) < 0)
			_exit(3);
		rl.rlim_cur = (rlim_t)st.st_size + 10;
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(4);
		struct sto_row big = sample(2, "s", "fast_path", "exec", 200);
		char *err = NULL;
		int rc = sto_append(db, &big, &err);
		if (rc >= 0 || big.id != 0 || !err || !strstr(err, "journal"))
			_exit(5);
		if (fstat(db->jfd, &st) < 0 || st.st_size != db->jend)
			_exit(6);
		free(err);
		rl.rlim_cur = RLIM_INFINITY;
		setrlimit(RLIMIT_FSIZE, &rl);
		/* Room again: the next row is recorded, after the first. */
		struct sto_row next = sample(3, "s", "fast_path", "exec", 300);
		if (sto_append(db, &next, NULL) < 0 || next.id <= ok.id)
			_exit(7);
		sto_close(db);
		_exit(0);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM decisions"), 2);
	assert_int_equal(query_int(fx->path, "SELECT count(*) FROM decisions WHERE ts_us = 200"),
			 0);
	assert_int_equal(size_of(j), 0);
}

/* A journal that is a symlink is not followed: the open fails, naming it. */
static void test_journal_symlink_refused(void **state)
{
	struct fx *fx = *state;
	wd_autofree char *j = journal_of(fx);
	struct sto_db *db = open_ok(fx->path);
	sto_close(db);
	assert_int_equal(unlink(j), 0);
	wd_autofree char *target = wd_asprintf("%s/elsewhere", fx->dir);
	assert_int_equal(symlink(target, j), 0);
	char *err = NULL;
	db = NULL;
	assert_int_equal(sto_open(fx->path, &db, &err), -ELOOP);
	assert_null(db);
	assert_non_null(err);
	assert_non_null(strstr(err, j));
	free(err);
	struct stat st;
	assert_int_not_equal(lstat(target, &st), 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_journal_append_then_flush),
		T(test_journal_two_writers_ids_never_collide),
		T(test_journal_crash_after_commit_no_duplicates),
		T(test_journal_killed_writer_torn_tail),
		T(test_journal_failed_write_refuses),
		T(test_journal_symlink_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
