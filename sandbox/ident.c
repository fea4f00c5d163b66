/*
 * ident.c: which file an exec names, found as its caller finds it (in its
 * root and cwd, with its credentials, component by component, O_PATH only),
 * and whether the agent can have written it (decided on identities: the
 * directories above the file and above every symlink on the way, compared by
 * device and inode with the places the agent may write, and their owners and
 * modes). No path prefix is trusted.
 *
 * A resolution that is right when nothing races is enough, because the exec
 * event compares identities: docs/design.md, section "The sandbox: the exec
 * decoder".
 */
#include "ident_int.h"
#include "proc_int.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- the places the agent can write --------------------------------------- */

struct sbx_place {
	dev_t dev;
	ino_t ino;
	char *path;
};

/* One directory of a remembered walk up (chain_memo below): held open, and
 * what its statx said when the verdict was reached. */
struct chain_level {
	int fd; /* O_PATH, O_CLOEXEC: pins the directory and its mount */
	dev_t dev;
	ino_t ino;
	uint64_t mnt_id;
	mode_t mode;
	uid_t uid;
	int64_t ctime_sec;
	uint32_t ctime_nsec;
};

#define CHAIN_MEMO_SLOTS 8
#define CHAIN_MEMO_DEPTH 8

/* A walk up that ended "nobody but root or the owner can change any of
 * these": lv[0] the directory it started on, lv[n - 1] the root or the top
 * of the mount tree. Why it cannot be stale: chain_memo_hit(). */
struct chain_memo {
	size_t n; /* 0: an empty slot */
	struct chain_level lv[CHAIN_MEMO_DEPTH];
};

struct sbx_places {
	struct sbx_place *v;
	size_t n;
	dev_t root_dev;
	ino_t root_ino;
	uid_t owner; /* who may own a program besides root */
	/* Walks up remembered for the run (one thread decodes). */
	struct chain_memo memo[CHAIN_MEMO_SLOTS];
	unsigned memo_next;
	size_t memo_hits;
};

struct sbx_places *sbx_places_open(int root_fd, char *const *paths, uid_t owner)
{
	struct sbx_places *pl = wd_calloc(1, sizeof(*pl));
	pl->owner = owner;
	wd_autoclose int own_root = -1;
	if (root_fd < 0)
		root_fd = own_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	if (root_fd >= 0 && fstat(root_fd, &st) == 0) {
		pl->root_dev = st.st_dev;
		pl->root_ino = st.st_ino;
	}
	size_t n = 0;
	while (paths && paths[n])
		n++;
	pl->v = wd_calloc(n + 1, sizeof(*pl->v));
	for (size_t i = 0; i < n; i++) {
		struct sbx_walk w;
		struct sbx_walk_caller c = {.pid = getpid()};
		/* A place that does not exist has no identity to match: the
		 * agent cannot write there either (Landlock has no rule). */
		if (sbx_walk_path(root_fd, root_fd, paths[i], true, &c, &w) == 0) {
			pl->v[pl->n++] =
				(struct sbx_place){w.st.st_dev, w.st.st_ino, wd_strdup(paths[i])};
		}
		sbx_walk_free(&w);
	}
	return pl;
}

static void chain_memo_drop(struct chain_memo *m)
{
	for (size_t i = 0; i < m->n; i++)
		close(m->lv[i].fd);
	m->n = 0;
}

size_t sbx_places_memo_hits(const struct sbx_places *pl)
{
	return pl ? pl->memo_hits : 0;
}

void sbx_places_free(struct sbx_places *pl)
{
	if (!pl)
		return;
	for (size_t i = 0; i < CHAIN_MEMO_SLOTS; i++)
		chain_memo_drop(&pl->memo[i]);
	for (size_t i = 0; i < pl->n; i++)
		free(pl->v[i].path);
	free(pl->v);
	free(pl);
}

static const struct sbx_place *place_of(const struct sbx_places *pl, const struct stat *st)
{
	for (size_t i = 0; i < pl->n; i++)
		if (pl->v[i].dev == st->st_dev && pl->v[i].ino == st->st_ino)
			return &pl->v[i];
	return NULL;
}

