/*
 * guard.c: the guardian of the split view's fanotify group.
 *
 * The kernel answers every pending permission event of a fanotify group
 * with "allow" when the LAST descriptor of the group is closed
 * (fanotify_release). If the supervisor, which holds the group and answers
 * its events, died while an agent's open of a sensitive file waited for a
 * decision, that open would go through. The guardian is a small process,
 * forked by the supervisor, that holds a second descriptor of the group and
 * never reads or answers it: while it lives, the group cannot be released.
 * When the supervisor dies it kills the sandbox's init, waits until init has
 * exited (which the kernel completes only after every task of the
 * sandbox's PID namespace is gone, each pending open failing as its task is
 * killed: the wait for a permission answer is killable), and only then
 * exits, closing the last descriptor when nothing can be waiting any more.
 * On a normal stop it exits at once.
 *
 * It does not decide anything, does not read the group, and is not in the
 * sandbox's PID namespace: the agent can neither see nor signal it. Design:
 * docs/design.md, section on the project view.
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The byte that asks the guardian to exit without touching the sandbox. */
#define GUARD_STOP 's'
/* The signal the kernel sends the guardian when the supervisor's main
 * thread exits (PR_SET_PDEATHSIG). Blocked, read from a signalfd, and
 * believed only when getppid() confirms it: anyone may send it. */
#define GUARD_DEATH_SIG SIGUSR1

/* The guardian's descriptors once it has set itself up. */
enum { GUARD_GROUP = 0, GUARD_INIT = 1, GUARD_CTL = 2 };

static long raw(long nr, long a, long b, long c, long d)
{
	return syscall(nr, a, b, c, d, 0L, 0L);
}

static __attribute__((noreturn)) void guard_exit(int code)
{
	for (;;)
		raw(SYS_exit_group, code, 0, 0, 0);
}

/*
 * The supervisor is gone (or let go of the control pipe without asking to
 * stop): kill the sandbox and wait until every task of it is gone before
 * the group can be released.
 *
 * init's pidfd becomes readable only once init is a zombie, and init's
 * exit first kills every task of its PID namespace and waits until each
 * has been released (zap_pid_ns_processes). The supervisor's death broke
 * its ptrace links (tasks traced with PTRACE_O_EXITKILL are killed by it),
 * closed the FUSE devices (aborting any FUSE request a task waits on) and
 * the seccomp listener (failing any notification): nothing can keep a task
 * of the sandbox alive, so this wait ends. The guardian holds none of
 * those descriptors (close_range in guard_main), or it could keep one
 * alive and wait on itself.
 */
static __attribute__((noreturn)) void guard_fail_closed(void)
{
	raw(SYS_pidfd_send_signal, GUARD_INIT, SIGKILL, 0, 0);
	for (;;) {
		struct pollfd p = {.fd = GUARD_INIT, .events = POLLIN};
		long n = raw(SYS_ppoll, (long)&p, 1, 0, 0);
		if (n > 0)
			break; /* readable (or POLLERR/POLLHUP: no such process) */
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			break; /* cannot wait: the init pidfd itself is broken */
	}
	guard_exit(0);
}

/*
 * The guardian's body, in the child of a fork of a possibly multi-threaded
 * supervisor: only raw system calls from here on (a lock another thread of
 * the supervisor held at the fork stays held in this copy for ever, and
 * an atfork handler never ran). Every signal is blocked since before the
 * fork (sbx_guard_start), so no handler inherited from the supervisor can
 * run here either.
 */
