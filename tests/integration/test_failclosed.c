/*
 * test_failclosed: warden fails closed when its own machinery fails. Each
 * test breaks one piece for real, with no hook inside warden: the audit's
 * disk fills up mid-run, the seccomp filter or the project view cannot be
 * set up (a seccomp filter or a mount namespace the test puts around
 * warden), the audit cannot be opened, the judge cannot be reached. What
 * must hold every time: nothing runs without its audit row and without a
 * decision, and warden says on stderr what failed.
 *
 * Runs as root (mounts, filters without NO_NEW_PRIVS); skipped otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef PTRACE_SEIZE
#define PTRACE_SEIZE 0x4206
#endif

struct fx {
	char *proj;    /* the project */
	char *db;      /* its default audit */
	char *marker;  /* created by the agent only if it ran */
	char *scratch; /* /tmp directory of the test's own (fifos, mount points) */
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	f->marker = wd_asprintf("%s/AGENT-RAN", f->proj);
	f->scratch = wt_project();
	wt_write(f->proj, "README.md", "# a project\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	/* The audit test's tmpfs, if it failed before unmounting it. */
	char *disk = wd_asprintf("%s/disk", f->scratch);
	umount2(disk, MNT_DETACH);
	free(disk);
	wt_rmtree(f->proj);
	wt_rmtree(f->scratch);
	free(f->proj);
	free(f->db);
	free(f->marker);
	free(f->scratch);
	free(f);
	return 0;
}

/* ---- running warden inside something the test set up ------------------ */

/* Runs in the child between fork and exec of warden; 0 or -errno. */

/* wt_wardenv_prep() bounded to a minute (a warden that hangs instead of
 * failing is a failure too), saying what it printed unless it exited 125. */
static void run_prepared(const char *cwd, char *const argv[], wt_prep_fn prep, const void *arg,
			 struct wt_result *res)
{
	wt_wardenv_prep(cwd, argv, prep, arg, 60000, res);
	if (res->status != 125)
		print_message("warden exited %d\nstdout:\n%s\nstderr:\n%s\n", res->status, res->out,
			      res->err);
}

/* A mount namespace of the caller's own, nothing propagating out. */
static int private_mounts(void)
{
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	return 0;
}

/* The agent every "nothing may start" test asks for: if any of it ran,
 * stdout says so and the marker exists. */
static void agent_argv(const struct fx *f, char *script, size_t n, char **argv, const char *audit)
{
	snprintf(script, n, "echo AGENT-RAN; touch %s", f->marker);
	size_t k = 0;
	argv[k++] = "run";
	argv[k++] = "--tier";
	argv[k++] = "aggressive"; /* whatever starts is allowed: only set-up stops it */
	if (audit) {
		argv[k++] = "--audit";
		argv[k++] = (char *)audit;
	}
	argv[k++] = "--";
	argv[k++] = "/bin/sh";
	argv[k++] = "-c";
	argv[k++] = script;
	argv[k] = NULL;
}

static void assert_nothing_ran(const struct fx *f, const struct wt_result *r)
{
	assert_int_equal(r->status, 125);
	assert_null(strstr(r->out, "AGENT-RAN"));
	assert_int_not_equal(access(f->marker, F_OK), 0);
}

static void require_root(void)
{
	if (geteuid() != 0)
		skip(); /* mounts and filters without NO_NEW_PRIVS need root */
}

/* ---- 1. the audit fails mid-run --------------------------------------- */

/*
 * The test and the agent keep in step through two fifos in /tmp, which the
 * test holds open read-write for the whole run: the agent's opens (sh's
 * `echo > fifo`, `read < fifo`) then never wait for a partner, and only the
 * reads wait, for a line.
 */

/* Waits until the agent has written |want| to |fifo|. False after |ms| or
 * when warden is gone. */
