/*
 * emul.c: the name-changing calls of the split view (rename, renameat,
 * renameat2, link, linkat, symlink, symlinkat, unlink, unlinkat, rmdir,
 * truncate), which the filter traps and the supervisor performs itself.
 *
 * Why perform and never continue: a call the kernel continues
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE) reads its strings again from the
 * caller's memory, which another thread of the caller can rewrite between
 * the check and the call ("src/x/a" becomes "src/x/HEAD"). Here the strings
 * are read once (rmem.c), into the supervisor's memory, and the call is
 * made with those bytes: what was seen is what is done.
 *
 * The decoding thread reads the call once (emul_decode.c, which says in
 * what order and why the names and directories are the caller's).
 *
 * A worker then makes the call with exactly those strings and descriptors.
 * Each worker is made the agent, once, when it starts (become_agent): its
 * own fs_struct (unshare(CLONE_FS)), the sandbox's mount namespace
 * (setns), the agent's root (chroot), the agent's uids, gids and groups
 * (raw system calls: the C library's would change every thread of the
 * supervisor), NO_NEW_PRIVS and a Landlock ruleset made from the agent's
 * writable places, then no capability in any set, for good. So the kernel
 * checks the call exactly as it checks the agent's own: permissions,
 * sticky directories, protected_hardlinks, Landlock, read-only mounts, and
 * the FUSE view, which decides what reaches it (and names the agent's
 * thread: sbx_emul_acting_for). The errno is the call's own.
 *
 * What differs (docs: /work/notes/split-emul.md): the worker is not in the
 * sandbox's pid namespace, so a name through /proc/self, /proc/thread-self
 * or /dev/fd (a link to /proc/self/fd) finds no "self" in the sandbox's
 * /proc and fails with ENOENT, instead of reaching the supervisor's
 * descriptors; linkat(fd, "", AT_EMPTY_PATH) fails with ENOENT, as the
 * kernel answers it for a descriptor opened under other credentials.
 */
#include "sandbox.h"
#include "creds_int.h"
#include "emul_int.h"
#include "jail_int.h"
#include "notify_int.h"

#include "common.h"
#include "policy.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define EMUL_MAX_WORKERS 64

/* ---------------------------------------------------------------------
 * The workers.
 * --------------------------------------------------------------------- */

/* Which agent thread each worker acts for now (0: none). Shared by every
 * emulation of the process (one per run). */
static struct {
	_Atomic pid_t tid;
	_Atomic pid_t acting_for;
} slots[EMUL_MAX_WORKERS];
static atomic_uint slots_used;

pid_t sbx_emul_acting_for(pid_t tid)
{
	unsigned n = atomic_load(&slots_used);
	for (unsigned i = 0; i < n && i < EMUL_MAX_WORKERS; i++)
		if (atomic_load(&slots[i].tid) == tid)
			return atomic_load(&slots[i].acting_for);
	return 0;
}

struct sbx_emul {
	int notify_fd;
	int mntns_fd;
	uint64_t mntns_id; /* the sandbox's mount namespace (split view) */
	int root_fd;
	char **writable;  /* NULL: no Landlock */
	int host_proc_fd; /* the host's /proc, opened before any setns */
	/* The split view: calls are resolved and fast ones decided here
	 * (perform_split), the fast list grows with the binder's mounts. */
	bool split;
	struct sbx_emul_fast fast;
	struct sbx_emul_binder *binder; /* NULL: no directory is bound later */
	char *project;
	const struct pol_config *policy;
	struct sbx_view *view;
	sbx_view_decide_fn decide;
	void *decide_arg;
	/* The detacher and the backer (emul_aux.c), or NULL. */
	struct sbx_emul_aux *detacher, *backer;
	struct sbx_creds creds;
	unsigned nworkers, want; /* started, and at most (under |lock|) */
	unsigned idle;		 /* workers waiting for a call (under |lock|) */
	pthread_t threads[EMUL_MAX_WORKERS];
	pthread_mutex_t lock;
	pthread_cond_t more, ready_cv;
	struct sbx_fs_event **queue;
	size_t qmax, qhead, qlen;
	bool stopping;
	unsigned ready, failed;
	int fail_err;
	atomic_uint_fast64_t performed, refused, overflow, decided;
};

/* Makes the calling thread the agent, for good (see the top of the
 * file). Only this thread changes: its fs_struct is its own after the
 * unshare, and credentials are per thread when set by raw system calls. */
