/*
 * spawn.c: starting the agent in its sandbox.
 *
 * Three processes take part; the order matters and each step says why.
 *
 *   supervisor ──clone(NEWNS|NEWPID[|NEWUSER])──▶ init (PID 1 of the sandbox)
 *                                                   │ fork
 *                                                   ▼
 *                                                 agent (PID 2) ──exec──▶ CMD
 *
 * init: makes every mount private (nothing propagates to or from the host),
 *   binds the session's private directories over /tmp and /var/tmp and the
 *   shared places inside them (every source opened before the first bind,
 *   so a bind over /tmp never hides a later source under /tmp),
 *   mounts the FUSE view over the project and hands its fd to the supervisor,
 *   which starts serving it before init goes on; hides the secrets outside
 *   the project; mounts a /proc of the new PID namespace (no /proc/PID of a
 *   process outside is reachable) and, as root, a minimal /dev; binds the
 *   private /dev/shm. Then it forks
 *   the agent and only reaps: when the agent exits, init sends its wait
 *   status on the set-up socket (the agent is not traced between its execs,
 *   so the supervisor learns it there: sbx_child_exit), init exits and the
 *   kernel kills whatever is left in the namespace. init dies with the supervisor
 *   (PDEATHSIG), which ends the namespace too.
 *
 * agent: says hello; the kernel attaches its pid, as the supervisor's
 *   namespace names it, because the supervisor's end has SO_PASSCRED. The
 *   supervisor attaches with PTRACE_SEIZE (exec events, EXITKILL) before
 *   the agent runs any code of the agent's, so that each exec of its own is
 *   checked at its exec event (the supervisor attaches to every other
 *   process at its exec: supervisor/trace.c). If the supervisor dies, for
 *   any reason, init dies with it and the kernel kills the namespace; it
 *   also kills every tracee (EXITKILL). The agent then
 *   re-enters its cwd by path (so that it is inside the view, not in the
 *   directory under it), sets NO_NEW_PRIVS, applies Landlock, drops every
 *   capability, installs the seccomp filter, hands the listener to the
 *   supervisor and waits for an ack, closes every fd above 2 (the socket,
 *   the listener, anything inherited: no descriptor that answers
 *   notifications or reaches the real project survives into the agent) and
 *   execs CMD, which the filter stops as the first request.
 */
#include "sandbox.h"

#include "common.h"
#include "jail_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

enum {
	MSG_VIEW = 'V',	    /* init -> sup: the FUSE fd */
	MSG_HELLO = 'H',    /* agent -> sup: its pid comes with the credentials */
	MSG_LISTENER = 'L', /* agent -> sup: text "landlock=N fd=M", M the listener */
	MSG_GO = 'G',	    /* sup -> agent: attached */
	MSG_ACK = 'A',	    /* sup -> init/agent: go on */
	MSG_FAIL = 'E',	    /* init/agent -> sup: what failed */
	MSG_EXIT = 'X',	    /* init -> sup: the agent's wait status, text "%d" */
};

