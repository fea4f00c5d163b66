/*
 * view: the project view, a libfuse3 low-level passthrough of the project
 * directory that hands sensitive opens, renames, links and symlinks to a
 * decide callback before they happen (issue 4, DESIGN.md "Mechanisms").
 *
 * This file holds the view's state and lifecycle: the inode table, the path
 * of every inode relative to the project root, the checks (hidden,
 * write-protected, sensitive) and the session's start and stop. The FUSE
 * callbacks are in view_ops.c. It does not mount in the agent's namespace
 * (the child does, with sbx_fuse_mount()) and it decides nothing itself.
 *
 * Inodes. Each object the kernel knows is a struct vnode holding an O_PATH
 * fd, keyed by (dev, ino) and counted by the kernel's lookups, as libfuse's
 * passthrough_ll does. Every operation goes through that fd or its parent's
 * with *at() calls and O_NOFOLLOW, so the view never follows a symlink of
 * the backing tree in its own (unconfined) context: the kernel resolves
 * symlinks in the agent's context, and a link to .env comes back to the view
 * as a lookup of ".env".
 *
 * Paths. A vnode keeps the last name it was seen under and a counted
 * reference to its parent, so its project-relative path can be rebuilt at
 * any time. Lookups and renames made through the view update the name; a
 * rename is followed by a stat of the new name to find the moved object.
 * Parent links never form a cycle (set_name refuses a parent that is a
 * descendant). Sensitivity is sticky: an object once reached through a
 * sensitive name, or under a sensitive directory, stays sensitive under any
 * name, and its (dev, ino) is remembered so that a later vnode for the same
 * file (after a forget) or another hard link of it is decided too. A hard
 * link whose sensitive name the view has never seen (made by the user
 * before the run) is found by a one-time walk of the project the first
 * time a file with st_nlink > 1 is opened under a name that is not
 * sensitive; hard links the agent makes go through link(), which is
 * decided.
 *
 * Caching (DESIGN.md "Performance notes"). Entry, attribute and negative
 * timeouts are VIEW_*_TIMEOUT (1 s). Longer ones (86400 s) buy little on a
 * warm walk, where the kernel revalidates only once per second per entry,
 * but they would hide the user's own edits made outside the view (an IDE
 * saving in place, a `git checkout` in another terminal) from the agent for
 * that long, and a file the user renames to a sensitive name would keep its
 * old name in the kernel's cache. keep_cache and cache_readdir are granted
 * on open only when the backing file's mtime and size match what the
 * kernel cached last time, so external edits drop the stale pages.
 * The writeback cache is not enabled: with it the kernel trusts its own
 * i_size and mtime for regular files and ignores the backing file's, so a
 * file the user grows or shrinks in place outside the view would read back
 * at its old size in the sandbox (see the measurements in the report).
 *
 * Descriptors. Every object the kernel has looked up holds an fd until the
 * kernel forgets it, and the kernel forgets only under memory pressure: a
 * walk of a tree larger than RLIMIT_NOFILE would run the view out of fds.
 * So the view keeps at most fd_budget objects: past it, an evictor thread
 * asks the kernel to drop the dentries of the least recently looked-up
 * files (fuse_lowlevel_notify_inval_entry); the kernel then forgets those
 * nobody uses and the view closes their fds. A later access looks them up
 * again. It never touches a directory (one may be a process's cwd, and an
 * invalidated busy dentry reads as deleted), a file with an open handle,
 * a sensitive or write-protected object (their sticky flags must not be
 * lost with the vnode), or an object looked up while the sandbox was set
 * up (sbx_view_seal): a hidden place inside the project is a mount on such
 * an entry, and dropping the entry would detach the mount. The evictor calls the kernel from its own thread,
 * never from a request, holding no lock of the view: the kernel takes the
 * directory's lock, which a request in that directory may hold while it
 * waits for the view. The parent is pinned (refs) across the call, so its
 * inode number cannot be reused meanwhile.
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

#define VIEW_DEFAULT_THREADS 4
#define VIEW_EVICT_BATCH     4096 /* at most this many per round */
#define VIEW_SCAN_MAX_DEPTH  256
#define VIEW_PARENT_MAX	     100000 /* bound on parent chains (no cycles) */

