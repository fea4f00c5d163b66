/*
 * view_attr.c: the project view's FUSE callbacks on attributes: getattr,
 * setattr, statfs and the xattr calls.
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

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct vnode *n = sbx_view_req_node(req, ino);
	struct stat st;
	int rc;

	/* Only a regular file's fh is an fd (a directory's is a struct vdir). */
	if (fi && n->type == S_IFREG)
		rc = fstat((int)fi->fh, &st);
	else
		rc = fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	if (rc < 0)
		sbx_view_reply_err(req, errno);
	else
		fuse_reply_attr(req, &st, VIEW_ATTR_TIMEOUT);
}

static int setattr_times(int fd, struct vnode *n, const struct stat *attr, int valid)
{
	struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_OMIT}};

	if (valid & FUSE_SET_ATTR_ATIME_NOW)
		ts[0].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_ATIME)
		ts[0] = attr->st_atim;
	if (valid & FUSE_SET_ATTR_MTIME_NOW)
		ts[1].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_MTIME)
		ts[1] = attr->st_mtim;
	if (fd >= 0)
		return futimens(fd, ts) < 0 ? sbx_view_neg_errno() : 0;
	return utimensat(n->fd, "", ts, AT_EMPTY_PATH) < 0 ? sbx_view_neg_errno() : 0;
}

/* The access bits a setattr asks for, as decided for sensitive and
 * control files; |fd| is the handle's fd or -1. */
static unsigned setattr_access(int valid, int fd)
{
	unsigned acc = 0;

	if (valid & FUSE_SET_ATTR_MODE)
		acc |= POL_ACC_CHMOD;
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		acc |= POL_ACC_CHOWN;
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
		     FUSE_SET_ATTR_MTIME_NOW))
		acc |= POL_ACC_UTIMES;
	if ((valid & FUSE_SET_ATTR_SIZE) && fd < 0)
		acc |= POL_ACC_TRUNCATE;
	return acc;
}

static int do_setattr(fuse_req_t req, struct vnode *n, const struct stat *attr, int valid,
		      struct fuse_file_info *fi)
{
	struct sbx_view *v = sbx_view_of_req(req);
	char proc[VIEW_PROC_FD_LEN];
	int fd = fi && n->type == S_IFREG ? (int)fi->fh : -1, rc;
	char *path = sbx_view_path(v, n, NULL);

	unsigned acc = setattr_access(valid, fd);

	rc = sbx_view_check_node_write(v, n, path);
	/* A change to a sensitive or control file is decided, through a
	 * handle too (fchmod needs no writable fd). A truncate through a
	 * handle needs a writable fd, whose open was decided. */
	if (!rc && acc) {
		struct stat st;

		if (fstatat(n->fd, "", &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) < 0)
			rc = sbx_view_neg_errno();
		else if (sbx_view_node_flags(v, n, path, &st))
			rc = sbx_view_decide(v, req, path, NULL, acc);
	}
	free(path);
	if (rc)
		return rc;
	sbx_view_proc_fd(proc, n->fd);
	if (valid & FUSE_SET_ATTR_MODE) {
		/* The kernel checked ownership (default_permissions) and
		 * dropped a set-group-ID bit for a group the caller is not
		 * in; the view never sets set-user-ID at all. */
		mode_t mode = sbx_view_safe_mode(attr->st_mode, n->type);

		rc = fd >= 0 ? fchmod(fd, mode) : chmod(proc, mode);
		if (rc < 0)
			return sbx_view_neg_errno();
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;

		if (fchownat(n->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return sbx_view_neg_errno();
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		rc = fd >= 0 ? ftruncate(fd, attr->st_size) : truncate(proc, attr->st_size);
		if (rc < 0)
			return sbx_view_neg_errno();
	}
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
		     FUSE_SET_ATTR_MTIME_NOW))
		return setattr_times(fd, n, attr, valid);
	return 0;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
		       struct fuse_file_info *fi)
{
	int rc = do_setattr(req, sbx_view_req_node(req, ino), attr, valid, fi);

	if (rc)
		sbx_view_reply_err(req, -rc);
	else
		op_getattr(req, ino, fi);
}

/* ---- the rest -------------------------------------------------------- */

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs s;

	if (fstatvfs(sbx_view_req_node(req, ino)->fd, &s) < 0)
		sbx_view_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &s);
}

