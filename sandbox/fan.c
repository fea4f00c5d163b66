/*
 * fan.c: the split view's listener. One fanotify group (permission events,
 * FAN_MARK_MOUNT) watches the fast subtrees' mounts in the sandbox; each
 * open the agent makes there waits in the kernel until the listener
 * answers. An open of a sensitive or control object (by its identity in
 * the view's sticky table, or by its current name, with the view's own
 * predicates) goes to the SAME decide callback the FUSE view uses; every
 * other open is allowed and its inode gets an evictable ignore mark, so
 * that the next open of the unchanged file does not come back here.
 *
 * It decides nothing itself: it classifies and asks (sandbox/ rule).
 *
 * Why each piece holds (docs/design.md, "The sandbox: the split view"):
 * - A mark means "this inode's content has not changed since an open of it
 *   was allowed without a decision": the ignore mark is never
 *   FAN_MARK_IGNORED_SURV_MODIFY, so the first write or truncation of the
 *   inode clears it and the next open is an event again.
 * - A sensitive or control identity never keeps a mark: the table entry is
 *   made before any mark is removed, and every mark is checked against the
 *   table after it is made (and removed when the identity is there), so in
 *   any interleaving of the reader, the workers and the pre-marking walk,
 *   the last step on such an inode removes its mark.
 * - Marks are per inode, never on directories: a directory's ignore mark
 *   without FAN_EVENT_ON_CHILD does not silence its children's opens
 *   (checked on 6.18), and with it a sensitive file made later in the
 *   directory would be silent; the walk marks regular files only.
 * - Event descriptors: the kernel opens them in THIS process (the
 *   supervisor, outside the sandbox's PID namespace), O_CLOEXEC; each is
 *   closed right after its answer is written, on every path (allow, deny,
 *   decided, stop). Nothing here sends a descriptor anywhere, and the
 *   sandbox's processes are not our children after exec (init closes the
 *   group at once, the agent execs with close_range), so none reaches the
 *   agent.
 * - Stop answers every event still queued FAN_DENY before the group is
 *   closed (closing the last group fd would allow what is pending).
 */
#include "fan_int.h"
#include "jail_int.h"
#include "proc_int.h"
#include "view_int.h"

#include "common.h"
#include "policy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- answers ------------------------------------------------------------ */

/* Answers the event |fd| and closes it: the one place event fds end. */
static void answer(struct sbx_fan *f, int fd, bool allow)
{
	struct fanotify_response r = {.fd = fd, .response = allow ? FAN_ALLOW : FAN_DENY};
	/* A failed write (the opener was killed meanwhile) leaves nothing
	 * to answer. */
	while (write(f->group, &r, sizeof(r)) < 0 && errno == EINTR)
		;
	if (!allow)
		atomic_fetch_add(&f->denied, 1);
	close(fd);
}

/* ---- marks -------------------------------------------------------------- */

static int ignore_mark(struct sbx_fan *f, unsigned how, int dirfd, const char *path)
{
	/* Evictable: the mark pins no inode (docs/view-plan.md, section 7);
	 * never SURV_MODIFY: a write must clear it. */
	unsigned fl = how | FAN_MARK_IGNORED_MASK | (how == FAN_MARK_ADD ? FAN_MARK_EVICTABLE : 0);
	return fanotify_mark(f->group, fl, FAN_PERM_MASK, dirfd, path) < 0 ? -errno : 0;
}

bool sbx_fan_mark_plain(struct sbx_fan *f, int fd, const char *path, const struct stat *st)
{
	if (sbx_view_identity(f->view, st->st_dev, st->st_ino))
		return false;
	if (ignore_mark(f, FAN_MARK_ADD, fd, path) < 0)
		return false;
	/* The table may have learnt the identity between the check and the
	 * mark (another worker's decision): the table is written first, so
	 * this second look sees it and takes the mark back. */
	if (sbx_view_identity(f->view, st->st_dev, st->st_ino)) {
		(void)ignore_mark(f, FAN_MARK_REMOVE, fd, path);
		return false;
	}
	return true;
}

