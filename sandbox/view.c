/*
 * view.c: the project view's session: starting it on a mounted FUSE fd,
 * its worker and evictor threads, and stopping it.
 *
 * The project view is a libfuse3 low-level passthrough of the project
 * directory that hands sensitive opens, renames, links and symlinks to a
 * decide callback before they happen; it decides nothing itself. The inode
 * table is in sbx_view_node.c, the checks in view_check.c, the evictor in
 * view_evict.c and the FUSE callbacks in view_ops.c and the view_*.c files
 * it names. Why it is built so (inodes, sticky sensitivity, caching, the
 * descriptor budget): docs/design.md, section "The sandbox: the project view".
 */
#include "view_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "policy.h"

/* ---- mount, start, stop ---------------------------------------------- */

int sbx_fuse_mount(const char *mountpoint, uid_t uid, gid_t gid)
{
	return sbx_fuse_mount_type(mountpoint, uid, gid, S_IFDIR);
}

int sbx_fuse_mount_type(const char *mountpoint, uid_t uid, gid_t gid, mode_t type)
{
	char opts[128];
	int fd = sbx_fuse_dev_open();

	if (fd < 0)
		return fd;
	/* default_permissions: the kernel checks every access against the
	 * attributes the view reports, with the caller's credentials and
	 * capabilities, before the view is asked (docs/design.md, section
	 * "The sandbox: the project view"). */
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=%o,user_id=%u,group_id=%u,allow_other,default_permissions", fd,
		 (unsigned)(type & S_IFMT), (unsigned)uid, (unsigned)gid);
	if (mount("warden", mountpoint, "fuse.warden", MS_NOSUID | MS_NODEV, opts) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

/* The signal that wakes the session loop's main thread out of sem_wait()
 * when the view stops (libfuse's own signal handlers work the same way). A
 * real-time signal nobody else sends; its handler does nothing. */
static int wake_signal(void)
{
	return SIGRTMIN + 4;
}

static void wake_handler(int sig)
{
	(void)sig;
}

static pthread_once_t wake_once = PTHREAD_ONCE_INIT;

static void install_wake_handler(void)
{
	/* No SA_RESTART: the point is to interrupt sem_wait(). */
	struct sigaction sa = {.sa_handler = wake_handler};

	sigemptyset(&sa.sa_mask);
	sigaction(wake_signal(), &sa, NULL);
}

static void *view_loop(void *arg)
{
	struct sbx_view *v = arg;
	struct fuse_loop_config *lc = fuse_loop_cfg_create();
	sigset_t mask;

	/* Signals are the supervisor's, except the wake-up. The workers
	 * inherit this mask. */
	sigfillset(&mask);
	sigdelset(&mask, wake_signal());
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (!lc) {
		v->loop_rc = -ENOMEM;
		return NULL;
	}
	fuse_loop_cfg_set_clone_fd(lc, 1);
	fuse_loop_cfg_set_idle_threads(lc, v->threads);
	fuse_loop_cfg_set_max_threads(lc, VIEW_MAX_THREADS > v->threads ? VIEW_MAX_THREADS
									: v->threads);
	v->loop_rc = fuse_session_loop_mt(v->se, lc);
	fuse_loop_cfg_destroy(lc);
	return NULL;
}

static void view_free(struct sbx_view *v)
{
	if (v->table) {
		for (size_t i = 0; i < v->table_size; i++) {
			struct vnode *n = v->table[i], *next;

			for (; n; n = next) {
				next = n->hnext;
				close(n->fd);
				free(n->name);
				free(n);
			}
		}
		free(v->table);
	}
	if (v->root.fd >= 0)
		close(v->root.fd);
	wd_strv_free(v->hidden);
	wd_strv_free(v->unmarked);
	wd_strv_free(v->writable);
	free(v->idents);
	free(v->prefix);
	pthread_cond_destroy(&v->evict_cond);
	pthread_mutex_destroy(&v->lock);
	pthread_mutex_destroy(&v->scan_lock);
	free(v);
}

/* The descriptors the view may hold: the configured budget, else three
 * quarters of RLIMIT_NOFILE; at least 64. */
static size_t fd_budget(size_t configured)
{
	size_t budget = configured;
	if (!budget) {
		struct rlimit rl;
		budget = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
				 ? (size_t)rl.rlim_cur / 4 * 3
				 : 1u << 20;
	}
	return budget < 64 ? 64 : budget;
}

/* A view holding |cfg|'s settings; its root is cfg->backing_fd. */
static struct sbx_view *view_new(const struct sbx_view_config *cfg)
{
	struct sbx_view *v = wd_calloc(1, sizeof(*v));
	pthread_mutex_init(&v->lock, NULL);
	pthread_mutex_init(&v->scan_lock, NULL);
	pthread_cond_init(&v->evict_cond, NULL);
	v->fd_budget = fd_budget(cfg->fd_budget);
	v->root.fd = cfg->backing_fd;
	v->root.nlookup = 1;
	v->policy = cfg->policy;
	v->read_only = cfg->read_only;
	v->decide = cfg->decide;
	v->decide_arg = cfg->decide_arg;
	v->threads = cfg->threads ? cfg->threads : VIEW_DEFAULT_THREADS;
	v->table_size = 1024;
	v->table = wd_calloc(v->table_size, sizeof(*v->table));
	/* The config's vectors are const strings; the copies are the view's. */
	v->hidden = wd_strv_dup((char *const *)cfg->hidden, NULL);
	v->unmarked = wd_strv_dup((char *const *)cfg->unmarked, NULL);
	v->writable = cfg->writable ? wd_strv_dup((char *const *)cfg->writable, NULL) : NULL;
	v->pt.fd = -1;
	v->pt.why = "not a root run on the supervisor's own mount";
	return v;
}

/* Fills the root's identity and flags. -ENOTDIR unless the root is a
 * directory or, for a gated place, a single regular file. */
static int view_set_root(struct sbx_view *v, const struct sbx_view_config *cfg)
{
	struct stat st;
	if (fstat(v->root.fd, &st) < 0 ||
	    !(S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && cfg->prefix)))
		return -ENOTDIR;
	v->root.dev = st.st_dev;
	v->root.ino = st.st_ino;
	v->root.type = st.st_mode & S_IFMT;
	v->root.wprot = sbx_view_protected_at(v, "");
	if (cfg->prefix)
		v->prefix = wd_strdup(cfg->prefix);
	/* Sticky and inherited: every object under the root is sensitive. */
	v->root.sensitive = cfg->all_sensitive;
	return 0;
}

