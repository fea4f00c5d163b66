/*
 * test_userns.c: warden started by an unprivileged user.
 *
 * Without root, the sandbox is built in a user namespace: the sandbox's
 * init mounts the FUSE view itself, the agent keeps the user's uid and no
 * capability, and FUSE names the callers of the view by their pids in the
 * sandbox's PID namespace (the supervisor translates them: the audit and
 * the messages must name the process that asked, not whatever process has
 * that number outside).
 *
 * The test runs as root and drops to nobody (65534) for each run, in a
 * private mount namespace of its own where /dev/fuse is a 0666 node (as
 * Debian's fuse3 package makes it; some containers make it 0600). The
 * project belongs to nobody, as a user's project belongs to the user.
 */
#include "common.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <cmocka.h>

#define NOBODY 65534

/* A copy of warden that nobody can run: the build tree may sit in a
 * directory only root can enter. */
static char *g_dir;
/* The agent's HOME: the test's own directory by default (root's, which
 * nobody cannot enter, would look like nobody's own closed directory: in
 * the namespace an unmapped owner shows as the overflow uid, 65534, which
 * is nobody's; warden then refuses to start, failing closed). */
static const char *g_home;

/* In warden's process (wt_wardenv_prep): a private mount namespace whose
 * /dev/fuse anybody may open, the test's HOME, then nobody's credentials. */
static int become_nobody(const void *arg)
{
	(void)arg;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	char *dev = wd_asprintf("%s/dev", g_dir);
	mkdir(dev, 0755);
	char *node = wd_asprintf("%s/fuse", dev);
	if (mount("wt-dev", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=16k,mode=0755") < 0 ||
	    mknod(node, S_IFCHR | 0666, makedev(10, 229)) < 0 || chmod(node, 0666) < 0 ||
	    mount(node, "/dev/fuse", NULL, MS_BIND, NULL) < 0)
		return -errno;
	setenv("HOME", g_home ? g_home : g_dir, 1);
	unsetenv("WARDEN_JUDGE_URL");
	unsetenv("WARDEN_JUDGE_MODEL");
	if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) < 0)
		return -errno;
	return 0;
}

/* Runs `warden run ARGS... -- /bin/sh -c SCRIPT` as nobody in |project|. */
static void run_as_nobody(const char *project, struct wt_result *res, const char *script, ...)
{
	char *argv[32];
	int n = 0;
	argv[n++] = "run";
	va_list ap;
	va_start(ap, script);
	for (const char *a; (a = va_arg(ap, const char *));)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n++] = "--";
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = (char *)script;
	argv[n] = NULL;
	wt_wardenv_prep(project, argv, become_nobody, NULL, 0, res);
	if (res->status != 0)
		fprintf(stderr, "warden as nobody exited %d; stderr:\n%s", res->status, res->err);
	if (res->status == 99 || res->status == 126 || res->status == 127)
		fail_msg("could not start warden as nobody (status %d)", res->status);
}

static void give_to_nobody(const char *dir, const char *name)
{
	char *path = wd_asprintf("%s/%s", dir, name);
	assert_int_equal(chown(path, NOBODY, NOBODY), 0);
	free(path);
}

static char *new_project(void)
{
	char *p = wt_project();
	assert_int_equal(chown(p, NOBODY, NOBODY), 0);
	return p;
}

/* One integer from the project's audit: the first column of |sql|'s first
 * row, -1 when there is none. */
static long long audit_int(const char *project, const char *sql)
{
	char *db = wd_asprintf("%s/.warden/audit.db", project);
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	long long v = -1;
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	free(db);
	return v;
}

static char *audit_path(const char *project)
{
	return wd_asprintf("%s/.warden/audit.db", project);
}

/* Exec decisions: the fast path, the hard deny with its message, and the
 * start-up row naming the user, not root. */
