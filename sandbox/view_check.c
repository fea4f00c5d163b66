/*
 * view_check.c: the project view's checks: sensitive identities, hidden and
 * write-protected paths, and the call to the decide callback.
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

/* ---- sensitive identities -------------------------------------------- */

/* What (dev, ino) is known as: VIEW_SENSITIVE, VIEW_CONTROL or 0. Under
 * lock. */
unsigned sbx_view_ident_flags(const struct sbx_view *v, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < v->nidents; i++)
		if (v->idents[i].dev == dev && v->idents[i].ino == ino)
			return v->idents[i].flags;
	return 0;
}

bool sbx_view_ident_known(const struct sbx_view *v, dev_t dev, ino_t ino)
{
	return sbx_view_ident_flags(v, dev, ino) & VIEW_SENSITIVE;
}

/* Under lock. */
void sbx_view_ident_add_flags(struct sbx_view *v, dev_t dev, ino_t ino, unsigned flags)
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
	v->idents[v->nidents++] = (struct sbx_view_ident){dev, ino, flags};
}

void sbx_view_ident_add(struct sbx_view *v, dev_t dev, ino_t ino)
{
	sbx_view_ident_add_flags(v, dev, ino, VIEW_SENSITIVE);
}

void sbx_view_identity_gone(struct sbx_view *v, int fd)
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

void sbx_view_mark_sensitive(struct sbx_view *v, struct vnode *n)
{
	pthread_mutex_lock(&v->lock);
	n->sensitive = true;
	sbx_view_ident_add(v, n->dev, n->ino);
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
		bool csens = sens || sbx_view_sensitive_at(v, child);
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
			sbx_view_ident_add_flags(v, st.st_dev, st.st_ino,
						 (csens ? VIEW_SENSITIVE : 0) |
							 (cctl ? VIEW_CONTROL : 0));
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

unsigned sbx_view_node_flags(struct sbx_view *v, struct vnode *n, const char *path,
			     const struct stat *st)
{
	unsigned flags = sbx_view_node_sensitive(v, n, path, st) ? VIEW_SENSITIVE : 0;
	bool ctl;

	pthread_mutex_lock(&v->lock);
	ctl = n->control || (sbx_view_ident_flags(v, st->st_dev, st->st_ino) & VIEW_CONTROL);
	pthread_mutex_unlock(&v->lock);
	if (!ctl && pol_is_control(v->policy, path, NULL))
		ctl = true;
	/* A hard link made before the run: sbx_view_node_sensitive() has walked
	 * the project already for a file with several names. */
	if (!ctl && S_ISREG(st->st_mode) && st->st_nlink > 1) {
		ensure_scanned(v);
		pthread_mutex_lock(&v->lock);
		ctl = sbx_view_ident_flags(v, st->st_dev, st->st_ino) & VIEW_CONTROL;
		pthread_mutex_unlock(&v->lock);
	}
	if (ctl) {
		pthread_mutex_lock(&v->lock);
		n->control = true;
		if (S_ISREG(st->st_mode))
			sbx_view_ident_add_flags(v, st->st_dev, st->st_ino, VIEW_CONTROL);
		pthread_mutex_unlock(&v->lock);
		flags |= VIEW_CONTROL;
	}
	return flags;
}

bool sbx_view_name_control(struct sbx_view *v, struct vnode *parent, const char *name,
			   const char *path)
{
	struct stat st;
	bool ctl = pol_is_control(v->policy, path, NULL);

	if (!ctl && fstatat(parent->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		pthread_mutex_lock(&v->lock);
		struct vnode *n = sbx_view_table_find(v, st.st_dev, st.st_ino);

		ctl = (n && n->control) ||
		      (sbx_view_ident_flags(v, st.st_dev, st.st_ino) & VIEW_CONTROL);
		pthread_mutex_unlock(&v->lock);
	}
	return ctl;
}

bool sbx_view_node_sensitive(struct sbx_view *v, struct vnode *n, const char *path,
			     const struct stat *st)
{
	bool known;

	pthread_mutex_lock(&v->lock);
	known = n->sensitive || sbx_view_ident_known(v, st->st_dev, st->st_ino);
	pthread_mutex_unlock(&v->lock);
	if (!known && sbx_view_sensitive_at(v, path))
		known = true;
	/* A markers view (a home) is not walked: it may hold millions of
	 * files, and its hard links to a sensitive file under an ordinary
	 * name are the user's own (the agent's link() is decided). */
	if (!known && !v->prefix && S_ISREG(st->st_mode) && st->st_nlink > 1) {
		ensure_scanned(v);
		pthread_mutex_lock(&v->lock);
		known = sbx_view_ident_known(v, st->st_dev, st->st_ino);
		pthread_mutex_unlock(&v->lock);
	}
	if (known)
		sbx_view_mark_sensitive(v, n);
	return known;
}

/* ---- checks ---------------------------------------------------------- */

void sbx_view_name_flags(struct sbx_view *v, struct vnode *parent, const char *name,
			 const char *path, bool *sens, bool *wprot)
{
	struct stat st;
	bool exists = fstatat(parent->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;

	*sens = sbx_view_sensitive_at(v, path);
	*wprot = sbx_view_protected_at(v, path);
	pthread_mutex_lock(&v->lock);
	*sens |= parent->sensitive;
	*wprot |= parent->wprot;
	if (exists) {
		struct vnode *n = sbx_view_table_find(v, st.st_dev, st.st_ino);

		*sens |= sbx_view_ident_known(v, st.st_dev, st.st_ino) || (n && n->sensitive);
		*wprot |= n && n->wprot;
	}
	pthread_mutex_unlock(&v->lock);
}

bool sbx_view_is_hidden(const struct sbx_view *v, const char *path)
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

bool sbx_view_protected_at(const struct sbx_view *v, const char *path)
{
	return sbx_view_path_write_protected(v->policy, v->prefix, path);
}

int sbx_view_check_write(const struct sbx_view *v, const char *path)
{
	if (v->read_only || sbx_view_protected_at(v, path))
		return -EROFS;
	if (!v->writable)
		return 0;
	for (char **w = v->writable; *w; w++)
		if (wd_path_within(path, *w))
			return 0;
	return -EROFS;
}

int sbx_view_decide(struct sbx_view *v, fuse_req_t req, const char *path, const char *path2,
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

/* ---- the identity table for the split view's listener (fan.c) ---------- */

unsigned sbx_view_identity(struct sbx_view *v, dev_t dev, ino_t ino)
{
	pthread_mutex_lock(&v->lock);
	unsigned f = sbx_view_ident_flags(v, dev, ino);
	pthread_mutex_unlock(&v->lock);
	return f;
}

void sbx_view_identity_add(struct sbx_view *v, dev_t dev, ino_t ino, bool sensitive, bool control)
{
	pthread_mutex_lock(&v->lock);
	sbx_view_ident_add_flags(v, dev, ino,
				 (sensitive ? VIEW_SENSITIVE : 0) | (control ? VIEW_CONTROL : 0));
	pthread_mutex_unlock(&v->lock);
}
