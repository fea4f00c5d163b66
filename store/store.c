/*
 * store.c: the SQLite audit: opening (file and directory modes, WAL,
 * synchronous=NORMAL, busy timeout), the schema and its migrations, sessions,
 * appending decisions and querying them. Printing is in print.c.
 *
 * Every SQLite result code is converted to -errno here, at the module edge;
 * nothing outside store/ sees sqlite3.h. The store decides nothing: a failed
 * append is reported and the supervisor denies (fail closed).
 */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

/* Several processes share the file: the supervisor writes while `warden
 * audit` reads. WAL lets readers and the writer proceed together; the timeout
 * covers the short exclusive moments (a checkpoint, a migration, a second
 * writer). */
#define STO_BUSY_TIMEOUT_MS 5000

/* How much of integrity_check's findings a message quotes. */
#define STO_CHECK_MAX 512

/* ---- schema ------------------------------------------------------------ */

/*
 * Version 1. One row per outcome in `decisions`; `sessions` records each
 * `warden run`. The indexes serve the later queries:
 *  - the judge's tool history: this session's rows oldest first
 *    -> decisions_session_ts;
 *  - the judge's session rules: people's replies in this session and its
 *    parent -> decisions_people_session, sessions_parent;
 *  - approval memory's similar decisions: people's decisions of one kind,
 *    newest first -> decisions_people_kind;
 *  - `warden audit --since` and reports -> decisions_ts, decisions_source_ts.
 * by_person is derived, never written: a person decided exactly the rows
 * whose source is 'user' (a timeout or an unattended tier is not a person).
 * tool_call is NULL when the row belongs to no tool call.
 */
static const char schema_v1[] =
	"CREATE TABLE sessions ("
	" id TEXT PRIMARY KEY NOT NULL,"
	" parent TEXT,"
	" started_us INTEGER NOT NULL,"
	" ended_us INTEGER,"
	" exit_status INTEGER,"
	" project TEXT,"
	" command TEXT,"
	" tier TEXT,"
	" role TEXT,"
	" agent TEXT,"
	" task TEXT);"
	"CREATE INDEX sessions_parent ON sessions(parent) WHERE parent IS NOT NULL;"
	"CREATE INDEX sessions_started ON sessions(started_us);"
	"CREATE TABLE decisions ("
	" id INTEGER PRIMARY KEY,"
	" ts_us INTEGER NOT NULL,"
	" session TEXT,"
	" pid INTEGER NOT NULL,"
	" ppid INTEGER NOT NULL,"
	" kind TEXT NOT NULL,"
	" request TEXT,"
	" summary TEXT,"
	" decision TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),"
	" source TEXT NOT NULL,"
	" reason TEXT,"
	" decided_by TEXT,"
	" note TEXT,"
	" tool_call INTEGER,"
	" judge TEXT,"
	" latency_us INTEGER NOT NULL DEFAULT 0,"
	" by_person INTEGER GENERATED ALWAYS AS (source = 'user') VIRTUAL);"
	"CREATE INDEX decisions_ts ON decisions(ts_us);"
	"CREATE INDEX decisions_session_ts ON decisions(session, ts_us);"
	"CREATE INDEX decisions_source_ts ON decisions(source, ts_us);"
	"CREATE INDEX decisions_people_session ON decisions(session, ts_us) WHERE source = 'user';"
	"CREATE INDEX decisions_people_kind ON decisions(kind, ts_us) WHERE source = 'user';";

/*
 * v2: every index is one more B-tree page written (a WAL frame) by each
 * row's commit, and a row is committed before each decision is answered.
 * Two indexes served only cross-session listings (`warden audit --since`,
 * `--source`), which can scan: dropping them makes a row's commit about a
 * third cheaper (bench/store_rate measures it). Per-session listings and
 * people's decisions keep theirs.
 */
static const char schema_v2[] = "DROP INDEX decisions_ts;"
				"DROP INDEX decisions_source_ts;";

