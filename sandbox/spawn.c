/*
 * spawn.c: starting the agent under warden's filter and ptrace.
 *
 * The order matters, and each step says why:
 *  1. fork; the child blocks on a socket until the parent is ready.
 *  2. The parent attaches with PTRACE_SEIZE (fork, vfork, clone and exec
 *     events, EXITKILL) before the child runs any of the agent's code: from
 *     then on every descendant is traced from its first instruction, and if
 *     the supervisor dies, for any reason, the kernel kills every tracee.
 *  3. The child sets NO_NEW_PRIVS (no setuid gain, and required to install
 *     a filter unprivileged) and a parent-death signal, installs the filter
 *     and sends the listener to the parent, then waits for an ack so that it
 *     never execs before the supervisor holds the listener.
 *  4. The child closes every fd above 2 (the socket, the listener and
 *     anything inherited from warden's caller): no descriptor that answers
 *     notifications or reaches warden's state survives into the agent.
 *  5. execve: the filter stops it, and the supervisor decides it as the
 *     agent's start-up.
 */
#include "sandbox.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

enum { MSG_GO = 'G', MSG_ACK = 'A', MSG_FAIL = 'E' };

/* In the child: report |what| failing with errno to the parent, then die.
 * The parent turns it into "could not start" (exit 125). */
static void __attribute__((noreturn)) child_fail(int sock, const char *what, int err)
{
	char msg[512];
	int n = snprintf(msg, sizeof(msg), "%c%s: %s", MSG_FAIL, what, strerror(err));
	(void)!send(sock, msg, (size_t)n, MSG_NOSIGNAL);
	_exit(125);
}

static char child_wait(int sock)
{
	char c = 0;
	ssize_t r;
	do {
		r = recv(sock, &c, 1, 0);
	} while (r < 0 && errno == EINTR);
	return r == 1 ? c : 0;
}

static void __attribute__((noreturn))
child_main(const struct sbx_spawn_config *cfg, int sock, pid_t parent)
{
	/* Die with the supervisor: EXITKILL covers the whole tree once
	 * attached; this covers the window before the attach. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(sock, "prctl(PR_SET_PDEATHSIG)", errno);
	if (getppid() != parent)
		_exit(125);
	/* Default signal state for the agent: the supervisor blocks signals
	 * for its signalfd, and a blocked mask is inherited across exec. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	if (setpgid(0, 0) < 0 && errno != EPERM)
		child_fail(sock, "setpgid", errno);

	if (child_wait(sock) != MSG_GO)
		_exit(125);
	if (cfg->cwd && chdir(cfg->cwd) < 0)
		child_fail(sock, cfg->cwd, errno);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(sock, "prctl(PR_SET_NO_NEW_PRIVS)", errno);
	int listener = sbx_filter_load();
	if (listener < 0)
		child_fail(sock, "installing the seccomp filter", -listener);
	int rc = wd_send_fd(sock, listener);
	if (rc < 0)
		child_fail(sock, "handing the listener to the supervisor", -rc);
	close(listener);
	if (child_wait(sock) != MSG_ACK)
		_exit(125);
	/* Nothing above stderr survives into the agent (see the file header). */
	if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0) {
		for (int fd = 3; fd < 65536; fd++)
			close(fd);
	}
	execve(cfg->path, cfg->argv, cfg->envp);
	/* The socket is gone: say it on stderr. The parent knows the agent
	 * never started because it saw no exec event. */
	dprintf(STDERR_FILENO, "warden: cannot execute %s: %s\n", cfg->path, strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

static int read_child_error(int sock, char **err)
{
	char buf[512];
	ssize_t r = recv(sock, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (r > 1 && buf[0] == MSG_FAIL) {
		buf[r] = '\0';
		*err = wd_asprintf("the sandbox could not be set up: %s", buf + 1);
		return -EPERM;
	}
	*err = wd_strdup("the sandbox child exited during set-up");
	return -ECHILD;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

int sbx_spawn(const struct sbx_spawn_config *cfg, struct sbx_child *out, char **err)
{
	int sv[2];
	*err = NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		*err = wd_asprintf("socketpair: %s", strerror(errno));
		return -errno;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		*err = wd_asprintf("fork: %s", strerror(e));
		return -e;
	}
	if (pid == 0) {
		close(sv[0]);
		child_main(cfg, sv[1], parent);
	}
	close(sv[1]);
	wd_autoclose int sock = sv[0];
	setpgid(pid, pid); /* both sides, so neither order races */

	long opts = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
	if (ptrace(PTRACE_SEIZE, pid, 0, opts) < 0) {
		int e = errno;
		reap(pid);
		*err = wd_asprintf("cannot trace the agent (ptrace: %s); check "
				   "/proc/sys/kernel/yama/ptrace_scope (must be 0, 1 or 2)",
				   strerror(e));
		return -e;
	}
	char go = MSG_GO;
	if (send(sock, &go, 1, MSG_NOSIGNAL) != 1) {
		int e = errno;
		reap(pid);
		*err = wd_asprintf("cannot talk to the sandbox child: %s", strerror(e));
		return -e;
	}
	/* The child is traced: a ptrace stop (it may get a signal) does not
	 * block the socket, and recv returns when it sends or dies. */
	int listener = wd_recv_fd(sock);
	if (listener < 0) {
		int rc = read_child_error(sock, err);
		reap(pid);
		return rc;
	}
	char ack = MSG_ACK;
	if (send(sock, &ack, 1, MSG_NOSIGNAL) != 1) {
		int e = errno;
		close(listener);
		reap(pid);
		*err = wd_asprintf("cannot talk to the sandbox child: %s", strerror(e));
		return -e;
	}
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		int e = errno;
		close(listener);
		reap(pid);
		*err = wd_asprintf("pidfd_open: %s (warden needs Linux 5.3 or later)", strerror(e));
		return -e;
	}
	out->pid = pid;
	out->notify_fd = listener;
	out->pidfd = pidfd;
	out->has_terminal = false;
	if (cfg->take_terminal && isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp()) {
		/* Like a shell starting a foreground job. SIGTTOU is ignored
		 * by the caller while the supervisor changes the foreground. */
		if (tcsetpgrp(STDIN_FILENO, pid) == 0)
			out->has_terminal = true;
	}
	return 0;
}
