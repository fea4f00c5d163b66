/*
 * exec_floor: what the exec path's mechanisms cost with no decision at all,
 * so that warden's own cost can be told from the kernel's on this machine.
 * Runs COMMAND (argv) under a seccomp filter whose only rule sends execve
 * and execveat to a listener, and a supervisor that answers every
 * notification at once with SECCOMP_USER_NOTIF_FLAG_CONTINUE:
 *
 *   exec_floor notify  CMD...  the round trip only
 *   exec_floor ptrace  CMD...  the round trip, and each exec seized before
 *                              the answer, stopped at its exec event and
 *                              detached, as warden checks an exec
 *   exec_floor sync    CMD...  as notify, with SECCOMP_USER_NOTIF_FD_SYNC_
 *                              WAKE_UP on the listener
 *
 * Prints "execs=N" on stderr when CMD exits, and exits with CMD's status.
 * bench/README.md says how the figures are used.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* execve and execveat to the listener, everything else allowed (x86_64
 * only: this is a measurement, not a boundary). */
static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			    &prog);
}

/* Reaps whatever stopped or ended; detaches an exec event. Returns the
 * command's status once |cmd| has exited, else -1. */
static int reap(pid_t cmd)
{
	int st, done = -1;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
		if (WIFSTOPPED(st)) {
			int sig = WSTOPSIG(st);
			bool event = (st >> 16) != 0 || sig == SIGTRAP;
			ptrace(PTRACE_DETACH, p, NULL, event ? 0 : sig);
		} else if (p == cmd) {
			done = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
	}
	return done;
}

int main(int argc, char **argv)
{
	if (argc < 3 ||
	    (strcmp(argv[1], "notify") && strcmp(argv[1], "ptrace") && strcmp(argv[1], "sync"))) {
		fprintf(stderr, "usage: exec_floor notify|ptrace|sync COMMAND [ARG...]\n");
		return 2;
	}
	bool trace = strcmp(argv[1], "ptrace") == 0;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 1;
	pid_t cmd = fork();
	if (cmd < 0)
		return 1;
	if (cmd == 0) {
		close(sv[0]);
		int lfd = install_filter();
		if (lfd < 0 || write(sv[1], &lfd, sizeof(lfd)) != sizeof(lfd))
			_exit(126);
		char go;
		if (read(sv[1], &go, 1) != 1)
			_exit(126);
		close(lfd);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	close(sv[1]);
	int lfd = -1;
	if (read(sv[0], &lfd, sizeof(lfd)) != sizeof(lfd) || lfd < 0)
		return 1;
	int pidfd = (int)syscall(SYS_pidfd_open, cmd, 0);
	int nfd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, lfd, 0);
	if (nfd < 0) {
		perror("exec_floor: pidfd_getfd");
		return 1;
	}
	if (strcmp(argv[1], "sync") == 0 &&
	    ioctl(nfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0)
		perror("exec_floor: SYNC_WAKE_UP");
	if (write(sv[0], "g", 1) != 1)
		return 1;
	/* SIGCHLD wakes poll() for the tracer's stops and the command's exit. */
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sfd = (int)syscall(SYS_signalfd4, -1, &chld, 8, 0);
	long execs = 0;
	int status = -1;
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	while (status < 0) {
		struct pollfd p[2] = {{.fd = nfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return 1;
		if (p[1].revents & POLLIN) {
			char buf[128 * 8];
			(void)!read(sfd, buf, sizeof(buf));
			status = reap(cmd);
		}
		if (!(p[0].revents & POLLIN))
			continue;
		memset(&req, 0, sizeof(req));
		if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			continue;
		if (trace)
			ptrace(PTRACE_SEIZE, req.pid, NULL, PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL);
		resp = (struct seccomp_notif_resp){.id = req.id,
						   .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
		if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0)
			execs++;
	}
	fprintf(stderr, "execs=%ld\n", execs);
	return status;
}