/* One message: a type byte, optional text, optional fd. */
static int send_msg(int sock, char type, const char *text, int fd)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "%c%s", type, text ? text : "");
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	/* Without a descriptor: send(), which the agent's filter lets
	 * through (sendmsg would wait for the supervisor's loop, which is not
	 * running yet). */
	while (fd < 0) {
		if (send(sock, buf, (size_t)n, MSG_NOSIGNAL) >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
	struct iovec iov = {.iov_base = buf, .iov_len = (size_t)n};
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		msg.msg_control = u.b;
		msg.msg_controllen = sizeof(u.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	for (;;) {
		if (sendmsg(sock, &msg, MSG_NOSIGNAL) >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

struct msg {
	char type;
	char text[512];
	int fd;	   /* received fd (O_CLOEXEC) or -1 */
	pid_t pid; /* the sender's pid in our namespace (SO_PASSCRED) */
};

static int recv_msg(int sock, struct msg *m)
{
	char buf[512];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf) - 1};
	union {
		char b[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.b,
			     .msg_controllen = sizeof(u.b)};
	ssize_t r;
	bool reset = false;
	/* A peer that died with our message unread (init failed before it
	 * read an ack) leaves ECONNRESET pending, reported before what it
	 * sent last (its failure): that error is consumed by reporting it,
	 * so the next read returns the message, or end of file. */
	do {
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (r < 0 && (errno == EINTR || (errno == ECONNRESET && !reset && (reset = true))));
	if (r < 0)
		return -errno;
	if (r == 0)
		return -EPIPE;
	buf[r] = '\0';
	m->type = buf[0];
	snprintf(m->text, sizeof(m->text), "%s", buf + 1);
	m->fd = -1;
	m->pid = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&m->fd, CMSG_DATA(c), sizeof(int));
		else if (c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred cr;
			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			m->pid = cr.pid;
		}
	}
	return 0;
}

/* In init or the agent: report |what| failing with |err|, then die. */
static void __attribute__((noreturn)) fail(int sock, const char *what, int err)
{
	char text[400];
	snprintf(text, sizeof(text), "%s: %s", what, strerror(err));
	send_msg(sock, MSG_FAIL, text, -1);
	_exit(125);
}

static void expect(int sock, char type)
{
	struct msg m;
	if (recv_msg(sock, &m) < 0 || m.type != type)
		_exit(125);
	if (m.fd >= 0)
		close(m.fd);
}

static void default_signals(void)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, text, strlen(text));
		close(fd);
	}
}