static bool wait_line(int fifo, const struct wt_bg *bg, const char *want, int ms)
{
	struct wd_sb sb = {0};
	bool found = false;
	int64_t until = wd_now_mono_ns() + (int64_t)ms * 1000000;
	while (!found && wd_now_mono_ns() < until) {
		struct pollfd p = {.fd = fifo, .events = POLLIN};
		char buf[64];
		ssize_t r = poll(&p, 1, 100) > 0 ? read(fifo, buf, sizeof(buf)) : 0;
		if (r > 0) {
			wd_sb_add(&sb, buf, (size_t)r);
			found = strstr(sb.buf, want) != NULL;
			continue;
		}
		siginfo_t si = {0};
		if (waitid(P_PID, (id_t)bg->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == bg->pid)
			break; /* warden has exited (wt_bg_wait reaps it) */
	}
	if (!found)
		print_message("waited for \"%s\", read \"%s\"\n", want, sb.buf ? sb.buf : "");
	free(sb.buf);
	return found;
}

/* Hands the agent, reading a line from |fifo|, the line |line|. */
static bool send_line(int fifo, const char *line)
{
	size_t n = strlen(line);
	return write(fifo, line, n) == (ssize_t)n;
}

/* Writes zeros to |path| until its filesystem is full; returns the errno
 * that stopped it (ENOSPC when it is full). */
static int fill_up(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	static char zeros[16384];
	int e = 0;
	for (;;) {
		ssize_t w = write(fd, zeros, sizeof(zeros));
		if (w < 0) {
			e = errno;
			break;
		}
	}
	/* Down to the last bytes of a page. */
	while (write(fd, zeros, 1) == 1)
		;
	close(fd);
	return e;
}

/*
 * Provokes: the audit's filesystem (a 1 MiB tmpfs in a mount namespace of
 * this test process, the audit given with --audit) fills up while the
 * agent runs, so that no row can be committed any more (SQLite: SQLITE_FULL
 * on the WAL append). The audit is outside the project, so the agent cannot
 * see it: the test fills the disk itself, in step with the agent through
 * two fifos.
 *
 * Why it must fail closed: "no operation runs without its row". A command
 * the aggressive tier would allow (touch) and one the fast path would allow
 * (ls) must both be refused (EACCES: sh says 126) while no row can be
 * written, and say so on the agent's stderr; the marker file touch would
 * create must not exist. A sensitive open the tier would allow (sh reading
 * .env through the view) is refused the same way: the secret is not
 * printed. warden refuses each such request and goes on (it
 * does not end the session): once there is room again, the next command
 * is decided, audited and runs. Its exit status stays the agent's own
 * (README, "Exit codes"); the summary line at exit says how many rows
 * were lost.
 */
static void test_failclosed_audit_full_mid_run_refuses(void **state)
{
	struct fx *f = *state;
	require_root();
	/* This process keeps its own mount namespace from here on: the tmpfs
	 * never shows on the host, and warden (a child) inherits it. */
	assert_int_equal(private_mounts(), 0);
	char *disk = wd_asprintf("%s/disk", f->scratch);
	assert_int_equal(mkdir(disk, 0700), 0);
	assert_int_equal(mount("warden-test-audit", disk, "tmpfs", MS_NOSUID | MS_NODEV,
			       "size=1m,mode=0700"),
			 0);
	char *audit = wd_asprintf("%s/audit.db", disk);
	char *filler = wd_asprintf("%s/filler", disk);
	char *ready = wd_asprintf("%s/ready", f->scratch);
	char *go = wd_asprintf("%s/go", f->scratch);
	assert_int_equal(mkfifo(ready, 0600), 0);
	assert_int_equal(mkfifo(go, 0600), 0);
	int ready_fd = open(ready, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	int go_fd = open(go, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	assert_true(ready_fd >= 0 && go_fd >= 0);

	/* sh's builtins (echo, read, redirections) exec nothing: only the
	 * commands below are requests. */
	char *script = wd_asprintf("ls README.md\n"
				   "touch before; echo before=$?\n"
				   "echo ready1 > %s\n"
				   "read x < %s; echo got=$x\n"
				   "touch after-full; echo after-full=$?\n"
				   "ls README.md; echo ls-full=$?\n"
				   "(read v < .env && echo \"secret=$v\"); echo env-full=$?\n"
				   "echo ready2 > %s\n"
				   "read x < %s; echo got=$x\n"
				   "touch after-freed; echo after-freed=$?\n"
				   "exit 3\n",
				   ready, go, ready, go);
	wt_write(f->proj, "agent.sh", script);
	wt_write(f->proj, ".env", "TOKEN=s3cr3t-4711\n");
	/* The fifos are the test's, under the host's /tmp: shared with the
	 * session's private /tmp (read-only, which a fifo's opens ignore). */
	char *cfg = wd_asprintf("{\"tmp\": {\"share\": [\"%s\"]}}\n", f->scratch);
	wt_write(f->proj, ".warden/permissions.json", cfg);
	free(cfg);
	char *argv[] = {"run", "--tier",  "aggressive", "--audit", audit,
			"--",  "/bin/sh", "agent.sh",	NULL};
	struct wt_bg bg;
	wt_warden_bg(f->proj, argv, &bg);

	/* Round 1: the allowed commands ran; now fill the disk. */
	bool first = wait_line(ready_fd, &bg, "ready1\n", 30000);
	int fill_err = first ? fill_up(filler) : 0;
	struct statvfs vfs;
	assert_int_equal(statvfs(disk, &vfs), 0);
	bool full = vfs.f_bavail == 0;
	bool went = first && send_line(go_fd, "go1\n");
	/* Round 2: the refused commands are done; make room again. */
	bool second = went && wait_line(ready_fd, &bg, "ready2\n", 30000);
	unlink(filler);
	bool went2 = second && send_line(go_fd, "go2\n");
	struct wt_result r;
	bool exited = wt_bg_wait(&bg, 60000, &r);
	close(ready_fd);
	close(go_fd);
	print_message("stdout:\n%sstderr:\n%s", r.out, r.err);
	assert_true(first);
	assert_int_equal(fill_err, ENOSPC);
	assert_true(full);
	assert_true(went);
	assert_true(second);
	assert_true(went2);
	assert_true(exited);

	/* warden ended with the agent: its own status, not 125. */
	assert_int_equal(r.status, 3);
	/* Before: allowed, ran. While full: refused (EACCES), did not run. */
	assert_non_null(strstr(r.out, "before=0\ngot=go1\n"));
	assert_non_null(strstr(r.out, "got=go2\nafter-freed="));
	assert_non_null(strstr(r.out, "after-full=126\n"));
	assert_non_null(strstr(r.out, "ls-full=126\n"));
	char *before = wd_asprintf("%s/before", f->proj);
	char *after_full = wd_asprintf("%s/after-full", f->proj);
	char *after_freed = wd_asprintf("%s/after-freed", f->proj);
	assert_int_equal(access(before, F_OK), 0);
	assert_int_not_equal(access(after_full, F_OK), 0);
	/* The agent was told why, and so was the person. */
	assert_non_null(strstr(r.err, "warden: refused exec of \"touch after-full\": the audit "
				      "could not be written"));
	assert_non_null(strstr(r.err, "warden: refused exec of \"ls README.md\": the audit "
				      "could not be written"));
	assert_non_null(strstr(r.err, "the audit row for \"touch after-full\" could not be "
				      "written (No space left on device): refused"));
	/* A sensitive open through the view (sh's own open: no exec) too. */
	assert_null(strstr(r.out, "s3cr3t-4711"));
	assert_non_null(strstr(r.out, "env-full="));
	assert_null(strstr(r.out, "env-full=0\n"));
	assert_non_null(strstr(r.err, "warden: refused \"read .env\": the audit could not be "
				      "written"));
	assert_non_null(strstr(r.err, "3 audit rows could not be written; those requests were "
				      "refused"));
	/* Room again: the session went on, decided and audited the next one. */
	assert_non_null(strstr(r.out, "after-freed=0\n"));
	assert_int_equal(access(after_freed, F_OK), 0);

	/* The audit has a row for everything that ran and nothing else. */
	assert_int_equal(wt_audit_count(audit, "allow", "startup", "/bin/sh agent.sh", NULL), 1);
	assert_int_equal(wt_audit_count(audit, "allow", "fast_path", "=ls README.md", NULL), 1);
	assert_int_equal(wt_audit_count(audit, "allow", "tier", "=touch before", NULL), 1);
	assert_int_equal(wt_audit_count(audit, NULL, NULL, "touch after-full", NULL), 0);
	assert_int_equal(wt_audit_count(audit, "allow", "tier", "=touch after-freed", NULL), 1);
	assert_int_equal(wt_audit_rows(audit), 4);

	wt_result_free(&r);
	assert_int_equal(umount2(disk, MNT_DETACH), 0);
	free(before);
	free(after_full);
	free(after_freed);
	free(script);
	free(go);
	free(ready);
	free(filler);
	free(audit);
	free(disk);
}

/* ---- 2. the sandbox cannot be set up ---------------------------------- */

/* One syscall made to fail, for warden and everything it starts. */
struct sys_fault {
	const char *what; /* for the failure message */
	const char *syscall;
	int err;
	int arg;	     /* -1: any arguments; else argument |arg| ... */
	uint64_t mask, want; /* ... masked with |mask| equals |want| */
	const char *says[2]; /* what warden's stderr must name */
};

static int install_fault(const void *arg)
{
	const struct sys_fault *sf = arg;
	int nr = seccomp_syscall_resolve_name(sf->syscall);
	if (nr == __NR_SCMP_ERROR)
		return -ENOSYS;
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	/* Root needs no NO_NEW_PRIVS for a filter; warden sets it itself
	 * for the agent, and must not find it set on itself. */
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc == 0 && sf->arg < 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(sf->err), nr, 0);
	else if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(sf->err), nr, 1,
				      (struct scmp_arg_cmp){(unsigned)sf->arg, SCMP_CMP_MASKED_EQ,
							    sf->mask, sf->want});
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

static const struct sys_fault sys_faults[] = {
	/* warden's filter asks for a listener: refused as if a filter
	 * before it (a container's) forbade it. */
	{.what = "seccomp listener refused",
	 .syscall = "seccomp",
	 .err = EPERM,
	 .arg = 1,
	 .mask = SECCOMP_FILTER_FLAG_NEW_LISTENER,
	 .want = SECCOMP_FILTER_FLAG_NEW_LISTENER,
	 .says = {"installing the seccomp filter", "not permitted"}},
	/* No seccomp(2) at all (libseccomp then knows no user notify). */
	{.what = "no seccomp syscall",
	 .syscall = "seccomp",
	 .err = ENOSYS,
	 .arg = -1,
	 .says = {"installing the seccomp filter"}},
	/* The view: the supervisor cannot create the FUSE mount ... */
	{.what = "fsopen refused",
	 .syscall = "fsopen",
	 .err = EPERM,
	 .arg = -1,
	 .says = {"cannot create the project view", "FUSE mount: Operation not permitted"}},
	/* ... or init cannot attach it over the project (the view is
	 * already served then: the failure path stops it). The first view
	 * attached is the home's markers view when there is one; with the
	 * source tree under /tmp, the bind that shares it comes first (the
	 * same flags), and either way the message names what and where. */
	{.what = "move_mount refused",
	 .syscall = "move_mount",
	 .err = EPERM,
	 .arg = 4,
	 .mask = 0xffffffffu,
	 .want = MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_SYMLINKS,
	 .says = {" on /", "not permitted"}},
	/* ... or init cannot bind the session's private /tmp (before the
	 * view is attached: a project under /tmp needs its mount point). */
	{.what = "move_mount of the private /tmp refused",
	 .syscall = "move_mount",
	 .err = EPERM,
	 .arg = 4,
	 .mask = 0xffffffffu,
	 .want = MOVE_MOUNT_F_EMPTY_PATH,
	 .says = {"on /tmp", "not permitted"}},
	/* The mount namespace cannot be made private. */
	{.what = "mount refused",
	 .syscall = "mount",
	 .err = EPERM,
	 .arg = -1,
	 .says = {"making mounts private", "not permitted"}},
	/* The supervisor cannot trace the agent (PTRACE_ATTACH, which
	 * LeakSanitizer uses at exit, still works). */
	{.what = "PTRACE_SEIZE refused",
	 .syscall = "ptrace",
	 .err = EPERM,
	 .arg = 0,
	 .mask = 0xffffffffu,
	 .want = PTRACE_SEIZE,
	 .says = {"cannot trace the agent", "not permitted"}},
	/* The supervisor cannot watch the agent (after the listener was
	 * handed over and acknowledged: the agent is about to exec). */
	{.what = "pidfd_open refused",
	 .syscall = "pidfd_open",
	 .err = EPERM,
	 .arg = -1,
	 .says = {"pidfd_open", "not permitted"}},
};

/*
 * Provokes: one syscall warden needs to build the sandbox fails, through a
 * seccomp filter the test installs before starting warden (it binds warden,
 * the sandbox's init and the agent's process alike): the seccomp listener,
 * the FUSE mount of the view, attaching the view, private mounts, ptrace,
 * pidfd_open.
 *
 * Why it must fail closed: without the filter no exec is decided, without
 * the view no sensitive open is; a sandbox missing any piece must not run
 * the agent at all. warden exits 125 ("could not start the agent: nothing
 * ran"), names the step that failed, the agent's command never runs, and
 * the audit has the session but no decision. (A step failing in the agent
 * after it was traced, as the seccomp ones do, once hung warden for good:
 * it waited for init, which waited for the agent only warden could reap.)
 */
static void test_failclosed_sandbox_setup_failure_exits_125(void **state)
{
	struct fx *f = *state;
	require_root();
	char script[512];
	char *argv[12];
	agent_argv(f, script, sizeof(script), argv, NULL);
	for (size_t i = 0; i < WD_ARRAY_SIZE(sys_faults); i++) {
		const struct sys_fault *sf = &sys_faults[i];
		struct wt_result r;
		run_prepared(f->proj, argv, install_fault, sf, &r);
		print_message("fault: %s: exit %d\n%s", sf->what, r.status, r.err);
		assert_nothing_ran(f, &r);
		for (size_t k = 0; k < 2 && sf->says[k]; k++)
			if (!strstr(r.err, sf->says[k]))
				fail_msg("%s: stderr does not say \"%s\":\n%s", sf->what,
					 sf->says[k], r.err);
		assert_non_null(strstr(r.err, "warden: "));
		/* The session began; no decision was made, so nothing ran. */
		assert_int_equal(wt_audit_rows(f->db), 0);
		wt_result_free(&r);
	}
}

/*
 * Provokes: every fast subtree of the split view is gone when init attaches
 * it: move_mount answers ENOENT, the kernel's answer when the view's entry
 * was removed between init's lookup and the attach (a user's `git gc`
 * removing the object directories it has just packed while warden
 * starts).
 *
 * Why the session must still start, and why that does not fail open: a
 * subtree left unattached is served by the project view, which decides
 * every open in it as in any FUSE directory; the mount left behind is
 * attached nowhere in the sandbox. The agent runs (exit 0), no mount is
 * on the subtree in its namespace, it reads the subtree's file and writes
 * a new one through the view. Any other failure to attach a fast subtree
 * still ends the start-up: the same attach refused with EPERM exits 125,
 * names the subtree, and nothing ran.
 */
static void test_failclosed_fast_subtree_gone_at_attach_left_to_view(void **state)
{
	struct fx *f = *state;
	require_root();
	wt_write(f->proj, "sub/a.txt", "content of a\n");
	/* init's attach of a fast subtree (the views' and /tmp's flags differ). */
	struct sys_fault fault = {
		.what = "fast subtree gone at attach",
		.syscall = "move_mount",
		.err = ENOENT,
		.arg = 4,
		.mask = 0xffffffffu,
		.want = MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
	};
	char *script = wd_asprintf("cat sub/a.txt; echo new > sub/b.txt && echo wrote;"
				   " echo mounts=$(grep -c ' %s/sub ' /proc/self/mountinfo);"
				   " touch %s",
				   f->proj, f->marker);
	char *argv[] = {"run", "--view=split", "--tier", "aggressive", "--stats",
			"--",  "/bin/sh",      "-c",	 script,       NULL};
	struct wt_result r;
	run_prepared(f->proj, argv, install_fault, &fault, &r);
	print_message("stdout:\n%s\nstderr:\n%s\n", r.out, r.err);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "content of a\n"));
	assert_non_null(strstr(r.out, "wrote\n"));
	assert_non_null(strstr(r.out, "mounts=0\n"));
	assert_non_null(strstr(r.err, "split view: 0 fast subtrees"));
	assert_non_null(strstr(r.err, "(and 1 fast subtrees gone or replaced during start-up)"));
	assert_int_equal(access(f->marker, F_OK), 0);
	char *b = wd_asprintf("%s/sub/b.txt", f->proj);
	assert_int_equal(access(b, F_OK), 0);
	free(b);
	wt_result_free(&r);
	unlink(f->marker);

	fault.what = "fast subtree attach refused";
	fault.err = EPERM;
	run_prepared(f->proj, argv, install_fault, &fault, &r);
	assert_nothing_ran(f, &r);
	assert_non_null(strstr(r.err, "attaching the fast subtree sub: Operation not permitted"));
	wt_result_free(&r);
	free(script);
}