/* ---- the decide callback's workers ---------------------------------------- */

/* The thread's filesystem uid and gid, as the FUSE view's requests carry
 * them. */
static void thread_creds(pid_t tid, uid_t *uid, gid_t *gid)
{
	char path[64];
	wd_autofree char *text = NULL;
	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (wd_read_file(path, 8192, &text, NULL) < 0)
		return;
	unsigned r, e, s, fs;
	const char *u = strstr(text, "\nUid:"), *g = strstr(text, "\nGid:");
	if (u && sscanf(u + 5, "%u %u %u %u", &r, &e, &s, &fs) == 4)
		*uid = fs;
	if (g && sscanf(g + 5, "%u %u %u %u", &r, &e, &s, &fs) == 4)
		*gid = fs;
}

static void run_job(struct sbx_fan *f, struct fan_job *j)
{
	struct sbx_view_request req = {.path = j->path, .access = j->access, .pid = j->tid};
	thread_creds(j->tid, &req.uid, &req.gid);
	/* Fail closed: a stopping listener or any non-zero answer denies. */
	int rc = atomic_load(&f->stopping) || !f->decide ? -EACCES : f->decide(f->decide_arg, &req);
	atomic_fetch_add(&f->decided, 1);
	answer(f, j->fd, rc == 0);
	free(j->path);
	free(j);
}

static void *worker_main(void *arg)
{
	struct sbx_fan *f = arg;
	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (!f->head && !atomic_load(&f->stopping)) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += FAN_WORKER_IDLE;
			f->idle++;
			int rc = pthread_cond_timedwait(&f->cond, &f->lock, &until);
			f->idle--;
			if (rc == ETIMEDOUT && !f->head)
				goto out;
		}
		struct fan_job *j = f->head;
		if (!j)
			break; /* stopping, nothing left */
		f->head = j->next;
		if (!f->head)
			f->tail = NULL;
		pthread_mutex_unlock(&f->lock);
		run_job(f, j);
		pthread_mutex_lock(&f->lock);
	}
out:
	f->workers--;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* Queues a decision; a worker takes it (a new one when none is idle, up
 * to FAN_MAX_WORKERS), so that a decision waiting for a person blocks
 * only the open that asked. */
static void queue_job(struct sbx_fan *f, struct fan_job *j)
{
	pthread_mutex_lock(&f->lock);
	if (f->tail)
		f->tail->next = j;
	else
		f->head = j;
	f->tail = j;
	if (f->idle == 0 && f->workers < FAN_MAX_WORKERS) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &a, worker_main, f) == 0)
			f->workers++;
		pthread_attr_destroy(&a);
	}
	pthread_cond_signal(&f->cond);
	bool none = f->workers == 0;
	if (none) { /* no thread could be made: refuse, never wait forever */
		f->head = j->next;
		if (!f->head)
			f->tail = NULL;
	}
	pthread_mutex_unlock(&f->lock);
	if (none) {
		answer(f, j->fd, false);
		free(j->path);
		free(j);
	}
}

/* ---- events --------------------------------------------------------------- */

/* The project-relative path of the file open at |fd|, or NULL. The kernel
 * names it from the root of the sandbox's mount namespace, where the
 * project view and its fast mounts sit at the project's own path; the
 * name is the current one (a rename is seen). */
static char *event_path(const struct sbx_fan *f, int fd, const struct stat *st)
{
	char *abs = sbx_fd_path(fd);
	if (!abs)
		return NULL;
	size_t n = strlen(abs), dl = strlen(FAN_DELETED);
	if (st->st_nlink == 0 && n > dl && strcmp(abs + n - dl, FAN_DELETED) == 0)
		abs[n - dl] = '\0';
	char *rel = NULL;
	if (strncmp(abs, f->project, f->plen) == 0 && abs[f->plen] == '/' && abs[f->plen + 1])
		rel = wd_strdup(abs + f->plen + 1);
	free(abs);
	return rel;
}

