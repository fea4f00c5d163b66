/*
 * spawn.c: the supervisor's side of starting the agent in its sandbox
 * (sbx_spawn, in phases), and learning that it exited.
 *
 * The supervisor clones init (PID 1 of new mount and PID namespaces, and a
 * user namespace when not root); init sets up the mounts, forks the agent
 * and only reaps (spawn_child.c). The supervisor makes or receives each
 * FUSE view and serves it, seizes the agent with ptrace before it runs any
 * code of its own and takes its seccomp listener. Each step, its order and
 * why: docs/design.md, section "The sandbox: starting it".
 */
#include "spawn_int.h"

#include "common.h"
#include "jail_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

/* Whether |path| lies strictly under one of the private directories. */

/*
 * Asks the kernel to hand a notification and its answer over between the
 * caller and the supervisor on the same CPU (Linux 6.6+): the caller sleeps
 * from the moment it sends until it is answered, so the answer may wake it
 * where the supervisor runs instead of on another CPU. No difference showed
 * above the development machine's noise (docs/measurements.md). An older
 * kernel refuses the flag; nothing else changes then.
 */
static void sync_wake_up(int notify_fd)
{
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
	(void)ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
}

/*
 * As root, the supervisor creates the view's mount itself (fsopen, fsconfig,
 * fsmount) so that the FUSE connection belongs to the supervisor's PID
 * namespace: the pid of every FUSE request is then the pid the supervisor
 * knows (for the audit and for telling the process why), not a pid of the
 * sandbox's namespace. init only attaches the detached mount with
 * move_mount(). Returns the mount fd and sets *fuse_fd, or -errno.
 */
static int make_fuse_mount(mode_t type, int *fuse_fd)
{
	wd_autoclose int fd = sbx_fuse_dev_open();
	if (fd < 0)
		return fd;
	wd_autoclose int fs = (int)syscall(SYS_fsopen, "fuse", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	char num[16], mode[16];
	snprintf(num, sizeof(num), "%d", fd);
	snprintf(mode, sizeof(mode), "%o", (unsigned)(type & S_IFMT));
	struct {
		unsigned cmd;
		const char *key, *value;
	} steps[] = {
		{FSCONFIG_SET_STRING, "source", "warden"},
		{FSCONFIG_SET_STRING, "fd", num},
		{FSCONFIG_SET_STRING, "rootmode", mode},
		{FSCONFIG_SET_STRING, "user_id", "0"},
		{FSCONFIG_SET_STRING, "group_id", "0"},
		{FSCONFIG_SET_FLAG, "allow_other", NULL},
		/* The kernel checks permissions with the caller's credentials
		 * against the attributes the view reports (view_ops.c). */
		{FSCONFIG_SET_FLAG, "default_permissions", NULL},
		{FSCONFIG_CMD_CREATE, NULL, NULL},
	};
	for (size_t i = 0; i < WD_ARRAY_SIZE(steps); i++)
		if (syscall(SYS_fsconfig, fs, steps[i].cmd, steps[i].key, steps[i].value, 0) < 0)
			return -errno;
	int mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
			       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0)
		return -errno;
	*fuse_fd = wd_steal_fd(&fd);
	return mnt;
}

static void close_views(struct sbx_view_slot *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		wd_close(&v[i].mnt);
		wd_close(&v[i].fuse);
	}
}

static void reap(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

/* Waits until |pid|, a tracee of ours that was sent SIGKILL, has exited:
 * a ptrace stop it reported earlier may come first. */
static void reap_traced(pid_t pid)
{
	for (;;) {
		int status;
		pid_t r = waitpid(pid, &status, __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status))
			return;
	}
}

/* Reads the next message; a failure report from the sandbox becomes *err. */
static int next(int sock, char type, struct sbx_msg *m, char **err)
{
	int rc = sbx_msg_recv(sock, m);
	/* A step init did otherwise (MSG_WARN, before the agent's hello):
	 * said once, and the set-up goes on. */
	while (rc == 0 && m->type == MSG_WARN && type != MSG_WARN) {
		if (m->fd >= 0)
			close(m->fd);
		wd_warn("%s", m->text);
		rc = sbx_msg_recv(sock, m);
	}
	if (rc == 0 && m->type == type)
		return 0;
	if (err && rc == 0 && m->type == MSG_FAIL)
		*err = wd_asprintf("the sandbox could not be set up: %s", m->text);
	else if (err)
		*err = wd_asprintf("the sandbox exited during set-up%s%s", rc < 0 ? ": " : "",
				   rc < 0 ? strerror(-rc) : "");
	if (m->fd >= 0 && rc == 0)
		close(m->fd);
	return -EPERM;
}

