/*
 * notify.c: the seccomp notification decoder for execve/execveat.
 *
 * receive -> copy what we need out of the stopped caller -> check the
 * notification id is still valid -> hand the event to the caller, which
 * decides and answers (samples/seccomp/user-trap.c's order).
 *
 * Why the decision cannot be raced: everything read here (path, argv,
 * envp) lives in the caller's memory, which another thread, or another
 * process sharing a mapping, can rewrite after we read it and before the
 * kernel copies it in execve(). So allowing here is not the end: the
 * supervisor keeps the decoded event and, at the PTRACE_EVENT_EXEC stop of
 * the new image, sbx_verify_exec() compares the image that is about to run
 * (/proc/PID/exe, and the argv and envp the kernel copied into the new,
 * private mm before the stop: read from its stack, or from /proc/PID/cmdline
 * and environ) with what was decided. At that
 * stop no instruction of the new image has run, its memory is shared with
 * nobody (a fresh mm; the other threads are gone) and the tracer is warden,
 * so nothing can change it between the check and the first instruction. A
 * mismatch kills the process. Reading here is therefore about showing the
 * right command to the decision; the exec event is what enforces it.
 *
 * The program is found as the caller's own exec finds it, in its root, cwd
 * and credentials (ident.c), and the decoder reads its "#!" line only once
 * the caller's exec permission is checked; a lookup that fails gives the
 * kernel's errno. That lookup is right when nothing races, which is all the
 * decision needs: a file changed under the path afterwards has another
 * identity at the exec event, and is killed there.
 *
 * The id check after reading guarantees that the pid we read from was the
 * caller of this notification and not a recycled pid.
 */
#include "sandbox.h"
#include "notify_int.h"
#include "ident_int.h"
#include "sock_int.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <time.h>

#define SCRIPT_DEPTH 4 /* the kernel allows a few nested interpreters */
#define BINPRM_BUF   256

static size_t notif_size, resp_size;

static int load_sizes(void)
{
	if (notif_size)
		return 0;
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return -errno;
	/* The kernel copies its own struct size: allocate the larger. */
	notif_size = sz.seccomp_notif > sizeof(struct seccomp_notif) ? sz.seccomp_notif
								     : sizeof(struct seccomp_notif);
	resp_size = sz.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
			    ? sz.seccomp_notif_resp
			    : sizeof(struct seccomp_notif_resp);
	return 0;
}

/*
 * Reading the caller's memory. argv, envp and their strings sit in a few
 * pages of the caller's stack, so whole pages are read once and kept in a
 * small cache for the rest of this decode. The cache lives only for one
 * notification. Pages come from a sbx_page_reader: the caller's memory
 * (read_pid_page) here, a made-up address space in the fuzz target.
 */
#define RPAGES 12

struct rmem {
	sbx_page_reader read;
	void *ctx;
	pid_t batch_pid; /* > 0: rmem_prefetch() may read this pid's pages */
	unsigned next;
	struct {
		uint64_t base; /* page address, or 1 when empty */
		char data[SBX_PAGE_SIZE];
	} page[RPAGES];
};

/* process_vm_readv of one aligned page either succeeds whole or fails: a
 * page is mapped or not. |ctx| points to the pid. */
static int read_pid_page(void *ctx, uint64_t base, char *page)
{
	pid_t pid = *(const pid_t *)ctx;
	struct iovec l = {.iov_base = page, .iov_len = SBX_PAGE_SIZE};
	struct iovec r = {.iov_base = (void *)(uintptr_t)base, .iov_len = SBX_PAGE_SIZE};
	return process_vm_readv(pid, &l, 1, &r, 1, 0) == SBX_PAGE_SIZE ? 0 : -EFAULT;
}

static void rmem_init(struct rmem *m, sbx_page_reader read, void *ctx)
{
	m->read = read;
	m->ctx = ctx;
	m->batch_pid = 0;
	m->next = 0;
	for (unsigned i = 0; i < RPAGES; i++)
		m->page[i].base = 1;
}

/* The cached page holding |addr|, or NULL when it is not mapped. */
static const char *rmem_page(struct rmem *m, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(SBX_PAGE_SIZE - 1);
	for (unsigned i = 0; i < RPAGES; i++)
		if (m->page[i].base == base)
			return m->page[i].data;
	unsigned slot = m->next++ % RPAGES;
	if (m->read(m->ctx, base, m->page[slot].data) < 0) {
		m->page[slot].base = 1;
		return NULL;
	}
	m->page[slot].base = base;
	return m->page[slot].data;
}

/* The cached page holding |addr|, or NULL when it is not cached (no read). */
static const char *rmem_cached(const struct rmem *m, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(SBX_PAGE_SIZE - 1);
	for (unsigned i = 0; i < RPAGES; i++)
		if (m->page[i].base == base)
			return m->page[i].data;
	return NULL;
}

/*
 * Reads the pages holding |addrs| that are not cached yet, in one
 * process_vm_readv (one iovec per page), into the cache. It only warms the
 * cache: a page it could not read is read (and fails) again on demand, so
 * the decode reads the same bytes with or without it. The kernel stops at
 * the first page that fails, so the count it returns says which succeeded.
 */
#define PREFETCH_MAX 6