/* A NULL-terminated copy of |src| (NULL: an empty one). */
static char **strv_copy(const char *const *src)
{
	size_t n = 0;
	while (src && src[n])
		n++;
	char **v = wd_calloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		v[i] = wd_strdup(src[i]);
	return v;
}

/* ---- sensitivity by path ---------------------------------------------- */

/* Whether |path| (relative to the view's root) carries a sensitive marker:
 * never under an unmarked place (a markers view's harness places). */
static bool path_sensitive(const struct sbx_view *v, const char *path)
{
	return sbx_view_path_sensitive(v->policy, (const char *const *)v->unmarked, path);
}

/* ---- the inode table ------------------------------------------------- */

static size_t hash_ident(dev_t dev, ino_t ino, size_t size)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;
	return (size_t)(h >> 17) & (size - 1);
}

static struct vnode *table_find(struct sbx_view *v, dev_t dev, ino_t ino)
{
	struct vnode *n = v->table[hash_ident(dev, ino, v->table_size)];

	while (n && (n->dev != dev || n->ino != ino))
		n = n->hnext;
	return n;
}

static void table_insert(struct sbx_view *v, struct vnode *n)
{
	if (v->count + 1 > v->table_size * 2) {
		size_t size = v->table_size * 4;
		struct vnode **t = wd_calloc(size, sizeof(*t));

		for (size_t i = 0; i < v->table_size; i++) {
			struct vnode *c = v->table[i], *next;

			for (; c; c = next) {
				size_t h = hash_ident(c->dev, c->ino, size);

				next = c->hnext;
				c->hnext = t[h];
				t[h] = c;
			}
		}
		free(v->table);
		v->table = t;
		v->table_size = size;
	}
	size_t h = hash_ident(n->dev, n->ino, v->table_size);
	n->hnext = v->table[h];
	v->table[h] = n;
	v->count++;
}

static void table_remove(struct sbx_view *v, struct vnode *n)
{
	struct vnode **pp = &v->table[hash_ident(n->dev, n->ino, v->table_size)];

	while (*pp && *pp != n)
		pp = &(*pp)->hnext;
	if (*pp) {
		*pp = n->hnext;
		v->count--;
	}
}

/* Frees |n| and then its ancestors while nothing references them. Under
 * lock. */
static void node_release(struct sbx_view *v, struct vnode *n)
{
	while (n && n != &v->root && n->nlookup == 0 && n->refs == 0) {
		struct vnode *parent = n->parent;

		table_remove(v, n);
		close(n->fd);
		free(n->name);
		free(n);
		if (parent)
			parent->refs--;
		n = parent;
	}
}

struct vnode *view_node(struct sbx_view *v, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return &v->root;
	return (struct vnode *)(uintptr_t)ino;
}

