/*
 * journal.c: the audit's journal (AUDIT-wdj, next to the database). While a
 * `warden run` holds it, sto_append() records each row with one write() to
 * the journal and returns; sto_flush() later moves the records into SQLite
 * in one transaction and empties the journal. Every sto_open() first moves
 * what a killed warden left there. Row ids come from blocks reserved in
 * SQLite (id_blocks), so no two writers can hand out the same id.
 * docs/design.md, section "The audit", explains why a crash loses nothing.
 */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common.h"

#define JR_MAGIC 0x314a4457u /* "WDJ1" */
#define JR_HEAD	 12	     /* magic, payload length, checksum: three u32 */
#define JR_NSTR	 10
#define JR_NULL	 0xffffffffu
/* Ids reserved at a time: one SQLite commit per this many rows. */
#define JR_BLOCK 1024
/* A flush is due with this many records waiting, or this long after the
 * first of them. */
#define JR_FLUSH_ROWS 256
#define JR_FLUSH_US   20000
/* After a failed flush, the loop tries again after this long (an append
 * tries at once). */
#define JR_RETRY_US 1000000
/* How long `warden run` waits for a reader's replay to let go of the
 * journal before it writes SQLite directly. */
#define JR_LOCK_WAIT_MS 2000

/* ---- records ------------------------------------------------------------ */

