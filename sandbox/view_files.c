/*
 * view_files.c: the project view's FUSE callbacks on open files: open,
 * create, read, write and the rest of a file's life.
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
	struct sbx_view *v = sbx_view_of_req(req);
	char *path = sbx_view_path(v, n, NULL);
	char proc[VIEW_PROC_FD_LEN];
	unsigned acc = open_access(fi->flags);
	struct stat st;
	int rc = 0, fd;

	if (fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		rc = sbx_view_neg_errno();
	else if (!S_ISREG(st.st_mode))
		rc = -EACCES; /* the kernel opens only regular files here */
	if (!rc && (acc & POL_ACC_WRITE))
		rc = sbx_view_check_node_write(v, n, path);
	if (!rc) {
		unsigned known = sbx_view_node_flags(v, n, path, &st);

		if (sbx_view_open_decided(known & VIEW_SENSITIVE, known & VIEW_CONTROL, acc))
			rc = sbx_view_decide(v, req, path, NULL, acc);
	}
	free(path);
	if (rc)
		return rc;
	sbx_view_proc_fd(proc, n->fd);
	fd = open(proc, backing_flags(v, fi->flags));
	if (fd < 0 && errno == EACCES && v->writeback && (fi->flags & O_ACCMODE) == O_WRONLY)
		fd = open(proc, (fi->flags & ~(O_NOFOLLOW | O_CREAT | O_EXCL)) | O_CLOEXEC);
	if (fd < 0)
		return sbx_view_neg_errno();
	fi->fh = (uint64_t)fd;
	fi->keep_cache = sbx_view_cache_still_valid(v, n, &st) && !(fi->flags & O_TRUNC);
	/* A close of a read-only file has nothing to flush. */
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
	return 0;
}

/* An open or create that reaches the reply was checked and, where it must
 * be, decided (do_open, do_create): only regular files, and every refusal
 * (write-protected, a review's read-only view, .warden/, a decision) is
 * answered before. The reply may then pass the file's reads, writes and
 * mmap straight to the backing file (view_pt.c): none of op_read,
 * op_write_buf and the fault path decides anything that would be skipped,
 * and flush, fsync, fallocate, lseek and release still come here with the
 * handle the view opened. */
static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int rc = do_open(req, sbx_view_req_node(req, ino), fi);

	if (rc) {
		sbx_view_reply_err(req, -rc);
		return;
	}
	int32_t id = sbx_view_pt_open(sbx_view_of_req(req), sbx_view_req_node(req, ino));

	if (sbx_view_pt_reply_open(req, fi, id) != 0) {
		close((int)fi->fh); /* the request was interrupted */
		sbx_view_opened(sbx_view_of_req(req), sbx_view_req_node(req, ino), -1);
	}
}

static int do_create(fuse_req_t req, struct vnode *parent, const char *name, mode_t mode,
		     struct fuse_file_info *fi, struct fuse_entry_param *e)
{
	struct sbx_view *v = sbx_view_of_req(req);
	char *path = sbx_view_path(v, parent, name);
	unsigned acc = open_access(fi->flags) | POL_ACC_CREATE;
	bool sens, decided = false, existed = false;
	struct sbx_view_as_caller cred;
	struct stat st;
	int rc = sbx_view_check_new(v, parent, name, path, &sens), fd;