/*
 * v3: row ids handed out ahead of their rows. A writer with a journal
 * reserves a block of ids here before using them; every other insert takes
 * an id above both the rows and the blocks, so that no two writers can
 * give one id to two rows (docs/design.md, "The audit").
 */
static const char schema_v3[] = "CREATE TABLE id_blocks ("
				" last INTEGER PRIMARY KEY NOT NULL,"
				" first INTEGER NOT NULL);";

/* In order; a new version is one more entry. Never edit a shipped entry:
 * databases in the field have already run it. */
const struct sto_migration sto_migrations[] = {
	{1, schema_v1},
	{2, schema_v2},
	{3, schema_v3},
};
const size_t sto_migrations_count = WD_ARRAY_SIZE(sto_migrations);

int sto_schema_version(void)
{
	return sto_migrations[sto_migrations_count - 1].version;
}

/* ---- errors ------------------------------------------------------------ */

int sto_errno(int rc)
{
	switch (rc) {
	case SQLITE_CONSTRAINT_PRIMARYKEY:
	case SQLITE_CONSTRAINT_UNIQUE:
		return -EEXIST;
	case SQLITE_IOERR_NOMEM:
		return -ENOMEM;
	}
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_INTERRUPT:
		return -EINTR;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_TOOBIG:
		return -E2BIG;
	case SQLITE_NOLFS:
		return -EFBIG;
	case SQLITE_SCHEMA:
		return -EAGAIN;
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
	case SQLITE_MISUSE:
		return -EINVAL;
	case SQLITE_NOTFOUND:
		return -ENOENT;
	case SQLITE_IOERR:
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_PROTOCOL:
	case SQLITE_ERROR:
	default:
		return -EIO;
	}
}

