/*
 * view_ops: the FUSE low-level callbacks of the project view. Each callback
 * unpacks its request, calls a do_*() that returns 0 or -errno, and replies
 * once (the shape of libfuse's passthrough_ll.c).
 *
 * What may modify the tree is checked here before the syscall: a read-only
 * view, .warden/ and write_protected paths answer EROFS; hidden names are
 * never created. Sensitive opens, creates, renames, links and symlinks,
 * and every change to a sensitive file (delete, chmod, chown, utimes,
 * xattrs, truncate) call the decide callback first, which blocks only this
 * worker thread; so does every change to a control file (policy's
 * pol_is_control(): git's config and hooks, .envrc, editor tasks), whose
 * reads stay free. A rename of a directory is decided when it could change
 * whether anything below it is sensitive or a control file.
 *
 * Credentials. The view runs as the supervisor (root, in a run started by
 * root) and its syscalls on the backing tree would succeed where the
 * caller's would not. The mount has default_permissions, so the kernel
 * checks every access with the caller's own credentials and capabilities
 * against the attributes the view reports (which are the backing file's)
 * before the request reaches the view: search, read, write and exec
 * permission, create and delete in a directory, the sticky bit, chmod and
 * chown (owner, CAP_CHOWN, CAP_FOWNER, groups), utimes, truncate, user.*
 * xattrs, link (protected_hardlinks), O_NOATIME. What the kernel leaves to
 * the file system the view does here: new objects belong to the caller
 * (created under the caller's fsuid and fsgid, so the backing file system
 * applies its own set-group-ID directory rule), no set-user-ID bit and no
 * set-group-ID bit on a non-directory is ever set through the view (the
 * host honours them later, and the agent runs as root without
 * capabilities), xattrs outside user.* are refused, device nodes are never
 * made, and a create that finds an existing file checks the caller's
 * permission on it.
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

#define PROC_FD_LEN 32

static struct sbx_view *req_view(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct vnode *req_node(fuse_req_t req, fuse_ino_t ino)
{
	return view_node(req_view(req), ino);
}

static void proc_fd(char buf[PROC_FD_LEN], int fd)
{
	snprintf(buf, PROC_FD_LEN, "/proc/self/fd/%d", fd);
}

/* Replies an error. ENOSYS never leaves the view: the kernel takes it as
 * "operation not implemented" and stops asking, and for FUSE_OPEN that
 * would mean opens no longer reach the view at all. */
static void reply_err(fuse_req_t req, int err)
{
	fuse_reply_err(req, err == ENOSYS ? EIO : err);
}

static int neg_errno(void)
{
	return -errno;
}

/* 0 or -EROFS for a change to the object |n| at |path|. */
static int check_node_write(struct sbx_view *v, struct vnode *n, const char *path)
{
	if (v->read_only || n->wprot)
		return -EROFS;
	return view_check_write(v, path);
}

/* Checks that |name| may be created or replaced in |parent|: never a hidden
 * name, never in a write-protected place. *sens receives whether the
 * name or the object already there is sensitive. */
static int check_new(struct sbx_view *v, struct vnode *parent, const char *name, const char *path,
		     bool *sens)
{
	bool wprot;

	if (view_is_hidden(v, path))
		return -EACCES;
	if (v->read_only)
		return -EROFS;
	view_name_flags(v, parent, name, path, sens, &wprot);
	return wprot ? -EROFS : view_check_write(v, path);
}

/* The mode bits the view sets on an object of type |type|: never
 * set-user-ID, and set-group-ID only on a directory (where it means
 * "new files take this group", not a privilege). */
static mode_t safe_mode(mode_t mode, mode_t type)
{
	mode &= 07777;
	mode &= ~(mode_t)S_ISUID;
	if (!S_ISDIR(type))
		mode &= ~(mode_t)S_ISGID;
	return mode;
}

/* The view's own fs credentials while it makes an object for a caller. */
struct as_caller {
	bool switched;
	uid_t uid;
	gid_t gid;
};

