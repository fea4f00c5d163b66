/*
 * view_ops.c: what the project view's FUSE callbacks share (the request's
 * view and node, errors, the checks before a change, creating as the caller,
 * the page cache's validity), and the table of callbacks, which each of
 * view_names.c, view_attr.c, view_files.c and view_dirs.c fills with its own.
 *
 * Each callback unpacks its request, calls a do_*() that returns 0 or -errno,
 * and replies once. What is checked before a change, and why the view lends
 * no privilege (default_permissions, objects made as the caller):
 * docs/design.md, section "The sandbox: the project view".
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

struct sbx_view *sbx_view_of_req(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

struct vnode *sbx_view_req_node(fuse_req_t req, fuse_ino_t ino)
{
	return sbx_view_node(sbx_view_of_req(req), ino);
}

void sbx_view_proc_fd(char buf[VIEW_PROC_FD_LEN], int fd)
{
	snprintf(buf, VIEW_PROC_FD_LEN, "/proc/self/fd/%d", fd);
}

/* Replies an error. ENOSYS never leaves the view: the kernel takes it as
 * "operation not implemented" and stops asking, and for FUSE_OPEN that
 * would mean opens no longer reach the view at all. */
void sbx_view_reply_err(fuse_req_t req, int err)
{
	fuse_reply_err(req, err == ENOSYS ? EIO : err);
}

int sbx_view_neg_errno(void)
{
	return -errno;
}

/* 0 or -EROFS for a change to the object |n| at |path|. */
int sbx_view_check_node_write(struct sbx_view *v, struct vnode *n, const char *path)
{
	if (v->read_only || n->wprot)
		return -EROFS;
	return sbx_view_check_write(v, path);
}

/* Checks that |name| may be created or replaced in |parent|: never a hidden
 * name, never in a write-protected place. *sens receives whether the
 * name or the object already there is sensitive. */
int sbx_view_check_new(struct sbx_view *v, struct vnode *parent, const char *name, const char *path,
		       bool *sens)
{
	bool wprot;

	if (sbx_view_is_hidden(v, path))
		return -EACCES;
	if (v->read_only)
		return -EROFS;
	sbx_view_name_flags(v, parent, name, path, sens, &wprot);
	return wprot ? -EROFS : sbx_view_check_write(v, path);
}

/* The mode bits the view sets on an object of type |type|: never
 * set-user-ID, and set-group-ID only on a directory (where it means
 * "new files take this group", not a privilege). */
mode_t sbx_view_safe_mode(mode_t mode, mode_t type)
{
	mode &= 07777;
	mode &= ~(mode_t)S_ISUID;
	if (!S_ISDIR(type))
		mode &= ~(mode_t)S_ISGID;
	return mode;
}

/*
 * Makes this worker thread create with the caller's fsuid and fsgid, so a
 * new object belongs to the caller and the backing file system gives it a
 * set-group-ID directory's group itself. setfsuid(2) and setfsgid(2) act on
 * the calling thread only (raw syscalls: no libc broadcast), and the
 * caller's request holds this thread until sbx_view_caller_end(). Only a privileged
 * view (root) can switch, and only it needs to: an unprivileged view runs
 * as the one user its namespace maps, which is the caller's.
 */
void sbx_view_caller_begin(fuse_req_t req, struct sbx_view_as_caller *c)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	*c = (struct sbx_view_as_caller){.switched = false};
	if (geteuid() != 0)
		return;
	c->uid = (uid_t)syscall(SYS_setfsuid, -1);
	c->gid = (gid_t)syscall(SYS_setfsgid, -1);
	if (ctx->uid == c->uid && ctx->gid == c->gid)
		return;
	syscall(SYS_setfsgid, ctx->gid);
	syscall(SYS_setfsuid, ctx->uid);
	c->switched = true;
}

void sbx_view_caller_end(const struct sbx_view_as_caller *c)
{
	if (!c->switched)
		return;
	syscall(SYS_setfsuid, c->uid);
	syscall(SYS_setfsgid, c->gid);
}

/*
 * Whether the caller may open the existing file |st| for |mask| (R_OK,
 * W_OK), by its owner, group and supplementary groups, as the kernel's
 * generic_permission() does for a process without capabilities (no process
 * in the sandbox has any). Used only when a create finds a file the kernel
 * did not know of (made outside the view since the kernel's lookup), where
 * default_permissions could not check it. An unprivileged view's own open
 * is the check.
 */
int sbx_view_caller_may_open(fuse_req_t req, const struct stat *st, int mask)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	unsigned bits;

	if (geteuid() != 0)
		return 0;
	if (ctx->uid == st->st_uid) {
		bits = (st->st_mode >> 6) & 7;
	} else {
		bool member = ctx->gid == st->st_gid;
		gid_t groups[64];
		int n = member ? 0 : fuse_req_getgroups(req, 64, groups);

		for (int i = 0; i < n && i < 64; i++)
			member |= groups[i] == st->st_gid;
		bits = member ? (st->st_mode >> 3) & 7 : st->st_mode & 7;
	}
	if (((mask & R_OK) && !(bits & 4)) || ((mask & W_OK) && !(bits & 2)))
		return -EACCES;
	return 0;
}

/* keep_cache is granted only if the backing file is as the kernel last
 * cached it; the new state is recorded either way. */
bool sbx_view_cache_still_valid(struct sbx_view *v, struct vnode *n, const struct stat *st)
{
	bool same;

	pthread_mutex_lock(&v->lock);
	same = n->cache_known && n->cache_size == st->st_size &&
	       n->cache_mtime.tv_sec == st->st_mtim.tv_sec &&
	       n->cache_mtime.tv_nsec == st->st_mtim.tv_nsec;
	n->cache_known = true;
	n->cache_size = st->st_size;
	n->cache_mtime = st->st_mtim;
	pthread_mutex_unlock(&v->lock);
	return same;
}

/* ---- init ------------------------------------------------------------ */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct sbx_view *v = userdata;
	const unsigned wanted = FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
				FUSE_CAP_SPLICE_MOVE | FUSE_CAP_READDIRPLUS |
				FUSE_CAP_READDIRPLUS_AUTO | FUSE_CAP_PARALLEL_DIROPS |
				FUSE_CAP_AUTO_INVAL_DATA | FUSE_CAP_CACHE_SYMLINKS |
				FUSE_CAP_ASYNC_READ | FUSE_CAP_ATOMIC_O_TRUNC;

	/* No file handles: open_by_handle_at must never reach the view. */
	conn->want &= ~FUSE_CAP_EXPORT_SUPPORT;
	conn->want |= conn->capable & wanted;
	/* The writeback cache would hide the user's in-place edits from the
	 * agent (docs/design.md, section "The sandbox: the project view"). */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	v->writeback = (conn->want & FUSE_CAP_WRITEBACK_CACHE) != 0;
	/* libfuse derives max_pages from max_write (1 MiB: 256 pages). */
	conn->max_write = VIEW_MAX_WRITE;
}

static void op_retrieve_reply(fuse_req_t req, void *cookie, fuse_ino_t ino, off_t offset,
			      struct fuse_bufvec *bufv)
{
	(void)cookie;
	(void)ino;
	(void)offset;
	(void)bufv;
	fuse_reply_none(req);
}

void sbx_view_ops_fill(struct fuse_lowlevel_ops *ops)
{
	*ops = (struct fuse_lowlevel_ops){0};
	ops->init = op_init;
	ops->retrieve_reply = op_retrieve_reply;
	sbx_view_names_ops(ops);
	sbx_view_attr_ops(ops);
	sbx_view_files_ops(ops);
	sbx_view_dirs_ops(ops);
}