int sto_fail(struct sto_db *db, int rc, const char *what, char **err)
{
	if (err)
		*err = wd_asprintf("audit database %s: %s: %s", db->path, what,
				   db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
	return sto_errno(rc);
}

/* A failure with no SQLite code behind it. Returns |neg_errno|. */
static int fail_plain(struct sto_db *db, int neg_errno, const char *what, char **err)
{
	if (err)
		*err = wd_asprintf("audit database %s: %s", db->path, what);
	return neg_errno;
}

static void set_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(char **err, const char *fmt, ...)
{
	if (!err)
		return;
	struct wd_sb sb = {0};
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	wd_sb_puts(&sb, line);
	*err = wd_sb_steal(&sb);
}

/* The message for a file SQLite cannot read as a database (page 1's header
 * or the schema damaged, or another kind of file): what to save, then what
 * to do, as the quick check of session start says it. */
static void damaged_err(char **err, const char *path, const char *why)
{
	if (err)
		*err = wd_asprintf(
			"%s is not an SQLite database or is damaged (%s): save what can be read "
			"with `sqlite3 %s .recover > saved.sql`, then move the file aside "
			"(warden then starts a new audit), or pass another --audit path",
			path, why, path);
}

/* ---- migrations -------------------------------------------------------- */

/* Prepares |sql| and steps it to its first row, leaving *st there for the
 * caller to read and finalize. On failure finalizes it, sets *err to
 * "<path>: cannot read <what>: <SQLite's message>" and returns -errno. */
static int one_row(sqlite3 *h, const char *sql, sqlite3_stmt **st, const char *path,
		   const char *what, char **err)
{
	int rc = sqlite3_prepare_v2(h, sql, -1, st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(*st);
	if (rc != SQLITE_ROW) {
		if (sto_is_damage(rc))
			damaged_err(err, path, sqlite3_errmsg(h));
		else
			set_err(err, "%s: cannot read %s: %s", path, what, sqlite3_errmsg(h));
		sqlite3_finalize(*st);
		*st = NULL;
		return sto_errno(rc) ? sto_errno(rc) : -EIO;
	}
	return 0;
}

/* Reads the schema version: 0 for a fresh (empty) database. -EPROTO when the
 * file has tables but no schema_version: some other program's database. */
static int read_version(sqlite3 *h, int *version, const char *path, char **err)
{
	static const char sql[] = "SELECT"
				  " (SELECT count(*) FROM sqlite_schema WHERE type = 'table'"
				  "   AND name = 'schema_version'),"
				  " (SELECT count(*) FROM sqlite_schema WHERE type = 'table'"
				  "   AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\')";
	sqlite3_stmt *st = NULL;
	int rc = one_row(h, sql, &st, path, "the schema", err);
	if (rc < 0)
		return rc;
	bool has_version = sqlite3_column_int(st, 0) > 0;
	int tables = sqlite3_column_int(st, 1);
	sqlite3_finalize(st);
	if (!has_version) {
		if (tables > 0) {
			set_err(err,
				"%s is an SQLite database but not a warden audit (no "
				"schema_version "
				"table): pass another --audit path",
				path);
			return -EPROTO;
		}
		*version = 0;
		return 0;
	}
	rc = one_row(h, "SELECT coalesce(max(version), 0) FROM schema_version", &st, path,
		     "schema_version", err);
	if (rc < 0)
		return rc;
	*version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return 0;
}

static int check_newer(int version, int latest, const char *path, char **err)
{
	if (version <= latest)
		return 0;
	set_err(err,
		"%s was written by a newer warden (audit schema version %d, this warden knows up "
		"to %d): upgrade warden, or pass another --audit path",
		path, version, latest);
	return -EPROTO;
}

/* Runs the steps after |from| inside the caller's transaction. */
static int apply_steps(sqlite3 *h, const struct sto_migration *m, size_t n, int from,
		       const char *path, char **err)
{
	char *msg = NULL;
	int rc = sqlite3_exec(h,
			      "CREATE TABLE IF NOT EXISTS schema_version ("
			      " version INTEGER PRIMARY KEY NOT NULL,"
			      " applied_us INTEGER NOT NULL)",
			      NULL, NULL, &msg);
	for (size_t i = 0; rc == SQLITE_OK && i < n; i++) {
		if (m[i].version <= from)
			continue;
		rc = sqlite3_exec(h, m[i].sql, NULL, NULL, &msg);
		if (rc != SQLITE_OK) {
			set_err(err, "%s: migration to audit schema version %d failed: %s", path,
				m[i].version, msg ? msg : sqlite3_errstr(rc));
			sqlite3_free(msg);
			return sto_errno(rc);
		}
		char ins[128];
		snprintf(ins, sizeof(ins),
			 "INSERT INTO schema_version (version, applied_us) VALUES (%d, %lld)",
			 m[i].version, (long long)wd_now_real_us());
		rc = sqlite3_exec(h, ins, NULL, NULL, &msg);
	}
	if (rc != SQLITE_OK) {
		set_err(err, "%s: cannot record the schema version: %s", path,
			msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return sto_errno(rc);
	}
	return 0;
}

int sto_migrate(sqlite3 *h, const struct sto_migration *m, size_t n, const char *path, char **err)
{
	for (size_t i = 0; i < n; i++) {
		if (m[i].version != (int)i + 1) {
			set_err(err, "%s: internal error: migration %zu has version %d", path, i,
				m[i].version);
			return -EINVAL;
		}
	}
	int latest = n ? m[n - 1].version : 0;
	int version = 0;
	int r = read_version(h, &version, path, err);
	if (r < 0)
		return r;
	r = check_newer(version, latest, path, err);
	if (r < 0 || version == latest)
		return r;

	/* The write lock first, then read the version again: another process
	 * may have migrated between our read and the lock. */
	int rc = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		set_err(err, "%s: cannot lock the database to migrate it: %s", path,
			sqlite3_errmsg(h));
		return sto_errno(rc);
	}
	r = read_version(h, &version, path, err);
	if (r == 0)
		r = check_newer(version, latest, path, err);
	if (r == 0 && version < latest)
		r = apply_steps(h, m, n, version, path, err);
	if (r == 0) {
		rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			set_err(err, "%s: cannot commit the migration: %s", path,
				sqlite3_errmsg(h));
			r = sto_errno(rc);
		}
	}
	if (r < 0 && !sqlite3_get_autocommit(h))
		sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

/* ---- opening ----------------------------------------------------------- */

/* Creates the parent directory of |path| (0700) when it is missing. */
static int make_parent(const char *path, char **err)
{
	wd_autofree char *dir = wd_strdup(path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) == 0 || errno == EEXIST)
		return 0;
	int e = errno;
	set_err(err, "cannot create the directory %s for the audit database: %s", dir, strerror(e));
	return -e;
}

/* Creates the file with mode 0600 so that SQLite (which copies the main
 * file's mode to -wal and -shm) never makes the audit world-readable. An
 * existing file keeps its mode. */
static int make_file(const char *path, char **err)
{
	/* Never through a symlink: a link planted in the audit's place would
	 * send warden's writes (perhaps as root) to any file. */
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			set_err(err,
				"%s is a symbolic link: the audit database must be a file of its "
				"own (remove the link, or pass the file itself with --audit)",
				path);
		else
			set_err(err, "cannot open the audit database %s: %s", path, strerror(e));
		return -e;
	}
	close(fd);
	return 0;
}

