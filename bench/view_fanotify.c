/*
 * view_fanotify: a prototype of the project view made of fanotify permission
 * events on the sandbox's own bind mount of the project, to measure what it
 * costs against native and the FUSE view (bench/view_proto runs it). It is
 * not warden: it decides nothing but "sensitive or not" by name, and it
 * answers every open with allow. What it measures is the mechanism.
 *
 * Usage: view_fanotify [-m MODE] [-F] [-S] [-E] [-v] DIR -- CMD [ARG...]
 *
 * As root: makes a private mount namespace, binds DIR on itself, starts a
 * listener thread on that bind (FAN_CLASS_CONTENT, FAN_OPEN_PERM and
 * FAN_OPEN_EXEC_PERM; FAN_MARK_MOUNT, or FAN_MARK_FILESYSTEM with -F), then
 * runs CMD in DIR and prints CMD's wall time and the listener's tally on
 * stderr (one line, "vf: ...").
 *
 * MODE:
 *   native      no namespace, no bind: CMD timed the same way (the baseline)
 *   bind        the bind mount only, no fanotify (the namespace's own cost)
 *   perm        every open is an event, answered allow; no ignore marks
 *   inode       perm, and each allowed open of a non-sensitive file adds an
 *               ignore mark on its inode: that file's later opens never
 *               reach the listener
 *   dir         inode, and the first open in a directory whose entries hold
 *               no sensitive name adds an ignore mark on the directory with
 *               FAN_EVENT_ON_CHILD (FAN_MARK_IGNORE, 6.0+): the whole
 *               directory's files are then silent
 *   premark     inode marks put on every non-sensitive file of DIR by a walk
 *               before CMD starts (the time is printed as premark_s)
 *   premark-bg  the same walk in a background thread while CMD runs
 *   premark-dir directory marks (as dir) put by a walk before CMD starts
 *
 * -S: keep inode ignore marks across modifications
 *     (FAN_MARK_IGNORED_SURV_MODIFY); by default a write or truncate of the
 *     file clears its mark, so changed content is seen again.
 * -E: inode ignore marks are evictable (FAN_MARK_EVICTABLE, 5.19+): they do
 *     not pin the inode in the cache; when memory pressure evicts the
 *     inode the mark goes with it, and the next open is an event again.
 * -v: print the slab objects of fanotify_mark and fsnotify_mark_connector
 *     before and after (for the memory the marks pin).
 *
 * Sensitive, for the prototype: a path relative to DIR containing ".env",
 * case-insensitive. Every open of one is a "decision" (counted, then
 * allowed), never marked. The tally lets the driver check that the decisions
 * happened on every pass, i.e. that no ignore mark hid a sensitive file.
 *
 * The listener's own opens would be events to itself (and wait on itself):
 * it opens only directories (no FAN_ONDIR in the mask, so never an event)
 * and uses the event's descriptor, which the kernel opened without
 * notification.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum mode { M_NATIVE, M_BIND, M_PERM, M_INODE, M_DIR, M_PREMARK, M_PREMARK_BG, M_PREMARK_DIR };

static const char *const mode_names[] = {"native", "bind",    "perm",	    "inode",
					 "dir",	   "premark", "premark-bg", "premark-dir"};

#define PERM_MASK (FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM)

static enum mode g_mode = M_INODE;
static int g_fan = -1;
static int g_surv;
static int g_evictable;
static char g_root[PATH_MAX];
static size_t g_root_len;
static int g_stop_pipe[2] = {-1, -1};

static atomic_ulong n_events, n_decisions, n_inode_marks, n_dir_marks, n_mark_errors;

/* Directories already looked at by the dir mode (dev, ino), open
 * addressing; only the listener thread touches it. */
