/*
 * test_sbx_guard.c: the guardian of the split view's fanotify group
 * (sandbox/guard.c), without the rest of the split view.
 *
 * A "supervisor" process (a child of the test, in a mount namespace of its
 * own) makes a FAN_CLASS_CONTENT group with a FAN_OPEN_PERM mark on a
 * private bind mount, and an "init" in a new PID namespace whose child
 * ("agent") opens a file on that mount. The supervisor reads the event and
 * never answers it; the test SIGKILLs the supervisor. With the guardian,
 * the open must never succeed and the agent must be gone before the
 * guardian exits; without it, the kernel allows the open as the group
 * closes (which shows the test can fail). The test process is a child
 * subreaper, so init and the guardian become its children when the
 * supervisor dies. Runs as root; skips otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"

#define ITERATIONS 20

static char g_dir[64];
static char g_file[96];

/* What the supervisor tells the test once the agent's open waits. */
struct report {
	pid_t init, agent, guard;
	int err; /* > 0: the supervisor failed at step |err| */
};

enum mode { WITH_GUARD, NO_GUARD, STOP_GUARD, DROP_PIPE };

static int pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static bool readable(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, ms) > 0;
}

static __attribute__((noreturn)) void sup_fail(int rep, int step)
{
	struct report r = {.err = step};
	(void)!write(rep, &r, sizeof(r));
	_exit(1);
}

/* init of the sandbox's PID namespace: forks the agent, which opens the
 * marked file once told to and writes "O" to |res| if the open succeeded;
 * then reaps for ever. */
static __attribute__((noreturn)) void init_main(int go, int res)
{
	pid_t a = fork();
	if (a == 0) {
		char b;
		if (read(go, &b, 1) != 1)
			_exit(2);
		int fd = open(g_file, O_RDONLY);
		if (fd >= 0)
			(void)!write(res, "O", 1);
		_exit(0);
	}
	close(res);
	close(go);
	for (;;)
		if (wait(NULL) < 0 && errno == ECHILD)
			pause();
}

/* The "supervisor": holds the group, never answers it. */
static __attribute__((noreturn)) void supervisor_main(enum mode m, int rep, int res)
{
	if (unshare(CLONE_NEWNS) < 0)
		sup_fail(rep, 1);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(g_dir, g_dir, NULL, MS_BIND, NULL) < 0)
		sup_fail(rep, 2);
	int go[2];
	if (pipe(go) < 0)
		sup_fail(rep, 3);
	pid_t init = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
	if (init < 0)
		sup_fail(rep, 4);
	if (init == 0) {
		close(go[1]);
		close(rep);
		init_main(go[0], res);
	}
	close(go[0]);
	close(res);
	int pidfd = pidfd_open(init);
	/* Made after init: neither init nor the agent holds a copy. */
	int grp = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY);
	if (pidfd < 0 || grp < 0)
		sup_fail(rep, 5);
	if (fanotify_mark(grp, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_PERM, AT_FDCWD, g_dir) < 0)
		sup_fail(rep, 6);
	struct report r = {.init = init};
	int ctl = -1;
	if (m != NO_GUARD && sbx_guard_start(grp, pidfd, &ctl, &r.guard) < 0)
		sup_fail(rep, 7);
	if (m == STOP_GUARD || m == DROP_PIPE) {
		if (m == STOP_GUARD)
			sbx_guard_stop(ctl, r.guard); /* reaps it */
		else
			close(ctl);
		(void)!write(rep, &r, sizeof(r));
		for (;;)
			pause();
	}
	if (write(go[1], "g", 1) != 1)
		sup_fail(rep, 8);
	/* Read the open's event (as the listener would) and never answer. */
	for (;;) {
		char buf[4096] __attribute__((aligned(8)));
		ssize_t n = read(grp, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < (ssize_t)sizeof(struct fanotify_event_metadata))
			sup_fail(rep, 9);
		const struct fanotify_event_metadata *md = (const void *)buf;
		if (md->mask & FAN_OPEN_PERM) {
			r.agent = md->pid;
			break;
		}
	}
	(void)!write(rep, &r, sizeof(r));
	for (;;)
		pause();
}

struct run {
	pid_t sup;
	struct report r;
	int res;
	int init_fd;
};

static void start(enum mode m, struct run *run)
{
	int rep[2], res[2];
	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	assert_int_equal(pipe2(res, O_CLOEXEC), 0);
	pid_t s = fork();
	assert_true(s >= 0);
	if (s == 0) {
		close(rep[0]);
		close(res[0]);
		supervisor_main(m, rep[1], res[1]);
	}
	close(rep[1]);
	close(res[1]);
	run->sup = s;
	run->res = res[0];
	assert_true(readable(rep[0], 10000));
	assert_int_equal(read(rep[0], &run->r, sizeof(run->r)), (ssize_t)sizeof(run->r));
	close(rep[0]);
	assert_int_equal(run->r.err, 0);
	run->init_fd = pidfd_open(run->r.init);
	assert_true(run->init_fd >= 0);
}

/* Kills whatever of the run is left and reaps it (init and the guardian
 * are the test's children once the supervisor is gone). */
