/*
 * sandbox: everything that touches the kernel's confinement: the child's
 * setup between fork and exec (namespaces, the FUSE mount, Landlock, the
 * seccomp filter), the seccomp notification decoder for execve/execveat, and
 * the FUSE filesystem of the project view.
 *
 * It decides nothing: the decoder hands a decoded exec to its caller, and the
 * view hands a sensitive open to a callback and waits for the answer.
 */
#ifndef WARDEN_SANDBOX_H
#define WARDEN_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pol_config;

/* ======================================================================
 * The project view (view.c): a FUSE passthrough of the project directory
 * that decides sensitive opens through a callback.
 * ====================================================================== */

struct sbx_view; /* opaque */

/* A request from the view: an open, create, rename, link or symlink that
 * touches a sensitive path. Strings are valid only during the callback. */
struct sbx_view_request {
	const char *path;  /* relative to the project root, no leading "./" */
	const char *path2; /* the other side of a rename/link/symlink, or NULL */
	unsigned access;   /* mask of enum pol_access (policy.h) */
	pid_t pid;         /* the requesting thread, from the FUSE context */
	uid_t uid;
	gid_t gid;
};

/* Decides a view request. Called from a FUSE worker thread; blocks that
 * thread (only that one) until decided. Returns 0 to allow, or a negative
 * errno to refuse (-EACCES). Must be thread-safe. */
typedef int (*sbx_view_decide_fn)(void *arg, const struct sbx_view_request *req);

struct sbx_view_config {
	/* O_PATH|O_DIRECTORY fd of the real project directory. Taken: the view
	 * owns and closes it. No fd derived from it is ever passed to the
	 * agent. */
	int backing_fd;
	/* Borrowed, must outlive the view: pol_is_sensitive() and
	 * pol_is_write_protected() read it. */
	const struct pol_config *policy;
	/* Review runs: every write, create, delete, rename, link, setattr and
	 * xattr change fails with EROFS. */
	bool read_only;
	/* NULL-terminated list of project-relative paths that the agent must
	 * not see at all (the audit database and its -wal/-shm files): lookup
	 * answers ENOENT and readdir omits them. Copied. */
	const char *const *hidden;
	sbx_view_decide_fn decide;
	void *decide_arg;
	/* Worker threads serving FUSE requests (0: a default of 4). */
	unsigned threads;
};

/* Serves the FUSE connection |fuse_fd| (already mounted, e.g. by the child;
 * taken) on background threads. Returns 0 and *out, or -errno. */
int sbx_view_start(const struct sbx_view_config *cfg, int fuse_fd, struct sbx_view **out);

/* Stops serving, joins the threads, and frees the view. Pending requests are
 * answered with an error (never allowed). Safe with NULL. */
void sbx_view_stop(struct sbx_view *v);

/* Mounts a FUSE filesystem at |mountpoint| on an fd opened from /dev/fuse
 * (O_CLOEXEC) and returns that fd, or -errno. Uses mount(2) directly (root
 * or a user namespace with CAP_SYS_ADMIN over the mount namespace). Options:
 * allow_other, default_permissions off (the backing file system checks). */
int sbx_fuse_mount(const char *mountpoint, uid_t uid, gid_t gid);

#endif
