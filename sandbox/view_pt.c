/*
 * view_pt.c: the project view's kernel FUSE passthrough (Linux 6.9+) on top
 * of libfuse 3.14, which knows nothing of it: the INIT negotiation, one
 * backing id per open vnode, and the open and create replies that carry it.
 *
 * It does not decide anything: an open reaches it only once the view's own
 * checks and the decide callback allowed it (view_files.c). Why and how:
 * docs/design.md, section "The view's passthrough".
 */
#include "view_int.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/fuse.h>
#include <linux/mount.h>

#include "common.h"
#include "fuse_pt.h"

/* ---- INIT ------------------------------------------------------------ */

/* The kernel queues INIT when the file system is created, before the view
 * starts; a mount that was never created has no INIT to wait for. */
#define PT_INIT_WAIT_MS 5000

/* Adds FUSE_PASSTHROUGH to libfuse's INIT reply |rep| (|len| bytes) when
 * the kernel offered it in |in|; true if it did. The kernel turns
 * passthrough on only with max_stack_depth 1..2 and without the writeback
 * cache (fs/fuse/inode.c, process_init_reply()); the view never asks for
 * the writeback cache (view_ops.c), and a reply that asks for it anyway is
 * left as it is. Depth 1: backing files on a file system that is not
 * stacked itself (not overlayfs); the view stays stackable once. */
static bool pt_patch_init(const struct pt_init_in *in, char *rep, size_t len)
{
	struct fuse_out_header *oh = (struct fuse_out_header *)rep;
	struct pt_init_out *out = (struct pt_init_out *)(oh + 1);

	if (len != sizeof(*oh) + sizeof(*out) || oh->len != len || oh->error != 0)
		return false;
	if (in->major != 7 || !(in->flags & PT_INIT_EXT) || !(in->flags2 & PT_FLAGS2_PASSTHROUGH))
		return false;
	if (out->flags & FUSE_WRITEBACK_CACHE)
		return false;
	out->flags |= PT_INIT_EXT;
	out->flags2 |= PT_FLAGS2_PASSTHROUGH;
	out->max_stack_depth = 1;
	return true;
}

/* Reads the kernel's INIT from |fuse_fd|, lets libfuse answer it into
 * |peer| (the other end of the socket libfuse writes to), and writes the
 * answer, with passthrough added if offered, to |fuse_fd|. 0 when the
 * INIT was answered (v->pt.on says how), 1 when nothing was read (libfuse
 * reads the INIT itself), -errno when the connection cannot be served. */
static int pt_answer_init(struct sbx_view *v, int fuse_fd, int peer)
{
	/* libfuse's own receive buffer size (1 MiB of data and a header):
	 * the kernel refuses a read into less than a request may need. */
	size_t size = VIEW_MAX_WRITE + 4096 * 2;
	wd_autofree char *buf = wd_malloc(size);
	struct pollfd p = {.fd = fuse_fd, .events = POLLIN};
	char rep[512];
	ssize_t n;

	if (poll(&p, 1, PT_INIT_WAIT_MS) != 1)
		return 1;
	n = read(fuse_fd, buf, size);
	if (n < 0)
		return -errno;
	const struct fuse_in_header *ih = (const struct fuse_in_header *)buf;
	struct pt_init_in in = {0};

	if ((size_t)n < sizeof(*ih) + sizeof(in) - sizeof(in.flags2) || ih->opcode != FUSE_INIT)
		return -EPROTO;
	memcpy(&in, ih + 1,
	       (size_t)n - sizeof(*ih) < sizeof(in) ? (size_t)n - sizeof(*ih) : sizeof(in));
	struct fuse_buf fb = {.mem = buf, .size = (size_t)n};

	/* do_init() sets everything the session keeps (got_init, conn,
	 * bufsize) from the request alone, then writes its reply to the
	 * session's fd: |peer|'s other end. */
	fuse_session_process_buf(v->se, &fb);
	n = recv(peer, rep, sizeof(rep), MSG_DONTWAIT);
	if (n <= 0)
		return n < 0 ? -errno : -EPROTO;
	v->pt.on = pt_patch_init(&in, rep, (size_t)n);
	if (!v->pt.on)
		v->pt.why = !(in.flags & PT_INIT_EXT) || !(in.flags2 & PT_FLAGS2_PASSTHROUGH)
				    ? "the kernel does not offer FUSE passthrough"
				    : "the INIT reply could not carry passthrough";
	if (write(fuse_fd, rep, (size_t)n) != n)
		return -EIO;
	return 0;
}

