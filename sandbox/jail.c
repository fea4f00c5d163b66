/*
 * jail.c: the pieces of the sandbox that the child sets up on itself
 * between fork and exec: mounts (private propagation, binds of the private
 * temporary directories and shared places, hidden secrets, its own /proc, a
 * minimal /dev), Landlock and dropping capabilities. Each
 * returns 0 or -errno and never exits; spawn.c decides what is fatal.
 */
#include "jail_int.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <stddef.h>

/* Debian 12's headers stop at ABI 2; the kernel may know more. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

int sbx_jail_private_mounts(void)
{
	/* Nothing mounted here propagates back to the host, and nothing the
	 * host mounts later appears in the sandbox. */
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ? -errno : 0;
}

/* After EACCES on |path|: whether it stays out of reach for good, i.e. no
 * directory above it that refuses the search belongs to this user (who
 * could chmod it open from inside the sandbox: neither Landlock nor the
 * filter stops chmod). In a user namespace an unmapped owner shows as the
 * overflow uid: for a user who is that uid (nobody), every closed
 * directory looks like their own, and the answer is no (fail closed). */
static bool unreachable_for_good(const char *path)
{
	char *d = wd_strdup(path);
	bool good = true;
	for (char *s = strrchr(d, '/'); s && s != d; s = strrchr(d, '/')) {
		*s = '\0';
		struct stat st;
		if (stat(d, &st) == 0 && st.st_uid == getuid() && access(d, X_OK) != 0) {
			good = false;
			break;
		}
	}
	free(d);
	return good;
}