static int become_agent(struct sbx_emul *e)
{
	if (unshare(CLONE_FS) < 0 || setns(e->mntns_fd, CLONE_NEWNS) < 0)
		return -errno;
	if (fchdir(e->root_fd) < 0 || chroot(".") < 0 || chdir("/") < 0)
		return -errno;
	int rc = sbx_emul_take_creds(&e->creds);
	if (rc < 0)
		return rc;
	if (e->writable) {
		int abi = 0;
		rc = sbx_jail_landlock(e->writable, &abi);
		if (rc < 0 && rc != -EOPNOTSUPP)
			return rc;
	}
	/* The agent has no capability: neither has the worker, in any set,
	 * the bounding set included. It never execs. */
	return sbx_jail_drop_caps();
}

/* A name that makes the call fail as reading it failed: a null pointer
 * faults (EFAULT); PATH_MAX bytes without a NUL are too long
 * (ENAMETOOLONG). The kernel then fails the call at the same step, after
 * the same earlier checks, as it would have for the caller. */
static char too_long[PATH_MAX + 1];

static const char *name_arg(const struct sbx_fs_event *ev, int i)
{
	if (ev->perr[i] == ENAMETOOLONG)
		return too_long;
	if (ev->perr[i])
		return (const char *)1; /* below mmap_min_addr: faults */
	return ev->path[i];
}

static int dir_arg(const struct sbx_fs_event *ev, int i)
{
	return ev->dirfd[i];
}

/* Makes the call of |ev| on the calling (agent-made) thread. 0 or -errno. */
static long perform(const struct sbx_fs_event *ev)
{
	const char *a = name_arg(ev, 0), *b = name_arg(ev, 1);
	long rc;
	switch (ev->op) {
	case SBX_FS_RENAME:
		rc = syscall(SYS_renameat2, dir_arg(ev, 0), a, dir_arg(ev, 1), b, ev->flags);
		break;
	case SBX_FS_LINK:
		rc = syscall(SYS_linkat, dir_arg(ev, 0), a, dir_arg(ev, 1), b, ev->flags);
		break;
	case SBX_FS_SYMLINK:
		rc = syscall(SYS_symlinkat, a, dir_arg(ev, 1), b);
		break;
	case SBX_FS_UNLINK:
		rc = syscall(SYS_unlinkat, dir_arg(ev, 0), a, ev->flags);
		break;
	case SBX_FS_TRUNCATE:
	default:
		/* No truncateat: a relative name starts from the cwd, which
		 * is this thread's own (its fs_struct). */
		if (ev->dirfd[0] != AT_FDCWD) {
			if (ev->dirfd[0] < 0)
				return -ENOENT;
			if (fchdir(ev->dirfd[0]) < 0)
				return -errno;
		}
		rc = syscall(SYS_truncate, a, ev->length);
		break;
	}
	return rc < 0 ? -errno : 0;
}

/* ---------------------------------------------------------------------
 * Calls in fast subtrees, decided here with the view's rules.
 *
 * Why a racing thread cannot win: the names are ours (read once); each
 * name's parent directory is resolved ONCE, as the agent, into an O_PATH
 * descriptor; the decision is made on that directory's path and the last
 * component; and the call is made on (that descriptor, that component).
 * A thread that renames a directory on the way, or swaps a symlink in the
 * path, after the decision changes nothing the call acts on: the call
 * never walks the path again. What the last component names can change
 * only by another name change in that directory (a rename or link over
 * it), which is itself trapped here and decided; a write by the user
 * outside is not the agent's race.
 * --------------------------------------------------------------------- */

struct side {
	int pfd;	/* O_PATH of the parent directory, or -1 */
	char *last;	/* the last component, trailing slashes kept */
	char *rel;	/* project-relative path of the name, or NULL */
	char *prel;	/* project-relative path of the parent ("": the root), or NULL */
	bool fast;	/* the parent is on a fast mount */
	struct stat st; /* what the name holds now (lstat), when |have| */
	bool have;
	int ofd; /* a followed object (follow_side), or -1 */
	int err; /* why the parent could not be opened (errno), or 0 */
};

static void side_free(struct side *s)
{
	if (s->pfd >= 0)
		close(s->pfd);
	if (s->ofd >= 0)
		close(s->ofd);
	free(s->last);
	free(s->rel);
	free(s->prel);
}

static bool is_fast_mount(struct sbx_emul *e, int fd)
{
	uint64_t id = 0;
	return sbx_jail_mnt_id(fd, &id) == 0 && sbx_emul_fast_has(&e->fast, id);
}

/* The project-relative path of |fd| (+ "/" |last|), as the kernel names it
 * now ("" for the project itself), or NULL when it is not below the
 * project. */
