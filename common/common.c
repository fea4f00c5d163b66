/*
 * common.c: the helpers declared in common.h. No module state beyond the
 * log level.
 */
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

static enum wd_log_level log_level = WD_LOG_INFO;

void wd_log_set_level(enum wd_log_level level)
{
	log_level = level;
}

enum wd_log_level wd_log_get_level(void)
{
	return log_level;
}

void wd_log(enum wd_log_level level, const char *fmt, ...)
{
	if (level > log_level)
		return;
	int saved = errno;
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Messages carry the agent's strings: never raw to the terminal. One
	 * write per line so that lines of concurrent writers do not mix. */
	char *clean = wd_sanitize(line);
	dprintf(STDERR_FILENO, "warden: %s\n", clean);
	free(clean);
	errno = saved;
}

static void *check_alloc(void *p)
{
	if (!p) {
		static const char msg[] = "warden: out of memory\n";
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
		abort();
	}
	return p;
}

void *wd_malloc(size_t n)
{
	return check_alloc(malloc(n ? n : 1));
}

void *wd_calloc(size_t n, size_t size)
{
	return check_alloc(calloc(n ? n : 1, size ? size : 1));
}

void *wd_realloc(void *p, size_t n)
{
	return check_alloc(realloc(p, n ? n : 1));
}

char *wd_strdup(const char *s)
{
	return check_alloc(strdup(s));
}

char *wd_strndup(const char *s, size_t n)
{
	return check_alloc(strndup(s, n));
}

char *wd_vasprintf(const char *fmt, va_list ap)
{
	char *out = NULL;
	if (vasprintf(&out, fmt, ap) < 0)
		check_alloc(NULL);
	return out;
}

char *wd_asprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *out = wd_vasprintf(fmt, ap);
	va_end(ap);
	return out;
}

void wd_close(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
	*fd = -1;
}

int wd_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

ssize_t wd_read_all(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int wd_read_file(const char *path, size_t max, char **out, size_t *len)
{
	wd_autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	char *buf = wd_malloc(max + 1);
	ssize_t n = wd_read_all(fd, buf, max + 1);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	if ((size_t)n > max) {
		free(buf);
		return -EFBIG;
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = (size_t)n;
	return 0;
}

ssize_t wd_read_proc_into(const char *path, char *buf, size_t max)
{
	wd_autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	ssize_t n;
	while ((n = read(fd, buf, max + 1)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	if ((size_t)n > max)
		return -EFBIG;
	buf[n] = '\0';
	return n;
}

int wd_read_proc(const char *path, size_t max, char **out, size_t *len)
{
	char *buf = wd_malloc(max + 1);
	ssize_t n = wd_read_proc_into(path, buf, max);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	*out = buf;
	if (len)
		*len = (size_t)n;
	return 0;
}

int wd_set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -errno;
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

int wd_set_cloexec(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFD);
	if (fl < 0)
		return -errno;
	fl = on ? (fl | FD_CLOEXEC) : (fl & ~FD_CLOEXEC);
	return fcntl(fd, F_SETFD, fl) < 0 ? -errno : 0;
}

void wd_sb_add(struct wd_sb *sb, const char *s, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap : 64;
		while (cap < sb->len + n + 1)
			cap *= 2;
		sb->buf = wd_realloc(sb->buf, cap);
		sb->cap = cap;
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void wd_sb_puts(struct wd_sb *sb, const char *s)
{
	wd_sb_add(sb, s, strlen(s));
}

void wd_sb_putc(struct wd_sb *sb, char c)
{
	wd_sb_add(sb, &c, 1);
}

void wd_sb_printf(struct wd_sb *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = wd_vasprintf(fmt, ap);
	va_end(ap);
	wd_sb_puts(sb, s);
	free(s);
}

char *wd_sb_steal(struct wd_sb *sb)
{
	char *b = sb->buf ? sb->buf : wd_strdup("");
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return b;
}

void wd_sb_free(struct wd_sb *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

static bool needs_quote(const char *s)
{
	if (!*s)
		return true;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (!(isalnum(*p) || strchr("@%+=:,./-_", *p)))
			return true;
	}
	return false;
}

void wd_sb_shell_quote(struct wd_sb *sb, const char *s)
{
	if (!needs_quote(s)) {
		wd_sb_puts(sb, s);
		return;
	}
	bool ctrl = false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			ctrl = true;
	if (ctrl) {
		/* $'...' form so control bytes are visible, never interpreted. */
		wd_sb_puts(sb, "$'");
		for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
			if (*p < 0x20 || *p == 0x7f)
				wd_sb_printf(sb, "\\x%02x", *p);
			else if (*p == '\'' || *p == '\\')
				wd_sb_printf(sb, "\\%c", *p);
			else
				wd_sb_putc(sb, (char)*p);
		}
		wd_sb_putc(sb, '\'');
		return;
	}
	wd_sb_putc(sb, '\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			wd_sb_puts(sb, "'\\''");
		else
			wd_sb_putc(sb, *p);
	}
	wd_sb_putc(sb, '\'');
}

size_t wd_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	size_t len;
	uint32_t c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xe0) == 0xc0) {
		len = 2;
		c &= 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3;
		c &= 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4;
		c &= 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

bool wd_cp_hidden(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0x061c ||
	       cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

char *wd_sanitize(const char *s)
{
	struct wd_sb sb = {0};
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t l = wd_utf8_decode(p + i, n - i, &cp);
		if (l == 0) {
			/* Not UTF-8: a lone 0x9b is CSI on an 8-bit terminal. */
			wd_sb_printf(&sb, "\\x%02x", p[i]);
			l = 1;
		} else if (cp < 0x20 || cp == 0x7f) {
			wd_sb_printf(&sb, "\\x%02x", (unsigned)cp);
		} else if (wd_cp_hidden(cp)) {
			wd_sb_printf(&sb, "\\u%04x", (unsigned)cp);
		} else {
			wd_sb_add(&sb, (const char *)p + i, l);
		}
		i += l;
	}
	return wd_sb_steal(&sb);
}

void wd_sb_json_str(struct wd_sb *sb, const char *s)
{
	wd_sb_putc(sb, '"');
	uint32_t cp;
	size_t l;
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			wd_sb_printf(sb, "\\%c", *p);
		else if (*p == '\n')
			wd_sb_puts(sb, "\\n");
		else if (*p < 0x20 || *p == 0x7f)
			wd_sb_printf(sb, "\\u%04x", *p);
		else if (*p >= 0x80 && (l = wd_utf8_decode(p, strnlen((const char *)p, 4), &cp)) &&
			 wd_cp_hidden(cp)) {
			/* C1 and bidirectional controls: the same string, but
			 * nothing a terminal showing the JSON would obey. */
			wd_sb_printf(sb, "\\u%04x", (unsigned)cp);
			p += l - 1;
		} else
			wd_sb_putc(sb, (char)*p);
	}
	wd_sb_putc(sb, '"');
}

char *wd_hex_encode(const char *s)
{
	struct wd_sb sb = {0};
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		wd_sb_printf(&sb, "%02x", *p);
	return wd_sb_steal(&sb);
}

char *wd_hex_decode(const char *hex)
{
	size_t n = strlen(hex);
	if (n % 2)
		return NULL;
	char *out = wd_malloc(n / 2 + 1);
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1 || !isxdigit((unsigned char)hex[2 * i]) ||
		    !isxdigit((unsigned char)hex[2 * i + 1]) || v == 0) {
			free(out);
			return NULL;
		}
		out[i] = (char)v;
	}
	out[n / 2] = '\0';
	return out;
}