#define DIRSET_SIZE (1u << 18)
static struct dkey {
	dev_t dev;
	ino_t ino;
	int used;
} * g_dirs;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 1 when |dev, ino| was not in the set (and is now). */
static int dirset_add(dev_t dev, ino_t ino)
{
	size_t h = ((size_t)ino * 0x9E3779B97F4A7C15ull + (size_t)dev) & (DIRSET_SIZE - 1);
	for (size_t i = 0; i < DIRSET_SIZE; i++) {
		struct dkey *k = &g_dirs[(h + i) & (DIRSET_SIZE - 1)];
		if (!k->used) {
			k->dev = dev;
			k->ino = ino;
			k->used = 1;
			return 1;
		}
		if (k->dev == dev && k->ino == ino)
			return 0;
	}
	return 0; /* full: treat as seen (no mark, every open stays an event) */
}

static int has_marker(const char *s)
{
	for (; *s; s++)
		if (s[0] == '.' && tolower((unsigned char)s[1]) == 'e' &&
		    tolower((unsigned char)s[2]) == 'n' && tolower((unsigned char)s[3]) == 'v')
			return 1;
	return 0;
}

/* Whether the path |abs| (absolute, in the listener's namespace) is
 * sensitive: the part below the project contains the marker. */
static int path_sensitive(const char *abs)
{
	if (strncmp(abs, g_root, g_root_len) != 0)
		return 1; /* not below the project: decide, never mark */
	return has_marker(abs + g_root_len);
}

static int mark_inode(int fd, const char *name)
{
	unsigned int fl = FAN_MARK_ADD | FAN_MARK_IGNORED_MASK;
	if (g_surv)
		fl |= FAN_MARK_IGNORED_SURV_MODIFY;
	if (g_evictable)
		fl |= FAN_MARK_EVICTABLE;
	if (fanotify_mark(g_fan, fl, PERM_MASK, fd, name) < 0) {
		n_mark_errors++;
		return -errno;
	}
	n_inode_marks++;
	return 0;
}

/* Marks the directory open at |dfd| silent for its children's opens when
 * none of its entries has a sensitive name (|rel_sensitive|: the directory's
 * own path is). Returns 1 when marked. */
static int mark_dir_if_clean(int dfd, int rel_sensitive)
{
	if (rel_sensitive)
		return 0;
	/* A descriptor of its own: a dup would share (and move) the offset of
	 * the caller's directory stream. */
	int d2 = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d2 < 0)
		return 0;
	DIR *d = fdopendir(d2);
	if (!d) {
		close(d2);
		return 0;
	}
	int clean = 1;
	struct dirent *e;
	while ((e = readdir(d)))
		if (has_marker(e->d_name)) {
			clean = 0;
			break;
		}
	closedir(d);
	if (!clean)
		return 0;
	/* FAN_MARK_IGNORE (not FAN_MARK_IGNORED_MASK): with it FAN_EVENT_ON_CHILD
	 * applies to the ignore mask. On a directory the kernel wants FAN_ONDIR
	 * with IGNORED_SURV_MODIFY. */
	if (fanotify_mark(g_fan, FAN_MARK_ADD | FAN_MARK_IGNORE_SURV,
			  PERM_MASK | FAN_EVENT_ON_CHILD | FAN_ONDIR, dfd, NULL) < 0) {
		n_mark_errors++;
		return 0;
	}
	n_dir_marks++;
	return 1;
}

static void on_event(const struct fanotify_event_metadata *m)
{
	n_events++;
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", m->fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	int sensitive = 1;
	if (n > 0) {
		path[n] = '\0';
		sensitive = path_sensitive(path);
	}
	if (sensitive) {
		/* The decision: warden would ask its pipeline here (this thread
		 * or a worker holds the event; the opener waits). */
		n_decisions++;
	} else if (g_mode == M_INODE || g_mode == M_DIR || g_mode == M_PREMARK ||
		   g_mode == M_PREMARK_BG || g_mode == M_PREMARK_DIR) {
		mark_inode(m->fd, NULL);
		if (g_mode == M_DIR) {
			char *slash = strrchr(path, '/');
			if (slash && slash > path) {
				*slash = '\0';
				int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				struct stat st;
				if (dfd >= 0 && fstat(dfd, &st) == 0 &&
				    dirset_add(st.st_dev, st.st_ino))
					mark_dir_if_clean(dfd, path_sensitive(path));
				if (dfd >= 0)
					close(dfd);
			}
		}
	}
	struct fanotify_response r = {.fd = m->fd, .response = FAN_ALLOW};
	if (write(g_fan, &r, sizeof(r)) != (ssize_t)sizeof(r))
		n_mark_errors++;
}