static void on_event(struct sbx_fan *f, const struct fanotify_event_metadata *m)
{
	atomic_fetch_add(&f->events, 1);
	if (m->fd < 0)
		return; /* FAN_NOFD: nothing to answer */
	int fd = m->fd;
	struct stat st;
	if (atomic_load(&f->stopping) || fstat(fd, &st) < 0) {
		answer(f, fd, false);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		/* A fifo or a socket's node: no content of the project's (the
		 * mounts are nodev), allowed as the FUSE view lets the kernel
		 * open them; never marked. */
		answer(f, fd, true);
		return;
	}
	char *rel = event_path(f, fd, &st);
	/* A fast mount no longer attached in the sandbox (the detacher took
	 * it off for a rename or rmdir of its root, or the kernel did when the
	 * view's entry below it went stale) names its files from its own
	 * root, where a chain of directories can spell the project's path
	 * ("src/home/u/proj/x" read as "x"): its names are not the project's,
	 * so its unmarked files are refused. Checked after the name was read:
	 * nothing attaches a mount again (the agent cannot mount; the binder
	 * attaches only new ones), so one attached now was attached then. */
	uint64_t ns = atomic_load(&f->mntns_id);
	if (rel && (ns == 0 || sbx_jail_mount_in_ns(fd, ns) != 1)) {
		free(rel);
		rel = NULL;
	}
	if (!rel) {
		/* Not named below the project (a file of a fast mount always
		 * is, while the mount is attached): refused rather than
		 * guessed. */
		answer(f, fd, false);
		return;
	}
	unsigned known = sbx_view_identity(f->view, st.st_dev, st.st_ino);
	/* The predicates see the whole path: a marker or a protected
	 * directory above the file covers it (policy/sensitive.c). */
	bool sens = (known & VIEW_SENSITIVE) || sbx_view_path_sensitive(f->policy, NULL, rel);
	bool wprot = sbx_view_path_write_protected(f->policy, NULL, rel);
	bool ctl = (known & VIEW_CONTROL) || pol_is_control(f->policy, rel, NULL);
	/* The event's fd is open for reading (fanotify_init's flags):
	 * fanotify_mark() takes it as the object, the inode fstat saw. */
	if (!sens && !ctl && !wprot) {
		if (sbx_fan_mark_plain(f, fd, NULL, &st))
			atomic_fetch_add(&f->marked, 1);
		answer(f, fd, true);
		free(rel);
		return;
	}
	/* The exec's own open reads; otherwise the registers of the open the
	 * thread waits in. */
	unsigned acc = (m->mask & FAN_OPEN_EXEC_PERM) ? POL_ACC_READ : sbx_proc_open_access(m->pid);
	if (sens || ctl) {
		/* Sticky: this identity stays decided under any later name,
		 * and loses any mark it had (table first, then the mark). */
		sbx_view_identity_add(f->view, st.st_dev, st.st_ino, sens, ctl);
		(void)ignore_mark(f, FAN_MARK_REMOVE, fd, NULL);
	}
	if (wprot && (acc & POL_ACC_WRITE)) {
		/* The FUSE view answers EROFS; here the kernel gives EPERM. */
		answer(f, fd, false);
		free(rel);
		return;
	}
	if (!sbx_view_open_decided(sens, ctl, acc)) {
		answer(f, fd, true);
		free(rel);
		return;
	}
	struct fan_job *j = wd_calloc(1, sizeof(*j));
	*j = (struct fan_job){.fd = fd, .tid = m->pid, .access = acc, .path = rel};
	queue_job(f, j);
}

