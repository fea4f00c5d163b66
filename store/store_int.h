/*
 * store_int.h: what store.c and print.c share, and what the store's tests
 * reach beyond the public header (the migration runner). Not for other
 * modules: sqlite3.h stays inside store/ (docs/style.md, third-party headers).
 */
#ifndef WARDEN_STORE_INT_H
#define WARDEN_STORE_INT_H

#include <sqlite3.h>
#include <sys/types.h>

#include "common.h"

#include "store.h"

/* Which filters a query uses: one cached statement per combination. */
enum {
	STO_Q_SESSION = 1u << 0,
	STO_Q_SINCE = 1u << 1,
	STO_Q_SOURCE = 1u << 2,
	STO_Q_KIND = 1u << 3,
	STO_Q_NEWEST = 1u << 4,
	STO_Q_DECISION = 1u << 5,
	STO_Q_LIMIT = 1u << 6,
	STO_Q_COUNT = 1u << 7,
};

/* The statements prepared once per connection. */
enum sto_stmt_id {
	STO_ST_BEGIN,
	STO_ST_COMMIT,
	STO_ST_ROLLBACK,
	STO_ST_INSERT,
	STO_ST_SESSION_BEGIN,
	STO_ST_SESSION_END,
	STO_ST_MAX,
};

struct sto_db {
	sqlite3 *h;
	char *path;
	sqlite3_stmt *st[STO_ST_MAX];
	sqlite3_stmt *query[STO_Q_COUNT];
	/* The journal (journal.c). */
	char *jpath;
	int jfd;	 /* -1: none */
	bool journaling; /* this process holds the journal: sto_append writes it */
	bool jbroken;	 /* a torn write could not be cut off: appends refuse */
	int64_t next_id, block_first, block_last; /* the reserved ids in use */
	off_t jend;				  /* the journal's size */
	off_t jflushed;				  /* records before this are in SQLite */
	size_t jpending;			  /* records not yet in SQLite */
	int64_t jfirst_us;			  /* monotonic time of the first of them */
	int64_t jretry_us;			  /* after a failed flush, not before */
	struct wd_sb jbuf;			  /* the records of one append */
};

/* The columns a row cannot do without: 0, or -EINVAL with *err. */
int sto_row_check(struct sto_db *db, const struct sto_row *row, char **err);

/* Opens (creating, 0600, never through a symlink) the journal next to the
 * database and moves into SQLite the records a killed warden left there.
 * 0 or -errno with *err. */
int sto_journal_open(struct sto_db *db, char **err);
/* Writes |n| rows with one write() to the journal and sets their ids; all
 * or none. 0 or -errno with *err (the caller refuses: fail closed). */
int sto_journal_append(struct sto_db *db, struct sto_row *rows, size_t n, char **err);
/* Flushes what waits (a query must see every row); failures leave the
 * records in the journal for the next flush or open. */
void sto_journal_sync(struct sto_db *db);
/* Flushes, gives back unused ids, closes the journal. */
void sto_journal_close(struct sto_db *db);

/* One schema step. Versions are 1, 2, 3 ... in array order; |sql| may hold
 * several statements and runs inside the migration's transaction. */
struct sto_migration {
	int version;
	const char *sql;
};

/* Brings the database on |h| to the last version in |m| (|n| entries), in one
 * BEGIN IMMEDIATE transaction: all steps or none. Refuses a newer version
 * (-EPROTO) and a database that has tables but no schema_version (-EPROTO:
 * not a warden audit). |path| is used in messages. On failure returns -errno
 * and, when |err| is not NULL, a sentence (caller frees). */
int sto_migrate(sqlite3 *h, const struct sto_migration *m, size_t n, const char *path, char **err);

/* The migrations this build applies (sto_open uses them). */
extern const struct sto_migration sto_migrations[];
extern const size_t sto_migrations_count;

/* Converts an SQLite result code to -errno (0 for SQLITE_OK, SQLITE_ROW and
 * SQLITE_DONE). */
int sto_errno(int rc);

/* Stores in *err (if err) a message from |rc| and the connection's error,
 * prefixed by |what|; returns sto_errno(rc). */
int sto_fail(struct sto_db *db, int rc, const char *what, char **err);

/* Reads the current row of |st| (a query statement with the standard column
 * order of store.c's SELECT) into |row|. Strings point into |st|. */
void sto_row_from_stmt(sqlite3_stmt *st, struct sto_row *row);

/* Standard column order of every decisions SELECT, then the extras print.c
 * uses: whether request and judge are valid JSON. */
enum {
	STO_COL_ID,
	STO_COL_TS,
	STO_COL_SESSION,
	STO_COL_PID,
	STO_COL_PPID,
	STO_COL_KIND,
	STO_COL_REQUEST,
	STO_COL_SUMMARY,
	STO_COL_DECISION,
	STO_COL_SOURCE,
	STO_COL_REASON,
	STO_COL_DECIDED_BY,
	STO_COL_NOTE,
	STO_COL_TOOL_CALL,
	STO_COL_JUDGE,
	STO_COL_LATENCY,
	STO_COL_REQUEST_JSON_OK,
	STO_COL_JUDGE_JSON_OK,
};

/* Runs |f| like sto_query but hands the callback the statement too, so that
 * print.c can read the extra columns. */
typedef int (*sto_stmt_cb)(sqlite3_stmt *st, const struct sto_row *row, void *arg);
int sto_query_stmt(struct sto_db *db, const struct sto_filter *f, sto_stmt_cb cb, void *arg,
		   char **err);

/* The conditions of |f| as SQL (" AND session = :session ..."), named
 * parameters bound by sto_bind_filter(). Caller frees. */
char *sto_filter_sql(const struct sto_filter *f);
/* Binds the named parameters of sto_filter_sql() that |st| has. */
void sto_bind_filter(sqlite3_stmt *st, const struct sto_filter *f);

/* Whether |rc| says that the file is damaged (SQLITE_CORRUPT, NOTADB). */
bool sto_is_damage(int rc);

/* Where a query that met a damaged page stopped: the key (ts_us, id) of
 * the last row it delivered, in the query's order. */
struct sto_key {
	bool set;
	int64_t ts_us, id;
};

/* Reads around damage: looks up every row id of the decisions table one by
 * one, delivers each readable row matching |f| that comes after |after| in
 * the query's order (the latest |f->limit| of them when there is a limit),
 * and names in *err (if err) the rows that could not be read. Returns
 * -EUCLEAN when it delivered every row it could read but some part of the
 * file is damaged, the callback's value when it stops early, or -errno. */
int sto_salvage(struct sto_db *db, const struct sto_filter *f, sto_stmt_cb cb, void *arg,
		const struct sto_key *after, char **err);

#endif
