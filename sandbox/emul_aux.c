/*
 * emul_aux.c: the emulation's threads that are not workers (emul.c has the
 * workers). Each serves one request at a time for whichever worker asks:
 *
 * - the detacher unmounts a fast root before a call that would find it
 *   busy (it needs CAP_SYS_ADMIN and no Landlock domain, which the workers
 *   do not have), and attaches the binder's new fast subtrees (it is in
 *   the sandbox's mount namespace, which the binder is not);
 * - the backer makes a rename or link between two fast subtrees on the
 *   backing tree (it needs no Landlock domain and the supervisor's mount
 *   namespace, which the workers do not have).
 */
#include "emul_int.h"
#include "jail_int.h"

#include "common.h"
#include "policy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int sbx_emul_take_creds(const struct sbx_creds *c)
{
	int rc = sbx_creds_set_ids(c);
	if (rc < 0)
		return rc;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/* ---------------------------------------------------------------------
 * One thread, one request at a time.
 * --------------------------------------------------------------------- */

struct sbx_emul_aux {
	int (*init)(struct sbx_emul_aux *h); /* on the thread, once: 0 or -errno */
	long (*act)(struct sbx_emul_aux *h, const void *req);
	long refused; /* the answer when init failed */
	/* the detacher's; |view_fd| (the project's view root, O_PATH) and
	 * |view_dev| are its own, opened once it is in the sandbox */
	int mntns_fd, root_fd, host_proc_fd;
	char *project;
	int view_fd;
	dev_t view_dev;
	/* the backer's */
	const struct sbx_creds *creds; /* during init only */
	int backing_fd;
	pthread_t thread;
	pthread_mutex_t one; /* held by a caller for a whole request */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const void *req; /* the request, or NULL */
	long res;	 /* its answer */
	bool done, stop, started;
	int init_rc;
};

static void *aux_main(void *p)
{
	struct sbx_emul_aux *h = p;
	int rc = h->init(h);
	pthread_mutex_lock(&h->mu);
	h->init_rc = rc;
	h->started = true;
	pthread_cond_broadcast(&h->cv);
	for (;;) {
		while (!h->stop && !h->req)
			pthread_cond_wait(&h->cv, &h->mu);
		if (!h->req)
			break; /* stopped, nobody waiting */
		const void *req = h->req;
		/* The caller waits for this answer: |req| stays valid. */
		pthread_mutex_unlock(&h->mu);
		long res = rc == 0 ? h->act(h, req) : h->refused;
		pthread_mutex_lock(&h->mu);
		h->res = res;
		h->req = NULL;
		h->done = true;
		pthread_cond_broadcast(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static int aux_start(struct sbx_emul_aux *h)
{
	pthread_mutex_init(&h->one, NULL);
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	int rc = pthread_create(&h->thread, NULL, aux_main, h);
	if (rc != 0) {
		pthread_mutex_destroy(&h->one);
		pthread_mutex_destroy(&h->mu);
		pthread_cond_destroy(&h->cv);
		return -rc;
	}
	pthread_mutex_lock(&h->mu);
	while (!h->started)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
	return 0;
}

/* The answer of |req|. The thread answers every request it was given, and
 * it is stopped only when no caller waits: |req| outlives its use. */
static long aux_call(struct sbx_emul_aux *h, const void *req)
{
	pthread_mutex_lock(&h->one);
	pthread_mutex_lock(&h->mu);
	h->req = req;
	h->done = false;
	pthread_cond_broadcast(&h->cv);
	while (!h->done)
		pthread_cond_wait(&h->cv, &h->mu);
	long res = h->res;
	pthread_mutex_unlock(&h->mu);
	pthread_mutex_unlock(&h->one);
	return res;
}

void sbx_emul_aux_stop(struct sbx_emul_aux *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	h->stop = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->thread, NULL);
	if (h->backing_fd >= 0)
		close(h->backing_fd);
	if (h->view_fd >= 0)
		close(h->view_fd);
	free(h->project);
	pthread_mutex_destroy(&h->one);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
	free(h);
}

/* ---------------------------------------------------------------------
 * The detacher.
 *
 * A fast subtree's root is a mount point: rmdir and rename of it give
 * EBUSY. So its bind is detached first, in the sandbox's namespace, by the
 * detacher: a thread of the supervisor that joined that namespace and kept
 * its capabilities and no Landlock domain (Landlock forbids umount, the
 * workers have no CAP_SYS_ADMIN). The call is then made as it came, and
 * reaches the FUSE view's entry, which decides it as it decides any other
 * (the directory stays FUSE for the rest of the session); the detached
 * mount's id stays in the fast list, so what the agent still holds open
 * under it is decided as fast.
 *
 * Race: the worker hands the detacher the O_PATH descriptor it checked
 * (the mount's root, by mount id, on a fast mount), and the detacher
 * unmounts through the host's /proc/thread-self/fd/N, which is that very
 * mount: a rename of a directory on the path meanwhile cannot make it
 * unmount anything else (a hidden place's mount, say).
 * --------------------------------------------------------------------- */

/* The detacher's two acts. */
struct detacher_req {
	int fd;			   /* detach: the worker's descriptor of the root */
	struct sbx_emul_attach *a; /* attach, else NULL */
};

static int detacher_init(struct sbx_emul_aux *h)
{
	if (unshare(CLONE_FS) < 0 || setns(h->mntns_fd, CLONE_NEWNS) < 0 ||
	    fchdir(h->root_fd) < 0 || chroot(".") < 0)
		return -errno;
	/* The project's view: the top mount at the project's path, opened
	 * before the agent runs (the emulation starts before its first exec
	 * is answered). Without it the detacher still detaches; nothing is
	 * attached. */
	struct stat st;
	if (h->project) {
		h->view_fd = open(h->project, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (h->view_fd >= 0 && fstat(h->view_fd, &st) == 0)
			h->view_dev = st.st_dev;
		else
			wd_close(&h->view_fd);
	}
	return 0;
}

/* Unmounts the mount whose root the caller's |fd| is, through the host's
 * /proc/thread-self/fd/N of this process's table (shared by every thread),
 * so exactly that mount. */
static int unmount_fd(struct sbx_emul_aux *h, int fd)
{
	char link[64];
	snprintf(link, sizeof(link), "thread-self/fd/%d", fd);
	return fchdir(h->host_proc_fd) == 0 && umount2(link, MNT_DETACH) == 0 ? 0 : -errno;
}

/* The project-relative place of the mount |fd| is the root of, as this
 * thread (the sandbox's root and namespace) names it, or NULL when it is
 * not below the project. */
static char *place_of(struct sbx_emul_aux *h, int fd)
{
	char link[64], buf[PATH_MAX];
	snprintf(link, sizeof(link), "thread-self/fd/%d", fd);
	ssize_t len = readlinkat(h->host_proc_fd, link, buf, sizeof(buf) - 1);
	if (len <= 0)
		return NULL;
	buf[len] = '\0';
	size_t pl = strlen(h->project);
	if (strncmp(buf, h->project, pl) != 0 || buf[pl] != '/' || !buf[pl + 1])
		return NULL;
	return wd_strdup(buf + pl + 1);
}

/*
 * The attach of a directory made during the session (the binder made the
 * detached copy, marked it, and checked it is the backing directory the
 * view made). The target is resolved from the view's root without
 * following a symlink and without crossing a mount (RESOLVE_NO_XDEV): a
 * name whose parent became fast meanwhile, or that reaches a hidden
 * place's mount, is not the view's and is left alone. It must be a
 * directory of the view with the backing directory's inode number. The
 * mount is attached on THAT descriptor, so a rename after the check moves
 * nothing: the mount lands on the very directory checked, wherever it is
 * now. Its place is then read back; a directory renamed meanwhile to a
 * name the start walk would not have bound is unmounted at once.
 *
 * Why the window between the attach and that second look (or a race
 * around it) gives the agent nothing: every open in a fast mount is
 * decided by fanotify (marked before this attach) by the file's identity
 * and its CURRENT name, with the view's rules, so a file reached under
 * a sensitive or control name there is decided as through the view;
 * every name change there is trapped and decided by the emulation with
 * the view's rules (the mount is published in the fast list before it is
 * attached); a rename or link between it and the FUSE part is EXDEV. So
 * the only objects in a new mount are ones made in it (each open decided
 * at its name) or ones already decided. What is weaker than the FUSE view
 * there is what is weaker in any fast subtree: chmod, chown and utimes of
 * a sensitive file made in it are the kernel's to check, not decided.
 */
static long attach(struct sbx_emul_aux *h, struct sbx_emul_attach *a)
{
	if (h->view_fd < 0)
		return -ENOENT;
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	wd_autoclose int t = (int)syscall(SYS_openat2, h->view_fd, a->rel, &how, sizeof(how));
	if (t < 0 || !sbx_jail_is_view_dir(t, h->view_dev, a->ino))
		/* ENOENT: the view's reply to the mkdir may not have reached
		 * the kernel yet (its dentry is negative until then); else the
		 * name is in a fast mount already, or not that directory now. */
		return t < 0 && errno == ENOENT ? -EAGAIN : 1;
	int rc = sbx_emul_fast_add(a->fast, a->mnt, a->rel);
	if (rc < 0)
		return rc;
	/* Counted before the attach, not after: a worker whose call meets
	 * the new mount point (EBUSY) the moment move_mount returns must
	 * find the count moved, or it answers the agent EBUSY (emul.c). A
	 * failed attach costs at most one more try of a call that met an
	 * EBUSY of its own meanwhile. */
	atomic_fetch_add(&a->fast->attached, 1);
	if (syscall(SYS_move_mount, a->mnt_fd, "", t, "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	bool sens, ctl;
	a->now = place_of(h, a->mnt_fd);
	if (!a->now || sbx_split_entry_named(a->policy, a->keep, a->now, &sens, &ctl)) {
		free(a->now);
		a->now = NULL;
		rc = unmount_fd(h, a->mnt_fd);
		/* Not unmounted is still decided as fast (above); say so. */
		return rc < 0 ? rc : -EACCES;
	}
	return 0;
}

static long detacher_act(struct sbx_emul_aux *h, const void *req)
{
	const struct detacher_req *q = req;
	return q->a ? attach(h, q->a) : unmount_fd(h, q->fd);
}

int sbx_emul_detacher_start(int mntns_fd, int root_fd, int host_proc_fd, const char *project,
			    struct sbx_emul_aux **out)
{
	struct sbx_emul_aux *h = wd_calloc(1, sizeof(*h));
	*h = (struct sbx_emul_aux){.init = detacher_init,
				   .act = detacher_act,
				   .refused = -EPERM,
				   .mntns_fd = mntns_fd,
				   .root_fd = root_fd,
				   .host_proc_fd = host_proc_fd,
				   .project = project ? wd_strdup(project) : NULL,
				   .view_fd = -1,
				   .backing_fd = -1};
	int rc = aux_start(h);
	if (rc < 0) {
		free(h->project);
		free(h);
		return rc;
	}
	*out = h;
	return 0;
}

int sbx_emul_detach(struct sbx_emul_aux *h, int fd)
{
	struct detacher_req q = {.fd = fd};
	return h ? (int)aux_call(h, &q) : -EBUSY;
}

int sbx_emul_attach(struct sbx_emul_aux *h, struct sbx_emul_attach *a)
{
	struct detacher_req q = {.fd = -1, .a = a};
	return h ? (int)aux_call(h, &q) : -ENOSYS;
}

/* ---------------------------------------------------------------------
 * The backer.
 *
 * A rename or link between two fast subtrees (two bind mounts of the one
 * backing tree) is EXDEV in the sandbox, where it is one file system
 * natively. Once decided (emul.c, decide_fast), it is made on the BACKING
 * tree by the backer: a thread of the supervisor with the agent's uids,
 * gids and groups, NO_NEW_PRIVS and no capability in any set (as a
 * worker), but no Landlock domain and in the supervisor's own mount
 * namespace, where the backing tree is reached from the supervisor's
 * O_PATH descriptor of the project (backing_fd).
 *
 * Why no Landlock domain gives the agent nothing: the agent's ruleset
 * grants every right (REFER, REMOVE_*, MAKE_*) beneath each of its
 * writable places, and the project is one of them (emul.c checks it before
 * it starts a backer: without it, there is none). Both parents are inside
 * the project (RESOLVE_BENEATH from its backing descriptor) and are the
 * very directories the worker resolved as the agent, Landlock included
 * (below). So Landlock would have allowed this call; what else the kernel
 * checks (permissions of the same inodes with the same credentials, sticky
 * directories, protected_hardlinks, CAP_MKNOD for RENAME_WHITEOUT) it
 * checks here the same way. (The worker's Landlock domain cannot be used:
 * its rules name the sandbox's mounts, and the backing tree is reached
 * through another mount.)
 *
 * Why a racing thread cannot make it act elsewhere: each backing parent is
 * opened by the parent's project-relative name with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, and then
 * must be the SAME directory (st_dev, st_ino; a fast mount is a bind of
 * the backing tree) as the parent the worker resolved and decided in the
 * sandbox; a rename on the way meanwhile makes it another directory (or
 * none) and the call stays EXDEV. The call is made on those descriptors
 * and one name each, which must also hold the same object on both sides
 * as when it was decided (a name the sandbox covers with a mount is
 * another object there: refused). What that name holds can change after
 * the check only by another name change in that directory, itself trapped
 * and decided; nothing follows a symlink (a linkat with AT_SYMLINK_FOLLOW
 * is made without it once the name is known not to be a symlink: a
 * symlink swapped in meanwhile is linked itself, never followed on the
 * host; the link of a symlink's target stays EXDEV).
 *
 * No descriptor of the backing tree reaches the agent: the backer opens
 * and closes its two per call, and its copy of backing_fd (O_CLOEXEC) is
 * closed when it stops.
 * --------------------------------------------------------------------- */

struct backing_req {
	enum sbx_fs_op op;
	unsigned flags;
	const struct sbx_emul_bside *a, *b;
};

static int backer_init(struct sbx_emul_aux *h)
{
	int rc = sbx_emul_take_creds(h->creds);
	h->creds = NULL; /* the caller's, read once */
	return rc < 0 ? rc : sbx_jail_drop_caps();
}

/* The backing directory of |s|'s parent, verified to be the parent the
 * worker resolved, or -1. */
static int backing_parent(const struct sbx_emul_aux *h, const struct sbx_emul_bside *s)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	int fd = (int)syscall(SYS_openat2, h->backing_fd, s->prel[0] ? s->prel : ".", &how,
			      sizeof(how));
	struct stat want, got;
	if (fd >= 0 && (fstat(s->pfd, &want) < 0 || fstat(fd, &got) < 0 ||
			want.st_dev != got.st_dev || want.st_ino != got.st_ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Whether |s|'s name holds the same object (or nothing) in backing parent
 * |bfd| as it held in the sandbox. */
static bool same_object(const struct sbx_emul_bside *s, int bfd)
{
	size_t n = strlen(s->last);
	while (n > 1 && s->last[n - 1] == '/')
		n--;
	wd_autofree char *name = wd_strndup(s->last, n);
	struct stat st;
	if (fstatat(bfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return !s->have && errno == ENOENT;
	return s->have && st.st_dev == s->st.st_dev && st.st_ino == s->st.st_ino;
}

static long backer_act(struct sbx_emul_aux *h, const void *req)
{
	const struct backing_req *q = req;
	int pa = backing_parent(h, q->a), pb = pa >= 0 ? backing_parent(h, q->b) : -1;
	long rc = -EXDEV;
	unsigned flags = q->flags;
	if (pa < 0 || pb < 0 || !same_object(q->a, pa) || !same_object(q->b, pb))
		goto out;
	if (q->op == SBX_FS_LINK) {
		if (flags & AT_EMPTY_PATH)
			goto out;
		if (flags & AT_SYMLINK_FOLLOW) {
			if (q->a->have && S_ISLNK(q->a->st.st_mode))
				goto out;
			flags &= ~(unsigned)AT_SYMLINK_FOLLOW;
		}
		rc = syscall(SYS_linkat, pa, q->a->last, pb, q->b->last, flags);
	} else {
		rc = syscall(SYS_renameat2, pa, q->a->last, pb, q->b->last, flags);
	}
	rc = rc < 0 ? -errno : 0;
out:
	if (pa >= 0)
		close(pa);
	if (pb >= 0)
		close(pb);
	return rc;
}

int sbx_emul_backer_start(const struct sbx_creds *c, int backing_fd, struct sbx_emul_aux **out)
{
	struct sbx_emul_aux *h = wd_calloc(1, sizeof(*h));
	*h = (struct sbx_emul_aux){.init = backer_init,
				   .act = backer_act,
				   .refused = -EXDEV,
				   .mntns_fd = -1,
				   .root_fd = -1,
				   .host_proc_fd = -1,
				   .view_fd = -1,
				   .creds = c,
				   .backing_fd = backing_fd};
	int rc = aux_start(h);
	if (rc < 0) {
		close(backing_fd);
		free(h);
		return rc;
	}
	if (h->init_rc < 0) {
		rc = h->init_rc;
		sbx_emul_aux_stop(h);
		return rc;
	}
	*out = h;
	return 0;
}

long sbx_emul_backer_call(struct sbx_emul_aux *h, enum sbx_fs_op op, unsigned flags,
			  const struct sbx_emul_bside *a, const struct sbx_emul_bside *b)
{
	if (!h || (op != SBX_FS_RENAME && op != SBX_FS_LINK))
		return -EXDEV;
	struct backing_req q = {.op = op, .flags = flags, .a = a, .b = b};
	return aux_call(h, &q);
}