char *wd_argv_join(char *const argv[])
{
	struct wd_sb sb = {0};
	for (size_t i = 0; argv && argv[i]; i++) {
		if (i)
			wd_sb_putc(&sb, ' ');
		wd_sb_shell_quote(&sb, argv[i]);
	}
	return wd_sb_steal(&sb);
}

bool wd_path_within(const char *path, const char *dir)
{
	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

bool wd_str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool wd_str_has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

int64_t wd_now_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t wd_now_real_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

void wd_format_time(int64_t us, char *buf, size_t n)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;
	gmtime_r(&t, &tm);
	char base[32];
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, n, "%s.%03dZ", base, (int)((us % 1000000) / 1000));
}

int wd_parse_time(const char *s, int64_t now_us, int64_t *out_us)
{
	char *end = NULL;
	if (!s || !*s)
		return -EINVAL;
	/* Relative: a number and one unit. */
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno == 0 && end != s && end[0] && !end[1] && v >= 0) {
		int64_t unit = 0;
		switch (end[0]) {
		case 's':
			unit = 1;
			break;
		case 'm':
			unit = 60;
			break;
		case 'h':
			unit = 3600;
			break;
		case 'd':
			unit = 86400;
			break;
		default:
			return -EINVAL;
		}
		*out_us = now_us - (int64_t)v * unit * 1000000LL;
		return 0;
	}
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest) {
		memset(&tm, 0, sizeof(tm));
		rest = strptime(s, "%Y-%m-%d", &tm);
	}
	if (!rest || (*rest && strcmp(rest, "Z") != 0))
		return -EINVAL;
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out_us = (int64_t)t * 1000000LL;
	return 0;
}

size_t wd_strv_len(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

char **wd_strv_dup(char *const *v, size_t *n)
{
	size_t cnt = wd_strv_len(v);
	char **out = wd_calloc(cnt + 1, sizeof(char *));
	for (size_t i = 0; i < cnt; i++)
		out[i] = wd_strdup(v[i]);
	if (n)
		*n = cnt;
	return out;
}

void wd_strv_push(char ***v, const char *s)
{
	size_t n = wd_strv_len(*v);
	*v = wd_realloc(*v, (n + 2) * sizeof(char *));
	(*v)[n] = wd_strdup(s);
	(*v)[n + 1] = NULL;
}

bool wd_strv_equal(char *const *a, char *const *b)
{
	if (!a || !b)
		return a == b;
	size_t i = 0;
	for (; a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return !a[i] && !b[i];
}

void wd_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

void wd_sb_csv_field(struct wd_sb *sb, const char *s, bool last)
{
	s = s ? s : "";
	if (s[strcspn(s, ",\"\r\n")]) {
		wd_sb_putc(sb, '"');
		for (const char *p = s; *p; p++) {
			if (*p == '"')
				wd_sb_putc(sb, '"');
			wd_sb_putc(sb, *p);
		}
		wd_sb_putc(sb, '"');
	} else {
		wd_sb_puts(sb, s);
	}
	wd_sb_puts(sb, last ? "\r\n" : ",");
}