/* Reads and handles what is queued; |deny_all|: answer FAN_DENY to all. */
static int drain(struct sbx_fan *f, bool deny_all)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	for (;;) {
		ssize_t len = read(f->group, buf, sizeof(buf));
		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			return len < 0 && errno != EAGAIN ? -errno : 0;
		const struct fanotify_event_metadata *m = (const void *)buf;
		for (; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			if (m->vers != FANOTIFY_METADATA_VERSION) {
				if (m->fd >= 0)
					answer(f, m->fd, false);
				continue;
			}
			if (deny_all) {
				atomic_fetch_add(&f->events, 1);
				if (m->fd >= 0)
					answer(f, m->fd, false);
			} else {
				on_event(f, m);
			}
		}
	}
}

static void *reader_main(void *arg)
{
	struct sbx_fan *f = arg;
	while (!atomic_load(&f->stopping)) {
		struct pollfd p[2] = {{.fd = f->group, .events = POLLIN},
				      {.fd = f->stop_efd, .events = POLLIN}};
		int n = poll(p, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (p[1].revents & POLLIN))
			break;
		if (p[0].revents & POLLIN)
			(void)drain(f, false);
	}
	return NULL;
}

/* ---- the watcher ------------------------------------------------------------ */

/*
 * A plain file the listener marked can be given a sensitive or control name
 * without any open (a rename by the user outside, or a directory renamed
 * to a sensitive name): fanotify has no permission event for that, so the
 * mark would let its next open through undecided until the file is next
 * written. The watcher narrows that window (docs/view-plan.md, section 9,
 * step 7): inotify IN_CREATE | IN_MOVED_TO on every directory of the fast
 * subtrees in the backing tree (inotify watches the inode, so renames made
 * through any mount are seen, the user's and the agent's alike); a new
 * sensitive or control name, or a directory moved to such a name, puts
 * each identity below it in the view's table and removes its mark (table
 * first, as everywhere here). Asynchronous: it makes the window short, it
 * does not close it (the documented trade-off); its watches are bounded
 * (FAN_WATCH_MAX) and a directory it could not watch keeps the window as
 * without it. Its directory fds are closed as it goes.
 */
#define FAN_WATCH_MAX  65536
#define FAN_WATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_ONLYDIR)

struct fan_watch {
	int wd;
	char *rel; /* project-relative path of the directory */
};

static struct fan_watch *watch_of(struct sbx_fan *f, int wd)
{
	for (size_t i = 0; i < f->nwatches; i++)
		if (f->watches[i].wd == wd)
			return &f->watches[i];
	return NULL;
}

/* An fd of |rel| in the backing tree, never through a symlink. */
static int backing_open(struct sbx_fan *f, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_XDEV,
	};
	return (int)syscall(SYS_openat2, f->backing_fd, rel, &how, sizeof(how));
}

static void add_watch(struct sbx_fan *f, const char *rel)
{
	if (f->nwatches >= FAN_WATCH_MAX)
		return;
	/* Through the /proc link of an O_PATH fd reached without a symlink:
	 * the watch lands on exactly that directory. */
	int fd = backing_open(f, rel, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return;
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	int wd = inotify_add_watch(f->ino_fd, proc, FAN_WATCH_MASK);
	close(fd);
	if (wd < 0)
		return;
	struct fan_watch *w = watch_of(f, wd);
	if (w) { /* the same directory again (renamed): its new name */
		free(w->rel);
		w->rel = wd_strdup(rel);
		return;
	}
	if (f->nwatches == f->capwatches) {
		f->capwatches = f->capwatches ? f->capwatches * 2 : 64;
		f->watches = wd_realloc(f->watches, f->capwatches * sizeof(*f->watches));
	}
	f->watches[f->nwatches++] = (struct fan_watch){wd, wd_strdup(rel)};
}

/* The regular file at |rel| is sensitive or control now: into the table,
 * then its mark goes. */
static void settle_file(struct sbx_fan *f, const char *rel, bool sens, bool ctl)
{
	int fd = backing_open(f, rel, O_PATH);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		sbx_view_identity_add(f->view, st.st_dev, st.st_ino, sens, ctl);
		/* fanotify_mark() takes no O_PATH fd: its /proc link. */
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		(void)ignore_mark(f, FAN_MARK_REMOVE, AT_FDCWD, proc);
	}
	if (fd >= 0)
		close(fd);
}

