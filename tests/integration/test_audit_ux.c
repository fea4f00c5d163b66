/*
 * test_audit_ux: the audit for a person, with the real warden binary: a
 * damaged audit refuses `warden run` and `warden audit` prints every row it
 * can read; paging through $PAGER or less -FRX on a real pseudo-terminal
 * (and not into a pipe); the table cut to the terminal's width; the
 * options of warden audit (validated, --limit as the latest N, --decision,
 * --session with a short id, --last, --tool-calls in JSON and CSV) and
 * warden sessions after real runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "damage.h"
#include "store.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int setup(void **state)
{
	unsetenv("PAGER");
	return wt_fx_setup(state);
}

/* ---- building audits with the store itself ----------------------------- */

static void add_session(struct sto_db *db, const char *id, int64_t t)
{
	struct sto_session s = {.id = id, .started_us = t, .tier = "standard", .role = "agent"};
	assert_int_equal(sto_session_begin(db, &s, NULL), 0);
}

/* |n| rows of |session| from time |t0|: summary "cmd I", every 7th
 * refused, with a long reason when |long_text|. */
static void add_rows(struct sto_db *db, const char *session, int n, int64_t t0, bool long_text)
{
	static const char long_reason[] =
		"a reason that goes on and on, longer than any terminal is wide, so that the "
		"table has to cut it somewhere to fit the screen of the person reading it";
	for (int i = 0; i < n; i++) {
		char sum[64];
		snprintf(sum, sizeof(sum),
			 long_text ? "cmd %d with many arguments to be cut" : "cmd %d", i);
		struct sto_row r = {
			.ts_us = t0 + i,
			.session = session,
			.pid = 100 + i,
			.ppid = 1,
			.kind = "exec",
			.request = "{\"argv\":[\"cc\",\"-c\",\"src/file.c\"],\"cwd\":\".\"}",
			.summary = sum,
			.decision = i % 7 == 0 ? "deny" : "allow",
			.source = "fast_path",
			.reason = long_text ? long_reason : "a read-only command",
			.decided_by = "warden",
		};
		assert_int_equal(sto_append(db, &r, NULL), 0);
	}
}

static struct sto_db *open_db(const char *path)
{
	struct sto_db *db = NULL;
	char *err = NULL;
	int r = sto_open(path, &db, &err);
	if (r < 0)
		fail_msg("%s", err ? err : "sto_open");
	return db;
}

static int lines_of(const char *s)
{
	int n = 0;
	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

static int count_sql(const char *db, const char *sql)
{
	sqlite3 *h = NULL;
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st = NULL;
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return n;
}

/* ---- a damaged audit --------------------------------------------------- */

/* 3,000 rows, then a leaf page of decisions in the middle overwritten.
 * Returns how many rows that page held. */
static int damaged_audit(struct wt_fx *f, int64_t *first)
{
	struct sto_db *db = open_db(f->db);
	add_session(db, "20261201-100000-4f2a", 1000);
	for (int i = 0; i < 3000; i += 500)
		add_rows(db, "20261201-100000-4f2a", 500, 2000 + i, false);
	sto_close(db);
	return dmg_decisions_leaf(f->db, first);
}

static void test_run_refuses_a_damaged_audit(void **state)
{
	struct wt_fx *f = *state;
	int64_t first;
	damaged_audit(f, &first);
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c",
		  "echo ran > ran.txt", NULL);
	if (r.status != 125)
		fail_msg("warden run on a damaged audit exited %d:\n%s", r.status, r.err);
	char *want = wd_asprintf("sqlite3 %s .recover", f->db);
	assert_non_null(strstr(r.err, want));
	free(want);
	assert_non_null(strstr(r.err, "damaged"));
	assert_null(strstr(r.err, "(null)"));
	wt_result_free(&r);
	/* Nothing ran and nothing was added to the file. */
	char *ran = wd_asprintf("%s/ran.txt", f->proj);
	assert_int_equal(access(ran, F_OK), -1);
	free(ran);
	assert_int_equal(count_sql(f->db, "SELECT count(*) FROM sessions"), 1);
}

/* warden audit (no --audit: the default path, whose message once read
 * "(null)") prints every readable row and names the others. */