static void rmem_prefetch(struct rmem *m, const uint64_t *addrs, size_t n)
{
	if (m->batch_pid <= 0)
		return;
	struct iovec l[PREFETCH_MAX], rv[PREFETCH_MAX];
	unsigned slot[PREFETCH_MAX];
	size_t k = 0;
	for (size_t i = 0; i < n && k < PREFETCH_MAX; i++) {
		uint64_t base = addrs[i] & ~(uint64_t)(SBX_PAGE_SIZE - 1);
		bool dup = addrs[i] == 0 || rmem_cached(m, base);
		for (size_t j = 0; j < k && !dup; j++)
			dup = (uint64_t)(uintptr_t)rv[j].iov_base == base;
		if (dup)
			continue;
		slot[k] = m->next++ % RPAGES;
		m->page[slot[k]].base = 1;
		l[k] = (struct iovec){.iov_base = m->page[slot[k]].data, .iov_len = SBX_PAGE_SIZE};
		rv[k] = (struct iovec){.iov_base = (void *)(uintptr_t)base,
				       .iov_len = SBX_PAGE_SIZE};
		k++;
	}
	if (k == 0)
		return;
	ssize_t got = process_vm_readv(m->batch_pid, l, k, rv, k, 0);
	for (size_t j = 0; got > 0 && j < k && (ssize_t)((j + 1) * SBX_PAGE_SIZE) <= got; j++)
		m->page[slot[j]].base = (uint64_t)(uintptr_t)rv[j].iov_base;
}

/* Whether the |n| bytes from |addr| run past the top of the address space.
 * A process never has those pages (they are the kernel's), so on the real
 * path the read fails anyway; the check keeps the sum from wrapping round to
 * page zero whatever the page reader answers. */
static bool past_top(uint64_t addr, uint64_t n)
{
	return n > 0 && n - 1 > UINT64_MAX - addr;
}

/* Reads exactly |n| bytes at |addr|. 0 or -EFAULT. */
static int rmem_read(struct rmem *m, uint64_t addr, void *out, size_t n)
{
	size_t got = 0;
	if (past_top(addr, n))
		return -EFAULT;
	while (got < n) {
		const char *pg = rmem_page(m, addr + got);
		if (!pg)
			return -EFAULT;
		size_t off = (addr + got) & (SBX_PAGE_SIZE - 1), take = SBX_PAGE_SIZE - off;
		if (take > n - got)
			take = n - got;
		memcpy((char *)out + got, pg + off, take);
		got += take;
	}
	return 0;
}

/* Reads a NUL-terminated string of at most |max| bytes. *budget is the
 * remaining byte budget of the whole argv or envp. */
static int peek_string(struct rmem *m, uint64_t addr, size_t max, size_t *budget, char **out)
{
	struct wd_sb sb = {0};
	for (;;) {
		const char *pg = past_top(addr, sb.len + 1) ? NULL : rmem_page(m, addr + sb.len);
		if (!pg) {
			wd_sb_free(&sb);
			return -EFAULT;
		}
		size_t off = (addr + sb.len) & (SBX_PAGE_SIZE - 1), room = SBX_PAGE_SIZE - off;
		const char *nul = memchr(pg + off, '\0', room);
		size_t take = nul ? (size_t)(nul - (pg + off)) : room;
		if (sb.len + take + 1 > max || sb.len + take + 1 > *budget) {
			wd_sb_free(&sb);
			return -E2BIG;
		}
		wd_sb_add(&sb, pg + off, take);
		if (nul)
			break;
	}
	*budget -= sb.len + 1;
	*out = wd_sb_steal(&sb);
	return 0;
}

/* Puts in |want| (room for |max|) the addresses of the first strings of
 * the vector at |addr| whose pointers are in the cache already, for
 * rmem_prefetch(): argv, envp and their strings usually sit in a few pages.
 * Returns how many. */
static size_t string_pages(const struct rmem *m, uint64_t addr, uint64_t *want, size_t max)
{
	size_t n = 0;
	for (uint64_t a = addr; a && n < max && !past_top(a, sizeof(uint64_t));
	     a += sizeof(uint64_t)) {
		const char *pg = rmem_cached(m, a);
		uint64_t ptr;
		if (!pg || (a & (SBX_PAGE_SIZE - 1)) + sizeof(ptr) > SBX_PAGE_SIZE)
			break;
		memcpy(&ptr, pg + (a & (SBX_PAGE_SIZE - 1)), sizeof(ptr));
		if (ptr == 0)
			break;
		want[n++] = ptr;
	}
	return n;
}

/* Reads a NULL-terminated array of string pointers (argv or envp) within
 * |budget| bytes in all (strings plus pointers, as the kernel counts). */
static int peek_vector(struct rmem *m, uint64_t addr, size_t budget, char ***out, size_t *bytes)
{
	size_t cap = 16, n = 0, start = budget;
	char **v = wd_calloc(cap, sizeof(char *));
	*out = NULL;
	if (addr == 0) { /* a NULL argv or envp is an empty one */
		*out = v;
		*bytes = 0;
		return 0;
	}
	uint64_t want[PREFETCH_MAX * 4] = {0};
	rmem_prefetch(m, want, string_pages(m, addr, want, WD_ARRAY_SIZE(want)));
	for (;;) {
		uint64_t p;
		if (n >= SBX_VECTOR_MAX_PTRS || budget < sizeof(p)) {
			wd_strv_free(v);
			return -E2BIG;
		}
		if (past_top(addr, (n + 1) * sizeof(p)) ||
		    rmem_read(m, addr + n * sizeof(p), &p, sizeof(p)) < 0) {
			wd_strv_free(v);
			return -EFAULT;
		}
		budget -= sizeof(p);
		if (p == 0)
			break;
		if (n + 2 > cap) {
			cap *= 2;
			v = wd_realloc(v, cap * sizeof(char *));
		}
		v[n + 1] = NULL;
		int rc = peek_string(m, p, budget, &budget, &v[n]);
		if (rc < 0) {
			v[n] = NULL;
			wd_strv_free(v);
			return rc;
		}
		n++;
		v[n] = NULL;
	}
	*out = v;
	*bytes = start - budget;
	return 0;
}