/* /dev/fuse made useless in a mount namespace of warden's own. */
enum fuse_break { FUSE_IS_DEV_NULL, FUSE_ON_NODEV };

static int break_fuse(const void *arg)
{
	enum fuse_break how = *(const enum fuse_break *)arg;
	int rc = private_mounts();
	if (rc < 0)
		return rc;
	if (how == FUSE_IS_DEV_NULL)
		return mount("/dev/null", "/dev/fuse", NULL, MS_BIND, NULL) < 0 ? -errno : 0;
	/* The device node itself on a nodev mount: open() says EACCES. */
	if (mount("/dev/fuse", "/dev/fuse", NULL, MS_BIND, NULL) < 0)
		return -errno;
	if (mount(NULL, "/dev/fuse", NULL, MS_BIND | MS_REMOUNT | MS_NODEV, NULL) < 0)
		return -errno;
	return 0;
}

/*
 * Provokes: /dev/fuse is /dev/null (a bind mount), or cannot be opened at
 * all (on a nodev mount), in a mount namespace the test puts warden in.
 *
 * Why it must fail closed: the view is what decides sensitive opens in the
 * project. Without it the agent must not start (only --no-view, asked for,
 * runs without it): exit 125, the view named, nothing ran.
 */
static void test_failclosed_no_fuse_exits_125(void **state)
{
	struct fx *f = *state;
	require_root();
	char script[512];
	char *argv[12];
	agent_argv(f, script, sizeof(script), argv, NULL);
	static const enum fuse_break hows[] = {FUSE_IS_DEV_NULL, FUSE_ON_NODEV};
	for (size_t i = 0; i < WD_ARRAY_SIZE(hows); i++) {
		struct wt_result r;
		run_prepared(f->proj, argv, break_fuse, &hows[i], &r);
		assert_nothing_ran(f, &r);
		assert_non_null(strstr(r.err, "cannot create the project view (FUSE mount: "));
		assert_int_equal(wt_audit_rows(f->db), 0);
		wt_result_free(&r);
	}
}

