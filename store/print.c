/*
 * print.c: `warden audit` output: an aligned table for a person, a JSON array
 * and RFC 4180 CSV for programs.
 *
 * Everything printed came in part from the agent (its command lines, paths)
 * or from a model (reasons), so nothing reaches a terminal raw: the table
 * shows control bytes, C1 controls, bidirectional overrides and invalid UTF-8
 * as escapes. JSON is valid UTF-8 whatever the bytes stored (invalid
 * sequences become U+FFFD). CSV keeps values byte for byte, as RFC 4180 asks;
 * a spreadsheet user should know that a field may begin with "=".
 */
#include "store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	uint32_t cp;
	for (size_t i = 0; i < n;) {
		size_t l = wd_utf8_decode(p + i, n - i, &cp);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

/* ---- table ------------------------------------------------------------- */

/* Makes |s| safe and at most |cap| columns wide for a table cell (one column
 * per code point; a cut ends in "…"). Sets *width. Caller frees. */
static char *cell(const char *s, size_t cap, size_t *width)
{
	struct wd_sb sb = {0};
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), w = 0, cut = 0, cut_w = 0;
	for (size_t i = 0; i < n;) {
		char unit[16];
		size_t uw, ul;
		uint32_t cp;
		size_t l = wd_utf8_decode(p + i, n - i, &cp);
		if (l == 0) {
			snprintf(unit, sizeof(unit), "\\x%02x", p[i]);
			l = 1;
		} else if (cp == '\n') {
			snprintf(unit, sizeof(unit), "\\n");
		} else if (cp == '\t') {
			snprintf(unit, sizeof(unit), "\\t");
		} else if (wd_cp_hidden(cp) && cp < 0x100) {
			snprintf(unit, sizeof(unit), "\\x%02x", (unsigned)cp);
		} else if (wd_cp_hidden(cp)) {
			snprintf(unit, sizeof(unit), "\\u%04x", (unsigned)cp);
		} else {
			memcpy(unit, p + i, l);
			unit[l] = '\0';
		}
		ul = strlen(unit);
		uw = l > 1 && !wd_cp_hidden(cp) && unit[0] != '\\' ? 1 : ul;
		i += l;
		if (w + uw <= cap - 1) {
			cut = sb.len + ul;
			cut_w = w + uw;
		}
		wd_sb_add(&sb, unit, ul);
		w += uw;
	}
	if (w > cap) {
		sb.len = cut;
		sb.buf[cut] = '\0';
		wd_sb_puts(&sb, "\xe2\x80\xa6"); /* … */
		w = cut_w + 1;
	}
	*width = w;
	return wd_sb_steal(&sb);
}

enum {
	COL_TIME,
	COL_SESSION,
	COL_PID,
	COL_KIND,
	COL_DECISION,
	COL_SOURCE,
	COL_SUMMARY,
	COL_REASON,
	COL_BY,
	NCOLS
};

static const char *const col_title[NCOLS] = {
	"TIME", "SESSION", "PID", "KIND", "DECISION", "SOURCE", "SUMMARY", "REASON/NOTE", "BY",
};

/* Widest a cell may be; the summary and the reason are cut for the table only
 * (JSON and CSV carry them whole). */
static const size_t col_cap[NCOLS] = {24, 24, 10, 8, 8, 14, 60, 60, 20};

struct table {
	FILE *out;
	bool measuring;
	size_t width[NCOLS];
	size_t fit; /* the terminal's width, 0: none */
};

/* Cuts |sb| (a line of cells: one column per code point) to |fit| columns,
 * the last one "…". */
static void cut_line(struct wd_sb *sb, size_t fit)
{
	size_t cols = 0;
	for (size_t i = 0; fit && i < sb->len; i++) {
		if (((unsigned char)sb->buf[i] & 0xc0) == 0x80)
			continue;
		if (++cols == fit) {
			/* the rest, if more than this one column, becomes "…" */
			size_t rest = 0;
			for (size_t j = i; j < sb->len; j++)
				rest += ((unsigned char)sb->buf[j] & 0xc0) != 0x80;
			if (rest > 1) {
				sb->len = i;
				sb->buf[i] = '\0';
				wd_sb_puts(sb, "\xe2\x80\xa6");
			}
			return;
		}
	}
}