static void __attribute__((noreturn)) agent_main(const struct sbx_spawn_config *cfg, int sock)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		fail(sock, "prctl(PR_SET_PDEATHSIG)", errno);
	default_signals();
	if (setpgid(0, 0) < 0)
		fail(sock, "setpgid", errno);
	if (send_msg(sock, MSG_HELLO, NULL, -1) < 0)
		_exit(125);
	expect(sock, MSG_GO);
	if (cfg->cwd && chdir(cfg->cwd) < 0)
		fail(sock, cfg->cwd, errno);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail(sock, "prctl(PR_SET_NO_NEW_PRIVS)", errno);
	int abi = 0;
	if (cfg->writable) {
		int rc = jail_landlock(cfg->writable, &abi);
		if (rc < 0 && rc != -EOPNOTSUPP)
			fail(sock, "applying Landlock", -rc);
	}
	int rc = jail_drop_caps();
	if (rc < 0)
		fail(sock, "dropping capabilities", -rc);
	int listener = sbx_filter_load();
	if (listener < 0)
		fail(sock, "installing the seccomp filter", -listener);
	/* The listener's number: the supervisor takes it with pidfd_getfd,
	 * since passing it with sendmsg would be stopped by the filter now. */
	char text[48];
	snprintf(text, sizeof(text), "landlock=%d fd=%d", abi, listener);
	if (send_msg(sock, MSG_LISTENER, text, -1) < 0)
		_exit(125);
	expect(sock, MSG_ACK);
	close(listener);
	if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
		for (int fd = 3; fd < 65536; fd++)
			close(fd);
	if (cfg->nofile_soft) {
		/* The supervisor's raised limit is its own, not the agent's. */
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && cfg->nofile_soft <= rl.rlim_max) {
			rl.rlim_cur = cfg->nofile_soft;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	execve(cfg->path, cfg->argv, cfg->envp);
	dprintf(STDERR_FILENO, "warden: cannot execute %s: %s\n", cfg->path, strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/*
 * The FUSE views the sandbox mounts, in this order: the markers views
 * (outermost first: the user's home), the project's (when cfg->view_dir is
 * set), then one per gated place. The project and gated places usually lie
 * inside a markers view: each is mounted over the entry the markers view
 * serves for it, so it must come after. As root the supervisor makes each
 * mount (mnt) and keeps its FUSE fd; in a user namespace init mounts each
 * and sends the fd.
 */
enum view_kind { VIEW_MARKERS, VIEW_PROJECT, VIEW_GATE };

struct view_slot {
	const char *dir;
	mode_t type; /* S_IFDIR, or S_IFREG for a gated file */
	enum view_kind kind;
	size_t index; /* in cfg->marker_dirs or cfg->gate_dirs */
	int mnt, fuse;
};

static const char *view_what(const struct view_slot *v)
{
	switch (v->kind) {
	case VIEW_PROJECT:
		return "the project view";
	case VIEW_MARKERS:
		return "a markers view";
	case VIEW_GATE:
	default:
		return "a gated place's view";
	}
}

/* Whether |path| lies strictly under one of the private directories. */
static bool under_private(const struct sbx_spawn_config *cfg, const char *path)
{
	for (size_t i = 0; cfg->private_dirs && cfg->private_dirs[i]; i++)
		if (strcmp(path, cfg->private_dirs[i]) != 0 &&
		    wd_path_within(path, cfg->private_dirs[i]))
			return true;
	return false;
}

/*
 * init's side of the private temporary directories and what is shared in
 * them. Every source is opened first, as a detached copy of its mount
 * tree, while the host's /tmp is still what the paths name; only then is
 * anything attached, in the supervisor's order (the private directories,
 * then the shared places, parents first). Returns the /dev/shm copy (or
 * -1) for jail_dev; dies on failure. No fd outlives init's set-up: each is
 * O_CLOEXEC and closed once attached.
 */
static int init_binds(const struct sbx_spawn_config *cfg, int sock)
{
	char what[160];
	int *fds = wd_calloc(cfg->nbinds + 1, sizeof(int));
	for (size_t i = 0; i < cfg->nbinds; i++) {
		fds[i] = jail_bind_open(cfg->binds[i].src, cfg->binds[i].writable);
		if (fds[i] < 0) {
			snprintf(what, sizeof(what), "opening %s to bind it on %s",
				 cfg->binds[i].src, cfg->binds[i].dst);
			fail(sock, what, -fds[i]);
		}
	}
	int shm = -1;
	if (cfg->shm_dir && (shm = jail_bind_open(cfg->shm_dir, true)) < 0)
		fail(sock, cfg->shm_dir, -shm);
	for (size_t i = 0; i < cfg->nbinds; i++) {
		int rc = jail_bind_attach(fds[i], cfg->binds[i].dst, cfg->binds[i].make);
		if (rc < 0) {
			snprintf(what, sizeof(what), "binding %s on %s", cfg->binds[i].src,
				 cfg->binds[i].dst);
			fail(sock, what, -rc);
		}
		close(fds[i]);
	}
	free(fds);
	return shm;
}

/* init's side: attach (or, in a user namespace, mount and send) each view
 * in turn, after the supervisor serves it. */
static void init_views(const struct sbx_spawn_config *cfg, int sock, uid_t uid, gid_t gid,
		       struct view_slot *v, size_t nv)
{
	char what[160];
	for (size_t i = 0; i < nv; i++) {
		/* A view under a private directory (a project under /tmp): its
		 * mount point is made there, empty, as the host's is covered. */
		if (under_private(cfg, v[i].dir)) {
			int rc = jail_make_path(v[i].dir, v[i].type);
			if (rc < 0) {
				snprintf(what, sizeof(what), "making the mount point %s", v[i].dir);
				fail(sock, what, -rc);
			}
		}
		if (v[i].mnt >= 0) {
			/* The supervisor made the mount and serves it already. */
			expect(sock, MSG_ACK);
			/* A gated place that is a symlink: the view covers what
			 * it names, as the supervisor opened it. */
			if (syscall(SYS_move_mount, v[i].mnt, "", AT_FDCWD, v[i].dir,
				    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_SYMLINKS) < 0) {
				snprintf(what, sizeof(what), "attaching %s on %s", view_what(&v[i]),
					 v[i].dir);
				fail(sock, what, errno);
			}
			close(v[i].mnt);
			continue;
		}
		/* In a user namespace only this side can mount. */
		int fd = sbx_fuse_mount_type(v[i].dir, uid, gid, v[i].type);
		if (fd < 0 && access(SBX_FUSE_DEV, R_OK | W_OK) < 0)
			fail(sock,
			     "opening /dev/fuse for the project view (an unprivileged user "
			     "needs it mode 0666, as Debian's fuse3 package makes it; or run "
			     "as root, or with --no-view)",
			     errno);
		if (fd < 0) {
			snprintf(what, sizeof(what), "mounting %s on %s", view_what(&v[i]),
				 v[i].dir);
			fail(sock, what, -fd);
		}
		if (send_msg(sock, MSG_VIEW, NULL, fd) < 0)
			_exit(125);
		close(fd);
		expect(sock, MSG_ACK);
	}
}

static void __attribute__((noreturn))
init_main(const struct sbx_spawn_config *cfg, int sock, uid_t uid, gid_t gid, bool userns,
	  struct view_slot *views, size_t nviews)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		fail(sock, "prctl(PR_SET_PDEATHSIG)", errno);
	default_signals();
	/* init must outlive the agent's terminal games; only the supervisor
	 * (SIGKILL through PDEATHSIG) ends it early. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	if (userns) {
		char map[64];
		write_file("/proc/self/setgroups", "deny");
		snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
		write_file("/proc/self/uid_map", map);
		snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
		write_file("/proc/self/gid_map", map);
	}
	int rc = jail_private_mounts();
	if (rc < 0)
		fail(sock, "making mounts private", -rc);
	/* The private /tmp before the views: a project under /tmp is
	 * attached on a mount point in it. */
	int shm = init_binds(cfg, sock);
	init_views(cfg, sock, uid, gid, views, nviews);
	for (size_t i = 0; cfg->hide && cfg->hide[i]; i++) {
		rc = jail_hide(cfg->hide[i]);
		if (rc < 0)
			fail(sock, cfg->hide[i], -rc);
	}
	rc = jail_proc();
	if (rc < 0)
		fail(sock, "mounting /proc", -rc);
	if (!userns) {
		rc = jail_dev(shm);
		if (rc < 0)
			fail(sock, "setting up /dev", -rc);
	} else if (shm >= 0 && (rc = jail_bind_attach(shm, "/dev/shm", false)) < 0) {
		fail(sock, "binding the private /dev/shm", -rc);
	}
	if (shm >= 0)
		close(shm);
	/* init's working directory was the supervisor's, a directory of the
	 * host's now covered (by the view, or the private /tmp): leave it, so
	 * that no process of the sandbox keeps a way under the covers. */
	if (chdir("/") < 0)
		fail(sock, "chdir /", errno);
	pid_t agent = fork();
	if (agent < 0)
		fail(sock, "fork", errno);
	if (agent == 0)
		agent_main(cfg, sock);
	/* init keeps only the socket, as fd 3: the agent is not traced for
	 * its whole life, so its wait status reaches the supervisor from here
	 * (sbx_child_exit). */
	if (sock != 3 && dup2(sock, 3) < 0)
		_exit(1);
	if (syscall(SYS_close_range, 4U, ~0U, 0U) < 0)
		for (int fd = 4; fd < 1024; fd++)
			close(fd);
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid == agent) {
			char text[16];
			snprintf(text, sizeof(text), "%d", status);
			send_msg(3, MSG_EXIT, text, -1);
			_exit(0);
		}
		if (pid < 0 && errno == ECHILD)
			_exit(0);
	}
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