/* The socket end libfuse is given as "/dev/fd/N" carries only the INIT
 * reply: no request is ever read from it (the session's loop starts after
 * dup3() made N the connection), and both ends are closed or replaced
 * before any thread of the session or the agent exists, so neither can
 * leak (O_CLOEXEC besides). */
int sbx_view_pt_mount(struct sbx_view *v, int fuse_fd)
{
	char dev[32];
	int sv[2], rc;

	v->pt.why = "the view did not try it";
	/* SEQPACKET: libfuse's one writev() of the reply is one message. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		v->pt.why = "no socket for the INIT negotiation";
		snprintf(dev, sizeof(dev), "/dev/fd/%d", fuse_fd);
		if (fuse_session_mount(v->se, dev) == 0)
			return 0;
		close(fuse_fd);
		return -EINVAL;
	}
	snprintf(dev, sizeof(dev), "/dev/fd/%d", sv[1]);
	if (fuse_session_mount(v->se, dev) != 0) {
		close(sv[0]);
		close(sv[1]);
		close(fuse_fd);
		return -EINVAL;
	}
	rc = pt_answer_init(v, fuse_fd, sv[0]);
	close(sv[0]);
	/* From here on the session's fd number is the FUSE connection:
	 * dup3() replaces the socket end atomically (no thread of the
	 * session runs yet), keeps O_CLOEXEC, and the original is closed. A
	 * failure leaves the session on the dead socket end: its loop ends
	 * at once and the view reports it, as with any lost connection. */
	if (dup3(fuse_fd, sv[1], O_CLOEXEC) < 0 && rc >= 0)
		rc = -errno;
	close(fuse_fd);
	if (rc == 1) {
		v->pt.why = "the kernel sent no INIT in time";
		rc = 0;
	}
	if (rc < 0)
		v->pt.on = false;
	v->pt.fd = v->pt.on ? sv[1] : -1;
	return rc;
}

/* ---- backing ids ----------------------------------------------------- */

/* Registers |n|'s file as a backing file; its id, or -errno. The vnode's
 * own fd is O_PATH: the kernel keeps only its path and the view's
 * credentials, and opens the backing file anew for each passthrough open,
 * with that open's flags (fs/fuse/passthrough.c). So the registration
 * neither reads nor writes the file, and holds no write access that would
 * make the host's exec of it fail (ETXTBSY): an agent's open for writing
 * does, exactly as it would natively. */
static int pt_backing_open(struct sbx_view *v, struct vnode *n)
{
	struct pt_backing_map map = {.fd = n->fd};
	int id = ioctl(v->pt.fd, PT_DEV_IOC_BACKING_OPEN, &map);

	return id < 0 ? -errno : id;
}

int32_t sbx_view_pt_open(struct sbx_view *v, struct vnode *n)
{
	int32_t id = 0;

	pthread_mutex_lock(&v->lock);
	/* The kernel refuses a second backing file for an inode with open
	 * passthrough files, and a cached open of it while one is open, and
	 * the reverse (fs/fuse/iomode.c: the open fails with EIO). So the
	 * first open of the vnode chooses, and every open until its last
	 * release follows: the kernel ends an inode's mode when its last file
	 * closes, before it sends the release that ends the view's count. */
	if (n->opens == 0) {
		n->pt_cached = true;
		if (v->pt.on && !atomic_load(&v->stopping)) {
			int rc = pt_backing_open(v, n);

			if (rc > 0) {
				n->backing_id = rc;
				n->pt_cached = false;
			} else {
				v->pt.failed++;
				v->pt.last_err = -rc;
			}
		}
	}
	n->opens++;
	if (!n->pt_cached) {
		id = n->backing_id;
		v->pt.opens++;
	}
	v->pt.all++;
	pthread_mutex_unlock(&v->lock);
	return id;
}

void sbx_view_pt_close_id(struct sbx_view *v, struct vnode *n)
{
	uint32_t id = (uint32_t)n->backing_id;

	/* Under v->lock, with no open handle left: the kernel holds its own
	 * reference for files still closing, so the id goes now. */
	if (n->backing_id > 0)
		(void)ioctl(v->pt.fd, PT_DEV_IOC_BACKING_CLOSE, &id);
	n->backing_id = 0;
	n->pt_cached = false;
}

