/*
 * pts.c: the agent's own terminal under the sandbox's /dev/pts.
 *
 * The sandbox's /dev/pts is a devpts instance of its own; init binds at
 * /dev/pts/K exactly the host node of each standard descriptor that is a
 * host pty, chosen by the descriptor's inode (not a name) before the agent
 * exists, and holds the private instance's pty K open for its whole life so
 * that no pty the agent opens can be or cover that node. No other pty of
 * the host is reachable. Why neither a race nor a new pty gives the agent
 * more: docs/design.md, section "The sandbox: the agent's terminal".
 */
#include "pts_int.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* UNIX98 pty slaves: majors 136 to 143. */
#define PTY_SLAVE_MAJOR_FIRST 136
#define PTY_SLAVE_MAJOR_LAST  143
/* Higher indices are not bound (each needs as many ptys allocated once). */
#define PTS_INDEX_MAX 1023
/* Where init keeps descriptors it holds while it sets up. */
#define HIGH_FD 64

static bool same_node(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_rdev == b->st_rdev;
}

void sbx_jail_pts_collect(struct sbx_jail_pts *pts)
{
	memset(pts, 0, sizeof(*pts));
	for (size_t i = 0; i < JAIL_PTS_MAX; i++)
		pts->mnt[i] = pts->hold[i] = -1;
	for (int fd = 0; fd <= 2; fd++) {
		struct stat st;
		if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) ||
		    major(st.st_rdev) < PTY_SLAVE_MAJOR_FIRST ||
		    major(st.st_rdev) > PTY_SLAVE_MAJOR_LAST)
			continue;
		bool seen = false;
		for (size_t i = 0; i < pts->n; i++)
			seen = seen || pts->rdev[i] == st.st_rdev;
		if (seen)
			continue;
		char link[64], name[PATH_MAX];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t len = readlink(link, name, sizeof(name) - 1);
		if (len <= 0)
			continue;
		name[len] = '\0';
		/* Only a name the sandbox's /dev/pts can show. */
		const char *num = name + strlen("/dev/pts/");
		if (strncmp(name, "/dev/pts/", strlen("/dev/pts/")) != 0 || !*num ||
		    strspn(num, "0123456789") != strlen(num) || strlen(num) > 4)
			continue;
		unsigned long index = strtoul(num, NULL, 10);
		if (index > PTS_INDEX_MAX)
			continue;
		int mnt = (int)syscall(SYS_open_tree, AT_FDCWD, name,
				       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
		struct stat mst;
		if (mnt < 0)
			continue;
		if (fstat(mnt, &mst) < 0 || !same_node(&st, &mst)) {
			close(mnt); /* the name is not this descriptor's node */
			continue;
		}
		pts->mnt[pts->n] = mnt;
		pts->index[pts->n] = (unsigned)index;
		pts->rdev[pts->n] = st.st_rdev;
		pts->n++;
	}
}

int sbx_jail_pts_private(void)
{
	/* As sbx_jail_dev's; /dev/ptmx (a node or a link to pts/ptmx) opens the
	 * instance mounted on the "pts" beside it: this one. */
	if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		  "newinstance,ptmxmode=0666,mode=0620") < 0)
		return -errno;
	return 0;
}

int sbx_jail_pts_empty(void)
{
	/* Read-only and empty from its first instant: no name can be made in
	 * it, and /dev/ptmx, which opens the devpts instance at "pts" beside
	 * it, finds none (the kernel answers the open with an error). The
	 * flags are the hidden places' (jail.c) plus MS_NOATIME, which
	 * changes nothing on an empty read-only file system and tells this
	 * mount apart from those to a seccomp filter on mount's flags
	 * (test_userns makes exactly this one fail). */
	if (mount("warden-nopts", "/dev/pts", "tmpfs",
		  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME,
		  "size=4k,mode=0555") < 0)
		return -errno;
	return 0;
}

int sbx_jail_pts_attach(struct sbx_jail_pts *pts)
{
	if (pts->n == 0)
		return 0;
	unsigned top = 0;
	for (size_t i = 0; i < pts->n; i++)
		if (pts->index[i] > top)
			top = pts->index[i];
	int *open_fds = wd_calloc(top + 1, sizeof(int));
	size_t nopen = 0;
	int rc = 0;
	/* The private instance is new: opens take 0, 1, 2... */
	while (nopen <= top) {
		int m = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (m < 0) {
			rc = -errno;
			break;
		}
		open_fds[nopen++] = m;
		unsigned idx;
		if (ioctl(m, TIOCGPTN, &idx) < 0) {
			rc = -errno;
			break;
		}
		for (size_t i = 0; i < pts->n; i++) {
			if (pts->index[i] != idx || pts->hold[i] >= 0)
				continue;
			int h = fcntl(m, F_DUPFD_CLOEXEC, HIGH_FD);
			if (h < 0) {
				rc = -errno;
				break;
			}
			pts->hold[i] = h;
		}
		if (rc < 0 || idx >= top)
			break;
	}
	for (size_t i = 0; i < nopen; i++)
		close(open_fds[i]);
	free(open_fds);
	for (size_t i = 0; i < pts->n && rc == 0; i++) {
		char dst[32];
		snprintf(dst, sizeof(dst), "/dev/pts/%u", pts->index[i]);
		if (pts->hold[i] < 0)
			rc = -ENOENT;
		else if (syscall(SYS_move_mount, pts->mnt[i], "", AT_FDCWD, dst,
				 MOVE_MOUNT_F_EMPTY_PATH) < 0)
			rc = -errno;
	}
	for (size_t i = 0; i < pts->n; i++)
		wd_close(&pts->mnt[i]);
	return rc;
}

int sbx_jail_pts_keep(struct sbx_jail_pts *pts, int first)
{
	int next = first;
	for (size_t i = 0; i < pts->n; i++) {
		if (pts->hold[i] < 0)
			continue;
		if (dup2(pts->hold[i], next) < 0)
			return -errno;
		pts->hold[i] = next++;
	}
	return next;
}

void sbx_jail_pts_drop(struct sbx_jail_pts *pts)
{
	for (size_t i = 0; i < JAIL_PTS_MAX; i++) {
		wd_close(&pts->mnt[i]);
		wd_close(&pts->hold[i]);
	}
	pts->n = 0;
}