/* One-value PRAGMA; |want| (if not NULL) is the value it must report. */
static int pragma(sqlite3 *h, const char *sql, const char *want, const char *path, char **err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW && want) {
			const char *v = (const char *)sqlite3_column_text(st, 0);
			if (!v || strcasecmp(v, want) != 0) {
				set_err(err, "%s: \"%s\" answered %s, not %s", path, sql,
					v ? v : "nothing", want);
				sqlite3_finalize(st);
				return -ENOTSUP;
			}
		}
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		if (sto_is_damage(rc))
			damaged_err(err, path, sqlite3_errmsg(h));
		else
			set_err(err, "%s: \"%s\" failed: %s", path, sql, sqlite3_errmsg(h));
		sqlite3_finalize(st);
		return sto_errno(rc);
	}
	sqlite3_finalize(st);
	return 0;
}

static const char *const stmt_sql[STO_ST_MAX] = {
	[STO_ST_BEGIN] = "BEGIN IMMEDIATE",
	[STO_ST_COMMIT] = "COMMIT",
	[STO_ST_ROLLBACK] = "ROLLBACK",
	[STO_ST_INSERT] =
		"INSERT INTO decisions (id, ts_us, session, pid, ppid, kind, request, summary,"
		" decision, source, reason, decided_by, note, tool_call, judge, latency_us)"
		" VALUES ((SELECT max(coalesce((SELECT max(id) FROM decisions), 0),"
		" coalesce((SELECT max(last) FROM id_blocks), 0)) + 1),"
		" ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
	[STO_ST_SESSION_BEGIN] = "INSERT INTO sessions (id, parent, started_us, project, command,"
				 " tier, role, agent, task)"
				 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[STO_ST_SESSION_END] = "UPDATE sessions SET ended_us = ?2, exit_status = ?3 WHERE id = ?1",
};

static int prepare_all(struct sto_db *db, char **err)
{
	for (int i = 0; i < STO_ST_MAX; i++) {
		int rc = sqlite3_prepare_v3(db->h, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
					    &db->st[i], NULL);
		if (rc != SQLITE_OK) {
			set_err(err, "%s: cannot prepare a statement: %s", db->path,
				sqlite3_errmsg(db->h));
			return sto_errno(rc);
		}
	}
	return 0;
}