static char *rel_of(const struct sbx_emul *e, int fd, const char *last)
{
	char link[64], buf[PATH_MAX];
	snprintf(link, sizeof(link), "thread-self/fd/%d", fd);
	ssize_t len = readlinkat(e->host_proc_fd, link, buf, sizeof(buf) - 1);
	if (len <= 0 || !e->project)
		return NULL;
	buf[len] = '\0';
	size_t pl = strlen(e->project);
	if (strcmp(buf, e->project) == 0)
		return wd_strdup(last ? last : "");
	if (strncmp(buf, e->project, pl) != 0 || buf[pl] != '/')
		return NULL;
	return last ? wd_asprintf("%s/%s", buf + pl + 1, last) : wd_strdup(buf + pl + 1);
}

/* A fast side on a mount no longer attached in the sandbox (the detacher
 * took it off for a rename or rmdir of its root, or the kernel did when the
 * view's entry below it went stale: what the agent holds open under it
 * stays usable) has a name relative to that mount's root, which a
 * directory chain made inside it can spell as anything below the project
 * ("src/home/u/proj/x" read as "x"): no name, so the call is refused
 * (perform_split). Checked after the names were read: nothing attaches a
 * mount again, so one attached now was attached then. */
static void unplace_detached(struct sbx_emul *e, struct side *s, int fd)
{
	if (s->fast && sbx_jail_mount_in_ns(fd, e->mntns_id) != 1) {
		free(s->rel);
		free(s->prel);
		s->rel = s->prel = NULL;
	}
}

/* Splits |path| into its parent and last component and resolves the
 * parent from |dirfd| as the calling (agent-made) thread. False when the
 * name has no separate last component ("/", "", ".", ".."): the call is
 * then made as it came, and the kernel refuses it. */
static bool resolve_side(struct sbx_emul *e, const char *path, int dirfd, struct side *s)
{
	*s = (struct side){.pfd = -1, .ofd = -1};
	if (!path)
		return false;
	size_t n = strlen(path), k = n;
	while (k > 0 && path[k - 1] == '/')
		k--;
	if (k == 0)
		return false;
	size_t j = k;
	while (j > 0 && path[j - 1] != '/')
		j--;
	wd_autofree char *lastname = wd_strndup(path + j, k - j);
	if (strcmp(lastname, ".") == 0 || strcmp(lastname, "..") == 0)
		return false;
	wd_autofree char *parent = j == 0 ? wd_strdup(".") : wd_strndup(path, j);
	s->pfd = openat(dirfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->pfd < 0) {
		s->err = errno;
		return false;
	}
	s->last = wd_strdup(path + j);
	s->fast = is_fast_mount(e, s->pfd);
	s->have = fstatat(s->pfd, lastname, &s->st, AT_SYMLINK_NOFOLLOW) == 0;
	s->rel = rel_of(e, s->pfd, lastname);
	s->prel = rel_of(e, s->pfd, NULL);
	unplace_detached(e, s, s->pfd);
	return true;
}

/* truncate(2) and linkat(AT_SYMLINK_FOLLOW) act on what a final symlink
 * names, which may be a sensitive file in a fast subtree behind a plain
 * name (and from a symlink in the FUSE part too). So the object is opened
 * once (O_PATH, following, as the agent), and both the decision (its
 * identity, its own path, its mount) and the call (through the host's
 * /proc/thread-self/fd/N of that descriptor) use it: a symlink swapped
 * after the decision changes nothing the call acts on. The error of the
 * open is the one the call's own walk gives. */
static bool follows(const struct sbx_fs_event *ev)
{
	return ev->op == SBX_FS_TRUNCATE ||
	       (ev->op == SBX_FS_LINK && (ev->flags & AT_SYMLINK_FOLLOW));
}

static int follow_side(struct sbx_emul *e, struct side *s)
{
	s->ofd = openat(s->pfd, s->last, O_PATH | O_CLOEXEC);
	if (s->ofd < 0)
		return -errno;
	s->fast = is_fast_mount(e, s->ofd);
	s->have = fstat(s->ofd, &s->st) == 0;
	free(s->rel);
	s->rel = rel_of(e, s->ofd, NULL);
	unplace_detached(e, s, s->ofd);
	return 0;
}

/* Whether the name of |s| (its path, its identity) is sensitive, a control
 * file, write-protected. */
static void classify(const struct sbx_emul *e, const struct side *s, bool *sens, bool *ctl,
		     bool *wprot)
{
	*sens = *ctl = *wprot = false;
	if (s->have)
		sbx_view_identity_of(e->view, s->st.st_dev, s->st.st_ino, sens, ctl);
	if (!s->rel)
		return;
	*sens = *sens || sbx_view_path_sensitive(e->policy, NULL, s->rel);
	*ctl = *ctl || pol_is_control(e->policy, s->rel, NULL);
	*wprot = sbx_view_path_write_protected(e->policy, NULL, s->rel);
}

