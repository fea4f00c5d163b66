/*
 * sbx_view_node.c: the project view's inode table: one vnode per object the
 * kernel knows, keyed by (dev, ino), its project-relative path, and the
 * lookups, forgets and renames that keep them.
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

/* ---- sensitivity by path ---------------------------------------------- */

/* Whether |path| (relative to the view's root) carries a sensitive marker:
 * never under an unmarked place (a markers view's harness places). */
bool sbx_view_sensitive_at(const struct sbx_view *v, const char *path)
{
	return sbx_view_path_sensitive(v->policy, (const char *const *)v->unmarked, path);
}

/* ---- the inode table ------------------------------------------------- */

static size_t hash_ident(dev_t dev, ino_t ino, size_t size)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;
	return (size_t)(h >> 17) & (size - 1);
}

struct vnode *sbx_view_table_find(struct sbx_view *v, dev_t dev, ino_t ino)
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
void sbx_view_node_release(struct sbx_view *v, struct vnode *n)
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

struct vnode *sbx_view_node(struct sbx_view *v, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return &v->root;
	return (struct vnode *)(uintptr_t)ino;
}

fuse_ino_t sbx_view_ino(struct sbx_view *v, struct vnode *n)
{
	return n == &v->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

/* Records that |n| is called |name| in |parent|. Refuses (keeps the old
 * name) when |parent| is |n| or below it, which only a stale view of a tree
 * changed outside could suggest: parent chains stay acyclic. Under lock. */
void sbx_view_set_name(struct sbx_view *v, struct vnode *n, struct vnode *parent, const char *name)
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
		sbx_view_node_release(v, old);
	}
}

char *sbx_view_path(struct sbx_view *v, struct vnode *parent, const char *name)
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

/* ---- lookup, forget, rename ------------------------------------------ */

int sbx_view_lookup(struct sbx_view *v, struct vnode *parent, const char *name,
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
	char *path = sbx_view_path(v, parent, name);

	if (sbx_view_is_hidden(v, path)) {
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
	bool sens = sbx_view_sensitive_at(v, path);
	bool wprot = sbx_view_protected_at(v, path);
	bool ctl = pol_is_control(v->policy, path, NULL);

	pthread_mutex_lock(&v->lock);
	n = sbx_view_table_find(v, st.st_dev, st.st_ino);
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
	sbx_view_set_name(v, n, parent, name);
	n->nlookup++;
	n->used = ++v->tick;
	n->evicting = false;
	if (!atomic_load(&v->sealed))
		n->pinned = true;
	/* Wake the evictor when the budget is crossed; while over it, the
	 * evictor runs its rounds on its own clock. */
	if (v->count == v->fd_budget + 1)
		pthread_cond_signal(&v->evict_cond);
	n->sensitive |= sens || parent->sensitive || sbx_view_ident_known(v, st.st_dev, st.st_ino);
	n->wprot |= wprot || parent->wprot;
	n->control |= ctl || (sbx_view_ident_flags(v, st.st_dev, st.st_ino) & VIEW_CONTROL);
	if (n->sensitive && S_ISREG(st.st_mode))
		sbx_view_ident_add(v, st.st_dev, st.st_ino);
	if (n->control && S_ISREG(st.st_mode))
		sbx_view_ident_add_flags(v, st.st_dev, st.st_ino, VIEW_CONTROL);
	pthread_mutex_unlock(&v->lock);

	e->ino = sbx_view_ino(v, n);
	e->attr = st;
	e->attr_timeout = VIEW_ATTR_TIMEOUT;
	e->entry_timeout = VIEW_ENTRY_TIMEOUT;
out_path:
	free(path);
	return rc;
}

void sbx_view_forget(struct sbx_view *v, struct vnode *n, uint64_t count)
{
	if (n == &v->root)
		return;
	pthread_mutex_lock(&v->lock);
	n->nlookup -= count < n->nlookup ? count : n->nlookup;
	sbx_view_node_release(v, n);
	pthread_mutex_unlock(&v->lock);
}

void sbx_view_opened(struct sbx_view *v, struct vnode *n, int delta)
{
	pthread_mutex_lock(&v->lock);
	if (delta > 0)
		n->opens++;
	else if (n->opens && --n->opens == 0)
		sbx_view_pt_close_id(v, n);
	pthread_mutex_unlock(&v->lock);
}

void sbx_view_renamed(struct sbx_view *v, struct vnode *newparent, const char *newname)
{
	struct stat st;

	if (fstatat(newparent->fd, newname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	char *path = sbx_view_path(v, newparent, newname);
	bool sens = sbx_view_sensitive_at(v, path) || newparent->sensitive;
	bool ctl = pol_is_control(v->policy, path, NULL);

	pthread_mutex_lock(&v->lock);
	struct vnode *n = sbx_view_table_find(v, st.st_dev, st.st_ino);

	if (n) {
		sbx_view_set_name(v, n, newparent, newname);
		n->sensitive |= sens;
		n->control |= ctl;
	}
	if (sens && S_ISREG(st.st_mode))
		sbx_view_ident_add(v, st.st_dev, st.st_ino);
	if (ctl && S_ISREG(st.st_mode))
		sbx_view_ident_add_flags(v, st.st_dev, st.st_ino, VIEW_CONTROL);
	pthread_mutex_unlock(&v->lock);
	free(path);
}