/*
 * Makes this worker thread create with the caller's fsuid and fsgid, so a
 * new object belongs to the caller and the backing file system gives it a
 * set-group-ID directory's group itself. setfsuid(2) and setfsgid(2) act on
 * the calling thread only (raw syscalls: no libc broadcast), and the
 * caller's request holds this thread until caller_end(). Only a privileged
 * view (root) can switch, and only it needs to: an unprivileged view runs
 * as the one user its namespace maps, which is the caller's.
 */
static void caller_begin(fuse_req_t req, struct as_caller *c)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	*c = (struct as_caller){.switched = false};
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

static void caller_end(const struct as_caller *c)
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
static int caller_may_open(fuse_req_t req, const struct stat *st, int mask)
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
static bool cache_still_valid(struct sbx_view *v, struct vnode *n, const struct stat *st)
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
	/* See view.c's header: the writeback cache would hide the user's
	 * in-place edits from the agent. */
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

/* ---- names ----------------------------------------------------------- */

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sbx_view *v = req_view(req);
	struct fuse_entry_param e;
	int rc = view_lookup(v, view_node(v, parent), name, &e);

	if (rc == -ENOENT) {
		/* A negative entry: compilers and git probe many paths that
		 * do not exist. */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = VIEW_ENTRY_TIMEOUT;
		fuse_reply_entry(req, &e);
	} else if (rc) {
		reply_err(req, -rc);
	} else {
		fuse_reply_entry(req, &e);
	}
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	view_forget(req_view(req), req_node(req, ino), nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct sbx_view *v = req_view(req);

	for (size_t i = 0; i < count; i++)
		view_forget(v, view_node(v, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct vnode *n = req_node(req, ino);
	struct stat st;
	int rc;

	/* Only a regular file's fh is an fd (a directory's is a struct vdir). */
	if (fi && n->type == S_IFREG)
		rc = fstat((int)fi->fh, &st);
	else
		rc = fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	if (rc < 0)
		reply_err(req, errno);
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
		return futimens(fd, ts) < 0 ? neg_errno() : 0;
	return utimensat(n->fd, "", ts, AT_EMPTY_PATH) < 0 ? neg_errno() : 0;
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
	struct sbx_view *v = req_view(req);
	char proc[PROC_FD_LEN];
	int fd = fi && n->type == S_IFREG ? (int)fi->fh : -1, rc;
	char *path = view_path(v, n, NULL);

	unsigned acc = setattr_access(valid, fd);

	rc = check_node_write(v, n, path);
	/* A change to a sensitive or control file is decided, through a
	 * handle too (fchmod needs no writable fd). A truncate through a
	 * handle needs a writable fd, whose open was decided. */
	if (!rc && acc) {
		struct stat st;

		if (fstatat(n->fd, "", &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) < 0)
			rc = neg_errno();
		else if (view_node_flags(v, n, path, &st))
			rc = view_decide(v, req, path, NULL, acc);
	}
	free(path);
	if (rc)
		return rc;
	proc_fd(proc, n->fd);
	if (valid & FUSE_SET_ATTR_MODE) {
		/* The kernel checked ownership (default_permissions) and
		 * dropped a set-group-ID bit for a group the caller is not
		 * in; the view never sets set-user-ID at all (view_ops.c's
		 * header). */
		mode_t mode = safe_mode(attr->st_mode, n->type);

		rc = fd >= 0 ? fchmod(fd, mode) : chmod(proc, mode);
		if (rc < 0)
			return neg_errno();
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;

		if (fchownat(n->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return neg_errno();
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		rc = fd >= 0 ? ftruncate(fd, attr->st_size) : truncate(proc, attr->st_size);
		if (rc < 0)
			return neg_errno();
	}
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
		     FUSE_SET_ATTR_MTIME_NOW))
		return setattr_times(fd, n, attr, valid);
	return 0;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
		       struct fuse_file_info *fi)
{
	int rc = do_setattr(req, req_node(req, ino), attr, valid, fi);

	if (rc)
		reply_err(req, -rc);
	else
		op_getattr(req, ino, fi);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX + 1];
	ssize_t len = readlinkat(req_node(req, ino)->fd, "", buf, sizeof(buf));

	if (len < 0)
		reply_err(req, errno);
	else if (len == sizeof(buf))
		reply_err(req, ENAMETOOLONG);
	else {
		buf[len] = '\0';
		fuse_reply_readlink(req, buf);
	}
}

/* mknod, mkdir and symlink: checks, decides a sensitive symlink or
 * regular file, makes the object and looks it up into |e|. */
static int do_make(fuse_req_t req, fuse_ino_t pino, const char *name, mode_t mode, dev_t rdev,
		   const char *link, struct fuse_entry_param *e)
{
	struct sbx_view *v = req_view(req);
	struct vnode *parent = view_node(v, pino);
	char *path = view_path(v, parent, name);
	struct as_caller cred;
	bool sens;
	int rc = check_new(v, parent, name, path, &sens);
	/* An empty directory runs nothing: what appears in it is decided by
	 * its own name. Any other object under a control file's name is. */
	bool ctl = !rc && !S_ISDIR(mode) && view_name_control(v, parent, name, path);

	/* The view runs unconfined: a device node made here would be opened
	 * by the view, not by the agent, so none is made. */
	if (!rc && (S_ISCHR(mode) || S_ISBLK(mode)))
		rc = -EPERM;
	if (!rc && link && (sens || ctl || pol_is_sensitive(v->policy, link, NULL)))
		rc = view_decide(v, req, path, link, POL_ACC_SYMLINK);
	else if (!rc && !link && !S_ISDIR(mode) && (ctl || (S_ISREG(mode) && sens)))
		rc = view_decide(v, req, path, NULL, POL_ACC_CREATE);
	free(path);
	if (rc)
		return rc;
	caller_begin(req, &cred);
	if (link)
		rc = symlinkat(link, parent->fd, name);
	else if (S_ISDIR(mode))
		rc = mkdirat(parent->fd, name, safe_mode(mode, S_IFDIR));
	else
		rc = mknodat(parent->fd, name, (mode & S_IFMT) | safe_mode(mode, mode), rdev);
	rc = rc < 0 ? neg_errno() : 0;
	caller_end(&cred);
	if (rc)
		return rc;
	return view_lookup(v, parent, name, e);
}

static void reply_made(fuse_req_t req, int rc, const struct fuse_entry_param *e)
{
	if (rc)
		reply_err(req, -rc);
	else
		fuse_reply_entry(req, e);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct fuse_entry_param e;

	reply_made(req, do_make(req, parent, name, mode, rdev, NULL, &e), &e);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct fuse_entry_param e;

	reply_made(req, do_make(req, parent, name, S_IFDIR | mode, 0, NULL, &e), &e);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	reply_made(req, do_make(req, parent, name, S_IFLNK, 0, link, &e), &e);
}

static int do_remove(fuse_req_t req, fuse_ino_t pino, const char *name, int flags)
{
	struct sbx_view *v = req_view(req);
	struct vnode *parent = view_node(v, pino);
	char *path = view_path(v, parent, name);
	bool sens, wprot;
	int rc = 0;

	if (view_is_hidden(v, path))
		rc = -ENOENT;
	if (!rc) {
		view_name_flags(v, parent, name, path, &sens, &wprot);
		rc = v->read_only || wprot ? -EROFS : view_check_write(v, path);
	}
	/* Deleting a sensitive or control file (its last name, or one of
	 * several) is decided; an empty directory holds nothing to lose. */
	if (!rc && !(flags & AT_REMOVEDIR) && (sens || view_name_control(v, parent, name, path)))
		rc = view_decide(v, req, path, NULL, POL_ACC_DELETE);
	free(path);
	if (rc)
		return rc;
	int ofd = flags & AT_REMOVEDIR ? -1
				       : openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	rc = unlinkat(parent->fd, name, flags) < 0 ? neg_errno() : 0;
	if (!rc)
		view_identity_gone(v, ofd);
	if (ofd >= 0)
		close(ofd);
	return rc;
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	reply_err(req, -do_remove(req, parent, name, 0));
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	reply_err(req, -do_remove(req, parent, name, AT_REMOVEDIR));
}

/*
 * Whether the rename moves a directory so that something below it may
 * change from sensitive to not (or back) or from control file to not (or
 * back): everything below "path1/s" becomes "path2/s" (and, for an
 * exchange, the other way round, which the symmetric test covers). The
 * policy answers for every s at once (pol_sensitive_below_differs(),
 * pol_control_below_differs()); an object below that is sensitive or a
 * control file by its identity stays so, flags being sticky.
 */
static bool rename_below(struct sbx_view *v, struct vnode *p1, const char *n1, struct vnode *p2,
			 const char *n2, const char *path1, const char *path2, unsigned flags)
{
	struct stat st;
	bool dir = fstatat(p1->fd, n1, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);

	if (!dir && (flags & RENAME_EXCHANGE))
		dir = fstatat(p2->fd, n2, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
	return dir && (pol_sensitive_below_differs(v->policy, path1, path2) ||
		       pol_control_below_differs(v->policy, path1, path2));
}

static int do_rename(fuse_req_t req, struct vnode *p1, const char *n1, struct vnode *p2,
		     const char *n2, unsigned flags)
{
	struct sbx_view *v = req_view(req);
	char *path1 = view_path(v, p1, n1), *path2 = view_path(v, p2, n2);
	bool s1 = false, s2 = false, w1 = false, w2 = false;
	int rc = 0;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		rc = -EINVAL; /* RENAME_WHITEOUT is for overlay file systems */
	else if (view_is_hidden(v, path1))
		rc = -ENOENT;
	else if (view_is_hidden(v, path2))
		rc = -EACCES;
	if (!rc) {
		view_name_flags(v, p1, n1, path1, &s1, &w1);
		view_name_flags(v, p2, n2, path2, &s2, &w2);
		if (v->read_only || w1 || w2)
			rc = -EROFS;
		else if (!(rc = view_check_write(v, path1)))
			rc = view_check_write(v, path2);
	}
	if (!rc) {
		/* Control files on either side, and (for a directory) a move
		 * that changes what lies below it: see rename_below(). */
		bool c1 = view_name_control(v, p1, n1, path1);
		bool c2 = view_name_control(v, p2, n2, path2);
		bool below = rename_below(v, p1, n1, p2, n2, path1, path2, flags);

		if (s1 || s2 || c1 || c2 || below)
			rc = view_decide(v, req, path1, path2,
					 (s1 || c1 || below ? POL_ACC_RENAME_FROM : 0) |
						 (s2 || c2 || below ? POL_ACC_RENAME_TO : 0));
	}
	free(path1);
	free(path2);
	if (rc)
		return rc;
	/* The object a rename replaces loses its name (see do_remove()). */
	int ofd =
		flags & RENAME_EXCHANGE ? -1 : openat(p2->fd, n2, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (renameat2(p1->fd, n1, p2->fd, n2, flags) < 0) {
		rc = neg_errno();
		if (ofd >= 0)
			close(ofd);
		return rc;
	}
	view_identity_gone(v, ofd);
	if (ofd >= 0)
		close(ofd);
	view_renamed(v, p2, n2);
	if (flags & RENAME_EXCHANGE)
		view_renamed(v, p1, n1);
	return 0;
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	reply_err(req, -do_rename(req, req_node(req, parent), name, req_node(req, newparent),
				  newname, flags));
}

static int do_link(fuse_req_t req, struct vnode *n, struct vnode *parent, const char *name,
		   struct fuse_entry_param *e)
{
	struct sbx_view *v = req_view(req);
	char *src = view_path(v, n, NULL), *dst = view_path(v, parent, name);
	char proc[PROC_FD_LEN];
	struct stat st;
	bool sens;
	int rc = check_new(v, parent, name, dst, &sens);

	/* A second name of a protected file would be writable under it. */
	if (!rc)
		rc = check_node_write(v, n, src);
	if (!rc && fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		rc = neg_errno();
	if (!rc &&
	    (view_node_flags(v, n, src, &st) || sens || view_name_control(v, parent, name, dst)))
		rc = view_decide(v, req, src, dst, POL_ACC_LINK);
	free(src);
	free(dst);
	if (rc)
		return rc;
	if (linkat(n->fd, "", parent->fd, name, AT_EMPTY_PATH) < 0) {
		proc_fd(proc, n->fd);
		if (linkat(AT_FDCWD, proc, parent->fd, name, AT_SYMLINK_FOLLOW) < 0)
			return neg_errno();
	}
	return view_lookup(v, parent, name, e);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct fuse_entry_param e;

	reply_made(req, do_link(req, req_node(req, ino), req_node(req, newparent), newname, &e),
		   &e);
}

/* ---- files ----------------------------------------------------------- */

static unsigned open_access(int flags)
{
	int acc = flags & O_ACCMODE;
	unsigned a = 0;

	if (acc != O_WRONLY)
		a |= POL_ACC_READ;
	if (acc != O_RDONLY || (flags & O_TRUNC))
		a |= POL_ACC_WRITE;
	return a;
}

/* The flags the view opens the backing file with. With the writeback
 * cache the kernel may read a write-only file and handles O_APPEND
 * itself. */
static int backing_flags(struct sbx_view *v, int flags)
{
	flags &= ~(O_NOFOLLOW | O_CREAT | O_EXCL | O_NOCTTY);
	if (v->writeback) {
		if ((flags & O_ACCMODE) == O_WRONLY)
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		flags &= ~O_APPEND;
	}
	return flags | O_CLOEXEC;
}

static int do_open(fuse_req_t req, struct vnode *n, struct fuse_file_info *fi)
{
	struct sbx_view *v = req_view(req);
	char *path = view_path(v, n, NULL);
	char proc[PROC_FD_LEN];
	unsigned acc = open_access(fi->flags);
	struct stat st;
	int rc = 0, fd;

	if (fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		rc = neg_errno();
	else if (!S_ISREG(st.st_mode))
		rc = -EACCES; /* the kernel opens only regular files here */
	if (!rc && (acc & POL_ACC_WRITE))
		rc = check_node_write(v, n, path);
	if (!rc) {
		unsigned known = view_node_flags(v, n, path, &st);

		if (sbx_view_open_decided(known & VIEW_SENSITIVE, known & VIEW_CONTROL, acc))
			rc = view_decide(v, req, path, NULL, acc);
	}
	free(path);
	if (rc)
		return rc;
	proc_fd(proc, n->fd);
	fd = open(proc, backing_flags(v, fi->flags));
	if (fd < 0 && errno == EACCES && v->writeback && (fi->flags & O_ACCMODE) == O_WRONLY)
		fd = open(proc, (fi->flags & ~(O_NOFOLLOW | O_CREAT | O_EXCL)) | O_CLOEXEC);
	if (fd < 0)
		return neg_errno();
	fi->fh = (uint64_t)fd;
	fi->keep_cache = cache_still_valid(v, n, &st) && !(fi->flags & O_TRUNC);
	/* A close of a read-only file has nothing to flush. */
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
	return 0;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int rc = do_open(req, req_node(req, ino), fi);

	if (rc) {
		reply_err(req, -rc);
		return;
	}
	view_opened(req_view(req), req_node(req, ino), 1);
	if (fuse_reply_open(req, fi) != 0) {
		close((int)fi->fh); /* the request was interrupted */
		view_opened(req_view(req), req_node(req, ino), -1);
	}
}

static int do_create(fuse_req_t req, struct vnode *parent, const char *name, mode_t mode,
		     struct fuse_file_info *fi, struct fuse_entry_param *e)
{
	struct sbx_view *v = req_view(req);
	char *path = view_path(v, parent, name);
	unsigned acc = open_access(fi->flags) | POL_ACC_CREATE;
	bool sens, decided = false, existed = false;
	struct as_caller cred;
	struct stat st;
	int rc = check_new(v, parent, name, path, &sens), fd;

	if (!rc && (sens || view_name_control(v, parent, name, path))) {
		rc = view_decide(v, req, path, NULL, acc);
		decided = true;
	}
	if (rc)
		goto out;
	/* O_EXCL: the kernel sends a create only for a name it found
	 * missing, and checked the caller may create in |parent|. A file
	 * that appeared since (made outside the view) was checked by nobody:
	 * it is opened below as an existing file, with the caller's
	 * permission checked. */
	caller_begin(req, &cred);
	fd = openat(parent->fd, name, backing_flags(v, fi->flags) | O_CREAT | O_EXCL | O_NOFOLLOW,
		    safe_mode(mode, S_IFREG));
	rc = fd < 0 ? neg_errno() : 0;
	caller_end(&cred);
	if (rc == -EEXIST && !(fi->flags & O_EXCL)) {
		existed = true;
		/* Truncated below, once checked and decided. */
		fd = openat(parent->fd, name,
			    (backing_flags(v, fi->flags) & ~O_TRUNC) | O_NOFOLLOW);
		rc = fd < 0 ? neg_errno() : 0;
		if (!rc && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)))
			rc = -EACCES;
		if (!rc)
			rc = caller_may_open(req, &st,
					     (acc & POL_ACC_READ ? R_OK : 0) |
						     (acc & POL_ACC_WRITE ? W_OK : 0));
		if (rc && fd >= 0)
			close(fd);
	}
	if (rc)
		goto out;
	rc = view_lookup(v, parent, name, e);
	if (!rc && fstat(fd, &st) < 0)
		rc = neg_errno();
	/* An existing file opened by create is decided as an open: by the
	 * object, not the name (the name may have changed since the check). */
	if (!rc && !decided && existed && view_node_flags(v, view_node(v, e->ino), path, &st))
		rc = view_decide(v, req, path, NULL, acc);
	if (!rc && (fi->flags & O_TRUNC) && st.st_size > 0) {
		if (ftruncate(fd, 0) < 0 || fstat(fd, &st) < 0)
			rc = neg_errno();
	}
	if (rc) {
		if (e->ino)
			view_forget(v, view_node(v, e->ino), 1);
		close(fd);
		goto out;
	}
	e->attr = st;
	cache_still_valid(v, view_node(v, e->ino), &st);
	fi->fh = (uint64_t)fd;
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
out:
	free(path);
	return rc;
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	int rc = do_create(req, req_node(req, parent), name, mode, fi, &e);

	if (rc) {
		reply_err(req, -rc);
		return;
	}
	view_opened(req_view(req), req_node(req, e.ino), 1);
	if (fuse_reply_create(req, &e, fi) != 0) {
		close((int)fi->fh);
		view_opened(req_view(req), req_node(req, e.ino), -1);
	}
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);

	(void)ino;
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = (int)fi->fh;
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

static void op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
			 struct fuse_file_info *fi)
{
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
	ssize_t res;

	(void)ino;
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = (int)fi->fh;
	out.buf[0].pos = off;
	res = fuse_buf_copy(&out, in, 0);
	if (res < 0)
		reply_err(req, (int)-res);
	else
		fuse_reply_write(req, (size_t)res);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* close() of a duplicate reports write-back errors like close() of
	 * the agent's fd would, without ending the open file. */
	int fd = dup((int)fi->fh);

	(void)ino;
	reply_err(req, fd < 0 || close(fd) < 0 ? errno : 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	/* Writes went through the page cache to the file: what the kernel
	 * caches now is the file as it is. */
	if ((fi->flags & O_ACCMODE) != O_RDONLY && fstat((int)fi->fh, &st) == 0)
		cache_still_valid(req_view(req), req_node(req, ino), &st);
	close((int)fi->fh);
	view_opened(req_view(req), req_node(req, ino), -1);
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	int rc = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);

	(void)ino;
	reply_err(req, rc < 0 ? errno : 0);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	(void)ino;
	reply_err(req, fallocate((int)fi->fh, mode, off, len) < 0 ? errno : 0);
}

static void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	off_t res = lseek((int)fi->fh, off, whence);

	(void)ino;
	if (res < 0)
		reply_err(req, errno);
	else
		fuse_reply_lseek(req, res);
}

static void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			       struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			       struct fuse_file_info *fi_out, size_t len, int flags)
{
	/* Both files were opened (and, if sensitive, decided) by the view. */
	ssize_t res = copy_file_range((int)fi_in->fh, &off_in, (int)fi_out->fh, &off_out, len,
				      (unsigned)flags);

	(void)ino_in;
	(void)ino_out;
	if (res < 0)
		reply_err(req, errno);
	else
		fuse_reply_write(req, (size_t)res);
}