static void finish(struct run *run)
{
	kill(run->sup, SIGKILL);
	syscall(SYS_pidfd_send_signal, run->init_fd, SIGKILL, NULL, 0);
	if (run->r.guard > 0)
		kill(run->r.guard, SIGKILL);
	/* Only this run's children: a run a failed assertion left behind
	 * must not make this one wait for ever. */
	waitpid(run->sup, NULL, 0);
	waitpid(run->r.init, NULL, 0);
	if (run->r.guard > 0)
		waitpid(run->r.guard, NULL, 0);
	close(run->init_fd);
	close(run->res);
}

/* Whether the agent wrote "O" (its open succeeded) before its end. */
static bool agent_opened(int res)
{
	char b = 0;
	if (!readable(res, 10000))
		fail_msg("the agent neither opened nor died within 10 s");
	return read(res, &b, 1) == 1 && b == 'O';
}

static int count_fds(pid_t pid, bool *kinds_ok)
{
	char path[64], link[128], p[320];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	bool grp = false, pidfd = false, pipe = false;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		ssize_t k = readlink(p, link, sizeof(link) - 1);
		link[k > 0 ? k : 0] = '\0';
		int fd = atoi(e->d_name);
		grp |= fd == 0 && strcmp(link, "anon_inode:[fanotify]") == 0;
		pidfd |= fd == 1 && strstr(link, "pidfd") != NULL;
		pipe |= fd == 2 && strncmp(link, "pipe:", 5) == 0;
	}
	closedir(d);
	*kinds_ok = grp && pidfd && pipe;
	return n;
}

/* The guardian keeps the group, init's pidfd, the control pipe and its
 * signalfd: nothing else of the supervisor's (the agent's result pipe the
 * supervisor held at the fork included). */
static void assert_guard_holds_only_its_own(pid_t guard)
{
	bool kinds = false;
	int n = -1;
	for (int i = 0; i < 200 && n != 4; i++) {
		n = count_fds(guard, &kinds);
		if (n != 4)
			usleep(5000);
	}
	assert_int_equal(n, 4);
	assert_true(kinds);
	assert_int_not_equal(getsid(guard), getsid(0));
}

static void test_guard_open_never_allowed_on_supervisor_death(void **state)
{
	(void)state;
	for (int i = 0; i < ITERATIONS; i++) {
		struct run run;
		start(WITH_GUARD, &run);
		assert_true(run.r.agent > 0 && run.r.guard > 0);
		if (i == 0)
			assert_guard_holds_only_its_own(run.r.guard);
		int agent_fd = pidfd_open(run.r.agent);
		assert_true(agent_fd >= 0);
		assert_int_equal(kill(run.sup, SIGKILL), 0);
		assert_int_equal(waitpid(run.sup, NULL, 0), run.sup);
		/* The guardian is the test's child now: its exit comes only
		 * after the agent and init are gone. */
		int st = -1;
		assert_int_equal(waitpid(run.r.guard, &st, 0), run.r.guard);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		assert_true(readable(agent_fd, 0));
		assert_true(readable(run.init_fd, 0));
		run.r.guard = 0;
		assert_false(agent_opened(run.res));
		close(agent_fd);
		finish(&run);
	}
}

/* The same without the guardian: the supervisor's death releases the group
 * and the kernel allows the waiting open. */
static void test_guard_absent_open_allowed(void **state)
{
	(void)state;
	for (int i = 0; i < 5; i++) {
		struct run run;
		start(NO_GUARD, &run);
		assert_int_equal(kill(run.sup, SIGKILL), 0);
		assert_true(agent_opened(run.res));
		assert_false(readable(run.init_fd, 0)); /* nobody killed init */
		finish(&run);
	}
}

/* A normal stop: the guardian exits at once, reaped by the supervisor, and
 * the sandbox goes on. */
static void test_guard_stop_leaves_sandbox(void **state)
{
	(void)state;
	struct run run;
	start(STOP_GUARD, &run);
	assert_int_equal(kill(run.r.guard, 0), -1); /* reaped by sbx_guard_stop */
	assert_false(readable(run.init_fd, 200));
	run.r.guard = 0;
	finish(&run);
}

/* The control pipe's EOF without the stop byte (the supervisor dropped it)
 * kills the sandbox; a stray death signal while the supervisor lives does
 * not. */
static void test_guard_eof_kills_stray_signal_does_not(void **state)
{
	(void)state;
	struct run run;
	start(DROP_PIPE, &run);
	assert_true(readable(run.init_fd, 10000));
	finish(&run);

	start(WITH_GUARD, &run);
	assert_int_equal(kill(run.r.guard, SIGUSR1), 0);
	assert_false(readable(run.init_fd, 300));
	assert_int_equal(kill(run.r.guard, 0), 0);
	finish(&run);
}

static int setup(void **state)
{
	(void)state;
	snprintf(g_dir, sizeof(g_dir), "/tmp/wd-guard-XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	snprintf(g_file, sizeof(g_file), "%s/secret", g_dir);
	int fd = open(g_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	unlink(g_file);
	rmdir(g_dir);
	return 0;
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: fanotify permission events need root\n");
		return 77;
	}
	int g = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY);
	if (g < 0) {
		fprintf(stderr, "skipped: fanotify_init(FAN_CLASS_CONTENT): %s\n", strerror(errno));
		return 77;
	}
	close(g);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guard_open_never_allowed_on_supervisor_death),
		cmocka_unit_test(test_guard_absent_open_allowed),
		cmocka_unit_test(test_guard_stop_leaves_sandbox),
		cmocka_unit_test(test_guard_eof_kills_stray_signal_does_not),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