/* One sbx_spawn() call: what its phases share. */
struct spawn {
	const struct sbx_spawn_config *cfg;
	struct sbx_child *out;
	uid_t uid;
	gid_t gid;
	bool userns;
	struct sbx_view_slot views[SBX_MAX_VIEWS];
	size_t nviews, nmarkers;
	struct sbx_fast_slot *fast; /* the split view's binds, made before init */
	struct sbx_fast *fast_ids;
	size_t nfast;
	pid_t init;
};

static void close_fast(struct spawn *sp)
{
	for (size_t i = 0; i < sp->nfast; i++)
		wd_close(&sp->fast[i].mnt);
}

/*
 * The split view's fast subtrees (root only): each a detached copy of
 * the backing directory (open_tree OPEN_TREE_CLONE, not recursive: the
 * walk kept to one file system), nosuid and nodev, read-only for a review
 * run, and marked in the listener's group BEFORE init can attach it, so
 * that no open through it is ever unwatched. The directory is reached
 * without following a symlink (the user may have replaced one since the
 * walk). A subtree that fails any step is not bound: the FUSE view serves
 * it, which is always correct. Made before init is cloned, like the FUSE
 * mounts, so that init inherits the fds; no thread is started here.
 */
static void make_fast(struct spawn *sp)
{
	const struct sbx_spawn_config *cfg = sp->cfg;
	if (!cfg->split || !cfg->fan || sp->userns || !cfg->view_dir)
		return;
	size_t n = cfg->split->nfast;
	sp->fast = wd_calloc(n + 1, sizeof(*sp->fast));
	sp->fast_ids = wd_calloc(n + 1, sizeof(*sp->fast_ids));
	for (size_t i = 0; i < n; i++) {
		const char *rel = cfg->split->fast[i];
		struct open_how how = {
			.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_XDEV,
		};
		wd_autoclose int dir =
			(int)syscall(SYS_openat2, cfg->split_backing_fd, rel, &how, sizeof(how));
		if (dir < 0)
			continue;
		uint64_t id = 0;
		int m = sbx_jail_copy_dir(dir,
					  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
						  (cfg->split_read_only ? MOUNT_ATTR_RDONLY : 0),
					  &id);
		if (m < 0)
			continue;
		if (sbx_fan_mark_mount(cfg->fan, m) < 0) {
			close(m);
			continue;
		}
		sp->fast[sp->nfast] = (struct sbx_fast_slot){rel, m};
		sp->fast_ids[sp->nfast] = (struct sbx_fast){id, wd_strdup(rel)};
		sp->nfast++;
	}
}

void sbx_child_free_fast(struct sbx_child *c)
{
	for (size_t i = 0; i < c->nfast; i++)
		free(c->fast[i].rel);
	free(c->fast);
	c->fast = NULL;
	c->nfast = 0;
}

/* The set-up socket: the supervisor's end passes credentials, and waits at
 * most 30 s for a message (a sandbox stuck before exec is a failure). */
static int open_channel(int sv[2], char **err)
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		int e = errno;
		if (err)
			*err = wd_asprintf("socketpair: %s", strerror(e));
		return -e;
	}
	int one = 1;
	setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	struct timeval tv = {.tv_sec = 30};
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return 0;
}

/* Fills the view slots in attach order (see struct sbx_view_slot). */
static int plan_views(struct spawn *sp, char **err)
{
	const struct sbx_spawn_config *cfg = sp->cfg;
	size_t ngates = 0;
	while (cfg->marker_dirs && cfg->marker_dirs[sp->nmarkers])
		sp->nmarkers++;
	while (cfg->gate_dirs && cfg->gate_dirs[ngates])
		ngates++;
	if (sp->nmarkers + ngates + (cfg->view_dir ? 1 : 0) > SBX_MAX_VIEWS) {
		if (err)
			*err = wd_asprintf("more than %d views", SBX_MAX_VIEWS);
		return -E2BIG;
	}
	for (size_t i = 0; i < sp->nmarkers; i++)
		sp->views[sp->nviews++] = (struct sbx_view_slot){
			cfg->marker_dirs[i], S_IFDIR, VIEW_MARKERS, i, -1, -1};
	if (cfg->view_dir)
		sp->views[sp->nviews++] =
			(struct sbx_view_slot){cfg->view_dir, S_IFDIR, VIEW_PROJECT, 0, -1, -1};
	for (size_t i = 0; i < ngates; i++) {
		struct stat st;
		mode_t type = stat(cfg->gate_dirs[i], &st) == 0 && S_ISREG(st.st_mode) ? S_IFREG
										       : S_IFDIR;
		sp->views[sp->nviews++] =
			(struct sbx_view_slot){cfg->gate_dirs[i], type, VIEW_GATE, i, -1, -1};
	}
	return 0;
}