int sbx_decode_vector(sbx_page_reader read, void *ctx, uint64_t addr, size_t budget, char ***out,
		      size_t *bytes)
{
	struct rmem *m = wd_malloc(sizeof(*m));
	rmem_init(m, read, ctx);
	int rc = peek_vector(m, addr, budget, out, bytes);
	free(m);
	return rc;
}

static char *proc_link(pid_t pid, const char *what)
{
	char p[64], buf[4096];
	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	ssize_t n = readlink(p, buf, sizeof(buf) - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return wd_strdup(buf);
}

static int open_proc(pid_t pid, const char *what)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	return open(p, O_PATH | O_CLOEXEC);
}

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
static bool shebang_of(int fd, const struct stat *st, char **interp, char **arg)
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

/* The name the kernel gives the script to its interpreter (bprm->filename). */
static char *kernel_filename(const struct sbx_exec_event *ev, int dirfd, int flags)
{
	if (ev->syscall_nr == __NR_execveat && ev->path_arg[0] != '/' && dirfd != AT_FDCWD) {
		if (ev->path_arg[0] == '\0' && (flags & AT_EMPTY_PATH))
			return wd_asprintf("/dev/fd/%d", dirfd);
		return wd_asprintf("/dev/fd/%d/%s", dirfd, ev->path_arg);
	}
	return wd_strdup(ev->path_arg);
}

/* The path the kernel gives the object behind |fd| (as the supervisor
 * sees it), or NULL. */
static char *fd_path(int fd)
{
	char link[64], buf[4096];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return wd_strdup(buf);
}

static void set_refusal(struct sbx_exec_event *ev, int err, const char *why);

/* Where the decoder finds the programs' places and the callers'
 * credentials. */
static const struct sbx_places *notify_places;

void sbx_notify_set_places(const struct sbx_places *pl)
{
	notify_places = pl;
}

/*
 * The caller's credentials, for resolving as the caller. Every process of
 * the sandbox runs with no capability and NO_NEW_PRIVS, so none can change
 * its groups or gain a capability: a caller whose ids (from its pidfd, the
 * same call that names its process) equal those seen before has the groups
 * and capabilities seen then. Anything else reads /proc/PID/status.
 */
static struct {
	bool have;
	uint32_t ids[8];
	struct sbx_creds c;
} creds_memo;

static int caller_creds(pid_t pid, const uint32_t *ids, struct sbx_creds *out)
{
	if (ids && creds_memo.have && memcmp(ids, creds_memo.ids, sizeof(creds_memo.ids)) == 0) {
		*out = creds_memo.c;
		return 0;
	}
	int rc = sbx_creds_of(pid, out);
	if (rc == 0 && ids) {
		creds_memo.have = true;
		memcpy(creds_memo.ids, ids, sizeof(creds_memo.ids));
		creds_memo.c = *out;
	}
	return rc;
}

/* What the kernel's exec checks on the file itself (do_open_execat): a
 * regular file, exec permission for the caller (the thread holds its
 * credentials), not on a noexec mount: faccessat2 with AT_EACCESS checks
 * exactly these with the thread's own credentials. 0 or -errno. */
static int exec_access(int fd, const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return -EACCES;
	if (syscall(SYS_faccessat2, fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) < 0)
		return -errno;
	return 0;
}

/* Notes in |ev| that the agent can have written what |w| found: the file
 * or a symlink on the way. */
static void note_writable(struct sbx_exec_event *ev, int root, const struct sbx_walk *w)
{
	if (ev->agent_writable || !notify_places)
		return;
	char *why = NULL;
	bool bad = sbx_places_writable(notify_places, root, w->dirfd, w->fd, &w->st, &why);
	for (size_t i = 0; !bad && i < w->nlinks; i++) {
		free(why);
		why = NULL;
		bad = sbx_places_writable(notify_places, root, w->link_dir[i], w->link_dir[i],
					  &w->link_st[i], &why);
		if (bad) {
			char *t = wd_asprintf("%s (a symlink on the way)", why ? why : "?");
			free(why);
			why = t;
		}
	}
	if (bad) {
		ev->agent_writable = true;
		ev->writable_why = why ? why : wd_strdup("written where the agent can write");
	} else {
		free(why);
	}
}

/*
 * Finds |path| as the caller's exec would: in its root, from |base|, with
 * its credentials, and checks the file as the kernel's exec does. Fills |w|
 * and returns 0, or -errno (the exec fails so). The supervisor takes on the
 * caller's credentials for this thread only and for the walk only.
 */