static void close_views(struct view_slot *v, size_t n)
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
static int next(int sock, char type, struct msg *m, char **err)
{
	int rc = recv_msg(sock, m);
	if (rc == 0 && m->type == type)
		return 0;
	if (rc == 0 && m->type == MSG_FAIL)
		*err = wd_asprintf("the sandbox could not be set up: %s", m->text);
	else
		*err = wd_asprintf("the sandbox exited during set-up%s%s", rc < 0 ? ": " : "",
				   rc < 0 ? strerror(-rc) : "");
	if (m->fd >= 0 && rc == 0)
		close(m->fd);
	return -EPERM;
}

int sbx_spawn(const struct sbx_spawn_config *cfg, struct sbx_child *out, char **err)
{
	int sv[2];
	*err = NULL;
	memset(out, 0, sizeof(*out));
	out->notify_fd = out->pidfd = out->root_fd = out->exit_fd = out->init_pidfd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		*err = wd_asprintf("socketpair: %s", strerror(errno));
		return -errno;
	}
	int one = 1;
	setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	/* A bound on set-up: a sandbox stuck before exec is a failure. */
	struct timeval tv = {.tv_sec = 30};
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	uid_t uid = getuid();
	gid_t gid = getgid();
	bool userns = sbx_needs_userns();
	long flags = sbx_clone_flags() | SIGCHLD;
	struct view_slot views[SBX_MAX_VIEWS];
	size_t nviews = 0;
	size_t nmarkers = 0, ngates = 0;
	while (cfg->marker_dirs && cfg->marker_dirs[nmarkers])
		nmarkers++;
	while (cfg->gate_dirs && cfg->gate_dirs[ngates])
		ngates++;
	if (nmarkers + ngates + (cfg->view_dir ? 1 : 0) > SBX_MAX_VIEWS) {
		close(sv[0]);
		close(sv[1]);
		*err = wd_asprintf("more than %d views", SBX_MAX_VIEWS);
		return -E2BIG;
	}
	for (size_t i = 0; i < nmarkers; i++)
		views[nviews++] =
			(struct view_slot){cfg->marker_dirs[i], S_IFDIR, VIEW_MARKERS, i, -1, -1};
	if (cfg->view_dir)
		views[nviews++] =
			(struct view_slot){cfg->view_dir, S_IFDIR, VIEW_PROJECT, 0, -1, -1};
	for (size_t i = 0; i < ngates; i++) {
		struct stat st;
		mode_t type = stat(cfg->gate_dirs[i], &st) == 0 && S_ISREG(st.st_mode) ? S_IFREG
										       : S_IFDIR;
		views[nviews++] = (struct view_slot){cfg->gate_dirs[i], type, VIEW_GATE, i, -1, -1};
	}
	/* Made in any order (attached in slot order): the project's first,
	 * so that a machine without FUSE is told about the view it knows. */
	for (size_t j = 0; j < nviews && !userns; j++) {
		size_t i = j == 0 ? nmarkers : j <= nmarkers ? j - 1 : j;
		if (!cfg->view_dir)
			i = j;
		views[i].mnt = make_fuse_mount(views[i].type, &views[i].fuse);
		if (views[i].mnt < 0) {
			int e = -views[i].mnt;
			views[i].mnt = -1;
			close_views(views, nviews);
			close(sv[0]);
			close(sv[1]);
			*err = wd_asprintf("cannot create %s (FUSE mount: %s); warden doctor says "
					   "what is missing",
					   view_what(&views[i]), strerror(e));
			return -e;
		}
	}
	out->view_pids_host = !userns;
	pid_t init = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	if (init < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		close_views(views, nviews);
		*err = wd_asprintf("cannot create the sandbox's namespaces (clone: %s); warden "
				   "doctor says what is missing",
				   strerror(e));
		return -e;
	}
	if (init == 0) {
		close(sv[0]);
		for (size_t i = 0; i < nviews; i++)
			if (views[i].fuse >= 0)
				close(views[i].fuse); /* the sandbox never holds the FUSE device */
		init_main(cfg, sv[1], uid, gid, userns, views, nviews);
	}
	close(sv[1]);
	for (size_t i = 0; i < nviews; i++)
		wd_close(&views[i].mnt);
	wd_autoclose int sock = sv[0];
	out->init_pid = init;
	/* Our child, not reaped before this returns: the pidfd names it. */
	out->init_pidfd = (int)syscall(SYS_pidfd_open, init, 0);
	/* On failure below, FUSE fds not yet handed to a server are closed. */
	struct msg m;
	int rc;
	for (size_t i = 0; i < nviews; i++) {
		if (views[i].fuse < 0) {
			if ((rc = next(sock, MSG_VIEW, &m, err)) < 0)
				goto fail;
			views[i].fuse = m.fd;
		}
		/* Serve before init attaches it: nothing can wait on an
		 * unserved mount. */
		int fd = wd_steal_fd(&views[i].fuse);
		size_t k = views[i].index;
		switch (views[i].kind) {
		case VIEW_PROJECT:
			rc = cfg->on_view(cfg->on_view_arg, fd);
			break;
		case VIEW_MARKERS:
			rc = cfg->on_markers(cfg->on_view_arg, k, fd);
			break;
		case VIEW_GATE:
		default:
			rc = cfg->on_gate(cfg->on_view_arg, k, fd);
			break;
		}
		if (rc < 0) {
			*err = wd_asprintf("%s could not be served: %s",
					   views[i].kind == VIEW_PROJECT ? "the project view"
									 : views[i].dir,
					   strerror(-rc));
			goto fail;
		}
		send_msg(sock, MSG_ACK, NULL, -1);
	}
	if ((rc = next(sock, MSG_HELLO, &m, err)) < 0)
		goto fail;
	pid_t agent = m.pid;
	if (agent <= 0 || ptrace(PTRACE_SEIZE, agent, 0, SBX_TRACE_EXEC) < 0) {
		rc = -errno;
		*err = wd_asprintf("cannot trace the agent (ptrace: %s); check "
				   "/proc/sys/kernel/yama/ptrace_scope (must be 0, 1 or 2)",
				   strerror(errno));
		goto fail;
	}
	out->pid = agent;
	send_msg(sock, MSG_GO, NULL, -1);
	/* The agent is traced now: a stop it hits (a signal) would wait for
	 * our loop, but nothing signals it before it execs; the receive
	 * timeout bounds the wait regardless. */
	if ((rc = next(sock, MSG_LISTENER, &m, err)) < 0)
		goto fail;
	int lfd = -1;
	sscanf(m.text, "landlock=%d fd=%d", &out->landlock_abi, &lfd);
	{
		wd_autoclose int apidfd = (int)syscall(SYS_pidfd_open, agent, 0);
		out->notify_fd =
			apidfd < 0 || lfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, apidfd, lfd, 0);
	}
	if (out->notify_fd < 0) {
		rc = -errno;
		*err = wd_asprintf("pidfd_open/pidfd_getfd of the agent's seccomp listener: %s",
				   strerror(errno));
		goto fail;
	}
	send_msg(sock, MSG_ACK, NULL, -1);
	/* The agent's root is every sandboxed process's: chroot, pivot_root,
	 * setns, unshare and mount are refused by the filter. (Were it not,
	 * a path resolved elsewhere would only fail the exec check.) */
	char rootp[64];
	snprintf(rootp, sizeof(rootp), "/proc/%d/root", agent);
	out->root_fd = open(rootp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (out->root_fd < 0) {
		rc = -errno;
		*err = wd_asprintf("%s: %s", rootp, strerror(errno));
		goto fail;
	}
	out->pidfd = (int)syscall(SYS_pidfd_open, agent, 0);
	if (out->pidfd < 0) {
		rc = -errno;
		*err = wd_asprintf("pidfd_open: %s%s", strerror(errno),
				   errno == ENOSYS ? " (warden needs Linux 5.6 or later)" : "");
		goto fail;
	}
	if (cfg->take_terminal && isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp()) {
		/* Like a shell starting a foreground job. SIGTTOU is ignored
		 * by the caller while the supervisor changes the foreground. */
		if (tcsetpgrp(STDIN_FILENO, agent) == 0)
			out->has_terminal = true;
	}
	out->exit_fd = wd_steal_fd(&sock);
	return 0;
fail:
	/* PID 1 gone: the kernel kills the whole namespace. Killed before the
	 * listener is closed, so that an agent already in its exec dies there
	 * rather than being told ENOSYS. init does not finish dying while the
	 * namespace still holds a process, and the agent, once seized, is
	 * reaped by us, its tracer, first (even when it exited on its own,
	 * reporting a failed step): so reap the agent before waiting for init,
	 * or both wait for each other forever. */
	kill(init, SIGKILL);
	if (out->pid > 0)
		kill(out->pid, SIGKILL);
	close_views(views, nviews);
	wd_close(&out->notify_fd);
	wd_close(&out->root_fd);
	if (out->pid > 0)
		reap_traced(out->pid);
	reap(init);
	wd_close(&out->init_pidfd);
	out->pid = 0;
	return rc < 0 ? rc : -EPERM;
}

int sbx_child_exit(int exit_fd, int *status)
{
	struct msg m = {.fd = -1};
	int rc = recv_msg(exit_fd, &m);
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
	return jail_landlock_abi();
}