static int open_handle(struct sto_db *db, char **err)
{
	int rc = sqlite3_open_v2(db->path, &db->h,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
					 SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOFOLLOW,
				 NULL);
	if (rc != SQLITE_OK) {
		set_err(err, "cannot open the audit database %s: %s", db->path,
			db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
		int e = sqlite3_system_errno(db->h);
		return e ? -e : sto_errno(rc);
	}
	sqlite3_busy_timeout(db->h, STO_BUSY_TIMEOUT_MS);
	/* The file is warden's own, but a damaged or planted file must not run
	 * code: no triggers or views calling functions with side effects, no
	 * writes to the schema through SQL. */
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
	/* Switching a new file to WAL takes an exclusive lock, and SQLite
	 * answers SQLITE_BUSY at once, without the busy handler, when another
	 * connection holds a shared lock meanwhile (several processes opening a
	 * new audit together): so try again, within the busy timeout. */
	int r;
	for (int waited_ms = 0;; waited_ms += 5) {
		char *why = NULL;
		r = pragma(db->h, "PRAGMA journal_mode=WAL", "wal", db->path, &why);
		if (r != -EBUSY || waited_ms >= STO_BUSY_TIMEOUT_MS) {
			if (err)
				*err = why;
			else
				free(why);
			break;
		}
		free(why);
		usleep(5000);
	}
	if (r == 0)
		r = pragma(db->h, "PRAGMA synchronous=NORMAL", NULL, db->path, err);
	return r;
}

int sto_open(const char *path, struct sto_db **out, char **err)
{
	*out = NULL;
	if (err)
		*err = NULL;
	if (!path || !*path) {
		set_err(err, "no path given for the audit database");
		return -EINVAL;
	}
	int r = make_parent(path, err);
	if (r == 0)
		r = make_file(path, err);
	if (r < 0)
		return r;

	struct sto_db *db = wd_calloc(1, sizeof(*db));
	db->path = wd_strdup(path);
	db->jfd = -1;
	r = open_handle(db, err);
	if (r == 0)
		r = sto_migrate(db->h, sto_migrations, sto_migrations_count, path, err);
	if (r == 0)
		r = prepare_all(db, err);
	if (r == 0)
		r = sto_journal_open(db, err);
	if (r < 0) {
		sto_close(db);
		return r;
	}
	*out = db;
	return 0;
}

void sto_close(struct sto_db *db)
{
	if (!db)
		return;
	sto_journal_close(db);
	for (int i = 0; i < STO_ST_MAX; i++)
		sqlite3_finalize(db->st[i]);
	for (size_t i = 0; i < WD_ARRAY_SIZE(db->query); i++)
		sqlite3_finalize(db->query[i]);
	sqlite3_close(db->h);
	free(db->path);
	free(db);
}

/* ---- statements -------------------------------------------------------- */

/* Steps a cached statement that returns no row, then resets it. */
static int run(struct sto_db *db, enum sto_stmt_id id, const char *what, char **err)
{
	sqlite3_stmt *st = db->st[id];
	int rc = sqlite3_step(st);
	int r = rc == SQLITE_DONE ? 0 : sto_fail(db, rc, what, err);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE && r == 0)
		r = -EIO; /* a row from a statement that returns none */
	return r;
}

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static int begin(struct sto_db *db, char **err)
{
	return run(db, STO_ST_BEGIN, "cannot start a transaction", err);
}

static void rollback(struct sto_db *db);

static int commit(struct sto_db *db, char **err)
{
	int r = run(db, STO_ST_COMMIT, "cannot commit", err);
	if (r < 0)
		rollback(db);
	return r;
}

/* Rolls back after a failure; the caller reports the failure that led
 * here, not this one. */
static void rollback(struct sto_db *db)
{
	if (!sqlite3_get_autocommit(db->h))
		run(db, STO_ST_ROLLBACK, "cannot roll back", NULL);
}

/* ---- sessions ---------------------------------------------------------- */

int sto_session_begin(struct sto_db *db, const struct sto_session *s, char **err)
{
	if (!s || !s->id || !*s->id)
		return fail_plain(db, -EINVAL, "a session needs an id", err);
	sqlite3_stmt *st = db->st[STO_ST_SESSION_BEGIN];
	bind_str(st, 1, s->id);
	bind_str(st, 2, s->parent);
	sqlite3_bind_int64(st, 3, s->started_us);
	bind_str(st, 4, s->project);
	bind_str(st, 5, s->command);
	bind_str(st, 6, s->tier);
	bind_str(st, 7, s->role);
	bind_str(st, 8, s->agent);
	bind_str(st, 9, s->task);
	return run(db, STO_ST_SESSION_BEGIN, "cannot record the session", err);
}

