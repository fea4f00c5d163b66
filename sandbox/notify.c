/*
 * notify.c: the seccomp notifications: receiving one, decoding an exec
 * (its arguments read from the stopped caller, its program found as the
 * caller's exec finds it) or handing a socket call to sock.c, and answering.
 *
 * Order: receive, open the caller's pidfd, copy what is needed, check that
 * the notification id is still valid (so the pid read from was the caller
 * all along), then hand the event to the supervisor. What is read here can
 * be rewritten by the caller afterwards: the exec event (verify.c) enforces
 * the decision. Why that cannot be raced: docs/design.md, section "The sandbox:
 * the exec decoder".
 */
#include "sandbox.h"
#include "notify_int.h"
#include "ident_int.h"
#include "sock_int.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <time.h>

static size_t notif_size, resp_size;

static int load_sizes(void)
{
	if (notif_size)
		return 0;
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return -errno;
	/* The kernel copies its own struct size: allocate the larger. */
	notif_size = sz.seccomp_notif > sizeof(struct seccomp_notif) ? sz.seccomp_notif
								     : sizeof(struct seccomp_notif);
	resp_size = sz.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
			    ? sz.seccomp_notif_resp
			    : sizeof(struct seccomp_notif_resp);
	return 0;
}

void sbx_exec_event_free(struct sbx_exec_event *ev)
{
	if (!ev)
		return;
	free(ev->path_arg);
	free(ev->path);
	free(ev->resolved);
	free(ev->writable_why);
	free(ev->cwd);
	wd_strv_free(ev->argv);
	wd_strv_free(ev->envp);
	free(ev->interp);
	wd_strv_free(ev->expect_argv);
	free(ev->refuse_reason);
	free(ev->parent_cmdline);
	if (ev->pidfd >= 0)
		close(ev->pidfd);
	free(ev);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t digest_of(const struct sbx_exec_event *ev)
{
	uint64_t h = 14695981039346656037ULL;
	h = fnv(h, &ev->dev, sizeof(ev->dev));
	h = fnv(h, &ev->ino, sizeof(ev->ino));
	for (size_t i = 0; ev->argv && ev->argv[i]; i++)
		h = fnv(h, ev->argv[i], strlen(ev->argv[i]) + 1);
	h = fnv(h, "\n", 1);
	for (size_t i = 0; ev->envp && ev->envp[i]; i++)
		h = fnv(h, ev->envp[i], strlen(ev->envp[i]) + 1);
	return h;
}

/* PIDFD_GET_INFO (Linux 6.13, linux/pidfd.h; defined here for older
 * headers). */
struct wd_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid;
	uint32_t ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	uint32_t spare0;
};
#define WD_PIDFD_INFO_PID (1ULL << 0)
#define WD_PIDFD_GET_INFO _IOWR(0xFF, 11, struct wd_pidfd_info)

#define WD_PIDFD_INFO_CREDS (1ULL << 1)

/* The ids of the process behind |pidfd|, and its credentials into |ids|
 * (ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid) when |ids| is not NULL
 * and the kernel said them (*have_ids). */
static bool pidfd_info(int pidfd, pid_t *tgid, pid_t *ppid, uint32_t *ids, bool *have_ids)
{
	static bool unsupported;
	if (have_ids)
		*have_ids = false;
	if (pidfd < 0 || unsupported)
		return false;
	struct wd_pidfd_info info = {.mask = WD_PIDFD_INFO_PID | (ids ? WD_PIDFD_INFO_CREDS : 0)};
	if (ioctl(pidfd, WD_PIDFD_GET_INFO, &info) < 0) {
		if (errno == ENOTTY || errno == EINVAL)
			unsupported = true;
		return false;
	}
	if (ids && (info.mask & WD_PIDFD_INFO_CREDS)) {
		uint32_t v[8] = {info.ruid, info.rgid, info.euid,  info.egid,
				 info.suid, info.sgid, info.fsuid, info.fsgid};
		memcpy(ids, v, sizeof(v));
		*have_ids = true;
	}
	if (!(info.mask & WD_PIDFD_INFO_PID) || info.tgid == 0)
		return false;
	*tgid = (pid_t)info.tgid;
	*ppid = (pid_t)info.ppid;
	return true;
}

bool sbx_pidfd_ids(int pidfd, pid_t *tgid, pid_t *ppid)
{
	return pidfd_info(pidfd, tgid, ppid, NULL, NULL);
}