static int decide(struct sbx_emul *e, const struct sbx_fs_event *ev, const char *p1, const char *p2,
		  unsigned access)
{
	if (!e->decide)
		return -EACCES; /* fail closed */
	struct sbx_view_request r = {
		.path = p1 ? p1 : "",
		.path2 = p2,
		.access = access,
		.pid = ev->pid,
		.uid = (uid_t)syscall(SYS_setfsuid, -1),
		.gid = (gid_t)syscall(SYS_setfsgid, -1),
	};
	atomic_fetch_add(&e->decided, 1);
	int rc = e->decide(e->decide_arg, &r);
	return rc == 0 ? 0 : rc < 0 && rc > -4096 && rc != -ENOSYS ? rc : -EACCES;
}

/* The view's rules for |ev| (view_names.c do_rename, do_remove, do_link,
 * do_make; view_attr.c for truncate): 0 to go on, or -errno. */
static int decide_fast(struct sbx_emul *e, const struct sbx_fs_event *ev, struct side *a,
		       struct side *b)
{
	bool s1, c1, w1, s2 = false, c2 = false, w2 = false;
	switch (ev->op) {
	case SBX_FS_RENAME: {
		classify(e, a, &s1, &c1, &w1);
		classify(e, b, &s2, &c2, &w2);
		if (w1 || w2)
			return -EROFS;
		bool dir1 = a->have && S_ISDIR(a->st.st_mode);
		bool dir2 = b->have && S_ISDIR(b->st.st_mode);
		bool below = false;
		if (a->rel && b->rel && dir1)
			below = pol_sensitive_below_differs(e->policy, a->rel, b->rel) ||
				pol_control_below_differs(e->policy, a->rel, b->rel);
		if (a->rel && b->rel && dir2 && (ev->flags & RENAME_EXCHANGE))
			below = below || pol_sensitive_below_differs(e->policy, b->rel, a->rel) ||
				pol_control_below_differs(e->policy, b->rel, a->rel);
		if (s1 || s2 || c1 || c2 || below)
			return decide(e, ev, a->rel, b->rel,
				      (s1 || c1 || below ? POL_ACC_RENAME_FROM : 0) |
					      (s2 || c2 || below ? POL_ACC_RENAME_TO : 0));
		return 0;
	}
	case SBX_FS_UNLINK:
		classify(e, a, &s1, &c1, &w1);
		if (w1)
			return -EROFS;
		if (!(ev->flags & AT_REMOVEDIR) && (s1 || c1))
			return decide(e, ev, a->rel, NULL, POL_ACC_DELETE);
		return 0;
	case SBX_FS_LINK:
		classify(e, a, &s1, &c1, &w1);
		classify(e, b, &s2, &c2, &w2);
		if (w1 || w2)
			return -EROFS;
		if (s1 || c1 || s2 || c2)
			return decide(e, ev, a->rel, b->rel, POL_ACC_LINK);
		return 0;
	case SBX_FS_SYMLINK:
		classify(e, b, &s2, &c2, &w2);
		if (w2)
			return -EROFS;
		if (s2 || c2 || (ev->path[0] && pol_is_sensitive(e->policy, ev->path[0], NULL)))
			return decide(e, ev, b->rel, ev->path[0], POL_ACC_SYMLINK);
		return 0;
	case SBX_FS_TRUNCATE:
	default:
		classify(e, a, &s1, &c1, &w1);
		if (w1)
			return -EROFS;
		if (s1 || c1)
			return decide(e, ev, a->rel, NULL, POL_ACC_TRUNCATE);
		return 0;
	}
}

/* When the object of an rmdir or a rename (side |a|) is the root of a fast
 * subtree, detaches it. 0 (detached or nothing to do) or -errno. */