/* Watches the directory |rel| and every directory below it, and settles
 * every file whose path (or a directory above it: |sens|, |ctl|) is
 * sensitive or control. */
static void settle_dir(struct sbx_fan *f, const char *rel, bool sens, bool ctl, int depth)
{
	add_watch(f, rel);
	int fd = backing_open(f, rel, O_RDONLY | O_DIRECTORY);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) && !atomic_load(&f->stopping)) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		wd_autofree char *child = wd_asprintf("%s/%s", rel, de->d_name);
		bool cs = sens || sbx_view_path_sensitive(f->policy, NULL, child);
		bool cc = ctl || pol_is_control(f->policy, child, NULL);
		if (de->d_type == DT_DIR && depth < FAN_MAX_DEPTH)
			settle_dir(f, child, cs, cc, depth + 1);
		else if ((cs || cc) && (de->d_type == DT_REG || de->d_type == DT_UNKNOWN))
			settle_file(f, child, cs, cc);
	}
	closedir(d);
}

static void on_watch_event(struct sbx_fan *f, const struct inotify_event *e)
{
	struct fan_watch *w = watch_of(f, e->wd);
	if (!w)
		return;
	if (e->mask & IN_IGNORED) { /* the directory is gone: so is its watch */
		free(w->rel);
		*w = f->watches[--f->nwatches];
		return;
	}
	if (!e->len || !(e->mask & (IN_CREATE | IN_MOVED_TO)))
		return;
	wd_autofree char *rel = wd_asprintf("%s/%s", w->rel, e->name);
	bool sens = sbx_view_path_sensitive(f->policy, NULL, rel);
	bool ctl = pol_is_control(f->policy, rel, NULL);
	if (e->mask & IN_ISDIR)
		settle_dir(f, rel, sens, ctl, 0); /* watched, with what it holds */
	else if (sens || ctl)
		settle_file(f, rel, sens, ctl);
}

/* Watches the fast subtrees bound since the last call. */
static void take_bound(struct sbx_fan *f)
{
	uint64_t v;
	(void)!read(f->more_efd, &v, sizeof(v));
	pthread_mutex_lock(&f->lock);
	char **bound = f->bound;
	size_t n = f->nbound;
	f->bound = NULL;
	f->nbound = 0;
	pthread_mutex_unlock(&f->lock);
	for (size_t i = 0; i < n; i++) {
		if (!atomic_load(&f->stopping))
			settle_dir(f, bound[i], false, false, 0);
		free(bound[i]);
	}
	free(bound);
}

static void *watcher_main(void *arg)
{
	struct sbx_fan *f = arg;
	for (size_t i = 0; i < f->nfast && !atomic_load(&f->stopping); i++)
		settle_dir(f, f->fast[i], false, false, 0);
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	while (!atomic_load(&f->stopping)) {
		struct pollfd p[3] = {{.fd = f->ino_fd, .events = POLLIN},
				      {.fd = f->stop_efd, .events = POLLIN},
				      {.fd = f->more_efd, .events = POLLIN}};
		int n = poll(p, 3, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (p[1].revents & POLLIN))
			break;
		if (p[2].revents & POLLIN)
			take_bound(f);
		ssize_t len;
		while ((len = read(f->ino_fd, buf, sizeof(buf))) > 0) {
			for (char *q = buf; q < buf + len;) {
				const struct inotify_event *e = (const void *)q;
				on_watch_event(f, e);
				q += sizeof(*e) + e->len;
			}
		}
	}
	return NULL;
}