/* The name of the directory behind |fd|, for a reason shown to people. */
static char *fd_name(int fd)
{
	char *p = sbx_fd_path(fd);
	return p ? p : wd_strdup("?");
}

/* Whether one object (|st|, behind |fd|) is one only root or the invoking
 * user can change; else *writable_why. |dir|: it is a directory above the program. */
static bool owned_safely(const struct sbx_places *pl, int fd, const struct stat *st, bool dir,
			 char **writable_why)
{
	if (st->st_uid != 0 && st->st_uid != pl->owner) {
		wd_autofree char *name = fd_name(fd);
		*writable_why =
			wd_asprintf("%s belongs to uid %u, not root", name, (unsigned)st->st_uid);
		return false;
	}
	if (S_ISLNK(st->st_mode) || !(st->st_mode & (S_IWGRP | S_IWOTH)))
		return true;
	if (dir && (st->st_mode & S_ISVTX) && st->st_uid == 0)
		return true; /* /tmp-like: nobody replaces another's entry */
	wd_autofree char *name = fd_name(fd);
	*writable_why = wd_asprintf("%s is writable by its group or by others", name);
	return false;
}

/* What a statx of a directory says beyond its fstat. */
struct dir_facts {
	bool mount_root;  /* the root of a mount */
	bool have_mnt_id; /* the kernel said mnt_id */
	uint64_t mnt_id;
	struct statx_timestamp ctime;
};

/* statx of |fd| itself: its fstat, into |st| (the fields the checks use,
 * encoded as fstat encodes them), and the facts |f|. One call where fstat
 * and statx were two. 0 or -errno. */