static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32(const void *p, size_t n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, crc_init);
	const unsigned char *b = p;
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++)
		c = crc_table[(c ^ b[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static void put(struct wd_sb *sb, const void *p, size_t n)
{
	wd_sb_add(sb, p, n);
}

static void put_str(struct wd_sb *sb, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : JR_NULL;
	put(sb, &n, sizeof(n));
	if (s)
		put(sb, s, n);
}

/*
 * A record: magic, payload length, CRC-32 of the payload, then the payload:
 * id, ts_us, tool_call, latency_us (int64), pid, ppid (int32) and the ten
 * strings, each a u32 length (JR_NULL for NULL) and its bytes. Host byte
 * order: the journal never leaves the machine that wrote it.
 */
static void encode(struct wd_sb *sb, const struct sto_row *row)
{
	size_t head = sb->len;
	uint32_t h[3] = {JR_MAGIC, 0, 0};
	put(sb, h, sizeof(h));
	size_t start = sb->len;
	int64_t n64[4] = {row->id, row->ts_us, row->tool_call, row->latency_us};
	int32_t n32[2] = {row->pid, row->ppid};
	put(sb, n64, sizeof(n64));
	put(sb, n32, sizeof(n32));
	const char *s[JR_NSTR] = {row->session,	 row->kind,   row->request, row->summary,
				  row->decision, row->source, row->reason,  row->decided_by,
				  row->note,	 row->judge};
	for (int i = 0; i < JR_NSTR; i++)
		put_str(sb, s[i]);
	h[1] = (uint32_t)(sb->len - start);
	h[2] = crc32(sb->buf + start, sb->len - start);
	memcpy(sb->buf + head, h, sizeof(h));
}

/* One decoded record: the row's strings point into the journal's bytes and
 * are not NUL-terminated, so they travel with their lengths. */
struct jrec {
	struct sto_row row;
	const char *s[JR_NSTR];
	uint32_t len[JR_NSTR];
};

/* Decodes the record at |p| (|n| bytes available). Returns its size, or 0
 * when it is incomplete or damaged: a torn tail, where reading stops. */
static size_t decode(const char *p, size_t n, struct jrec *r)
{
	uint32_t h[3];
	if (n < JR_HEAD)
		return 0;
	memcpy(h, p, sizeof(h));
	if (h[0] != JR_MAGIC || h[1] > n - JR_HEAD || crc32(p + JR_HEAD, h[1]) != h[2])
		return 0;
	const char *q = p + JR_HEAD, *end = q + h[1];
	int64_t n64[4];
	int32_t n32[2];
	if ((size_t)(end - q) < sizeof(n64) + sizeof(n32))
		return 0;
	memcpy(n64, q, sizeof(n64));
	q += sizeof(n64);
	memcpy(n32, q, sizeof(n32));
	q += sizeof(n32);
	memset(r, 0, sizeof(*r));
	r->row.id = n64[0];
	r->row.ts_us = n64[1];
	r->row.tool_call = n64[2];
	r->row.latency_us = n64[3];
	r->row.pid = n32[0];
	r->row.ppid = n32[1];
	for (int i = 0; i < JR_NSTR; i++) {
		uint32_t len;
		if ((size_t)(end - q) < sizeof(len))
			return 0;
		memcpy(&len, q, sizeof(len));
		q += sizeof(len);
		if (len == JR_NULL)
			continue;
		if ((size_t)(end - q) < len)
			return 0;
		r->s[i] = q;
		r->len[i] = len;
		q += len;
	}
	if (q != end || r->row.id <= 0)
		return 0;
	return JR_HEAD + h[1];
}

/* ---- moving records into SQLite ------------------------------------------ */

static const char insert_sql[] =
	"INSERT OR IGNORE INTO decisions (id, ts_us, session, pid, ppid, kind, request,"
	" summary, decision, source, reason, decided_by, note, tool_call, judge, latency_us)"
	" VALUES (?16, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";

/* Column of each string of struct jrec, in its order. */
static const int str_col[JR_NSTR] = {2, 5, 6, 7, 8, 9, 10, 11, 12, 14};

static int insert_rec(struct sto_db *db, sqlite3_stmt *st, const struct jrec *r, char **err)
{
	sqlite3_bind_int64(st, 16, r->row.id);
	sqlite3_bind_int64(st, 1, r->row.ts_us);
	sqlite3_bind_int(st, 3, r->row.pid);
	sqlite3_bind_int(st, 4, r->row.ppid);
	if (r->row.tool_call)
		sqlite3_bind_int64(st, 13, r->row.tool_call);
	else
		sqlite3_bind_null(st, 13);
	sqlite3_bind_int64(st, 15, r->row.latency_us);
	for (int i = 0; i < JR_NSTR; i++) {
		if (r->s[i])
			sqlite3_bind_text(st, str_col[i], r->s[i], (int)r->len[i], SQLITE_STATIC);
		else
			sqlite3_bind_null(st, str_col[i]);
	}
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : sto_fail(db, rc, "cannot move a journal record", err);
}

/* Reads the journal's bytes from |from| to its end into *buf (caller
 * frees). */
static int read_from(struct sto_db *db, off_t from, char **buf, size_t *n, char **err)
{
	struct stat st;
	*buf = NULL;
	*n = 0;
	if (fstat(db->jfd, &st) < 0)
		goto fail;
	if (st.st_size <= from)
		return 0;
	size_t want = (size_t)(st.st_size - from);
	char *b = wd_malloc(want);
	size_t got = 0;
	while (got < want) {
		ssize_t k = pread(db->jfd, b + got, want - got, from + (off_t)got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			free(b);
			goto fail;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	*buf = b;
	*n = got;
	return 0;
fail:;
	int e = errno;
	if (err)
		*err = wd_asprintf("audit journal %s: cannot read it: %s", db->jpath, strerror(e));
	return -e;
}

/*
 * Inserts every whole record from |from| on (INSERT OR IGNORE by id: a
 * record already in SQLite, because a crash came between a commit and the
 * journal's truncation, is not added twice) in one transaction. Stops at
 * the first torn or damaged record. *valid receives the offset after the
 * last whole record.
 */
static int move(struct sto_db *db, off_t from, off_t *valid, char **err)
{
	char *buf = NULL;
	size_t n = 0;
	*valid = from;
	int r = read_from(db, from, &buf, &n, err);
	if (r < 0 || n == 0)
		return r;
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v3(db->h, insert_sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
	if (rc != SQLITE_OK) {
		free(buf);
		return sto_fail(db, rc, "cannot prepare the journal's insert", err);
	}
	rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		r = sto_fail(db, rc, "cannot start a transaction for the journal", err);
	size_t off = 0;
	while (r == 0 && off < n) {
		struct jrec rec;
		size_t k = decode(buf + off, n - off, &rec);
		if (k == 0)
			break;
		r = insert_rec(db, st, &rec, err);
		if (r == 0)
			off += k;
	}
	if (r == 0) {
		rc = sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			r = sto_fail(db, rc, "cannot commit the journal's records", err);
	}
	if (r < 0 && !sqlite3_get_autocommit(db->h))
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_finalize(st);
	free(buf);
	if (r == 0)
		*valid = from + (off_t)off;
	return r;
}

/* With the journal's lock held: moves every record and empties the journal
 * (a torn tail, whose exec was never answered, goes with it). */
static int replay_locked(struct sto_db *db, char **err)
{
	off_t valid = 0;
	int r = move(db, 0, &valid, err);
	if (r == 0 && ftruncate(db->jfd, 0) < 0)
		r = -errno;
	return r;
}

/* ---- opening ------------------------------------------------------------- */

int sto_journal_open(struct sto_db *db, char **err)
{
	db->jfd = -1;
	db->jpath = wd_asprintf("%s%s", db->path, STO_JOURNAL_SUFFIX);
	/* Created like the database (0600, never through a symlink) so that
	 * it is exactly as private as the rows it holds. */
	int fd = open(db->jpath, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		fd = -1;
	}
	if (fd < 0) {
		int e = errno;
		if (err)
			*err = wd_asprintf("audit journal %s: cannot open it: %s (it must be a "
					   "regular file next to the audit database)",
					   db->jpath, strerror(e));
		return -e;
	}
	db->jfd = fd;
	/* No writer holds it: move and empty. A live `warden run` holds it:
	 * move its records (OR IGNORE, as it does) and leave the file to it. */
	int r;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		r = replay_locked(db, err);
		flock(fd, LOCK_UN);
	} else {
		off_t valid;
		r = move(db, 0, &valid, err);
	}
	return r;
}

/* ---- ids ----------------------------------------------------------------- */

static int reserve(struct sto_db *db, char **err)
{
	static const char next_sql[] = "SELECT max(coalesce((SELECT max(id) FROM decisions), 0),"
				       " coalesce((SELECT max(last) FROM id_blocks), 0))";
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db->h, next_sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	int64_t first = 0;
	if (rc == SQLITE_ROW) {
		first = sqlite3_column_int64(st, 0) + 1;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK) {
		char sql[128];
		snprintf(sql, sizeof(sql),
			 "INSERT INTO id_blocks (last, first) VALUES (%lld, %lld)",
			 (long long)(first + JR_BLOCK - 1), (long long)first);
		rc = sqlite3_exec(db->h, sql, NULL, NULL, NULL);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		int r = sto_fail(db, rc, "cannot reserve row ids", err);
		if (!sqlite3_get_autocommit(db->h))
			sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		return r ? r : -EIO;
	}
	db->next_id = first;
	db->block_first = first;
	db->block_last = first + JR_BLOCK - 1;
	return 0;
}

/* Gives back the ids of the last block that were not used, when no writer
 * reserved after it, so that a session's ids stay contiguous. */
static void release_tail(struct sto_db *db)
{
	if (db->block_last == 0 || db->next_id > db->block_last)
		return;
	char sql[256];
	if (db->next_id == db->block_first)
		snprintf(sql, sizeof(sql), "DELETE FROM id_blocks WHERE last = %lld",
			 (long long)db->block_last);
	else
		snprintf(sql, sizeof(sql),
			 "UPDATE id_blocks SET last = %lld WHERE last = %lld AND last = (SELECT "
			 "max(last) FROM id_blocks)",
			 (long long)(db->next_id - 1), (long long)db->block_last);
	/* The DELETE only when it is the last block too. */
	if (db->next_id == db->block_first)
		snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql),
			 " AND last = (SELECT max(last) FROM id_blocks)");
	sqlite3_exec(db->h, sql, NULL, NULL, NULL);
	db->block_last = 0;
}

/* ---- the writer ---------------------------------------------------------- */

int sto_journal_begin(struct sto_db *db, char **err)
{
	if (db->journaling)
		return 0;
	if (db->jfd < 0)
		return -EBADF;
	/* A reader's replay holds the lock for a moment; another `warden
	 * run` holds it for its whole session. */
	int waited = 0;
	while (flock(db->jfd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (waited >= JR_LOCK_WAIT_MS)
			return -EBUSY;
		usleep(10000);
		waited += 10;
	}
	int r = replay_locked(db, err);
	if (r == 0)
		r = reserve(db, err);
	if (r < 0) {
		flock(db->jfd, LOCK_UN);
		return r;
	}
	db->jend = db->jflushed = 0;
	db->jpending = 0;
	db->journaling = true;
	return 0;
}

int sto_journal_append(struct sto_db *db, struct sto_row *rows, size_t n, char **err)
{
	if (db->jbroken) {
		if (err)
			*err = wd_asprintf("audit journal %s: a failed write could not be undone",
					   db->jpath);
		return -EIO;
	}
	for (size_t i = 0; i < n; i++) {
		int r = sto_row_check(db, &rows[i], err);
		if (r < 0)
			return r;
	}
	/* SQLite refused the last batch (a full disk, a damaged file): the
	 * journal would only grow. It must take the records first, or this
	 * row is refused too, as it was without a journal. */
	int r = 0;
	if (db->jretry_us) {
		r = sto_flush(db, err);
		if (r < 0)
			goto refuse;
	}
	/* A full filesystem: the record might still fit in the journal's
	 * last page, but SQLite could not take it. Refuse now, as a commit
	 * would have, rather than record what cannot be indexed. */
	struct statfs sfs;
	if (fstatfs(db->jfd, &sfs) == 0 && sfs.f_bavail == 0 && sfs.f_blocks > 0) {
		r = -ENOSPC;
		if (err)
			*err = wd_asprintf("audit journal %s: cannot append a row: %s", db->jpath,
					   strerror(ENOSPC));
		goto refuse;
	}
	db->jbuf.len = 0;
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (db->next_id > db->block_last)
			r = reserve(db, err);
		if (r == 0) {
			rows[i].id = db->next_id++;
			encode(&db->jbuf, &rows[i]);
		}
	}
	ssize_t k = -1;
	if (r == 0) {
		/* One write() to an O_APPEND file: once it returns, the record
		 * is in the page cache and outlives warden. */
		do
			k = write(db->jfd, db->jbuf.buf, db->jbuf.len);
		while (k < 0 && errno == EINTR);
		if (k == (ssize_t)db->jbuf.len) {
			db->jend += k;
			if (db->jpending++ == 0)
				db->jfirst_us = wd_now_mono_ns() / 1000;
			return 0;
		}
		r = k < 0 ? -errno : -EIO;
		if (err)
			*err = wd_asprintf("audit journal %s: cannot append a row: %s", db->jpath,
					   k < 0 ? strerror(-r) : "short write");
		/* A part of a record would hide every later one from the
		 * replay: cut it off (this process is the only writer). */
		if (k > 0 && ftruncate(db->jfd, db->jend) < 0)
			db->jbroken = true;
	}
refuse:
	for (size_t i = 0; i < n; i++)
		rows[i].id = 0;
	return r;
}

int sto_flush(struct sto_db *db, char **err)
{
	if (!db->journaling || db->jpending == 0)
		return 0;
	off_t valid = db->jflushed;
	int r = move(db, db->jflushed, &valid, err);
	if (r < 0) {
		db->jretry_us = wd_now_mono_ns() / 1000 + JR_RETRY_US;
		return r;
	}
	db->jretry_us = 0;
	db->jflushed = valid;
	db->jpending = 0;
	/* Everything appended is committed: empty the journal. A crash
	 * before the truncation leaves records that the next open inserts
	 * OR IGNOREs by id: never twice. */
	if (db->jflushed == db->jend && ftruncate(db->jfd, 0) == 0)
		db->jend = db->jflushed = 0;
	return 0;
}

int sto_flush_wait_ms(const struct sto_db *db)
{
	if (!db || !db->journaling || db->jpending == 0 || db->jretry_us)
		return -1;
	int64_t now = wd_now_mono_ns() / 1000;
	if (db->jpending >= JR_FLUSH_ROWS || now - db->jfirst_us >= JR_FLUSH_US)
		return 0;
	return (int)((db->jfirst_us + JR_FLUSH_US - now + 999) / 1000);
}

int sto_flush_retry(struct sto_db *db, char **err)
{
	if (!db->journaling || !db->jretry_us || wd_now_mono_ns() / 1000 < db->jretry_us)
		return 0;
	return sto_flush(db, err);
}

void sto_journal_sync(struct sto_db *db)
{
	if (db->journaling && db->jpending)
		sto_flush(db, NULL);
}

void sto_journal_close(struct sto_db *db)
{
	if (db->journaling && sto_flush(db, NULL) == 0)
		release_tail(db);
	db->journaling = false;
	wd_close(&db->jfd);
	wd_sb_free(&db->jbuf);
	free(db->jpath);
	db->jpath = NULL;
}