int sto_session_end(struct sto_db *db, const char *id, int64_t ended_us, int exit_status,
		    char **err)
{
	if (!id)
		return fail_plain(db, -EINVAL, "a session needs an id", err);
	sto_journal_sync(db);
	sqlite3_stmt *st = db->st[STO_ST_SESSION_END];
	bind_str(st, 1, id);
	sqlite3_bind_int64(st, 2, ended_us);
	sqlite3_bind_int(st, 3, exit_status);
	int r = run(db, STO_ST_SESSION_END, "cannot record the end of the session", err);
	if (r == 0 && sqlite3_changes(db->h) == 0)
		return fail_plain(db, -ENOENT, "no such session", err);
	return r;
}

/* ---- appending --------------------------------------------------------- */

/* The columns the audit cannot do without. A row the store would have to
 * guess about is refused: the caller then denies (fail closed). */
int sto_row_check(struct sto_db *db, const struct sto_row *row, char **err)
{
	if (!row->kind || !*row->kind)
		return fail_plain(db, -EINVAL, "a row needs a kind", err);
	if (!row->source || !*row->source)
		return fail_plain(db, -EINVAL, "a row needs a source", err);
	if (!row->decision || (strcmp(row->decision, "allow") && strcmp(row->decision, "deny")))
		return fail_plain(db, -EINVAL, "a row's decision is \"allow\" or \"deny\"", err);
	return 0;
}

/* Inserts |row| inside the caller's transaction and sets row->id. */
static int insert(struct sto_db *db, struct sto_row *row, char **err)
{
	int r = sto_row_check(db, row, err);
	if (r < 0)
		return r;
	sqlite3_stmt *st = db->st[STO_ST_INSERT];
	sqlite3_bind_int64(st, 1, row->ts_us);
	bind_str(st, 2, row->session);
	sqlite3_bind_int(st, 3, row->pid);
	sqlite3_bind_int(st, 4, row->ppid);
	bind_str(st, 5, row->kind);
	bind_str(st, 6, row->request);
	bind_str(st, 7, row->summary);
	bind_str(st, 8, row->decision);
	bind_str(st, 9, row->source);
	bind_str(st, 10, row->reason);
	bind_str(st, 11, row->decided_by);
	bind_str(st, 12, row->note);
	if (row->tool_call)
		sqlite3_bind_int64(st, 13, row->tool_call);
	else
		sqlite3_bind_null(st, 13);
	bind_str(st, 14, row->judge);
	sqlite3_bind_int64(st, 15, row->latency_us);
	r = run(db, STO_ST_INSERT, "cannot append a row", err);
	if (r == 0)
		row->id = sqlite3_last_insert_rowid(db->h);
	return r;
}

int sto_append(struct sto_db *db, struct sto_row *row, char **err)
{
	return sto_append_batch(db, row, 1, err);
}

int sto_append_batch(struct sto_db *db, struct sto_row *rows, size_t n, char **err)
{
	if (n == 0)
		return 0;
	if (db->journaling)
		return sto_journal_append(db, rows, n, err);
	int r = begin(db, err);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = insert(db, &rows[i], err);
	if (r == 0)
		r = commit(db, err);
	else
		rollback(db);
	if (r < 0) {
		/* None was written: no row keeps an id. */
		for (size_t i = 0; i < n; i++)
			rows[i].id = 0;
	}
	return r;
}

/* ---- queries ----------------------------------------------------------- */

static const char select_cols[] =
	"SELECT id, ts_us, session, pid, ppid, kind, request, summary, decision, source,"
	" reason, decided_by, note, tool_call, judge, latency_us,"
	" json_valid(request), json_valid(judge) FROM decisions";