	if (!rc && (sens || sbx_view_name_control(v, parent, name, path))) {
		rc = sbx_view_decide(v, req, path, NULL, acc);
		decided = true;
	}
	if (rc)
		goto out;
	/* O_EXCL: the kernel sends a create only for a name it found
	 * missing, and checked the caller may create in |parent|. A file
	 * that appeared since (made outside the view) was checked by nobody:
	 * it is opened below as an existing file, with the caller's
	 * permission checked. */
	sbx_view_caller_begin(req, &cred);
	fd = openat(parent->fd, name, backing_flags(v, fi->flags) | O_CREAT | O_EXCL | O_NOFOLLOW,
		    sbx_view_safe_mode(mode, S_IFREG));
	rc = fd < 0 ? sbx_view_neg_errno() : 0;
	sbx_view_caller_end(&cred);
	if (rc == -EEXIST && !(fi->flags & O_EXCL)) {
		existed = true;
		/* Truncated below, once checked and decided. */
		fd = openat(parent->fd, name,
			    (backing_flags(v, fi->flags) & ~O_TRUNC) | O_NOFOLLOW);
		rc = fd < 0 ? sbx_view_neg_errno() : 0;
		if (!rc && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)))
			rc = -EACCES;
		if (!rc)
			rc = sbx_view_caller_may_open(req, &st,
						      (acc & POL_ACC_READ ? R_OK : 0) |
							      (acc & POL_ACC_WRITE ? W_OK : 0));
		if (rc && fd >= 0)
			close(fd);
	}
	if (rc)
		goto out;
	rc = sbx_view_lookup(v, parent, name, e);
	if (!rc && fstat(fd, &st) < 0)
		rc = sbx_view_neg_errno();
	/* An existing file opened by create is decided as an open: by the
	 * object, not the name (the name may have changed since the check). */
	if (!rc && !decided && existed &&
	    sbx_view_node_flags(v, sbx_view_node(v, e->ino), path, &st))
		rc = sbx_view_decide(v, req, path, NULL, acc);
	if (!rc && (fi->flags & O_TRUNC) && st.st_size > 0) {
		if (ftruncate(fd, 0) < 0 || fstat(fd, &st) < 0)
			rc = sbx_view_neg_errno();
	}
	if (rc) {
		if (e->ino)
			sbx_view_forget(v, sbx_view_node(v, e->ino), 1);
		close(fd);
		goto out;
	}
	e->attr = st;
	sbx_view_cache_still_valid(v, sbx_view_node(v, e->ino), &st);
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
	int rc = do_create(req, sbx_view_req_node(req, parent), name, mode, fi, &e);

	if (rc) {
		sbx_view_reply_err(req, -rc);
		return;
	}
	int32_t id = sbx_view_pt_open(sbx_view_of_req(req), sbx_view_req_node(req, e.ino));

	if (sbx_view_pt_reply_create(req, &e, fi, id) != 0) {
		close((int)fi->fh);
		sbx_view_opened(sbx_view_of_req(req), sbx_view_req_node(req, e.ino), -1);
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
		sbx_view_reply_err(req, (int)-res);
	else
		fuse_reply_write(req, (size_t)res);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* close() of a duplicate reports write-back errors like close() of
	 * the agent's fd would, without ending the open file. */
	int fd = dup((int)fi->fh);

	(void)ino;
	sbx_view_reply_err(req, fd < 0 || close(fd) < 0 ? errno : 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	/* Writes went through the page cache to the file: what the kernel
	 * caches now is the file as it is. */
	if ((fi->flags & O_ACCMODE) != O_RDONLY && fstat((int)fi->fh, &st) == 0)
		sbx_view_cache_still_valid(sbx_view_of_req(req), sbx_view_req_node(req, ino), &st);
	close((int)fi->fh);
	sbx_view_opened(sbx_view_of_req(req), sbx_view_req_node(req, ino), -1);
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	int rc = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);

	(void)ino;
	sbx_view_reply_err(req, rc < 0 ? errno : 0);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	(void)ino;
	sbx_view_reply_err(req, fallocate((int)fi->fh, mode, off, len) < 0 ? errno : 0);
}

static void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	off_t res = lseek((int)fi->fh, off, whence);

	(void)ino;
	if (res < 0)
		sbx_view_reply_err(req, errno);
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
		sbx_view_reply_err(req, errno);
	else
		fuse_reply_write(req, (size_t)res);
}

void sbx_view_files_ops(struct fuse_lowlevel_ops *ops)
{
	ops->open = op_open;
	ops->create = op_create;
	ops->read = op_read;
	ops->write_buf = op_write_buf;
	ops->flush = op_flush;
	ops->release = op_release;
	ops->fsync = op_fsync;
	ops->fallocate = op_fallocate;
	ops->lseek = op_lseek;
	ops->copy_file_range = op_copy_file_range;
}