fuse_ino_t view_ino(struct sbx_view *v, struct vnode *n)
{
	return n == &v->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

/* Records that |n| is called |name| in |parent|. Refuses (keeps the old
 * name) when |parent| is |n| or below it, which only a stale view of a tree
 * changed outside could suggest: parent chains stay acyclic. Under lock. */
static void set_name(struct sbx_view *v, struct vnode *n, struct vnode *parent, const char *name)
{
	if (n == &v->root)
		return;
	for (struct vnode *p = parent; p; p = p->parent)
		if (p == n)
			return;
	if (n->name && n->parent == parent && strcmp(n->name, name) == 0)
		return;
	char *copy = wd_strdup(name);
	struct vnode *old = n->parent;

	parent->refs++;
	n->parent = parent;
	free(n->name);
	n->name = copy;
	if (old) {
		old->refs--;
		node_release(v, old);
	}
}

char *view_path(struct sbx_view *v, struct vnode *parent, const char *name)
{
	size_t len = name ? strlen(name) : 0, depth = 0;

	pthread_mutex_lock(&v->lock);
	for (struct vnode *p = parent; p != &v->root && p && depth < VIEW_PARENT_MAX;
	     p = p->parent, depth++)
		len += strlen(p->name) + 1;
	char *out = wd_malloc(len + 1), *end = out + len;

	*end = '\0';
	if (name) {
		end -= strlen(name);
		memcpy(end, name, strlen(name));
	}
	depth = 0;
	for (struct vnode *p = parent; p != &v->root && p && depth < VIEW_PARENT_MAX;
	     p = p->parent, depth++) {
		size_t l = strlen(p->name);

		if (end != out + len)
			*--end = '/';
		end -= l;
		memcpy(end, p->name, l);
	}
	pthread_mutex_unlock(&v->lock);
	/* Without |name| one separator fewer was written than counted. */
	if (end != out)
		memmove(out, end, strlen(end) + 1);
	return out;
}

/* ---- sensitive identities -------------------------------------------- */

/* What (dev, ino) is known as: VIEW_SENSITIVE, VIEW_CONTROL or 0. Under
 * lock. */
static unsigned ident_flags(const struct sbx_view *v, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < v->nidents; i++)
		if (v->idents[i].dev == dev && v->idents[i].ino == ino)
			return v->idents[i].flags;
	return 0;
}

static bool ident_known(const struct sbx_view *v, dev_t dev, ino_t ino)
{
	return ident_flags(v, dev, ino) & VIEW_SENSITIVE;
}

/* Under lock. */
static void ident_add_flags(struct sbx_view *v, dev_t dev, ino_t ino, unsigned flags)
{
	for (size_t i = 0; i < v->nidents; i++)
		if (v->idents[i].dev == dev && v->idents[i].ino == ino) {
			v->idents[i].flags |= flags;
			return;
		}
	if (v->nidents == v->idents_cap) {
		v->idents_cap = v->idents_cap ? v->idents_cap * 2 : 16;
		v->idents = wd_realloc(v->idents, v->idents_cap * sizeof(*v->idents));
	}
	v->idents[v->nidents++] = (struct view_ident){dev, ino, flags};
}

static void ident_add(struct sbx_view *v, dev_t dev, ino_t ino)
{
	ident_add_flags(v, dev, ino, VIEW_SENSITIVE);
}

void view_identity_gone(struct sbx_view *v, int fd)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_nlink > 0)
		return;
	pthread_mutex_lock(&v->lock);
	for (size_t i = 0; i < v->nidents; i++)
		if (v->idents[i].dev == st.st_dev && v->idents[i].ino == st.st_ino) {
			v->idents[i] = v->idents[--v->nidents];
			break;
		}
	pthread_mutex_unlock(&v->lock);
}

void view_mark_sensitive(struct sbx_view *v, struct vnode *n)
{
	pthread_mutex_lock(&v->lock);
	n->sensitive = true;
	ident_add(v, n->dev, n->ino);
	pthread_mutex_unlock(&v->lock);
}

/* Walks the directory |fd| (taken) at project path |path|, remembering the
 * identity of every hard-linked regular file whose path is sensitive or a
 * control file's. */
