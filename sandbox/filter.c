/*
 * filter.c: warden's seccomp filter, built with libseccomp and loaded with
 * seccomp(2) directly (for SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, which
 * libseccomp 2.5 does not know).
 *
 * Execs and the socket calls that can name an address notify the supervisor;
 * sockets of a family other than Unix and IP, raw IP sockets, and the socket
 * options that route IP packets elsewhere are refused; other architectures and the x32 ABI kill the process; the side doors
 * (io_uring, ptrace, the mount family, namespaces, a listener of its own, a
 * parent other than the creator, ...) fail with EPERM, clone3 with ENOSYS;
 * everything else is an argument-free ALLOW. It decides nothing. The full
 * list and why each entry is there: docs/design.md, section "The sandbox: the
 * seccomp filter".
 */
#include "sandbox.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stddef.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef IPV6_FLOWLABEL_MGR
#define IPV6_FLOWLABEL_MGR 32 /* linux/in6.h */
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Syscalls that fail with EPERM whatever their arguments. */
static const char *const refused[] = {
	"io_uring_setup",
	"io_uring_enter",
	"io_uring_register",
	"ptrace",
	"process_vm_readv",
	"process_vm_writev",
	"open_by_handle_at",
	"name_to_handle_at",
	"mount",
	"umount2",
	"pivot_root",
	"chroot",
	"open_tree",
	"move_mount",
	"fsopen",
	"fsconfig",
	"fsmount",
	"fspick",
	"mount_setattr",
	"setns",
	"unshare",
	"pidfd_getfd",
	"bpf",
	"perf_event_open",
	"keyctl",
	"add_key",
	"request_key",
	"kexec_load",
	"kexec_file_load",
	"init_module",
	"finit_module",
	"delete_module",
	"userfaultfd",
	"acct",
	"swapon",
	"swapoff",
	"reboot",
	"quotactl",
	"quotactl_fd",
	"lookup_dcookie",
	"vhangup",
	"fanotify_init",
	"iopl",
	"ioperm",
	"syslog",
};

/* Namespace flags that clone() must not carry. */
static const unsigned long ns_flags[] = {
	CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,    CLONE_NEWUSER,
	CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP, CLONE_NEWTIME,
};

static int add_refusals(scmp_filter_ctx ctx)
{
	int rc;
	for (size_t i = 0; i < WD_ARRAY_SIZE(refused); i++) {
		int nr = seccomp_syscall_resolve_name(refused[i]);
		if (nr == __NR_SCMP_ERROR)
			continue; /* not on this architecture */
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (rc < 0)
			return rc;
	}
	/* clone3's flags are in memory the filter cannot read. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (rc < 0)
		return rc;
	/* clone(flags, ...): one rule per namespace bit, so any of them set
	 * refuses. */
	for (size_t i = 0; i < WD_ARRAY_SIZE(ns_flags); i++) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
		if (rc < 0)
			return rc;
	}
	/* A process whose parent is not its creator: the supervisor names a
	 * process's creator by /proc's PPid (supervisor/trace.c), which
	 * CLONE_PARENT and a subreaper would make lie. */
	/* CLONE_UNTRACED would start a child of a followed (covered) process
	 * outside the supervisor's sight, CLONE_PTRACE one traced without
	 * its creator's events: neither is needed by anything but a tracer. */
	const unsigned long odd_clone[] = {CLONE_PARENT, CLONE_UNTRACED, CLONE_PTRACE};
	for (size_t i = 0; i < WD_ARRAY_SIZE(odd_clone); i++) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, odd_clone[i], odd_clone[i]));
		if (rc < 0)
			return rc;
	}
	/* A descriptor table shared with another process: that process could
	 * swap the socket a waiting connect names (sock.c). */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
			      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_FILES | CLONE_THREAD, CLONE_FILES));
	if (rc < 0)
		return rc;
	/* A working directory shared with another process: it could chdir
	 * between the decision, which is shown the caller's cwd, and the
	 * exec. A thread's chdir is caught at the exec event (verify.c);
	 * another process's would go unseen until then as well, but only
	 * threads need to share it. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
			      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_FS | CLONE_THREAD, CLONE_FS));
	if (rc < 0)
		return rc;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 2,
			      SCMP_A0(SCMP_CMP_EQ, PR_SET_CHILD_SUBREAPER, 0),
			      SCMP_A1(SCMP_CMP_NE, 0, 0));
	if (rc < 0)
		return rc;
	/* An agent's own listener would be consulted before warden's. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(seccomp), 1,
			      SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_FILTER_FLAG_NEW_LISTENER,
				      SECCOMP_FILTER_FLAG_NEW_LISTENER));
	if (rc < 0)
		return rc;
	/* Typing into the terminal of the person who approves. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
			      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI));
	if (rc < 0)
		return rc;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
			      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX));
	return rc;
}

/*
 * personality() is checked by a short prefix of our own, ahead of
 * libseccomp's program, because libseccomp cannot compare one argument
 * twice in a rule. Allowed: the query (0xffffffff), PER_LINUX and
 * PER_LINUX32, each with or without ADDR_NO_RANDOMIZE (setarch -R,
 * debuggers). Refused with EPERM: everything else (READ_IMPLIES_EXEC,
 * MMAP_PAGE_ZERO, ADDR_LIMIT_*, other personas). Jumps are relative and
 * forward, so the prefix falls through to libseccomp's program unchanged
 * for every other syscall and for any other architecture (which that
 * program then kills).
 */