static unsigned filter_mask(const struct sto_filter *f)
{
	unsigned m = 0;
	if (f->session)
		m |= STO_Q_SESSION;
	if (f->since_us)
		m |= STO_Q_SINCE;
	if (f->source)
		m |= STO_Q_SOURCE;
	if (f->kind)
		m |= STO_Q_KIND;
	if (f->newest_first)
		m |= STO_Q_NEWEST;
	if (f->decision)
		m |= STO_Q_DECISION;
	if (f->limit)
		m |= STO_Q_LIMIT;
	return m;
}

/* The conditions of the filters in |m|, each " AND ...". */
static void filter_conds(struct wd_sb *sb, unsigned m)
{
	if (m & STO_Q_SESSION)
		wd_sb_puts(sb, " AND session = :session");
	if (m & STO_Q_SINCE)
		wd_sb_puts(sb, " AND ts_us >= :since");
	if (m & STO_Q_SOURCE)
		wd_sb_puts(sb, " AND source = :source");
	if (m & STO_Q_KIND)
		wd_sb_puts(sb, " AND kind = :kind");
	if (m & STO_Q_DECISION)
		wd_sb_puts(sb, " AND decision = :decision");
}

char *sto_filter_sql(const struct sto_filter *f)
{
	struct wd_sb sb = {0};
	filter_conds(&sb, filter_mask(f));
	return wd_sb_steal(&sb);
}

/* The SELECT for one filter combination. Parameters are named so that each
 * variant binds the same way. Caller frees. */
static char *query_sql(unsigned m)
{
	struct wd_sb sb = {0};
	/* A limit keeps the latest rows: taken newest first, then put back
	 * in the order asked for. */
	bool latest = (m & STO_Q_LIMIT) && !(m & STO_Q_NEWEST);
	if (latest)
		wd_sb_puts(&sb, "SELECT * FROM (");
	wd_sb_puts(&sb, select_cols);
	wd_sb_puts(&sb, " WHERE 1");
	filter_conds(&sb, m);
	wd_sb_puts(&sb, (m & (STO_Q_NEWEST | STO_Q_LIMIT)) ? " ORDER BY ts_us DESC, id DESC"
							   : " ORDER BY ts_us ASC, id ASC");
	wd_sb_puts(&sb, " LIMIT :limit");
	if (latest)
		wd_sb_puts(&sb, ") ORDER BY ts_us ASC, id ASC");
	return wd_sb_steal(&sb);
}

/* Returns the statement for |m|: the cached one, or a fresh one when the
 * cached one is running (a callback that queries again). *fresh says the
 * caller finalizes it. */
static int query_stmt(struct sto_db *db, unsigned m, sqlite3_stmt **out, bool *fresh, char **err)
{
	*fresh = false;
	if (db->query[m] && !sqlite3_stmt_busy(db->query[m])) {
		*out = db->query[m];
		return 0;
	}
	wd_autofree char *sql = query_sql(m);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(db, rc, "cannot prepare a query", err);
	if (db->query[m]) {
		*fresh = true;
	} else {
		db->query[m] = st;
	}
	*out = st;
	return 0;
}

