/*
 * view_int.h: private to the project view's files (view*.c).
 *
 * view.c starts and stops the session, sbx_view_node.c keeps the inode table
 * and each inode's path relative to the project root, view_check.c the
 * sensitive, hidden and write-protected checks and the decide hook,
 * view_evict.c the evictor; view_ops.c holds what the FUSE callbacks share
 * and view_names.c, view_attr.c, view_files.c and view_dirs.c the
 * callbacks, which unpack a request, call a do_*() that returns 0 or
 * -errno, and reply once.
 */
#ifndef WARDEN_VIEW_INT_H
#define WARDEN_VIEW_INT_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "sandbox.h"

/* Entry, attribute and negative-entry timeouts in seconds (why 1 s:
 * docs/design.md, section "The sandbox: the project view"). */
#define VIEW_ENTRY_TIMEOUT 1.0
#define VIEW_ATTR_TIMEOUT  1.0
/* Worker threads: libfuse starts a new one whenever none is idle, up to this
 * many, so that sensitive opens waiting for a person do not starve the
 * rest. */
#define VIEW_MAX_THREADS SBX_VIEW_MAX_THREADS
#define VIEW_MAX_WRITE	 (1u << 20)

/* One file system object the kernel knows, keyed by (dev, ino). The ino the
 * kernel sees is the address of this struct (FUSE_ROOT_ID for the root). */
struct vnode {
	struct vnode *hnext; /* hash chain; under view.lock */
	/* The last name this object was seen under and the directory holding
	 * it; the parent is referenced (refs) so the path can always be
	 * rebuilt. Both under view.lock; updated by lookup and rename. */
	struct vnode *parent;
	char *name;
	int fd; /* O_PATH|O_NOFOLLOW, owned */
	dev_t dev;
	ino_t ino;
	mode_t type;	  /* S_IFMT bits */
	uint64_t nlookup; /* the kernel's references; under view.lock */
	uint64_t refs;	  /* children pointing here; under view.lock */
	/* Sticky: once reached through a sensitive name (or under a sensitive
	 * directory) the object stays sensitive under every other name. */
	bool sensitive;
	/* Sticky as well: once reached through a write-protected name. */
	bool wprot;
	/* Sticky: once seen under a control file's name (policy's
	 * pol_is_control()), every change to the object is decided, under
	 * any name. Not inherited: control patterns name what lies below a
	 * directory themselves. */
	bool control;
	/* For the evictor (view.c "Descriptors"); under view.lock: when the
	 * kernel last looked it up (the view's tick), how many open handles
	 * it has, and whether the kernel was asked to drop it. */
	uint64_t used;
	unsigned opens;
	bool evicting;
	/* Looked up before the agent started (sbx_view_seal): the sandbox's
	 * own mounts (hidden places) sit on such entries, and dropping the
	 * entry would detach the mount. Never evicted. */
	bool pinned;
	/* What the backing file looked like when the kernel last cached it
	 * (keep_cache / cache_readdir are granted only if it is unchanged). */
	bool cache_known;
	struct timespec cache_mtime;
	off_t cache_size;
	/* The kernel passthrough mode of its open files (view_pt.c), chosen
	 * at the first open and kept until the last release; under
	 * view.lock. backing_id > 0: every open passes through to it;
	 * pt_cached: every open is served by the view. */
	int32_t backing_id;
	bool pt_cached;
};

/* What an identity is known as (sbx_view_ident.flags, sbx_view_node_flags()). */
#define VIEW_SENSITIVE 1u /* opens and changes are decided */
#define VIEW_CONTROL   2u /* changes are decided (a control file) */

/* A sensitive or control (dev, ino): a hard link to it under any name is
 * one too. */
struct sbx_view_ident {
	dev_t dev;
	ino_t ino;
	unsigned flags; /* VIEW_SENSITIVE, VIEW_CONTROL */
};

struct sbx_view {
	struct fuse_session *se;
	pthread_t thread;
	bool thread_started;
	int loop_rc;

	const struct pol_config *policy;
	bool read_only;
	char *prefix;	 /* a gated place's absolute path, NULL for the project */
	char **hidden;	 /* NULL-terminated, owned */
	char **unmarked; /* NULL-terminated, owned: no markers apply below */
	char **writable; /* NULL: no limit; else the only places changed */
	sbx_view_decide_fn decide;
	void *decide_arg;
	unsigned threads;
	atomic_bool stopping;

	pthread_mutex_t lock; /* the table, names, refcounts, the ident set */
	struct vnode root;
	struct vnode **table;
	size_t table_size; /* power of two */
	size_t count;