/* Narrows the widest free-text columns so that a line fits in |fit|
 * columns: the reason first, then the summary, then who decided, each down
 * to a floor that keeps it readable. A line that cannot fit even then is
 * cut at the terminal's edge (cut_line). */
static void fit_widths(struct table *t, size_t fit)
{
	static const struct {
		int col;
		size_t floor;
	} order[] = {{COL_REASON, 10}, {COL_SUMMARY, 16}, {COL_BY, 6}, {COL_SOURCE, 8}};
	size_t total = 2 * (NCOLS - 1);
	for (int c = 0; c < NCOLS; c++)
		total += t->width[c];
	for (size_t i = 0; fit && total > fit && i < WD_ARRAY_SIZE(order); i++) {
		size_t *w = &t->width[order[i].col];
		if (*w <= order[i].floor)
			continue;
		size_t cut = total - fit < *w - order[i].floor ? total - fit : *w - order[i].floor;
		*w -= cut;
		total -= cut;
	}
}

/* The reason, and the person's note when it says something else. */
static char *reason_text(const struct sto_row *row)
{
	if (row->note && *row->note && (!row->reason || strcmp(row->note, row->reason) != 0))
		return row->reason && *row->reason
			       ? wd_asprintf("%s (note: %s)", row->reason, row->note)
			       : wd_strdup(row->note);
	return wd_strdup(row->reason ? row->reason : "");
}

static int table_row(sqlite3_stmt *st, const struct sto_row *row, void *arg)
{
	(void)st;
	struct table *t = arg;
	char time[40], pid[16];
	wd_format_time(row->ts_us, time, sizeof(time));
	snprintf(pid, sizeof(pid), "%d", row->pid);
	wd_autofree char *reason = reason_text(row);
	const char *text[NCOLS] = {
		time,	     row->session, pid,	   row->kind,	    row->decision,
		row->source, row->summary, reason, row->decided_by,
	};
	struct wd_sb line = {0};
	for (int c = 0; c < NCOLS; c++) {
		size_t w;
		size_t cap = t->measuring || t->width[c] > col_cap[c] ? col_cap[c] : t->width[c];
		wd_autofree char *s = cell(text[c], cap < 2 ? 2 : cap, &w);
		if (t->measuring) {
			if (w > t->width[c])
				t->width[c] = w;
			continue;
		}
		wd_sb_puts(&line, s);
		if (c + 1 < NCOLS)
			wd_sb_printf(&line, "%*s", (int)(t->width[c] - w + 2), "");
	}
	if (!t->measuring) {
		cut_line(&line, t->fit);
		wd_sb_putc(&line, '\n');
		fwrite(line.buf, 1, line.len, t->out);
	}
	wd_sb_free(&line);
	return 0;
}

static int print_table(struct sto_db *db, const struct sto_filter *f, size_t fit, FILE *out,
		       char **err)
{
	struct table t = {.out = out, .measuring = true};
	for (int c = 0; c < NCOLS; c++)
		t.width[c] = strlen(col_title[c]);
	/* Two passes (widths, then lines) keep memory flat on a large audit.
	 * A damaged file is read around (-EUCLEAN): every row it could read
	 * is printed, and the caller says which could not be. */
	wd_autofree char *first = NULL;
	int r = sto_query_stmt(db, f, table_row, &t, &first);
	if (r < 0 && r != -EUCLEAN) {
		if (err && first)
			*err = wd_steal_pointer(&first);
		return r;
	}
	fit_widths(&t, fit);
	t.fit = fit;
	struct wd_sb head = {0};
	for (int c = 0; c < NCOLS; c++)
		wd_sb_printf(&head, "%-*.*s%s", c + 1 < NCOLS ? (int)t.width[c] : 0,
			     (int)t.width[c], col_title[c], c + 1 < NCOLS ? "  " : "");
	cut_line(&head, fit);
	fprintf(out, "%s\n", head.buf);
	wd_sb_free(&head);
	t.measuring = false;
	return sto_query_stmt(db, f, table_row, &t, err);
}