static void bind_name(sqlite3_stmt *st, const char *name, const char *s)
{
	int i = sqlite3_bind_parameter_index(st, name);
	if (i > 0)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

void sto_bind_filter(sqlite3_stmt *st, const struct sto_filter *f)
{
	bind_name(st, ":session", f->session);
	bind_name(st, ":source", f->source);
	bind_name(st, ":kind", f->kind);
	bind_name(st, ":decision", f->decision);
	int i = sqlite3_bind_parameter_index(st, ":since");
	if (i > 0)
		sqlite3_bind_int64(st, i, f->since_us);
}

void sto_row_from_stmt(sqlite3_stmt *st, struct sto_row *row)
{
	memset(row, 0, sizeof(*row));
	row->id = sqlite3_column_int64(st, STO_COL_ID);
	row->ts_us = sqlite3_column_int64(st, STO_COL_TS);
	row->session = (const char *)sqlite3_column_text(st, STO_COL_SESSION);
	row->pid = sqlite3_column_int(st, STO_COL_PID);
	row->ppid = sqlite3_column_int(st, STO_COL_PPID);
	row->kind = (const char *)sqlite3_column_text(st, STO_COL_KIND);
	row->request = (const char *)sqlite3_column_text(st, STO_COL_REQUEST);
	row->summary = (const char *)sqlite3_column_text(st, STO_COL_SUMMARY);
	row->decision = (const char *)sqlite3_column_text(st, STO_COL_DECISION);
	row->source = (const char *)sqlite3_column_text(st, STO_COL_SOURCE);
	row->reason = (const char *)sqlite3_column_text(st, STO_COL_REASON);
	row->decided_by = (const char *)sqlite3_column_text(st, STO_COL_DECIDED_BY);
	row->note = (const char *)sqlite3_column_text(st, STO_COL_NOTE);
	row->tool_call = sqlite3_column_int64(st, STO_COL_TOOL_CALL); /* NULL reads 0 */
	row->judge = (const char *)sqlite3_column_text(st, STO_COL_JUDGE);
	row->latency_us = sqlite3_column_int64(st, STO_COL_LATENCY);
}

int sto_query_stmt(struct sto_db *db, const struct sto_filter *f, sto_stmt_cb cb, void *arg,
		   char **err)
{
	static const struct sto_filter all = {0};
	if (!f)
		f = &all;
	sto_journal_sync(db);
	unsigned m = filter_mask(f);
	sqlite3_stmt *st = NULL;
	bool fresh = false;
	int r = query_stmt(db, m, &st, &fresh, err);
	if (r < 0)
		return r;
	sto_bind_filter(st, f);
	sqlite3_int64 limit =
		f->limit == 0 || f->limit > (size_t)INT64_MAX ? -1 : (sqlite3_int64)f->limit;
	sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":limit"), limit);

	int rc;
	struct sto_key last = {0};
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct sto_row row;
		sto_row_from_stmt(st, &row);
		last = (struct sto_key){true, row.ts_us, row.id};
		r = cb(st, &row, arg);
		if (r != 0)
			break;
	}
	/* A damaged page: every row around it can still be read, and the
	 * salvage says what could not be. */
	bool damaged = r == 0 && rc != SQLITE_DONE && sto_is_damage(rc);
	if (r == 0 && rc != SQLITE_DONE)
		r = sto_fail(db, rc, "cannot read rows", damaged ? NULL : err);
	if (fresh) {
		sqlite3_finalize(st);
	} else {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
	if (damaged)
		r = sto_salvage(db, f, cb, arg, &last, err);
	return r;
}

struct plain_cb {
	sto_row_cb cb;
	void *arg;
};

static int call_plain(sqlite3_stmt *st, const struct sto_row *row, void *arg)
{
	(void)st;
	struct plain_cb *p = arg;
	return p->cb(row, p->arg);
}

int sto_query(struct sto_db *db, const struct sto_filter *f, sto_row_cb cb, void *arg, char **err)
{
	struct plain_cb p = {cb, arg};
	return sto_query_stmt(db, f, call_plain, &p, err);
}

/* ---- checking ---------------------------------------------------------- */

int sto_check(struct sto_db *db, char **err)
{
	sto_journal_sync(db);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->h, "PRAGMA integrity_check", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(db, rc, "cannot check integrity", err);
	struct wd_sb sb = {0};
	bool ok = false;
	int rows = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);
		if (rows++ == 0 && v && strcmp(v, "ok") == 0)
			ok = true;
		else if (sb.len < STO_CHECK_MAX)
			wd_sb_printf(&sb, "%s%s", sb.len ? "; " : "", v ? v : "?");
	}
	int r = 0;
	if (rc != SQLITE_DONE) {
		r = sto_fail(db, rc, "is damaged, the integrity check stopped", err);
		r = r ? r : -EIO;
	} else if (!ok || rows != 1) {
		if (err)
			*err = wd_asprintf("audit database %s is damaged: %s", db->path,
					   sb.buf ? sb.buf : "integrity_check gave no answer");
		r = -EIO;
	}
	sqlite3_finalize(st);
	wd_sb_free(&sb);
	return r;
}