static void *listener(void *arg)
{
	(void)arg;
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	struct pollfd p[2] = {{.fd = g_fan, .events = POLLIN},
			      {.fd = g_stop_pipe[0], .events = POLLIN}};
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		ssize_t len = read(g_fan, buf, sizeof(buf));
		if (len < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			break;
		}
		const struct fanotify_event_metadata *m = (const void *)buf;
		while (FAN_EVENT_OK(m, len)) {
			if (m->fd >= 0) {
				if (m->mask & PERM_MASK)
					on_event(m);
				close(m->fd);
			}
			m = FAN_EVENT_NEXT(m, len);
		}
	}
	return NULL;
}

/* The pre-marking walk: every regular file without a sensitive path gets an
 * inode ignore mark (premark), or every directory without a sensitive entry
 * a directory mark (premark-dir). Marks are put through a descriptor opened
 * O_PATH | O_NOFOLLOW, so the object marked is the one whose name was
 * checked (an O_PATH open is no event). */
static void premark_dir(int dfd, char *rel, size_t rel_len)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	if (g_mode == M_PREMARK_DIR)
		mark_dir_if_clean(dfd, has_marker(rel));
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		size_t nl = strlen(e->d_name);
		if (rel_len + 1 + nl + 1 > PATH_MAX)
			continue;
		rel[rel_len] = '/';
		memcpy(rel + rel_len + 1, e->d_name, nl + 1);
		if (e->d_type == DT_DIR) {
			int sub = openat(dfd, e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				premark_dir(sub, rel, rel_len + 1 + nl);
		} else if (e->d_type == DT_REG && g_mode != M_PREMARK_DIR && !has_marker(rel)) {
			int f = openat(dfd, e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (f >= 0) {
				/* fanotify_mark() takes no O_PATH descriptor; its
				 * /proc link resolves to exactly that file. */
				char fp[64];
				snprintf(fp, sizeof(fp), "/proc/self/fd/%d", f);
				mark_inode(AT_FDCWD, fp);
				close(f);
			}
		}
		rel[rel_len] = '\0';
	}
	closedir(d);
}

static double g_premark_s;

