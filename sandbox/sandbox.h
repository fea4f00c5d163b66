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
#include <sys/ptrace.h>
#include <sys/types.h>

struct pol_config;

/* ======================================================================
 * The project view (view.c): a FUSE passthrough of the project directory
 * that decides sensitive opens through a callback.
 * ====================================================================== */

struct sbx_view; /* opaque */

/* The most worker threads the view runs: a decision that waits holds one. */
#define SBX_VIEW_MAX_THREADS 64

/* A request from the view: an open, create, rename, link or symlink that
 * touches a sensitive path. Strings are valid only during the callback. */
struct sbx_view_request {
	const char *path;  /* relative to the project root, no leading "./" */
	const char *path2; /* the other side of a rename/link/symlink, or NULL */
	unsigned access;   /* mask of enum pol_access (policy.h) */
	pid_t pid;	   /* the requesting thread, from the FUSE context */
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
	/* How many objects (each an O_PATH fd) the view keeps before it asks
	 * the kernel to drop the least recently used files (0: three
	 * quarters of RLIMIT_NOFILE's soft limit). */
	size_t fd_budget;
	/* Paths of the view (relative, like |hidden|) where the sensitive
	 * markers do not apply: a markers view's harness places (its own
	 * configuration and credentials, which it reads at start). Copied. */
	const char *const *unmarked;
	/* When set (NULL-terminated, relative like |hidden|, possibly empty):
	 * the only places of the view where anything may be changed; every
	 * other change answers EROFS. A markers view gets the agent's writable
	 * places inside it, so that it never lets the agent write where it
	 * could not without the view (a read-only bind under it included).
	 * Copied. */
	const char *const *writable;
	/* A place outside the project: requests name it by absolute path,
	 * |prefix| + "/" + its path in the view (|prefix| itself for the
	 * root). Copied. With |all_sensitive| it is a gated place: every
	 * object in it is sensitive (every open of a file is decided); a gated
	 * place may be a single regular file: then |backing_fd| is an O_PATH
	 * fd of that file and the view's root is it. Without it, a markers
	 * view: the markers decide as in the project. */
	const char *prefix;
	bool all_sensitive;
	/* Try kernel FUSE passthrough (docs/design.md, section "The view's
	 * passthrough"): only when the caller made the mount as root in
	 * the initial user namespace (the backing-file ioctl needs
	 * CAP_SYS_ADMIN there) and the kernel's INIT is queued on the fd. */
	bool passthrough;
};

/* Told by the project's view after a mkdir through it succeeded: the new
 * directory's project-relative |path| (borrowed for the call) and its
 * identity. Called on a FUSE worker while the request waits for its
 * reply: it must neither block nor reach the view. */
typedef void (*sbx_view_made_dir_fn)(void *arg, const char *path, dev_t dev, ino_t ino);
/* Sets (or, with NULL, clears) the view's mkdir hook; |arg| is borrowed
 * until the view stops or the hook is cleared. */
void sbx_view_on_made_dir(struct sbx_view *v, sbx_view_made_dir_fn fn, void *arg);

/* The sandbox is set up (its mounts on entries of the view are made):
 * entries looked up from now on may be evicted; the ones looked up before
 * (a mount may sit on them) never are. */
void sbx_view_seal(struct sbx_view *v);

/* Whether the view's sticky identity table holds (dev, ino) as sensitive
 * or as a control file (takes the view's lock). */
void sbx_view_identity_of(struct sbx_view *v, dev_t dev, ino_t ino, bool *sensitive, bool *control);

/* How many objects the view holds now, and how many entries it has asked
 * the kernel to drop so far (for tests and --stats). */
void sbx_view_counts(struct sbx_view *v, size_t *nodes, uint64_t *evicted);

/* The view's kernel passthrough: whether it was negotiated (and why not),
 * how many opens passed through of how many opens of files, and how many
 * backing registrations failed (those files were served by the view). */
struct sbx_view_pt_status {
	bool on;
	const char *why; /* static, NULL when on */
	uint64_t opens, all, failed;
	int last_err;
};
void sbx_view_passthrough(struct sbx_view *v, struct sbx_view_pt_status *out);

/* Whether this kernel offers FUSE passthrough to a file system created
 * (never mounted) for the question, and whether this process may register
 * a backing file (root in the initial user namespace). |why| (static) says
 * what is missing; NULL when both hold. Not thread-safe (|why|'s buffer). */
struct sbx_pt_probe {
	bool init_offered, backing_ok;
	const char *why;
};
void sbx_pt_probe(struct sbx_pt_probe *out);

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
/* The same with the root's file type: S_IFDIR, or S_IFREG for a view of a
 * single file (a gated file outside the project, mounted over it). */
int sbx_fuse_mount_type(const char *mountpoint, uid_t uid, gid_t gid, mode_t type);

/* The view's rules by path (view_rules.c), which `warden explain --open`
 * asks as well. |path| is relative to the view's root ("" for the root).
 * Sensitive: a sensitive marker matches, and it is not under one of the
 * NULL-terminated |unmarked| places (a markers view's harness places). */
bool sbx_view_path_sensitive(const struct pol_config *policy, const char *const *unmarked,
			     const char *path);
/* Write-protected (changes answer EROFS): the project's .warden/ and the
 * write-protected patterns; |prefix| is a place's absolute path outside the
 * project, NULL for the project's view. */
bool sbx_view_path_write_protected(const struct pol_config *policy, const char *prefix,
				   const char *path);