static void test_userns_exec_gate(void **state)
{
	(void)state;
	char *proj = new_project();
	/* Sourced, so that the start-up command line does not hold the
	 * refused one (it would be refused as a whole). */
	wt_write(proj, "agent.sh", "ls >/dev/null\nrm -rf /\necho after=$?\n");
	struct wt_result res = {0};
	run_as_nobody(proj, &res, ". ./agent.sh", "--tier", "passive", NULL);
	assert_int_equal(res.status, 0);
	assert_non_null(strstr(res.out, "after=126"));
	assert_non_null(strstr(res.err, "warden: refused exec of \"rm -rf /\""));
	char *db = audit_path(proj);
	assert_int_equal(wt_audit_count(db, "allow", "fast_path", "=ls", NULL), 1);
	assert_int_equal(wt_audit_count(db, "deny", "hard_deny", "rm -rf /", NULL), 1);
	assert_int_equal(wt_audit_count(db, "allow", "startup", NULL, "run by nobody"), 1);
	free(db);
	wt_result_free(&res);
	wt_rmtree(proj);
	free(proj);
}

/*
 * A sensitive open through the view is decided and audited under the pid
 * of the process that opened it. The shell reads .env itself (a
 * redirection: no exec to decide), so the open row must carry the shell's
 * pid, the same as its start-up exec row, and its command line.
 */
static void test_userns_view_names_the_caller(void **state)
{
	(void)state;
	char *proj = new_project();
	wt_write(proj, ".env", "SECRET=swordfish\n");
	give_to_nobody(proj, ".env");
	struct wt_result res = {0};
	run_as_nobody(proj, &res, "read x < .env; echo \"got:$x\"", "--tier", "passive", NULL);
	assert_null(strstr(res.out, "swordfish"));
	assert_non_null(strstr(res.out, "got:"));
	assert_non_null(strstr(res.err, "warden: refused \"read .env\""));
	char *db = audit_path(proj);
	assert_int_equal(wt_audit_count(db, "deny", "tier", "read .env", NULL), 1);
	long long shell = audit_int(proj, "SELECT pid FROM decisions WHERE source = 'startup'");
	long long opener = audit_int(proj, "SELECT pid FROM decisions WHERE kind = 'open'");
	assert_true(shell > 0);
	assert_int_equal(opener, shell);
	assert_int_equal(audit_int(proj, "SELECT count(*) FROM decisions WHERE kind = 'open' "
					 "AND json_extract(request, '$.cmdline') LIKE "
					 "'/bin/sh -c %read x < .env%'"),
			 1);
	free(db);
	wt_result_free(&res);
	wt_rmtree(proj);
	free(proj);
}

/* Allowed, the agent reads the file, works in the project, keeps nobody's
 * uid and holds no capability, and sees none of the host's processes. */
static void test_userns_agent_powers(void **state)
{
	(void)state;
	char *proj = new_project();
	wt_write(proj, ".env", "SECRET=swordfish\n");
	give_to_nobody(proj, ".env");
	char *script = wd_asprintf("cat .env; id -u; grep CapEff /proc/self/status; "
				   "mkdir d && echo made > d/f && cat d/f; "
				   "test -e /proc/%d && echo host-visible; echo done",
				   (int)getpid());
	struct wt_result res = {0};
	run_as_nobody(proj, &res, script, "--tier", "aggressive", NULL);
	assert_int_equal(res.status, 0);
	assert_non_null(strstr(res.out, "SECRET=swordfish"));
	assert_non_null(strstr(res.out, "65534\n"));
	assert_non_null(strstr(res.out, "CapEff:\t0000000000000000"));
	assert_non_null(strstr(res.out, "made\n"));
	assert_null(strstr(res.out, "host-visible"));
	assert_non_null(strstr(res.out, "done"));
	char *db = audit_path(proj);
	assert_int_equal(wt_audit_count(db, "allow", "tier", "read .env", NULL), 1);
	free(db);
	free(script);
	wt_result_free(&res);
	wt_rmtree(proj);
	free(proj);
}

/* A gated ~/.ssh in a user namespace: init mounts its view, and the read
 * of the key is decided under its absolute path and the reader's pid. */