/* ---- the audit cannot be opened at start ------------------------------ */

/* |dir| made read-only in a mount namespace of warden's own. */
static int read_only_dir(const void *arg)
{
	const char *dir = arg;
	int rc = private_mounts();
	if (rc < 0)
		return rc;
	if (mount(dir, dir, NULL, MS_BIND, NULL) < 0)
		return -errno;
	if (mount(NULL, dir, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0)
		return -errno;
	return 0;
}

/*
 * Provokes: the audit cannot be opened when warden starts: its directory
 * is a regular file, the path is a directory, or it is on a read-only
 * mount (fresh, and with an audit an earlier run wrote there).
 *
 * Why it must fail closed: no row could be written for anything the agent
 * did, so nothing may start: exit 125, the audit's path named on stderr,
 * the agent's command never ran.
 */
static void test_failclosed_audit_unopenable_exits_125(void **state)
{
	struct fx *f = *state;
	require_root();
	char script[512];
	char *argv[12];
	/* Its parent is a regular file. */
	char *file = wd_asprintf("%s/not-a-dir", f->scratch);
	wt_write(f->scratch, "not-a-dir", "a file\n");
	char *under_file = wd_asprintf("%s/audit.db", file);
	agent_argv(f, script, sizeof(script), argv, under_file);
	struct wt_result r;
	run_prepared(f->proj, argv, NULL, NULL, &r);
	assert_nothing_ran(f, &r);
	assert_non_null(strstr(r.err, file));
	assert_non_null(strstr(r.err, "Not a directory"));
	wt_result_free(&r);

	/* The path is a directory. */
	char *dir = wd_asprintf("%s/a-dir", f->scratch);
	assert_int_equal(mkdir(dir, 0700), 0);
	agent_argv(f, script, sizeof(script), argv, dir);
	run_prepared(f->proj, argv, NULL, NULL, &r);
	assert_nothing_ran(f, &r);
	assert_non_null(strstr(r.err, dir));
	wt_result_free(&r);

	/* A read-only mount, no audit there yet. */
	char *ro = wd_asprintf("%s/ro", f->scratch);
	char *ro_db = wd_asprintf("%s/audit.db", ro);
	assert_int_equal(mkdir(ro, 0700), 0);
	agent_argv(f, script, sizeof(script), argv, ro_db);
	run_prepared(f->proj, argv, read_only_dir, ro, &r);
	assert_nothing_ran(f, &r);
	assert_non_null(strstr(r.err, ro_db));
	assert_non_null(strstr(r.err, "Read-only file system"));
	assert_int_not_equal(access(ro_db, F_OK), 0);
	wt_result_free(&r);

	/* A read-only mount holding an audit from an earlier run: it is
	 * readable, but no row could be added. */
	char *ok_argv[] = {"run", "--audit", ro_db, "--", "/bin/true", NULL};
	wt_wardenv(f->proj, ok_argv, &r);
	assert_int_equal(r.status, 0);
	wt_result_free(&r);
	int rows = wt_audit_rows(ro_db);
	assert_int_equal(rows, 1); /* /bin/true's start-up */
	run_prepared(f->proj, argv, read_only_dir, ro, &r);
	assert_nothing_ran(f, &r);
	assert_non_null(strstr(r.err, ro_db));
	assert_int_equal(wt_audit_rows(ro_db), rows);
	wt_result_free(&r);

	free(ro_db);
	free(ro);
	free(dir);
	free(under_file);
	free(file);
}

/* ---- 3. the judge cannot be reached ----------------------------------- */

/* A TCP port on 127.0.0.1 nothing listens on (just closed). */
static int closed_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
	close(s);
	return ntohs(a.sin_port);
}

