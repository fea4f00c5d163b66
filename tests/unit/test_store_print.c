/*
 * test_store_print.c: the audit's three print formats (table, CSV with RFC
 * 4180 quoting read back, JSON) and the integrity check finding damage.
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
	assert_int_equal(sto_append_batch(db, rows, 3, NULL), 0);
	return db;
}

/* Prints through a real FILE (an unnamed temporary file), as `warden audit`
 * prints to stdout, and returns what was written. Caller frees. */
static char *print_to_string(struct sto_db *db, enum sto_format fmt)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	assert_int_equal(sto_print(db, NULL, fmt, f, NULL), 0);
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
		assert_int_equal(sto_append(db, &r, NULL), 0);
	}
	assert_int_equal(sto_check(db, NULL), 0);
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
		char *why = NULL;
		assert_int_equal(sto_check(db, &why), -EIO);
		assert_non_null(why);
		if (!strstr(why, "damaged"))
			print_error("message: %s\n", why);
		assert_non_null(strstr(why, "damaged"));
		free(why);
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
		T(test_print_table),
		T(test_print_csv_quotes_round_trip),
		T(test_print_json_is_valid),
		T(test_check_detects_damage),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