/* ---- replies --------------------------------------------------------- */

/* The open reply fuse_reply_open() would send (fill_open() in libfuse
 * 3.14: the handle and the flags; it does nothing else), with the backing
 * id. The page cache is not used by a passthrough file: no keep_cache. */
static void pt_fill_open(struct pt_open_out *o, const struct fuse_file_info *fi, int32_t id)
{
	*o = (struct pt_open_out){.fh = fi->fh, .backing_id = id};
	o->open_flags = PT_FOPEN_PASSTHROUGH;
	if (fi->direct_io)
		o->open_flags |= FOPEN_DIRECT_IO;
	if (fi->nonseekable)
		o->open_flags |= FOPEN_NONSEEKABLE;
	if (fi->noflush)
		o->open_flags |= FOPEN_NOFLUSH;
}

int sbx_view_pt_reply_open(fuse_req_t req, const struct fuse_file_info *fi, int32_t id)
{
	struct pt_open_out o;

	if (id <= 0)
		return fuse_reply_open(req, fi);
	pt_fill_open(&o, fi, id);
	return fuse_reply_buf(req, (const char *)&o, sizeof(o));
}

/* A timeout in seconds as whole seconds and nanoseconds, as libfuse
 * sends it (calc_timeout_sec/_nsec: clamped, never negative). */
static void pt_timeout(double t, uint64_t *sec, uint32_t *nsec)
{
	if (!(t > 0)) {
		*sec = 0;
		*nsec = 0;
	} else if (t >= (double)ULONG_MAX) {
		*sec = ULONG_MAX;
		*nsec = 999999999;
	} else {
		double ns = (t - (double)(uint64_t)t) * 1.0e9;

		*sec = (uint64_t)t;
		*nsec = ns > 999999999.0 ? 999999999 : (uint32_t)ns;
	}
}

int sbx_view_pt_reply_create(fuse_req_t req, const struct fuse_entry_param *e,
			     const struct fuse_file_info *fi, int32_t id)
{
	struct {
		struct fuse_entry_out e;
		struct pt_open_out o;
	} out;
	const struct stat *st = &e->attr;

	if (id <= 0)
		return fuse_reply_create(req, e, fi);
	/* fill_entry() and convert_stat() in libfuse 3.14 (the session's
	 * protocol is 7.9 or later: the kernel here speaks 7.4x). */
	memset(&out, 0, sizeof(out));
	out.e.nodeid = e->ino;
	out.e.generation = e->generation;
	pt_timeout(e->entry_timeout, &out.e.entry_valid, &out.e.entry_valid_nsec);
	pt_timeout(e->attr_timeout, &out.e.attr_valid, &out.e.attr_valid_nsec);
	out.e.attr.ino = st->st_ino;
	out.e.attr.mode = st->st_mode;
	out.e.attr.nlink = (uint32_t)st->st_nlink;
	out.e.attr.uid = st->st_uid;
	out.e.attr.gid = st->st_gid;
	out.e.attr.rdev = (uint32_t)st->st_rdev;
	out.e.attr.size = (uint64_t)st->st_size;
	out.e.attr.blksize = (uint32_t)st->st_blksize;
	out.e.attr.blocks = (uint64_t)st->st_blocks;
	out.e.attr.atime = (uint64_t)st->st_atim.tv_sec;
	out.e.attr.mtime = (uint64_t)st->st_mtim.tv_sec;
	out.e.attr.ctime = (uint64_t)st->st_ctim.tv_sec;
	out.e.attr.atimensec = (uint32_t)st->st_atim.tv_nsec;
	out.e.attr.mtimensec = (uint32_t)st->st_mtim.tv_nsec;
	out.e.attr.ctimensec = (uint32_t)st->st_ctim.tv_nsec;
	pt_fill_open(&out.o, fi, id);
	return fuse_reply_buf(req, (const char *)&out, sizeof(out));
}

/* ---- status ---------------------------------------------------------- */

void sbx_view_passthrough(struct sbx_view *v, struct sbx_view_pt_status *out)
{
	pthread_mutex_lock(&v->lock);
	*out = (struct sbx_view_pt_status){
		.on = v->pt.on,
		.opens = v->pt.opens,
		.all = v->pt.all,
		.failed = v->pt.failed,
		.last_err = v->pt.last_err,
		.why = v->pt.on ? NULL : v->pt.why,
	};
	pthread_mutex_unlock(&v->lock);
}