static int detach_fast_root(struct sbx_emul *e, const struct sbx_fs_event *ev, const struct side *a)
{
	bool rm = ev->op == SBX_FS_UNLINK && (ev->flags & AT_REMOVEDIR);
	if ((!rm && ev->op != SBX_FS_RENAME) || !a->have || !S_ISDIR(a->st.st_mode))
		return 0;
	size_t n = strlen(a->last);
	while (n > 1 && a->last[n - 1] == '/')
		n--;
	wd_autofree char *name = wd_strndup(a->last, n);
	wd_autoclose int fd = openat(a->pfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	struct statx sx;
	if (fd < 0 || statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0 ||
	    !(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) || !is_fast_mount(e, fd))
		return 0;
	/* The detacher (emul_aux.c) unmounts exactly this descriptor's
	 * mount: see there why a rename meanwhile cannot change which. */
	return sbx_emul_detach(e->detacher, fd);
}

/* |ev| (a rename or link the sandbox answered EXDEV, decided) between two
 * fast subtrees of this project: made on the backing tree by the backer
 * (emul_aux.c says why that gives the agent nothing more and why a race
 * cannot make it act elsewhere). 0 or -errno. */
static long across_fast(struct sbx_emul *e, const struct sbx_fs_event *ev, const struct side *a,
			const struct side *b)
{
	if (!e->backer || !a->fast || !b->fast || !a->prel || !b->prel)
		return -EXDEV;
	struct sbx_emul_bside x = {a->pfd, a->prel, a->last, a->have, a->st};
	struct sbx_emul_bside y = {b->pfd, b->prel, b->last, b->have, b->st};
	return sbx_emul_backer_call(e->backer, ev->op, ev->flags, &x, &y);
}

/* The mount ids of |a|'s and |b|'s parents are the same. */
static bool same_mount(int fa, int fb)
{
	struct statx x, y;
	return statx(fa, "", AT_EMPTY_PATH, STATX_MNT_ID, &x) == 0 &&
	       statx(fb, "", AT_EMPTY_PATH, STATX_MNT_ID, &y) == 0 &&
	       (x.stx_mask & y.stx_mask & STATX_MNT_ID) && x.stx_mnt_id == y.stx_mnt_id;
}

/* The call of |ev| on the resolved sides (see above). */
static long perform_sides(struct sbx_emul *e, const struct sbx_fs_event *ev, struct side *a,
			  struct side *b)
{
	long rc;
	switch (ev->op) {
	case SBX_FS_RENAME:
		rc = syscall(SYS_renameat2, a->pfd, a->last, b->pfd, b->last, ev->flags);
		break;
	case SBX_FS_LINK:
		if (a->ofd >= 0) {
			/* The followed object itself (follow_side). */
			char link[64];
			snprintf(link, sizeof(link), "thread-self/fd/%d", a->ofd);
			rc = syscall(SYS_linkat, e->host_proc_fd, link, b->pfd, b->last,
				     AT_SYMLINK_FOLLOW);
		} else {
			rc = syscall(SYS_linkat, a->pfd, a->last, b->pfd, b->last, ev->flags);
		}
		break;
	case SBX_FS_SYMLINK:
		rc = syscall(SYS_symlinkat, name_arg(ev, 0), b->pfd, b->last);
		break;
	case SBX_FS_UNLINK:
		rc = syscall(SYS_unlinkat, a->pfd, a->last, ev->flags);
		break;
	case SBX_FS_TRUNCATE:
	default: {
		/* No truncateat: the file is opened O_PATH from the parent
		 * (following a final symlink, as truncate does; no open of
		 * its content), and truncated through the host's
		 * /proc/thread-self/fd, this thread's own. */
		if (a->ofd < 0)
			return -EBADF; /* follow_side opened it */
		char link[64];
		snprintf(link, sizeof(link), "thread-self/fd/%d", a->ofd);
		rc = fchdir(e->host_proc_fd) < 0 ? -1 : syscall(SYS_truncate, link, ev->length);
		break;
	}
	}
	return rc < 0 ? -errno : 0;
}

/* |ev| when the split view has fast subtrees: a call touching one is
 * decided and made on its resolved parents; any other as it came. */
static long perform_split(struct sbx_emul *e, const struct sbx_fs_event *ev)
{
	struct side a = {.pfd = -1, .ofd = -1}, b = {.pfd = -1, .ofd = -1};
	bool ra = false, rb = false;
	bool want_a = ev->op != SBX_FS_SYMLINK,
	     want_b = ev->op == SBX_FS_RENAME || ev->op == SBX_FS_LINK || ev->op == SBX_FS_SYMLINK;
	if (want_a && !ev->perr[0])
		ra = resolve_side(e, ev->path[0], ev->dirfd[0], &a);
	if (want_b && !ev->perr[1])
		rb = resolve_side(e, ev->path[1], ev->dirfd[1], &b);
	long rc = 0;
	/* A fast root as the object of an rmdir or a rename, or as the
	 * target a rename replaces or exchanges with: detached first, so
	 * that the call gets the kernel's own answer (ENOTEMPTY, 0), not
	 * the mount point's EBUSY. A rename whose parents are on different
	 * mounts is EXDEV either way: nothing is detached for it. (A fast
	 * root's parent is never fast: the subtrees are maximal.) The call
	 * is then made on the parents resolved before the detach (below):
	 * a name that walks through the root (a cwd inside it, "../../src")
	 * would stop at the detached mount's root if walked now. */
	bool rm = ev->op == SBX_FS_UNLINK;
	bool mv = ev->op == SBX_FS_RENAME && ra && rb && same_mount(a.pfd, b.pfd);
	if (ra && !a.fast && (rm || mv))
		rc = detach_fast_root(e, ev, &a);
	if (rc == 0 && mv && !b.fast && b.have && S_ISDIR(b.st.st_mode))
		rc = detach_fast_root(e, ev, &b);
	if (rc == 0 && ra && follows(ev))
		rc = follow_side(e, &a);
	if (rc < 0) {
		side_free(&a);
		side_free(&b);
		return rc;
	}
	/*
	 * Never walk a name again once its parent was looked at: a call whose
	 * parent was resolved onto the FUSE part (or could not be resolved)
	 * and then made by its path would let a racing thread point a symlink
	 * or a directory on the way into a fast subtree meanwhile, where
	 * nothing decides it. So a parent that could not be opened answers
	 * its own error (the call's walk gives the same one); a call whose
	 * sides are all resolved is made on those parents, fast or not (the
	 * FUSE view decides what reaches it there); only a name with no
	 * parent to resolve ("", "/", a last "." or "..", which the kernel
	 * refuses whatever the directories hold) is made as it came.
	 */
	bool all = (!want_a || ra) && (!want_b || rb);
	if (want_a && !ra && a.err)
		rc = -a.err;
	else if (want_b && !rb && b.err)
		rc = -b.err;
	else if (!all)
		rc = perform(ev); /* a side the kernel refuses anyway */
	else if ((a.fast && !a.rel) || (b.fast && !b.rel))
		/* A fast side whose name cannot be placed in the project: its
		 * path is longer than /proc can give back (PATH_MAX), or its
		 * mount was detached and is below nothing. The view's rules
		 * need the name (a HEAD there, a directory moved out of it):
		 * refused, never judged by its identity alone. */
		rc = -EACCES;
	else if (a.fast || b.fast) {
		rc = decide_fast(e, ev, &a, &b);
		if (rc == 0)
			rc = perform_sides(e, ev, &a, &b);
		/* Two fast subtrees: one file system natively. */
		if (rc == -EXDEV)
			rc = across_fast(e, ev, &a, &b);
	} else {
		rc = perform_sides(e, ev, &a, &b);
	}
	side_free(&a);
	side_free(&b);
	return rc;
}

struct worker_arg {
	struct sbx_emul *e;
	unsigned slot;
};

static void *worker(void *p)
{
	struct worker_arg wa = *(struct worker_arg *)p;
	free(p);
	struct sbx_emul *e = wa.e;
	atomic_store(&slots[wa.slot].tid, (pid_t)syscall(SYS_gettid));
	int rc = become_agent(e);
	pthread_mutex_lock(&e->lock);
	if (rc < 0) {
		e->failed++;
		e->fail_err = rc;
	} else {
		e->ready++;
	}
	pthread_cond_broadcast(&e->ready_cv);
	pthread_mutex_unlock(&e->lock);
	if (rc < 0) {
		atomic_store(&slots[wa.slot].tid, 0);
		return NULL;
	}
	for (;;) {
		pthread_mutex_lock(&e->lock);
		e->idle++;
		while (!e->stopping && e->qlen == 0)
			pthread_cond_wait(&e->more, &e->lock);
		e->idle--;
		if (e->stopping) {
			pthread_mutex_unlock(&e->lock);
			break;
		}
		struct sbx_fs_event *ev = e->queue[e->qhead];
		e->qhead = (e->qhead + 1) % e->qmax;
		e->qlen--;
		pthread_mutex_unlock(&e->lock);
		/* A caller killed while its call waited is not acted for. */
		if (sbx_notify_id_valid(e->notify_fd, ev->id)) {
			atomic_store(&slots[wa.slot].acting_for, ev->pid);
			uint64_t g = atomic_load(&e->fast.attached);
			long r = e->split ? perform_split(e, ev) : perform(ev);
			/* A mount attached while perform_split ran (emul_bind.c)
			 * can give EBUSY after the look, nothing done: again,
			 * the look detaches it. At most 3 calls, none for a
			 * caller gone; any other EBUSY is the answer. */
			bool mv = e->split && (ev->op == SBX_FS_RENAME || ev->op == SBX_FS_UNLINK);
			for (int i = 0;
			     mv && r == -EBUSY && i < 2 && sbx_emul_bound_since(&e->fast, &g) &&
			     sbx_notify_id_valid(e->notify_fd, ev->id);
			     i++)
				r = perform_split(e, ev);
			atomic_store(&slots[wa.slot].acting_for, 0);
			atomic_fetch_add(r < 0 ? &e->refused : &e->performed, 1);
			sbx_notify_answer(e->notify_fd, ev->id, r);
		}
		sbx_fs_event_free(ev);
	}
	atomic_store(&slots[wa.slot].tid, 0);
	return NULL;
}

/* Starts one more worker; with |e->lock| held. 0 or -errno. */
static int add_worker(struct sbx_emul *e)
{
	unsigned slot = atomic_fetch_add(&slots_used, 1);
	if (slot >= EMUL_MAX_WORKERS) {
		atomic_fetch_sub(&slots_used, 1);
		return -EAGAIN;
	}
	struct worker_arg *wa = wd_malloc(sizeof(*wa));
	*wa = (struct worker_arg){.e = e, .slot = slot};
	int rc = pthread_create(&e->threads[e->nworkers], NULL, worker, wa);
	if (rc != 0) {
		free(wa);
		return -rc;
	}
	e->nworkers++;
	return 0;
}

int sbx_emul_submit(struct sbx_emul *e, struct sbx_fs_event *ev)
{
	pthread_mutex_lock(&e->lock);
	bool room = !e->stopping && e->qlen < e->qmax;
	if (room) {
		e->queue[(e->qhead + e->qlen) % e->qmax] = ev;
		e->qlen++;
		pthread_cond_signal(&e->more);
		/* The pool grows when a call finds every worker busy, up to
		 * |want|; a worker whose set-up failed stops the growth (the
		 * others keep serving). A new worker takes calls only once it
		 * is the agent in every way: until then they wait queued. */
		if (e->qlen > e->idle + (e->nworkers - e->ready - e->failed) &&
		    e->nworkers < e->want && !e->failed)
			(void)add_worker(e);
	}
	pthread_mutex_unlock(&e->lock);
	if (room)
		return 0;
	/* Bounded: a flood of calls (each one a blocked thread of the
	 * agent) past the queue fails as a kernel short of memory would. */
	atomic_fetch_add(&e->overflow, 1);
	sbx_notify_answer(e->notify_fd, ev->id, -ENOMEM);
	sbx_fs_event_free(ev);
	return -EAGAIN;
}

static void emul_free(struct sbx_emul *e)
{
	for (size_t i = 0; i < e->qlen; i++)
		sbx_fs_event_free(e->queue[(e->qhead + i) % e->qmax]);
	free(e->queue);
	wd_strv_free(e->writable);
	sbx_creds_release(&e->creds);
	if (e->mntns_fd >= 0)
		close(e->mntns_fd);
	if (e->host_proc_fd >= 0)
		close(e->host_proc_fd);
	sbx_emul_binder_free(e->binder);
	sbx_emul_fast_free(&e->fast);
	free(e->project);
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->more);
	pthread_cond_destroy(&e->ready_cv);
	free(e);
}