static __attribute__((noreturn)) void guard_main(int group_fd, int init_pidfd, int rd, pid_t parent)
{
	/*
	 * Keep exactly three descriptors: the group, init's pidfd and the
	 * read end of the control pipe, as 0, 1 and 2. Copies >= 3 first (so
	 * that moving one onto 0-2 cannot close another of them), then
	 * everything else is closed: the supervisor's terminal, its FUSE
	 * devices, its seccomp listener, the database, the write end of the
	 * control pipe (or EOF would never come), sockets. The supervisor's
	 * descriptors are all O_CLOEXEC, but the guardian does not exec: the
	 * close is what keeps them from living on here.
	 */
	int src[3] = {group_fd, init_pidfd, rd};
	int tmp[3];
	for (int i = 0; i < 3; i++) {
		tmp[i] = (int)raw(SYS_fcntl, src[i], F_DUPFD, 3, 0);
		if (tmp[i] < 0)
			guard_exit(127);
	}
	for (int i = 0; i < 3; i++)
		if (raw(SYS_dup3, tmp[i], i, 0, 0) < 0)
			guard_exit(127);
	if (raw(SYS_close_range, 3, ~0U, 0, 0) < 0)
		guard_exit(127);
	/* Hold no directory of the host's either: its cwd could pin a mount. */
	raw(SYS_chdir, (long)"/", 0, 0, 0);
	/* A session of its own: a signal to the supervisor's process group
	 * (the terminal's ^C, a `kill -9 -PGID`) must not take the guardian
	 * down with the supervisor, or the group would close with both. */
	raw(SYS_setsid, 0, 0, 0, 0);

	/*
	 * The death signal fires when the thread that forked us exits (the
	 * supervisor's main thread). Set before checking the parent: if the
	 * supervisor died before the prctl, we have been reparented already
	 * and getppid() says so; if it dies after, the signal comes.
	 */
	uint64_t mask = 1ULL << (GUARD_DEATH_SIG - 1);
	int sfd = (int)raw(SYS_signalfd4, -1, (long)&mask, sizeof(mask), O_CLOEXEC);
	if (sfd < 0 || raw(SYS_prctl, PR_SET_PDEATHSIG, GUARD_DEATH_SIG, 0, 0) < 0)
		guard_fail_closed();
	if (raw(SYS_getppid, 0, 0, 0, 0) != parent)
		guard_fail_closed();

	for (;;) {
		struct pollfd p[2] = {
			{.fd = GUARD_CTL, .events = POLLIN},
			{.fd = sfd, .events = POLLIN},
		};
		long n = raw(SYS_ppoll, (long)p, 2, 0, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			guard_fail_closed();
		}
		if (p[0].revents) {
			char b;
			long r = raw(SYS_read, GUARD_CTL, (long)&b, 1, 0);
			if (r == 1 && b == GUARD_STOP)
				guard_exit(0);
			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			/* EOF without the stop byte: every write end is closed,
			 * the supervisor's last with it. Any other byte: not
			 * ours to believe. */
			guard_fail_closed();
		}
		if (p[1].revents) {
			char si[128];
			raw(SYS_read, sfd, (long)si, sizeof(si), 0);
			/* Sent by the kernel at the supervisor's death, or by
			 * someone else: only a changed parent means death. */
			if (raw(SYS_getppid, 0, 0, 0, 0) != parent)
				guard_fail_closed();
		}
	}
}

int sbx_guard_start(int group_fd, int init_pidfd, int *ctl_fd, pid_t *pid)
{
	if (group_fd < 0 || init_pidfd < 0)
		return -EBADF;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t parent = getpid();
	/*
	 * Block every signal across the fork: the child starts with them
	 * blocked, so no handler of the supervisor's runs in it before it has
	 * shed everything (guard_main). A raw clone, not fork(): no atfork
	 * handler runs, in the parent or the child.
	 */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t c = (pid_t)syscall(SYS_clone, (long)SIGCHLD, NULL, NULL, NULL, NULL);
	if (c == 0)
		guard_main(group_fd, init_pidfd, p[0], parent);
	int e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	if (c < 0) {
		close(p[1]);
		return -e;
	}
	/*
	 * The write end stays with the caller only (O_CLOEXEC: a program the
	 * supervisor execs never holds it). A child the supervisor forks
	 * without exec holds a copy for a while and delays the EOF, which is
	 * why the guardian also has the death signal.
	 */
	*ctl_fd = p[1];
	*pid = c;
	return 0;
}

void sbx_guard_stop(int ctl_fd, pid_t pid)
{
	if (ctl_fd >= 0) {
		char b = GUARD_STOP;
		while (write(ctl_fd, &b, 1) < 0 && errno == EINTR)
			;
		close(ctl_fd);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}
