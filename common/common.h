/*
 * common: the small pieces every warden module shares: logging to stderr,
 * checked allocation, cleanup attributes, fd helpers, a growable string
 * buffer and monotonic/real clocks.
 *
 * It knows nothing about requests, policy or the sandbox. Nothing here
 * exits, except that allocation aborts on out-of-memory (docs/style.md).
 */
#ifndef WARDEN_COMMON_H
#define WARDEN_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define WD_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- logging ---------------------------------------------------------- */

enum wd_log_level { WD_LOG_ERROR, WD_LOG_WARN, WD_LOG_INFO, WD_LOG_DEBUG };

/* Messages at or below |level| are printed ("warden: ..." on stderr). */
void wd_log_set_level(enum wd_log_level level);
enum wd_log_level wd_log_get_level(void);
void wd_log(enum wd_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define wd_err(...)   wd_log(WD_LOG_ERROR, __VA_ARGS__)
#define wd_warn(...)  wd_log(WD_LOG_WARN, __VA_ARGS__)
#define wd_info(...)  wd_log(WD_LOG_INFO, __VA_ARGS__)
#define wd_debug(...) wd_log(WD_LOG_DEBUG, __VA_ARGS__)

/* ---- allocation ------------------------------------------------------- */

/* These abort on out-of-memory: a supervisor that cannot allocate cannot
 * decide, and dying kills the agent tree (fail closed). */
void *wd_malloc(size_t n);
void *wd_calloc(size_t n, size_t size);
void *wd_realloc(void *p, size_t n);
char *wd_strdup(const char *s);
char *wd_strndup(const char *s, size_t n);
char *wd_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *wd_vasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* ---- cleanup attributes (bubblewrap's utils.h idiom) ------------------- */

static inline void wd_freep(void *p)
{
	free(*(void **)p);
}
static inline void wd_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define wd_autofree  __attribute__((cleanup(wd_freep)))
#define wd_autoclose __attribute__((cleanup(wd_closep)))

/* Returns *pp and sets *pp to NULL: hands ownership out of a cleanup scope. */
static inline void *wd_steal_pointer(void *pp)
{
	void **p = pp;
	void *v = *p;
	*p = NULL;
	return v;
}
static inline int wd_steal_fd(int *fd)
{
	int v = *fd;
	*fd = -1;
	return v;
}

/* ---- fds -------------------------------------------------------------- */

/* Closes *fd if it is open and sets it to -1. Keeps errno. */
void wd_close(int *fd);
/* Writes all |n| bytes, retrying on EINTR and short writes. 0 or -errno. */
int wd_write_all(int fd, const void *buf, size_t n);
/* Reads up to |n| bytes until EOF. Returns bytes read or -errno. */
ssize_t wd_read_all(int fd, void *buf, size_t n);
/* Reads a whole file into a NUL-terminated buffer of at most |max| bytes.
 * Caller frees *out. 0, -EFBIG when larger, or -errno. */
int wd_read_file(const char *path, size_t max, char **out, size_t *len);
/* The same for a /proc file whose read(2) returns everything up to the count
 * asked in one call (/proc/PID/cmdline, environ and status do): one read
 * of |max| + 1 bytes instead of reading to EOF, which costs a second
 * system call on every decision. A short read is the end. */
int wd_read_proc(const char *path, size_t max, char **out, size_t *len);
/* The same into |buf| (room for |max| + 1 bytes; NUL-terminated), for a
 * caller on a hot path that need not allocate. The length, or -errno
 * (-EFBIG when the file has more than |max| bytes). */
ssize_t wd_read_proc_into(const char *path, char *buf, size_t max);
/* Sets or clears O_NONBLOCK / FD_CLOEXEC. 0 or -errno. */
int wd_set_nonblock(int fd, bool on);
int wd_set_cloexec(int fd, bool on);

/* ---- strings ---------------------------------------------------------- */

/* A growable NUL-terminated buffer. Zero-initialise; wd_sb_free() frees. */
struct wd_sb {
	char *buf;
	size_t len;
	size_t cap;
};
void wd_sb_add(struct wd_sb *sb, const char *s, size_t n);
void wd_sb_puts(struct wd_sb *sb, const char *s);
void wd_sb_putc(struct wd_sb *sb, char c);
void wd_sb_printf(struct wd_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the buffer (never NULL) and resets |sb|. Caller frees. */
char *wd_sb_steal(struct wd_sb *sb);
void wd_sb_free(struct wd_sb *sb);

/* Appends |s| quoted for a POSIX shell when it needs quoting, so that a
 * command line shown to a person reads back as the argv it came from.
 * Control bytes are shown as \xNN so that a terminal is never driven by
 * them. */
void wd_sb_shell_quote(struct wd_sb *sb, const char *s);
/* A copy of |s| safe to show on a terminal or in a line protocol: C0
 * controls (tab and newline included) and DEL become visible \xNN text,
 * the C1 and the bidirectional controls \uNNNN, and bytes that are not
 * UTF-8 \xNN, so that a file name or argv chosen by
 * the agent can neither drive the approver's terminal nor forge a line or
 * a column. Caller frees. */
char *wd_sanitize(const char *s);

/* Appends |s| as one CSV field (RFC 4180: quoted when it holds a comma, a
 * quote or a line break, quotes doubled; NULL is an empty field), then ","
 * or, when |last|, the record's "\r\n". */
void wd_sb_csv_field(struct wd_sb *sb, const char *s, bool last);
/* Decodes one UTF-8 sequence at |s| (|n| bytes left). Returns its length and
 * sets *cp, or 0 when the bytes there are not valid UTF-8 (a stray
 * continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut
 * short). */
size_t wd_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);
/* Whether code point |cp| must not reach a terminal as it is: C0 and C1
 * controls, DEL, and the bidirectional controls that make text read in
 * another order than it runs ("Trojan Source"). */
bool wd_cp_hidden(uint32_t cp);
/* Appends |s| as a JSON string (quoted, escaped). */
void wd_sb_json_str(struct wd_sb *sb, const char *s);
/* Hex-encodes / decodes |s| (for one-line protocols). Caller frees; decode
 * returns NULL on bad input. */
char *wd_hex_encode(const char *s);
char *wd_hex_decode(const char *hex);

/* NULL-terminated string vectors (argv-like). A NULL vector is empty. */
/* The number of strings before the NULL. */
size_t wd_strv_len(char *const *v);
/* A deep copy (never NULL); *n, if given, receives the length. Caller frees
 * with wd_strv_free(). */
char **wd_strv_dup(char *const *v, size_t *n);
/* Appends a copy of |s| to *v (which may be NULL), keeping it terminated. */
void wd_strv_push(char ***v, const char *s);
/* Whether both hold the same strings in the same order; a NULL vector
 * equals only NULL. */
bool wd_strv_equal(char *const *a, char *const *b);
/* Frees every string and the vector. NULL is a no-op. */
void wd_strv_free(char **v);

/* Joins argv shell-quoted with spaces. Caller frees. */
char *wd_argv_join(char *const argv[]);

bool wd_str_has_prefix(const char *s, const char *prefix);
/* Whether |path| is |dir| or lies under it, by components ("/a/b" is under
 * "/a", "/ab" is not); "/" holds every absolute path. Lexical only. */
bool wd_path_within(const char *path, const char *dir);
bool wd_str_has_suffix(const char *s, const char *suffix);

/* ---- time ------------------------------------------------------------- */

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t wd_now_mono_ns(void);
/* CLOCK_REALTIME in microseconds since the epoch. */
int64_t wd_now_real_us(void);
/* Formats |us| (realtime µs) as "2026-12-02T12:00:00.123Z" into |buf|. */
void wd_format_time(int64_t us, char *buf, size_t n);
/* Parses "2026-12-02", "2026-12-02T12:00:00[Z]" or a relative "30m", "2h",
 * "7d" (before |now_us|) into realtime µs. 0 or -EINVAL. */
int wd_parse_time(const char *s, int64_t now_us, int64_t *out_us);

#endif