/* ---- life ----------------------------------------------------------------- */

/* The listener's group: permission events, the opener's thread id. */
static int group_init(void)
{
	return fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_TID |
				     FAN_UNLIMITED_QUEUE | FAN_UNLIMITED_MARKS,
			     O_RDONLY | O_LARGEFILE | O_CLOEXEC);
}

int sbx_fan_new(const struct sbx_fan_config *cfg, struct sbx_fan **out)
{
	int g = cfg->group >= 0 ? cfg->group : group_init();
	if (g < 0)
		return -errno;
	struct sbx_fan *f = wd_calloc(1, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	f->group = g;
	f->ino_fd = -1;
	f->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	f->more_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	f->backing_fd = fcntl(cfg->backing_fd, F_DUPFD_CLOEXEC, 3);
	if (f->stop_efd < 0 || f->more_efd < 0 || f->backing_fd < 0) {
		int e = errno;
		sbx_fan_stop(f);
		return e ? -e : -EIO;
	}
	f->project = wd_strdup(cfg->project);
	f->plen = strlen(f->project);
	while (f->plen > 1 && f->project[f->plen - 1] == '/')
		f->project[--f->plen] = '\0';
	f->policy = cfg->policy;
	f->decide = cfg->decide;
	f->decide_arg = cfg->decide_arg;
	f->premark_max = cfg->premark_max ? cfg->premark_max : FAN_PREMARK_MAX;
	if (cfg->split) {
		f->fast = wd_calloc(cfg->split->nfast + 1, sizeof(char *));
		for (size_t i = 0; i < cfg->split->nfast; i++)
			f->fast[i] = wd_strdup(cfg->split->fast[i]);
		f->nfast = cfg->split->nfast;
		f->fast_files = cfg->split->fast_files_total;
		f->fuse_dirs = cfg->split->fuse_dirs;
	}
	*out = f;
	return 0;
}

int sbx_fan_set_sandbox(struct sbx_fan *f, pid_t pid, const struct sbx_fast *fast, size_t nfast)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	wd_autoclose int ns = open(p, O_RDONLY | O_CLOEXEC);
	uint64_t id = 0;
	int rc = ns < 0 ? -errno : sbx_jail_mntns_id(ns, &id);
	if (rc < 0)
		return rc;
	atomic_store(&f->mntns_id, id);
	/* init has attached what it could (spawn_child.c, init_fast); a
	 * mount it left is in the namespace of nobody. Only counted: the
	 * listener asks the same of every name anyway. */
	for (size_t i = 0; i < nfast; i++)
		if (sbx_jail_mount_id_in_ns(fast[i].mnt_id, id) == 0)
			f->fast_left++;
	return 0;
}

int sbx_fan_group_fd(const struct sbx_fan *f)
{
	return f ? f->group : -1;
}

int sbx_fan_mark_mount(struct sbx_fan *f, int mnt_fd)
{
	/* fanotify_mark() wants a path for a mount mark: the /proc link of
	 * the detached mount's fd is its root, on that mount. The mark stays
	 * with the mount when init moves it into the sandbox. */
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", mnt_fd);
	if (fanotify_mark(f->group, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_PERM_MASK, AT_FDCWD, proc) <
	    0)
		return -errno;
	/* The start's mounts (marked before the listener starts, on the
	 * spawning thread); the binder counts its own. */
	if (!f->reader_started)
		f->fast_subtrees++;
	return 0;
}

void sbx_fan_watch_dir(struct sbx_fan *f, const char *rel)
{
	pthread_mutex_lock(&f->lock);
	f->bound = wd_realloc(f->bound, (f->nbound + 1) * sizeof(*f->bound));
	f->bound[f->nbound++] = wd_strdup(rel);
	pthread_mutex_unlock(&f->lock);
	uint64_t one = 1;
	(void)!write(f->more_efd, &one, sizeof(one));
}

