/*
 * salvage.c: the audit when its file is damaged: a bounded quick check for
 * the supervisor at session start, and reading every row that can still be
 * read when a query meets a damaged page.
 *
 * A page overwritten in the middle of the decisions table makes a scan stop
 * there with SQLITE_CORRUPT, hiding every row after it. The table is a
 * B-tree keyed by row id, so each row can also be reached alone: looking
 * the ids up one by one reads every row whose own page (and the pages above
 * it) are sound, and names exactly the ids that could not be read. The
 * highest id comes from the table's rightmost page or, when that page is the
 * damaged one, from an index (each index entry ends with its row's id).
 */
#include "store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"

bool sto_is_damage(int rc)
{
	return (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB;
}

/* ---- quick check -------------------------------------------------------- */

struct budget {
	int64_t deadline_ns;
	bool hit;
};

static int over_budget(void *arg)
{
	struct budget *b = arg;
	if (wd_now_mono_ns() < b->deadline_ns)
		return 0;
	b->hit = true;
	return 1; /* interrupts the statement */
}

static void damaged_err(char **err, const char *path, const char *what)
{
	if (err)
		*err = wd_asprintf(
			"%s is damaged (%s): warden will not add to it; save what can be "
			"read with `sqlite3 %s .recover > saved.sql`, then move the file "
			"aside (warden then starts a new audit)",
			path, what, path);
}

int sto_quick_check(struct sto_db *db, int64_t budget_ms, bool *complete, char **err)
{
	*complete = true;
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->h, "PRAGMA quick_check(5)", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		if (sto_is_damage(rc)) {
			damaged_err(err, db->path, sqlite3_errmsg(db->h));
			return -EUCLEAN;
		}
		return sto_fail(db, rc, "cannot check the file", err);
	}
	struct budget b = {.deadline_ns = wd_now_mono_ns() + budget_ms * 1000000};
	/* Every 1,000 virtual machine steps: a few microseconds apart. */
	if (budget_ms > 0)
		sqlite3_progress_handler(db->h, 1000, over_budget, &b);
	struct wd_sb found = {0};
	bool ok = false;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);
		if (v && strcmp(v, "ok") == 0)
			ok = true;
		else if (found.len < 200)
			wd_sb_printf(&found, "%s%s", found.len ? "; " : "", v ? v : "no answer");
	}
	sqlite3_progress_handler(db->h, 0, NULL, NULL);
	int r = 0;
	if ((rc & 0xff) == SQLITE_INTERRUPT && b.hit) {
		*complete = false; /* no fault in what it read before the bound */
	} else if (rc != SQLITE_DONE && sto_is_damage(rc)) {
		damaged_err(err, db->path, sqlite3_errmsg(db->h));
		r = -EUCLEAN;
	} else if (rc != SQLITE_DONE) {
		r = sto_fail(db, rc, "cannot check the file", err);
	} else if (!ok) {
		damaged_err(err, db->path, found.buf ? found.buf : "quick_check gave no answer");
		r = -EUCLEAN;
	}
	wd_sb_free(&found);
	sqlite3_finalize(st);
	return r;
}

/* ---- reading around damage ---------------------------------------------- */

/* The largest id |sql| yields, reading until the end or the damage. */
static void max_id(sqlite3 *h, const char *sql, int64_t *max, bool *complete)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
			    sqlite3_column_int64(st, 0) > *max)
				*max = sqlite3_column_int64(st, 0);
		}
	}
	if (rc != SQLITE_DONE)
		*complete = false;
	sqlite3_finalize(st);
}

struct keys {
	struct sto_key *v;
	size_t n, cap;
};

static int key_cmp(const void *a, const void *b)
{
	const struct sto_key *x = a, *y = b;
	if (x->ts_us != y->ts_us)
		return x->ts_us < y->ts_us ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The ids that could not be read, as ranges ("5-90, 120"), capped. */
struct bad {
	struct wd_sb text;
	int64_t count, first, last;
};

static void bad_flush(struct bad *b)
{
	if (!b->first)
		return;
	if (b->text.len < 160) {
		wd_sb_puts(&b->text, b->text.len ? ", " : "");
		if (b->first == b->last)
			wd_sb_printf(&b->text, "%lld", (long long)b->first);
		else
			wd_sb_printf(&b->text, "%lld-%lld", (long long)b->first,
				     (long long)b->last);
	} else if (!wd_str_has_suffix(b->text.buf, "...")) {
		wd_sb_puts(&b->text, ", ...");
	}
	b->first = b->last = 0;
}

static void bad_add(struct bad *b, int64_t id)
{
	b->count++;
	if (b->first && id == b->last + 1) {
		b->last = id;
		return;
	}
	bad_flush(b);
	b->first = b->last = id;
}

/* Whether |k| comes after |after| in the order of |f|. */
static bool comes_after(const struct sto_filter *f, const struct sto_key *k,
			const struct sto_key *after)
{
	if (!after || !after->set)
		return true;
	int c = key_cmp(k, after);
	return f->newest_first ? c < 0 : c > 0;
}

static int deliver(struct sto_db *db, sqlite3_stmt *st, const struct sto_key *k, sto_stmt_cb cb,
		   void *arg, char **err)
{
	sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":id"), k->id);
	int r = 0, rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		struct sto_row row;
		sto_row_from_stmt(st, &row);
		r = cb(st, &row, arg);
	} else if (rc != SQLITE_DONE && !sto_is_damage(rc)) {
		r = sto_fail(db, rc, "cannot read a row", err);
	}
	sqlite3_reset(st);
	return r;
}

