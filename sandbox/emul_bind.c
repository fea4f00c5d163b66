/*
 * emul_bind.c: directories made during the session become fast subtrees.
 * The split view picks its fast subtrees once, at start; a directory the
 * agent then makes in a FUSE directory (`mkdir obj`, a first
 * `node_modules/`) would stay FUSE for the whole session. The project's
 * view tells the binder of each mkdir it made; the binder, a thread of the
 * supervisor's mount namespace, makes a detached copy of that backing
 * directory and marks it, and the detacher (emul_aux.c), in the sandbox's
 * namespace, attaches it over the view's entry. Never from inside the
 * FUSE request: the attach looks the name up through the view.
 *
 * Also the fast list the workers read while the binder adds to it.
 * Design: docs/design.md, "The sandbox: the split view", "Directories
 * made during the session".
 */
#include "emul_int.h"
#include "jail_int.h"

#include "common.h"
#include "policy.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Directories waiting to be bound; past it a mkdir stays FUSE. */
#define BIND_QUEUE 256
/* How long a name the view made may take to reach the kernel. */
#define BIND_RETRY_MS 200

/* ---- the fast list ------------------------------------------------------ */

void sbx_emul_fast_init(struct sbx_emul_fast *l)
{
	atomic_init(&l->n, 0);
	atomic_init(&l->attached, 0);
	pthread_mutex_init(&l->add, NULL);
}

bool sbx_emul_bound_since(struct sbx_emul_fast *l, uint64_t *gen)
{
	uint64_t now = atomic_load(&l->attached);
	bool moved = now != *gen;
	*gen = now;
	return moved;
}

void sbx_emul_fast_free(struct sbx_emul_fast *l)
{
	size_t n = atomic_load(&l->n);
	for (size_t i = 0; i < n; i++)
		free(l->rel[i]);
	pthread_mutex_destroy(&l->add);
}

bool sbx_emul_fast_has(struct sbx_emul_fast *l, uint64_t mnt)
{
	/* Acquire: every entry below the count was written before it. */
	size_t n = atomic_load_explicit(&l->n, memory_order_acquire);
	for (size_t i = 0; i < n; i++)
		if (l->mnt[i] == mnt)
			return true;
	return false;
}

int sbx_emul_fast_add(struct sbx_emul_fast *l, uint64_t mnt, const char *rel)
{
	pthread_mutex_lock(&l->add);
	size_t n = atomic_load_explicit(&l->n, memory_order_relaxed);
	int rc = -ENOSPC;
	if (n < SBX_EMUL_FAST_MAX) {
		l->mnt[n] = mnt;
		l->rel[n] = wd_strdup(rel);
		/* Release: the entry is whole before a reader can count it. */
		atomic_store_explicit(&l->n, n + 1, memory_order_release);
		rc = 0;
	}
	pthread_mutex_unlock(&l->add);
	return rc;
}

size_t sbx_emul_fast_count(struct sbx_emul_fast *l)
{
	return atomic_load_explicit(&l->n, memory_order_acquire);
}

/* ---- the binder --------------------------------------------------------- */

struct bind_job {
	char *rel;
	dev_t dev;
	ino_t ino;
};

struct sbx_emul_binder {
	struct sbx_emul_fast *fast;
	struct sbx_emul_aux *detacher;
	struct sbx_fan *fan;
	int backing_fd;
	const struct pol_config *policy;
	char **keep;
	bool read_only;
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct bind_job q[BIND_QUEUE];
	size_t qhead, qlen;
	bool stop;
	atomic_uint_fast64_t bound, failed;
};

/* The backing directory |j| names, checked to be the one the view made,
 * as a detached copy (nosuid, nodev, read-only for review runs) marked in
 * the listener's group: nothing can open through it unwatched once it is
 * attached. The directory is reached without following a symlink or
 * leaving the project's file system (as spawn.c's start mounts). The
 * mount fd, its mount id in *mnt, or -errno. */
static int make_copy(struct sbx_emul_binder *b, const struct bind_job *j, uint64_t *mnt)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	wd_autoclose int dir = (int)syscall(SYS_openat2, b->backing_fd, j->rel, &how, sizeof(how));
	struct stat st;
	if (dir < 0 || fstat(dir, &st) < 0)
		return -errno;
	if (st.st_dev != j->dev || st.st_ino != j->ino)
		return -ESTALE; /* renamed or replaced since the mkdir */
	/* open_tree(OPEN_TREE_CLONE) copies a mount of THIS thread's
	 * namespace: the supervisor's, where the backing tree is. */
	wd_autoclose int m = sbx_jail_copy_dir(
		dir, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (b->read_only ? MOUNT_ATTR_RDONLY : 0),
		mnt);
	if (m < 0)
		return m;
	int rc = sbx_fan_mark_mount(b->fan, m);
	if (rc < 0)
		return rc;
	return wd_steal_fd(&m);
}

