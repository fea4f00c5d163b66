/*
 * spawn_child.c: the sandbox's side of the set-up: init (PID 1: the
 * mounts, then it forks the agent and only reaps) and the agent (it
 * confines itself, hands its listener over and execs the command). Each
 * step and why: docs/design.md, section "The sandbox: starting it".
 */
#include "spawn_int.h"

#include "common.h"
#include "jail_int.h"
#include "pts_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
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

static void __attribute__((noreturn)) fail(int sock, const char *what, int err)
{
	char text[400];
	snprintf(text, sizeof(text), "%s: %s", what, strerror(err));
	sbx_msg_send(sock, MSG_FAIL, text, -1);
	_exit(125);
}

static void expect(int sock, char type)
{
	struct sbx_msg m;
	if (sbx_msg_recv(sock, &m) < 0 || m.type != type)
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
	if (sbx_msg_send(sock, MSG_HELLO, NULL, -1) < 0)
		_exit(125);
	expect(sock, MSG_GO);
	if (cfg->cwd && chdir(cfg->cwd) < 0)
		fail(sock, cfg->cwd, errno);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail(sock, "prctl(PR_SET_NO_NEW_PRIVS)", errno);
	int abi = 0;
	if (cfg->writable) {
		int rc = sbx_jail_landlock(cfg->writable, &abi);
		if (rc < 0 && rc != -EOPNOTSUPP)
			fail(sock, "applying Landlock", -rc);
	}
	int rc = sbx_jail_drop_caps();
	if (rc < 0)
		fail(sock, "dropping capabilities", -rc);
	int listener = sbx_filter_load_fs(cfg->fs_trap);
	if (listener < 0)
		fail(sock, "installing the seccomp filter", -listener);
	/* The listener's number: the supervisor takes it with pidfd_getfd,
	 * since passing it with sendmsg would be stopped by the filter now. */
	char text[48];
	snprintf(text, sizeof(text), "landlock=%d fd=%d", abi, listener);
	if (sbx_msg_send(sock, MSG_LISTENER, text, -1) < 0)
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
 * -1) for sbx_jail_dev; dies on failure. No fd outlives init's set-up: each is
 * O_CLOEXEC and closed once attached.
 */