/* Looks every id up to |max| up: the readable matching rows go to |keys|,
 * the unreadable ids to |bad|. 0 or -errno. */
static int look_up_all(struct sto_db *db, sqlite3_stmt *st, int64_t max, struct keys *keys,
		       struct bad *bad, char **err)
{
	int idx = sqlite3_bind_parameter_index(st, ":id");
	for (int64_t id = 1; id <= max; id++) {
		sqlite3_bind_int64(st, idx, id);
		int rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			if (keys->n == keys->cap) {
				keys->cap = keys->cap ? keys->cap * 2 : 1024;
				keys->v = wd_realloc(keys->v, keys->cap * sizeof(*keys->v));
			}
			keys->v[keys->n++] =
				(struct sto_key){true, sqlite3_column_int64(st, STO_COL_TS), id};
		} else if (rc != SQLITE_DONE) {
			if (!sto_is_damage(rc)) {
				int r = sto_fail(db, rc, "cannot read a row", err);
				sqlite3_reset(st);
				return r;
			}
			bad_add(bad, id);
		}
		sqlite3_reset(st);
	}
	bad_flush(bad);
	return 0;
}

static void damage_message(struct sto_db *db, const struct bad *bad, bool max_complete, int64_t max,
			   char **err)
{
	if (!err)
		return;
	char more[96] = "";
	/* The path goes into a command a person copies: quoted for a shell. */
	struct wd_sb quoted = {0};
	wd_sb_shell_quote(&quoted, db->path);
	if (!max_complete)
		snprintf(more, sizeof(more), "; rows after id %lld may be lost too",
			 (long long)max);
	if (bad->count)
		*err = wd_asprintf(
			"audit database %s is damaged: %lld row%s could not be read (id%s %s)%s; "
			"save what can be read with `sqlite3 %s .recover > saved.sql`",
			db->path, (long long)bad->count, bad->count == 1 ? "" : "s",
			bad->count == 1 ? "" : "s", bad->text.buf ? bad->text.buf : "", more,
			quoted.buf);
	else
		*err = wd_asprintf(
			"audit database %s is damaged: every row was read, but an index or "
			"another page is not sound%s; repair it with `sqlite3 %s .recover > "
			"saved.sql`",
			db->path, more, quoted.buf);
	wd_sb_free(&quoted);
}

int sto_salvage(struct sto_db *db, const struct sto_filter *f, sto_stmt_cb cb, void *arg,
		const struct sto_key *after, char **err)
{
	static const struct sto_filter all = {0};
	if (!f)
		f = &all;
	int64_t max = 0;
	bool max_complete = true, index_complete = true;
	max_id(db->h, "SELECT max(id) FROM decisions", &max, &max_complete);
	max_id(db->h, "SELECT id FROM decisions INDEXED BY decisions_session_ts", &max,
	       &index_complete);
	max_complete = max_complete || index_complete;
	/* The highest id comes from a damaged file: a garbage value must not
	 * make the lookups run for ever. No row takes less than 32 bytes of
	 * the file, so no sound id lies above its size / 32. */
	struct stat fst;
	int64_t bound = stat(db->path, &fst) == 0 ? (int64_t)(fst.st_size / 32) + 1 : max;
	if (max > bound) {
		max = bound;
		max_complete = false;
	}

	wd_autofree char *conds = sto_filter_sql(f);
	wd_autofree char *sql = wd_asprintf(
		"SELECT id, ts_us, session, pid, ppid, kind, request, summary, decision, source,"
		" reason, decided_by, note, tool_call, judge, latency_us,"
		" json_valid(request), json_valid(judge) FROM decisions WHERE id = :id%s",
		conds);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(db, rc, "cannot prepare a row lookup", err);
	sto_bind_filter(st, f);

	struct keys keys = {0};
	struct bad bad = {0};
	int r = look_up_all(db, st, max, &keys, &bad, err);
	if (r == 0) {
		qsort(keys.v, keys.n, sizeof(*keys.v), key_cmp);
		size_t from = f->limit && f->limit < keys.n ? keys.n - f->limit : 0;
		for (size_t i = 0; r == 0 && i < keys.n - from; i++) {
			size_t k = f->newest_first ? keys.n - 1 - i : from + i;
			if (comes_after(f, &keys.v[k], after))
				r = deliver(db, st, &keys.v[k], cb, arg, err);
		}
	}
	if (r == 0) {
		damage_message(db, &bad, max_complete, max, err);
		r = -EUCLEAN;
	}
	sqlite3_finalize(st);
	free(keys.v);
	wd_sb_free(&bad.text);
	return r;
}
