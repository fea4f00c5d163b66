/*
 * fan_int.h: the split view's listener (fan.c) and its pre-marking walk
 * (fan_walk.c) share the listener's state. Not part of the sandbox
 * module's interface.
 */
#ifndef WARDEN_FAN_INT_H
#define WARDEN_FAN_INT_H

#include "sandbox.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/fanotify.h>
#include <sys/stat.h>

#ifndef FAN_MARK_EVICTABLE
#define FAN_MARK_EVICTABLE 0x00000200
#endif
#ifndef FAN_REPORT_TID
#define FAN_REPORT_TID 0x00000100
#endif

#define FAN_PERM_MASK	(FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM)
#define FAN_MAX_WORKERS SBX_VIEW_MAX_THREADS
#define FAN_MAX_DEPTH	128
#define FAN_PREMARK_MAX 190000
#define FAN_WORKER_IDLE 5 /* seconds a worker waits for more work */
#define FAN_DELETED	" (deleted)"

struct fan_watch;

/* An open waiting for the decide callback. */
struct fan_job {
	struct fan_job *next;
	int fd; /* the event's fd: the answer names it */
	pid_t tid;
	unsigned access;
	char *path;
};

struct sbx_fan {
	int group;
	int stop_efd;
	int backing_fd; /* O_PATH of the project, for the pre-marking walk */
	char *project;
	size_t plen;
	const struct pol_config *policy;
	sbx_view_decide_fn decide;
	void *decide_arg;
	struct sbx_view *view;
	char **fast; /* the fast roots (copied), for the pre-marking walk */
	size_t nfast;
	size_t premark_max;
	atomic_bool stopping;

	pthread_t reader, premarker, watcher;
	bool reader_started, premark_started, watcher_started;

	/* The watcher (watcher_main): inotify on the fast subtrees' backing
	 * directories; only its thread touches these. */
	int ino_fd;
	struct fan_watch *watches;
	size_t nwatches, capwatches;
	/* Fast subtrees bound during the session, for the watcher to take
	 * (sbx_fan_watch_dir): under |lock|, |more_efd| wakes it. */
	char **bound;
	size_t nbound;
	int more_efd;

	pthread_mutex_t lock; /* the queue and the worker counts */
	pthread_cond_t cond;  /* work queued, or a worker gone */
	struct fan_job *head, *tail;
	unsigned workers, idle;

	_Atomic uint64_t events, decided, marked, premarked, denied;
	_Atomic uint64_t premark_ns; /* the walk's time, once it ended */
	_Atomic int64_t premark_t0;  /* when it began (0: not yet) */
	/* The walk stands aside for the agent's commands (fan_walk.c):
	 * until |aside_until| (monotonic ns) unless |events| has grown by
	 * FAN_ASIDE_EVENTS past |aside_events|; |aside_ns| is the time it
	 * waited. Hints, read and written without a lock: a torn pair only
	 * moves when the walk goes on, never what it marks. */
	_Atomic int64_t aside_until;
	_Atomic uint64_t aside_events, aside_ns;
	size_t fast_subtrees, fast_files, fuse_dirs;
	size_t fast_left; /* of fast_subtrees, those init left to the view */
	/* The sandbox's mount namespace, where the fast mounts are attached
	 * (0 until sbx_fan_set_sandbox: then no name is trusted). */
	_Atomic uint64_t mntns_id;
};

/* Marks the inode open at |fd| (a regular file of identity |st|) unless
 * its identity is, or becomes meanwhile, sensitive or control (fan.c). */
bool sbx_fan_mark_plain(struct sbx_fan *f, int fd, const char *path, const struct stat *st);

/* The pre-marking walk's thread (fan_walk.c). */
void *sbx_fan_premark_main(void *arg);

#endif