static int stat_dir(int fd, struct stat *st, struct dir_facts *f)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_MNT_ID,
		  &sx) < 0)
		return -errno;
	if ((sx.stx_mask & (STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO)) !=
	    (STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO))
		return -EIO;
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	st->st_ino = sx.stx_ino;
	st->st_mode = sx.stx_mode;
	st->st_uid = sx.stx_uid;
	st->st_gid = sx.stx_gid;
	f->mount_root = (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
			(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	f->have_mnt_id = (sx.stx_mask & STATX_MNT_ID) && (sx.stx_mask & STATX_CTIME);
	f->mnt_id = sx.stx_mnt_id;
	f->ctime = sx.stx_ctime;
	return 0;
}

/*
 * Whether |fd|, the root of a mount (|mount_root|), is one of a read-only
 * mount: a host place shared into the session's private /tmp, say. The
 * agent can write nothing below it (the mount is read-only, whatever
 * Landlock allows above it), and cannot replace it: a mount point cannot
 * be renamed or removed while mounted, and the filter and the dropped
 * capabilities keep the agent from mounting or unmounting. What lies above
 * it only names it, and the exec event checks that the file that starts is
 * the one decided. Any doubt (an old kernel without the attribute) is "no".
 */
static bool ro_mount_root(int fd, bool mount_root)
{
	struct statfs sf;
	return mount_root && fstatfs(fd, &sf) == 0 && (sf.f_flags & ST_RDONLY);
}

/* Whether the level |lv| is still what |st| and |f| say now. */
static bool level_same(const struct chain_level *lv, const struct stat *st,
		       const struct dir_facts *f)
{
	return f->have_mnt_id && lv->dev == st->st_dev && lv->ino == st->st_ino &&
	       lv->mnt_id == f->mnt_id && lv->mode == st->st_mode && lv->uid == st->st_uid &&
	       lv->ctime_sec == f->ctime.tv_sec && lv->ctime_nsec == f->ctime.tv_nsec;
}

/*
 * Whether the walk up from the directory |st| (|f|) is remembered as safe
 * and still is: then the full walk would say "not writable" too.
 *
 * Why it cannot be stale. The verdict of a walk up depends on, for each
 * directory on it, its identity (the places and the root are compared by
 * identity), its owner and mode (owned_safely), whether it is a read-only
 * mount's root, and which directory is its "..". A remembered walk holds
 * each of its directories open (so neither the inode nor the mount can be
 * freed and its number given to another) and, at each use, takes one
 * statx of each and compares identity, mount id, owner, mode and ctime
 * with what they were:
 *  - owner and mode: compared directly; and a chmod or chown, which the
 *    agent's uid may make on a directory it owns (Landlock has no right
 *    for it), sets the ctime;
 *  - "..": a directory changes parent only by a rename of it, which sets
 *    its ctime (ext4, xfs, btrfs, tmpfs), and which the agent cannot make
 *    here at all: every directory remembered lies outside every place the
 *    agent may write (a walk that meets one is never remembered), and
 *    Landlock refuses renames, links and removals outside those places;
 *    a mount moved or detached under it needs mount(2), which the filter
 *    and the dropped capabilities refuse to the agent;
 *  - a read-only mount's root ends a walk as "not writable": a walk that
 *    ended so is never remembered, and one that did not is "not writable"
 *    whether or not a directory on it became such a root later.
 * ctime is trusted only when it is over a second older than the walk that
 * remembered it: timestamps are coarse, and a change made within the same
 * tick as the last one could leave it equal; any change after the walk
 * sets it to a later second. Only block-device file systems are remembered
 * (a major number: not tmpfs, proc, FUSE or overlayfs), whose ctime rules
 * are the ones above, and whose mounts a held descriptor keeps busy for
 * no one's harm. Anything that differs drops the memory and walks again.
 */
static bool chain_memo_hit(struct sbx_places *pl, const struct stat *st, const struct dir_facts *f)
{
	for (size_t i = 0; i < CHAIN_MEMO_SLOTS; i++) {
		struct chain_memo *m = &pl->memo[i];
		if (m->n == 0 || m->lv[0].dev != st->st_dev || m->lv[0].ino != st->st_ino)
			continue;
		if (!level_same(&m->lv[0], st, f)) {
			chain_memo_drop(m);
			return false;
		}
		for (size_t k = 1; k < m->n; k++) {
			struct stat ust;
			struct dir_facts uf;
			if (stat_dir(m->lv[k].fd, &ust, &uf) < 0 ||
			    !level_same(&m->lv[k], &ust, &uf)) {
				chain_memo_drop(m);
				return false;
			}
		}
		pl->memo_hits++;
		return true;
	}
	return false;
}

/* Fills |lv| for the directory |fd| (taken) with |st| and |f|; false when
 * it may not be remembered (see chain_memo_hit()). */
static bool level_fill(struct chain_level *lv, int fd, const struct stat *st,
		       const struct dir_facts *f, const struct timespec *now)
{
	*lv = (struct chain_level){.fd = fd,
				   .dev = st->st_dev,
				   .ino = st->st_ino,
				   .mnt_id = f->mnt_id,
				   .mode = st->st_mode,
				   .uid = st->st_uid,
				   .ctime_sec = f->ctime.tv_sec,
				   .ctime_nsec = f->ctime.tv_nsec};
	return f->have_mnt_id && major(st->st_dev) != 0 && f->ctime.tv_sec + 1 < now->tv_sec;
}

/* Closes the directories |m| holds above lv[0]. */
static void close_levels(struct chain_memo *m)
{
	for (size_t i = 1; i < m->n; i++)
		close(m->lv[i].fd);
	m->n = 0;
}

/* Walks up from directory |dirfd| to the root: true when one of them is a
 * place the agent may write or is not safely owned (with *writable_why). Each step
 * is the kernel's ".." of the directory, so a rename or a symlink cannot
 * make a path string say something else. |dirfd| is borrowed: the walk
 * starts on it and opens only the directories above it. A walk that ends
 * "not writable" is remembered (chain_memo_hit()). */
static bool chain_writable(struct sbx_places *pl, int dirfd, char **writable_why)
{
	struct stat st;
	struct dir_facts f;
	if (stat_dir(dirfd, &st, &f) < 0) {
		*writable_why = wd_strdup("the directory of the program could not be opened");
		return true;
	}
	if (chain_memo_hit(pl, &st, &f))
		return false;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	/* While |keep|, every directory the walk opened is in m.lv[1..n)
	 * (|cur| among them, or |dirfd|); once not, |cur| is the only one
	 * open and the walk closes each as it climbs. */
	struct chain_memo m = {0};
	bool keep = level_fill(&m.lv[0], -1, &st, &f, &now);
	m.n = 1;
	int cur = dirfd;
	bool bad = false, done = false, ro_root = false;
	for (int depth = 0; depth < 4096; depth++) {
		const struct sbx_place *place = place_of(pl, &st);
		if (place) {
			*writable_why =
				wd_asprintf("written where the agent can write: %s", place->path);
			bad = true;
			break;
		}
		if (!owned_safely(pl, cur, &st, true, writable_why)) {
			bad = true;
			break;
		}
		if (st.st_dev == pl->root_dev && st.st_ino == pl->root_ino) {
			done = true;
			break;
		}
		if (ro_mount_root(cur, f.mount_root)) {
			ro_root = true;
			break; /* "not writable", never remembered */
		}
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct stat ust;
		struct dir_facts uf;
		if (up < 0 || stat_dir(up, &ust, &uf) < 0) {
			if (up >= 0)
				close(up);
			goto unknown;
		}
		if (ust.st_dev == st.st_dev && ust.st_ino == st.st_ino) {
			close(up);
			done = true;
			break; /* the top of the caller's mount tree */
		}
		if (!keep && cur != dirfd)
			close(cur);
		cur = up;
		st = ust;
		f = uf;
		if (keep && m.n < CHAIN_MEMO_DEPTH && level_fill(&m.lv[m.n], up, &st, &f, &now)) {
			m.n++;
		} else if (keep) {
			close_levels(&m); /* |up| is not among them */
			keep = false;
		}
	}
	/* A climb that reached no verdict (deeper than the walk goes: the
	 * agent can make a directory chain that long in a place it writes)
	 * proves nothing. */
	if (!bad && !done && !ro_root)
		goto unknown;
	if (keep && done && !bad && (m.lv[0].fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3)) >= 0) {
		struct chain_memo *slot = &pl->memo[pl->memo_next++ % CHAIN_MEMO_SLOTS];
		chain_memo_drop(slot);
		*slot = m;
	} else if (keep) {
		close_levels(&m);
	} else if (cur != dirfd) {
		close(cur);
	}
	return bad;
unknown:
	if (keep)
		close_levels(&m);
	else if (cur != dirfd)
		close(cur);
	*writable_why = wd_strdup("a directory above the program could not be examined");
	return true;
}

