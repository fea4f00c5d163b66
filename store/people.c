/*
 * people.c: the store's side of approval memory: the decisions people made,
 * newest first, for similarity and proposed rules (policy/ computes both).
 *
 * Only rows whose source is 'user' are a person's decision; the partial
 * index decisions_people_kind (kind, ts_us) WHERE source = 'user' serves
 * the query of one kind.
 */
#include "store_int.h"

#include <stdint.h>
#include <string.h>

/* The standard column order of store.c (STO_COL_*), so that
 * sto_row_from_stmt() reads these rows too. */
#define PEOPLE_COLS                                                                                \
	"SELECT id, ts_us, session, pid, ppid, kind, request, summary, decision, source,"          \
	" reason, decided_by, note, tool_call, judge, latency_us,"                                 \
	" json_valid(request), json_valid(judge) FROM decisions"

static const char people_kind_sql[] = PEOPLE_COLS " WHERE source = 'user' AND kind = ?1"
						  " ORDER BY ts_us DESC, id DESC LIMIT ?2";
static const char people_all_sql[] = PEOPLE_COLS " WHERE source = 'user'"
						 " ORDER BY ts_us DESC, id DESC LIMIT ?2";

int sto_people_decisions(struct sto_db *db, const char *kind, size_t limit, sto_row_cb cb,
			 void *arg, char **err)
{
	sto_journal_sync(db);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->h, kind ? people_kind_sql : people_all_sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(db, rc, "cannot prepare the query of people's decisions", err);
	if (kind)
		sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_int64 lim = limit == 0 || limit > (size_t)INT64_MAX ? -1 : (sqlite3_int64)limit;
	sqlite3_bind_int64(st, 2, lim);
	int r = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct sto_row row;
		sto_row_from_stmt(st, &row);
		r = cb(&row, arg);
		if (r != 0)
			break;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sto_fail(db, rc, "cannot read people's decisions", err);
	sqlite3_finalize(st);
	return r;
}