static void test_audit_prints_every_readable_row(void **state)
{
	struct wt_fx *f = *state;
	int64_t first;
	int lost = damaged_audit(f, &first);
	static const char *const fmts[] = {"csv", "table", "json"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(fmts); i++) {
		struct wt_result r;
		wt_warden(f->proj, &r, "audit", "--format", fmts[i], NULL);
		assert_int_equal(r.status, 1);
		if (strcmp(fmts[i], "json") == 0)
			assert_int_equal(lines_of(r.out), 3000 - lost + 2); /* "[" ... "]" */
		else
			assert_int_equal(lines_of(r.out), 1 + 3000 - lost);
		char want[96];
		snprintf(want, sizeof(want), "%d rows could not be read (ids %lld-%lld)", lost,
			 (long long)first, (long long)(first + lost - 1));
		if (!strstr(r.err, want))
			fail_msg("wanted \"%s\" in:\n%s", want, r.err);
		assert_non_null(strstr(r.err, f->db));
		assert_non_null(strstr(r.err, ".recover"));
		assert_null(strstr(r.err, "(null)"));
		assert_null(strstr(r.out, "(null)"));
		wt_result_free(&r);
	}
	/* sessions still lists the session, with unknown counts */
	struct wt_result s;
	wt_warden(f->proj, &s, "sessions", NULL);
	assert_int_equal(s.status, 1);
	assert_non_null(strstr(s.out, "20261201-100000-4f2a"));
	assert_non_null(strstr(s.err, "damaged"));
	wt_result_free(&s);
	wt_warden(f->proj, &s, "sessions", "--format", "json", NULL);
	assert_int_equal(s.status, 1);
	assert_non_null(strstr(s.out, "\"allowed\":null,\"refused\":null,\"asked\":null,"));
	wt_result_free(&s);
}

/* ---- a terminal --------------------------------------------------------- */

struct pty_run {
	int status;
	char *out;
};

/* Runs warden with |argv| (after "warden") on a new pseudo-terminal of
 * |cols| columns in |cwd|, reading everything it shows until it exits. */
static void run_pty(const char *cwd, const char *const *argv, unsigned short cols,
		    struct pty_run *res)
{
	struct winsize ws = {.ws_row = 40, .ws_col = cols};
	int m = -1;
	pid_t pid = forkpty(&m, NULL, NULL, &ws);
	assert_true(pid >= 0);
	if (pid == 0) {
		if (chdir(cwd) < 0)
			_exit(126);
		const char *av[32] = {wt_bin()};
		for (int i = 0; argv[i] && i < 30; i++)
			av[i + 1] = argv[i];
		execv(av[0], (char *const *)av);
		_exit(127);
	}
	struct wd_sb sb = {0};
	int64_t until = wd_now_mono_ns() + 30 * 1000000000LL;
	for (;;) {
		struct pollfd p = {.fd = m, .events = POLLIN};
		if (poll(&p, 1, 200) > 0) {
			char buf[4096];
			ssize_t n = read(m, buf, sizeof(buf));
			if (n <= 0)
				break; /* EIO: the last holder of the slave is gone */
			wd_sb_add(&sb, buf, (size_t)n);
		}
		if (wd_now_mono_ns() > until) {
			kill(pid, SIGKILL);
			break;
		}
	}
	int st = 0;
	waitpid(pid, &st, 0);
	close(m);
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	res->out = wd_sb_steal(&sb);
}

/* A pager that records that it ran and with what, then shows its input. */
static char *fake_pager(const char *proj, const char *name)
{
	char *dir = wd_asprintf("%s/bin", proj);
	mkdir(dir, 0755);
	char *path = wd_asprintf("%s/%s", dir, name);
	char *script = wd_asprintf("#!/bin/sh\necho \"args:$*\" > '%s/pager-called'\n"
				   "echo \"LESS:$LESS\" >> '%s/pager-called'\nexec cat\n",
				   proj, proj);
	wt_write(dir, name, script);
	assert_int_equal(chmod(path, 0755), 0);
	free(script);
	free(dir);
	return path;
}

static char *pager_log(const char *proj)
{
	char *p = wd_asprintf("%s/pager-called", proj), *text = NULL;
	size_t len;
	if (wd_read_file(p, 4096, &text, &len) < 0)
		text = NULL;
	unlink(p);
	free(p);
	return text;
}