static void scan_dir(struct sbx_view *v, int fd, const char *path, bool sens, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;

	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char *child =
			*path ? wd_asprintf("%s/%s", path, de->d_name) : wd_strdup(de->d_name);
		bool csens = sens || path_sensitive(v, child);
		bool cctl = pol_is_control(v->policy, child, NULL);
		unsigned char type = de->d_type;
		struct stat st;

		if (type == DT_UNKNOWN || (type == DT_REG && (csens || cctl))) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				type = S_ISDIR(st.st_mode)   ? DT_DIR
				       : S_ISREG(st.st_mode) ? DT_REG
							     : DT_UNKNOWN;
			else
				type = DT_UNKNOWN;
		}
		if (type == DT_DIR && depth < VIEW_SCAN_MAX_DEPTH) {
			int cfd = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0)
				scan_dir(v, cfd, child, csens, depth + 1);
		} else if (type == DT_REG && (csens || cctl) && st.st_nlink > 1) {
			pthread_mutex_lock(&v->lock);
			ident_add_flags(v, st.st_dev, st.st_ino,
					(csens ? VIEW_SENSITIVE : 0) | (cctl ? VIEW_CONTROL : 0));
			pthread_mutex_unlock(&v->lock);
		}
		free(child);
	}
	closedir(d);
}

/* Runs the one-time walk for hard links of sensitive files. Later changes
 * made through the view are tracked by lookup, link and rename; changes the
 * user makes outside the view after the walk are not (documented trade-off:
 * the agent cannot make hard links except through link(), which is
 * decided). */
static void ensure_scanned(struct sbx_view *v)
{
	pthread_mutex_lock(&v->scan_lock);
	if (!v->scanned) {
		int fd = openat(v->root.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd >= 0)
			scan_dir(v, fd, "", false, 0);
		v->scanned = true;
	}
	pthread_mutex_unlock(&v->scan_lock);
}

unsigned view_node_flags(struct sbx_view *v, struct vnode *n, const char *path,
			 const struct stat *st)
{
	unsigned flags = view_node_sensitive(v, n, path, st) ? VIEW_SENSITIVE : 0;
	bool ctl;

	pthread_mutex_lock(&v->lock);
	ctl = n->control || (ident_flags(v, st->st_dev, st->st_ino) & VIEW_CONTROL);
	pthread_mutex_unlock(&v->lock);
	if (!ctl && pol_is_control(v->policy, path, NULL))
		ctl = true;
	/* A hard link made before the run: view_node_sensitive() has walked
	 * the project already for a file with several names. */
	if (!ctl && S_ISREG(st->st_mode) && st->st_nlink > 1) {
		ensure_scanned(v);
		pthread_mutex_lock(&v->lock);
		ctl = ident_flags(v, st->st_dev, st->st_ino) & VIEW_CONTROL;
		pthread_mutex_unlock(&v->lock);
	}
	if (ctl) {
		pthread_mutex_lock(&v->lock);
		n->control = true;
		if (S_ISREG(st->st_mode))
			ident_add_flags(v, st->st_dev, st->st_ino, VIEW_CONTROL);
		pthread_mutex_unlock(&v->lock);
		flags |= VIEW_CONTROL;
	}
	return flags;
}