/* ---- JSON -------------------------------------------------------------- */

static void json_str(struct wd_sb *sb, const char *s)
{
	if (!s) {
		wd_sb_puts(sb, "null");
		return;
	}
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	wd_sb_putc(sb, '"');
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t l = wd_utf8_decode(p + i, n - i, &cp);
		if (l == 0) {
			wd_sb_puts(sb, "\\ufffd");
			i++;
			continue;
		}
		switch (cp) {
		case '"':
			wd_sb_puts(sb, "\\\"");
			break;
		case '\\':
			wd_sb_puts(sb, "\\\\");
			break;
		case '\n':
			wd_sb_puts(sb, "\\n");
			break;
		case '\r':
			wd_sb_puts(sb, "\\r");
			break;
		case '\t':
			wd_sb_puts(sb, "\\t");
			break;
		default:
			if (cp < 0x20 || cp == 0x7f)
				wd_sb_printf(sb, "\\u%04x", (unsigned)cp);
			else
				wd_sb_add(sb, (const char *)p + i, l);
		}
		i += l;
	}
	wd_sb_putc(sb, '"');
}

/* Embeds |s| as a JSON value when it is one (request and judge are JSON
 * written by policy and judge), as a string otherwise, so that the output
 * stays valid whatever the database holds. */
static void json_raw(struct wd_sb *sb, const char *s, bool valid)
{
	if (s && valid && utf8_valid(s))
		wd_sb_puts(sb, s);
	else
		json_str(sb, s);
}

struct json {
	FILE *out;
	size_t rows;
};

static int json_row(sqlite3_stmt *st, const struct sto_row *row, void *arg)
{
	struct json *j = arg;
	struct wd_sb sb = {0};
	char time[40];
	wd_format_time(row->ts_us, time, sizeof(time));
	wd_sb_puts(&sb, j->rows++ ? ",\n{" : "\n{");
	wd_sb_printf(&sb, "\"id\":%lld,\"time\":", (long long)row->id);
	json_str(&sb, time);
	wd_sb_printf(&sb, ",\"ts_us\":%lld,\"session\":", (long long)row->ts_us);
	json_str(&sb, row->session);
	wd_sb_printf(&sb, ",\"pid\":%d,\"ppid\":%d,\"kind\":", row->pid, row->ppid);
	json_str(&sb, row->kind);
	wd_sb_puts(&sb, ",\"request\":");
	json_raw(&sb, row->request, sqlite3_column_int(st, STO_COL_REQUEST_JSON_OK) == 1);
	wd_sb_puts(&sb, ",\"summary\":");
	json_str(&sb, row->summary);
	wd_sb_puts(&sb, ",\"decision\":");
	json_str(&sb, row->decision);
	wd_sb_puts(&sb, ",\"source\":");
	json_str(&sb, row->source);
	wd_sb_printf(&sb, ",\"by_person\":%s,\"reason\":",
		     row->source && strcmp(row->source, "user") == 0 ? "true" : "false");
	json_str(&sb, row->reason);
	wd_sb_puts(&sb, ",\"decided_by\":");
	json_str(&sb, row->decided_by);
	wd_sb_puts(&sb, ",\"note\":");
	json_str(&sb, row->note);
	if (row->tool_call)
		wd_sb_printf(&sb, ",\"tool_call\":%lld", (long long)row->tool_call);
	else
		wd_sb_puts(&sb, ",\"tool_call\":null");
	wd_sb_puts(&sb, ",\"judge\":");
	json_raw(&sb, row->judge, sqlite3_column_int(st, STO_COL_JUDGE_JSON_OK) == 1);
	wd_sb_printf(&sb, ",\"latency_us\":%lld}", (long long)row->latency_us);
	fwrite(sb.buf, 1, sb.len, j->out);
	wd_sb_free(&sb);
	return 0;
}

static int print_json(struct sto_db *db, const struct sto_filter *f, FILE *out, char **err)
{
	struct json j = {.out = out};
	fputc('[', out);
	int r = sto_query_stmt(db, f, json_row, &j, err);
	fputs(j.rows ? "\n]\n" : "]\n", out);
	return r;
}

