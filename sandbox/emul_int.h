/*
 * emul_int.h: what emul.c shares with emul_aux.c, the emulation's threads
 * that are not workers (the detacher and the backer). Not part of the
 * sandbox's interface: the supervisor uses sandbox.h.
 */
#ifndef WARDEN_EMUL_INT_H
#define WARDEN_EMUL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "creds_int.h"
#include "sandbox.h"

/* The agent's uids, gids and groups (as |c| says), and NO_NEW_PRIVS, for
 * the calling thread only (raw system calls: the C library's would change
 * every thread of the supervisor). 0 or -errno. */
int sbx_emul_take_creds(const struct sbx_creds *c);

/* The fast subtrees' mounts the emulation knows: the start ones
 * (sbx_child.fast), then the binder's. Workers read it without a lock
 * while the binder adds: the capacity is fixed, an entry never moves and
 * never changes once published, and it is written whole before the count
 * that makes it visible is stored (release; readers load it with
 * acquire). A detached mount's entry stays (what the agent holds open
 * under it is still decided as fast). */
#define SBX_EMUL_FAST_MAX 1024
struct sbx_emul_fast {
	uint64_t mnt[SBX_EMUL_FAST_MAX];
	char *rel[SBX_EMUL_FAST_MAX]; /* project-relative root when it was bound */
	atomic_size_t n;
	pthread_mutex_t add; /* one writer at a time */
	/* Attaches the detacher began so far (counted before each
	 * move_mount): a call that met EBUSY is made again only when one
	 * began while it ran (emul.c). */
	atomic_uint_fast64_t attached;
};

void sbx_emul_fast_init(struct sbx_emul_fast *l);
void sbx_emul_fast_free(struct sbx_emul_fast *l);
/* Whether mount id |mnt| is in |l|. */
bool sbx_emul_fast_has(struct sbx_emul_fast *l, uint64_t mnt);
/* Publishes (|mnt|, a copy of |rel|): 0, or -ENOSPC when full. */
int sbx_emul_fast_add(struct sbx_emul_fast *l, uint64_t mnt, const char *rel);
size_t sbx_emul_fast_count(struct sbx_emul_fast *l);
/* Whether a mount was attached since |*gen| (then updated). */
bool sbx_emul_bound_since(struct sbx_emul_fast *l, uint64_t *gen);

/* One thread that serves one request at a time. */
struct sbx_emul_aux;
/* Stops and joins it; safe with NULL. Call only once no caller waits. */
void sbx_emul_aux_stop(struct sbx_emul_aux *h);

/* The detacher: joins the mount namespace |mntns_fd| and the root
 * |root_fd|, opens the project's view at |project| (its path in the
 * sandbox; copied) and keeps its capabilities (the descriptors are
 * borrowed and must outlive it; |host_proc_fd| is the host's /proc). */
int sbx_emul_detacher_start(int mntns_fd, int root_fd, int host_proc_fd, const char *project,
			    struct sbx_emul_aux **out);
/* Unmounts (MNT_DETACH) the mount whose root |fd| (an O_PATH descriptor of
 * the caller's process) is. 0 or -errno. */
int sbx_emul_detach(struct sbx_emul_aux *h, int fd);

/* A directory made during the session, to attach over the view's entry
 * for it (emul_aux.c, the detacher's second act). */
struct sbx_emul_attach {
	int mnt_fd;   /* the detached, marked copy (the binder's) */
	uint64_t mnt; /* its mount id */
	const char *rel;
	ino_t ino; /* the backing directory's, checked by the binder */
	const struct pol_config *policy;
	const char *const *keep;
	struct sbx_emul_fast *fast; /* where it is published before it is attached */
	char *now;		    /* out: its project-relative place once attached */
};
/* The attach: 0 attached (|a->now| set, caller frees), 1 not needed (the
 * name lands in a fast mount already, or is no longer that directory on
 * the view), -EAGAIN when the name is not in the view yet, -errno failed
 * or taken back (nothing stays attached). */
int sbx_emul_attach(struct sbx_emul_aux *h, struct sbx_emul_attach *a);

/* The binder (emul_bind.c): makes directories made during the session
 * fast subtrees, on a thread of the supervisor's mount namespace. */
struct sbx_emul_binder;
struct sbx_emul_binder_config {
	struct sbx_emul_fast *fast;	 /* borrowed */
	struct sbx_emul_aux *detacher;	 /* borrowed: attaches in the sandbox */
	struct sbx_fan *fan;		 /* borrowed: marks, then watches */
	int backing_fd;			 /* O_PATH of the backing project (taken) */
	const struct pol_config *policy; /* borrowed */
	const char *const *keep;	 /* copied */
	bool read_only;
};
/* 0 and *out, or -errno (|c->backing_fd| is closed either way). */
int sbx_emul_binder_start(const struct sbx_emul_binder_config *c, struct sbx_emul_binder **out);
/* Queues |rel| (copied), made by the view with identity (dev, ino); never
 * blocks (a full queue counts it failed). */
void sbx_emul_binder_queue(struct sbx_emul_binder *b, const char *rel, dev_t dev, ino_t ino);
/* Stops and joins the thread (what is queued stays FUSE). Safe with NULL;
 * the queue refuses afterwards, the struct stays until _free. */
void sbx_emul_binder_stop(struct sbx_emul_binder *b);
void sbx_emul_binder_free(struct sbx_emul_binder *b);
void sbx_emul_binder_counts(struct sbx_emul_binder *b, uint64_t *bound, uint64_t *failed);

/* One side of a call made on the backing tree: the parent the worker
 * resolved in the sandbox (|pfd|, its project-relative path |prel|, ""
 * for the project's root), the last component, and what it held there. */
struct sbx_emul_bside {
	int pfd;
	const char *prel;
	const char *last;
	bool have;
	struct stat st;
};

/* The backer: the agent's credentials (|c|, read before this returns),
 * no capability, no Landlock domain, the supervisor's mount namespace;
 * |backing_fd| (taken, even on failure) is an O_PATH descriptor of the
 * project's backing tree. */
int sbx_emul_backer_start(const struct sbx_creds *c, int backing_fd, struct sbx_emul_aux **out);
/* The rename or link |op| with |flags| between |a| and |b|, made on the
 * backing tree when both parents and both objects are the ones the worker
 * saw (emul_aux.c says why that is safe). 0, -errno, or -EXDEV when
 * anything differs. */
long sbx_emul_backer_call(struct sbx_emul_aux *h, enum sbx_fs_op op, unsigned flags,
			  const struct sbx_emul_bside *a, const struct sbx_emul_bside *b);

#endif
