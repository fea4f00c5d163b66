/*
 * test_esc_sys: the escape suite's system calls that the static seccomp
 * filter refuses (a listener of its own, io_uring, x32 and int 0x80,
 * ptrace, namespaces, mount, bpf, keyctl, ...) and the side doors that
 * stay closed (another process's memory, TIOCSTI, abstract sockets, block
 * devices). Refused syscalls never reach the supervisor, so they leave no
 * audit row by design: these cases assert the errno. Run under the real
 * `warden run` like the rest of the suite (test_escape.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "policy.h"
#include "store.h"
#include "wt.h"
#ifdef WARDEN_ESC_HAVE_JUDGE
#include "judge.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "escape_fx.h"

/* ---- the static filter: no audit row, the errno is the evidence --------- */

static void sys_case(void **state, const char *mode, const char *const *want)
{
	struct fx *f = *state;
	char *prog = esc("sys");
	char *marker = in_proj(f, "PWNED");
	struct wt_result r;
	run(f, &r, "passive", prog, mode, marker, NULL);
	assert_int_equal(r.status, 0);
	for (size_t i = 0; want[i]; i++)
		if (!strstr(r.out, want[i]))
			fail_msg("ESCAPE FOUND or weaker defence: %s: wanted \"%s\" in:\n%s", mode,
				 want[i], r.out);
	assert_false(exists(marker));
	/* Refused in the kernel before any notification: the only row is the
	 * agent's start-up. */
	assert_int_equal(rows(f, NULL, NULL, NULL, NULL, NULL),
			 rows(f, "exec", "allow", "startup", NULL, NULL));
	wt_result_free(&r);
	free(marker);
	free(prog);
}

/* An own seccomp listener (consulted before warden's) would answer
 * "continue" to a child's exec of touch: seccomp(NEW_LISTENER) is EPERM. */
static void test_escape_own_seccomp_listener(void **state)
{
	const char *want[] = {"listener rc=-1 errno=EPERM", NULL};
	sys_case(state, "listener", want);
}

/* io_uring would open .env without an openat syscall the filter sees. */
static void test_escape_io_uring(void **state)
{
	const char *want[] = {"io_uring_setup rc=-1 errno=EPERM",
			      "io_uring_enter rc=-1 errno=EPERM", NULL};
	sys_case(state, "iouring", want);
}

/* open_by_handle_at opens by inode, around every path check. */
static void test_escape_open_by_handle_at(void **state)
{
	const char *want[] = {"name_to_handle_at rc=-1 errno=EPERM",
			      "open_by_handle_at rc=-1 errno=EPERM", NULL};
	sys_case(state, "handle", want);
}

/* An x32-ABI execve of touch: the filter kills the process (SIGSYS). */
static void test_escape_x32_execve(void **state)
{
	const char *want[] = {"x32 killed sig=SYS", NULL};
	sys_case(state, "x32", want);
}

/* Whether this kernel runs int 0x80 at all (some VMs disable the ia32
 * entry, and the CPU then faults before any filter runs). */