static int init_binds(const struct sbx_spawn_config *cfg, int sock)
{
	char what[160];
	int *fds = wd_calloc(cfg->nbinds + 1, sizeof(int));
	for (size_t i = 0; i < cfg->nbinds; i++) {
		fds[i] = sbx_jail_bind_open(cfg->binds[i].src, cfg->binds[i].writable);
		if (fds[i] < 0) {
			snprintf(what, sizeof(what), "opening %s to bind it on %s",
				 cfg->binds[i].src, cfg->binds[i].dst);
			fail(sock, what, -fds[i]);
		}
	}
	int shm = -1;
	if (cfg->shm_dir && (shm = sbx_jail_bind_open(cfg->shm_dir, true)) < 0)
		fail(sock, cfg->shm_dir, -shm);
	for (size_t i = 0; i < cfg->nbinds; i++) {
		int rc = sbx_jail_bind_attach(fds[i], cfg->binds[i].dst, cfg->binds[i].make);
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

/*
 * init's side of the split view: each fast subtree's bind (made and marked
 * by the supervisor) goes over the project view's entry for it, which is
 * reached from the view's root without following a symlink and without
 * leaving the view. Before the seal: the entries looked up now are pinned,
 * so the evictor never detaches a bind.
 *
 * The user's tree keeps changing meanwhile (a `git gc` removes the
 * object directories it packed while warden starts): a subtree whose entry
 * is gone, is no longer a directory, or is another directory than the one
 * the supervisor copied (the view gives the backing inode number, as the
 * detacher checks it in emul_aux.c) is left to the view, and so is one whose
 * entry goes away between the lookup and the attach (the kernel refuses a
 * mount on a removed directory with ENOENT). Such a subtree is then only
 * an unattached mount: nothing in the sandbox can reach it, and a name read
 * on it would be refused (design.md, "Names from a detached mount are not
 * the project's"). Any other failure to attach ends the set-up. Each fd is
 * closed once attached or skipped.
 */
static bool fast_entry_is(int t, dev_t view_dev, int mnt)
{
	struct stat want;
	return fstat(mnt, &want) == 0 && sbx_jail_is_view_dir(t, view_dev, want.st_ino);
}

static void init_fast(int sock, const char *view_dir, struct sbx_fast_slot *fast, size_t nfast)
{
	int root = nfast ? open(view_dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	struct stat rst;
	if (root >= 0 && fstat(root, &rst) < 0)
		fail(sock, "looking at the project view", errno);
	for (size_t i = 0; i < nfast; i++) {
		struct open_how how = {
			.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_XDEV,
		};
		int t = root < 0 ? -1
				 : (int)syscall(SYS_openat2, root, fast[i].rel, &how, sizeof(how));
		if (t >= 0 && fast_entry_is(t, rst.st_dev, fast[i].mnt) &&
		    syscall(SYS_move_mount, fast[i].mnt, "", t, "",
			    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0 &&
		    errno != ENOENT) {
			char what[160];
			snprintf(what, sizeof(what), "attaching the fast subtree %s", fast[i].rel);
			fail(sock, what, errno);
		}
		if (t >= 0)
			close(t);
		close(fast[i].mnt);
	}
	if (root >= 0)
		close(root);
}

/* init's side: attach (or, in a user namespace, mount and send) each view
 * in turn, after the supervisor serves it. */
static void init_views(const struct sbx_spawn_config *cfg, int sock, uid_t uid, gid_t gid,
		       struct sbx_view_slot *v, size_t nv, struct sbx_fast_slot *fast, size_t nfast)
{
	char what[160];
	for (size_t i = 0; i < nv; i++) {
		/* A view under a private directory (a project under /tmp): its
		 * mount point is made there, empty, as the host's is covered. */
		if (under_private(cfg, v[i].dir)) {
			int rc = sbx_jail_make_path(v[i].dir, v[i].type);
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
				snprintf(what, sizeof(what), "attaching %s on %s",
					 sbx_view_slot_what(&v[i]), v[i].dir);
				fail(sock, what, errno);
			}
			close(v[i].mnt);
			if (v[i].kind == VIEW_PROJECT)
				init_fast(sock, v[i].dir, fast, nfast);
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
			snprintf(what, sizeof(what), "mounting %s on %s", sbx_view_slot_what(&v[i]),
				 v[i].dir);
			fail(sock, what, -fd);
		}
		if (sbx_msg_send(sock, MSG_VIEW, NULL, fd) < 0)
			_exit(125);
		close(fd);
		expect(sock, MSG_ACK);
	}
}

/* init's /dev: as root a minimal one of its own; in a user namespace the
 * host's, with a private /dev/pts when the kernel allows it, else an empty
 * one. Either way the agent's own terminal is shown under /dev/pts (pts.c)
 * when it can be; a node that cannot be shown leaves only its name
 * unknown. */
static void init_dev(int sock, int shm, bool userns, struct sbx_jail_pts *pts)
{
	int rc;
	sbx_jail_pts_collect(pts);
	if (!userns) {
		rc = sbx_jail_dev(shm);
		if (rc < 0)
			fail(sock, "setting up /dev", -rc);
		sbx_jail_pts_attach(pts);
		return;
	}
	rc = sbx_jail_pts_private();
	if (rc == 0) {
		sbx_jail_pts_attach(pts);
	} else {
		/* Fail closed. Without a devpts of its own the sandbox would
		 * keep the host's /dev/pts, where every terminal of the user
		 * (the agent has the user's uid) can be opened by name: read
		 * what is typed there, inject input (TIOCSTI where allowed),
		 * write into another session. An empty, read-only tmpfs in
		 * its place leaves the agent no name of a terminal (its own
		 * fds 0-2 still work) and /dev/ptmx opens no new one; the
		 * supervisor says so in one warning line. Mounted by init
		 * before the agent exists, in the sandbox's own mount
		 * namespace, so nothing races it; if even that mount fails,
		 * the start fails. */
		sbx_jail_pts_drop(pts);
		int erc = sbx_jail_pts_empty();
		if (erc < 0)
			fail(sock,
			     "hiding the host's /dev/pts (a devpts of the sandbox's own could "
			     "not be mounted either)",
			     -erc);
		char text[400];
		snprintf(text, sizeof(text),
			 "the sandbox's own /dev/pts could not be mounted (%s): the agent sees an "
			 "empty /dev/pts and cannot open new terminals",
			 strerror(-rc));
		if (sbx_msg_send(sock, MSG_WARN, text, -1) < 0)
			_exit(125);
	}
	if (shm >= 0 && (rc = sbx_jail_bind_attach(shm, "/dev/shm", false)) < 0)
		fail(sock, "binding the private /dev/shm", -rc);
}

void __attribute__((noreturn))
sbx_init_main(const struct sbx_spawn_config *cfg, int sock, uid_t uid, gid_t gid, bool userns,
	      struct sbx_view_slot *views, size_t nviews, struct sbx_fast_slot *fast, size_t nfast)
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
	int rc = sbx_jail_private_mounts();
	if (rc < 0)
		fail(sock, "making mounts private", -rc);
	/* The private /tmp before the views: a project under /tmp is
	 * attached on a mount point in it. */
	int shm = init_binds(cfg, sock);
	init_views(cfg, sock, uid, gid, views, nviews, fast, nfast);
	for (size_t i = 0; cfg->hide && cfg->hide[i]; i++) {
		rc = sbx_jail_hide(cfg->hide[i]);
		if (rc < 0)
			fail(sock, cfg->hide[i], -rc);
	}
	rc = sbx_jail_proc();
	if (rc < 0)
		fail(sock, "mounting /proc", -rc);
	struct sbx_jail_pts pts;
	init_dev(sock, shm, userns, &pts);
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
	/* And the masters that keep the agent's terminal nodes' indices
	 * reserved in the private /dev/pts (pts.c), as fds 4 and on. */
	int from = sbx_jail_pts_keep(&pts, 4);
	if (from < 0)
		_exit(1);
	if (syscall(SYS_close_range, (unsigned)from, ~0U, 0U) < 0)
		for (int fd = from; fd < 1024; fd++)
			close(fd);
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid == agent) {
			char text[16];
			snprintf(text, sizeof(text), "%d", status);
			sbx_msg_send(3, MSG_EXIT, text, -1);
			_exit(0);
		}
		if (pid < 0 && errno == ECHILD)
			_exit(0);
	}
}