static void test_userns_gated_place(void **state)
{
	(void)state;
	char *proj = new_project();
	char *home = new_project();
	wt_write(home, ".ssh/id_rsa", "KEY-7c1e\n");
	give_to_nobody(home, ".ssh");
	give_to_nobody(home, ".ssh/id_rsa");
	wt_write(proj, ".warden/permissions.json",
		 "{\"outside\": [{\"path\": \"~/.ssh\", \"mode\": \"gate\"}]}\n");
	give_to_nobody(proj, ".warden");
	give_to_nobody(proj, ".warden/permissions.json");
	g_home = home;
	struct wt_result res = {0};
	run_as_nobody(proj, &res, "read x < ~/.ssh/id_rsa; echo \"got:$x\"", "--tier", "passive",
		      NULL);
	assert_null(strstr(res.out, "KEY-7c1e"));
	wt_result_free(&res);
	run_as_nobody(proj, &res, "read x < ~/.ssh/id_rsa; echo \"got:$x\"", "--tier", "aggressive",
		      NULL);
	assert_non_null(strstr(res.out, "got:KEY-7c1e"));
	g_home = NULL;
	char *db = audit_path(proj);
	char *want = wd_asprintf("=read %s/.ssh/id_rsa", home);
	assert_int_equal(wt_audit_count(db, "deny", "tier", want, NULL), 1);
	assert_int_equal(wt_audit_count(db, "allow", "tier", want, NULL), 1);
	assert_int_equal(audit_int(proj, "SELECT count(*) FROM decisions d WHERE kind = 'open' AND "
					 "pid = (SELECT pid FROM decisions WHERE source = "
					 "'startup' AND session = d.session)"),
			 2);
	free(want);
	free(db);
	wt_result_free(&res);
	wt_rmtree(proj);
	wt_rmtree(home);
	free(proj);
	free(home);
}

/* A hidden place behind a directory of the user's own that is closed
 * (mode 000) and whose group the namespace does not map (so the sandbox's
 * init has no capability over it): the sandbox cannot mount over the
 * place, and the agent could chmod the directory open, so warden refuses
 * to start rather than run with it reachable. */
static void test_userns_unhideable_place_refuses(void **state)
{
	(void)state;
	char *proj = new_project();
	char *home = new_project();
	wt_write(home, "locked/.ssh/id_rsa", "KEY-51b2\n");
	give_to_nobody(home, "locked");
	char *locked = wd_asprintf("%s/locked", home);
	assert_int_equal(chown(locked, NOBODY, 0), 0);
	assert_int_equal(chmod(locked, 0), 0);
	g_home = locked;
	struct wt_result res = {0};
	run_as_nobody(proj, &res, "chmod 700 ~; cat ~/.ssh/id_rsa", "--tier", "aggressive", NULL);
	g_home = NULL;
	assert_int_equal(res.status, 125);
	assert_non_null(strstr(res.err, "Permission denied"));
	assert_null(strstr(res.out, "KEY-51b2"));
	assert_int_equal(chmod(locked, 0755), 0);
	free(locked);
	wt_result_free(&res);
	wt_rmtree(proj);
	wt_rmtree(home);
	free(proj);
	free(home);
}

/*
 * The private temporary directories in a user namespace: the host's
 * /dev/shm and /tmp are not the agent's (a file root left in /dev/shm is
 * not seen, what the agent writes there does not reach the host), and the
 * removal at the end, by an unprivileged user, empties the directories the
 * agent closed (000, 0555).
 */
