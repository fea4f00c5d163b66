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
 * Order, in the decoding thread (the notification loop: capable, not
 * Landlocked, outside the sandbox's namespaces):
 *   1. read the names once;
 *   2. SECCOMP_IOCTL_NOTIF_ID_VALID: the pid read from was the caller
 *      all along (a recycled pid would have given another process's bytes);
 *   3. open the directories the names start from: the caller's dirfd
 *      (/proc/TID/fd/N) or cwd (/proc/TID/cwd), as O_PATH descriptors of
 *      our own, in the host's /proc;
 *   4. the id again: those descriptors are the caller's, not those of a
 *      process that took its pid meanwhile.
 * The descriptors are the supervisor's and are never passed to the agent.
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
#include "jail_int.h"
#include "notify_int.h"

#include "common.h"

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
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define EMUL_MAX_WORKERS 64

bool sbx_emul_call(int nr)
{
	switch (nr) {
	case __NR_rename:
	case __NR_renameat:
	case __NR_renameat2:
	case __NR_link:
	case __NR_linkat:
	case __NR_symlink:
	case __NR_symlinkat:
	case __NR_unlink:
	case __NR_unlinkat:
	case __NR_rmdir:
	case __NR_truncate:
		return true;
	default:
		return false;
	}
}

void sbx_fs_event_free(struct sbx_fs_event *ev)
{
	if (!ev)
		return;
	for (int i = 0; i < 2; i++) {
		free(ev->path[i]);
		if (ev->dirfd[i] >= 0)
			close(ev->dirfd[i]);
	}
	free(ev);
}

char *sbx_fs_event_describe(const struct sbx_fs_event *ev)
{
	const char *a = ev->path[0] ? ev->path[0] : "?";
	if (ev->op == SBX_FS_UNLINK || ev->op == SBX_FS_TRUNCATE)
		return wd_strdup(a);
	return wd_asprintf("%s -> %s", a, ev->path[1] ? ev->path[1] : "?");
}

/* Where each argument of |nr| is: the names' registers (-1: none), the
 * dirfds' (-1: the cwd), the flags' (-1: none). */
struct layout {
	enum sbx_fs_op op;
	int name[2], dir[2], flags;
	unsigned fixed; /* flags the call implies (rmdir: AT_REMOVEDIR) */
};

static struct layout layout_of(int nr)
{
	switch (nr) {
	case __NR_rename:
		return (struct layout){SBX_FS_RENAME, {0, 1}, {-1, -1}, -1, 0};
	case __NR_renameat:
		return (struct layout){SBX_FS_RENAME, {1, 3}, {0, 2}, -1, 0};
	case __NR_renameat2:
		return (struct layout){SBX_FS_RENAME, {1, 3}, {0, 2}, 4, 0};
	case __NR_link:
		return (struct layout){SBX_FS_LINK, {0, 1}, {-1, -1}, -1, 0};
	case __NR_linkat:
		return (struct layout){SBX_FS_LINK, {1, 3}, {0, 2}, 4, 0};
	case __NR_symlink:
		return (struct layout){SBX_FS_SYMLINK, {0, 1}, {-1, -1}, -1, 0};
	case __NR_symlinkat:
		return (struct layout){SBX_FS_SYMLINK, {0, 2}, {-1, 1}, -1, 0};
	case __NR_unlink:
		return (struct layout){SBX_FS_UNLINK, {0, -1}, {-1, -1}, -1, 0};
	case __NR_unlinkat:
		return (struct layout){SBX_FS_UNLINK, {1, -1}, {0, -1}, 2, 0};
	case __NR_rmdir:
		return (struct layout){SBX_FS_UNLINK, {0, -1}, {-1, -1}, -1, AT_REMOVEDIR};
	case __NR_truncate:
	default:
		return (struct layout){SBX_FS_TRUNCATE, {0, -1}, {-1, -1}, -1, 0};
	}
}

/* An O_PATH descriptor of the caller's directory |dirfd| (AT_FDCWD: its
 * cwd), through the host's /proc, or -1 when it names nothing (EBADF). */
static int fetch_dir(pid_t tid, int dirfd)
{
	char p[64];
	if (dirfd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%d/cwd", tid);
	else if (dirfd >= 0)
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", tid, dirfd);
	else
		return -1;
	return open(p, O_PATH | O_CLOEXEC);
}

int sbx_emul_decode(int fd, const struct seccomp_notif *req, struct sbx_fs_event **out)
{
	*out = NULL;
	struct sbx_fs_event *ev = wd_calloc(1, sizeof(*ev));
	ev->id = req->id;
	ev->pid = (pid_t)req->pid;
	ev->nr = req->data.nr;
	ev->dirfd[0] = ev->dirfd[1] = AT_FDCWD;
	struct layout l = layout_of(ev->nr);
	ev->op = l.op;
	ev->flags = l.fixed | (l.flags >= 0 ? (unsigned)req->data.args[l.flags] : 0);
	if (ev->op == SBX_FS_TRUNCATE)
		ev->length = (int64_t)req->data.args[1];
	struct sbx_rmem *m = wd_malloc(sizeof(*m));
	sbx_rmem_init(m, sbx_read_pid_page, &ev->pid);
	bool present[2] = {false, false};
	for (int i = 0; i < 2; i++) {
		if (l.name[i] < 0)
			continue;
		uint64_t addr = req->data.args[l.name[i]];
		if (addr == 0)
			continue; /* the kernel says what a null name means */
		size_t budget = PATH_MAX;
		int rc = sbx_rmem_string(m, addr, PATH_MAX, &budget, &ev->path[i]);
		if (rc < 0)
			ev->perr[i] = rc == -E2BIG ? ENAMETOOLONG : EFAULT;
		else
			present[i] = true;
	}
	free(m);
	if (!sbx_notify_id_valid(fd, ev->id)) {
		sbx_fs_event_free(ev);
		return -ENOENT;
	}
	/* The directories the names start from: a relative name's, a null
	 * name's (linkat's AT_EMPTY_PATH may take one), never a symlink's
	 * target (a string, not a lookup). */
	for (int i = 0; i < 2; i++) {
		if (l.name[i] < 0 || ev->perr[i] || (ev->op == SBX_FS_SYMLINK && i == 0))
			continue;
		if (present[i] && ev->path[i][0] == '/')
			continue;
		int dirfd = l.dir[i] < 0 ? AT_FDCWD : (int)req->data.args[l.dir[i]];
		ev->dirfd[i] = fetch_dir(ev->pid, dirfd);
	}
	if (!sbx_notify_id_valid(fd, ev->id)) {
		sbx_fs_event_free(ev);
		return -ENOENT;
	}
	*out = ev;
	return 0;
}

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
	int root_fd;
	char **writable; /* NULL: no Landlock */
	struct sbx_creds creds;
	unsigned nworkers;
	pthread_t threads[EMUL_MAX_WORKERS];
	unsigned slot[EMUL_MAX_WORKERS];
	pthread_mutex_t lock;
	pthread_cond_t more, ready_cv;
	struct sbx_fs_event **queue;
	size_t qmax, qhead, qlen;
	bool stopping;
	unsigned ready, failed;
	int fail_err;
	atomic_uint_fast64_t performed, refused, overflow;
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
	const struct sbx_creds *c = &e->creds;
	if (syscall(SYS_setgroups, c->ngroups, c->groups) < 0 ||
	    syscall(SYS_setresgid, c->gid[0], c->gid[1], c->gid[2]) < 0 ||
	    syscall(SYS_setresuid, c->uid[0], c->uid[1], c->uid[2]) < 0)
		return -errno;
	syscall(SYS_setfsgid, c->gid[3]);
	syscall(SYS_setfsuid, c->uid[3]);
	if ((gid_t)syscall(SYS_setfsgid, -1) != c->gid[3] ||
	    (uid_t)syscall(SYS_setfsuid, -1) != c->uid[3])
		return -EPERM;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (e->writable) {
		int abi = 0;
		int rc = sbx_jail_landlock(e->writable, &abi);
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
		while (!e->stopping && e->qlen == 0)
			pthread_cond_wait(&e->more, &e->lock);
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
			long r = perform(ev);
			atomic_store(&slots[wa.slot].acting_for, 0);
			atomic_fetch_add(r < 0 ? &e->refused : &e->performed, 1);
			sbx_notify_answer(e->notify_fd, ev->id, r);
		}
		sbx_fs_event_free(ev);
	}
	atomic_store(&slots[wa.slot].tid, 0);
	return NULL;
}

int sbx_emul_submit(struct sbx_emul *e, struct sbx_fs_event *ev)
{
	pthread_mutex_lock(&e->lock);
	bool room = !e->stopping && e->qlen < e->qmax;
	if (room) {
		e->queue[(e->qhead + e->qlen) % e->qmax] = ev;
		e->qlen++;
		pthread_cond_signal(&e->more);
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
	emul_free(e);
}

int sbx_emul_start(const struct sbx_emul_config *cfg, struct sbx_emul **out)
{
	*out = NULL;
	memset(too_long, 'x', PATH_MAX);
	struct sbx_emul *e = wd_calloc(1, sizeof(*e));
	e->notify_fd = cfg->notify_fd;
	e->root_fd = cfg->root_fd;
	e->mntns_fd = -1;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->more, NULL);
	pthread_cond_init(&e->ready_cv, NULL);
	e->qmax = cfg->queue_max ? cfg->queue_max : 1024;
	e->queue = wd_calloc(e->qmax, sizeof(*e->queue));
	if (cfg->writable)
		e->writable = wd_strv_dup(cfg->writable, NULL);
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", cfg->agent_pid);
	e->mntns_fd = open(p, O_RDONLY | O_CLOEXEC);
	int rc = e->mntns_fd < 0 ? -errno : sbx_creds_of(cfg->agent_pid, &e->creds, NULL, NULL);
	if (rc < 0) {
		emul_free(e);
		return rc;
	}
	unsigned want = cfg->workers ? cfg->workers : 16;
	for (unsigned i = 0; i < want; i++) {
		unsigned slot = atomic_fetch_add(&slots_used, 1);
		if (slot >= EMUL_MAX_WORKERS) {
			atomic_fetch_sub(&slots_used, 1);
			break;
		}
		struct worker_arg *wa = wd_malloc(sizeof(*wa));
		*wa = (struct worker_arg){.e = e, .slot = slot};
		if (pthread_create(&e->threads[e->nworkers], NULL, worker, wa) != 0) {
			free(wa);
			break;
		}
		e->nworkers++;
	}
	pthread_mutex_lock(&e->lock);
	while (e->ready + e->failed < e->nworkers)
		pthread_cond_wait(&e->ready_cv, &e->lock);
	rc = e->failed ? e->fail_err : e->nworkers == 0 ? -EAGAIN : 0;
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
}