	struct sbx_view_ident *idents; /* sensitive identities; under lock */
	size_t nidents, idents_cap;
	/* Whether the one-time walk that finds sensitive names of hard-linked
	 * files has run (under scan_lock). */
	pthread_mutex_t scan_lock;
	bool scanned;

	bool writeback; /* negotiated in init */

	/* The evictor (view.c "Descriptors"): keeps the vnodes, each holding
	 * an fd, within fd_budget. Under lock. */
	size_t fd_budget;
	uint64_t tick;
	pthread_cond_t evict_cond;
	pthread_t evictor;
	bool evictor_started, evict_stop;
	atomic_bool sealed; /* set-up is over: later lookups are not pinned */
	uint64_t evicted;   /* entries the kernel was asked to drop */

	/* Kernel passthrough (view_pt.c). on and fd are set before the
	 * session's threads start and never change; the counts are under
	 * lock. */
	struct {
		bool on;	 /* negotiated at INIT */
		int fd;		 /* the session's /dev/fuse fd, for the ioctls */
		const char *why; /* static: why it is off */
		uint64_t opens, all, failed;
		int last_err; /* of the last failed backing registration */
	} pt;
	/* Told of each directory made through the view (sbx_view_on_made_dir);
	 * under lock. */
	sbx_view_made_dir_fn made_dir;
	void *made_dir_arg;
};

/* ---- view_pt.c: kernel passthrough ---------------------------------- */

/* Mounts the session on |fuse_fd| (taken) and answers the kernel's INIT,
 * with passthrough when the kernel offers it (v->pt.on). 0, or -errno when
 * the session cannot serve. */
int sbx_view_pt_mount(struct sbx_view *v, int fuse_fd);
/* Counts an open of |n| (a regular file whose open was allowed) and
 * chooses its mode: the backing id to reply with, or 0 for an open the
 * view serves. Every open counted is ended by sbx_view_opened(-1). */
int32_t sbx_view_pt_open(struct sbx_view *v, struct vnode *n);
/* Drops |n|'s backing id; with v->lock held, at its last release. */
void sbx_view_pt_close_id(struct sbx_view *v, struct vnode *n);
/* fuse_reply_open() / fuse_reply_create(), passing through to |id| when
 * it is > 0. */
int sbx_view_pt_reply_open(fuse_req_t req, const struct fuse_file_info *fi, int32_t id);
int sbx_view_pt_reply_create(fuse_req_t req, const struct fuse_entry_param *e,
			     const struct fuse_file_info *fi, int32_t id);

/* ---- view.c: inode table and paths ---------------------------------- */

struct vnode *sbx_view_node(struct sbx_view *v, fuse_ino_t ino);
fuse_ino_t sbx_view_ino(struct sbx_view *v, struct vnode *n);

/* Opens |name| in |parent|, finds or adds its vnode, takes one kernel
 * reference on it and fills |e|. Answers -ENOENT for hidden names. */
int sbx_view_lookup(struct sbx_view *v, struct vnode *parent, const char *name,
		    struct fuse_entry_param *e);
/* Drops |n| kernel references (forget). */
void sbx_view_forget(struct sbx_view *v, struct vnode *node, uint64_t n);
/* An open handle of |n| was made (+1) or released (-1): the evictor leaves
 * open files alone. */
void sbx_view_opened(struct sbx_view *v, struct vnode *n, int delta);
/* After a successful rename: the object now at (newparent, newname) has
 * that name. Marks it sensitive if the new name is. */
void sbx_view_renamed(struct sbx_view *v, struct vnode *newparent, const char *newname);

/* The path of |parent|/|name| (|name| may be NULL for |parent| itself)
 * relative to the project root, "" for the root. Caller frees. */
char *sbx_view_path(struct sbx_view *v, struct vnode *parent, const char *name);

/* ---- view.c: checks -------------------------------------------------- */

bool sbx_view_is_hidden(const struct sbx_view *v, const char *path);
/* 0, or -EROFS when |path| may not be modified (read-only view,
 * .warden/, write_protected). */
int sbx_view_check_write(const struct sbx_view *v, const char *path);
/* Whether an existing object must be decided when opened under |path|:
 * sticky flag, sensitive identity, sensitive path, or a hard link whose
 * other name is sensitive. |st| is its current stat. */
bool sbx_view_node_sensitive(struct sbx_view *v, struct vnode *n, const char *path,
			     const struct stat *st);
/* The sensitive and write-protected flags of |name| in |parent| (project
 * path |path|): by path, by its parent, and by the object if it exists. */
void sbx_view_name_flags(struct sbx_view *v, struct vnode *parent, const char *name,
			 const char *path, bool *sens, bool *wprot);