/*
 * The caller's command line, for the request shown to the decision. Where
 * warden saw the caller's arguments at its own exec event, or its parent's
 * (a process made by fork keeps its creator's arg_start and arg_end), it
 * reads the caller's memory there, in the same reads as the rest: if the
 * bytes are exactly the ones seen, they are what /proc/PID/cmdline would
 * show (it reads from arg_start to arg_end, and stops at the last NUL, which
 * the bytes end with), and the /proc file, which the kernel builds a dentry
 * and an inode for at a new pid's first exec, is not needed. Any other
 * bytes (a caller that rewrote its arguments, one forked before its
 * parent's last exec) send it to the /proc file. A caller can write what it
 * likes into its own arguments either way: the command line is what the
 * caller says it is, shown to the decision, never enforced.
 */
static char *caller_cmdline(struct sbx_rmem *m, pid_t pid, const struct sbx_args *hint)
{
	char buf[SBX_CMDLINE_MAX + 1];
	if (hint && hint->bytes && hint->len > 0 && hint->len <= SBX_CMDLINE_MAX &&
	    sbx_rmem_read(m, hint->at, buf, hint->len) == 0 &&
	    memcmp(buf, hint->bytes, hint->len) == 0) {
		buf[hint->len] = '\0';
		return sbx_quote_args(buf, hint->len);
	}
	return sbx_proc_cmdline(pid, SBX_CMDLINE_MAX);
}

char *sbx_args_quote(const struct sbx_args *a)
{
	if (!a || !a->bytes || a->len == 0 || a->len > SBX_CMDLINE_MAX)
		return NULL;
	return sbx_quote_args(a->bytes, a->len);
}

/* The arguments of an execve or execveat, as the caller passed them. */
struct exec_args {
	uint64_t path, argv, envp;
	int dirfd, flags;
};

static void exec_args_of(const struct seccomp_notif *req, struct exec_args *a)
{
	*a = (struct exec_args){.dirfd = AT_FDCWD, .flags = 0};
	if (req->data.nr == __NR_execveat) {
		a->dirfd = (int)req->data.args[0];
		a->path = req->data.args[1];
		a->argv = req->data.args[2];
		a->envp = req->data.args[3];
		a->flags = (int)req->data.args[4];
	} else {
		a->path = req->data.args[0];
		a->argv = req->data.args[1];
		a->envp = req->data.args[2];
	}
}

/* Warms |m| with the pages the decode reads: those of the path, argv, envp
 * and the caller's arguments (|args|) in one read, then the pages of the
 * strings of both vectors in one more (sbx_rmem_vector() finds them cached
 * and reads nothing itself). */
static void prefetch_exec(struct sbx_rmem *m, const struct exec_args *a,
			  const struct sbx_args *args)
{
	uint64_t args_at = args && args->bytes ? args->at : 0;
	uint64_t args_end = args_at ? args->at + args->len - 1 : 0;
	uint64_t first[] = {a->path, a->argv, a->envp, args_at, args_end};
	sbx_rmem_prefetch(m, first, WD_ARRAY_SIZE(first));
	uint64_t strs[SBX_PREFETCH_MAX * 8] = {0};
	size_t nstrs = sbx_rmem_string_pages(m, a->argv, strs, WD_ARRAY_SIZE(strs) / 2);
	nstrs += sbx_rmem_string_pages(m, a->envp, strs + nstrs, WD_ARRAY_SIZE(strs) - nstrs);
	sbx_rmem_prefetch(m, strs, nstrs);
}

/* Reads the path, argv and envp into |ev|; what cannot be read (or is too
 * big, or an empty argv) refuses the exec, with the kernel's errno. */
static void read_exec_strings(struct sbx_exec_event *ev, struct sbx_rmem *m,
			      const struct exec_args *a)
{
	size_t budget = 4096, envbytes = 0;
	int rc = sbx_rmem_string(m, a->path, 4096, &budget, &ev->path_arg);
	if (rc < 0) {
		ev->path_arg = wd_strdup("");
		sbx_exec_refuse(ev, rc == -E2BIG ? ENAMETOOLONG : EFAULT,
				rc == -E2BIG ? "the program path is longer than 4096 bytes"
					     : "the program path could not be read");
	}
	rc = sbx_rmem_vector(m, a->argv, SBX_ARGV_MAX, &ev->argv, &ev->argv_bytes);
	if (rc < 0) {
		ev->argv = wd_calloc(1, sizeof(char *));
		sbx_exec_refuse(ev, rc == -E2BIG ? E2BIG : EFAULT,
				rc == -E2BIG ? "its argv is over 256 KiB in all"
					     : "its argv could not be read");
	} else if (!ev->argv[0]) {
		sbx_exec_refuse(ev, EINVAL, "an exec with an empty argv hides what it runs");
	}
	rc = sbx_rmem_vector(m, a->envp, SBX_ENV_MAX, &ev->envp, &envbytes);
	if (rc < 0) {
		ev->envp = wd_calloc(1, sizeof(char *));
		sbx_exec_refuse(ev, rc == -E2BIG ? E2BIG : EFAULT,
				rc == -E2BIG ? "its environment is over 1 MiB in all"
					     : "its environment could not be read");
	}
}