static void *premark_thread(void *arg)
{
	(void)arg;
	double t0 = now_s();
	static char rel[PATH_MAX];
	rel[0] = '\0';
	int dfd = open(g_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		premark_dir(dfd, rel, 0);
	g_premark_s = now_s() - t0;
	return NULL;
}

static long slab_objects(const char *cache)
{
	char p[512], target[256];
	snprintf(p, sizeof(p), "/sys/kernel/slab/%s", cache);
	ssize_t n = readlink(p, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		snprintf(p, sizeof(p), "/sys/kernel/slab/%s/objects", target);
	} else {
		snprintf(p, sizeof(p), "/sys/kernel/slab/%s/objects", cache);
	}
	FILE *f = fopen(p, "re");
	long v = -1;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: view_fanotify [-m native|bind|perm|inode|dir|premark|premark-bg|"
			"premark-dir] [-F] [-S] [-E] [-v] DIR -- CMD [ARG...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int filesystem = 0, verbose = 0, opt;
	while ((opt = getopt(argc, argv, "+m:FSEv")) != -1) {
		switch (opt) {
		case 'm': {
			size_t i;
			for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
				if (!strcmp(optarg, mode_names[i]))
					break;
			if (i == sizeof(mode_names) / sizeof(mode_names[0]))
				usage();
			g_mode = (enum mode)i;
			break;
		}
		case 'F':
			filesystem = 1;
			break;
		case 'S':
			g_surv = 1;
			break;
		case 'E':
			g_evictable = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (optind + 2 > argc || strcmp(argv[optind + 1], "--") != 0 || optind + 3 > argc)
		usage();
	if (!realpath(argv[optind], g_root)) {
		fprintf(stderr, "vf: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	g_root_len = strlen(g_root);
	char **cmd = &argv[optind + 2];

	if (g_mode != M_NATIVE &&
	    (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	     mount(g_root, g_root, NULL, MS_BIND, NULL) < 0)) {
		fprintf(stderr, "vf: namespace or bind: %s\n", strerror(errno));
		return 1;
	}
	long marks0 = slab_objects("fanotify_mark"),
	     conn0 = slab_objects("fsnotify_mark_connector");
	pthread_t lt, pt;
	int have_listener = 0, have_premark = 0;
	if (g_mode != M_BIND && g_mode != M_NATIVE) {
		g_dirs = calloc(DIRSET_SIZE, sizeof(*g_dirs));
		g_fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK |
					      FAN_UNLIMITED_QUEUE | FAN_UNLIMITED_MARKS,
				      O_RDONLY | O_LARGEFILE | O_CLOEXEC);
		if (!g_dirs || g_fan < 0 || pipe2(g_stop_pipe, O_CLOEXEC) < 0) {
			fprintf(stderr, "vf: fanotify_init: %s\n", strerror(errno));
			return 1;
		}
		/* The mark is on the bind made above: opens through the host's
		 * own mount of the same files are not events (with -F, every
		 * mount of the file system is: the comparison). */
		unsigned int where = filesystem ? FAN_MARK_FILESYSTEM : FAN_MARK_MOUNT;
		if (fanotify_mark(g_fan, FAN_MARK_ADD | where, PERM_MASK, AT_FDCWD, g_root) < 0) {
			fprintf(stderr, "vf: fanotify_mark: %s\n", strerror(errno));
			return 1;
		}
		if (pthread_create(&lt, NULL, listener, NULL) != 0)
			return 1;
		have_listener = 1;
		if (g_mode == M_PREMARK || g_mode == M_PREMARK_DIR) {
			premark_thread(NULL);
		} else if (g_mode == M_PREMARK_BG) {
			if (pthread_create(&pt, NULL, premark_thread, NULL) != 0)
				return 1;
			have_premark = 1;
		}
	}

	double t0 = now_s();
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (chdir(g_root) < 0)
			_exit(126);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	double cmd_s = now_s() - t0;
	if (have_premark)
		pthread_join(pt, NULL);
	long marks1 = slab_objects("fanotify_mark"),
	     conn1 = slab_objects("fsnotify_mark_connector");
	if (have_listener) {
		if (write(g_stop_pipe[1], "x", 1) != 1)
			return 1;
		pthread_join(lt, NULL);
	}
	fprintf(stderr,
		"vf: mode=%s%s%s%s cmd_s=%.6f premark_s=%.6f events=%lu decisions=%lu "
		"inode_marks=%lu dir_marks=%lu mark_errors=%lu\n",
		mode_names[g_mode], filesystem ? " fs" : "", g_surv ? " surv" : "",
		g_evictable ? " evict" : "", cmd_s, g_premark_s, (unsigned long)n_events,
		(unsigned long)n_decisions, (unsigned long)n_inode_marks,
		(unsigned long)n_dir_marks, (unsigned long)n_mark_errors);
	if (verbose)
		fprintf(stderr,
			"vf: slab fanotify_mark %ld -> %ld, fsnotify_mark_connector %ld -> %ld\n",
			marks0, marks1, conn0, conn1);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