void sbx_emul_stop(struct sbx_emul *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->stopping = true;
	pthread_cond_broadcast(&e->more);
	pthread_mutex_unlock(&e->lock);
	for (unsigned i = 0; i < e->nworkers; i++)
		pthread_join(e->threads[i], NULL);
	/* After the workers: no call waits on them; the binder's last
	 * attach is done. */
	sbx_emul_binder_stop(e->binder);
	sbx_emul_aux_stop(e->detacher);
	sbx_emul_aux_stop(e->backer);
	emul_free(e);
}

/* The project is among the agent's writable places (its Landlock
 * ruleset grants every right beneath it): the backer may act in it. */
static bool project_writable(const struct sbx_emul *e)
{
	for (size_t i = 0; e->project && e->writable && e->writable[i]; i++)
		if (wd_path_within(e->project, e->writable[i]))
			return true;
	return false;
}

/* The binder, when directories made later may be bound: a fanotify group
 * to mark them, a detacher to attach them and a run that may write (a
 * review run makes no directory). It gets its own copy of |backing_fd|. */
static void start_binder(struct sbx_emul *e, const struct sbx_emul_config *cfg, int backing_fd)
{
	if (!cfg->fan || !e->detacher || backing_fd < 0)
		return;
	struct sbx_emul_binder_config bc = {
		.fast = &e->fast,
		.detacher = e->detacher,
		.fan = cfg->fan,
		.backing_fd = fcntl(backing_fd, F_DUPFD_CLOEXEC, 0),
		.policy = cfg->policy,
		.keep = cfg->split_keep,
	};
	if (bc.backing_fd >= 0)
		(void)sbx_emul_binder_start(&bc, &e->binder);
}

