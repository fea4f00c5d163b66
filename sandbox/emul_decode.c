/*
 * emul_decode.c: reading a trapped name-changing call (emul.c performs
 * it): which calls, where each one's arguments are, and the event that
 * carries them to a worker.
 *
 * Order, in the decoding thread (the notification loop: capable, not
 * Landlocked, outside the sandbox's namespaces):
 *   1. read the names once;
 *   2. SECCOMP_IOCTL_NOTIF_ID_VALID: the pid read from was the caller
 *      all along (a recycled pid would have given another process's bytes);
 *   3. open the directories the names start from: the caller's dirfd
 *      (/proc/TID/fd/N) or cwd (/proc/TID/cwd), as O_PATH descriptors of
 *      our own, in the host's /proc;
 *   4. the id again: those descriptors are the caller's, not those of a
 *      process that took its pid meanwhile.
 * The descriptors are the supervisor's and are never passed to the agent.
 */
#include "sandbox.h"
#include "emul_int.h"
#include "notify_int.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

bool sbx_emul_call(int nr)
{
	switch (nr) {
	case __NR_rename:
	case __NR_renameat:
	case __NR_renameat2:
	case __NR_link:
	case __NR_linkat:
	case __NR_symlink:
	case __NR_symlinkat:
	case __NR_unlink:
	case __NR_unlinkat:
	case __NR_rmdir:
	case __NR_truncate:
		return true;
	default:
		return false;
	}
}

void sbx_fs_event_free(struct sbx_fs_event *ev)
{
	if (!ev)
		return;
	for (int i = 0; i < 2; i++) {
		free(ev->path[i]);
		if (ev->dirfd[i] >= 0)
			close(ev->dirfd[i]);
	}
	free(ev);
}

char *sbx_fs_event_describe(const struct sbx_fs_event *ev)
{
	const char *a = ev->path[0] ? ev->path[0] : "?";
	if (ev->op == SBX_FS_UNLINK || ev->op == SBX_FS_TRUNCATE)
		return wd_strdup(a);
	return wd_asprintf("%s -> %s", a, ev->path[1] ? ev->path[1] : "?");
}

/* Where each argument of |nr| is: the names' registers (-1: none), the
 * dirfds' (-1: the cwd), the flags' (-1: none). */
struct layout {
	enum sbx_fs_op op;
	int name[2], dir[2], flags;
	unsigned fixed; /* flags the call implies (rmdir: AT_REMOVEDIR) */
};

static struct layout layout_of(int nr)
{
	switch (nr) {
	case __NR_rename:
		return (struct layout){SBX_FS_RENAME, {0, 1}, {-1, -1}, -1, 0};
	case __NR_renameat:
		return (struct layout){SBX_FS_RENAME, {1, 3}, {0, 2}, -1, 0};
	case __NR_renameat2:
		return (struct layout){SBX_FS_RENAME, {1, 3}, {0, 2}, 4, 0};
	case __NR_link:
		return (struct layout){SBX_FS_LINK, {0, 1}, {-1, -1}, -1, 0};
	case __NR_linkat:
		return (struct layout){SBX_FS_LINK, {1, 3}, {0, 2}, 4, 0};
	case __NR_symlink:
		return (struct layout){SBX_FS_SYMLINK, {0, 1}, {-1, -1}, -1, 0};
	case __NR_symlinkat:
		return (struct layout){SBX_FS_SYMLINK, {0, 2}, {-1, 1}, -1, 0};
	case __NR_unlink:
		return (struct layout){SBX_FS_UNLINK, {0, -1}, {-1, -1}, -1, 0};
	case __NR_unlinkat:
		return (struct layout){SBX_FS_UNLINK, {1, -1}, {0, -1}, 2, 0};
	case __NR_rmdir:
		return (struct layout){SBX_FS_UNLINK, {0, -1}, {-1, -1}, -1, AT_REMOVEDIR};
	case __NR_truncate:
	default:
		return (struct layout){SBX_FS_TRUNCATE, {0, -1}, {-1, -1}, -1, 0};
	}
}

/* An O_PATH descriptor of the caller's directory |dirfd| (AT_FDCWD: its
 * cwd), through the host's /proc, or -1 when it names nothing (EBADF). */
static int fetch_dir(pid_t tid, int dirfd)
{
	char p[64];
	if (dirfd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%d/cwd", tid);
	else if (dirfd >= 0)
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", tid, dirfd);
	else
		return -1;
	return open(p, O_PATH | O_CLOEXEC);
}

int sbx_emul_decode(int fd, const struct seccomp_notif *req, struct sbx_fs_event **out)
{
	*out = NULL;
	struct sbx_fs_event *ev = wd_calloc(1, sizeof(*ev));
	ev->id = req->id;
	ev->pid = (pid_t)req->pid;
	ev->nr = req->data.nr;
	ev->dirfd[0] = ev->dirfd[1] = AT_FDCWD;
	struct layout l = layout_of(ev->nr);
	ev->op = l.op;
	ev->flags = l.fixed | (l.flags >= 0 ? (unsigned)req->data.args[l.flags] : 0);
	if (ev->op == SBX_FS_TRUNCATE)
		ev->length = (int64_t)req->data.args[1];
	struct sbx_rmem *m = wd_malloc(sizeof(*m));
	sbx_rmem_init(m, sbx_read_pid_page, &ev->pid);
	bool present[2] = {false, false};
	for (int i = 0; i < 2; i++) {
		if (l.name[i] < 0)
			continue;
		uint64_t addr = req->data.args[l.name[i]];
		if (addr == 0)
			continue; /* the kernel says what a null name means */
		size_t budget = PATH_MAX;
		int rc = sbx_rmem_string(m, addr, PATH_MAX, &budget, &ev->path[i]);
		if (rc < 0)
			ev->perr[i] = rc == -E2BIG ? ENAMETOOLONG : EFAULT;
		else
			present[i] = true;
	}
	free(m);
	if (!sbx_notify_id_valid(fd, ev->id)) {
		sbx_fs_event_free(ev);
		return -ENOENT;
	}
	/* The directories the names start from: a relative name's, a null
	 * name's (linkat's AT_EMPTY_PATH may take one), never a symlink's
	 * target (a string, not a lookup). */
	for (int i = 0; i < 2; i++) {
		if (l.name[i] < 0 || ev->perr[i] || (ev->op == SBX_FS_SYMLINK && i == 0))
			continue;
		if (present[i] && ev->path[i][0] == '/')
			continue;
		int dirfd = l.dir[i] < 0 ? AT_FDCWD : (int)req->data.args[l.dir[i]];
		ev->dirfd[i] = fetch_dir(ev->pid, dirfd);
	}
	if (!sbx_notify_id_valid(fd, ev->id)) {
		sbx_fs_event_free(ev);
		return -ENOENT;
	}
	*out = ev;
	return 0;
}