int sbx_fan_start(struct sbx_fan *f, struct sbx_view *view)
{
	if (!view)
		return -EINVAL;
	f->view = view;
	int rc = pthread_create(&f->reader, NULL, reader_main, f);
	if (rc != 0)
		return -rc;
	f->reader_started = true;
	/* The walk is a speed-up only: without its thread every first open
	 * is an event. The agent's own command is about to start: the walk
	 * begins by standing aside for it, as for every later exec. */
	sbx_fan_step_aside(f);
	if (pthread_create(&f->premarker, NULL, sbx_fan_premark_main, f) == 0)
		f->premark_started = true;
	/* The watcher narrows a window and is not needed for the rest. */
	f->ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (f->ino_fd >= 0 && pthread_create(&f->watcher, NULL, watcher_main, f) == 0)
		f->watcher_started = true;
	return 0;
}

void sbx_fan_counts(const struct sbx_fan *f, struct sbx_fan_counts *c)
{
	memset(c, 0, sizeof(*c));
	if (!f)
		return;
	c->events = atomic_load(&f->events);
	c->decided = atomic_load(&f->decided);
	c->marked = atomic_load(&f->marked);
	c->premarked = atomic_load(&f->premarked);
	c->denied = atomic_load(&f->denied);
	uint64_t ns = atomic_load(&f->premark_ns);
	int64_t t0 = atomic_load(&f->premark_t0);
	c->premark_running = ns == 0 && t0 > 0;
	if (c->premark_running)
		ns = (uint64_t)(wd_now_mono_ns() - t0);
	c->premark_s = (double)ns / 1e9;
	c->aside_s = (double)atomic_load(&f->aside_ns) / 1e9;
	c->fast_subtrees = f->fast_subtrees - f->fast_left;
	c->fast_left = f->fast_left;
	c->fast_files = f->fast_files;
	c->fuse_dirs = f->fuse_dirs;
}

