/*
 * sessions.c: the sessions of an audit for `warden sessions` and for
 * `warden audit --session/--last`: one line per session with the counts of
 * its rows, and finding a session by the short id shown in approval ids.
 */
#include "store_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* The counts come from decisions_session_ts (session, ts_us): one index
 * range per session, then its rows. */
static const char sessions_sql[] =
	"SELECT s.id, s.started_us, s.ended_us, s.exit_status, s.agent, s.tier, s.role,"
	" s.project, s.command,"
	" (SELECT count(*) FROM decisions d WHERE d.session = s.id AND d.decision = 'allow'),"
	" (SELECT count(*) FROM decisions d WHERE d.session = s.id AND d.decision = 'deny'),"
	" (SELECT count(*) FROM decisions d WHERE d.session = s.id"
	"   AND d.source IN ('user', 'timeout'))"
	" FROM (SELECT * FROM sessions ORDER BY started_us DESC, id DESC LIMIT ?1) s"
	" ORDER BY s.started_us ASC, s.id ASC";

/* The same without the counts, for a file whose decisions are damaged. */
static const char sessions_only_sql[] =
	"SELECT s.id, s.started_us, s.ended_us, s.exit_status, s.agent, s.tier, s.role,"
	" s.project, s.command, -1, -1, -1"
	" FROM (SELECT * FROM sessions ORDER BY started_us DESC, id DESC LIMIT ?1) s"
	" ORDER BY s.started_us ASC, s.id ASC";

static const char *text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

static int list(struct sto_db *db, const char *sql, size_t limit, sto_session_cb cb, void *arg,
		size_t *delivered, int *last_rc, char **err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(db, rc, "cannot list the sessions", err);
	sqlite3_bind_int64(st, 1, limit == 0 || limit > INT64_MAX ? -1 : (sqlite3_int64)limit);
	int r = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct sto_session_info s = {
			.id = text(st, 0),
			.started_us = sqlite3_column_int64(st, 1),
			.ended_us = sqlite3_column_int64(st, 2),
			.has_exit = sqlite3_column_type(st, 3) != SQLITE_NULL,
			.exit_status = sqlite3_column_int(st, 3),
			.agent = text(st, 4),
			.tier = text(st, 5),
			.role = text(st, 6),
			.project = text(st, 7),
			.command = text(st, 8),
			.allowed = sqlite3_column_int64(st, 9),
			.refused = sqlite3_column_int64(st, 10),
			.asked = sqlite3_column_int64(st, 11),
		};
		++*delivered;
		r = cb(&s, arg);
		if (r != 0)
			break;
	}
	*last_rc = rc;
	if (r == 0 && rc != SQLITE_DONE)
		r = sto_fail(db, rc, "cannot list the sessions", err);
	sqlite3_finalize(st);
	return r;
}

int sto_sessions(struct sto_db *db, size_t limit, sto_session_cb cb, void *arg, char **err)
{
	sto_journal_sync(db);
	size_t n = 0;
	int rc = SQLITE_OK;
	char *first = NULL;
	int r = list(db, sessions_sql, limit, cb, arg, &n, &rc, &first);
	/* Damaged decisions: the sessions still, with their counts unknown
	 * (-1). */
	if (r < 0 && n == 0 && sto_is_damage(rc)) {
		free(first);
		first = NULL;
		r = list(db, sessions_only_sql, limit, cb, arg, &n, &rc, &first);
		if (r == 0) {
			first = wd_asprintf(
				"audit database %s is damaged: the counts of rows could not be "
				"read (shown as ?); warden audit shows every row it can read",
				db->path);
			r = -EUCLEAN;
		}
	}
	if (r < 0 && err && first)
		*err = wd_steal_pointer(&first);
	free(first);
	return r;
}

/* The short id of a session is the last four hex digits of its id (the
 * random part), as the approvals desk shows it. */
static bool is_short_id(const char *s)
{
	if (strlen(s) != 4)
		return false;
	for (const char *p = s; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return false;
	return true;
}

/* Runs |sql| with |arg| bound to ?1; collects up to 4 ids. */
static int ids_of(struct sto_db *db, const char *sql, const char *arg, char *ids[4], int *n,
		  char **err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(db, rc, "cannot find the session", err);
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	*n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n < 4 && text(st, 0))
			ids[*n] = wd_strdup(text(st, 0));
		++*n;
	}
	int r = rc == SQLITE_DONE ? 0 : sto_fail(db, rc, "cannot find the session", err);
	sqlite3_finalize(st);
	return r;
}

int sto_session_find(struct sto_db *db, const char *spec, char **id, char **err)
{
	char *ids[4] = {0};
	int n = 0, r;
	*id = NULL;
	if (strcmp(spec, "last") == 0)
		r = ids_of(db, "SELECT id FROM sessions ORDER BY started_us DESC, id DESC LIMIT 1",
			   NULL, ids, &n, err);
	else if (is_short_id(spec))
		r = ids_of(db,
			   "SELECT id FROM sessions WHERE lower(substr(id, -5)) = '-' || lower(?1)"
			   " ORDER BY started_us DESC, id DESC",
			   spec, ids, &n, err);
	else
		r = ids_of(db,
			   "SELECT ?1 WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?1)"
			   " OR EXISTS (SELECT 1 FROM decisions WHERE session = ?1)",
			   spec, ids, &n, err);
	if (r < 0) {
		/* ids_of() said why. */
	} else if (n == 0) {
		if (err)
			*err = strcmp(spec, "last") == 0
				       ? wd_asprintf("%s has no session yet", db->path)
				       : wd_asprintf(
						 "%s has no session \"%s\" (warden sessions lists "
						 "them)",
						 db->path, spec);
		r = -ENOENT;
	} else if (n > 1) {
		if (err)
			*err = wd_asprintf("the short id %s names %d sessions (%s, %s%s): pass the "
					   "full id",
					   spec, n, ids[0], ids[1], n > 2 ? ", ..." : "");
		r = -ENOTUNIQ;
	} else {
		*id = wd_steal_pointer(&ids[0]);
	}
	for (int i = 0; i < 4; i++)
		free(ids[i]);
	return r;
}