static void small_audit(struct wt_fx *f, bool long_text)
{
	struct sto_db *db = open_db(f->db);
	add_session(db, "20261201-100000-4f2a", 1000);
	add_rows(db, "20261201-100000-4f2a", 20, 2000, long_text);
	sto_close(db);
}

static void test_audit_pages_on_a_terminal_only(void **state)
{
	struct wt_fx *f = *state;
	small_audit(f, false);
	char *pager = fake_pager(f->proj, "mypager");
	setenv("PAGER", pager, 1);
	struct pty_run r;
	run_pty(f->proj, (const char *const[]){"audit", NULL}, 200, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "cmd 19"));
	char *log = pager_log(f->proj);
	if (!log)
		fail_msg("$PAGER was not run on a terminal; the terminal showed:\n%s", r.out);
	free(log);
	free(r.out);

	/* warden sessions pages too */
	run_pty(f->proj, (const char *const[]){"sessions", NULL}, 200, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "20261201-100000-4f2a"));
	log = pager_log(f->proj);
	assert_non_null(log);
	free(log);
	free(r.out);

	/* --no-pager: straight to the terminal */
	run_pty(f->proj, (const char *const[]){"audit", "--no-pager", NULL}, 200, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "cmd 19"));
	assert_null(pager_log(f->proj));
	free(r.out);

	/* Into a pipe: no pager, the whole output. */
	struct wt_result p;
	wt_warden(f->proj, &p, "audit", NULL);
	assert_int_equal(p.status, 0);
	assert_int_equal(lines_of(p.out), 21);
	assert_null(pager_log(f->proj));
	wt_result_free(&p);

	/* PAGER unset: less -FRX, found on PATH. */
	unsetenv("PAGER");
	free(pager);
	pager = fake_pager(f->proj, "less");
	const char *old = getenv("PATH");
	char *saved = wd_strdup(old ? old : "/usr/bin:/bin");
	char *path = wd_asprintf("%s/bin:%s", f->proj, saved);
	setenv("PATH", path, 1);
	run_pty(f->proj, (const char *const[]){"audit", NULL}, 200, &r);
	setenv("PATH", saved, 1);
	assert_int_equal(r.status, 0);
	log = pager_log(f->proj);
	if (!log || !strstr(log, "args:-FRX"))
		fail_msg("less -FRX was not run: %s", log ? log : "(not run)");
	free(log);
	free(r.out);
	free(path);
	free(saved);
	free(pager);
}

/* Columns a line takes on a terminal: one per code point. */
static size_t columns(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && s[i] != '\r')
			c++;
	return c;
}

static size_t widest(const char *text)
{
	size_t w = 0;
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		if (columns(l, n) > w)
			w = columns(l, n);
		l += n + (e ? 1 : 0);
	}
	return w;
}

static void test_audit_fits_the_terminal_width(void **state)
{
	struct wt_fx *f = *state;
	small_audit(f, true);
	struct pty_run r;
	run_pty(f->proj, (const char *const[]){"audit", "--no-pager", NULL}, 120, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "cmd 19"));
	assert_non_null(strstr(r.out, "\xe2\x80\xa6")); /* cut, with "…" */
	if (widest(r.out) > 120)
		fail_msg("a line is %zu columns on a 120-column terminal:\n%s", widest(r.out),
			 r.out);
	free(r.out);
	/* On 80 columns the columns cannot all shrink enough: lines are cut
	 * at the edge. */
	run_pty(f->proj, (const char *const[]){"audit", "--no-pager", NULL}, 80, &r);
	assert_int_equal(r.status, 0);
	if (widest(r.out) > 80)
		fail_msg("a line is %zu columns on an 80-column terminal:\n%s", widest(r.out),
			 r.out);
	free(r.out);
	/* --tool-calls and sessions fit too */
	run_pty(f->proj, (const char *const[]){"audit", "--no-pager", "--tool-calls", NULL}, 60,
		&r);
	assert_int_equal(r.status, 0);
	assert_true(widest(r.out) <= 60);
	free(r.out);
	run_pty(f->proj, (const char *const[]){"sessions", "--no-pager", NULL}, 60, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "2026"));
	assert_true(widest(r.out) <= 60);
	free(r.out);
	/* Into a pipe: nothing is cut to a width. */
	struct wt_result p;
	wt_warden(f->proj, &p, "audit", NULL);
	assert_int_equal(p.status, 0);
	assert_true(widest(p.out) > 120);
	wt_result_free(&p);
}