bool view_name_control(struct sbx_view *v, struct vnode *parent, const char *name, const char *path)
{
	struct stat st;
	bool ctl = pol_is_control(v->policy, path, NULL);

	if (!ctl && fstatat(parent->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		pthread_mutex_lock(&v->lock);
		struct vnode *n = table_find(v, st.st_dev, st.st_ino);

		ctl = (n && n->control) || (ident_flags(v, st.st_dev, st.st_ino) & VIEW_CONTROL);
		pthread_mutex_unlock(&v->lock);
	}
	return ctl;
}

bool view_node_sensitive(struct sbx_view *v, struct vnode *n, const char *path,
			 const struct stat *st)
{
	bool known;

	pthread_mutex_lock(&v->lock);
	known = n->sensitive || ident_known(v, st->st_dev, st->st_ino);
	pthread_mutex_unlock(&v->lock);
	if (!known && path_sensitive(v, path))
		known = true;
	/* A markers view (a home) is not walked: it may hold millions of
	 * files, and its hard links to a sensitive file under an ordinary
	 * name are the user's own (the agent's link() is decided). */
	if (!known && !v->prefix && S_ISREG(st->st_mode) && st->st_nlink > 1) {
		ensure_scanned(v);
		pthread_mutex_lock(&v->lock);
		known = ident_known(v, st->st_dev, st->st_ino);
		pthread_mutex_unlock(&v->lock);
	}
	if (known)
		view_mark_sensitive(v, n);
	return known;
}

/* ---- checks ---------------------------------------------------------- */

static bool path_write_protected(const struct sbx_view *v, const char *path);

void view_name_flags(struct sbx_view *v, struct vnode *parent, const char *name, const char *path,
		     bool *sens, bool *wprot)
{
	struct stat st;
	bool exists = fstatat(parent->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;

	*sens = path_sensitive(v, path);
	*wprot = path_write_protected(v, path);
	pthread_mutex_lock(&v->lock);
	*sens |= parent->sensitive;
	*wprot |= parent->wprot;
	if (exists) {
		struct vnode *n = table_find(v, st.st_dev, st.st_ino);

		*sens |= ident_known(v, st.st_dev, st.st_ino) || (n && n->sensitive);
		*wprot |= n && n->wprot;
	}
	pthread_mutex_unlock(&v->lock);
}

bool view_is_hidden(const struct sbx_view *v, const char *path)
{
	/* Compared without case: on a case-folding directory (ext4 casefold,
	 * vfat, a mounted share) ".SSH" is ".ssh". Hiding ".SSH" as well on
	 * other file systems costs nothing. */
	for (char **h = v->hidden; h && *h; h++) {
		size_t n = strlen(*h);
		if (strncasecmp(path, *h, n) == 0 && (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return false;
}

static bool path_write_protected(const struct sbx_view *v, const char *path)
{
	return sbx_view_path_write_protected(v->policy, v->prefix, path);
}

int view_check_write(const struct sbx_view *v, const char *path)
{
	if (v->read_only || path_write_protected(v, path))
		return -EROFS;
	if (!v->writable)
		return 0;
	for (char **w = v->writable; *w; w++)
		if (wd_path_within(path, *w))
			return 0;
	return -EROFS;
}

int view_decide(struct sbx_view *v, fuse_req_t req, const char *path, const char *path2,
		unsigned access)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	/* A gated place's paths are shown whole: "/home/u/.ssh/id_rsa". */
	wd_autofree char *abs = !v->prefix ? NULL
				: path[0]  ? wd_asprintf("%s/%s", v->prefix, path)
					   : wd_strdup(v->prefix);
	wd_autofree char *abs2 = v->prefix && path2 && path2[0] != '/'
					 ? wd_asprintf("%s/%s", v->prefix, path2)
					 : NULL;
	struct sbx_view_request r = {
		.path = abs ? abs : path,
		.path2 = abs2 ? abs2 : path2,
		.access = access,
		.pid = ctx->pid,
		.uid = ctx->uid,
		.gid = ctx->gid,
	};

	/* Fail closed: no decider, or a view being stopped, refuses. */
	if (!v->decide || atomic_load(&v->stopping))
		return -EACCES;
	int rc = v->decide(v->decide_arg, &r);

	if (rc == 0)
		return 0;
	/* Only plain refusals pass through: an -ENOSYS answer to FUSE_OPEN
	 * would make the kernel stop sending opens at all. */
	if (rc < 0 && rc > -4096 && rc != -ENOSYS)
		return rc;
	return -EACCES;
}

/* ---- lookup, forget, rename ------------------------------------------ */

int view_lookup(struct sbx_view *v, struct vnode *parent, const char *name,
		struct fuse_entry_param *e)
{
	struct stat st;
	struct vnode *n;
	int fd, rc = 0;

	memset(e, 0, sizeof(*e));
	/* The kernel resolves "." and ".." itself (no export support), so
	 * these never arrive; refusing them keeps ".." of the root from ever
	 * naming the backing directory's parent. */
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strchr(name, '/'))
		return -ENOENT;
	char *path = view_path(v, parent, name);

	if (view_is_hidden(v, path)) {
		rc = -ENOENT;
		goto out_path;
	}
	fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto out_path;
	}
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		rc = -errno;
		close(fd);
		goto out_path;
	}
	bool sens = path_sensitive(v, path);
	bool wprot = path_write_protected(v, path);
	bool ctl = pol_is_control(v->policy, path, NULL);

	pthread_mutex_lock(&v->lock);
	n = table_find(v, st.st_dev, st.st_ino);
	if (n) {
		close(fd);
	} else {
		n = wd_calloc(1, sizeof(*n));
		n->fd = fd;
		n->dev = st.st_dev;
		n->ino = st.st_ino;
		n->type = st.st_mode & S_IFMT;
		table_insert(v, n);
	}
	set_name(v, n, parent, name);
	n->nlookup++;
	n->used = ++v->tick;
	n->evicting = false;
	if (!atomic_load(&v->sealed))
		n->pinned = true;
	/* Wake the evictor when the budget is crossed; while over it, the
	 * evictor runs its rounds on its own clock. */
	if (v->count == v->fd_budget + 1)
		pthread_cond_signal(&v->evict_cond);
	n->sensitive |= sens || parent->sensitive || ident_known(v, st.st_dev, st.st_ino);
	n->wprot |= wprot || parent->wprot;
	n->control |= ctl || (ident_flags(v, st.st_dev, st.st_ino) & VIEW_CONTROL);
	if (n->sensitive && S_ISREG(st.st_mode))
		ident_add(v, st.st_dev, st.st_ino);
	if (n->control && S_ISREG(st.st_mode))
		ident_add_flags(v, st.st_dev, st.st_ino, VIEW_CONTROL);
	pthread_mutex_unlock(&v->lock);

	e->ino = view_ino(v, n);
	e->attr = st;
	e->attr_timeout = VIEW_ATTR_TIMEOUT;
	e->entry_timeout = VIEW_ENTRY_TIMEOUT;
out_path:
	free(path);
	return rc;
}

void view_forget(struct sbx_view *v, struct vnode *n, uint64_t count)
{
	if (n == &v->root)
		return;
	pthread_mutex_lock(&v->lock);
	n->nlookup -= count < n->nlookup ? count : n->nlookup;
	node_release(v, n);
	pthread_mutex_unlock(&v->lock);
}

void view_opened(struct sbx_view *v, struct vnode *n, int delta)
{
	pthread_mutex_lock(&v->lock);
	if (delta > 0)
		n->opens++;
	else if (n->opens)
		n->opens--;
	pthread_mutex_unlock(&v->lock);
}

void view_renamed(struct sbx_view *v, struct vnode *newparent, const char *newname)
{
	struct stat st;

	if (fstatat(newparent->fd, newname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	char *path = view_path(v, newparent, newname);
	bool sens = path_sensitive(v, path) || newparent->sensitive;
	bool ctl = pol_is_control(v->policy, path, NULL);

	pthread_mutex_lock(&v->lock);
	struct vnode *n = table_find(v, st.st_dev, st.st_ino);

	if (n) {
		set_name(v, n, newparent, newname);
		n->sensitive |= sens;
		n->control |= ctl;
	}
	if (sens && S_ISREG(st.st_mode))
		ident_add(v, st.st_dev, st.st_ino);
	if (ctl && S_ISREG(st.st_mode))
		ident_add_flags(v, st.st_dev, st.st_ino, VIEW_CONTROL);
	pthread_mutex_unlock(&v->lock);
	free(path);
}

/* ---- the evictor (see "Descriptors" above) ---------------------------- */

struct victim {
	struct vnode *node;   /* only under lock: it may be forgotten after */
	struct vnode *parent; /* pinned (refs) until the round ends */
	char *name;
	uint64_t used;
};

static int by_use(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;
	return x->used < y->used ? -1 : x->used > y->used;
}

static bool evictable(const struct sbx_view *v, const struct vnode *n)
{
	return n != &v->root && n->nlookup > 0 && n->refs == 0 && !S_ISDIR(n->type) &&
	       n->opens == 0 && !n->sensitive && !n->wprot && !n->control && !n->evicting &&
	       !n->pinned && n->parent && n->name;
}

/* One round under lock: picks the least recently used files, down to seven
 * eighths of the budget, pins their parents and copies their names. */
static size_t pick_victims(struct sbx_view *v, struct victim **out)
{
	size_t low = v->fd_budget - v->fd_budget / 8, want = v->count > low ? v->count - low : 0;
	struct victim *c = NULL;
	size_t n = 0, cap = 0;

	if (want > VIEW_EVICT_BATCH)
		want = VIEW_EVICT_BATCH;
	for (size_t i = 0; want && i < v->table_size; i++)
		for (struct vnode *x = v->table[i]; x; x = x->hnext) {
			if (!evictable(v, x))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				c = wd_realloc(c, cap * sizeof(*c));
			}
			c[n++] = (struct victim){.node = x, .used = x->used};
		}
	qsort(c, n, sizeof(*c), by_use);
	if (n > want)
		n = want;
	for (size_t i = 0; i < n; i++) {
		struct vnode *x = c[i].node;
		x->evicting = true;
		c[i].name = wd_strdup(x->name);
		c[i].parent = x->parent;
		x->parent->refs++;
	}
	*out = c;
	return n;
}

static void *evictor_loop(void *arg)
{
	struct sbx_view *v = arg;
	sigset_t mask;

	sigfillset(&mask);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	pthread_mutex_lock(&v->lock);
	while (!v->evict_stop) {
		if (v->count <= v->fd_budget) {
			pthread_cond_wait(&v->evict_cond, &v->lock);
			continue;
		}
		struct victim *c = NULL;
		size_t n = pick_victims(v, &c);
		pthread_mutex_unlock(&v->lock);
		for (size_t i = 0; i < n; i++)
			fuse_lowlevel_notify_inval_entry(v->se, view_ino(v, c[i].parent), c[i].name,
							 strlen(c[i].name));
		pthread_mutex_lock(&v->lock);
		for (size_t i = 0; i < n; i++) {
			c[i].parent->refs--;
			node_release(v, c[i].parent);
			free(c[i].name);
		}
		free(c);
		v->evicted += n;
		/* The kernel's forgets come asynchronously: give them time
		 * before counting again (and do not spin when everything left
		 * is in use). */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (n ? 20 : 500) * 1000 * 1000L;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (!v->evict_stop)
			pthread_cond_timedwait(&v->evict_cond, &v->lock, &ts);
	}
	pthread_mutex_unlock(&v->lock);
	return NULL;
}

void sbx_view_seal(struct sbx_view *v)
{
	if (v)
		atomic_store(&v->sealed, true);
}

void sbx_view_counts(struct sbx_view *v, size_t *nodes, uint64_t *evicted)
{
	pthread_mutex_lock(&v->lock);
	*nodes = v->count;
	*evicted = v->evicted;
	pthread_mutex_unlock(&v->lock);
}

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
	 * capabilities, before the view is asked (view_ops.c's header). */
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
	for (char **h = v->hidden; h && *h; h++)
		free(*h);
	free(v->hidden);
	for (char **u = v->unmarked; u && *u; u++)
		free(*u);
	free(v->unmarked);
	for (char **w = v->writable; w && *w; w++)
		free(*w);
	free(v->writable);
	free(v->idents);
	free(v->prefix);
	pthread_cond_destroy(&v->evict_cond);
	pthread_mutex_destroy(&v->lock);
	pthread_mutex_destroy(&v->scan_lock);
	free(v);
}

int sbx_view_start(const struct sbx_view_config *cfg, int fuse_fd, struct sbx_view **out)
{
	char *argv[] = {"warden-view", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(1, argv);
	struct sbx_view *v;
	struct stat st;
	char dev[32];
	size_t nh = 0;
	int rc;

	*out = NULL;
	if (!cfg || cfg->backing_fd < 0 || fuse_fd < 0) {
		if (cfg && cfg->backing_fd >= 0)
			close(cfg->backing_fd);
		if (fuse_fd >= 0)
			close(fuse_fd);
		return -EINVAL;
	}
	v = wd_calloc(1, sizeof(*v));
	pthread_mutex_init(&v->lock, NULL);
	pthread_mutex_init(&v->scan_lock, NULL);
	pthread_cond_init(&v->evict_cond, NULL);
	v->fd_budget = cfg->fd_budget;
	if (!v->fd_budget) {
		struct rlimit rl;
		v->fd_budget = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
				       ? (size_t)rl.rlim_cur / 4 * 3
				       : 1u << 20;
	}
	if (v->fd_budget < 64)
		v->fd_budget = 64;
	v->root.fd = cfg->backing_fd;
	v->root.nlookup = 1;
	v->policy = cfg->policy;
	v->read_only = cfg->read_only;
	v->decide = cfg->decide;
	v->decide_arg = cfg->decide_arg;
	v->threads = cfg->threads ? cfg->threads : VIEW_DEFAULT_THREADS;
	v->table_size = 1024;
	v->table = wd_calloc(v->table_size, sizeof(*v->table));
	while (cfg->hidden && cfg->hidden[nh])
		nh++;
	v->hidden = wd_calloc(nh + 1, sizeof(char *));
	for (size_t i = 0; i < nh; i++)
		v->hidden[i] = wd_strdup(cfg->hidden[i]);
	v->unmarked = strv_copy(cfg->unmarked);
	v->writable = cfg->writable ? strv_copy(cfg->writable) : NULL;
	/* A directory; or, for a gated place, a single regular file. */
	if (fstat(v->root.fd, &st) < 0 ||
	    !(S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && cfg->prefix))) {
		rc = -ENOTDIR;
		close(fuse_fd);
		goto fail;
	}
	v->root.dev = st.st_dev;
	v->root.ino = st.st_ino;
	v->root.type = st.st_mode & S_IFMT;
	v->root.wprot = path_write_protected(v, "");
	if (cfg->prefix)
		v->prefix = wd_strdup(cfg->prefix);
	/* Sticky and inherited: every object under the root is sensitive. */
	v->root.sensitive = cfg->all_sensitive;
	v->se = fuse_session_new(&args, &view_ops, sizeof(view_ops), v);
	fuse_opt_free_args(&args);
	if (!v->se) {
		rc = -ENOMEM;
		close(fuse_fd);
		goto fail;
	}
	/* libfuse takes an already-mounted fd as "/dev/fd/N" and closes it in
	 * fuse_session_destroy(). */
	snprintf(dev, sizeof(dev), "/dev/fd/%d", fuse_fd);
	if (fuse_session_mount(v->se, dev) != 0) {
		rc = -EINVAL;
		close(fuse_fd);
		goto fail_session;
	}
	pthread_once(&wake_once, install_wake_handler);
	rc = pthread_create(&v->thread, NULL, view_loop, v);
	if (rc != 0) {
		rc = -rc;
		goto fail_session; /* the session owns fuse_fd now */
	}
	v->thread_started = true;
	if (pthread_create(&v->evictor, NULL, evictor_loop, v) == 0)
		v->evictor_started = true;
	else
		wd_warn("the view's evictor could not start: a tree with more files than %zu "
			"may run it out of descriptors",
			v->fd_budget);
	*out = v;
	return 0;

fail_session:
	fuse_session_destroy(v->se);
fail:
	view_free(v);
	return rc;
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