static void test_userns_private_tmp(void **state)
{
	(void)state;
	char *proj = new_project();
	char *host = wd_asprintf("/dev/shm/warden-userns-host-%d", (int)getpid());
	int fd = open(host, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "HOST-SHM-7d21\n", 14), 14);
	close(fd);
	char *out_shm = wd_asprintf("/dev/shm/warden-userns-out-%d", (int)getpid());
	char *out_tmp = wd_asprintf("/tmp/warden-userns-out-%d", (int)getpid());
	char *script = wd_asprintf("cat %s; echo m > %s; echo m > %s; cat %s %s; "
				   "mkdir -p /tmp/a/b/c && echo x > /tmp/a/b/c/f && "
				   "chmod 000 /tmp/a/b/c && chmod 555 /tmp/a && echo closed",
				   host, out_shm, out_tmp, out_shm, out_tmp);
	struct wt_result res = {0};
	run_as_nobody(proj, &res, script, "--tier", "aggressive", "-v", NULL);
	assert_int_equal(res.status, 0);
	assert_null(strstr(res.out, "HOST-SHM-7d21"));
	assert_non_null(strstr(res.out, "m\nm\n"));
	assert_non_null(strstr(res.out, "closed"));
	assert_int_not_equal(access(out_shm, F_OK), 0);
	assert_int_not_equal(access(out_tmp, F_OK), 0);
	const char *k = "private temporary directories in ";
	const char *at = strstr(res.err, k);
	assert_non_null(at);
	at += strlen(k);
	char *dir = wd_strndup(at, strcspn(at, "\n"));
	assert_true(wd_str_has_prefix(dir, "/tmp/warden-tmp-"));
	assert_int_not_equal(access(dir, F_OK), 0); /* removed by nobody */
	unlink(host);
	free(dir);
	free(script);
	free(out_shm);
	free(out_tmp);
	free(host);
	wt_result_free(&res);
	wt_rmtree(proj);
	free(proj);
}

/* ---- the sandbox's /dev/pts when devpts cannot be mounted ------------- */

/* The mount flags the test makes fail with EPERM, for every process of
 * warden's from its exec on: a seccomp filter on mount(2)'s flags (its
 * fourth argument, an integer a filter can read; the file-system type is a
 * pointer it cannot). Only the sandbox's devpts is mounted with exactly
 * MS_NOSUID | MS_NOEXEC in a user namespace (sandbox/pts.c), so that
 * alone fails, as it would under an LSM that forbids devpts mounts. */
static unsigned long g_deny_flags[2];

static int nobody_without_mounts(const void *arg)
{
	int rc = become_nobody(arg);
	if (rc < 0)
		return rc;
	/* The low 32 bits of args[3] (little-endian): the flags fit. */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mount, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)g_deny_flags[0], 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)g_deny_flags[1], 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return -errno;
	return 0;
}

/* A terminal of the host's that belongs to nobody (a user's other
 * terminal, say a second ssh session). Returns the master; *name is the
 * node's path under the host's /dev/pts. */
static int host_terminal(char **name)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(m >= 0);
	assert_int_equal(grantpt(m), 0);
	assert_int_equal(unlockpt(m), 0);
	*name = wd_strdup(ptsname(m));
	assert_int_equal(chown(*name, NOBODY, NOBODY), 0);
	assert_int_equal(chmod(*name, 0620), 0);
	return m;
}

/* The sandbox's devpts cannot be mounted: the agent must not be left the
 * host's /dev/pts, where it could open the user's other terminals. It
 * sees an empty /dev/pts it cannot write, /dev/ptmx opens nothing, the
 * host's terminal is unreachable by name, and warden says so in one
 * warning line. */