static int find_as_caller(struct sbx_exec_event *ev, int root, int base, const char *path,
			  bool follow, const uint32_t *ids, struct sbx_walk *w)
{
	*w = (struct sbx_walk){.fd = -1, .dirfd = -1};
	struct sbx_creds cr;
	struct sbx_creds_saved sv;
	if (caller_creds(ev->pid, ids, &cr) < 0 || sbx_creds_enter(&cr, &sv) < 0) {
		/* Not the kernel's answer: refused, and the reason says why. */
		set_refusal(
			ev, EACCES,
			"warden could not take on the caller's credentials to find its program");
		return -EACCES;
	}
	struct sbx_walk_caller wc = {.pid = ev->pid};
	int rc;
	if (path[0] == '\0') {
		/* execveat(fd, "", AT_EMPTY_PATH): the caller's own fd. */
		w->fd = base >= 0 ? dup(base) : -1;
		rc = w->fd < 0 ? -EBADF : fstat(w->fd, &w->st) < 0 ? -errno : 0;
	} else if (path[0] != '/' && base < 0) {
		rc = -EBADF;
	} else {
		rc = sbx_walk_path(root, path[0] == '/' ? root : base, path, follow, &wc, w);
	}
	if (rc == 0)
		rc = exec_access(w->fd, &w->st);
	sbx_creds_leave(&sv);
	if (rc < 0)
		sbx_walk_free(w);
	return rc;
}

/* The caller's cwd (O_PATH), opened on first use: most programs are run by
 * absolute path and never need it. -1 when it cannot be opened. */
static int caller_cwd(pid_t pid, int *cwdfd)
{
	if (*cwdfd < 0)
		*cwdfd = open_proc(pid, "cwd");
	return *cwdfd;
}

/* Fills dev/ino, interp, expect_argv and exe_dev/exe_ino: what the exec
 * event must show if the kernel runs what we looked at. |fd| and |st| are
 * the program's file. An interpreter is found as the kernel finds it (from
 * the caller's cwd when relative, with its credentials); one that cannot be
 * found or executed fails the exec, as the kernel would. */
static void predict_image(struct sbx_exec_event *ev, int root, int fd, struct stat st, int dirfd,
			  int flags, int *cwdfd, const uint32_t *ids)
{
	ev->found = true;
	ev->dev = st.st_dev;
	ev->ino = st.st_ino;
	ev->exe_dev = st.st_dev;
	ev->exe_ino = st.st_ino;
	char **argv = wd_strv_dup(ev->argv, NULL);
	char *filename = kernel_filename(ev, dirfd, flags);
	/* |fd| is the caller's to close; each interpreter's walk is ours.
	 * |st| describes |cur| on entry to each round. */
	int cur = fd;
	struct sbx_walk iw = {.fd = -1, .dirfd = -1};
	for (int depth = 0; depth < SCRIPT_DEPTH; depth++) {
		char *interp = NULL, *arg = NULL;
		if (!shebang_of(cur, &st, &interp, &arg))
			break;
		/* binfmt_script: argv[0] is replaced by interp [arg] filename. */
		size_t n = 0;
		while (argv[n])
			n++;
		char **nv = wd_calloc(n + 3, sizeof(char *));
		size_t k = 0;
		nv[k++] = wd_strdup(interp);
		if (arg)
			nv[k++] = wd_strdup(arg);
		nv[k++] = filename;
		for (size_t i = 1; i < n; i++)
			nv[k++] = argv[i];
		free(argv[0]);
		free(argv);
		argv = nv;
		filename = wd_strdup(interp);
		if (!ev->interp)
			ev->interp = wd_strdup(interp);
		sbx_walk_free(&iw);
		int rc =
			find_as_caller(ev, root, interp[0] == '/' ? -1 : caller_cwd(ev->pid, cwdfd),
				       interp, true, ids, &iw);
		free(interp);
		free(arg);
		if (rc < 0) {
			/* The kernel fails the exec: no interpreter to run. */
			ev->found = false;
			ev->open_errno = -rc;
			break;
		}
		note_writable(ev, root, &iw);
		cur = iw.fd;
		st = iw.st;
		ev->exe_dev = st.st_dev;
		ev->exe_ino = st.st_ino;
	}
	sbx_walk_free(&iw);
	free(filename);
	ev->expect_argv = argv;
}

static void set_refusal(struct sbx_exec_event *ev, int err, const char *why)
{
	if (!ev->refuse_errno) {
		ev->refuse_errno = err;
		ev->refuse_reason = wd_strdup(why);
	}
}

/*
 * Finds the program as the caller's exec will (ident.c: in the caller's
 * root, cwd and credentials), fills the path strings, the identity the exec
 * event must show, and whether the agent can have written the program. When
 * nothing races, this is the file the exec opens; when something does, the
 * exec event compares identities and kills the difference (sbx_verify_exec),
 * so a lookup that is right when nothing races is all the decision needs.
 */