/* As root, makes each view's mount (make_fuse_mount). Made in any order
 * (attached in slot order): the project's first, so that a machine without
 * FUSE is told about the view it knows. */
static int make_views(struct spawn *sp, char **err)
{
	for (size_t j = 0; j < sp->nviews && !sp->userns; j++) {
		size_t i = j == 0 ? sp->nmarkers : j <= sp->nmarkers ? j - 1 : j;
		if (!sp->cfg->view_dir)
			i = j;
		struct sbx_view_slot *v = &sp->views[i];
		v->mnt = make_fuse_mount(v->type, &v->fuse);
		if (v->mnt < 0) {
			int e = -v->mnt;
			v->mnt = -1;
			close_views(sp->views, sp->nviews);
			if (err)
				*err = wd_asprintf(
					"cannot create %s (FUSE mount: %s); warden doctor says "
					"what is missing",
					sbx_view_slot_what(v), strerror(e));
			return -e;
		}
	}
	return 0;
}

/* Starts init in new namespaces; the child never returns from here. The
 * set-up socket |sv| is closed on failure; on success only sv[0] is left
 * open, for the caller. */
static int start_init(struct spawn *sp, int sv[2], char **err)
{
	long flags = sbx_clone_flags() | SIGCHLD;
	sp->out->view_pids_host = !sp->userns;
	pid_t init = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	if (init < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		close_views(sp->views, sp->nviews);
		close_fast(sp);
		if (err)
			*err = wd_asprintf(
				"cannot create the sandbox's namespaces (clone: %s); warden "
				"doctor says what is missing",
				strerror(e));
		return -e;
	}
	if (init == 0) {
		close(sv[0]);
		for (size_t i = 0; i < sp->nviews; i++)
			if (sp->views[i].fuse >= 0)
				close(sp->views[i]
					      .fuse); /* the sandbox never holds the FUSE device */
		/* Nor the fanotify group: answers match by fd number, and a
		 * holder could answer for the listener. */
		if (sp->cfg->fan)
			close(sbx_fan_group_fd(sp->cfg->fan));
		sbx_init_main(sp->cfg, sv[1], sp->uid, sp->gid, sp->userns, sp->views, sp->nviews,
			      sp->fast, sp->nfast);
	}
	close(sv[1]);
	for (size_t i = 0; i < sp->nviews; i++)
		wd_close(&sp->views[i].mnt);
	close_fast(sp);
	sp->init = init;
	sp->out->init_pid = init;
	/* Our child, not reaped before sbx_spawn() returns: the pidfd names it. */
	sp->out->init_pidfd = (int)syscall(SYS_pidfd_open, init, 0);
	return 0;
}

/*
 * After a view could not be served: did init fail first? The supervisor
 * closes its copies of the views' mounts right after the fork, so when init
 * dies on an earlier step (making mounts private, say) the mounts' last
 * holder is gone, the kernel aborts the FUSE connection, and the server's
 * first write fails (EIO). That error says nothing; init's own does. It is
 * always queued by then: init sends its failure before it exits, and the
 * connection is aborted only when it has exited. Reads only what is already
 * queued (a poll with no wait), so a live init waiting for our ACK cannot
 * stall us. Returns true with *err set when init said why.
 */
static bool init_failed_first(int sock, char **err)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	struct sbx_msg m;
	while (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) && sbx_msg_recv(sock, &m) == 0) {
		if (m.fd >= 0)
			close(m.fd);
		if (m.type == MSG_WARN) {
			wd_warn("%s", m.text);
			continue;
		}
		if (m.type != MSG_FAIL)
			return false;
		if (err)
			*err = wd_asprintf("the sandbox could not be set up: %s", m.text);
		return true;
	}
	return false;
}

/* Hands each view's FUSE fd to its server, then lets init attach it. A FUSE
 * fd not yet handed to a server is closed by spawn_fail(). */