static void test_userns_pts_fallback_empty(void **state)
{
	(void)state;
	char *proj = new_project();
	char *name = NULL;
	int m = host_terminal(&name);
	/* In a script file: the command line itself would be refused for
	 * its redirect to /dev/ptmx, before anything is tried. */
	char *script =
		wd_asprintf("echo \"pts: $(ls -A /dev/pts | tr '\\n' ' ')\"\n"
			    "test -e %s && echo host-pts-visible\n"
			    "(echo INJECTED > %s) 2>/dev/null && echo host-pts-written\n"
			    "(exec 3<>/dev/ptmx) 2>/dev/null && echo ptmx-opened\n"
			    "(: > /dev/pts/made) 2>/dev/null && echo pts-writable\necho done\n",
			    name, name);
	wt_write(proj, "check.sh", script);
	give_to_nobody(proj, "check.sh");
	g_deny_flags[0] = g_deny_flags[1] = MS_NOSUID | MS_NOEXEC;
	struct wt_result res = {0};
	char *argv[] = {"run", "--tier", "aggressive", "--", "/bin/sh", "check.sh", NULL};
	wt_wardenv_prep(proj, argv, nobody_without_mounts, NULL, 0, &res);
	print_message("status %d\nout: %s\nerr: %s\n", res.status, res.out, res.err);
	assert_int_equal(res.status, 0);
	assert_non_null(strstr(res.out, "done"));
	assert_non_null(strstr(res.out, "pts: \n"));
	assert_null(strstr(res.out, "host-pts-visible"));
	assert_null(strstr(res.out, "host-pts-written"));
	assert_null(strstr(res.out, "ptmx-opened"));
	assert_null(strstr(res.out, "pts-writable"));
	const char *w = "warden: the sandbox's own /dev/pts could not be mounted";
	const char *at = strstr(res.err, w);
	assert_non_null(at);
	assert_null(strstr(at + 1, w)); /* one line */
	/* Nothing reached the host's terminal. */
	int fl = fcntl(m, F_GETFL);
	assert_int_equal(fcntl(m, F_SETFL, fl | O_NONBLOCK), 0);
	char buf[64];
	assert_true(read(m, buf, sizeof(buf)) < 0 && errno == EAGAIN);
	close(m);
	wt_result_free(&res);
	free(script);
	free(name);
	wt_rmtree(proj);
	free(proj);
}

/* And when not even the empty /dev/pts can be mounted, nothing starts
 * (125, saying what failed). */
static void test_userns_pts_fallback_fails_closed(void **state)
{
	(void)state;
	char *proj = new_project();
	g_deny_flags[0] = MS_NOSUID | MS_NOEXEC;
	g_deny_flags[1] = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME;
	struct wt_result res = {0};
	char *argv[] = {"run",	   "--tier", "aggressive",     "--",
			"/bin/sh", "-c",     "echo AGENT-RAN", NULL};
	wt_wardenv_prep(proj, argv, nobody_without_mounts, NULL, 0, &res);
	print_message("status %d\nout: %s\nerr: %s\n", res.status, res.out, res.err);
	assert_int_equal(res.status, 125);
	assert_null(strstr(res.out, "AGENT-RAN"));
	assert_non_null(strstr(res.err, "hiding the host's /dev/pts"));
	wt_result_free(&res);
	wt_rmtree(proj);
	free(proj);
}

/* The split view needs fanotify permission events (root in the initial
 * user namespace): asked for by name it refuses to start and says why;
 * auto falls back to the FUSE view (no fast mount in the sandbox). */
static void test_userns_view_split_needs_root(void **state)
{
	(void)state;
	char *proj = new_project();
	wt_write(proj, "src/a.txt", "plain\n");
	struct wt_result res = {0};
	run_as_nobody(proj, &res, "echo started", "--view", "split", "--tier", "passive", NULL);
	assert_int_equal(res.status, 125);
	assert_null(strstr(res.out, "started"));
	assert_non_null(strstr(res.err, "--view=split is not available here: fanotify permission "
					"events need root"));
	wt_result_free(&res);
	run_as_nobody(proj, &res,
		      "while read -r l; do echo \"$l\"; done < /proc/self/mountinfo; echo done",
		      "--tier", "passive", NULL);
	assert_int_equal(res.status, 0);
	assert_non_null(strstr(res.out, "done"));
	char *src = wd_asprintf(" %s/src ", proj);
	assert_null(strstr(res.out, src));
	free(src);
	wt_result_free(&res);
	wt_rmtree(proj);
	free(proj);
}

int main(void)
{
	wt_require_sandbox();
	g_dir = wt_userns_warden("userns");

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_userns_exec_gate),
		cmocka_unit_test(test_userns_view_names_the_caller),
		cmocka_unit_test(test_userns_agent_powers),
		cmocka_unit_test(test_userns_gated_place),
		cmocka_unit_test(test_userns_unhideable_place_refuses),
		cmocka_unit_test(test_userns_private_tmp),
		cmocka_unit_test(test_userns_pts_fallback_empty),
		cmocka_unit_test(test_userns_pts_fallback_fails_closed),
		cmocka_unit_test(test_userns_view_split_needs_root),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	wt_rmtree(g_dir);
	return rc;
}