static void resolve(struct sbx_exec_event *ev, int root, int dirfd, int flags, const uint32_t *ids)
{
	wd_autoclose int cwdfd = -1;
	wd_autoclose int dirbase = -1; /* execveat's dirfd, as the caller has it */
	wd_autoclose int own_root = -1;
	int base = -1; /* where a relative path starts: dirbase or cwdfd */
	char *base_path = NULL;
	if (ev->syscall_nr == __NR_execveat && dirfd != AT_FDCWD && ev->path_arg[0] != '/') {
		char what[32];
		snprintf(what, sizeof(what), "fd/%d", dirfd);
		base = dirbase = open_proc(ev->pid, what);
		base_path = proc_link(ev->pid, what);
	} else {
		if (ev->path_arg[0] != '/')
			base = caller_cwd(ev->pid, &cwdfd);
		base_path = ev->cwd ? wd_strdup(ev->cwd) : NULL;
	}
	if (ev->path_arg[0] == '/')
		ev->path = wd_strdup(ev->path_arg);
	else if (ev->path_arg[0] == '\0')
		ev->path = wd_strdup(base_path ? base_path : "?");
	else
		ev->path = wd_asprintf("%s/%s", base_path ? base_path : "?", ev->path_arg);
	free(base_path);
	if (root < 0)
		root = own_root = open_proc(ev->pid, "root");

	struct sbx_walk w;
	int rc = -ENOENT;
	if (root >= 0 && (ev->path_arg[0] != '\0' || (flags & AT_EMPTY_PATH)))
		rc = find_as_caller(ev, root, base, ev->path_arg, !(flags & AT_SYMLINK_NOFOLLOW),
				    ids, &w);
	if (rc < 0) {
		/* The exec would fail the same way: the caller answers with
		 * this errno and never lets the syscall continue. */
		ev->open_errno = -rc;
		return;
	}
	ev->resolved = fd_path(w.fd);
	note_writable(ev, root, &w);
	predict_image(ev, root, w.fd, w.st, dirfd, flags, &cwdfd, ids);
	sbx_walk_free(&w);
}

/* |len| bytes of NUL-separated arguments (buf[len] is a NUL), shell-quoted
 * and joined by spaces, as a command line is shown. */
static char *quote_args(const char *buf, size_t len)
{
	struct wd_sb sb = {0};
	size_t i = 0;
	while (i < len) {
		const char *s = buf + i;
		if (sb.len)
			wd_sb_putc(&sb, ' ');
		wd_sb_shell_quote(&sb, s);
		i += strlen(s) + 1;
	}
	return wd_sb_steal(&sb);
}

char *sbx_proc_cmdline(pid_t pid, size_t max)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/cmdline", pid);
	/* Read on the stack, like the decoder's pages (see there). */
	char buf[SBX_CMDLINE_MAX + 1];
	ssize_t n = wd_read_proc_into(p, buf, max < SBX_CMDLINE_MAX ? max : SBX_CMDLINE_MAX);
	return n < 0 ? NULL : quote_args(buf, (size_t)n);
}

void sbx_exec_event_free(struct sbx_exec_event *ev)
{
	if (!ev)
		return;
	free(ev->path_arg);
	free(ev->path);
	free(ev->resolved);
	free(ev->writable_why);
	free(ev->cwd);
	wd_strv_free(ev->argv);
	wd_strv_free(ev->envp);
	free(ev->interp);
	wd_strv_free(ev->expect_argv);
	free(ev->refuse_reason);
	free(ev->parent_cmdline);
	if (ev->pidfd >= 0)
		close(ev->pidfd);
	free(ev);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t digest_of(const struct sbx_exec_event *ev)
{
	uint64_t h = 14695981039346656037ULL;
	h = fnv(h, &ev->dev, sizeof(ev->dev));
	h = fnv(h, &ev->ino, sizeof(ev->ino));
	for (size_t i = 0; ev->argv && ev->argv[i]; i++)
		h = fnv(h, ev->argv[i], strlen(ev->argv[i]) + 1);
	h = fnv(h, "\n", 1);
	for (size_t i = 0; ev->envp && ev->envp[i]; i++)
		h = fnv(h, ev->envp[i], strlen(ev->envp[i]) + 1);
	return h;
}

/* PIDFD_GET_INFO (Linux 6.13, linux/pidfd.h; defined here for older
 * headers). */
struct wd_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid;
	uint32_t ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	uint32_t spare0;
};
#define WD_PIDFD_INFO_PID (1ULL << 0)
#define WD_PIDFD_GET_INFO _IOWR(0xFF, 11, struct wd_pidfd_info)

#define WD_PIDFD_INFO_CREDS (1ULL << 1)

/* The ids of the process behind |pidfd|, and its credentials into |ids|
 * (ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid) when |ids| is not NULL
 * and the kernel said them (*have_ids). */
static bool pidfd_info(int pidfd, pid_t *tgid, pid_t *ppid, uint32_t *ids, bool *have_ids)
{
	static bool unsupported;
	if (have_ids)
		*have_ids = false;
	if (pidfd < 0 || unsupported)
		return false;
	struct wd_pidfd_info info = {.mask = WD_PIDFD_INFO_PID | (ids ? WD_PIDFD_INFO_CREDS : 0)};
	if (ioctl(pidfd, WD_PIDFD_GET_INFO, &info) < 0) {
		if (errno == ENOTTY || errno == EINVAL)
			unsupported = true;
		return false;
	}
	if (ids && (info.mask & WD_PIDFD_INFO_CREDS)) {
		uint32_t v[8] = {info.ruid, info.rgid, info.euid,  info.egid,
				 info.suid, info.sgid, info.fsuid, info.fsgid};
		memcpy(ids, v, sizeof(v));
		*have_ids = true;
	}
	if (!(info.mask & WD_PIDFD_INFO_PID) || info.tgid == 0)
		return false;
	*tgid = (pid_t)info.tgid;
	*ppid = (pid_t)info.ppid;
	return true;
}