static void *close_fd_main(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

void sbx_fan_stop(struct sbx_fan *f)
{
	if (!f)
		return;
	atomic_store(&f->stopping, true);
	if (f->stop_efd >= 0) {
		uint64_t one = 1;
		(void)!write(f->stop_efd, &one, sizeof(one));
	}
	if (f->reader_started)
		pthread_join(f->reader, NULL);
	if (f->premark_started)
		pthread_join(f->premarker, NULL);
	if (f->watcher_started)
		pthread_join(f->watcher, NULL);
	for (size_t i = 0; i < f->nwatches; i++)
		free(f->watches[i].rel);
	free(f->watches);
	/*
	 * Closing a notification group waits until the kernel has freed its
	 * marks (an SRCU grace period: 10-20 ms here, each). The inotify
	 * instance is closed on a thread of its own while the group below is
	 * drained and closed, so the two waits overlap instead of adding up.
	 * Nothing reads ino_fd any more (the watcher is joined).
	 */
	pthread_t closer;
	bool closing = f->ino_fd >= 0 && pthread_create(&closer, NULL, close_fd_main,
							(void *)(intptr_t)f->ino_fd) == 0;
	if (!closing)
		wd_close(&f->ino_fd);
	f->ino_fd = -1;
	/* The workers: the decide callback answers at once when the run is
	 * closing (the supervisor closes it before stopping the views), and
	 * what is queued is refused by run_job. */
	pthread_mutex_lock(&f->lock);
	pthread_cond_broadcast(&f->cond);
	while (f->workers > 0)
		pthread_cond_wait(&f->cond, &f->lock);
	struct fan_job *q = f->head;
	f->head = f->tail = NULL;
	pthread_mutex_unlock(&f->lock);
	while (q) {
		struct fan_job *n = q->next;
		answer(f, q->fd, false);
		free(q->path);
		free(q);
		q = n;
	}
	/* Everything still queued in the kernel: denied before the group
	 * closes (the close would allow it). */
	if (f->group >= 0)
		(void)drain(f, true);
	wd_close(&f->group);
	if (closing)
		pthread_join(closer, NULL);
	wd_close(&f->stop_efd);
	wd_close(&f->more_efd);
	for (size_t i = 0; i < f->nbound; i++)
		free(f->bound[i]);
	free(f->bound);
	wd_close(&f->backing_fd);
	for (size_t i = 0; i < f->nfast; i++)
		free(f->fast[i]);
	free(f->fast);
	free(f->project);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	free(f);
}

/* ---- the probe ------------------------------------------------------------- */

int sbx_split_probe(int project_fd, int *group, char *why, size_t len)
{
	if (group)
		*group = -1;
	if (sbx_needs_userns()) {
		snprintf(why, len, "fanotify permission events need root");
		return -EPERM;
	}
	int g = group_init();
	if (g < 0) {
		int e = errno;
		snprintf(why, len, "fanotify permission events are not available (%s%s)",
			 strerror(e),
			 e == EPERM ? ": they need CAP_SYS_ADMIN in the initial user namespace"
				    : "");
		return -e;
	}
	/* An evictable ignore mark (Linux 5.19) on the project's file
	 * system, and a mount mark on a detached copy of the project. */
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", project_fd);
	int rc = 0;
	if (fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK | FAN_MARK_EVICTABLE,
			  FAN_PERM_MASK, AT_FDCWD, proc) < 0) {
		rc = -errno;
		snprintf(why, len, "fanotify's evictable marks are not available here (%s)",
			 strerror(-rc));
	} else {
		/* The probe's marks go: the group may serve the run. */
		(void)fanotify_mark(g, FAN_MARK_REMOVE | FAN_MARK_IGNORED_MASK, FAN_PERM_MASK,
				    AT_FDCWD, proc);
	}
	int m = rc ? -1
		   : (int)syscall(SYS_open_tree, project_fd, "",
				  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (!rc && m < 0) {
		rc = -errno;
		snprintf(why, len, "detached mounts are not available (open_tree: %s)",
			 strerror(-rc));
	}
	if (!rc) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", m);
		if (fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_PERM_MASK, AT_FDCWD, proc) <
		    0) {
			rc = -errno;
			snprintf(why, len, "fanotify cannot watch the project's mount (%s)",
				 strerror(-rc));
		}
	}
	/* A name in a fast mount is trusted only while the mount is attached
	 * in the sandbox: the kernel must tell an attached mount (the
	 * project's, here) from a detached one (the copy). */
	if (!rc) {
		uint64_t ns = 0;
		int nsfd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		int a = nsfd < 0 ? -errno : sbx_jail_mntns_id(nsfd, &ns);
		if (a == 0)
			a = sbx_jail_mount_in_ns(project_fd, ns);
		int d = a == 1 ? sbx_jail_mount_in_ns(m, ns) : 0;
		if (nsfd >= 0)
			close(nsfd);
		if (a != 1 || d != 0) {
			rc = a < 0 ? a : d < 0 ? d : -ENOSYS;
			snprintf(why, len,
				 "the kernel cannot tell an attached mount from a detached one "
				 "(statmount in a namespace, Linux 6.11: %s)",
				 a < 0 || d < 0 ? strerror(-rc)
				 : a == 0	? "the project's own mount reads as detached"
						: "a detached copy reads as attached");
		}
	}
	/* The detached copy dies with its last descriptor, and its mount
	 * mark with it: nothing of the probe stays in the group. */
	if (m >= 0)
		close(m);
	/*
	 * The group is handed on rather than closed: closing a group waits
	 * for the kernel to free its marks (an SRCU grace period, 10-20 ms
	 * here), which a run would pay once more at its start.
	 */
	if (group && rc == 0)
		*group = g;
	else
		close(g);
	return rc;
}
