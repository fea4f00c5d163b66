/*
 * grant_write.c: adds one persistent grant to a project's
 * .warden/permissions.json as a person edited it: a textual insertion into
 * the file's own text (its formatting, key order, other keys and values
 * stay byte for byte), then a check that the new text parses to exactly
 * the old config plus that grant, then an atomic rename over the file.
 * A file the scanner cannot follow is left alone (an error, not a rewrite).
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#define CONFIG_MAX (1u << 20)

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

/* |i| is at a '"': the index after the closing quote, or n. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return n;
}

/* The index after the JSON value at |i|, or n when it does not end. */
static size_t skip_value(const char *s, size_t n, size_t i)
{
	if (i >= n)
		return n;
	if (s[i] == '"')
		return skip_string(s, n, i);
	if (s[i] == '{' || s[i] == '[') {
		int depth = 0;
		while (i < n) {
			if (s[i] == '"') {
				i = skip_string(s, n, i);
				continue;
			}
			if (s[i] == '{' || s[i] == '[')
				depth++;
			else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
				return i + 1;
			i++;
		}
		return n;
	}
	while (i < n && !strchr(",}] \t\r\n", s[i]))
		i++;
	return i;
}

/* What the scanner learnt of the top-level object. */
struct shape {
	size_t open, close;	   /* its braces */
	size_t last_end;	   /* after the last member's value (0: no member) */
	size_t grants, grants_end; /* the "grants" array's brackets ([, after ]) */
	bool has_grants;
	char indent[64]; /* before the first key, after its newline */
	char colon[16];	 /* between the first key and its value */
	bool multiline;	 /* a newline before the first key */
};

static int scan(const char *s, size_t n, struct shape *sh)
{
	memset(sh, 0, sizeof(*sh));
	snprintf(sh->colon, sizeof(sh->colon), ": ");
	size_t i = skip_ws(s, n, 0);
	if (i >= n || s[i] != '{')
		return -EINVAL;
	sh->open = i;
	i = skip_ws(s, n, i + 1);
	bool first = true;
	while (i < n && s[i] != '}') {
		if (s[i] != '"')
			return -EINVAL;
		size_t key = i, key_end = skip_string(s, n, i);
		if (first) {
			size_t b = key;
			while (b > sh->open && (s[b - 1] == ' ' || s[b - 1] == '\t'))
				b--;
			sh->multiline = b > sh->open && s[b - 1] == '\n';
			snprintf(sh->indent, sizeof(sh->indent), "%.*s", (int)(key - b), s + b);
		}
		i = skip_ws(s, n, key_end);
		if (i >= n || s[i] != ':')
			return -EINVAL;
		size_t val = skip_ws(s, n, i + 1);
		if (first && val - key_end < sizeof(sh->colon))
			snprintf(sh->colon, sizeof(sh->colon), "%.*s", (int)(val - key_end),
				 s + key_end);
		size_t end = skip_value(s, n, val);
		if (end >= n)
			return -EINVAL;
		if (key_end - key == 8 && memcmp(s + key, "\"grants\"", 8) == 0) {
			if (s[val] != '[' || sh->has_grants)
				return -EINVAL;
			sh->has_grants = true;
			sh->grants = val;
			sh->grants_end = end;
		}
		sh->last_end = end;
		first = false;
		i = skip_ws(s, n, end);
		if (i < n && s[i] == ',')
			i = skip_ws(s, n, i + 1);
		else if (i >= n || s[i] != '}')
			return -EINVAL;
	}
	if (i >= n)
		return -EINVAL;
	sh->close = i;
	return 0;
}

/* The new text: |s| with |grant| added (|s| NULL: a new file). Caller frees. */
static char *insert(const char *s, size_t n, const char *grant, int *rc)
{
	struct wd_sb out = {0};
	*rc = 0;
	if (!s) {
		wd_sb_printf(&out, "{\n  \"grants\": [\n    %s\n  ]\n}\n", grant);
		return wd_sb_steal(&out);
	}
	struct shape sh;
	if ((*rc = scan(s, n, &sh)) < 0)
		return NULL;
	const char *unit = sh.indent[0] ? sh.indent : "  ";
	if (sh.has_grants) {
		size_t a = sh.grants, close = sh.grants_end - 1;
		size_t first = skip_ws(s, n, a + 1);
		if (first == close) {
			/* Empty: one element on a line of its own, indented
			 * one level deeper than the key (or inline). */
			wd_sb_add(&out, s, a + 1);
			if (sh.multiline)
				wd_sb_printf(&out, "\n%s%s%s\n%s", sh.indent, unit, grant,
					     sh.indent);
			else
				wd_sb_puts(&out, grant);
			wd_sb_add(&out, s + close, n - close);
			return wd_sb_steal(&out);
		}
		/* After the last element, with the separator the first one
		 * has after "[". */
		size_t last_end = first, i = first;
		while (i < close) {
			last_end = skip_value(s, n, i);
			i = skip_ws(s, n, last_end);
			if (i < close && s[i] == ',')
				i = skip_ws(s, n, i + 1);
			else if (i != close) {
				*rc = -EINVAL;
				return NULL;
			}
		}
		wd_sb_add(&out, s, last_end);
		wd_sb_printf(&out, ",%.*s%s", (int)(first - a - 1), s + a + 1, grant);
		wd_sb_add(&out, s + last_end, n - last_end);
		return wd_sb_steal(&out);
	}
	if (!sh.last_end) {
		/* An empty object: the grants as a new file has them. */
		wd_sb_add(&out, s, sh.open + 1);
		wd_sb_printf(&out, "\n  \"grants\": [\n    %s\n  ]\n", grant);
		wd_sb_add(&out, s + sh.close, n - sh.close);
		return wd_sb_steal(&out);
	}
	/* A new last member of the top-level object. */
	wd_sb_add(&out, s, sh.last_end);
	if (sh.multiline)
		wd_sb_printf(&out, ",\n%s\"grants\"%s[\n%s%s%s\n%s]", sh.indent, sh.colon,
			     sh.indent, unit, grant, sh.indent);
	else
		wd_sb_printf(&out, ", \"grants\"%s[%s]", sh.colon, grant);
	wd_sb_add(&out, s + sh.last_end, n - sh.last_end);
	return wd_sb_steal(&out);
}