bool sbx_places_writable(const struct sbx_places *cpl, int root, int dirfd, int fd,
			 const struct stat *st, char **writable_why)
{
	*writable_why = NULL;
	if (!cpl)
		return false;
	/* The places themselves are read only; the memo of walks up is a
	 * cache that never changes an answer (chain_memo_hit()). */
	struct sbx_places *pl = (struct sbx_places *)cpl;
	if (place_of(pl, st)) {
		*writable_why = wd_asprintf("written where the agent can write: %s",
					    place_of(pl, st)->path);
		return true;
	}
	if (!owned_safely(pl, fd, st, false, writable_why))
		return true;
	if (dirfd >= 0)
		return chain_writable(pl, dirfd, writable_why);
	/* Reached through a magic link or a descriptor: find its directory by
	 * the name the kernel gives it, and believe it only when that name
	 * still leads to this very file. A file with no such name (deleted,
	 * a memfd) has no place outside the agent's reach. */
	wd_autofree char *name = fd_name(fd);
	char *slash = strrchr(name, '/');
	if (name[0] != '/' || !slash) {
		*writable_why =
			wd_asprintf("the program has no place in the file system (%s)", name);
		return true;
	}
	*slash = '\0';
	struct sbx_walk w;
	struct sbx_walk_caller c = {.pid = getpid()};
	int rc = sbx_walk_path(root, root, name[0] ? name : "/", true, &c, &w);
	bool bad = true;
	struct stat fst;
	int f = rc == 0 ? openat(w.fd, slash + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (f >= 0 && fstat(f, &fst) == 0 && fst.st_dev == st->st_dev && fst.st_ino == st->st_ino)
		bad = chain_writable(pl, w.fd, writable_why);
	else
		*writable_why = wd_asprintf("the program has no place in the file system (%s/%s)",
					    name, slash + 1);
	if (f >= 0)
		close(f);
	sbx_walk_free(&w);
	return bad;
}

/* ---- resolving as the caller ------------------------------------------------ */

/* Whether |fd| is the directory of one of the first |n| symlinks of |w|:
 * the walk hands the directory it was in to link_dir[] instead of opening
 * it again, so one descriptor may stand for several of them, and for the
 * walk's dirfd too. */
static bool link_held(const struct sbx_walk *w, size_t n, int fd)
{
	for (size_t i = 0; i < n; i++)
		if (w->link_dir[i] == fd)
			return true;
	return false;
}

void sbx_walk_free(struct sbx_walk *w)
{
	if (w->fd >= 0 && !link_held(w, w->nlinks, w->fd))
		close(w->fd);
	if (w->dirfd >= 0 && w->dirfd != w->fd && !link_held(w, w->nlinks, w->dirfd))
		close(w->dirfd);
	for (size_t i = 0; i < w->nlinks; i++)
		if (w->link_dir[i] >= 0 && !link_held(w, i, w->link_dir[i]))
			close(w->link_dir[i]);
	w->fd = w->dirfd = -1;
	w->nlinks = 0;
}

/* The caller's ids in the innermost pid namespace (NStgid, NSpid): the
 * sandbox's, whose /proc the caller sees. */
static int caller_ns_ids(struct sbx_walk_caller *c)
{
	if (c->ns_tgid > 0)
		return 0;
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/status", c->pid);
	char *text = NULL;
	if (wd_read_proc(p, 1 << 16, &text, NULL) < 0)
		return -ESRCH;
	const char *keys[2] = {"\nNStgid:", "\nNSpid:"};
	pid_t *out[2] = {&c->ns_tgid, &c->ns_tid};
	for (int k = 0; k < 2; k++) {
		const char *s = strstr(text, keys[k]);
		long last = 0;
		if (s) {
			s += strlen(keys[k]);
			char *end;
			for (;;) {
				long v = strtol(s, &end, 10);
				if (end == s)
					break;
				last = v;
				s = end;
			}
		}
		*out[k] = (pid_t)last;
	}
	free(text);
	return c->ns_tgid > 0 && c->ns_tid > 0 ? 0 : -ESRCH;
}

/* A proc mount's device is always an anonymous one (major 0: proc has no
 * block device, get_tree_nodev), so an object on a device with a major
 * number is not in a /proc, and no fstatfs is needed to say so. */
static bool maybe_proc(const struct stat *st)
{
	return major(st->st_dev) == 0;
}

static bool is_proc_root(int fd, const struct stat *st)
{
	struct statfs sf;
	return st->st_ino == 1 && maybe_proc(st) && fstatfs(fd, &sf) == 0 &&
	       sf.f_type == PROC_SUPER_MAGIC;
}

/* Whether |fd| (|st|) lies in a proc mount. */
static bool in_proc(int fd, const struct stat *st)
{
	struct statfs sf;
	return maybe_proc(st) && fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/* Puts |text| then "/" then |rest| into |rest| (room for |cap|). */
static int prepend(char *rest, size_t cap, const char *text)
{
	size_t tl = strlen(text), rl = strlen(rest);
	if (tl + 1 + rl + 1 > cap)
		return -ENAMETOOLONG;
	memmove(rest + tl + 1, rest, rl + 1);
	memcpy(rest, text, tl);
	rest[tl] = '/';
	if (rl == 0)
		rest[tl] = '\0'; /* no trailing slash that was not there */
	return 0;
}

#define WALK_MAX 8192

/* A walk in progress. |cur| is the object reached so far, found in |dir|
 * (-1: at the root, after "..", or through a magic link, |magic|).
 * |curst| is the fstat of |cur| when |have_curst|: the walk stats each
 * object once, when it is opened, and uses that for its type and identity,
 * which cannot change for an open descriptor. */
struct walk {
	int root;
	int cur, dir;
	bool magic;
	bool have_curst;
	struct stat curst;
	struct stat rootst;
	char rest[WALK_MAX]; /* what is left of the path */
	struct sbx_walk *w;
	struct sbx_walk_caller *c;
};

/* Closes |fd| unless it was handed to the walk's link_dir[]. */
static void walk_close(struct walk *k, int fd)
{
	if (fd >= 0 && !link_held(k->w, k->w->nlinks, fd))
		close(fd);
}

/* Makes |fd| (taken) the object reached, found in |dir| (taken, or -1),
 * with its fstat |st| when known (else NULL). */
static void walk_move(struct walk *k, int fd, int dir, bool magic, const struct stat *st)
{
	if (k->cur != dir)
		walk_close(k, k->cur);
	walk_close(k, k->dir);
	k->cur = fd;
	k->dir = dir;
	k->magic = magic;
	k->have_curst = st != NULL;
	if (st)
		k->curst = *st;
}

/* The fstat of |k->cur| into |st|: the one taken when it was opened, or a
 * new one. 0 or -errno. */
static int walk_stat(struct walk *k, struct stat *st)
{
	if (!k->have_curst) {
		if (fstat(k->cur, &k->curst) < 0)
			return -errno;
		k->have_curst = true;
	}
	*st = k->curst;
	return 0;
}

/* Takes the next component off |rest| into |comp|: 1, 0 at the end, or
 * -errno. A leading "/" restarts at the caller's root. */
static int walk_next(struct walk *k, char comp[256], bool *slash, bool *last)
{
	char *s = k->rest;
	if (*s == '/') {
		int fd = openat(k->root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		/* The same directory as |root|, so the same fstat. */
		walk_move(k, fd, -1, false, &k->rootst);
		while (*s == '/')
			s++;
	}
	if (!*s)
		return 0;
	char *e = strchr(s, '/');
	size_t len = e ? (size_t)(e - s) : strlen(s);
	if (len >= 256)
		return -ENAMETOOLONG;
	memcpy(comp, s, len);
	comp[len] = '\0';
	const char *after = s + len;
	*slash = *after == '/';
	while (*after == '/')
		after++;
	*last = !*after;
	memmove(k->rest, after, strlen(after) + 1);
	return 1;
}

/* Records a symlink followed (it lies in |k->cur|) for the identity check.
 * |k->cur| itself is handed to link_dir[]: the walk no longer closes it
 * (walk_close), sbx_walk_free() does, once. */
static int walk_note_link(struct walk *k, const struct stat *st)
{
	struct sbx_walk *w = k->w;
	if (w->nlinks >= SBX_WALK_LINKS)
		return -ELOOP;
	w->link_dir[w->nlinks] = k->cur;
	w->link_st[w->nlinks] = *st;
	w->nlinks++;
	return 0;
}

/* "..", which never climbs above the caller's root. */
static int walk_dotdot(struct walk *k, const struct stat *cst)
{
	if (cst->st_dev == k->rootst.st_dev && cst->st_ino == k->rootst.st_ino)
		return 0;
	int up = openat(k->cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (up < 0)
		return -errno;
	walk_move(k, up, -1, false, NULL);
	return 0;
}

/* /proc/self and /proc/thread-self name the reader: here the caller, by
 * its ids in the pid namespace of the sandbox's /proc. */
static int walk_proc_self(struct walk *k, const char *comp)
{
	int rc = caller_ns_ids(k->c);
	if (rc < 0)
		return rc;
	struct stat st;
	if (fstatat(k->cur, comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if ((rc = walk_note_link(k, &st)) < 0)
		return rc;
	char t[64];
	if (strcmp(comp, "self") == 0)
		snprintf(t, sizeof(t), "%d", k->c->ns_tgid);
	else
		snprintf(t, sizeof(t), "%d/task/%d", k->c->ns_tgid, k->c->ns_tid);
	return prepend(k->rest, sizeof(k->rest), t);
}

/* Follows the symlink |nfd| (taken), named |comp| in |k->cur|. */
static int walk_symlink(struct walk *k, int nfd, const char *comp, const struct stat *cst,
			const struct stat *nst, bool slash)
{
	int rc = walk_note_link(k, nst);
	if (rc < 0) {
		close(nfd);
		return rc;
	}
	if (in_proc(k->cur, cst) && !is_proc_root(k->cur, cst)) {
		/* A magic link (exe, cwd, root, fd/N): no text to follow, an
		 * object the kernel hands over, after its own access check
		 * for this thread's credentials (the caller's). */
		close(nfd);
		int fd = openat(k->cur, comp, O_PATH | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		walk_move(k, fd, -1, true, NULL);
		return 0;
	}
	char target[4096];
	ssize_t n = readlinkat(nfd, "", target, sizeof(target) - 1);
	close(nfd);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENOENT;
	target[n] = '\0';
	/* "link/" still names a directory once replaced. */
	if (slash && !k->rest[0])
		snprintf(k->rest, sizeof(k->rest), "/");
	return prepend(k->rest, sizeof(k->rest), target);
}

/* One component. The kernel checks search permission on |k->cur| in each
 * openat, with this thread's (the caller's) credentials. */
static int walk_step(struct walk *k, const char *comp, bool slash, bool last, bool follow)
{
	struct stat cst = {0};
	int rc = walk_stat(k, &cst);
	if (rc < 0)
		return rc;
	if (!S_ISDIR(cst.st_mode))
		return -ENOTDIR;
	if (strcmp(comp, ".") == 0)
		return 0;
	if (strcmp(comp, "..") == 0)
		return walk_dotdot(k, &cst);
	if ((strcmp(comp, "self") == 0 || strcmp(comp, "thread-self") == 0) &&
	    is_proc_root(k->cur, &cst))
		return walk_proc_self(k, comp);
	int nfd = openat(k->cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (nfd < 0)
		return -errno;
	struct stat nst;
	if (fstat(nfd, &nst) < 0) {
		close(nfd);
		return -errno;
	}
	if (S_ISLNK(nst.st_mode) && (!last || follow || slash))
		return walk_symlink(k, nfd, comp, &cst, &nst, slash);
	/* The final symlink, not followed (AT_SYMLINK_NOFOLLOW): execveat
	 * fails with ELOOP; "file/" with ENOTDIR. */
	rc = S_ISLNK(nst.st_mode) ? -ELOOP : slash && !S_ISDIR(nst.st_mode) ? -ENOTDIR : 0;
	if (rc < 0) {
		close(nfd);
		return rc;
	}
	walk_move(k, nfd, k->cur, false, &nst);
	return 0;
}

int sbx_walk_path(int root, int start, const char *path, bool follow, struct sbx_walk_caller *c,
		  struct sbx_walk *w)
{
	*w = (struct sbx_walk){.fd = -1, .dirfd = -1};
	if (!path[0])
		return -ENOENT;
	/* On the stack (about 8 KiB, the decoder's thread has megabytes): no
	 * heap block taken and given back for every walk. */
	struct walk kw;
	struct walk *k = &kw;
	k->root = root;
	k->cur = k->dir = -1;
	k->magic = k->have_curst = false;
	k->w = w;
	k->c = c;
	k->rest[0] = '\0';
	int rc = 0;
	if (strlen(path) >= sizeof(k->rest))
		rc = -ENAMETOOLONG;
	else if (fstat(root, &k->rootst) < 0)
		rc = -errno;
	/* An absolute path starts at the root, which walk_next() opens for
	 * its leading "/". */
	else if (path[0] != '/' &&
		 (k->cur = openat(start, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = -errno;
	if (rc == 0)
		memcpy(k->rest, path, strlen(path) + 1); /* fits: checked above */
	/* Bounded: each step consumes a component or follows one of at most
	 * SBX_WALK_LINKS symlinks. */
	for (int steps = 0; rc == 0; steps++) {
		char comp[256];
		bool slash = false, last = false;
		rc = steps > 65536 ? -ELOOP : walk_next(k, comp, &slash, &last);
		if (rc <= 0)
			break;
		rc = walk_step(k, comp, slash, last, follow);
	}
	if (rc == 0)
		rc = walk_stat(k, &w->st);
	if (rc == 0) {
		w->fd = k->cur;
		w->dirfd = k->magic ? -1 : k->dir;
		if (k->magic)
			walk_close(k, k->dir);
	} else {
		walk_move(k, -1, -1, false, NULL);
		sbx_walk_free(w);
	}
	return rc;
}