static int serve_views(struct spawn *sp, int sock, char **err)
{
	const struct sbx_spawn_config *cfg = sp->cfg;
	struct sbx_msg m;
	int rc;
	for (size_t i = 0; i < sp->nviews; i++) {
		struct sbx_view_slot *v = &sp->views[i];
		if (v->fuse < 0) {
			if ((rc = next(sock, MSG_VIEW, &m, err)) < 0)
				return rc;
			v->fuse = m.fd;
		}
		/* Serve before init attaches it: nothing can wait on an
		 * unserved mount. */
		int fd = wd_steal_fd(&v->fuse);
		switch (v->kind) {
		case VIEW_PROJECT:
			rc = cfg->on_view(cfg->on_view_arg, fd);
			break;
		case VIEW_MARKERS:
			rc = cfg->on_markers(cfg->on_view_arg, v->index, fd);
			break;
		case VIEW_GATE:
		default:
			rc = cfg->on_gate(cfg->on_view_arg, v->index, fd);
			break;
		}
		if (rc < 0) {
			if (init_failed_first(sock, err))
				return -EPERM;
			if (err)
				*err = wd_asprintf("%s could not be served: %s",
						   v->kind == VIEW_PROJECT ? "the project view"
									   : v->dir,
						   strerror(-rc));
			return rc;
		}
		sbx_msg_send(sock, MSG_ACK, NULL, -1);
	}
	return 0;
}

/* The last errno as a failure: never 0. */
static int errno_failure(void)
{
	return errno > 0 ? -errno : -EPERM;
}

/* Seizes the agent when it says hello, then takes its seccomp listener. */
static int attach_agent(struct spawn *sp, int sock, char **err)
{
	struct sbx_child *out = sp->out;
	struct sbx_msg m;
	int rc;
	if ((rc = next(sock, MSG_HELLO, &m, err)) < 0)
		return rc;
	pid_t agent = m.pid;
	if (agent <= 0 || ptrace(PTRACE_SEIZE, agent, 0, SBX_TRACE_EXEC) < 0) {
		rc = errno_failure();
		if (err)
			*err = wd_asprintf("cannot trace the agent (ptrace: %s); check "
					   "/proc/sys/kernel/yama/ptrace_scope (must be 0, 1 or 2)",
					   strerror(errno));
		return rc;
	}
	out->pid = agent;
	sbx_msg_send(sock, MSG_GO, NULL, -1);
	/* The agent is traced now: a stop it hits (a signal) would wait for
	 * our loop, but nothing signals it before it execs; the receive
	 * timeout bounds the wait regardless. */
	if ((rc = next(sock, MSG_LISTENER, &m, err)) < 0)
		return rc;
	int lfd = -1;
	sscanf(m.text, "landlock=%d fd=%d", &out->landlock_abi, &lfd);
	{
		wd_autoclose int apidfd = (int)syscall(SYS_pidfd_open, agent, 0);
		out->notify_fd =
			apidfd < 0 || lfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, apidfd, lfd, 0);
	}
	if (out->notify_fd < 0) {
		rc = errno_failure();
		if (err)
			*err = wd_asprintf(
				"pidfd_open/pidfd_getfd of the agent's seccomp listener: %s",
				strerror(errno));
		return rc;
	}
	sync_wake_up(out->notify_fd);
	sbx_msg_send(sock, MSG_ACK, NULL, -1);
	return 0;
}

