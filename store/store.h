/*
 * store: warden's SQLite audit. Opens or creates the database (WAL,
 * synchronous=NORMAL: a committed row survives a crash of any process, not a
 * power cut), migrates its schema, appends one row per decided request and
 * answers the queries of `warden audit`, the judge's session rules and
 * history, and approval memory.
 *
 * A row is committed when sto_append() returns 0: the supervisor answers the
 * agent only after that (docs/design.md: no operation runs without its row).
 * Not thread-safe: one struct sto_db per thread.
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

/* Records the start of a session. 0 or -errno. */
int sto_session_begin(struct sto_db *db, const struct sto_session *s);
/* Records the end of a session with the agent's exit status. */
int sto_session_end(struct sto_db *db, const char *id, int64_t ended_us, int exit_status);

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
int sto_append(struct sto_db *db, struct sto_row *row);

/* Appends |n| rows in one transaction (group commit). All or none. */
int sto_append_batch(struct sto_db *db, struct sto_row *rows, size_t n);

struct sto_filter {
	const char *session; /* NULL: all sessions */
	int64_t since_us;    /* 0: from the beginning */
	const char *source;  /* NULL: any */
	const char *kind;    /* NULL: any */
	size_t limit;	     /* 0: no limit */
	bool newest_first;
};

/* Calls |cb| for each matching row, oldest first (or newest first). Strings
 * in the row are valid only during the call. Stops early and returns the
 * callback's value when it is non-zero. 0 or -errno. */
typedef int (*sto_row_cb)(const struct sto_row *row, void *arg);
int sto_query(struct sto_db *db, const struct sto_filter *f, sto_row_cb cb, void *arg);

enum sto_format { STO_FMT_TABLE, STO_FMT_JSON, STO_FMT_CSV };

/* Prints matching rows to |out| for `warden audit`: a table (time, session,
 * pid, kind, decision, source, summary, reason/note, by), a JSON array with
 * every column, or CSV with a header line (RFC 4180 quoting). 0 or -errno. */
int sto_print(struct sto_db *db, const struct sto_filter *f, enum sto_format fmt, FILE *out);

/* Runs PRAGMA integrity_check. 0 when "ok", -EIO otherwise. */
int sto_check(struct sto_db *db);

/* A sentence about the last failure of a call on |db| (empty when none has
 * failed yet), e.g. for the supervisor's log when sto_append() fails. The
 * string is owned by |db| and valid until the next call on |db|. */
const char *sto_errmsg(const struct sto_db *db);

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
			 void *arg);

/* ---- end of approval memory --------------------------------------------- */

#endif