static const struct sock_filter personality_prefix[] = {
	/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 10),
	/* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	/* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 0, 8),
	/* 4 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]) + 4),
	/* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 5),
	/* 6 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
	/* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 2, 0),
	/* 8 */
	BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~(uint32_t)ADDR_NO_RANDOMIZE & ~(uint32_t)PER_LINUX32),
	/* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
	/* 10 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	/* 11 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
	/* 12: libseccomp's program */
};

/*
 * socket() and socketpair() are checked by a second prefix, for the same
 * reason (one argument compared with several values). The domain, type and
 * protocol are the call's registers, compared on their low 32 bits, which
 * are what the kernel reads (int arguments). Allowed: AF_UNIX with any
 * type, and AF_INET/AF_INET6 stream or datagram sockets of TCP, UDP,
 * UDP-Lite or ICMP echo (ping sockets), whose destinations the socket
 * decoder reads at connect and send. Refused: every other family
 * (EAFNOSUPPORT: netlink, packet, vsock, ...: no address warden decides
 * could stop them), raw and SOCK_PACKET IP sockets (EPERM: they send
 * packets without a connect; AF_INET with SOCK_PACKET is AF_PACKET), other
 * IP socket types (ESOCKTNOSUPPORT: SOCK_SEQPACKET with protocol 0 is SCTP
 * when its module is loaded) and other IP protocols (EPROTONOSUPPORT: SCTP
 * connects through setsockopt and sends to addresses in control messages,
 * MPTCP adds paths of its own). Jumps are relative and forward.
 */
#define SOCK_END 26 /* the next program */
static const struct sock_filter socket_prefix[] = {
	/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, SOCK_END - 2),
	/* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	/* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
	/* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socketpair, 0, SOCK_END - 5),
	/* 5 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
	/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, SOCK_END - 7, 0),
	/* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 1, 0),
	/* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 25 - 9),
	/* 9 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
	/* 10 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf), /* SOCK_TYPE_MASK */
	/* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 15 - 12, 0),
	/* 12 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_DGRAM, 15 - 13, 0),
	/* 13 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_RAW, 22 - 14, 0),
	/* 14 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_PACKET, 22 - 15, 23 - 15),
	/* 15 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	/* 16 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, SOCK_END - 17, 0),
	/* 17 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, SOCK_END - 18, 0),
	/* 18 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, SOCK_END - 19, 0),
	/* 19 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_ICMP, SOCK_END - 20, 0),
	/* 20 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_ICMPV6, SOCK_END - 21, 0),
	/* 21 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDPLITE, SOCK_END - 22, 24 - 22),
	/* 22 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
	/* 23 */
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ESOCKTNOSUPPORT & SECCOMP_RET_DATA)),
	/* 24 */
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPROTONOSUPPORT & SECCOMP_RET_DATA)),
	/* 25 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EAFNOSUPPORT & SECCOMP_RET_DATA)),
	/* 26: the next program */
};
_Static_assert(WD_ARRAY_SIZE(socket_prefix) == SOCK_END, "socket_prefix's jumps");