/* The FUSE session on the mounted |fuse_fd|, which it owns from then on
 * (libfuse closes it in fuse_session_destroy()); closed here when no
 * session takes it. 0, or -errno with no session left. With |pt| the view
 * answers the kernel's INIT itself (view_pt.c) to negotiate passthrough. */
static int view_open_session(struct sbx_view *v, int fuse_fd, bool pt)
{
	char *argv[] = {"warden-view", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(1, argv);
	struct fuse_lowlevel_ops ops;
	char dev[32];
	sbx_view_ops_fill(&ops);
	v->se = fuse_session_new(&args, &ops, sizeof(ops), v);
	fuse_opt_free_args(&args);
	if (!v->se) {
		close(fuse_fd);
		return -ENOMEM;
	}
	if (pt) {
		int rc = sbx_view_pt_mount(v, fuse_fd);

		if (rc < 0)
			fuse_session_destroy(v->se);
		return rc;
	}
	/* libfuse takes an already-mounted fd as "/dev/fd/N". */
	snprintf(dev, sizeof(dev), "/dev/fd/%d", fuse_fd);
	if (fuse_session_mount(v->se, dev) != 0) {
		close(fuse_fd);
		fuse_session_destroy(v->se);
		return -EINVAL;
	}
	return 0;
}

int sbx_view_start(const struct sbx_view_config *cfg, int fuse_fd, struct sbx_view **out)
{
	*out = NULL;
	if (!cfg || cfg->backing_fd < 0 || fuse_fd < 0) {
		if (cfg && cfg->backing_fd >= 0)
			close(cfg->backing_fd);
		if (fuse_fd >= 0)
			close(fuse_fd);
		return -EINVAL;
	}
	struct sbx_view *v = view_new(cfg);
	int rc = view_set_root(v, cfg);
	if (rc < 0) {
		close(fuse_fd);
		view_free(v);
		return rc;
	}
	rc = view_open_session(v, fuse_fd, cfg->passthrough);
	if (rc < 0) {
		view_free(v);
		return rc;
	}
	pthread_once(&wake_once, install_wake_handler);
	rc = pthread_create(&v->thread, NULL, view_loop, v);
	if (rc != 0) {
		fuse_session_destroy(v->se); /* the session owns fuse_fd now */
		view_free(v);
		return -rc;
	}
	v->thread_started = true;
	if (pthread_create(&v->evictor, NULL, sbx_view_evictor_loop, v) == 0)
		v->evictor_started = true;
	else
		wd_warn("the view's evictor could not start: a tree with more files than %zu "
			"may run it out of descriptors",
			v->fd_budget);
	*out = v;
	return 0;
}

void sbx_view_on_made_dir(struct sbx_view *v, sbx_view_made_dir_fn fn, void *arg)
{
	pthread_mutex_lock(&v->lock);
	v->made_dir = fn;
	v->made_dir_arg = arg;
	pthread_mutex_unlock(&v->lock);
}

void sbx_view_stop(struct sbx_view *v)
{
	if (!v)
		return;
	atomic_store(&v->stopping, true);
	if (v->evictor_started) {
		pthread_mutex_lock(&v->lock);
		v->evict_stop = true;
		pthread_cond_signal(&v->evict_cond);
		pthread_mutex_unlock(&v->lock);
		pthread_join(v->evictor, NULL);
		v->evictor_started = false;
	}
	fuse_session_exit(v->se);
	/* The loop's main thread sleeps in sem_wait() until a worker ends;
	 * the signal wakes it, it sees the session exited, cancels the
	 * workers sleeping in read(2) and joins them (a worker waiting for a
	 * decision is joined when the decision returns). The signal is
	 * repeated because one sent just before the thread went to sleep is
	 * lost. If the file system was unmounted the reads have failed and
	 * the loop has ended already. */
	while (v->thread_started) {
		struct timespec ts;

		pthread_kill(v->thread, wake_signal());
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(v->thread, NULL, &ts) == 0)
			v->thread_started = false;
	}
	fuse_session_destroy(v->se);
	view_free(v);
}