int sbx_jail_hide(const char *path)
{
	struct stat st;
	/* Absent is hidden. So is what this process cannot even reach for
	 * good (in a user namespace, say a HOME under /root): the agent has
	 * the same uid and groups and fewer capabilities. A place behind a
	 * directory of the user's own that is merely closed now cannot be
	 * hidden, and that fails the set-up. */
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == EACCES)
			return unreachable_for_good(path) ? 0 : -EACCES;
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		/* Mounting over a symlink would follow it: hide its target
		 * when that is a place of its own, else leave it dangling. */
		if (stat(path, &st) < 0)
			return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		if (mount("warden-hidden", path, "tmpfs",
			  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0500") < 0)
			return -errno;
		return 0;
	}
	/* A file: an empty, read-only one in its place. */
	if (mount("/dev/null", path, NULL, MS_BIND, NULL) < 0)
		return -errno;
	if (mount(NULL, path, NULL,
		  MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	return 0;
}

int sbx_jail_proc(void)
{
	/* A /proc of the agent's own PID namespace: no /proc/PID of the
	 * supervisor or of any process outside leads around the view. */
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=0") < 0 &&
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	return 0;
}

struct devnode {
	const char *name;
	unsigned maj, min;
};

static const struct devnode devnodes[] = {
	{"null", 1, 3},	  {"zero", 1, 5},    {"full", 1, 7},
	{"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0},
};

int sbx_jail_dev(int shm)
{
	/* A fresh /dev with only harmless devices: no block device, no
	 * /dev/mem, nothing that reaches the disk under the view. */
	if (mount("warden-dev", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") < 0)
		return -errno;
	for (size_t i = 0; i < WD_ARRAY_SIZE(devnodes); i++) {
		char p[64];
		snprintf(p, sizeof(p), "/dev/%s", devnodes[i].name);
		if (mknod(p, S_IFCHR | 0666, makedev(devnodes[i].maj, devnodes[i].min)) < 0)
			return -errno;
		chmod(p, 0666); /* the umask must not narrow it */
	}
	if (mkdir("/dev/pts", 0755) < 0 || mkdir("/dev/shm", 01777) < 0)
		return -errno;
	if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		  "newinstance,ptmxmode=0666,mode=0620") < 0)
		return -errno;
	if (shm >= 0) {
		if (syscall(SYS_move_mount, shm, "", AT_FDCWD, "/dev/shm",
			    MOVE_MOUNT_F_EMPTY_PATH) < 0)
			return -errno;
	} else {
		if (mount("warden-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0)
			return -errno;
		chmod("/dev/shm", 01777);
	}
	if (symlink("pts/ptmx", "/dev/ptmx") < 0 || symlink("/proc/self/fd", "/dev/fd") < 0 ||
	    symlink("/proc/self/fd/0", "/dev/stdin") < 0 ||
	    symlink("/proc/self/fd/1", "/dev/stdout") < 0 ||
	    symlink("/proc/self/fd/2", "/dev/stderr") < 0)
		return -errno;
	return 0;
}

int sbx_jail_bind_open(const char *src, bool writable)
{
	/* Recursive: in a user namespace a copy without the mounts below its
	 * source would reveal what they cover, and the kernel refuses it. */
	int fd = (int)syscall(SYS_open_tree, AT_FDCWD, src,
			      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (fd < 0)
		return -errno;
	/* Only adds flags: one the kernel locked (a user namespace) stays. */
	struct mount_attr a = {
		.attr_set =
			MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (writable ? 0 : MOUNT_ATTR_RDONLY),
	};
	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int sbx_jail_copy_dir(int dir, uint64_t attr_set, uint64_t *mnt_id)
{
	wd_autoclose int m = (int)syscall(SYS_open_tree, dir, "",
					  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (m < 0)
		return -errno;
	/* Private: a copy of a shared mount (systemd makes / shared) would be
	 * its peer, and a mount the host makes below it later would appear
	 * in the copy too, under no mark of the split view's
	 * (test_split_host_mount_not_propagated). */
	struct mount_attr a = {.attr_set = attr_set, .propagation = MS_PRIVATE};
	if (syscall(SYS_mount_setattr, m, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0)
		return -errno;
	if (mnt_id) {
		int rc = sbx_jail_mnt_id(m, mnt_id);
		if (rc < 0)
			return rc;
	}
	return wd_steal_fd(&m);
}

/* Linux 6.8 (the unique mount id, statmount) and 6.11 (statmount in
 * another namespace, a namespace's id): Debian 12's headers have none. */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
#ifndef __NR_statmount
#define __NR_statmount 457
#endif
#define SBX_NS_GET_MNTNS_ID	_IOR(0xb7, 0x5, uint64_t)
#define SBX_STATMOUNT_MNT_BASIC 0x2ULL
struct sbx_mnt_id_req {
	uint32_t size, spare;
	uint64_t mnt_id, param, mnt_ns_id;
};

int sbx_jail_mnt_id(int fd, uint64_t *id)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID_UNIQUE, &sx) < 0)
		return -errno;
	if (!(sx.stx_mask & STATX_MNT_ID_UNIQUE))
		return -ENOSYS;
	*id = sx.stx_mnt_id;
	return 0;
}

int sbx_jail_mntns_id(int ns_fd, uint64_t *id)
{
	return ioctl(ns_fd, SBX_NS_GET_MNTNS_ID, id) < 0 ? -errno : 0;
}

int sbx_jail_mount_in_ns(int fd, uint64_t ns_id)
{
	uint64_t id = 0;
	int rc = sbx_jail_mnt_id(fd, &id);
	return rc < 0 ? rc : sbx_jail_mount_id_in_ns(id, ns_id);
}

int sbx_jail_mount_id_in_ns(uint64_t id, uint64_t ns_id)
{
	/* statmount finds a mount only among those of the namespace asked
	 * for: one unmounted (by anyone, the kernel's d_invalidate
	 * included) belongs to none. The unique id is never reused. */
	struct sbx_mnt_id_req req = {.size = sizeof(req),
				     .mnt_id = id,
				     .param = SBX_STATMOUNT_MNT_BASIC,
				     .mnt_ns_id = ns_id};
	uint64_t buf[512];
	if (syscall(__NR_statmount, &req, buf, sizeof(buf), 0) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

bool sbx_jail_is_view_dir(int fd, dev_t view_dev, ino_t ino)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == view_dev &&
	       st.st_ino == ino;
}

int sbx_jail_make_path(const char *path, mode_t type)
{
	struct stat st;
	if (lstat(path, &st) == 0)
		return 0;
	if (path[0] != '/')
		return -EINVAL;
	/* Component by component from "/", never through a symlink: init
	 * runs before the agent, so nothing in the private directories is
	 * the agent's yet, but a shared directory shows the host's. */
	wd_autofree char *copy = wd_strdup(path);
	wd_autoclose int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	char *save = NULL;
	char *comp = strtok_r(copy, "/", &save);
	while (comp) {
		char *next = strtok_r(NULL, "/", &save);
		if (!next && type != S_IFDIR) {
			int fd = openat(dir, comp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
					0644);
			if (fd < 0)
				return -errno;
			close(fd);
			return 0;
		}
		if (mkdirat(dir, comp, 0755) < 0 && errno != EEXIST)
			return -errno;
		int sub = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			return -errno;
		close(dir);
		dir = sub;
		comp = next;
	}
	return 0;
}

int sbx_jail_bind_attach(int fd, const char *dst, bool make)
{
	struct stat st;
	if (make) {
		if (fstat(fd, &st) < 0)
			return -errno;
		int rc = sbx_jail_make_path(dst, S_ISDIR(st.st_mode) ? S_IFDIR : S_IFREG);
		if (rc < 0)
			return rc;
	}
	/* A place shared inside a private directory is reached as the host
	 * reaches it (through a symlink in a shared directory); the private
	 * directories and .warden/ themselves are checked to be directories
	 * and are not followed. */
	if (syscall(SYS_move_mount, fd, "", AT_FDCWD, dst,
		    MOVE_MOUNT_F_EMPTY_PATH | (make ? MOVE_MOUNT_T_SYMLINKS : 0)) < 0)
		return -errno;
	return 0;
}

int sbx_jail_drop_caps(void)
{
	/* Bounding set first (needs CAP_SETPCAP, which we still hold), then
	 * ambient, then the three sets: after exec, with NO_NEW_PRIVS and an
	 * empty bounding set, nothing can give them back. */
	for (int cap = 0; cap <= 63; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	return 0;
}

/* Write-like rights of each Landlock ABI. IOCTL_DEV (ABI 5) is left out:
 * terminals need their ioctls, and it is not a write. */
static uint64_t write_rights(int abi)
{
	uint64_t r = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
		     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
		     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
		     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
		     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	return r;
}

int sbx_jail_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

/* struct landlock_ruleset_attr as of ABI 6 (Debian 12's headers stop at
 * ABI 3's first field), and the ABI 6 scopes. */
struct ruleset_attr6 {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SCOPE_SIGNAL		   (1ULL << 1)

int sbx_jail_landlock(char *const *writable, int *abi_out)
{
	int abi = sbx_jail_landlock_abi();
	*abi_out = 0;
	if (abi <= 0)
		return -EOPNOTSUPP;
	uint64_t w = write_rights(abi);
	/*
	 * ABI 6 scopes the agent's tree: no connecting to an abstract Unix
	 * socket made outside it (the agent shares the host's network
	 * namespace, where the session bus, X11 and others listen on
	 * abstract names that no file permission guards), and no signal to a
	 * process outside it. The size passed is the one the running ABI
	 * knows, so older kernels get the struct they expect.
	 */
	struct ruleset_attr6 attr = {.handled_access_fs = w};
	size_t size = offsetof(struct ruleset_attr6, handled_access_net);
	if (abi >= 6) {
		attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	wd_autoclose int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0)
		return -errno;
	for (size_t i = 0; writable && writable[i]; i++) {
		wd_autoclose int fd = open(writable[i], O_PATH | O_CLOEXEC);
		if (fd < 0)
			continue; /* a place that does not exist needs no rule */
		struct stat st;
		if (fstat(fd, &st) < 0)
			return -errno;
		/* Directory rights only make sense on directories. */
		uint64_t allowed = S_ISDIR(st.st_mode)
					   ? w
					   : (w & (LANDLOCK_ACCESS_FS_WRITE_FILE |
						   (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0)));
		struct landlock_path_beneath_attr pb = {.allowed_access = allowed, .parent_fd = fd};
		if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
			return -errno;
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		return -errno;
	*abi_out = abi;
	return 0;
}
