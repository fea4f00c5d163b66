/*
 * proc.c: small readers of /proc shared by the decoders.
 */
#include "proc_int.h"
#include "sandbox.h"

#include "common.h"
#include "policy.h"

#include <fcntl.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * The supervisor's /proc, and its own /proc/self/fd, each opened once
 * (O_PATH): a lookup of "PID/cwd" or "N" from them is the kernel's lookup
 * of /proc/PID/cwd or /proc/self/fd/N without the components before it
 * ("/", "proc" and its mount, and "self", which formats the pid and looks
 * it up, on every call). The objects found, and what readlink says of
 * them, are the same: the same proc instance, the same process.
 *
 * Each is remembered with the pid of the process that opened it, and any
 * other process (a child made by fork, which may close descriptors it did
 * not open, as the sandbox's init and agent do) opens its own: so
 * /proc/self/fd never names another process's descriptors, and a number
 * is never used after its process closed it. Within the supervisor
 * nothing closes descriptors it did not open. Both are O_CLOEXEC and kept
 * for the process's life; a thread that loses the race to remember one
 * closes its own.
 */
struct fd_memo {
	_Atomic uint64_t v; /* pid << 32 | fd; 0: none */
};
static struct fd_memo proc_root_memo, self_fd_memo;

static int memo_open(struct fd_memo *m, const char *path)
{
	uint32_t me = (uint32_t)getpid();
	uint64_t v = atomic_load(&m->v);
	if (v && (uint32_t)(v >> 32) == me)
		return (int)(uint32_t)v;
	int mine = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (mine < 0)
		return -1;
	uint64_t nv = (uint64_t)me << 32 | (uint32_t)mine;
	/* Another process's number (a parent's, before fork) is not this
	 * process's to close: it may name anything here now. */
	if (atomic_compare_exchange_strong(&m->v, &v, nv))
		return mine;
	close(mine); /* another thread of this process remembered one */
	return (uint32_t)(v >> 32) == me ? (int)(uint32_t)v : -1;
}

static int proc_root(void)
{
	return memo_open(&proc_root_memo, "/proc");
}

static int self_fd_dir(void)
{
	return memo_open(&self_fd_memo, "/proc/self/fd");
}

/* The target of the symlink |name| in |dir| (AT_FDCWD: |name| is a path),
 * or NULL when it is none or shorter than |min| bytes. */
static char *read_link(int dir, const char *name, ssize_t min)
{
	char buf[4096];
	ssize_t n = readlinkat(dir, name, buf, sizeof(buf) - 1);
	if (n < min)
		return NULL;
	buf[n] = '\0';
	return wd_strdup(buf);
}

char *sbx_proc_link(pid_t pid, const char *what)
{
	char p[64];
	int root = proc_root();
	if (root >= 0) {
		snprintf(p, sizeof(p), "%d/%s", pid, what);
		return read_link(root, p, 0);
	}
	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	return read_link(AT_FDCWD, p, 0);
}

int sbx_proc_open(pid_t pid, const char *what)
{
	char p[64];
	int root = proc_root();
	if (root >= 0) {
		snprintf(p, sizeof(p), "%d/%s", pid, what);
		return openat(root, p, O_PATH | O_CLOEXEC);
	}
	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	return open(p, O_PATH | O_CLOEXEC);
}

char *sbx_fd_path(int fd)
{
	char link[64];
	int dir = self_fd_dir();
	if (dir >= 0) {
		snprintf(link, sizeof(link), "%d", fd);
		return read_link(dir, link, 1);
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	return read_link(AT_FDCWD, link, 1);
}

char *sbx_quote_args(const char *buf, size_t len)
{
	struct wd_sb sb = {0};
	size_t i = 0;
	while (i < len) {
		const char *s = buf + i;
		if (sb.len)
			wd_sb_putc(&sb, ' ');
		wd_sb_shell_quote(&sb, s);
		i += strlen(s) + 1;
	}
	return wd_sb_steal(&sb);
}

char *sbx_proc_cmdline(pid_t pid, size_t max)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/cmdline", pid);
	/* On the stack, like the decoder's pages: no heap block taken and
	 * given back for every exec. */
	char buf[SBX_CMDLINE_MAX + 1];
	ssize_t n = wd_read_proc_into(p, buf, max < SBX_CMDLINE_MAX ? max : SBX_CMDLINE_MAX);
	return n < 0 ? NULL : sbx_quote_args(buf, (size_t)n);
}

/*
 * The access of an open from the syscall a thread is blocked in (the
 * split view's listener, fan.c): the thread waits in the kernel for the
 * listener's answer, so /proc/TID/syscall shows the syscall's registers as
 * they were passed, and registers cannot change while it waits. open,
 * openat and creat carry their flags in a register; openat2 carries them
 * in memory that another thread may change after the kernel copied them,
 * so it counts as read and write, as does anything not recognised (the
 * decision is then asked for the widest access, never a narrower one).
 */
unsigned sbx_proc_open_access_text(const char *text)
{
	const unsigned widest = POL_ACC_READ | POL_ACC_WRITE;
	char *end;
	long nr = strtol(text, &end, 10);
	if (end == text)
		return widest; /* "running", or nothing */
	unsigned long long a[6] = {0};
	const char *p = end;
	for (int i = 0; i < 6; i++) {
		a[i] = strtoull(p, &end, 16);
		if (end == p)
			return widest;
		p = end;
	}
	unsigned long long flags;
	switch (nr) {
#if defined(__x86_64__)
	case 2: /* open(path, flags, mode) */
		flags = a[1];
		break;
	case 257: /* openat(dirfd, path, flags, mode) */
		flags = a[2];
		break;
	case 85: /* creat(path, mode) */
		flags = O_CREAT | O_WRONLY | O_TRUNC;
		break;
	case 59:  /* execve */
	case 322: /* execveat: the exec's own open reads */
		return POL_ACC_READ;
#endif
	default:
		return widest;
	}
	int acc = (int)(flags & O_ACCMODE);
	unsigned r = 0;
	if (acc != O_WRONLY)
		r |= POL_ACC_READ;
	if (acc != O_RDONLY || (flags & O_TRUNC))
		r |= POL_ACC_WRITE;
	return r;
}

unsigned sbx_proc_open_access(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return POL_ACC_READ | POL_ACC_WRITE;
	buf[n] = '\0';
	return sbx_proc_open_access_text(buf);
}