/* Whether an open with |access| (enum pol_access) of an object that is
 * |sensitive| / a |control| file goes to the decide callback. */
bool sbx_view_open_decided(bool sensitive, bool control, unsigned access);

/* The FUSE device every view is made with. */
#define SBX_FUSE_DEV "/dev/fuse"

/* Opens SBX_FUSE_DEV for a view (O_CLOEXEC): the fd, or -errno. */
int sbx_fuse_dev_open(void);
/* Whether the sandbox needs a user namespace (warden is not root). */
bool sbx_needs_userns(void);
/* The namespaces of the sandbox (CLONE_NEW* flags), as spawn makes them. */
int sbx_clone_flags(void);

/* What `warden run` needs before the agent starts, probed as spawn does it
 * (probe.c): errno values, 0 when it works. */
struct sbx_probe {
	int ns_err;   /* the sandbox's namespaces (clone with sbx_clone_flags()) */
	int fuse_err; /* the FUSE device and file system, opened inside them */
};
/* Probes in a short-lived child (nothing is mounted); |view|: the FUSE
 * device too. Returns 0 and fills *out, or -errno (no pipe). */
int sbx_probe(bool view, struct sbx_probe *out);

/* ======================================================================
 * The agent's start (spawn.c) and its seccomp filter (filter.c).
 * ====================================================================== */

/* The markers views, the project's view and the gated places' views. */
#define SBX_MAX_VIEWS 32

/* A directory (or file) of the host bound into the sandbox at |dst|: the
 * session's private temporary directories over /tmp and /var/tmp, and
 * what is shared with the host inside them. Every source is opened (as a
 * detached copy of its mount tree) before the first bind is attached, so
 * a bind over /tmp never hides a later source under /tmp. */
struct sbx_bind {
	const char *src; /* host path (a symlink is followed, as the host sees it) */
	const char *dst; /* the path in the sandbox */
	bool writable;	 /* else mounted read-only */
	/* |dst| lies under a private directory bound earlier: it is created
	 * there (as an empty directory, or an empty file for a file) when
	 * missing. Never set for a path of the host's. */
	bool make;
};

struct sbx_spawn_config {
	const char *path;  /* absolute path of the agent's program */
	char *const *argv; /* NULL-terminated, argv[0] as given */
	char *const *envp; /* the agent's environment (already scrubbed) */
	const char *cwd;   /* the agent's working directory (re-entered in the view) */
	/* Put the agent in a process group of its own and, when the
	 * supervisor's stdin is its controlling terminal and in the
	 * foreground, give that group the terminal. */
	bool take_terminal;
	/* The project view: when set, the sandbox mounts a FUSE file system
	 * over |view_dir| in its own mount namespace and hands the fd to
	 * |on_view|, which must be serving it when it returns 0. */
	const char *view_dir;
	int (*on_view)(void *arg, int fuse_fd);
	void *on_view_arg;
	/* Gated places outside the project (absolute paths of directories or
	 * regular files, NULL-terminated, at most SBX_MAX_VIEWS - 1): each
	 * gets a FUSE view of its own mounted over it the same way, after the
	 * project's, and handed to |on_gate| (with |on_view_arg|) with its
	 * index. A symlink is followed (the view covers what it names). */
	char *const *gate_dirs;
	int (*on_gate)(void *arg, size_t i, int fuse_fd);
	/* Markers views (absolute paths of directories, NULL-terminated,
	 * none inside another): each gets a FUSE view mounted over it BEFORE
	 * the project's and the gated places' (which may lie inside it and are
	 * then mounted over its entries), with default_permissions, handed to
	 * |on_markers| (with |on_view_arg|) with its index. */
	char *const *marker_dirs;
	int (*on_markers)(void *arg, size_t i, int fuse_fd);
	/* Absolute paths outside the project hidden from the agent: a
	 * directory becomes an empty read-only tmpfs, a file an empty one. */
	char *const *hide;
	/* Landlock: the only places the agent may write (NULL-terminated).
	 * NULL: no Landlock. */
	char *const *writable;
	/* The agent's RLIMIT_NOFILE soft limit (the supervisor raises its own
	 * for the view's fds); 0: leave it as inherited. */
	unsigned long nofile_soft;
	/* Bound in this order right after the mounts are made private,
	 * before the views are attached (|nbinds| entries; may be 0). */
	const struct sbx_bind *binds;
	size_t nbinds;
	/* Paths in the sandbox (NULL-terminated) that are private after the
	 * binds (/tmp, /var/tmp, /dev/shm): a view's mount point or a bind
	 * target missing under one of them is created there. */
	char *const *private_dirs;
	/* A host directory bound over /dev/shm (writable), after /dev is set
	 * up; NULL: a fresh tmpfs as root, the host's in a user namespace. */
	const char *shm_dir;
	/* The split view (root only; NULL: none): each of |split->fast| is
	 * bound, as a detached copy of that directory of |split_backing_fd|
	 * (nosuid, nodev, read-only with |split_read_only|), marked with
	 * |fan|'s group, and attached over the project view's entry for it
	 * before the view is sealed. A subtree that cannot be made stays
	 * FUSE. */
	const struct sbx_split *split;
	struct sbx_fan *fan;
	int split_backing_fd;
	bool split_read_only;
	/* The split view: the filter traps the name-changing calls, which the
	 * supervisor performs itself (sbx_filter_load_fs, emul.c). */
	bool fs_trap;
};

