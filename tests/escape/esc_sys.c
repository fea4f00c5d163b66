/*
 * esc_sys: side-door syscalls that warden's static seccomp filter must
 * refuse before any notification (so no audit row exists for them: the
 * caller sees the errno). Each mode tries one escape and prints
 * "MODE rc=R errno=NAME" (several lines for modes with variants); the
 * driver checks the errno. Where the call unexpectedly succeeds, the mode
 * goes on with the escape it opens, so that a failing test shows the harm.
 *
 *   listener MARKER  install an own seccomp listener (NEW_LISTENER) and
 *                    answer "continue" to a child's exec of touch MARKER
 *   iouring          io_uring_setup (an openat of .env through a ring would
 *                    not pass through the syscall filter)
 *   handle           name_to_handle_at(.env) and open_by_handle_at of a
 *                    forged handle (opens by inode, around the view's paths)
 *   ptrace           PTRACE_ATTACH / SEIZE of a sibling, PTRACE_TRACEME
 *   vmwrite          process_vm_writev / readv into a sibling
 *   procmem          write a sibling's memory through /proc/PID/mem
 *   tiocsti          push input into the terminal (TIOCSTI, TIOCLINUX)
 *   unshare          unshare(CLONE_NEWUSER), unshare(CLONE_NEWNS)
 *   clonens          clone(CLONE_NEWUSER|CLONE_NEWNS)
 *   clone3           clone3 (flags in memory: must be ENOSYS)
 *   reparent         clone(CLONE_PARENT) and PR_SET_CHILD_SUBREAPER: a
 *                    child whose parent is not its creator (the supervisor
 *                    names a process's creator by its PPid); clearing the
 *                    subreaper flag stays allowed; clone(CLONE_UNTRACED)
 *                    and clone(CLONE_PTRACE), around the tracing
 *   mount            mount a tmpfs, fsopen, open_tree
 *   chroot           chroot("/tmp")
 *   bpf              bpf(BPF_MAP_CREATE)
 *   keyctl           keyctl(GET_KEYRING_ID), add_key
 *   personality      READ_IMPLIES_EXEC (refused) and the query (allowed)
 *   mknod            mknod a block device (sda) and open the disk
 *   misc             setns, pidfd_getfd, userfaultfd, perf_event_open
 *   x32 MARKER       execve of touch MARKER through the x32 ABI (killed)
 *   int80 MARKER     execve of touch MARKER through int 0x80 (killed)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif

static void show(const char *what, long rc, int err)
{
	printf("%s rc=%ld errno=%s\n", what, rc, rc < 0 ? strerrorname_np(err) : "0");
	fflush(stdout);
}

#define TRY(what, expr)                                                                            \
	do {                                                                                       \
		errno = 0;                                                                         \
		long rc_ = (long)(expr);                                                           \
		show(what, rc_, errno);                                                            \
	} while (0)

static pid_t sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		sleep(30);
		_exit(0);
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The listener would see its own child's exec first and let it go on. */
static int do_listener(const char *marker)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = 4, .filter = f};
	errno = 0;
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			  &prog);
	show("listener", fd, errno);
	if (fd < 0)
		return 0;
	pid_t pid = fork();
	if (pid == 0) {
		char *av[] = {"touch", (char *)marker, NULL};
		execv("/bin/touch", av);
		_exit(100);
	}
	struct seccomp_notif req;
	memset(&req, 0, sizeof(req));
	if (ioctl((int)fd, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0) {
		struct seccomp_notif_resp resp = {.id = req.id,
						  .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
		ioctl((int)fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	waitpid(pid, NULL, 0);
	return 0;
}

static int do_handle(void)
{
	struct {
		struct file_handle h;
		unsigned char b[128];
	} fh;
	memset(&fh, 0, sizeof(fh));
	fh.h.handle_bytes = 128;
	int mnt = 0;
	TRY("name_to_handle_at", name_to_handle_at(AT_FDCWD, ".env", &fh.h, &mnt, 0));
	/* A forged handle: a plausible ext4 inode 2 handle. */
	fh.h.handle_bytes = 8;
	fh.h.handle_type = 1;
	uint32_t ino = 2, gen = 0;
	memcpy(fh.b, &ino, 4);
	memcpy(fh.b + 4, &gen, 4);
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	errno = 0;
	long fd = open_by_handle_at(dfd, &fh.h, O_RDONLY);
	show("open_by_handle_at", fd, errno);
	return 0;
}

static int do_ptrace(void)
{
	pid_t pid = sleeper();
	TRY("ptrace_attach", ptrace(PTRACE_ATTACH, pid, 0, 0));
	TRY("ptrace_seize", ptrace(PTRACE_SEIZE, pid, 0, 0));
	reap(pid);
	pid = fork();
	if (pid == 0) {
		errno = 0;
		long rc = ptrace(PTRACE_TRACEME, 0, 0, 0);
		show("ptrace_traceme", rc, errno);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return 0;
}

static volatile int victim_flag = 1;

static int do_vmwrite(void)
{
	pid_t pid = sleeper();
	int v = 7;
	struct iovec l = {.iov_base = &v, .iov_len = sizeof(v)};
	struct iovec r = {.iov_base = (void *)&victim_flag, .iov_len = sizeof(v)};
	TRY("process_vm_writev", process_vm_writev(pid, &l, 1, &r, 1, 0));
	TRY("process_vm_readv", process_vm_readv(pid, &l, 1, &r, 1, 0));
	reap(pid);
	return 0;
}

/* The sibling exits 42 if its flag changed under it. */
static int do_procmem(void)
{
	int go[2];
	if (pipe(go) < 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		(void)!read(go[0], &c, 1);
		_exit(victim_flag == 1 ? 0 : 42);
	}
	close(go[0]);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	errno = 0;
	int fd = open(path, O_RDWR);
	show("open_proc_pid_mem", fd, errno);
	if (fd >= 0) {
		int v = 9;
		TRY("write_proc_pid_mem",
		    pwrite(fd, &v, sizeof(v), (off_t)(uintptr_t)&victim_flag));
	}
	(void)!write(go[1], "g", 1);
	int st = 0;
	waitpid(pid, &st, 0);
	printf("sibling_changed=%d\n", WIFEXITED(st) && WEXITSTATUS(st) == 42);
	return 0;
}

static int do_tiocsti(void)
{
	char c = 'x';
	TRY("tiocsti_stdin", ioctl(0, TIOCSTI, &c));
	int tty = open("/dev/tty", O_RDWR);
	TRY("tiocsti_tty", ioctl(tty >= 0 ? tty : 0, TIOCSTI, &c));
	char sub = 6; /* TIOCL_GETSHIFTSTATE */
	TRY("tioclinux", ioctl(0, TIOCLINUX, &sub));
	return 0;
}

static int do_mount(void)
{
	mkdir("/tmp/warden-esc-mnt", 0700);
	TRY("mount", mount("none", "/tmp/warden-esc-mnt", "tmpfs", 0, NULL));
	TRY("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
	TRY("open_tree", syscall(SYS_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */));
	TRY("umount2", umount2("/proc", MNT_DETACH));
	rmdir("/tmp/warden-esc-mnt");
	return 0;
}

static int do_clone3(void)
{
	uint64_t args[11];
	memset(args, 0, sizeof(args));
	args[0] = CLONE_NEWUSER;
	args[4] = SIGCHLD; /* exit_signal */
	errno = 0;
	long rc = syscall(SYS_clone3, args, 88);
	if (rc == 0)
		_exit(0);
	show("clone3", rc, errno);
	if (rc > 0)
		waitpid((pid_t)rc, NULL, 0);
	return 0;
}

/* clone(|flags| | SIGCHLD): the child exits at once; prints the result. */
static void try_clone(const char *what, unsigned long flags)
{
	errno = 0;
	long rc = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (rc == 0)
		_exit(0);
	show(what, rc, errno);
	if (rc > 0)
		waitpid((pid_t)rc, NULL, 0); /* ECHILD for CLONE_PARENT's: not ours */
}

static int do_reparent(void)
{
	try_clone("clone_parent", CLONE_PARENT);
	try_clone("clone_untraced", CLONE_UNTRACED);
	try_clone("clone_ptrace", CLONE_PTRACE);
	TRY("set_subreaper", prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
	TRY("clear_subreaper", prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0));
	return 0;
}

static int do_clonens(void)
{
	try_clone("clone_newuser", CLONE_NEWUSER | CLONE_NEWNS);
	return 0;
}

static int do_bpf(void)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	TRY("bpf", syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a)));
	return 0;
}

static int do_keyctl(void)
{
	TRY("keyctl", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
	TRY("add_key",
	    syscall(SYS_add_key, "user", "warden-esc", "x", 1, KEY_SPEC_PROCESS_KEYRING));
	return 0;
}

static int do_personality(void)
{
	TRY("personality_rie", personality(READ_IMPLIES_EXEC));
	TRY("personality_query", personality(0xffffffff));
	TRY("personality_mmap_page_zero", personality(MMAP_PAGE_ZERO));
	return 0;
}

static int do_mknod(void)
{
	TRY("mknod_blk", mknod("/tmp/warden-esc-sda", S_IFBLK | 0600, makedev(8, 0)));
	unlink("/tmp/warden-esc-sda");
	TRY("open_sda", open("/dev/sda", O_RDONLY));
	TRY("open_vda", open("/dev/vda", O_RDONLY));
	TRY("open_mem", open("/dev/mem", O_RDONLY));
	return 0;
}

static int do_misc(void)
{
	TRY("setns", syscall(SYS_setns, 0, CLONE_NEWNS));
	pid_t pid = sleeper();
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	TRY("pidfd_getfd", syscall(SYS_pidfd_getfd, pfd, 0, 0));
	reap(pid);
	TRY("userfaultfd", syscall(SYS_userfaultfd, 0));
	struct perf_event_attr pe;
	memset(&pe, 0, sizeof(pe));
	pe.size = sizeof(pe);
	pe.type = PERF_TYPE_SOFTWARE;
	pe.config = PERF_COUNT_SW_CPU_CLOCK;
	TRY("perf_event_open", syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0));
	return 0;
}

/* Runs |fn| in a child and says how it ended: the filter kills these. */
static int in_child(const char *what, void (*fn)(const char *), const char *marker)
{
	pid_t pid = fork();
	if (pid == 0) {
		fn(marker);
		_exit(100);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		printf("%s killed sig=%s\n", what, sigabbrev_np(WTERMSIG(st)));
	else
		printf("%s exited status=%d\n", what, WEXITSTATUS(st));
	return 0;
}

static void x32_exec(const char *marker)
{
	char *av[] = {"touch", (char *)marker, NULL};
	/* 0x40000000 | 520: execve in the x32 ABI. */
	syscall(0x40000000L | 520L, "/bin/touch", av, NULL);
}

static void int80_exec(const char *marker)
{
	/* The i386 ABI takes 32-bit pointers: build everything below 4 GiB. */
	char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (low == MAP_FAILED)
		return;
	strcpy(low, "/bin/touch");
	strcpy(low + 64, marker);
	uint32_t *av = (uint32_t *)(low + 2048);
	av[0] = (uint32_t)(uintptr_t)low;
	av[1] = (uint32_t)(uintptr_t)(low + 64);
	av[2] = 0;
	long ret;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(11L), "b"((long)(uintptr_t)low), "c"((long)(uintptr_t)av), "d"(0L)
			 : "memory");
	(void)ret;
}

/* Connects to the abstract Unix socket |name| (made outside the sandbox). */
static int do_abstract(const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	if (n + 1 > sizeof(sa.sun_path))
		return 2;
	memcpy(sa.sun_path + 1, name, n); /* sun_path[0] == 0: abstract */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	TRY("abstract_connect",
	    connect(fd, (struct sockaddr *)&sa,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)));
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *m = argv[1], *marker = argc > 2 ? argv[2] : "/tmp/warden-esc-none";
	if (!strcmp(m, "listener"))
		return do_listener(marker);
	if (!strcmp(m, "iouring")) {
		uint8_t params[120];
		memset(params, 0, sizeof(params));
		TRY("io_uring_setup", syscall(SYS_io_uring_setup, 8, params));
		TRY("io_uring_enter", syscall(SYS_io_uring_enter, 0, 1, 1, 0, NULL, 0));
		return 0;
	}
	if (!strcmp(m, "handle"))
		return do_handle();
	if (!strcmp(m, "ptrace"))
		return do_ptrace();
	if (!strcmp(m, "vmwrite"))
		return do_vmwrite();
	if (!strcmp(m, "procmem"))
		return do_procmem();
	if (!strcmp(m, "tiocsti"))
		return do_tiocsti();
	if (!strcmp(m, "abstract"))
		return do_abstract(marker);
	if (!strcmp(m, "unshare")) {
		TRY("unshare_newuser", unshare(CLONE_NEWUSER));
		TRY("unshare_newns", unshare(CLONE_NEWNS));
		return 0;
	}
	if (!strcmp(m, "clonens"))
		return do_clonens();
	if (!strcmp(m, "clone3"))
		return do_clone3();
	if (!strcmp(m, "reparent"))
		return do_reparent();
	if (!strcmp(m, "mount"))
		return do_mount();
	if (!strcmp(m, "chroot")) {
		TRY("chroot", chroot("/tmp"));
		return 0;
	}
	if (!strcmp(m, "bpf"))
		return do_bpf();
	if (!strcmp(m, "keyctl"))
		return do_keyctl();
	if (!strcmp(m, "personality"))
		return do_personality();
	if (!strcmp(m, "mknod"))
		return do_mknod();
	if (!strcmp(m, "misc"))
		return do_misc();
	if (!strcmp(m, "x32"))
		return in_child("x32", x32_exec, marker);
	if (!strcmp(m, "int80"))
		return in_child("int80", int80_exec, marker);
	fprintf(stderr, "esc_sys: unknown mode %s\n", m);
	return 2;
}
