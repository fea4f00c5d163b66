/*
 * creds.c: a caller's credentials, read from /proc/PID/status, and taking
 * them on for the calling thread only.
 *
 * Only the calling thread changes: ids and groups by the raw system calls
 * (the C library's setgroups and setres*id would change every thread of
 * the supervisor), and the capability sets, which are per thread too. The
 * other threads (the view's workers, the decoder) keep theirs.
 */
#include "creds_int.h"

#include "common.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Reads the decimal numbers at |s| into |v| (room for |max|). Returns how
 * many. */
static size_t parse_ids(const char *s, unsigned long *v, size_t max)
{
	size_t n = 0;
	while (n < max) {
		char *end;
		unsigned long x = strtoul(s, &end, 10);
		if (end == s)
			break;
		v[n++] = x;
		s = end;
	}
	return n;
}

/* The Groups: line's numbers, into c->groups. */
static void parse_groups(const char *s, struct sbx_creds *c)
{
	size_t cap = 8;
	c->groups = wd_calloc(cap, sizeof(gid_t));
	for (;;) {
		char *end;
		unsigned long g = strtoul(s, &end, 10);
		if (end == s)
			break;
		if (c->ngroups == cap) {
			cap *= 2;
			c->groups = wd_realloc(c->groups, cap * sizeof(gid_t));
		}
		c->groups[c->ngroups++] = (gid_t)g;
		s = end;
	}
}

/* Bits of what /proc/PID/status said. */
enum {
	HAVE_TGID = 1,
	HAVE_THREADS = 2,
	HAVE_UID = 4,
	HAVE_GID = 8,
	HAVE_GROUPS = 16,
	HAVE_CAPEFF = 32
};

/* One line of /proc/PID/status. Returns the HAVE_ bit it filled, or 0. */
static int parse_line(const char *line, struct sbx_creds *c, pid_t *tgid, unsigned *threads)
{
	unsigned long v[4];
	unsigned u;
	if (sscanf(line, "Tgid: %u", &u) == 1) {
		*tgid = (pid_t)u;
		return HAVE_TGID;
	}
	if (sscanf(line, "Threads: %u", threads) == 1)
		return HAVE_THREADS;
	if (strncmp(line, "Uid:", 4) == 0 && parse_ids(line + 4, v, 4) == 4) {
		for (int i = 0; i < 4; i++)
			c->uid[i] = (uid_t)v[i];
		return HAVE_UID;
	}
	if (strncmp(line, "Gid:", 4) == 0 && parse_ids(line + 4, v, 4) == 4) {
		for (int i = 0; i < 4; i++)
			c->gid[i] = (gid_t)v[i];
		return HAVE_GID;
	}
	if (strncmp(line, "Groups:", 7) == 0) {
		free(c->groups);
		c->ngroups = 0;
		parse_groups(line + 7, c);
		return HAVE_GROUPS;
	}
	if (strncmp(line, "CapEff:", 7) == 0) {
		c->capeff = strtoull(line + 7, NULL, 16);
		return HAVE_CAPEFF;
	}
	return 0;
}

int sbx_creds_of(pid_t pid, struct sbx_creds *c, pid_t *tgid, unsigned *threads)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	memset(c, 0, sizeof(*c));
	char *buf = NULL;
	int rc = wd_read_proc(p, 1 << 16, &buf, NULL);
	if (rc < 0)
		return rc;
	pid_t tg = 0;
	unsigned nthreads = 0;
	int got = 0;
	/* Line by line: a line starts with its key, and the process's name
	 * (the first line, which the process sets) has its newlines escaped. */
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		got |= parse_line(line, c, &tg, &nthreads);
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	int want = HAVE_UID | HAVE_GID | HAVE_GROUPS | HAVE_CAPEFF | (tgid ? HAVE_TGID : 0) |
		   (threads ? HAVE_THREADS : 0);
	if ((got & want) != want) {
		sbx_creds_release(c);
		return -EIO;
	}
	if (tgid)
		*tgid = tg;
	if (threads)
		*threads = nthreads;
	return 0;
}