/* ---- directories ----------------------------------------------------- */

struct vdir {
	DIR *dp;
	off_t offset;
	struct dirent *entry;
	char *path; /* project path of the directory, for hidden names */
};

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sbx_view *v = req_view(req);
	struct vnode *n = view_node(v, ino);
	struct vdir *d;
	struct stat st;
	int fd = openat(n->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		reply_err(req, errno);
		if (fd >= 0)
			close(fd);
		return;
	}
	d = wd_calloc(1, sizeof(*d));
	d->dp = fdopendir(fd);
	if (!d->dp) {
		reply_err(req, errno);
		close(fd);
		free(d);
		return;
	}
	if (v->hidden[0])
		d->path = view_path(v, n, NULL);
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->cache_readdir = 1;
	fi->keep_cache = cache_still_valid(v, n, &st);
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
	bool h = view_is_hidden(v, p);

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
	struct sbx_view *v = req_view(req);
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
		int rc = view_lookup(v, dir, name, &e);

		if (rc == -ENOENT)
			return 0; /* removed since the directory was read */
		if (rc)
			return rc;
	}
	size = fuse_add_direntry_plus(req, p, rem, name, &e, next);
	if (size > rem && e.ino)
		view_forget(v, view_node(v, e.ino), 1);
	return (ssize_t)size;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
		       struct fuse_file_info *fi, bool plus)
{
	struct vdir *d = (struct vdir *)(uintptr_t)fi->fh;
	struct vnode *dir = req_node(req, ino);
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
		reply_err(req, err);
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
	reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? errno : 0);
}