/* Socket options that send an IP socket's packets elsewhere than the
 * destination decided: an IPv4 source route (IP_OPTIONS with LSRR/SSRR:
 * the packets go to its first hop), an IPv6 routing header (the packets go
 * to its first address; type 2 needs no privilege), and the IPv6 ways of
 * setting one (the RFC 2292 options, a flow label carrying options).
 * Refused with EPERM whatever the socket; sock.c refuses the same control
 * messages on a send. {level, optname}. */
static const int ip_route_opts[][2] = {
	{IPPROTO_IP, IP_OPTIONS},	    {IPPROTO_IPV6, IPV6_RTHDR},
	{IPPROTO_IPV6, IPV6_2292RTHDR},	    {IPPROTO_IPV6, IPV6_2292PKTOPTIONS},
	{IPPROTO_IPV6, IPV6_FLOWLABEL_MGR},
};

static int add_socket_refusals(scmp_filter_ctx ctx)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(ip_route_opts); i++) {
		int rc = seccomp_rule_add(
			ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setsockopt), 2,
			SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, (unsigned)ip_route_opts[i][0]),
			SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, (unsigned)ip_route_opts[i][1]));
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Exports |ctx| as classic BPF into |prog| (caller frees prog->filter). */
static int export_bpf(scmp_filter_ctx ctx, struct sock_fprog *prog)
{
	wd_autoclose int fd = memfd_create("warden-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return rc;
	off_t len = lseek(fd, 0, SEEK_END);
	if (len <= 0 || len % sizeof(struct sock_filter) != 0 || len > 65536)
		return -EINVAL;
	struct sock_filter *f = wd_malloc((size_t)len);
	if (pread(fd, f, (size_t)len, 0) != len) {
		free(f);
		return -EIO;
	}
	/* Our prefixes, then libseccomp's program. */
	size_t n = (size_t)len / sizeof(struct sock_filter);
	size_t pre = WD_ARRAY_SIZE(personality_prefix) + WD_ARRAY_SIZE(socket_prefix);
	struct sock_filter *all = wd_calloc(pre + n, sizeof(*all));
	memcpy(all, personality_prefix, sizeof(personality_prefix));
	memcpy(all + WD_ARRAY_SIZE(personality_prefix), socket_prefix, sizeof(socket_prefix));
	memcpy(all + pre, f, (size_t)len);
	free(f);
	prog->filter = all;
	prog->len = (unsigned short)(pre + n);
	return 0;
}

/* The calls that change names, which the supervisor performs itself when
 * the split view is on (sandbox/emul.c): a call continued by the kernel
 * would re-read strings another thread can swap after the check. */
static const char *const fs_trapped[] = {
	"rename",    "renameat", "renameat2", "link",  "linkat",   "symlink",
	"symlinkat", "unlink",	 "unlinkat",  "rmdir", "truncate",
};

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

/* Adds EPERM for |nr| when its argument |mode_arg| has S_ISUID or S_ISGID,
 * and, when |flags_arg| >= 0, only when that argument creates (O_CREAT or
 * O_TMPFILE): the mode of an open that creates nothing is never used. */
static int refuse_setid(scmp_filter_ctx ctx, int nr, unsigned mode_arg, int flags_arg)
{
	const unsigned long bits[] = {S_ISUID, S_ISGID};
	const unsigned long creates[] = {O_CREAT, __O_TMPFILE};
	for (size_t b = 0; b < WD_ARRAY_SIZE(bits); b++) {
		struct scmp_arg_cmp m = {.arg = mode_arg,
					 .op = SCMP_CMP_MASKED_EQ,
					 .datum_a = bits[b],
					 .datum_b = bits[b]};
		if (flags_arg < 0) {
			int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, &m);
			if (rc < 0)
				return rc;
			continue;
		}
		for (size_t c = 0; c < WD_ARRAY_SIZE(creates); c++) {
			struct scmp_arg_cmp two[2] = {
				m,
				{.arg = (unsigned)flags_arg,
				 .op = SCMP_CMP_MASKED_EQ,
				 .datum_a = creates[c],
				 .datum_b = creates[c]},
			};
			int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2, two);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/*
 * With the split view: the name-changing calls notify, and no call may
 * make a set-user-ID or set-group-ID object. The agent of a root run is
 * uid 0 without capabilities: it owns what it makes, so chmod u+s of its
 * own file would succeed, and a fast subtree (a bind of the backing tree,
 * not the view, which strips those bits) would keep it for the host to
 * honour later. The mode is a register, read by the filter without a
 * race. The filter cannot see the file's type, so S_ISGID is refused on
 * directories too (chmod g+s, mkdir 02775: a behaviour difference), and
 * openat2, whose mode and flags are in memory, fails with ENOSYS (the C
 * library falls back to openat, which the filter reads).
 */
static int add_fs_trap(scmp_filter_ctx ctx)
{
	int rc = 0;
	for (size_t i = 0; i < WD_ARRAY_SIZE(fs_trapped) && rc == 0; i++) {
		int nr = seccomp_syscall_resolve_name(fs_trapped[i]);
		if (nr != __NR_SCMP_ERROR)
			rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
	}
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
	if (rc == 0)
		rc = refuse_setid(ctx, SCMP_SYS(chmod), 1, -1);
	if (rc == 0)
		rc = refuse_setid(ctx, SCMP_SYS(fchmod), 1, -1);
	if (rc == 0)
		rc = refuse_setid(ctx, SCMP_SYS(fchmodat), 2, -1);
	if (rc == 0)
		rc = refuse_setid(ctx, __NR_fchmodat2, 2, -1);
	if (rc == 0)
		rc = refuse_setid(ctx, SCMP_SYS(creat), 1, -1);
	if (rc == 0)
		rc = refuse_setid(ctx, SCMP_SYS(mkdir), 1, -1);
	if (rc == 0)
		rc = refuse_setid(ctx, SCMP_SYS(mkdirat), 2, -1);
	if (rc == 0)
		rc = refuse_setid(ctx, SCMP_SYS(mknod), 1, -1);
	if (rc == 0)
		rc = refuse_setid(ctx, SCMP_SYS(mknodat), 2, -1);
	if (rc == 0)
		rc = refuse_setid(ctx, SCMP_SYS(open), 2, 1);
	if (rc == 0)
		rc = refuse_setid(ctx, SCMP_SYS(openat), 3, 2);
	return rc;
}

int sbx_filter_load(void)
{
	return sbx_filter_load_fs(false);
}

int sbx_filter_load_fs(bool fs_trap)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); /* we set it ourselves */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(execve), 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(execveat), 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendmsg), 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendmmsg), 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendto), 1,
				      SCMP_A4(SCMP_CMP_NE, 0, 0));
	if (rc == 0 && fs_trap)
		rc = add_fs_trap(ctx);
	if (rc == 0)
		rc = add_refusals(ctx);
	if (rc == 0)
		rc = add_socket_refusals(ctx);
	struct sock_fprog prog = {0};
	if (rc == 0)
		rc = export_bpf(ctx, &prog);
	seccomp_release(ctx);
	if (rc < 0)
		return rc;

	/* WAIT_KILLABLE_RECV (5.19): once the supervisor has received a
	 * notification, only a fatal signal interrupts the caller, so a
	 * decision in progress is never abandoned and silently restarted. */
	unsigned long flags =
		SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	if (fd < 0 && errno == EINVAL) {
		flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	}
	int saved = errno;
	free(prog.filter);
	if (fd < 0)
		return -saved;
	/* The kernel makes the listener O_CLOEXEC. */
	return (int)fd;
}