static bool int80_available(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL); /* not cmocka's handler */
		long r;
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory"); /* getpid */
		_exit(r > 0 ? 0 : 1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* An i386 execve through int 0x80: killed, nothing runs. */
static void test_escape_int80_execve(void **state)
{
	struct fx *f = *state;
	char *prog = esc("sys");
	char *marker = in_proj(f, "PWNED");
	struct wt_result r;
	run(f, &r, "passive", prog, "int80", marker, NULL);
	assert_false(exists(marker));
	assert_non_null(strstr(r.out, "int80 killed"));
	assert_int_equal(rows(f, NULL, NULL, NULL, NULL, "touch"), 0);
	bool avail = int80_available();
	if (avail)
		assert_non_null(strstr(r.out, "int80 killed sig=SYS"));
	wt_result_free(&r);
	free(marker);
	free(prog);
	if (!avail) {
		print_message("int 0x80 faults on this kernel even without warden: the "
			      "filter's architecture check is not what stopped it here\n");
		skip();
	}
}

static void test_escape_ptrace_sibling(void **state)
{
	const char *want[] = {"ptrace_attach rc=-1 errno=EPERM", "ptrace_seize rc=-1 errno=EPERM",
			      "ptrace_traceme rc=-1 errno=EPERM", NULL};
	sys_case(state, "ptrace", want);
}

static void test_escape_process_vm_writev(void **state)
{
	const char *want[] = {"process_vm_writev rc=-1 errno=EPERM",
			      "process_vm_readv rc=-1 errno=EPERM", NULL};
	sys_case(state, "vmwrite", want);
}

/* A process whose parent is not its creator: clone(CLONE_PARENT) (a child
 * that looks like its grandparent's, the agent's: a new tool call) and a
 * subreaper (orphans that look like the subreaper's children). The
 * supervisor names an untraced process's creator by its PPid. And children
 * around the tracing: CLONE_UNTRACED (unseen under a covered tree),
 * CLONE_PTRACE (traced without its creator's events). */
static void test_escape_reparent(void **state)
{
	const char *want[] = {"clone_parent rc=-1 errno=EPERM", "clone_untraced rc=-1 errno=EPERM",
			      "clone_ptrace rc=-1 errno=EPERM", "set_subreaper rc=-1 errno=EPERM",
			      "clear_subreaper rc=0",		NULL};
	sys_case(state, "reparent", want);
}

/* Writing a sibling's memory through /proc/PID/mem (to change a process
 * after its exec was checked): the kernel refuses the open. */
static void test_escape_proc_pid_mem_write(void **state)
{
	struct fx *f = *state;
	char *prog = esc("sys");
	struct wt_result r;
	run(f, &r, "passive", prog, "procmem", NULL);
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, "sibling_changed=0"))
		fail_msg("ESCAPE FOUND: a sibling's memory was written through /proc/PID/mem");
	assert_true(strstr(r.out, "open_proc_pid_mem rc=-1 errno=EACCES") ||
		    strstr(r.out, "open_proc_pid_mem rc=-1 errno=EPERM") ||
		    strstr(r.out, "write_proc_pid_mem rc=-1"));
	assert_int_equal(rows(f, NULL, NULL, NULL, NULL, NULL),
			 rows(f, "exec", "allow", "startup", NULL, NULL));
	wt_result_free(&r);
	free(prog);
}

/* Typing into the approver's terminal. */
static void test_escape_tiocsti(void **state)
{
	const char *want[] = {"tiocsti_stdin rc=-1 errno=EPERM", "tiocsti_tty rc=-1 errno=EPERM",
			      "tioclinux rc=-1 errno=EPERM", NULL};
	sys_case(state, "tiocsti", want);
}

/*
 * An abstract Unix socket of the host (a session bus, X11): the agent
 * shares the host's network namespace, and no file permission guards an
 * abstract name. Landlock ABI 6 scopes them to the agent's own tree. The
 * test listens on one outside; the agent's connect is EPERM and nothing
 * reached the listener.
 */
static void test_escape_abstract_unix_socket(void **state)
{
	struct fx *f = *state;
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1UL /* VERSION */);
	if (abi < 6) {
		print_message("Landlock ABI %ld: abstract sockets are not scoped here\n", abi);
		skip();
	}
	char name[64];
	snprintf(name, sizeof(name), "warden-esc-%d", (int)getpid());
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path + 1, name, strlen(name));
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, len), 0);
	assert_int_equal(listen(lfd, 4), 0);

	char *prog = esc("sys");
	struct wt_result r;
	run(f, &r, "passive", prog, "abstract", name, NULL);
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, "abstract_connect rc=-1 errno=EPERM"))
		fail_msg("ESCAPE FOUND: the agent reached an abstract socket outside:\n%s", r.out);
	int c = accept(lfd, NULL, NULL);
	if (c >= 0)
		fail_msg("ESCAPE FOUND: a connection reached the listener outside");
	assert_int_equal(errno, EAGAIN);
	close(lfd);
	wt_result_free(&r);
	free(prog);
}

static void test_escape_unshare_newuser(void **state)
{
	const char *want[] = {"unshare_newuser rc=-1 errno=EPERM",
			      "unshare_newns rc=-1 errno=EPERM", NULL};
	sys_case(state, "unshare", want);
}

static void test_escape_clone_namespace_flags(void **state)
{
	const char *want[] = {"clone_newuser rc=-1 errno=EPERM", NULL};
	sys_case(state, "clonens", want);
}