struct sbx_child {
	pid_t pid;	/* the agent's initial process (also its process group) */
	pid_t init_pid; /* the sandbox's init (PID 1 of the agent's namespace) */
	/* A pidfd of init, opened while it could not have been reaped: it
	 * becomes readable once init has exited, which the kernel allows only
	 * after every other process of the sandbox's PID namespace is gone
	 * (sbx_child_gone). -1 when none. */
	int init_pidfd;
	int notify_fd; /* the seccomp listener: the supervisor owns it */
	int pidfd;     /* pidfd of the agent's initial process */
	/* O_PATH fd of the sandbox's root as its processes see it (the agent's
	 * /proc/PID/root): where the exec decoder resolves absolute paths. */
	int root_fd;
	/* The set-up socket, where init reports the agent's exit
	 * (sbx_child_exit). */
	int exit_fd;
	bool has_terminal; /* the agent's group was given the terminal */
	int landlock_abi;  /* the Landlock ABI applied, 0 when none */
	/* The view's request pids are the supervisor's (root: it mounted the
	 * view); false in a user namespace, where they are the sandbox's. */
	bool view_pids_host;
	/* The split view's fast subtree mounts (owned: free with
	 * sbx_child_free_fast); NULL/0 without the split view. */
	struct sbx_fast *fast;
	size_t nfast;
};

void sbx_child_free_fast(struct sbx_child *c);

/*
 * Starts the agent in its sandbox (each step and why: docs/design.md,
 * section "The sandbox: starting it"): a new
 * mount and PID namespace (and user namespace when not root) whose init
 * makes |cfg->binds| (the private temporary directories and what is shared
 * in them), mounts the view, hides the outside secrets, mounts its own /proc and a
 * minimal /dev; the agent is traced from its first instruction (PTRACE_SEIZE
 * with SBX_TRACE_EXEC, so that each exec of its own is checked), runs with no
 * capabilities, NO_NEW_PRIVS, Landlock and warden's filter, and execs
 * |cfg->path|. That exec is the first notification the supervisor answers.
 *
 * Returns 0 and fills |out| (the caller owns notify_fd and pidfd), or -errno
 * when the agent could not be started: nothing runs unconfined. On failure
 * *err (when |err| is not NULL) receives what failed (caller frees).
 */
int sbx_spawn(const struct sbx_spawn_config *cfg, struct sbx_child *out, char **err);

/* Reads the agent's wait status from |exit_fd| (sbx_child.exit_fd), which
 * init sends once it has reaped the agent: call it when the agent's pidfd
 * says it exited. 0 and *status (a SIGKILL death when init died without
 * saying), or -EAGAIN when init said nothing within the socket's 30 s
 * receive timeout. */
int sbx_child_exit(int exit_fd, int *status);

/* Kills the sandbox's init (and so its whole PID namespace) and waits at
 * most |timeout_ms| until it has exited, reaping whatever child of ours
 * exits meanwhile (a traced process must be reaped by its tracer before
 * the namespace can empty). 0 when every process of the sandbox is gone,
 * -ETIMEDOUT, or -EBADF when there is no init pidfd. Closes it. */
int sbx_child_gone(struct sbx_child *c, int timeout_ms);

/*
 * The guardian of the split view's fanotify group (guard.c): a process
 * outside the sandbox that holds a copy of |group_fd| (never reading it)
 * and of |init_pidfd|, so that the supervisor's death cannot release the
 * group, which would allow every open waiting for a decision. When the
 * supervisor dies (or closes *ctl_fd without sbx_guard_stop) it kills init,
 * waits until init has exited (every task of the sandbox gone) and only
 * then exits. Call from the supervisor's MAIN thread (the death signal
 * fires when the forking thread exits), after init exists and before the
 * agent runs. The caller keeps its own descriptors; *ctl_fd (O_CLOEXEC) and
 * *pid are the caller's until sbx_guard_stop(). Returns 0 or -errno.
 */
int sbx_guard_start(int group_fd, int init_pidfd, int *ctl_fd, pid_t *pid);

/* Tells the guardian to exit without touching the sandbox, closes |ctl_fd|
 * and reaps |pid| (either may be -1). */
void sbx_guard_stop(int ctl_fd, pid_t pid);

/* The Landlock ABI of the running kernel, 0 when none. */
int sbx_landlock_abi(void);

/* ptrace options: SBX_TRACE_EXEC for a process whose exec is checked at its
 * exec event (sbx_verify_exec), SBX_TRACE_FOLLOW for one whose children must
 * be followed from their first instruction too. Both kill the tracee if the
 * tracer dies. */
#define SBX_TRACE_EXEC (PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)
#define SBX_TRACE_FOLLOW                                                                           \
	(SBX_TRACE_EXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE)

/* Installs warden's seccomp filter on the calling thread: execve/execveat
 * notify the listener; other architectures and the x32 ABI kill the process;
 * the side doors fail with EPERM (clone3 with ENOSYS; the list:
 * docs/design.md, section "The sandbox: the seccomp filter"). Returns
 * the listener fd (O_CLOEXEC) or -errno. For the child between fork and
 * exec, and for tests. */
int sbx_filter_load(void);
/* The same with |fs_trap| (the split view): the name-changing calls
 * notify as well (sbx_emul_call), chmod, open, creat, mkdir and mknod with
 * S_ISUID or S_ISGID in their mode fail with EPERM, and openat2 with
 * ENOSYS (filter.c says why). */
int sbx_filter_load_fs(bool fs_trap);

/* ======================================================================
 * The exec decoder (notify.c).
 * ====================================================================== */