/*
 * setxattr (|value| non-NULL) and removexattr. Only user.* names: the
 * kernel hands security.*, system.* (ACLs) and, to a privileged caller,
 * trusted.* to the file system to decide, and the view would set them as
 * root: a file capability or an ACL the host honours later. The kernel
 * checked write permission for user.* (default_permissions). On a
 * sensitive or control file the change is decided.
 */
static int do_xattr_change(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			   size_t size, int flags)
{
	struct sbx_view *v = sbx_view_of_req(req);
	struct vnode *n = sbx_view_node(v, ino);
	char *path = sbx_view_path(v, n, NULL), proc[VIEW_PROC_FD_LEN];
	struct stat st;
	int rc = sbx_view_check_node_write(v, n, path);

	if (!rc && strncmp(name, "user.", 5) != 0)
		rc = strncmp(name, "system.", 7) == 0 ? -EOPNOTSUPP : -EPERM;
	if (!rc && n->type == S_IFLNK)
		rc = -EPERM;
	if (!rc && fstatat(n->fd, "", &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) < 0)
		rc = sbx_view_neg_errno();
	if (!rc && sbx_view_node_flags(v, n, path, &st))
		rc = sbx_view_decide(v, req, path, NULL, POL_ACC_XATTR);
	free(path);
	if (rc)
		return rc;
	sbx_view_proc_fd(proc, n->fd);
	if (value ? setxattr(proc, name, value, size, flags) : removexattr(proc, name))
		return sbx_view_neg_errno();
	return 0;
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	/* A zero-length value still sets the name: never pass NULL. */
	sbx_view_reply_err(req, -do_xattr_change(req, ino, name, value ? value : "", size, flags));
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	sbx_view_reply_err(req, -do_xattr_change(req, ino, name, NULL, 0, 0));
}

/* Removes the trusted.* names from a listxattr buffer of |len| bytes (the
 * view lists as root; the kernel refuses their values to the caller, and a
 * file system hides their names from a caller without CAP_SYS_ADMIN, as no
 * process in the sandbox has). Returns the new length. A size query
 * answers the unfiltered length, an upper bound. */
static ssize_t drop_trusted(char *buf, size_t len)
{
	size_t out = 0;

	for (size_t i = 0; i < len;) {
		size_t l = strnlen(buf + i, len - i) + 1;

		if (strncmp(buf + i, "trusted.", 8) != 0) {
			memmove(buf + out, buf + i, l);
			out += l;
		}
		i += l;
	}
	return (ssize_t)out;
}

/* getxattr and listxattr: |name| NULL lists. Symlinks have none here (the
 * /proc link would lead to their target's). */
static void do_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct vnode *n = sbx_view_req_node(req, ino);
	char proc[VIEW_PROC_FD_LEN];
	char *buf = NULL;
	ssize_t res;

	if (n->type == S_IFLNK) {
		if (name)
			sbx_view_reply_err(req, ENODATA);
		else if (size)
			fuse_reply_buf(req, NULL, 0);
		else
			fuse_reply_xattr(req, 0);
		return;
	}
	sbx_view_proc_fd(proc, n->fd);
	if (size)
		buf = wd_malloc(size);
	res = name ? getxattr(proc, name, buf, size) : listxattr(proc, buf, size);
	if (res > 0 && !name && buf)
		res = drop_trusted(buf, (size_t)res);
	if (res < 0)
		sbx_view_reply_err(req, errno);
	else if (size)
		fuse_reply_buf(req, buf, (size_t)res);
	else
		fuse_reply_xattr(req, (size_t)res);
	free(buf);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	do_getxattr(req, ino, name, size);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	do_getxattr(req, ino, NULL, size);
}

void sbx_view_attr_ops(struct fuse_lowlevel_ops *ops)
{
	ops->getattr = op_getattr;
	ops->setattr = op_setattr;
	ops->statfs = op_statfs;
	/* No .access: with default_permissions the kernel checks access(2)
	 * itself and never asks (an answer made with the view's credentials
	 * would be the view's, not the caller's). */
	ops->setxattr = op_setxattr;
	ops->getxattr = op_getxattr;
	ops->listxattr = op_listxattr;
	ops->removexattr = op_removexattr;
}