/* clone3's flags are in memory the filter cannot read: ENOSYS, so libc
 * falls back to clone(). */
static void test_escape_clone3(void **state)
{
	const char *want[] = {"clone3 rc=-1 errno=ENOSYS", NULL};
	sys_case(state, "clone3", want);
}

/* A mount over the view, or of a fresh tmpfs, or unmounting /proc. */
static void test_escape_mount(void **state)
{
	const char *want[] = {"mount rc=-1 errno=EPERM", "fsopen rc=-1 errno=EPERM",
			      "open_tree rc=-1 errno=EPERM", "umount2 rc=-1 errno=EPERM", NULL};
	sys_case(state, "mount", want);
}

static void test_escape_chroot(void **state)
{
	const char *want[] = {"chroot rc=-1 errno=EPERM", NULL};
	sys_case(state, "chroot", want);
}

static void test_escape_bpf(void **state)
{
	const char *want[] = {"bpf rc=-1 errno=EPERM", NULL};
	sys_case(state, "bpf", want);
}

static void test_escape_keyctl(void **state)
{
	const char *want[] = {"keyctl rc=-1 errno=EPERM", "add_key rc=-1 errno=EPERM", NULL};
	sys_case(state, "keyctl", want);
}

/* READ_IMPLIES_EXEC makes every readable mapping executable; the query
 * stays allowed (tools call it). */
static void test_escape_personality(void **state)
{
	const char *want[] = {"personality_rie rc=-1 errno=EPERM", "personality_query rc=0",
			      "personality_mmap_page_zero rc=-1 errno=EPERM", NULL};
	sys_case(state, "personality", want);
}

/* setns, pidfd_getfd (steal a sibling's fd), userfaultfd (stall the
 * supervisor's reads), perf_event_open. */
static void test_escape_misc_side_doors(void **state)
{
	const char *want[] = {"setns rc=-1 errno=EPERM", "pidfd_getfd rc=-1 errno=EPERM",
			      "userfaultfd rc=-1 errno=EPERM", "perf_event_open rc=-1 errno=EPERM",
			      NULL};
	sys_case(state, "misc", want);
}

/* Root reaching the disk under the view: no block device in /dev, and no
 * CAP_MKNOD to make one. */
static void test_escape_block_device(void **state)
{
	const char *want[] = {"mknod_blk rc=-1 errno=EPERM", "open_sda rc=-1 errno=ENOENT",
			      "open_vda rc=-1 errno=ENOENT", "open_mem rc=-1 errno=ENOENT", NULL};
	sys_case(state, "mknod", want);
	struct fx *f = *state;
	struct wt_result r;
	run(f, &r, "passive", "/bin/ls", "/dev", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "null"));
	const char *disks[] = {"sda", "vda", "nvme", "xvda", "mem\n", "kmsg", "loop", NULL};
	for (size_t i = 0; disks[i]; i++)
		assert_null(strstr(r.out, disks[i]));
	wt_result_free(&r);
}

int main(void)
{
	wt_require_sandbox();
	if (geteuid() != 0) {
		printf("SKIP: the escape suite runs as root (it tests what root inside loses)\n");
		return 77;
	}
#define T(name) cmocka_unit_test_setup_teardown(test_escape_##name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(own_seccomp_listener),
		T(io_uring),
		T(open_by_handle_at),
		T(x32_execve),
		T(int80_execve),
		T(ptrace_sibling),
		T(process_vm_writev),
		T(proc_pid_mem_write),
		T(tiocsti),
		T(abstract_unix_socket),
		T(unshare_newuser),
		T(clone_namespace_flags),
		T(clone3),
		T(reparent),
		T(mount),
		T(chroot),
		T(bpf),
		T(keyctl),
		T(personality),
		T(misc_side_doors),
		T(block_device),
	};
#undef T
	/* WARDEN_TEST_FILTER=abstract* runs the cases matching a pattern. */
	if (getenv("WARDEN_TEST_FILTER"))
		cmocka_set_test_filter(getenv("WARDEN_TEST_FILTER"));
	return cmocka_run_group_tests_name("escape_sys", tests, NULL, NULL);
}