/* Caps. An argv (strings and pointers) over SBX_ARGV_MAX bytes is refused. */
#define SBX_ARGV_MAX (256 * 1024)
#define SBX_ENV_MAX  (1024 * 1024)
/* The longest command line warden reads (sbx_proc_cmdline, sbx_args). */
#define SBX_CMDLINE_MAX 8192

/* One exec as read from the stopped caller. Every string is owned by the
 * event; free with sbx_exec_event_free(). */
struct sbx_exec_event {
	uint64_t id;	/* the notification id */
	pid_t pid;	/* the calling thread (as the kernel names it to us) */
	int syscall_nr; /* __NR_execve or __NR_execveat */
	/* A pidfd of the caller, opened before the notification id was
	 * checked, so it names the caller and no recycled pid; -1 when the
	 * caller is not its process's leader. The caller may take it (set it
	 * to -1); sbx_exec_event_free() closes it otherwise. */
	int pidfd;
	char *path_arg; /* the path argument as passed (may be relative or "") */
	char *path;	/* absolute path, as the caller's namespace sees it */
	char *resolved; /* the final file after symlinks, or NULL */
	/* The program's file, a symlink on the way or a directory above them
	 * is one the agent can have written (sbx_notify_set_places), with
	 * where, for the policy and the audit (NULL when not). */
	bool agent_writable;
	char *writable_why;
	char *cwd;   /* the caller's cwd */
	char **argv; /* NULL-terminated */
	char **envp; /* NULL-terminated */
	size_t argv_bytes;
	/* What the exec will run, for the check at the exec event: the file's
	 * identity and, for a "#!" script, the interpreter chain. */
	dev_t dev;
	ino_t ino;
	bool found;	    /* the file exists and was opened */
	int open_errno;	    /* why it could not be opened, when !found */
	char *interp;	    /* first interpreter of a script, or NULL */
	char **expect_argv; /* the argv the new image must have */
	dev_t exe_dev;	    /* the identity /proc/PID/exe must have */
	ino_t exe_ino;
	/* Set when the exec is refused before any decision, with the reason
	 * ("argv over 256 KiB"): the caller audits and refuses it. */
	int refuse_errno;
	char *refuse_reason;
	char *parent_cmdline; /* the caller's /proc/PID/cmdline, shell-quoted */
	uint64_t digest;      /* FNV-1a of the file identity, argv and envp */
	/* The caller's process and parent, from its pidfd (Linux 6.13's
	 * PIDFD_GET_INFO); 0 when unknown (no pidfd, an older kernel). */
	pid_t tgid;
	pid_t ppid;
};

/* Where a process's arguments sit in its memory (the kernel's arg_start
 * and arg_end, which /proc/PID/cmdline reads) and what they were when an
 * exec event showed them (sbx_verify_exec). A process made by fork has
 * its creator's, at the same place. */
struct sbx_args {
	uint64_t at;
	size_t len;  /* the strings and their NULs; at most SBX_CMDLINE_MAX */
	char *bytes; /* what was there (owned); NULL: nothing known */
};

/* The arguments warden last saw for the caller |tid| (its own exec event),
 * or else for its parent |ppid| (0: unknown), or NULL. The decoder reads
 * the caller's memory there, and takes those bytes as its command line
 * when they are still exactly what was seen; otherwise it reads
 * /proc/PID/cmdline. */
typedef const struct sbx_args *(*sbx_args_hint)(void *ctx, pid_t tid, pid_t ppid);

/* The arguments |a| as a shell-quoted command line (caller frees), or NULL
 * when nothing is known. */
char *sbx_args_quote(const struct sbx_args *a);

struct sbx_sock_event;
struct sbx_fs_event;

/* Waits for no notification: receives one that is ready on |fd|. Returns 0
 * and an event (caller frees): an exec in *out, or a socket call (connect,
 * sendto, sendmsg, sendmmsg: sock.c decodes it) in *sock, or a
 * name-changing call (emul.c decodes it) in *fs, the others set to NULL; -ENOENT when the caller vanished before it could be decoded
 * (nothing to answer), or another -errno. The program is
 * found as the caller's exec finds it (ident.c): in its root, |root_fd|
 * (sbx_child.root_fd; -1: the caller's own root, opened for each exec),
 * from its cwd or dirfd, with its credentials, the calling thread taking
 * them on for the lookup; when that fails, found is false and open_errno is
 * the kernel's answer. |hint| (may be NULL) is asked, with |hint_ctx|,
 * where the caller's arguments should be. Not thread-safe: one thread
 * decodes. */
int sbx_notify_recv(int fd, int root_fd, sbx_args_hint hint, void *hint_ctx,
		    struct sbx_exec_event **out, struct sbx_sock_event **sock,
		    struct sbx_fs_event **fs);

void sbx_exec_event_free(struct sbx_exec_event *ev);

/* The places the agent can write, by identity (ident.c): each of |paths|
 * (NULL-terminated) is opened as a caller with root |root_fd| finds it (-1:
 * this process's root), and kept as (device, inode); a path that does not
 * exist is skipped. |owner| is who may own a program besides root (the
 * invoking user; 0 for root runs). Caller frees with sbx_places_free(). */
struct sbx_places;
struct sbx_places *sbx_places_open(int root_fd, char *const *paths, uid_t owner);
void sbx_places_free(struct sbx_places *pl);
/* The decoder's places (borrowed; NULL: no program counts as written by the
 * agent). Set once the sandbox is built, before its first exec is decoded. */
void sbx_notify_set_places(const struct sbx_places *pl);