void sbx_creds_copy(struct sbx_creds *dst, const struct sbx_creds *src)
{
	*dst = *src;
	dst->groups = wd_calloc(src->ngroups ? src->ngroups : 1, sizeof(gid_t));
	memcpy(dst->groups, src->groups, src->ngroups * sizeof(gid_t));
}

void sbx_creds_release(struct sbx_creds *c)
{
	free(c->groups);
	memset(c, 0, sizeof(*c));
}
/*
 * The decoding thread's own credentials, read once per thread and kept
 * (struct sbx_creds_own).
 * Credentials are per thread, and a thread's change only by what it does
 * itself: in the supervisor, enter_for_lookup() changes them and
 * sbx_creds_leave() puts back exactly these values before it returns (or
 * the supervisor dies), and enter_for_good() runs on a thread that ends
 * (sock.c). Nothing else in the supervisor sets ids, groups or
 * capabilities once it runs (the child's jail does, in another process;
 * the view's workers set their own fsuid, on their own threads, whose
 * memo is their own). So what was read at a thread's first lookup is what
 * that thread has at every later one: no capget, setfsuid(-1),
 * setfsgid(-1) or getgroups per exec. A thread with more groups than fit
 * the memo reads them every time, as before.
 */
static __thread struct {
	bool have;
	struct sbx_creds_own c;
	gid_t groups[SBX_OWN_GROUPS_MAX];
} own_memo;

/* The calling thread's own fsuid, fsgid, groups and capability sets, into
 * |o| (its groups: the memo's, or o->heap, which sbx_creds_leave() frees). */
static int own_creds(struct sbx_creds_own *o)
{
	if (own_memo.have) {
		*o = own_memo.c;
		o->groups = own_memo.groups;
		return 0;
	}
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	if (syscall(SYS_capget, &h, o->caps) < 0)
		return -errno;
	/* setfsuid(-1) changes nothing and returns the current one. */
	o->fsuid = (uid_t)syscall(SYS_setfsuid, -1);
	o->fsgid = (gid_t)syscall(SYS_setfsgid, -1);
	int n = (int)syscall(SYS_getgroups, 0, NULL);
	if (n < 0)
		return -errno;
	bool fits = (size_t)n <= SBX_OWN_GROUPS_MAX;
	o->heap = fits ? NULL : wd_calloc((size_t)n, sizeof(gid_t));
	o->groups = fits ? own_memo.groups : o->heap;
	n = (int)syscall(SYS_getgroups, n, o->groups);
	if (n < 0) {
		int e = errno;
		free(o->heap);
		o->heap = NULL;
		return -e;
	}
	o->ngroups = (size_t)n;
	if (fits) {
		own_memo.c = *o;
		own_memo.have = true;
	}
	return 0;
}

static uint64_t own_eff(const struct sbx_creds_own *o)
{
	return (uint64_t)o->caps[1].effective << 32 | o->caps[0].effective;
}

static bool same_groups(const struct sbx_creds_own *o, const struct sbx_creds *c)
{
	return o->ngroups == c->ngroups &&
	       (o->ngroups == 0 || memcmp(o->groups, c->groups, o->ngroups * sizeof(gid_t)) == 0);
}

/* Sets the effective set to |eff|, the permitted and inheritable sets to
 * the thread's own (|o|): one capset, no capget. */
static int set_caps(const struct sbx_creds_own *o, uint64_t eff)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	memcpy(d, o->caps, sizeof(d));
	d[0].effective = (uint32_t)eff;
	d[1].effective = (uint32_t)(eff >> 32);
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/*
 * For a lookup: fsuid, fsgid and groups, and the effective capability set
 * cut down to the caller's. The permitted set stays, so sbx_creds_leave()
 * can always raise the effective set back. Each of them is changed only
 * when the caller's differs from the thread's own.
 */
