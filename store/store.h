/*
 * store: warden's SQLite audit. Opens or creates the database (WAL,
 * synchronous=NORMAL: a committed row survives a crash of any process, not a
 * power cut), migrates its schema, appends one row per decided request and
 * answers the queries of `warden audit`, the judge's session rules and
 * history, and approval memory.
 *
 * A row is recorded when sto_append() returns 0 (committed, or in the
 * journal of a writer, see sto_journal_begin()): the supervisor answers the
 * agent only after that (docs/design.md: no operation runs without its row).
 * Not thread-safe: one struct sto_db per thread.
 *
 * Errors (docs/error-handling.md): every function that can fail returns 0
 * or -errno and takes |err| last. On failure, if |err| is not NULL, *err
 * receives a malloc'd one-line message naming the file (the caller frees
 * it); on success, and when a callback stops a walk early (its own value is
 * returned), *err is left untouched. The connection keeps no last error.
 */
#ifndef WARDEN_STORE_H
#define WARDEN_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sto_db; /* opaque */

/* Opens |path|, creating it (mode 0600) and its parent directory (0700) when
 * missing, and migrates the schema to the current version. Refuses a
 * database from a newer warden (-EPROTO). On failure returns -errno and, if
 * |err| is not NULL, a sentence naming the file and what to do (caller frees
 * *err). */
int sto_open(const char *path, struct sto_db **out, char **err);
void sto_close(struct sto_db *db);

/* The schema version this build writes. */
int sto_schema_version(void);

struct sto_session {
	const char *id;	     /* e.g. "20261202-120643-4f2a" */
	const char *parent;  /* parent session id or NULL */
	int64_t started_us;  /* realtime µs */
	const char *project; /* absolute path */
	const char *command; /* the agent's command line, shell-quoted */
	const char *tier;    /* "aggressive" | "standard" | "passive" */
	const char *role;    /* "agent" | "review" */
	const char *agent;   /* agent profile name or NULL */
	const char *task;    /* --task or NULL */
};

/* Records the start of a session. 0 or -errno (-EEXIST: the id is taken). */
int sto_session_begin(struct sto_db *db, const struct sto_session *s, char **err);
/* Records the end of a session with the agent's exit status. 0 or -errno
 * (-ENOENT: no such session). */
int sto_session_end(struct sto_db *db, const char *id, int64_t ended_us, int exit_status,
		    char **err);

/* One outcome. Strings may be NULL where not applicable. */
struct sto_row {
	int64_t id;    /* set by sto_append / queries */
	int64_t ts_us; /* realtime µs of the decision */
	const char *session;
	int pid; /* requesting process (thread id as the kernel gave it) */
	int ppid;
	const char *kind;	/* "exec" | "open" */
	const char *request;	/* pol_request_json(), already redacted */
	const char *summary;	/* pol_request_summary() */
	const char *decision;	/* "allow" | "deny" */
	const char *source;	/* "hard_deny" "rule" "grant" "session_grant" "accepted_rule"
	                         "fast_path" "covered" "startup" "judge" "judge_cache" "tier"
	                         "user" "timeout" "error" */
	const char *reason;	/* the reason, the fixed tier note, or the person's note */
	const char *decided_by; /* "warden", "judge", a user name */
	const char *note;	/* a person's note, verbatim, or NULL */
	int64_t tool_call;	/* id of the row of the tool call this belongs to, 0 if none */
	const char *judge;	/* judge details as JSON (verdict, usage, latency) or NULL */
	int64_t latency_us;	/* from notification to decision */
};

/* Appends |row| in its own transaction; it is durable (per the WAL and
 * synchronous settings) when this returns 0. Sets row->id. -errno on
 * failure (the caller then denies: fail closed). */
int sto_append(struct sto_db *db, struct sto_row *row, char **err);

/* Appends |n| rows in one transaction (group commit). All or none. */
int sto_append_batch(struct sto_db *db, struct sto_row *rows, size_t n, char **err);

/* ---- the journal -------------------------------------------------------- */

/* The journal's name: the database's path and this. It holds rows not yet
 * in SQLite, so it is as private as the database (hidden, 0600). */
#define STO_JOURNAL_SUFFIX "-wdj"

/* Makes this connection the audit's writer: from now on sto_append() and
 * sto_append_batch() record rows with one write() to the journal (durable
 * against a crash of any process once they return 0) and set their ids
 * from a block reserved in SQLite; sto_flush() moves them into SQLite.
 * -EBUSY when another process is the writer (the appends then commit to
 * SQLite directly, as before); -errno with *err on another failure. Every
 * sto_open() first moves what a killed writer left in the journal, and
 * every query flushes first, so readers see every recorded row. */
int sto_journal_begin(struct sto_db *db, char **err);
/* Moves the journal's records into SQLite in one transaction and empties
 * the journal. 0 or -errno with *err (the records stay in the journal). */
int sto_flush(struct sto_db *db, char **err);
/* -1 when no record waits (or the last flush failed: see
 * sto_flush_retry()); 0 when a flush is due now (many records, or an old
 * one); else the milliseconds until it is due. */