/* For `warden explain`: resolves |path| (absolute, or relative to this
 * process's cwd) as this process would exec it and says whether the agent
 * can have written it, by the same check as the decoder. Fills *resolved
 * (the final file), *agent_writable and *writable_why (what makes it so: a
 * fact for the decision, not an error; NULL when not agent-writable); the
 * caller frees both strings. 0 or -errno (the exec would fail so). */
int sbx_program_identity(const struct sbx_places *pl, const char *path, char **resolved,
			 bool *agent_writable, char **writable_why);

/* Answers a notification: allow (continue the syscall) or fail it with
 * |err| (a positive errno). 0, -ENOENT when the caller is gone, or -errno. */
int sbx_notify_allow(int fd, uint64_t id);
int sbx_notify_deny(int fd, uint64_t id, int err);
/* Whether the caller of notification |id| still waits for the answer. */
bool sbx_notify_id_valid(int fd, uint64_t id);

/* Checks, at the PTRACE_EVENT_EXEC stop of |pid|, that the new image is the
 * one decided: /proc/PID/exe has the identity and /proc/PID/cmdline and
 * /proc/PID/environ are exactly expect_argv and envp. Returns 0 when they
 * match, else -EPERM with what differs in *err (when |err| is not NULL;
 * caller frees).
 * On a match, |args| (may be NULL) says where the new image's arguments
 * are, when the new stack showed it (x86_64, at most SBX_CMDLINE_MAX
 * bytes); else its bytes are NULL. The caller frees args->bytes. */
int sbx_verify_exec(pid_t pid, const struct sbx_exec_event *ev, struct sbx_args *args, char **err);

/* The tgid and parent of the process behind |pidfd| (PIDFD_GET_INFO, Linux
 * 6.13), in the caller's pid namespace. False when the kernel has no such
 * ioctl, the process is gone, or |pidfd| is -1. */
bool sbx_pidfd_ids(int pidfd, pid_t *tgid, pid_t *ppid);

/* Reads /proc/PID/cmdline shell-quoted (at most |max| bytes, and at most
 * SBX_CMDLINE_MAX). Caller frees; NULL when the process is gone or its
 * command line is longer. */
char *sbx_proc_cmdline(pid_t pid, size_t max);

/* ======================================================================
 * The socket decoder (sock.c): connect, sendto with an address, sendmsg
 * and sendmmsg, which the filter stops so that no pathname Unix socket is
 * reached without a decision.
 * ====================================================================== */

/* Copied from the caller: at most this much data per message, and this
 * many messages of a sendmmsg. */
#define SBX_SOCK_DATA_MAX (1024 * 1024)
#define SBX_SOCK_MSGS_MAX 64

enum sbx_sock_op { SBX_SOCK_CONNECT, SBX_SOCK_SENDTO, SBX_SOCK_SENDMSG, SBX_SOCK_SENDMMSG };

/* A destination as copied from the caller's memory, once. */
enum sbx_addr_kind {
	SBX_ADDR_NONE,	   /* no address (a connected socket's peer) */
	SBX_ADDR_PATH,	   /* an AF_UNIX pathname: |path| */
	SBX_ADDR_ABSTRACT, /* an AF_UNIX abstract name (sun_path[0] == 0) */
	SBX_ADDR_RAW,	   /* anything else: passed to the kernel byte for byte */
	/* An AF_INET/AF_INET6 destination: |inet|, decided; the call passes
	 * the caller's bytes (raw) as copied, which name that destination. */
	SBX_ADDR_INET,
};

/* An IP destination as the kernel will read it from the copied bytes. An
 * IPv4 address mapped into IPv6 (::ffff:a.b.c.d) is given as AF_INET:
 * that is where the kernel sends it. */
struct sbx_inet {
	int family;	  /* AF_INET or AF_INET6 */
	uint8_t addr[16]; /* network order; AF_INET: the first 4 bytes */
	uint16_t port;	  /* host order */
	uint32_t scope;	  /* AF_INET6: sin6_scope_id (a link-local address's interface) */
};

/* What the kernel reads from the address of a call on an IP socket. */
enum sbx_inet_use {
	SBX_INET_CONNECT, /* connect(2), or a TCP send with MSG_FASTOPEN */
	SBX_INET_SEND,	  /* a datagram's destination (sendto, sendmsg) */
	SBX_INET_IGNORED, /* a TCP send without MSG_FASTOPEN: the kernel ignores it */
};

/* Reads the |len| address bytes |raw| given to a call of kind |use| on a
 * socket of family |sfamily| (AF_INET/AF_INET6) and type |stype| as the
 * kernel's inet code would (tcp_v4_connect, tcp_v6_connect,
 * ip4/ip6_datagram_connect, udp_sendmsg, udpv6_sendmsg). Returns 1 and
 * *out for a destination; 0 when the bytes name none (a disconnect, an
 * ignored address, AF_UNSPEC for the connected peer); or a positive errno
 * the kernel would fail the call with. Pure: unit-tested. */
int sbx_sock_inet_dest(int sfamily, int stype, enum sbx_inet_use use, const void *raw, size_t len,
		       struct sbx_inet *out);

/* The control message after |c| (NULL: the first) in the |len| bytes at
 * |ctl|, walked exactly as the kernel walks a send's control buffer
 * (for_each_cmsghdr, __cmsg_nxthdr, each message checked with CMSG_OK),
 * never as libc's CMSG_NXTHDR does: glibc before 2.38 stops at a message
 * whose aligned length passes the buffer's end, which the kernel still acts
 * on when its own length fits, so a walk through libc could miss a message
 * the kernel then reads (an SCM_RIGHTS of warden's own descriptors, a
 * source route). NULL at the end; NULL and *bad when the kernel would
 * refuse the buffer (EINVAL). Pure: unit-tested. */
