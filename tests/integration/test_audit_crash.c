/*
 * test_audit_crash: warden killed with SIGKILL at any moment of an exec
 * loop loses no row. The agent runs /bin/echo over and over, each exec
 * appending its own argument to ran.log: a line there proves that exec ran.
 * After the kill, `warden audit --format json` (which opens the audit, and
 * so replays its journal) must show each of those execs exactly once, and
 * PRAGMA integrity_check must say "ok". One audit across every round, so
 * that each replay also meets the rows and ids of the rounds before.
 *
 * Runs as root (the sandbox); skipped otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "store.h"
#include "wt.h"

#include <signal.h>
#include <stdio.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 24

/* How many times |needle| occurs in |hay|. */
static int occurrences(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static char *integrity(const char *db)
{
	sqlite3 *h = NULL;
	char *res = NULL;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			res = wd_strdup((const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	return res ? res : wd_strdup("(no answer)");
}

/* One round: start the loop, kill warden after |delay_ms|, then check. */
static void crash_round(struct wt_fx *f, int round, int delay_ms, int *proved)
{
	char *log = wd_asprintf("%s/ran-%d.log", f->proj, round);
	/* The line is written by /bin/echo itself: it is there only if that
	 * exec ran. */
	char *loop = wd_asprintf("i=0; while :; do i=$((i+1)); /bin/echo \"r%d-$i\" >> %s; done",
				 round, log);
	char *argv[] = {"run",	   "--tier", "aggressive", "--no-view", "--",
			"/bin/sh", "-c",     loop,	   NULL};
	struct wt_bg bg;
	wt_warden_bg(f->proj, argv, &bg);
	usleep((useconds_t)delay_ms * 1000);
	kill(bg.pid, SIGKILL);
	struct wt_result r;
	wt_bg_wait(&bg, 10000, &r);
	/* The sandbox dies with warden; give its last processes a moment. */
	usleep(100000);

	char *ran = wt_slurp(log);
	/* Killed before it created the audit (the first round, under load):
	 * then nothing ran either. */
	if (access(f->db, F_OK) < 0) {
		assert_string_equal(ran, "");
		wt_result_free(&r);
		free(ran);
		free(loop);
		free(log);
		return;
	}
	struct wt_result a;
	wt_warden(f->proj, &a, "audit", "--format", "json", NULL);
	if (a.status != 0)
		print_message("round %d (kill after %d ms): warden audit: %s\n", round, delay_ms,
			      a.err);
	assert_int_equal(a.status, 0);
	int lines = 0;
	for (char *line = ran, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		char *want = wd_asprintf("\"summary\":\"/bin/echo %s\"", line);
		int n = occurrences(a.out, want);
		if (n != 1)
			print_message("round %d (kill after %d ms): %s has %d rows\n", round,
				      delay_ms, line, n);
		assert_int_equal(n, 1);
		free(want);
		lines++;
	}
	char *ok = integrity(f->db);
	assert_string_equal(ok, "ok");
	*proved += lines;
	free(ok);
	wt_result_free(&a);
	wt_result_free(&r);
	free(ran);
	free(loop);
	free(log);
}

static void test_audit_crash_kill9_loses_no_row(void **state)
{
	struct wt_fx *f = *state;
	wt_require_sandbox();
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	print_message("seed %u\n", seed);
	srand(seed);
	int proved = 0;
	for (int i = 0; i < ROUNDS; i++) {
		/* From before the first exec to deep in the loop. */
		int delay = 20 + (i * 53) % 600 + rand() % 80;
		crash_round(f, i, delay, &proved);
	}
	print_message("%d execs proved to have run, each with its row\n", proved);
	/* Most rounds get far enough to run execs: the test checked rows. */
	assert_true(proved > ROUNDS * 5);
	/* Nothing is left to replay, and the journal stays private. A
	 * process of the last killed session (its sandbox's init, forked
	 * before it closed its descriptors) may still hold the journal's
	 * lock for a moment; an open meanwhile inserts without emptying. */
	char *j = wd_asprintf("%s%s", f->db, STO_JOURNAL_SUFFIX);
	struct stat st;
	for (int tries = 0; tries < 50; tries++) {
		assert_int_equal(lstat(j, &st), 0);
		if (st.st_size == 0)
			break;
		usleep(100000);
		struct wt_result a;
		wt_warden(f->proj, &a, "audit", "--format", "json", NULL);
		wt_result_free(&a);
	}
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, 0);
	free(j);
}

#define TWO_N 4000

/* Counts the rows of `/bin/echo sK-N` in the JSON of `warden audit`. */
static void count_two(const char *json, int *n0, int *n1)
{
	static const char key[] = "\"summary\":\"/bin/echo s";
	for (const char *p = json; (p = strstr(p, key)); p++) {
		int k = 0, i = 0;
		char end = 0;
		if (sscanf(p + strlen(key), "%d-%d%c", &k, &i, &end) != 3 || end != '"' || i < 1 ||
		    i > TWO_N)
			continue;
		if (k == 0)
			n0[i]++;
		else if (k == 1)
			n1[i]++;
	}
}

/* Two `warden run` on one audit at once (nothing forbids it): the first
 * writes the journal, the second (refused the journal's lock) commits
 * directly while the first still runs; every exec of both has its row
 * once: no id was given twice, so no record was ignored at its flush. */
static void test_audit_crash_two_sessions_one_audit(void **state)
{
	struct wt_fx *f = *state;
	wt_require_sandbox();
	struct wt_bg bg[2];
	char *log[2], *loop[2];
	for (int k = 0; k < 2; k++) {
		log[k] = wd_asprintf("%s/two-%d.log", f->proj, k);
		loop[k] = wd_asprintf("i=0; while [ $i -lt %d ]; do i=$((i+1)); "
				      "/bin/echo \"s%d-$i\" >> %s; done",
				      TWO_N, k, log[k]);
		char *argv[] = {"run",	   "--tier", "aggressive", "--no-view", "--",
				"/bin/sh", "-c",     loop[k],	   NULL};
		wt_warden_bg(f->proj, argv, &bg[k]);
		usleep(300000);
	}
	for (int k = 0; k < 2; k++) {
		struct wt_result r;
		assert_true(wt_bg_wait(&bg[k], 240000, &r));
		assert_int_equal(r.status, 0);
		wt_result_free(&r);
	}
	struct wt_result a;
	wt_warden(f->proj, &a, "audit", "--format", "json", NULL);
	assert_int_equal(a.status, 0);
	int *n[2] = {wd_calloc(TWO_N + 1, sizeof(int)), wd_calloc(TWO_N + 1, sizeof(int))};
	count_two(a.out, n[0], n[1]);
	for (int k = 0; k < 2; k++) {
		char *ran = wt_slurp(log[k]);
		int lines = 0;
		for (char *line = ran, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			int kk = -1, i = 0;
			assert_int_equal(sscanf(line, "s%d-%d", &kk, &i), 2);
			assert_int_equal(kk, k);
			if (n[k][i] != 1)
				print_message("%s has %d rows\n", line, n[k][i]);
			assert_int_equal(n[k][i], 1);
			lines++;
		}
		assert_int_equal(lines, TWO_N);
		free(ran);
		free(log[k]);
		free(loop[k]);
		free(n[k]);
	}
	char *ok = integrity(f->db);
	assert_string_equal(ok, "ok");
	free(ok);
	wt_result_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_audit_crash_kill9_loses_no_row, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_audit_crash_two_sessions_one_audit,
						wt_fx_setup, wt_fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