/* The file's text, or NULL and 0 when there is none (ENOENT). Refuses a
 * file that is not regular (a FIFO would block) and a symlink. */
static int read_config(const char *path, char **text, size_t *len, mode_t *mode)
{
	*text = NULL;
	*len = 0;
	*mode = 0644;
	wd_autoclose int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size > (off_t)CONFIG_MAX)
		return -EFBIG;
	*mode = st.st_mode & 0777;
	struct wd_sb sb = {0};
	char buf[8192];
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0 && sb.len <= CONFIG_MAX)
		wd_sb_add(&sb, buf, (size_t)r);
	if (r < 0) {
		wd_sb_free(&sb);
		return -errno;
	}
	*len = sb.len;
	*text = wd_sb_steal(&sb);
	return 0;
}

static int parse(const char *text, size_t len, const char *path, struct pol_config **out,
		 char **err)
{
	if (!text) {
		*out = pol_config_default();
		return 0;
	}
	struct pol_config_errors errs = {0};
	int rc = pol_config_parse(text, len, path, out, &errs);
	if (rc < 0 && err)
		*err = wd_strdup(errs.count ? errs.items[0].message : "not valid");
	pol_config_errors_free(&errs);
	return rc;
}

/* Writes |text| next to |path| and renames it over |path|: a reader sees
 * the old file or the new one, never a part. The temporary name is made
 * with O_EXCL|O_NOFOLLOW: nothing planted there is written through. */
static int replace(const char *path, const char *text, mode_t mode)
{
	wd_autofree char *tmp = wd_asprintf("%s.tmp.%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	int rc = wd_write_all(fd, text, strlen(text));
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

int sup_grant_write(const char *path, const struct pol_request *req, const char *who, int64_t at_us,
		    char **shown, char **err)
{
	wd_autofree char *text = NULL;
	size_t len = 0;
	mode_t mode;
	int rc = read_config(path, &text, &len, &mode);
	if (rc < 0) {
		if (err)
			*err = wd_asprintf("%s: %s", path,
					   rc == -EINVAL ? "not a regular file" : strerror(-rc));
		return rc;
	}
	struct pol_config *want = NULL, *got = NULL;
	if ((rc = parse(text, len, path, &want, err)) < 0)
		return rc;
	rc = pol_config_add_grant(want, req, who, at_us);
	wd_autofree char *grant =
		rc == 0 ? pol_config_grant_json(want, pol_config_grant_count(want) - 1) : NULL;
	wd_autofree char *next = grant ? insert(text, len, grant, &rc) : NULL;
	if (rc == 0 && !next)
		rc = -EINVAL;
	if (rc == 0 && parse(next, strlen(next), path, &got, NULL) < 0)
		rc = -EINVAL;
	if (rc == 0) {
		/* The new text must mean the old config and this grant,
		 * nothing else. */
		wd_autofree char *a = pol_config_to_json(want);
		wd_autofree char *b = pol_config_to_json(got);
		if (strcmp(a, b) != 0 ||
		    pol_config_grant_count(got) != pol_config_grant_count(want))
			rc = -EINVAL;
	}
	pol_config_free(want);
	pol_config_free(got);
	if (rc == -EINVAL && err && !*err)
		*err = wd_asprintf("%s: the grant could not be added without rewriting the file "
				   "(add it by hand: %s)",
				   path, grant ? grant : "?");
	if (rc < 0)
		return rc;
	if ((rc = replace(path, next, mode)) < 0) {
		if (err)
			*err = wd_asprintf("%s: %s", path, strerror(-rc));
		return rc;
	}
	*shown = wd_steal_pointer(&grant);
	return 0;
}