/* The agent's root and pidfd, and the terminal's foreground. */
static int agent_handles(struct spawn *sp, char **err)
{
	struct sbx_child *out = sp->out;
	int rc;
	/* The agent's root is every sandboxed process's: chroot, pivot_root,
	 * setns, unshare and mount are refused by the filter. (Were it not,
	 * a path resolved elsewhere would only fail the exec check.) */
	char rootp[64];
	snprintf(rootp, sizeof(rootp), "/proc/%d/root", out->pid);
	out->root_fd = open(rootp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (out->root_fd < 0) {
		rc = errno_failure();
		if (err)
			*err = wd_asprintf("%s: %s", rootp, strerror(errno));
		return rc;
	}
	out->pidfd = (int)syscall(SYS_pidfd_open, out->pid, 0);
	if (out->pidfd < 0) {
		rc = errno_failure();
		if (err)
			*err = wd_asprintf("pidfd_open: %s%s", strerror(errno),
					   errno == ENOSYS ? " (warden needs Linux 5.6 or later)"
							   : "");
		return rc;
	}
	if (sp->cfg->take_terminal && isatty(STDIN_FILENO) &&
	    tcgetpgrp(STDIN_FILENO) == getpgrp()) {
		/* Like a shell starting a foreground job. SIGTTOU is ignored
		 * by the caller while the supervisor changes the foreground. */
		if (tcsetpgrp(STDIN_FILENO, out->pid) == 0)
			out->has_terminal = true;
	}
	return 0;
}

/*
 * Undoes a set-up that failed after init started. PID 1 gone: the kernel
 * kills the whole namespace. Killed before the listener is closed, so that
 * an agent already in its exec dies there rather than being told ENOSYS.
 * init does not finish dying while the namespace still holds a process,
 * and the agent, once seized, is reaped by us, its tracer, first (even
 * when it exited on its own, reporting a failed step): so reap the agent
 * before waiting for init, or both wait for each other forever.
 */
static void spawn_fail(struct spawn *sp)
{
	struct sbx_child *out = sp->out;
	kill(sp->init, SIGKILL);
	if (out->pid > 0)
		kill(out->pid, SIGKILL);
	close_views(sp->views, sp->nviews);
	wd_close(&out->notify_fd);
	wd_close(&out->root_fd);
	if (out->pid > 0)
		reap_traced(out->pid);
	reap(sp->init);
	wd_close(&out->init_pidfd);
	out->pid = 0;
}

int sbx_spawn(const struct sbx_spawn_config *cfg, struct sbx_child *out, char **err)
{
	memset(out, 0, sizeof(*out));
	out->notify_fd = out->pidfd = out->root_fd = out->exit_fd = out->init_pidfd = -1;
	struct spawn sp = {.cfg = cfg, .out = out, .uid = getuid(), .gid = getgid()};
	sp.userns = sbx_needs_userns();
	int sv[2];
	int rc = open_channel(sv, err);
	if (rc < 0)
		return rc;
	rc = plan_views(&sp, err);
	if (rc == 0)
		rc = make_views(&sp, err);
	if (rc < 0) {
		close(sv[0]);
		close(sv[1]);
		return rc;
	}
	make_fast(&sp);
	rc = start_init(&sp, sv, err); /* closes |sv| on failure */
	free(sp.fast);		       /* start_init closed the fds; init has its copies */
	out->fast = sp.fast_ids;
	out->nfast = sp.nfast;
	if (rc < 0) {
		sbx_child_free_fast(out);
		return rc;
	}
	wd_autoclose int sock = sv[0];
	rc = serve_views(&sp, sock, err);
	if (rc == 0)
		rc = attach_agent(&sp, sock, err);
	if (rc == 0)
		rc = agent_handles(&sp, err);
	if (rc < 0) {
		spawn_fail(&sp);
		sbx_child_free_fast(out);
		return rc;
	}
	out->exit_fd = wd_steal_fd(&sock);
	return 0;
}

int sbx_child_exit(int exit_fd, int *status)
{
	struct sbx_msg m = {.fd = -1};
	int rc = sbx_msg_recv(exit_fd, &m);
	if (m.fd >= 0 && rc == 0)
		close(m.fd);
	if (rc == -EAGAIN || rc == -EWOULDBLOCK)
		return -EAGAIN;
	if (rc == 0 && m.type == MSG_EXIT) {
		*status = (int)strtol(m.text, NULL, 10);
		return 0;
	}
	/* init is gone without saying (killed): so is the agent. */
	*status = SIGKILL; /* as waitpid() reports a death by SIGKILL */
	return 0;
}

int sbx_child_gone(struct sbx_child *c, int timeout_ms)
{
	if (c->init_pidfd < 0)
		return -EBADF;
	/*
	 * init is PID 1 of the sandbox's PID namespace: when it dies the
	 * kernel kills every process left there, and init's exit does not
	 * complete (its pidfd does not become readable) until every one of
	 * them has been released. A process we trace is released only once
	 * we reap it, so reap while waiting. Once readable, nothing of the
	 * sandbox runs, and nothing can start there again.
	 */
	syscall(SYS_pidfd_send_signal, c->init_pidfd, SIGKILL, NULL, 0);
	int64_t until = wd_now_mono_ns() + (int64_t)timeout_ms * 1000000;
	int rc = -ETIMEDOUT;
	for (;;) {
		while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
			;
		struct pollfd p = {.fd = c->init_pidfd, .events = POLLIN};
		int n = poll(&p, 1, 10);
		if (n > 0) {
			rc = 0;
			break;
		}
		if (wd_now_mono_ns() >= until)
			break;
	}
	wd_close(&c->init_pidfd);
	return rc;
}

int sbx_landlock_abi(void)
{
	return sbx_jail_landlock_abi();
}