struct cmsghdr;
struct cmsghdr *sbx_cmsg_next(void *ctl, size_t len, struct cmsghdr *c, bool *bad);

struct sbx_sock_msg {
	enum sbx_addr_kind kind;
	char *path;	 /* SBX_ADDR_PATH: the path as the caller gave it */
	char raw[128];	 /* the address bytes as copied (sockaddr_storage) */
	unsigned rawlen; /* their length as the caller gave it */
	int target_fd;	 /* SBX_ADDR_PATH: O_PATH fd of the file decided, or -1 */
	char *data;	 /* the message's bytes, gathered */
	size_t len;	 /* their length (sendmsg: of every iovec) */
	char *control;	 /* sendmsg: ancillary data, SCM_RIGHTS rewritten to our fds */
	size_t controllen;
	int *fds; /* our copies of the descriptors SCM_RIGHTS passes */
	size_t nfds;
	uint64_t len_at;      /* sendmmsg: where msg_len goes in the caller */
	struct sbx_inet inet; /* SBX_ADDR_INET: the destination decided */
	bool decided;	      /* SBX_ADDR_INET: the supervisor allowed it */
};

/* A process's credentials, from /proc/PID/status (in warden's user
 * namespace). Free |groups| with sbx_creds_release(). */
struct sbx_creds {
	uid_t uid[4]; /* real, effective, saved, fs */
	gid_t gid[4];
	gid_t *groups; /* the supplementary groups, malloc'd */
	size_t ngroups;
	uint64_t capeff; /* the effective capability set */
};

/* One socket call as read from the stopped caller. Owned by the caller of
 * sbx_notify_recv(); free with sbx_sock_event_free(). */
struct sbx_sock_event {
	uint64_t id;
	pid_t pid;  /* the calling thread */
	pid_t tgid; /* its process */
	enum sbx_sock_op op;
	int sockfd; /* our copy of the caller's socket (the same open file), or -1 */
	int family; /* SO_DOMAIN, SO_TYPE of that socket */
	int type;
	int protocol; /* SO_PROTOCOL (IPPROTO_TCP, IPPROTO_UDP, ...) */
	int flags;    /* the send flags */
	/* Nothing to decide: the kernel may run the call as it is (see sock.c
	 * for why that cannot be raced). */
	bool pass;
	int err; /* > 0: fail the call with this errno, nothing decided */
	struct sbx_sock_msg *msgs;
	size_t nmsgs;
	int cwd_fd; /* O_PATH fd of the caller's cwd, for a relative path */
	struct sbx_creds creds;
};

void sbx_sock_event_free(struct sbx_sock_event *ev);

/* Whether |nr| is one of the socket calls the filter stops. */
bool sbx_sock_call(int nr);

/* Resolves |path| as the caller of |ev| would (absolute paths inside
 * |root_fd|, the sandbox's root; relative ones from its cwd, absolute
 * symlinks met on the way back inside |root_fd|), following symlinks.
 * Returns an O_PATH fd of the file (the caller closes it), or -errno. */
int sbx_sock_resolve(const struct sbx_sock_event *ev, int root_fd, const char *path);

/* Does the call of |ev| on the caller's behalf, on its socket, with its
 * credentials, each pathname destination replaced by the file decided
 * (msgs[i].target_fd, through /proc/self/fd), and answers the notification
 * on |notify_fd| with the result. Blocks as the call would (run it on a
 * thread of its own). Returns the call's result (>= 0, or -errno). */
long sbx_sock_perform(int notify_fd, const struct sbx_sock_event *ev);

/* Answers notification |id| with |val| (>= 0) or the error -|val|. */
int sbx_notify_answer(int fd, uint64_t id, long val);

/* ======================================================================
 * The split view (view_split.c, fan.c, probe.c): for root runs, every
 * subtree of the project that holds no sensitive, control,
 * write-protected or hidden name at start is bound from the backing tree
 * over the view's entry for it, and its opens are decided by a fanotify
 * listener instead of the FUSE view (docs/view-plan.md, section 5.2).
 * ====================================================================== */

/* One fast subtree mount in the sandbox. */
struct sbx_fast {
	uint64_t mnt_id; /* the unique mount id (sbx_jail_mnt_id) of that mount */
	char *rel;	 /* project-relative path of its root, no leading "./" */
};

/* A sensitive or control identity the start walk met. */
struct sbx_split_ident {
	dev_t dev;
	ino_t ino;
	unsigned sensitive : 1, control : 1;
	unsigned multi : 1; /* st_nlink > 1 when met */
};

/* What the start walk found. Free with sbx_split_free(). */
struct sbx_split {
	char **fast; /* project-relative roots of the fast subtrees */
	size_t nfast;
	size_t *fast_files; /* regular files below each (same order) */
	struct sbx_split_ident *idents;
	size_t nidents;
	size_t fast_files_total; /* regular files in the fast subtrees */
	size_t fuse_dirs;	 /* directories left to the FUSE view */
	bool complete;		 /* the whole tree was walked within the budget */
	double walk_s;
};