static int enter_for_lookup(const struct sbx_creds *c, struct sbx_creds_saved *s)
{
	if (own_creds(&s->own) < 0)
		return -EPERM;
	uid_t fsuid = c->uid[3];
	gid_t fsgid = c->gid[3];
	bool ids = s->own.fsuid == fsuid && s->own.fsgid == fsgid && same_groups(&s->own, c);
	uint64_t mine = own_eff(&s->own);
	if (ids && (mine & ~c->capeff) == 0) {
		free(s->own.heap);
		s->own.heap = NULL;
		return 0; /* already the caller, in every way that counts */
	}
	s->changed = true;
	bool ok = true;
	if (!same_groups(&s->own, c)) {
		ok = syscall(SYS_setgroups, c->ngroups, c->groups) == 0;
		s->groups = ok;
	}
	if (ok && s->own.fsgid != fsgid) {
		syscall(SYS_setfsgid, fsgid);
		s->gid = true;
		ok = (gid_t)syscall(SYS_setfsgid, -1) == fsgid;
	}
	if (ok && s->own.fsuid != fsuid) {
		syscall(SYS_setfsuid, fsuid);
		s->uid = true;
		ok = (uid_t)syscall(SYS_setfsuid, -1) == fsuid;
	}
	/* A change of fsuid to or from 0 changes the effective set too (the
	 * kernel drops or raises the file system capabilities), so the set
	 * is then written whatever it holds. */
	if (ok && ((mine & ~c->capeff) != 0 || s->uid)) {
		s->caps = true;
		ok = set_caps(&s->own, mine & c->capeff) == 0;
	}
	if (!ok) {
		sbx_creds_leave(s);
		return -EPERM;
	}
	return 0;
}

int sbx_creds_set_ids(const struct sbx_creds *c)
{
	if (syscall(SYS_setgroups, c->ngroups, c->groups) < 0 ||
	    syscall(SYS_setresgid, c->gid[0], c->gid[1], c->gid[2]) < 0 ||
	    syscall(SYS_setresuid, c->uid[0], c->uid[1], c->uid[2]) < 0)
		return -errno;
	syscall(SYS_setfsgid, c->gid[3]);
	syscall(SYS_setfsuid, c->uid[3]);
	if ((gid_t)syscall(SYS_setfsgid, -1) != c->gid[3] ||
	    (uid_t)syscall(SYS_setfsuid, -1) != c->uid[3])
		return -EPERM;
	return 0;
}

/* For good: as root, every uid, gid and group; then no capability in any
 * set (the thread ends afterwards, nothing is put back). */
static int enter_for_good(const struct sbx_creds *c)
{
	int rc = geteuid() == 0 ? sbx_creds_set_ids(c) : 0;
	if (rc < 0)
		return rc;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

int sbx_creds_enter(const struct sbx_creds *c, enum sbx_creds_scope scope,
		    struct sbx_creds_saved *s)
{
	memset(s, 0, sizeof(*s));
	return scope == SBX_CREDS_FOR_GOOD ? enter_for_good(c) : enter_for_lookup(c, s);
}

void sbx_creds_leave(struct sbx_creds_saved *s)
{
	if (!s->changed)
		return;
	s->changed = false;
	/* Capabilities first: putting the ids back needs them. */
	bool ok = !s->caps || set_caps(&s->own, own_eff(&s->own)) == 0;
	if (s->uid) {
		syscall(SYS_setfsuid, s->own.fsuid);
		ok = ok && (uid_t)syscall(SYS_setfsuid, -1) == s->own.fsuid;
	}
	if (s->gid) {
		syscall(SYS_setfsgid, s->own.fsgid);
		ok = ok && (gid_t)syscall(SYS_setfsgid, -1) == s->own.fsgid;
	}
	if (s->groups)
		ok = ok && syscall(SYS_setgroups, s->own.ngroups, s->own.groups) == 0;
	if (!ok) {
		/* A supervisor that cannot be itself again cannot go on
		 * safely; its death ends the sandbox (PDEATHSIG, EXITKILL). */
		fprintf(stderr, "warden: cannot restore its own credentials\n");
		abort();
	}
	free(s->own.heap);
	s->own.heap = NULL;
}
