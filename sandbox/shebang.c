/*
 * shebang.c: the "#!" line of a script, read as binfmt_script reads it.
 */
#include "notify_int.h"

#include "common.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BINPRM_BUF 256

static bool spacetab(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * binfmt_script's rules. It sees the file's first BINPRM_BUF bytes, padded
 * with NULs when the file is shorter. The line ends at the first newline;
 * without one the line may have been cut, and the kernel takes the first
 * BINPRM_BUF - 1 bytes only if the interpreter's name ends (a space, tab or
 * NUL) within the buffer: it never runs a cut name (ENOEXEC). Spaces and
 * tabs at the end of the line are dropped. The name is the first word after
 * "#!" and any spaces or tabs; a space or tab after it starts the argument,
 * the rest of the line up to a NUL: so the argument may be empty, or end in
 * spaces that a NUL follows, and the kernel passes it so. The exec event
 * compares argv byte for byte: any difference here would kill a script
 * that was allowed.
 */
bool sbx_parse_shebang(const char *in, size_t len, char **interp, char **arg)
{
	char b[BINPRM_BUF] = {0};
	size_t s, e, end;
	memcpy(b, in, len < sizeof(b) ? len : sizeof(b));
	*interp = NULL;
	*arg = NULL;
	if (b[0] != '#' || b[1] != '!')
		return false;
	const char *nl = memchr(b, '\n', sizeof(b));
	if (nl) {
		end = (size_t)(nl - b);
	} else {
		for (s = 2; s < sizeof(b) && spacetab(b[s]); s++)
			;
		for (e = s; e < sizeof(b) && b[e] && !spacetab(b[e]); e++)
			;
		if (e == sizeof(b))
			return false; /* all blank, or the name was cut */
		end = sizeof(b) - 1;
	}
	while (spacetab(b[end - 1])) /* b[1] is '!': stops there at the latest */
		end--;
	for (s = 2; s < end && spacetab(b[s]); s++)
		;
	for (e = s; e < end && b[e] && !spacetab(b[e]); e++)
		;
	/* No name, or a NUL where it starts: the kernel would look for a
	 * program called "" and fail the exec with ENOENT. */
	if (e == s)
		return false;
	*interp = wd_strndup(b + s, e - s);
	if (e < end && spacetab(b[e])) {
		while (spacetab(b[e])) /* b[end - 1] is not: stops before end */
			e++;
		*arg = wd_strndup(b + e, end - e);
	}
	return true;
}

/* Reads the "#!" line of the file behind |fd| (an O_PATH fd of a regular
 * file) as binfmt_script does. Called only once the caller's own exec
 * permission on the file was checked (exec_access): the kernel reads these
 * same bytes for the caller at its exec, read permission or not, so warden
 * learns nothing the exec would not act on; a file the caller may not
 * execute is never read. Returns 1 with *interp and *arg (NULL if
 * none; the caller frees both) when it is a script, 0 when it is not, -1
 * when it could not be read. */
static int read_shebang(int fd, char **interp, char **arg)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	/* O_NONBLOCK: never wait on a FIFO; the caller checked S_ISREG. */
	wd_autoclose int rfd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (rfd < 0)
		return -1;
	char buf[BINPRM_BUF];
	ssize_t n = pread(rfd, buf, sizeof(buf), 0);
	if (n < 0)
		return -1;
	return n > 0 && sbx_parse_shebang(buf, (size_t)n, interp, arg);
}

/*
 * What read_shebang() found in recently exec'd files, so that a program run
 * again and again (a build, a shell loop) is not reopened each time. An
 * entry is keyed by the file's identity and everything a change of its
 * content changes: size, mtime and ctime (which no one but the kernel sets).
 * Only files whose ctime is over a second old are remembered: timestamps are
 * coarse (a tick), so a file written twice within one tick could otherwise
 * look unchanged; a later change moves its ctime to now, past the key. The
 * memo only shapes the prediction: the exec event still compares the image
 * and argv that really start (sbx_verify_exec), so a stale entry could only
 * get an exec killed, never let an unchecked one run.
 */
#define SHEBANG_MEMO 64

static struct shebang_memo {
	bool used, script;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	char *interp, *arg;
} shebang_memo[SHEBANG_MEMO];

static bool memo_key_equal(const struct shebang_memo *m, const struct stat *st)
{
	return m->used && m->dev == st->st_dev && m->ino == st->st_ino && m->size == st->st_size &&
	       m->mtime.tv_sec == st->st_mtim.tv_sec && m->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       m->ctime.tv_sec == st->st_ctim.tv_sec && m->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

/* read_shebang() through the memo. |st| is fstat() of |fd|. */
bool sbx_shebang_of(int fd, const struct stat *st, char **interp, char **arg)
{
	struct shebang_memo *m =
		&shebang_memo[((uint64_t)st->st_ino * 31 + (uint64_t)st->st_dev) % SHEBANG_MEMO];
	if (memo_key_equal(m, st)) {
		*interp = m->script ? wd_strdup(m->interp) : NULL;
		*arg = m->script && m->arg ? wd_strdup(m->arg) : NULL;
		return m->script;
	}
	int rc = read_shebang(fd, interp, arg);
	struct timespec now;
	if (rc < 0 || clock_gettime(CLOCK_REALTIME, &now) < 0 ||
	    st->st_ctim.tv_sec >= now.tv_sec - 1)
		return rc > 0;
	free(m->interp);
	free(m->arg);
	*m = (struct shebang_memo){
		.used = true,
		.script = rc > 0,
		.dev = st->st_dev,
		.ino = st->st_ino,
		.size = st->st_size,
		.mtime = st->st_mtim,
		.ctime = st->st_ctim,
		.interp = rc > 0 ? wd_strdup(*interp) : NULL,
		.arg = rc > 0 && *arg ? wd_strdup(*arg) : NULL,
	};
	return rc > 0;
}