/* ---- CSV --------------------------------------------------------------- */

/* RFC 4180: a field with a comma, a quote, CR or LF is quoted and its quotes
 * doubled. NULL is an empty field. */
static void csv_int(struct wd_sb *sb, long long v, bool null_when_zero)
{
	if (!(null_when_zero && v == 0))
		wd_sb_printf(sb, "%lld", v);
	wd_sb_putc(sb, ',');
}

/* Where CSV goes: into a terminal, every text field is shown sanitised
 * (the audit's text is the agent's and must not drive the terminal); into
 * a file or a pipe, as it is. */
struct csv_out {
	FILE *out;
	bool terminal;
};

static void csv_text(struct wd_sb *sb, const char *s, bool terminal)
{
	if (!terminal || !s) {
		wd_sb_csv_field(sb, s, false);
		return;
	}
	char *shown = wd_sanitize(s);
	wd_sb_csv_field(sb, shown, false);
	free(shown);
}

static int csv_row(sqlite3_stmt *st, const struct sto_row *row, void *arg)
{
	(void)st;
	const struct csv_out *co = arg;
	bool t = co->terminal;
	struct wd_sb sb = {0};
	char time[40];
	wd_format_time(row->ts_us, time, sizeof(time));
	csv_int(&sb, row->id, false);
	wd_sb_csv_field(&sb, time, false);
	csv_int(&sb, row->ts_us, false);
	csv_text(&sb, row->session, t);
	csv_int(&sb, row->pid, false);
	csv_int(&sb, row->ppid, false);
	csv_text(&sb, row->kind, t);
	csv_text(&sb, row->request, t);
	csv_text(&sb, row->summary, t);
	csv_text(&sb, row->decision, t);
	csv_text(&sb, row->source, t);
	csv_text(&sb, row->reason, t);
	csv_text(&sb, row->decided_by, t);
	csv_text(&sb, row->note, t);
	csv_int(&sb, row->tool_call, true);
	csv_text(&sb, row->judge, t);
	wd_sb_printf(&sb, "%lld\r\n", (long long)row->latency_us);
	fwrite(sb.buf, 1, sb.len, co->out);
	wd_sb_free(&sb);
	return 0;
}

static int print_csv(struct sto_db *db, const struct sto_filter *f, FILE *out, bool terminal,
		     char **err)
{
	struct csv_out co = {out, terminal};
	fputs("id,time,ts_us,session,pid,ppid,kind,request,summary,decision,source,reason,"
	      "decided_by,note,tool_call,judge,latency_us\r\n",
	      out);
	return sto_query_stmt(db, f, csv_row, &co, err);
}

/* ---- entry ------------------------------------------------------------- */

int sto_print(struct sto_db *db, const struct sto_filter *f, enum sto_format fmt, FILE *out,
	      char **err)
{
	return sto_print_width(db, f, fmt, 0, out, err);
}

int sto_print_width(struct sto_db *db, const struct sto_filter *f, enum sto_format fmt,
		    size_t width, FILE *out, char **err)
{
	/* One read transaction: the table's two passes and any output see the
	 * same snapshot while the supervisor keeps appending. */
	bool own_txn = sqlite3_get_autocommit(db->h);
	if (own_txn) {
		int rc = sqlite3_exec(db->h, "BEGIN", NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			return sto_fail(db, rc, "cannot start a read", err);
	}
	/* The query's message, unless writing failed: that one says more. */
	char *why = NULL;
	int r;
	switch (fmt) {
	case STO_FMT_TABLE:
		r = print_table(db, f, width, out, &why);
		break;
	case STO_FMT_JSON:
		r = print_json(db, f, out, &why);
		break;
	case STO_FMT_CSV:
		r = print_csv(db, f, out, width > 0, &why);
		break;
	default:
		r = -EINVAL;
	}
	if (own_txn)
		sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
	if (fflush(out) != 0 || ferror(out)) {
		int e = errno ? errno : EIO;
		free(why);
		if (err)
			*err = wd_asprintf("cannot write the audit: %s", strerror(e));
		return r < 0 ? r : -e;
	}
	if (err && why)
		*err = why;
	else
		free(why);
	return r;
}