/*
 * Provokes: a judge is configured, but its URL is a closed port on
 * 127.0.0.1 (connection refused, on the try and on the retry).
 * test_judge_run covers an HTTP 500 and test_judge_http a refused
 * connection in the client alone; this is a refused connection in the
 * real pipeline.
 *
 * Why it must fail closed: a judge that cannot answer has approved
 * nothing. The request escalates to the tier, and the passive tier
 * refuses it: EACCES, a row "deny/tier", the command did not run.
 */
static void test_failclosed_judge_unreachable_goes_to_tier(void **state)
{
	struct fx *f = *state;
	char *url = wd_asprintf("http://127.0.0.1:%d/v1/chat/completions", closed_port());
	setenv("WARDEN_JUDGE_URL", url, 1);
	setenv("WARDEN_JUDGE_MODEL", "test-model", 1);
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	char *script = wd_asprintf("touch %s; echo rc=$?", f->marker);
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c", script, NULL);
	unsetenv("WARDEN_JUDGE_URL");
	unsetenv("WARDEN_JUDGE_MODEL");
	print_message("stdout:\n%sstderr:\n%s", r.out, r.err);
	/* A judge was configured (else the tier would decide without it). */
	assert_null(strstr(r.err, "no judge configured"));
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "rc=126\n"));
	assert_int_not_equal(access(f->marker, F_OK), 0);
	assert_non_null(strstr(r.err, "passive mode, reject all escalated tool calls"));
	char *touch = wd_asprintf("=touch %s", f->marker);
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", touch,
					"passive mode, reject all escalated tool calls"),
			 1);
	assert_int_equal(wt_audit_count(f->db, "allow", NULL, touch, NULL), 0);
	free(touch);
	wt_result_free(&r);
	free(script);
	free(url);
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_failclosed_audit_full_mid_run_refuses, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failclosed_sandbox_setup_failure_exits_125,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_failclosed_fast_subtree_gone_at_attach_left_to_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failclosed_no_fuse_exits_125, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failclosed_audit_unopenable_exits_125, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failclosed_judge_unreachable_goes_to_tier,
						setup, teardown),
	};
	return cmocka_run_group_tests_name("failclosed", tests, NULL, NULL);
}
