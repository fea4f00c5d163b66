/*
 * view_names.c: the project view's FUSE callbacks on names: lookup, forget,
 * readlink, mknod, mkdir, symlink, unlink, rmdir, rename and link.
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

/* ---- names ----------------------------------------------------------- */

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sbx_view *v = sbx_view_of_req(req);
	struct fuse_entry_param e;
	int rc = sbx_view_lookup(v, sbx_view_node(v, parent), name, &e);

	if (rc == -ENOENT) {
		/* A negative entry: compilers and git probe many paths that
		 * do not exist. */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = VIEW_ENTRY_TIMEOUT;
		fuse_reply_entry(req, &e);
	} else if (rc) {
		sbx_view_reply_err(req, -rc);
	} else {
		fuse_reply_entry(req, &e);
	}
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	sbx_view_forget(sbx_view_of_req(req), sbx_view_req_node(req, ino), nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct sbx_view *v = sbx_view_of_req(req);

	for (size_t i = 0; i < count; i++)
		sbx_view_forget(v, sbx_view_node(v, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX + 1];
	ssize_t len = readlinkat(sbx_view_req_node(req, ino)->fd, "", buf, sizeof(buf));

	if (len < 0)
		sbx_view_reply_err(req, errno);
	else if (len == sizeof(buf))
		sbx_view_reply_err(req, ENAMETOOLONG);
	else {
		buf[len] = '\0';
		fuse_reply_readlink(req, buf);
	}
}

/* Tells the hook (the split view's binder) of the directory just made at
 * |path|, before the mkdir is answered: nothing can be made below it
 * before that answer, so the binder always hears of a parent before its
 * children (told after the answer, a view thread slow to tell of "a"
 * could let "a/b" be bound first, and "a" then bound over it). The
 * binder retries while the kernel does not have the name yet. */
static void made_dir(struct sbx_view *v, const char *path, const struct stat *st)
{
	pthread_mutex_lock(&v->lock);
	sbx_view_made_dir_fn fn = v->made_dir;
	void *arg = v->made_dir_arg;
	pthread_mutex_unlock(&v->lock);
	if (fn)
		fn(arg, path, st->st_dev, st->st_ino);
}

/* mknod, mkdir and symlink: checks, decides a sensitive symlink or
 * regular file, makes the object and looks it up into |e|. */
static int do_make(fuse_req_t req, fuse_ino_t pino, const char *name, mode_t mode, dev_t rdev,
		   const char *link, struct fuse_entry_param *e)
{
	struct sbx_view *v = sbx_view_of_req(req);
	struct vnode *parent = sbx_view_node(v, pino);
	char *path = sbx_view_path(v, parent, name);
	struct sbx_view_as_caller cred;
	bool sens;
	int rc = sbx_view_check_new(v, parent, name, path, &sens);
	/* An empty directory runs nothing: what appears in it is decided by
	 * its own name. Any other object under a control file's name is. */
	bool ctl = !rc && !S_ISDIR(mode) && sbx_view_name_control(v, parent, name, path);

	/* The view runs unconfined: a device node made here would be opened
	 * by the view, not by the agent, so none is made. */
	if (!rc && (S_ISCHR(mode) || S_ISBLK(mode)))
		rc = -EPERM;
	if (!rc && link && (sens || ctl || pol_is_sensitive(v->policy, link, NULL)))
		rc = sbx_view_decide(v, req, path, link, POL_ACC_SYMLINK);
	else if (!rc && !link && !S_ISDIR(mode) && (ctl || (S_ISREG(mode) && sens)))
		rc = sbx_view_decide(v, req, path, NULL, POL_ACC_CREATE);
	free(path);
	if (rc)
		return rc;
	sbx_view_caller_begin(req, &cred);
	if (link)
		rc = symlinkat(link, parent->fd, name);
	else if (S_ISDIR(mode))
		rc = mkdirat(parent->fd, name, sbx_view_safe_mode(mode, S_IFDIR));
	else
		rc = mknodat(parent->fd, name, (mode & S_IFMT) | sbx_view_safe_mode(mode, mode),
			     rdev);
	rc = rc < 0 ? sbx_view_neg_errno() : 0;
	sbx_view_caller_end(&cred);
	if (rc)
		return rc;
	return sbx_view_lookup(v, parent, name, e);
}

static void reply_made(fuse_req_t req, int rc, const struct fuse_entry_param *e)
{
	if (rc)
		sbx_view_reply_err(req, -rc);
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
	struct sbx_view *v = sbx_view_of_req(req);
	struct vnode *pn = sbx_view_node(v, parent);
	struct fuse_entry_param e;
	int rc = do_make(req, parent, name, S_IFDIR | mode, 0, NULL, &e);

	/* Before the reply, which lets the kernel forget |parent|. */
	char *path = rc == 0 ? sbx_view_path(v, pn, name) : NULL;
	if (path)
		made_dir(v, path, &e.attr);
	reply_made(req, rc, &e);
	free(path);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	reply_made(req, do_make(req, parent, name, S_IFLNK, 0, link, &e), &e);
}

static int do_remove(fuse_req_t req, fuse_ino_t pino, const char *name, int flags)
{
	struct sbx_view *v = sbx_view_of_req(req);
	struct vnode *parent = sbx_view_node(v, pino);
	char *path = sbx_view_path(v, parent, name);
	bool sens, wprot;
	int rc = 0;

	if (sbx_view_is_hidden(v, path))
		rc = -ENOENT;
	if (!rc) {
		sbx_view_name_flags(v, parent, name, path, &sens, &wprot);
		rc = v->read_only || wprot ? -EROFS : sbx_view_check_write(v, path);
	}
	/* Deleting a sensitive or control file (its last name, or one of
	 * several) is decided; an empty directory holds nothing to lose. */
	if (!rc && !(flags & AT_REMOVEDIR) &&
	    (sens || sbx_view_name_control(v, parent, name, path)))
		rc = sbx_view_decide(v, req, path, NULL, POL_ACC_DELETE);
	free(path);
	if (rc)
		return rc;
	int ofd = flags & AT_REMOVEDIR ? -1
				       : openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	rc = unlinkat(parent->fd, name, flags) < 0 ? sbx_view_neg_errno() : 0;
	if (!rc)
		sbx_view_identity_gone(v, ofd);
	if (ofd >= 0)
		close(ofd);
	return rc;
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	sbx_view_reply_err(req, -do_remove(req, parent, name, 0));
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	sbx_view_reply_err(req, -do_remove(req, parent, name, AT_REMOVEDIR));
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
	struct sbx_view *v = sbx_view_of_req(req);
	char *path1 = sbx_view_path(v, p1, n1), *path2 = sbx_view_path(v, p2, n2);
	bool s1 = false, s2 = false, w1 = false, w2 = false;
	int rc = 0;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		rc = -EINVAL; /* RENAME_WHITEOUT is for overlay file systems */
	else if (sbx_view_is_hidden(v, path1))
		rc = -ENOENT;
	else if (sbx_view_is_hidden(v, path2))
		rc = -EACCES;
	if (!rc) {
		sbx_view_name_flags(v, p1, n1, path1, &s1, &w1);
		sbx_view_name_flags(v, p2, n2, path2, &s2, &w2);
		if (v->read_only || w1 || w2)
			rc = -EROFS;
		else if (!(rc = sbx_view_check_write(v, path1)))
			rc = sbx_view_check_write(v, path2);
	}
	if (!rc) {
		/* Control files on either side, and (for a directory) a move
		 * that changes what lies below it: see rename_below(). */
		bool c1 = sbx_view_name_control(v, p1, n1, path1);
		bool c2 = sbx_view_name_control(v, p2, n2, path2);
		bool below = rename_below(v, p1, n1, p2, n2, path1, path2, flags);

		if (s1 || s2 || c1 || c2 || below)
			rc = sbx_view_decide(v, req, path1, path2,
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
		rc = sbx_view_neg_errno();
		if (ofd >= 0)
			close(ofd);
		return rc;
	}
	sbx_view_identity_gone(v, ofd);
	if (ofd >= 0)
		close(ofd);
	sbx_view_renamed(v, p2, n2);
	if (flags & RENAME_EXCHANGE)
		sbx_view_renamed(v, p1, n1);
	return 0;
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	sbx_view_reply_err(req, -do_rename(req, sbx_view_req_node(req, parent), name,
					   sbx_view_req_node(req, newparent), newname, flags));
}

static int do_link(fuse_req_t req, struct vnode *n, struct vnode *parent, const char *name,
		   struct fuse_entry_param *e)
{
	struct sbx_view *v = sbx_view_of_req(req);
	char *src = sbx_view_path(v, n, NULL), *dst = sbx_view_path(v, parent, name);
	char proc[VIEW_PROC_FD_LEN];
	struct stat st;
	bool sens;
	int rc = sbx_view_check_new(v, parent, name, dst, &sens);

	/* A second name of a protected file would be writable under it. */
	if (!rc)
		rc = sbx_view_check_node_write(v, n, src);
	if (!rc && fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		rc = sbx_view_neg_errno();
	if (!rc && (sbx_view_node_flags(v, n, src, &st) || sens ||
		    sbx_view_name_control(v, parent, name, dst)))
		rc = sbx_view_decide(v, req, src, dst, POL_ACC_LINK);
	free(src);
	free(dst);
	if (rc)
		return rc;
	if (linkat(n->fd, "", parent->fd, name, AT_EMPTY_PATH) < 0) {
		sbx_view_proc_fd(proc, n->fd);
		if (linkat(AT_FDCWD, proc, parent->fd, name, AT_SYMLINK_FOLLOW) < 0)
			return sbx_view_neg_errno();
	}
	return sbx_view_lookup(v, parent, name, e);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct fuse_entry_param e;

	reply_made(req,
		   do_link(req, sbx_view_req_node(req, ino), sbx_view_req_node(req, newparent),
			   newname, &e),
		   &e);
}

void sbx_view_names_ops(struct fuse_lowlevel_ops *ops)
{
	ops->lookup = op_lookup;
	ops->forget = op_forget;
	ops->forget_multi = op_forget_multi;
	ops->readlink = op_readlink;
	ops->mknod = op_mknod;
	ops->mkdir = op_mkdir;
	ops->unlink = op_unlink;
	ops->rmdir = op_rmdir;
	ops->symlink = op_symlink;
	ops->rename = op_rename;
	ops->link = op_link;
}