static bool stopping(struct sbx_emul_binder *b)
{
	pthread_mutex_lock(&b->mu);
	bool stop = b->stop;
	pthread_mutex_unlock(&b->mu);
	return stop;
}

static void bind_one(struct sbx_emul_binder *b, const struct bind_job *j)
{
	bool sens, ctl;
	/* The start walk's own test of a directory entry: a name the view
	 * must see stays FUSE (nothing to count). */
	if (sbx_split_entry_named(b->policy, (const char *const *)b->keep, j->rel, &sens, &ctl))
		return;
	if (sbx_emul_fast_count(b->fast) >= SBX_EMUL_FAST_MAX) {
		atomic_fetch_add(&b->failed, 1);
		return;
	}
	uint64_t mnt = 0;
	int m = make_copy(b, j, &mnt);
	if (m < 0) {
		atomic_fetch_add(&b->failed, 1);
		return;
	}
	struct sbx_emul_attach a = {
		.mnt_fd = m,
		.mnt = mnt,
		.rel = j->rel,
		.ino = j->ino,
		.policy = b->policy,
		.keep = (const char *const *)b->keep,
		.fast = b->fast,
	};
	/* The view tells of a mkdir as it replies: the kernel may not have
	 * the new name yet. Retried for at most BIND_RETRY_MS. */
	int rc = sbx_emul_attach(b->detacher, &a);
	for (int i = 0; rc == -EAGAIN && i < BIND_RETRY_MS && !stopping(b); i++) {
		usleep(1000);
		rc = sbx_emul_attach(b->detacher, &a);
	}
	/* Attached, the mount lives in the sandbox's tree; otherwise this
	 * close frees the copy (and its mark). */
	close(m);
	if (rc == 0) {
		atomic_fetch_add(&b->bound, 1);
		/* The watcher learns its directories (fan.c); the pre-marking
		 * walk skips it: it is new and small. */
		sbx_fan_watch_dir(b->fan, a.now);
		free(a.now);
	} else if (rc < 0) {
		atomic_fetch_add(&b->failed, 1);
	}
}

static void *binder_main(void *p)
{
	struct sbx_emul_binder *b = p;
	pthread_mutex_lock(&b->mu);
	for (;;) {
		while (!b->stop && b->qlen == 0)
			pthread_cond_wait(&b->cv, &b->mu);
		if (b->stop)
			break;
		struct bind_job j = b->q[b->qhead];
		b->qhead = (b->qhead + 1) % BIND_QUEUE;
		b->qlen--;
		pthread_mutex_unlock(&b->mu);
		bind_one(b, &j);
		free(j.rel);
		pthread_mutex_lock(&b->mu);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

int sbx_emul_binder_start(const struct sbx_emul_binder_config *c, struct sbx_emul_binder **out)
{
	struct sbx_emul_binder *b = wd_calloc(1, sizeof(*b));
	b->fast = c->fast;
	b->detacher = c->detacher;
	b->fan = c->fan;
	b->backing_fd = c->backing_fd;
	b->policy = c->policy;
	b->keep = c->keep ? wd_strv_dup((char *const *)c->keep, NULL) : NULL;
	b->read_only = c->read_only;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	int rc = pthread_create(&b->thread, NULL, binder_main, b);
	if (rc != 0) {
		sbx_emul_binder_free(b);
		return -rc;
	}
	b->started = true;
	*out = b;
	return 0;
}

void sbx_emul_binder_queue(struct sbx_emul_binder *b, const char *rel, dev_t dev, ino_t ino)
{
	if (!b)
		return;
	pthread_mutex_lock(&b->mu);
	bool room = !b->stop && b->qlen < BIND_QUEUE;
	if (room) {
		b->q[(b->qhead + b->qlen) % BIND_QUEUE] =
			(struct bind_job){.rel = wd_strdup(rel), .dev = dev, .ino = ino};
		b->qlen++;
		pthread_cond_signal(&b->cv);
	}
	pthread_mutex_unlock(&b->mu);
	if (!room)
		atomic_fetch_add(&b->failed, 1);
}

void sbx_emul_binder_stop(struct sbx_emul_binder *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = true;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	if (b->started)
		pthread_join(b->thread, NULL);
	b->started = false;
}

void sbx_emul_binder_free(struct sbx_emul_binder *b)
{
	if (!b)
		return;
	sbx_emul_binder_stop(b);
	for (size_t i = 0; i < b->qlen; i++)
		free(b->q[(b->qhead + i) % BIND_QUEUE].rel);
	wd_strv_free(b->keep);
	wd_close(&b->backing_fd);
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
	free(b);
}

void sbx_emul_binder_counts(struct sbx_emul_binder *b, uint64_t *bound, uint64_t *failed)
{
	*bound = b ? atomic_load(&b->bound) : 0;
	*failed = b ? atomic_load(&b->failed) : 0;
}