int sbx_emul_start(const struct sbx_emul_config *cfg, struct sbx_emul **out)
{
	*out = NULL;
	memset(too_long, 'x', PATH_MAX);
	struct sbx_emul *e = wd_calloc(1, sizeof(*e));
	e->notify_fd = cfg->notify_fd;
	e->root_fd = cfg->root_fd;
	e->mntns_fd = e->host_proc_fd = -1;
	pthread_mutex_init(&e->lock, NULL);
	int backing_fd = cfg->backing_fd; /* taken */
	pthread_cond_init(&e->more, NULL);
	pthread_cond_init(&e->ready_cv, NULL);
	e->qmax = cfg->queue_max ? cfg->queue_max : 1024;
	e->queue = wd_calloc(e->qmax, sizeof(*e->queue));
	if (cfg->writable)
		e->writable = wd_strv_dup(cfg->writable, NULL);
	e->host_proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	sbx_emul_fast_init(&e->fast);
	for (size_t i = 0; i < cfg->nfast; i++)
		(void)sbx_emul_fast_add(&e->fast, cfg->fast[i].mnt_id, cfg->fast[i].rel);
	e->split = cfg->nfast > 0 || cfg->fan;
	e->project = cfg->project ? wd_strdup(cfg->project) : NULL;
	e->policy = cfg->policy;
	e->view = cfg->view;
	e->decide = cfg->decide;
	e->decide_arg = cfg->decide_arg;
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", cfg->agent_pid);
	e->mntns_fd = open(p, O_RDONLY | O_CLOEXEC);
	int rc = e->mntns_fd < 0 || e->host_proc_fd < 0
			 ? -errno
			 : sbx_creds_of(cfg->agent_pid, &e->creds, NULL, NULL);
	/* A fast side is named only on a mount attached there. */
	if (rc == 0 && e->split)
		rc = sbx_jail_mntns_id(e->mntns_fd, &e->mntns_id);
	if (rc < 0) {
		if (backing_fd >= 0)
			close(backing_fd);
		emul_free(e);
		return rc;
	}
	/* Without a detacher, a fast root stays busy (EBUSY) and no
	 * directory made later is bound; without a backer, a rename between
	 * fast subtrees stays EXDEV. */
	if (e->split)
		(void)sbx_emul_detacher_start(e->mntns_fd, e->root_fd, e->host_proc_fd, e->project,
					      &e->detacher);
	start_binder(e, cfg, backing_fd);
	if (e->split && backing_fd >= 0 && project_writable(e))
		(void)sbx_emul_backer_start(&e->creds, backing_fd, &e->backer);
	else if (backing_fd >= 0)
		close(backing_fd);
	/* One worker now, the rest when calls need them (sbx_emul_submit):
	 * each one's set-up (a mount namespace, a Landlock ruleset) costs a
	 * few milliseconds, and most sessions make few such calls. The first
	 * one's set-up is waited for, so a run whose workers cannot be made
	 * the agent does not start. */
	e->want = cfg->workers ? cfg->workers : 16;
	if (e->want > EMUL_MAX_WORKERS)
		e->want = EMUL_MAX_WORKERS;
	pthread_mutex_lock(&e->lock);
	rc = add_worker(e);
	while (rc == 0 && e->ready + e->failed < e->nworkers)
		pthread_cond_wait(&e->ready_cv, &e->lock);
	if (rc == 0 && e->failed)
		rc = e->fail_err;
	pthread_mutex_unlock(&e->lock);
	if (rc < 0) {
		sbx_emul_stop(e);
		return rc;
	}
	*out = e;
	return 0;
}

void sbx_emul_counts(struct sbx_emul *e, struct sbx_emul_counts *c)
{
	memset(c, 0, sizeof(*c));
	if (!e)
		return;
	c->performed = atomic_load(&e->performed);
	c->failed = atomic_load(&e->refused);
	c->overflow = atomic_load(&e->overflow);
	c->decided = atomic_load(&e->decided);
	sbx_emul_binder_counts(e->binder, &c->bound, &c->bind_failed);
}

void sbx_emul_made_dir(struct sbx_emul *e, const char *rel, dev_t dev, ino_t ino)
{
	if (e)
		sbx_emul_binder_queue(e->binder, rel, dev, ino);
}

void sbx_emul_stop_binding(struct sbx_emul *e)
{
	if (e)
		sbx_emul_binder_stop(e->binder);
}