/* ---- probe ----------------------------------------------------------- */

/* A FUSE file system created (fsopen, fsconfig) but never mounted: its
 * INIT is queued on the returned /dev/fuse fd. -errno on failure. */
static int pt_probe_fs(int *fs_out)
{
	int dev = sbx_fuse_dev_open();
	if (dev < 0)
		return dev;
	int fs = (int)syscall(SYS_fsopen, "fuse", FSOPEN_CLOEXEC);
	char num[16];
	snprintf(num, sizeof(num), "%d", dev);
	const char *keys[][2] = {
		{"fd", num}, {"rootmode", "40000"}, {"user_id", "0"}, {"group_id", "0"}};
	int rc = fs < 0 ? -errno : 0;
	for (size_t i = 0; !rc && i < WD_ARRAY_SIZE(keys); i++)
		if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, keys[i][0], keys[i][1], 0) < 0)
			rc = -errno;
	if (!rc && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		rc = -errno;
	if (rc) {
		if (fs >= 0)
			close(fs);
		close(dev);
		return rc;
	}
	*fs_out = fs;
	return dev;
}

/* Answers the probe's INIT (|unique|) with passthrough and registers the
 * running binary as a backing file; 0 or -errno. */
static int pt_probe_backing(int dev, uint64_t unique)
{
	struct {
		struct fuse_out_header h;
		struct pt_init_out o;
	} rep = {.h = {.len = sizeof(rep), .unique = unique}};

	rep.o.major = 7;
	rep.o.minor = 31;
	rep.o.max_write = 4096;
	rep.o.flags = PT_INIT_EXT;
	rep.o.flags2 = PT_FLAGS2_PASSTHROUGH;
	rep.o.max_stack_depth = 1;
	if (write(dev, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		return -EIO;
	int file = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (file < 0)
		return -errno;
	struct pt_backing_map map = {.fd = file};
	int id = ioctl(dev, PT_DEV_IOC_BACKING_OPEN, &map);
	int rc = id < 0 ? -errno : 0;
	close(file);
	if (id > 0) {
		uint32_t uid = (uint32_t)id;
		(void)ioctl(dev, PT_DEV_IOC_BACKING_CLOSE, &uid);
	}
	return rc;
}

void sbx_pt_probe(struct sbx_pt_probe *out)
{
	static char why[160];
	size_t size = VIEW_MAX_WRITE + 4096 * 2;
	wd_autofree char *buf = wd_malloc(size);
	int fs = -1, dev = pt_probe_fs(&fs);

	*out = (struct sbx_pt_probe){0};
	if (dev < 0) {
		snprintf(why, sizeof(why), "no FUSE file system could be created (%s)",
			 strerror(-dev));
		out->why = why;
		return;
	}
	struct pollfd p = {.fd = dev, .events = POLLIN};
	ssize_t n = poll(&p, 1, 1000) == 1 ? read(dev, buf, size) : -1;
	const struct fuse_in_header *ih = (const struct fuse_in_header *)buf;
	const struct pt_init_in *in = (const struct pt_init_in *)(ih + 1);

	if (n < (ssize_t)(sizeof(*ih) + sizeof(*in)) || ih->opcode != FUSE_INIT) {
		out->why = "the kernel sent no FUSE INIT";
	} else if (!(in->flags & PT_INIT_EXT) || !(in->flags2 & PT_FLAGS2_PASSTHROUGH)) {
		snprintf(why, sizeof(why),
			 "the kernel does not offer FUSE passthrough (protocol 7.%u; it needs "
			 "Linux 6.9+ with CONFIG_FUSE_PASSTHROUGH)",
			 in->minor);
		out->why = why;
	} else {
		out->init_offered = true;
		int rc = pt_probe_backing(dev, ih->unique);
		out->backing_ok = rc == 0;
		if (rc == -EPERM)
			out->why = "registering a backing file needs CAP_SYS_ADMIN in the initial "
				   "user namespace (root runs only)";
		else if (rc) {
			snprintf(why, sizeof(why), "registering a backing file failed (%s)",
				 strerror(-rc));
			out->why = why;
		}
	}
	close(fs);
	close(dev);
}