/* ---- the rest -------------------------------------------------------- */

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs s;

	if (fstatvfs(req_node(req, ino)->fd, &s) < 0)
		reply_err(req, errno);
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
	struct sbx_view *v = req_view(req);
	struct vnode *n = view_node(v, ino);
	char *path = view_path(v, n, NULL), proc[PROC_FD_LEN];
	struct stat st;
	int rc = check_node_write(v, n, path);

	if (!rc && strncmp(name, "user.", 5) != 0)
		rc = strncmp(name, "system.", 7) == 0 ? -EOPNOTSUPP : -EPERM;
	if (!rc && n->type == S_IFLNK)
		rc = -EPERM;
	if (!rc && fstatat(n->fd, "", &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) < 0)
		rc = neg_errno();
	if (!rc && view_node_flags(v, n, path, &st))
		rc = view_decide(v, req, path, NULL, POL_ACC_XATTR);
	free(path);
	if (rc)
		return rc;
	proc_fd(proc, n->fd);
	if (value ? setxattr(proc, name, value, size, flags) : removexattr(proc, name))
		return neg_errno();
	return 0;
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	/* A zero-length value still sets the name: never pass NULL. */
	reply_err(req, -do_xattr_change(req, ino, name, value ? value : "", size, flags));
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	reply_err(req, -do_xattr_change(req, ino, name, NULL, 0, 0));
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
	struct vnode *n = req_node(req, ino);
	char proc[PROC_FD_LEN];
	char *buf = NULL;
	ssize_t res;

	if (n->type == S_IFLNK) {
		if (name)
			reply_err(req, ENODATA);
		else if (size)
			fuse_reply_buf(req, NULL, 0);
		else
			fuse_reply_xattr(req, 0);
		return;
	}
	proc_fd(proc, n->fd);
	if (size)
		buf = wd_malloc(size);
	res = name ? getxattr(proc, name, buf, size) : listxattr(proc, buf, size);
	if (res > 0 && !name && buf)
		res = drop_trusted(buf, (size_t)res);
	if (res < 0)
		reply_err(req, errno);
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

const struct fuse_lowlevel_ops view_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.open = op_open,
	.create = op_create,
	.read = op_read,
	.write_buf = op_write_buf,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsyncdir,
	.statfs = op_statfs,
	/* No .access: with default_permissions the kernel checks access(2)
	 * itself and never asks (an answer made with the view's credentials
	 * would be the view's, not the caller's). */
	.setxattr = op_setxattr,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
	.fallocate = op_fallocate,
	.lseek = op_lseek,
	.copy_file_range = op_copy_file_range,
	.retrieve_reply = op_retrieve_reply,
};