/* ---- options ------------------------------------------------------------ */

static void test_audit_options_are_validated(void **state)
{
	struct wt_fx *f = *state;
	small_audit(f, false);
	static const struct {
		const char *a[4];
		const char *says;
	} bad[] = {
		{{"audit", "--limit", "abc"}, "--limit"},
		{{"audit", "--limit", "-1"}, "--limit"},
		{{"audit", "--limit", "0"}, "--limit"},
		{{"audit", "--limit", "5x"}, "--limit"},
		{{"audit", "--limit", ""}, "--limit"},
		{{"audit", "--limit", "99999999999999999999"}, "--limit"},
		{{"audit", "--decision", "maybe"}, "--decision"},
		{{"audit", "--source", "judgee"}, "--source"},
		{{"audit", "--kind", "exex"}, "--kind"},
		{{"audit", "--format", "xml"}, "--format"},
		{{"audit", "--session", "abcd"}, "no session"},
		{{"audit", "--last", "--session", "4f2a"}, "--last"},
		{{"audit", "stray"}, "stray"},
		{{"sessions", "--limit", "zz"}, "--limit"},
		{{"sessions", "--format", "csv"}, "--format"},
	};
	for (size_t i = 0; i < WD_ARRAY_SIZE(bad); i++) {
		char *argv[6] = {0};
		for (int k = 0; k < 4 && bad[i].a[k]; k++)
			argv[k] = (char *)bad[i].a[k];
		struct wt_result r;
		wt_wardenv(f->proj, argv, &r);
		if (r.status != 2 || !strstr(r.err, bad[i].says))
			fail_msg("warden %s %s %s: exit %d, stderr:\n%s", bad[i].a[0], bad[i].a[1],
				 bad[i].a[2] ? bad[i].a[2] : "", r.status, r.err);
		assert_null(strstr(r.err, "(null)"));
		wt_result_free(&r);
	}
}

static int csv_rows(const char *out)
{
	return lines_of(out) - 1;
}