int sto_flush_wait_ms(const struct sto_db *db);
/* After a failed flush, flushes again once a second has passed; 0 or
 * -errno with *err. Until a flush succeeds, appends try it first and are
 * refused when it fails. */
int sto_flush_retry(struct sto_db *db, char **err);

struct sto_filter {
	const char *session;  /* NULL: all sessions */
	int64_t since_us;     /* 0: from the beginning */
	const char *source;   /* NULL: any */
	const char *kind;     /* NULL: any */
	const char *decision; /* "allow" | "deny"; NULL: any */
	size_t limit;	      /* the latest |limit| matching rows; 0: no limit */
	bool newest_first;
};

/* Calls |cb| for each matching row, oldest first (or newest first); with a
 * limit, the latest |limit| rows, still in that order. Strings in the row
 * are valid only during the call. Stops early and returns the callback's
 * value when it is non-zero. 0 or -errno.
 *
 * A damaged file (a page overwritten) does not hide the rows around the
 * damage: the query then reads the table row by row, delivers every row it
 * can read and returns -EUCLEAN, with *err naming the rows it could not
 * read and what to do. sto_print() does the same. */
typedef int (*sto_row_cb)(const struct sto_row *row, void *arg);
int sto_query(struct sto_db *db, const struct sto_filter *f, sto_row_cb cb, void *arg, char **err);

enum sto_format { STO_FMT_TABLE, STO_FMT_JSON, STO_FMT_CSV };

/* Prints matching rows to |out| for `warden audit`: a table (time, session,
 * pid, kind, decision, source, summary, reason/note, by), a JSON array with
 * every column, or CSV with a header line (RFC 4180 quoting). 0 or -errno. */
int sto_print(struct sto_db *db, const struct sto_filter *f, enum sto_format fmt, FILE *out,
	      char **err);
/* sto_print() for a terminal |width| columns wide (0: no bound): the
 * table's free-text columns are cut (ending in "…") so that a line fits. */
int sto_print_width(struct sto_db *db, const struct sto_filter *f, enum sto_format fmt,
		    size_t width, FILE *out, char **err);

/* Runs PRAGMA integrity_check. 0 when "ok", -EIO otherwise (*err quotes
 * what the check found). */
int sto_check(struct sto_db *db, char **err);

/* Runs PRAGMA quick_check (every page of every table and index, without
 * comparing indexes with their tables), stopping after about |budget_ms|
 * (0: no bound). 0 when what it checked is sound (*complete says whether it
 * checked all), -EUCLEAN when the file is damaged, -errno on another
 * failure; on failure, if |err| is not NULL, a sentence naming the file and
 * what to do (caller frees). */
int sto_quick_check(struct sto_db *db, int64_t budget_ms, bool *complete, char **err);

/* ---- sessions ----------------------------------------------------------- */

/* One session with the counts of its rows. Strings are NULL when unknown and
 * valid only during the callback. */
struct sto_session_info {
	const char *id, *tier, *role, *agent, *project, *command;
	int64_t started_us;
	int64_t ended_us; /* 0: not recorded (running, or warden was killed) */
	bool has_exit;
	int exit_status;
	int64_t allowed, refused;
	int64_t asked; /* put to a person: answered (source user) or not (timeout) */
		       /* The counts are -1 when the file is damaged and they could not be
	 * read; sto_sessions() then returns -EUCLEAN after the last session. */
};
typedef int (*sto_session_cb)(const struct sto_session_info *s, void *arg);

/* Calls |cb| for the latest |limit| sessions (0: all), oldest first. Stops
 * early and returns the callback's value when it is non-zero. 0 or -errno
 * (*err says why). */
int sto_sessions(struct sto_db *db, size_t limit, sto_session_cb cb, void *arg, char **err);

/* The session |spec| names: a full id ("20261202-120643-4f2a"), or the short
 * id shown in approval ids (its last four hex digits, "4f2a"), or "last"
 * (the latest session). Stores the full id in *id (caller frees). -ENOENT
 * when none matches, -ENOTUNIQ when a short id matches several; then, if
 * |err| is not NULL, a sentence (caller frees). */
int sto_session_find(struct sto_db *db, const char *spec, char **id, char **err);

/* ---- approval memory ---------------------------------------------------- */

/* Calls |cb| for each decision a person made: rows whose source is 'user',
 * approvals and denials alike; never 'timeout', 'tier', 'judge' or any
 * other source (a timeout is not a decision). Only rows of |kind| ("exec",
 * "open"; NULL: every kind), newest first, at most |limit| rows (0: no
 * limit). The row has every column (request, decision, decided_by, note,
 * ts_us, kind, session ...); its strings are valid only during the call.
 * Stops early and returns the callback's value when it is non-zero. 0 or
 * -errno. Warden has no way to edit a request's arguments, so every
 * approval here was given as-is. */
int sto_people_decisions(struct sto_db *db, const char *kind, size_t limit, sto_row_cb cb,
			 void *arg, char **err);

/* ---- end of approval memory --------------------------------------------- */

#endif