/* Decodes the exec notification |req| received on |fd|: 0 and *out, or
 * -ENOENT when the caller vanished meanwhile. */
static int decode_exec(int fd, const struct seccomp_notif *req, int root_fd, sbx_args_hint hint,
		       void *hint_ctx, struct sbx_exec_event **out)
{
	struct sbx_exec_event *ev = wd_calloc(1, sizeof(*ev));
	ev->pidfd = -1;
	ev->id = req->id;
	ev->pid = (pid_t)req->pid;
	ev->syscall_nr = req->data.nr;
	struct exec_args a;
	exec_args_of(req, &a);
	/* The pidfd first: opened before the id check below, it names the
	 * caller once that check passes, and it names its parent without
	 * /proc. */
	ev->pidfd = (int)syscall(SYS_pidfd_open, ev->pid, 0);
	/* Left 0 (unknown) when the kernel cannot say. */
	uint32_t ids[8];
	bool have_ids = false;
	(void)pidfd_info(ev->pidfd, &ev->tgid, &ev->ppid, ids, &have_ids);
	const struct sbx_args *args = hint ? hint(hint_ctx, ev->pid, ev->ppid) : NULL;
	/* On the stack (SBX_RMEM_PAGES pages): a heap block this size, taken
	 * and given back for every exec, costs malloc a consolidation each
	 * time. */
	struct sbx_rmem mem, *m = &mem;
	sbx_rmem_init(m, sbx_read_pid_page, &ev->pid);
	m->batch_pid = ev->pid;
	prefetch_exec(m, &a, args);
	read_exec_strings(ev, m, &a);
	ev->cwd = sbx_proc_link(ev->pid, "cwd");
	/* A command is decided in the directory it runs in: one the kernel
	 * cannot name (longer than PATH_MAX) can be neither shown to the
	 * decision nor compared at the exec event (verify.c). */
	if (!ev->cwd)
		sbx_exec_refuse(ev, EACCES,
				"its working directory cannot be named (longer than PATH_MAX, "
				"or unreadable): run it from a shorter path");
	/* A thread's cmdline is its process's (one mm). */
	ev->parent_cmdline = caller_cmdline(m, ev->pid, args);
	sbx_exec_resolve(ev, root_fd, a.dirfd, a.flags, have_ids ? ids : NULL);
	ev->digest = digest_of(ev);

	/* Everything above may have read a recycled pid if the caller died:
	 * the id check says whether it was still our caller all along (and
	 * so whose the pidfd is). */
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &ev->id) < 0) {
		sbx_exec_event_free(ev);
		return -ENOENT;
	}
	*out = ev;
	return 0;
}

int sbx_notify_recv(int fd, int root_fd, sbx_args_hint hint, void *hint_ctx,
		    struct sbx_exec_event **out, struct sbx_sock_event **sock,
		    struct sbx_fs_event **fs)
{
	*out = NULL;
	*sock = NULL;
	*fs = NULL;
	int rc = load_sizes();
	if (rc < 0)
		return rc;
	wd_autofree struct seccomp_notif *req = wd_calloc(1, notif_size);
	for (;;) {
		memset(req, 0, notif_size);
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) == 0)
			break;
		if (errno == EINTR)
			continue;
		return -errno; /* ENOENT: the caller died before we got it */
	}
	if (sbx_sock_call(req->data.nr))
		return sbx_sock_decode(fd, req, sock);
	if (sbx_emul_call(req->data.nr))
		return sbx_emul_decode(fd, req, fs);
	return decode_exec(fd, req, root_fd, hint, hint_ctx, out);
}

/* Sends the answer to notification |id|: |error| (0 or a negative errno)
 * or the value |val|, and |flags|. */
static int respond(int fd, uint64_t id, int32_t error, int64_t val, uint32_t flags)
{
	int rc = load_sizes();
	if (rc < 0)
		return rc;
	wd_autofree struct seccomp_notif_resp *resp = wd_calloc(1, resp_size);
	resp->id = id;
	resp->error = error;
	resp->val = val;
	resp->flags = flags;
	for (;;) {
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp) == 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

bool sbx_notify_id_valid(int fd, uint64_t id)
{
	return ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

int sbx_notify_allow(int fd, uint64_t id)
{
	return respond(fd, id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

int sbx_notify_deny(int fd, uint64_t id, int err)
{
	return respond(fd, id, -(err > 0 ? err : EACCES), 0, 0);
}

int sbx_notify_answer(int fd, uint64_t id, long val)
{
	return respond(fd, id, val < 0 ? (int32_t)val : 0, val < 0 ? 0 : val, 0);
}