struct sbx_split_walk_config {
	int backing_fd; /* O_PATH|O_DIRECTORY of the project (borrowed) */
	const struct pol_config *policy;
	/* Project-relative paths (NULL-terminated) that must stay under the
	 * FUSE view with every ancestor (the view's hidden names: they
	 * may appear during the run). */
	const char *const *keep;
	size_t max_files;  /* entries looked at before the walk stops (0: 200,000) */
	double max_s;	   /* seconds before it stops (0: 2 s) */
	size_t max_mounts; /* fast subtrees kept, the largest (0: 256) */
};

/* The start walk over the backing tree (never follows a symlink, stays on
 * the project's file system): the maximal subtrees with no sensitive,
 * control, write-protected or kept name, no `.warden`, and no second name
 * of a sensitive or control file; what it did not finish stays FUSE.
 * 0 and *out, or -errno. */
int sbx_split_walk(const struct sbx_split_walk_config *cfg, struct sbx_split **out);
void sbx_split_free(struct sbx_split *s);
/* The start walk's test of one entry at project-relative |path|: whether
 * it is sensitive (*sens), a control file (*ctl), write-protected, or one
 * of |keep| or on the way to one; any of them keeps its directory FUSE.
 * A directory made during the session is bound only when this is false
 * (emul_bind.c). */
bool sbx_split_entry_named(const struct pol_config *pol, const char *const *keep, const char *path,
			   bool *sens, bool *ctl);

/* Whether the split view can run for this project (root in the initial
 * user namespace, fanotify permission events, evictable marks on its
 * file system, detached mounts): 0, else -errno and a one-line reason in
 * |why|. On 0, a non-NULL |group| receives the fanotify group the probe
 * made, without marks, for sbx_fan_config.group (the caller owns it);
 * else it is -1. */
int sbx_split_probe(int project_fd, int *group, char *why, size_t len);

struct sbx_view;
struct sbx_fan; /* opaque: the listener */

struct sbx_fan_counts {
	uint64_t events, decided, marked, premarked, denied;
	double premark_s;     /* the pre-marking walk's time so far */
	double aside_s;	      /* of it, standing aside for the agent's commands */
	bool premark_running; /* it had not ended yet */
	size_t fast_subtrees, fast_files, fuse_dirs;
	size_t fast_left; /* start subtrees init left to the FUSE view */
};

struct sbx_fan_config {
	const struct pol_config *policy; /* borrowed */
	const char *project;		 /* the project's path in the sandbox (absolute) */
	int backing_fd;			 /* O_PATH of the project (borrowed; dup'ed) */
	const struct sbx_split *split;	 /* borrowed until sbx_fan_start returns */
	/* The group sbx_split_probe() handed on (taken, even on failure), or
	 * -1 for a new one. Set it explicitly: 0 is a descriptor. */
	int group;
	sbx_view_decide_fn decide;
	void *decide_arg;
	size_t premark_max; /* files the pre-marking walk marks at most (0: 190,000) */
};

/* Makes the fanotify group (no thread is started). 0 and *out or -errno. */
int sbx_fan_new(const struct sbx_fan_config *cfg, struct sbx_fan **out);
/* The group fd: for the guardian's dup, and for spawn, which marks each fast
 * mount with it and closes it in init at once. */
int sbx_fan_group_fd(const struct sbx_fan *f);
/* Marks the detached mount |mnt_fd| (OPEN_TREE_CLONE) for permission
 * events. 0 or -errno. */
int sbx_fan_mark_mount(struct sbx_fan *f, int mnt_fd);
/* A fast subtree bound during the session at project-relative |rel|
 * (copied): the watcher watches its directories. Never blocks. */
void sbx_fan_watch_dir(struct sbx_fan *f, const char *rel);
/* Starts the listener and the pre-marking walk, once the sandbox exists:
 * |view| is the project's FUSE view, whose identity table both share. */
/* Tells the listener the sandbox's mount namespace, that of |pid|: a file
 * is named only on a fast mount attached there. |fast| are the start's
 * fast mounts: those init left to the view (gone or replaced meanwhile)
 * are counted for --stats. Before sbx_fan_start. 0 or -errno. */
int sbx_fan_set_sandbox(struct sbx_fan *f, pid_t pid, const struct sbx_fast *fast, size_t nfast);
int sbx_fan_start(struct sbx_fan *f, struct sbx_view *view);
void sbx_fan_counts(const struct sbx_fan *f, struct sbx_fan_counts *c);
/* The agent is about to exec a command: the pre-marking walk stands aside
 * for a while (fan_walk.c says how long and why). Any thread; NULL is
 * nothing. */
void sbx_fan_step_aside(struct sbx_fan *f);
/* The rule behind it, for tests: how long (ns) the walk still waits at
 * |now| when the last exec set |until| and the listener had seen
 * |events_then| open events, |events| now; 0: it goes on. */
int64_t sbx_fan_aside_wait(int64_t now, int64_t until, uint64_t events, uint64_t events_then);
/* Stops: every pending event is answered FAN_DENY, threads joined, the
 * group closed. Safe with NULL. */
void sbx_fan_stop(struct sbx_fan *f);

/* The access of the open a thread |tid| is blocked in, from
 * /proc/TID/syscall (mask of enum pol_access): open, openat and creat by
 * their flags register; an exec reads; openat2 and anything else count as
 * read and write. */
unsigned sbx_proc_open_access(pid_t tid);
/* The same from the text of /proc/TID/syscall (for tests). */
unsigned sbx_proc_open_access_text(const char *text);