bool sbx_pidfd_ids(int pidfd, pid_t *tgid, pid_t *ppid)
{
	return pidfd_info(pidfd, tgid, ppid, NULL, NULL);
}

/*
 * The caller's command line, for the request shown to the decision. Where
 * warden saw the caller's arguments at its own exec event, or its parent's
 * (a process made by fork keeps its creator's arg_start and arg_end), it
 * reads the caller's memory there, in the same reads as the rest: if the
 * bytes are exactly the ones seen, they are what /proc/PID/cmdline would
 * show (it reads from arg_start to arg_end, and stops at the last NUL, which
 * the bytes end with), and the /proc file, which the kernel builds a dentry
 * and an inode for at a new pid's first exec, is not needed. Any other
 * bytes (a caller that rewrote its arguments, one forked before its
 * parent's last exec) send it to the /proc file. A caller can write what it
 * likes into its own arguments either way: the command line is what the
 * caller says it is, shown to the decision, never enforced.
 */
static char *caller_cmdline(struct rmem *m, pid_t pid, const struct sbx_args *hint)
{
	char buf[SBX_CMDLINE_MAX + 1];
	if (hint && hint->bytes && hint->len > 0 && hint->len <= SBX_CMDLINE_MAX &&
	    rmem_read(m, hint->at, buf, hint->len) == 0 &&
	    memcmp(buf, hint->bytes, hint->len) == 0) {
		buf[hint->len] = '\0';
		return quote_args(buf, hint->len);
	}
	return sbx_proc_cmdline(pid, SBX_CMDLINE_MAX);
}

int sbx_notify_recv(int fd, int root_fd, sbx_args_hint hint, void *hint_ctx,
		    struct sbx_exec_event **out, struct sbx_sock_event **sock)
{
	*out = NULL;
	*sock = NULL;
	int rc = load_sizes();
	if (rc < 0)
		return rc;
	wd_autofree struct seccomp_notif *req = wd_calloc(1, notif_size);
	for (;;) {
		memset(req, 0, notif_size);
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) == 0)
			break;
		if (errno == EINTR)
			continue;
		return -errno; /* ENOENT: the caller died before we got it */
	}
	if (sbx_sock_call(req->data.nr))
		return sbx_sock_decode(fd, req, sock);
	struct sbx_exec_event *ev = wd_calloc(1, sizeof(*ev));
	ev->pidfd = -1;
	ev->id = req->id;
	ev->pid = (pid_t)req->pid;
	ev->syscall_nr = req->data.nr;

	uint64_t path_a, argv_a, envp_a;
	int dirfd = AT_FDCWD, flags = 0;
	if (req->data.nr == __NR_execveat) {
		dirfd = (int)req->data.args[0];
		path_a = req->data.args[1];
		argv_a = req->data.args[2];
		envp_a = req->data.args[3];
		flags = (int)req->data.args[4];
	} else {
		path_a = req->data.args[0];
		argv_a = req->data.args[1];
		envp_a = req->data.args[2];
	}
	/* The pidfd first: opened before the id check below, it names the
	 * caller (see there), and it names its parent without /proc. */
	ev->pidfd = (int)syscall(SYS_pidfd_open, ev->pid, 0);
	/* Left 0 (unknown) when the kernel cannot say. */
	uint32_t ids[8];
	bool have_ids = false;
	(void)pidfd_info(ev->pidfd, &ev->tgid, &ev->ppid, ids, &have_ids);
	const struct sbx_args *args = hint ? hint(hint_ctx, ev->pid, ev->ppid) : NULL;
	uint64_t args_at = args && args->bytes ? args->at : 0;
	uint64_t args_end = args_at ? args->at + args->len - 1 : 0;
	size_t budget = 4096, envbytes = 0;
	/* On the stack (RPAGES pages): a heap block this size, taken and given back
	 * for every exec, costs malloc a consolidation each time. */
	struct rmem mem, *m = &mem;
	rmem_init(m, read_pid_page, &ev->pid);
	m->batch_pid = ev->pid;
	uint64_t first[] = {path_a, argv_a, envp_a, args_at, args_end};
	rmem_prefetch(m, first, WD_ARRAY_SIZE(first));
	/* Then the pages of the strings of both vectors, in one more read
	 * (peek_vector() finds them cached and reads nothing itself). */
	uint64_t strs[PREFETCH_MAX * 8] = {0};
	size_t nstrs = string_pages(m, argv_a, strs, WD_ARRAY_SIZE(strs) / 2);
	nstrs += string_pages(m, envp_a, strs + nstrs, WD_ARRAY_SIZE(strs) - nstrs);
	rmem_prefetch(m, strs, nstrs);
	rc = peek_string(m, path_a, 4096, &budget, &ev->path_arg);
	if (rc < 0) {
		ev->path_arg = wd_strdup("");
		set_refusal(ev, rc == -E2BIG ? ENAMETOOLONG : EFAULT,
			    rc == -E2BIG ? "the program path is longer than 4096 bytes"
					 : "the program path could not be read");
	}
	rc = peek_vector(m, argv_a, SBX_ARGV_MAX, &ev->argv, &ev->argv_bytes);
	if (rc < 0) {
		ev->argv = wd_calloc(1, sizeof(char *));
		set_refusal(ev, rc == -E2BIG ? E2BIG : EFAULT,
			    rc == -E2BIG ? "its argv is over 256 KiB in all"
					 : "its argv could not be read");
	} else if (!ev->argv[0]) {
		set_refusal(ev, EINVAL, "an exec with an empty argv hides what it runs");
	}
	rc = peek_vector(m, envp_a, SBX_ENV_MAX, &ev->envp, &envbytes);
	if (rc < 0) {
		ev->envp = wd_calloc(1, sizeof(char *));
		set_refusal(ev, rc == -E2BIG ? E2BIG : EFAULT,
			    rc == -E2BIG ? "its environment is over 1 MiB in all"
					 : "its environment could not be read");
	}
	ev->cwd = proc_link(ev->pid, "cwd");
	/* A thread's cmdline is its process's (one mm). */
	ev->parent_cmdline = caller_cmdline(m, ev->pid, args);
	resolve(ev, root_fd, dirfd, flags, have_ids ? ids : NULL);
	ev->digest = digest_of(ev);

	/* Everything above may have read a recycled pid if the caller died:
	 * the id check says whether it was still our caller all along (and
	 * so whose the pidfd is). */
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &ev->id) < 0) {
		sbx_exec_event_free(ev);
		return -ENOENT;
	}
	*out = ev;
	return 0;
}