static void test_audit_limit_decision_session_last(void **state)
{
	struct wt_fx *f = *state;
	struct sto_db *db = open_db(f->db);
	add_session(db, "20261201-100000-4f2a", 1000);
	add_rows(db, "20261201-100000-4f2a", 30, 2000, false); /* deny: 0 7 14 21 28 */
	add_session(db, "20261202-110000-beef", 5000);
	add_rows(db, "20261202-110000-beef", 10, 6000, false); /* deny: 0 7 */
	sto_close(db);
	struct wt_result r;

	/* --limit 3: the latest three, oldest first */
	wt_warden(f->proj, &r, "audit", "--limit", "3", "--format", "csv", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(csv_rows(r.out), 3);
	const char *a = strstr(r.out, ",cmd 7,"), *b = strstr(r.out, ",cmd 8,"),
		   *c = strstr(r.out, ",cmd 9,");
	assert_true(a && b && c && a < b && b < c);
	assert_non_null(strstr(r.out, "beef"));
	wt_result_free(&r);

	/* --last: the latest session */
	wt_warden(f->proj, &r, "audit", "--last", "--format", "csv", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(csv_rows(r.out), 10);
	assert_null(strstr(r.out, "4f2a"));
	wt_result_free(&r);

	/* --session with the short id of approval ids, --decision */
	wt_warden(f->proj, &r, "audit", "--session", "4f2a", "--decision", "deny", "--format",
		  "csv", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(csv_rows(r.out), 5);
	assert_null(strstr(r.out, "beef"));
	assert_null(strstr(r.out, ",allow,"));
	wt_result_free(&r);
	wt_warden(f->proj, &r, "audit", "--session", "20261202-110000-beef", "--decision", "allow",
		  "--format", "csv", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(csv_rows(r.out), 8);
	wt_result_free(&r);

	/* A short id two sessions share: an error that says so. */
	db = open_db(f->db);
	add_session(db, "20261203-120000-4f2a", 9000);
	sto_close(db);
	wt_warden(f->proj, &r, "audit", "--session", "4f2a", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "full id"));
	wt_result_free(&r);
}

static void test_audit_tool_calls_formats_and_limit(void **state)
{
	struct wt_fx *f = *state;
	struct sto_db *db = open_db(f->db);
	add_session(db, "20261201-100000-4f2a", 1000);
	struct sto_row rows[] = {
		{.ts_us = 2000, .summary = "call one", .decision = "allow"},
		{.ts_us = 2001, .summary = "cc -c a.c", .decision = "allow", .tool_call = 1},
		{.ts_us = 2002, .summary = "call, two", .decision = "allow"},
		{.ts_us = 2003, .summary = "rm x", .decision = "deny", .tool_call = 3},
		{.ts_us = 2004, .summary = "call three", .decision = "allow"},
	};
	for (size_t i = 0; i < WD_ARRAY_SIZE(rows); i++) {
		rows[i].session = "20261201-100000-4f2a";
		rows[i].kind = "exec";
		rows[i].source = "fast_path";
		assert_int_equal(sto_append(db, &rows[i], NULL), 0);
		assert_int_equal(rows[i].id, (int64_t)i + 1);
	}
	sto_close(db);
	struct wt_result r;
	wt_warden(f->proj, &r, "audit", "--tool-calls", "--format", "json", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"summary\":\"call one\""));
	assert_non_null(strstr(r.out, "\"summary\":\"call, two\",\"execs\":1,\"opens\":0,"
				      "\"connects\":0,\"refused\":1"));
	assert_int_equal(r.out[0], '[');
	wt_result_free(&r);

	wt_warden(f->proj, &r, "audit", "--tool-calls", "--format", "csv", "--limit", "2", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(csv_rows(r.out), 2);
	assert_non_null(strstr(r.out, "\"call, two\",1,0,0,1,"));
	assert_non_null(strstr(r.out, "call three"));
	assert_null(strstr(r.out, "call one"));
	wt_result_free(&r);

	wt_warden(f->proj, &r, "audit", "--tool-calls", "--decision", "deny", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "call, two"));
	assert_null(strstr(r.out, "call one"));
	assert_null(strstr(r.out, "call three"));
	wt_result_free(&r);
}

/* warden sessions after real runs: the exit status the supervisor
 * recorded, the tier, the counts; the short id works with audit. */
static void test_sessions_after_real_runs(void **state)
{
	struct wt_fx *f = *state;
	wt_require_sandbox();
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c",
		  "ls README.md; exit 3", NULL);
	assert_int_equal(r.status, 3);
	wt_result_free(&r);
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c",
		  "ls README.md; env", NULL);
	wt_result_free(&r);

	wt_warden(f->proj, &r, "sessions", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(lines_of(r.out), 3);
	/* header, then one line per session, oldest first */
	char *l1 = strchr(r.out, '\n') + 1, *l2 = strchr(l1, '\n') + 1;
	char *first = wd_strndup(l1, (size_t)(l2 - l1 - 1));
	assert_non_null(strstr(first, "aggressive"));
	if (!wd_str_has_suffix(first, " 3"))
		fail_msg("the first session's exit status is not 3:\n%s", r.out);
	free(first);
	assert_non_null(strstr(l2, "passive"));
	wt_result_free(&r);

	wt_warden(f->proj, &r, "sessions", "--format", "json", "--limit", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"tier\":\"passive\""));
	assert_null(strstr(r.out, "aggressive"));
	/* env refused (the shell tries it at each place on PATH) */
	assert_non_null(strstr(r.out, "\"refused\":"));
	assert_null(strstr(r.out, "\"refused\":0,"));
	const char *id = strstr(r.out, "\"id\":\"");
	assert_non_null(id);
	char shortid[5];
	memcpy(shortid, id + 6 + 16, 4);
	shortid[4] = '\0';
	wt_result_free(&r);

	wt_warden(f->proj, &r, "audit", "--session", shortid, "--decision", "deny", "--format",
		  "csv", NULL);
	assert_int_equal(r.status, 0);
	assert_true(csv_rows(r.out) >= 1);
	assert_non_null(strstr(r.out, "env"));
	assert_null(strstr(r.out, ",allow,"));
	assert_null(strstr(r.out, "aggressive"));
	wt_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, wt_fx_teardown)
		T(test_run_refuses_a_damaged_audit),
		T(test_audit_prints_every_readable_row),
		T(test_audit_pages_on_a_terminal_only),
		T(test_audit_fits_the_terminal_width),
		T(test_audit_options_are_validated),
		T(test_audit_limit_decision_session_last),
		T(test_audit_tool_calls_formats_and_limit),
		T(test_sessions_after_real_runs),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