/* VIEW_SENSITIVE and VIEW_CONTROL for an existing object |n| at |path| with
 * stat |st|, as sbx_view_node_sensitive() finds sensitivity (sticky flags,
 * identity, path, and the one-time walk for a hard-linked file); what is
 * found sticks to |n| and its identity. */
unsigned sbx_view_node_flags(struct sbx_view *v, struct vnode *n, const char *path,
			     const struct stat *st);
/* Whether |name| in |parent| (project path |path|) is a control file: by
 * path, or by the identity of the object there now. */
bool sbx_view_name_control(struct sbx_view *v, struct vnode *parent, const char *name,
			   const char *path);
/* Calls the decide callback for |path| (and |path2|) with |access|; 0 or a
 * negative errno. Fails closed: no callback, a stopping view or a positive
 * answer all refuse with -EACCES. */
int sbx_view_decide(struct sbx_view *v, fuse_req_t req, const char *path, const char *path2,
		    unsigned access);
/* Forgets the identity of the object |fd| (O_PATH, opened before it lost a
 * name) once it has no name left: its inode number may be given to a new
 * file, which must not inherit its flags. A vnode still holding it keeps
 * its own sticky flags. Takes the lock. */
void sbx_view_identity_gone(struct sbx_view *v, int fd);
/* Remembers |n|'s identity as sensitive (under lock). */
void sbx_view_mark_sensitive(struct sbx_view *v, struct vnode *n);

/* ---- shared between the view's files ---------------------------------- */

#define VIEW_DEFAULT_THREADS 4
#define VIEW_EVICT_BATCH     4096 /* at most this many per round */
#define VIEW_SCAN_MAX_DEPTH  256
#define VIEW_PARENT_MAX	     100000 /* bound on parent chains (no cycles) */

/* sbx_view_node.c */
/* Whether |path| (relative to the view's root) carries a sensitive marker. */
bool sbx_view_sensitive_at(const struct sbx_view *v, const char *path);
/* The vnode of (dev, ino), or NULL. Under lock. */
struct vnode *sbx_view_table_find(struct sbx_view *v, dev_t dev, ino_t ino);
void sbx_view_node_release(struct sbx_view *v, struct vnode *n);
void sbx_view_set_name(struct sbx_view *v, struct vnode *n, struct vnode *parent, const char *name);

/* view_check.c */
unsigned sbx_view_ident_flags(const struct sbx_view *v, dev_t dev, ino_t ino);
bool sbx_view_ident_known(const struct sbx_view *v, dev_t dev, ino_t ino);
void sbx_view_ident_add_flags(struct sbx_view *v, dev_t dev, ino_t ino, unsigned flags);
void sbx_view_ident_add(struct sbx_view *v, dev_t dev, ino_t ino);
bool sbx_view_protected_at(const struct sbx_view *v, const char *path);

/* view_evict.c */
void *sbx_view_evictor_loop(void *arg);

/* ---- view_ops.c ------------------------------------------------------ */

/* view_ops.c: what every callback shares */
#define VIEW_PROC_FD_LEN 32

/* The view's own fs credentials while it makes an object for a caller. */
struct sbx_view_as_caller {
	bool switched;
	uid_t uid;
	gid_t gid;
};

struct sbx_view *sbx_view_of_req(fuse_req_t req);
struct vnode *sbx_view_req_node(fuse_req_t req, fuse_ino_t ino);
void sbx_view_proc_fd(char buf[VIEW_PROC_FD_LEN], int fd);
void sbx_view_reply_err(fuse_req_t req, int err);
int sbx_view_neg_errno(void);
int sbx_view_check_node_write(struct sbx_view *v, struct vnode *n, const char *path);
int sbx_view_check_new(struct sbx_view *v, struct vnode *parent, const char *name, const char *path,
		       bool *sens);
mode_t sbx_view_safe_mode(mode_t mode, mode_t type);
void sbx_view_caller_begin(fuse_req_t req, struct sbx_view_as_caller *c);
void sbx_view_caller_end(const struct sbx_view_as_caller *c);
int sbx_view_caller_may_open(fuse_req_t req, const struct stat *st, int mask);
bool sbx_view_cache_still_valid(struct sbx_view *v, struct vnode *n, const struct stat *st);

/* The callbacks of each file, put into |ops|. */
void sbx_view_names_ops(struct fuse_lowlevel_ops *ops);
void sbx_view_attr_ops(struct fuse_lowlevel_ops *ops);
void sbx_view_files_ops(struct fuse_lowlevel_ops *ops);
void sbx_view_dirs_ops(struct fuse_lowlevel_ops *ops);
/* The whole table of the view's callbacks. */
void sbx_view_ops_fill(struct fuse_lowlevel_ops *ops);

#endif