static int respond(int fd, uint64_t id, int err, uint32_t flags)
{
	int rc = load_sizes();
	if (rc < 0)
		return rc;
	wd_autofree struct seccomp_notif_resp *resp = wd_calloc(1, resp_size);
	resp->id = id;
	resp->error = err ? -err : 0;
	resp->val = 0;
	resp->flags = flags;
	for (;;) {
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp) == 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

bool sbx_notify_id_valid(int fd, uint64_t id)
{
	return ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

int sbx_notify_allow(int fd, uint64_t id)
{
	return respond(fd, id, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

int sbx_notify_deny(int fd, uint64_t id, int err)
{
	return respond(fd, id, err > 0 ? err : EACCES, 0);
}

/* Reads a NUL-separated /proc file and compares it with |want|: one read
 * of exactly what |want| holds plus a byte (the kernel fills the count in
 * one call; more than |want| is a mismatch either way). */
static bool proc_vector_equals(pid_t pid, const char *what, char *const *want)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	char *buf = NULL;
	size_t len = 0, need = 0;
	for (size_t k = 0; want && want[k]; k++)
		need += strlen(want[k]) + 1;
	if (wd_read_proc(p, need, &buf, &len) < 0)
		return false;
	size_t off = 0, i = 0;
	bool ok = true;
	for (; want && want[i]; i++) {
		size_t l = strlen(want[i]);
		if (off + l + 1 > len || memcmp(buf + off, want[i], l + 1) != 0) {
			ok = false;
			break;
		}
		off += l + 1;
	}
	if (ok && off != len)
		ok = false;
	free(buf);
	return ok;
}

#if defined(__x86_64__)
/* The string at |addr| in |buf| (the |got| bytes read from |start|), when it
 * lies whole in it. */
static const char *stack_string(const char *buf, uint64_t start, size_t got, uint64_t addr)
{
	if (addr < start || addr - start >= got)
		return NULL;
	size_t off = addr - start;
	return memchr(buf + off, '\0', got - off) ? buf + off : NULL;
}

/* Whether the NULL-terminated pointer array at |off| in |buf| names exactly
 * the strings of |want|. */
static bool stack_vector_equals(const char *buf, uint64_t start, size_t got, size_t off,
				char *const *want)
{
	size_t i = 0;
	for (;; i++) {
		uint64_t ptr;
		if (off + (i + 1) * sizeof(ptr) > got)
			return false;
		memcpy(&ptr, buf + off + i * sizeof(ptr), sizeof(ptr));
		if (!want || !want[i])
			return ptr == 0;
		const char *s = stack_string(buf, start, got, ptr);
		if (!s || strcmp(s, want[i]) != 0)
			return false;
	}
}

/*
 * At the exec event the new image has not run an instruction: from its
 * stack pointer up lie argc, the argv pointers and a NULL, the envp pointers
 * and a NULL, the auxiliary vector, and above them the strings those
 * pointers name (fs/binfmt_elf.c, create_elf_tables). One read of that span
 * shows exactly the argv and envp the program will see, where the /proc
 * files cost two opens. Returns true only when everything is there and
 * equal; anything else (a smaller read, a 32-bit image, a difference) sends
 * the caller to the /proc check, which decides.
 */
/* Where the strings of the argv at |off| in |buf| start, when they lie end
 * to end as the kernel copies them (so that they are exactly the bytes
 * from arg_start to arg_end): fills |args| and returns true. */
static bool stack_args(const char *buf, size_t got, size_t off, char *const *argv,
		       struct sbx_args *args)
{
	uint64_t first = 0;
	size_t len = 0;
	for (size_t i = 0; argv && argv[i]; i++) {
		uint64_t ptr;
		if (off + (i + 1) * sizeof(ptr) > got)
			return false;
		memcpy(&ptr, buf + off + i * sizeof(ptr), sizeof(ptr));
		if (i == 0)
			first = ptr;
		if (ptr != first + len)
			return false;
		len += strlen(argv[i]) + 1;
	}
	if (len == 0 || len > SBX_CMDLINE_MAX)
		return false;
	args->at = first;
	args->len = len;
	args->bytes = wd_malloc(len);
	for (size_t i = 0, o = 0; argv[i]; i++) {
		size_t n = strlen(argv[i]) + 1;
		memcpy(args->bytes + o, argv[i], n);
		o += n;
	}
	return true;
}

static bool stack_matches(pid_t pid, char *const *argv, char *const *envp, struct sbx_args *args)
{
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
		return false;
	size_t argc = 0, envc = 0, bytes = 0;
	for (; argv && argv[argc]; argc++)
		bytes += strlen(argv[argc]) + 1;
	for (; envp && envp[envc]; envc++)
		bytes += strlen(envp[envc]) + 1;
	uint64_t sp = regs.rsp, start = sp & ~(uint64_t)(SBX_PAGE_SIZE - 1);
	/* Pointers, then room for the auxiliary vector and the random bytes
	 * and platform string the kernel puts below the strings. */
	size_t span =
		(sp - start) + (argc + envc + 3) * sizeof(uint64_t) + 2 * SBX_PAGE_SIZE + bytes;
	size_t npages = (span + SBX_PAGE_SIZE - 1) / SBX_PAGE_SIZE;
	if (npages > 1024) /* IOV_MAX */
		return false;
	/* Usually two or three pages: on the stack, not the heap. */
	char small[4 * SBX_PAGE_SIZE];
	struct iovec small_l[4], small_rv[4];
	bool heap = npages > 4;
	char *buf = heap ? wd_malloc(npages * SBX_PAGE_SIZE) : small;
	struct iovec *l = heap ? wd_calloc(npages, sizeof(*l)) : small_l;
	struct iovec *rv = heap ? wd_calloc(npages, sizeof(*rv)) : small_rv;
	for (size_t i = 0; i < npages; i++) {
		l[i] = (struct iovec){.iov_base = buf + i * SBX_PAGE_SIZE,
				      .iov_len = SBX_PAGE_SIZE};
		rv[i] = (struct iovec){.iov_base = (void *)(uintptr_t)(start + i * SBX_PAGE_SIZE),
				       .iov_len = SBX_PAGE_SIZE};
	}
	/* Page by page: the read stops at the top of the stack. */
	ssize_t got = process_vm_readv(pid, l, npages, rv, npages, 0);
	if (heap) {
		free(l);
		free(rv);
	}
	bool ok = false;
	size_t off = sp - start;
	uint64_t n;
	if (got > 0 && off + sizeof(n) <= (size_t)got) {
		memcpy(&n, buf + off, sizeof(n));
		ok = n == argc &&
		     stack_vector_equals(buf, start, (size_t)got, off + sizeof(n), argv) &&
		     stack_vector_equals(buf, start, (size_t)got,
					 off + sizeof(n) + (argc + 1) * sizeof(uint64_t), envp);
		if (ok && args)
			stack_args(buf, (size_t)got, off + sizeof(n), argv, args);
	}
	if (heap)
		free(buf);
	return ok;
}
#else
static bool stack_matches(pid_t pid, char *const *argv, char *const *envp, struct sbx_args *args)
{
	(void)pid;
	(void)argv;
	(void)envp;
	(void)args;
	return false;
}
#endif

int sbx_verify_exec(pid_t pid, const struct sbx_exec_event *ev, struct sbx_args *args, char **why)
{
	char p[64];
	struct stat st;
	*why = NULL;
	if (args)
		*args = (struct sbx_args){0};
	snprintf(p, sizeof(p), "/proc/%d/exe", pid);
	if (stat(p, &st) < 0) {
		*why = wd_asprintf("the new image of pid %d cannot be checked: %s", pid,
				   strerror(errno));
		return -EPERM;
	}
	if (!ev->found || st.st_dev != ev->exe_dev || st.st_ino != ev->exe_ino) {
		char *exe = proc_link(pid, "exe");
		*why = wd_asprintf("the program that started (%s) is not the one decided (%s)",
				   exe ? exe : "?", ev->resolved ? ev->resolved : ev->path);
		free(exe);
		return -EPERM;
	}
	if (stack_matches(pid, ev->expect_argv, ev->envp, args))
		return 0;
	if (!proc_vector_equals(pid, "cmdline", ev->expect_argv)) {
		*why = wd_strdup("its argv changed between the decision and the exec");
		return -EPERM;
	}
	if (!proc_vector_equals(pid, "environ", ev->envp)) {
		*why = wd_strdup("its environment changed between the decision and the exec");
		return -EPERM;
	}
	return 0;
}

int sbx_program_identity(const struct sbx_places *pl, const char *path, char **resolved,
			 bool *agent_writable, char **why)
{
	*resolved = NULL;
	*agent_writable = false;
	*why = NULL;
	wd_autoclose int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	wd_autoclose int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || cwd < 0)
		return -errno;
	struct sbx_walk w;
	struct sbx_walk_caller c = {.pid = getpid()};
	int rc = sbx_walk_path(root, path[0] == '/' ? root : cwd, path, true, &c, &w);
	if (rc == 0)
		rc = exec_access(w.fd, &w.st);
	if (rc < 0) {
		sbx_walk_free(&w);
		return rc;
	}
	*resolved = fd_path(w.fd);
	struct sbx_exec_event ev = {0};
	const struct sbx_places *saved = notify_places;
	notify_places = pl;
	note_writable(&ev, root, &w);
	notify_places = saved;
	*agent_writable = ev.agent_writable;
	*why = ev.writable_why;
	sbx_walk_free(&w);
	return 0;
}