/* The view's sticky identity table (view_check.c), locked. */
unsigned sbx_view_identity(struct sbx_view *v, dev_t dev, ino_t ino);
void sbx_view_identity_add(struct sbx_view *v, dev_t dev, ino_t ino, bool sensitive, bool control);
/* ======================================================================
 * The emulation of the name-changing calls (emul.c), with the split view:
 * the supervisor performs each one itself, in the agent's context.
 * ====================================================================== */

enum sbx_fs_op { SBX_FS_RENAME, SBX_FS_LINK, SBX_FS_SYMLINK, SBX_FS_UNLINK, SBX_FS_TRUNCATE };

/* One trapped call as read from the stopped caller, once. Free with
 * sbx_fs_event_free(). */
struct sbx_fs_event {
	uint64_t id;
	pid_t pid; /* the calling thread (the supervisor's pid namespace) */
	int nr;	   /* the system call */
	enum sbx_fs_op op;
	/* The names: [0] the object (rename's and link's old name, symlink's
	 * target, unlink's and truncate's path), [1] the new name. NULL with
	 * |perr| EFAULT or ENAMETOOLONG when it could not be read; NULL with
	 * |perr| 0 for a null pointer or an argument the call does not take. */
	char *path[2];
	int perr[2];
	/* Our O_PATH descriptors of the directories the names start from
	 * (the caller's dirfd, or its cwd), -1 when the caller's dirfd names
	 * nothing (the call then fails with EBADF, where the kernel says). */
	int dirfd[2];
	unsigned flags; /* renameat2's, linkat's, unlinkat's (AT_REMOVEDIR for rmdir) */
	int64_t length; /* truncate's */
};

bool sbx_emul_call(int nr);
void sbx_fs_event_free(struct sbx_fs_event *ev);

/* The call's names as "a -> b" for messages (caller frees). */
char *sbx_fs_event_describe(const struct sbx_fs_event *ev);

struct sbx_emul; /* opaque */

struct sbx_emul_config {
	int notify_fd;	 /* the seccomp listener (borrowed) */
	pid_t agent_pid; /* whose credentials and mount namespace the workers take */
	int root_fd;	 /* the agent's root (sbx_child.root_fd, borrowed) */
	/* The agent's Landlock writable places (NULL: no Landlock), as the
	 * agent's own ruleset was made from them (sbx_spawn_config.writable). */
	char *const *writable;
	/* Fast subtrees (the split view, sbx_child.fast): the kernel's unique
	 * mount id of each, and the project-relative path of its root. A call whose object or
	 * target lies on one of these mounts is decided here with the FUSE
	 * view's rules (|policy|, |view|'s identities) through |decide|, as
	 * the view decides the same call in its own part. */
	const struct sbx_fast *fast; /* copied */
	size_t nfast;
	const char *project; /* the project's path in the sandbox */
	const struct pol_config *policy;
	struct sbx_view *view; /* the project's view (its identity table), or NULL */
	sbx_view_decide_fn decide;
	void *decide_arg;
	/* An O_PATH descriptor of the project's backing tree (taken, closed
	 * by the emulation even when it fails to start), or -1: a rename or
	 * link between two fast subtrees is then made there (emul.c,
	 * across_fast). -1 for review runs, whose fast mounts are read-only.
	 * Set it explicitly: 0 is a descriptor. */
	int backing_fd;
	/* The split view's listener (borrowed, NULL: none): with it and a
	 * |backing_fd|, a directory the project's view makes during the
	 * session (sbx_emul_made_dir) is bound as a new fast subtree, marked
	 * in its group, unless its name is one the start walk keeps FUSE
	 * (sbx_split_entry_named with |split_keep|, copied). */
	struct sbx_fan *fan;
	const char *const *split_keep;
	unsigned workers;   /* threads performing calls, at most (0: 16) */
	unsigned queue_max; /* calls waiting for a worker (0: 1024) */
};

/* Starts the first worker, made the agent in every way the kernel checks
 * (emul.c); the others start when calls find every worker busy. Call
 * after sbx_spawn() returned (the supervisor must be single threaded
 * while it clones). 0 and *out, or -errno (nothing runs). */
int sbx_emul_start(const struct sbx_emul_config *cfg, struct sbx_emul **out);
/* Hands |ev| (taken) to a worker, which performs it and answers the
 * notification. -EAGAIN when the queue is full (|ev| is answered with
 * ENOMEM and freed). */
int sbx_emul_submit(struct sbx_emul *e, struct sbx_fs_event *ev);
/* Stops and joins the workers; calls still queued are never performed
 * (the listener's close fails them). Safe with NULL. */
void sbx_emul_stop(struct sbx_emul *e);

struct sbx_emul_counts {
	uint64_t performed, failed, overflow, decided;
	uint64_t bound, bind_failed; /* directories made later, bound or left FUSE */
};
void sbx_emul_counts(struct sbx_emul *e, struct sbx_emul_counts *c);

/* The project's view made the directory |rel| (dev, ino): queued to be
 * bound as a fast subtree (emul_bind.c). Never blocks: a view's mkdir
 * hook (sbx_view_made_dir_fn). Safe with NULL. */
void sbx_emul_made_dir(struct sbx_emul *e, const char *rel, dev_t dev, ino_t ino);
/* No more binds: call before the listener stops (the binder marks mounts
 * in its group). Safe with NULL. */
void sbx_emul_stop_binding(struct sbx_emul *e);

/* The agent thread an emulation worker |tid| acts for right now, or 0:
 * a FUSE request made by a worker is the agent's. */
pid_t sbx_emul_acting_for(pid_t tid);

#endif
