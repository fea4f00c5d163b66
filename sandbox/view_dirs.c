/*
 * view_dirs.c: the project view's FUSE callbacks on directories: opendir,
 * readdir, readdirplus, releasedir and fsyncdir.
 */
#include "view_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common.h"
#include "policy.h"

/* ---- directories ----------------------------------------------------- */

struct vdir {
	DIR *dp;
	off_t offset;
	struct dirent *entry;
	char *path; /* project path of the directory, for hidden names */
};

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sbx_view *v = sbx_view_of_req(req);
	struct vnode *n = sbx_view_node(v, ino);
	struct vdir *d;
	struct stat st;
	int fd = openat(n->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		sbx_view_reply_err(req, errno);
		if (fd >= 0)
			close(fd);
		return;
	}
	d = wd_calloc(1, sizeof(*d));
	d->dp = fdopendir(fd);
	if (!d->dp) {
		sbx_view_reply_err(req, errno);
		close(fd);
		free(d);
		return;
	}
	if (v->hidden[0])
		d->path = sbx_view_path(v, n, NULL);
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->cache_readdir = 1;
	fi->keep_cache = sbx_view_cache_still_valid(v, n, &st);
	if (fuse_reply_open(req, fi) != 0) {
		closedir(d->dp);
		free(d->path);
		free(d);
	}
}

static bool entry_hidden(struct sbx_view *v, const struct vdir *d, const char *name)
{
	if (!d->path)
		return false;
	char *p = *d->path ? wd_asprintf("%s/%s", d->path, name) : wd_strdup(name);
	bool h = sbx_view_is_hidden(v, p);

	free(p);
	return h;
}

static bool is_dot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* Adds the current entry of |d| to |p| (|rem| bytes left); returns its size
 * (more than |rem| when it did not fit), 0 to skip it, or -errno. */
static ssize_t add_entry(fuse_req_t req, struct vnode *dir, struct vdir *d, char *p, size_t rem,
			 bool plus)
{
	struct sbx_view *v = sbx_view_of_req(req);
	const char *name = d->entry->d_name;
	off_t next = d->entry->d_off;
	struct fuse_entry_param e = {0};
	size_t size;

	if (entry_hidden(v, d, name))
		return 0;
	if (!plus) {
		e.attr.st_ino = d->entry->d_ino;
		e.attr.st_mode = (mode_t)d->entry->d_type << 12;
		return (ssize_t)fuse_add_direntry(req, p, rem, name, &e.attr, next);
	}
	if (is_dot(name)) {
		e.attr.st_ino = d->entry->d_ino;
		e.attr.st_mode = (mode_t)d->entry->d_type << 12;
	} else {
		int rc = sbx_view_lookup(v, dir, name, &e);

		if (rc == -ENOENT)
			return 0; /* removed since the directory was read */
		if (rc)
			return rc;
	}
	size = fuse_add_direntry_plus(req, p, rem, name, &e, next);
	if (size > rem && e.ino)
		sbx_view_forget(v, sbx_view_node(v, e.ino), 1);
	return (ssize_t)size;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
		       struct fuse_file_info *fi, bool plus)
{
	struct vdir *d = (struct vdir *)(uintptr_t)fi->fh;
	struct vnode *dir = sbx_view_req_node(req, ino);
	char *buf = wd_malloc(size), *p = buf;
	size_t rem = size;
	int err = 0;

	if (offset != d->offset) {
		seekdir(d->dp, offset);
		d->entry = NULL;
		d->offset = offset;
	}
	for (;;) {
		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				err = errno;
				break;
			}
		}
		ssize_t n = add_entry(req, dir, d, p, rem, plus);

		if (n < 0) {
			err = (int)-n;
			break;
		}
		if ((size_t)n > rem)
			break;
		p += n;
		rem -= (size_t)n;
		d->offset = d->entry->d_off;
		d->entry = NULL;
	}
	/* An error after some entries is reported by the next call. */
	if (err && rem == size)
		sbx_view_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, size - rem);
	free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, offset, fi, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
			   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, offset, fi, true);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct vdir *d = (struct vdir *)(uintptr_t)fi->fh;

	(void)ino;
	closedir(d->dp);
	free(d->path);
	free(d);
	fuse_reply_err(req, 0);
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct vdir *d = (struct vdir *)(uintptr_t)fi->fh;
	int fd = dirfd(d->dp);

	(void)ino;
	sbx_view_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? errno : 0);
}

void sbx_view_dirs_ops(struct fuse_lowlevel_ops *ops)
{
	ops->opendir = op_opendir;
	ops->readdir = op_readdir;
	ops->readdirplus = op_readdirplus;
	ops->releasedir = op_releasedir;
	ops->fsyncdir = op_fsyncdir;
}
