/*
 * jail_int.h: the child's set-up steps (jail.c), for spawn.c only.
 */
#ifndef WARDEN_JAIL_INT_H
#define WARDEN_JAIL_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

int sbx_jail_private_mounts(void);
/* Hides |path|: an empty read-only tmpfs over a directory, an empty
 * read-only file over a file; absent paths need nothing. */
int sbx_jail_hide(const char *path);
/* Mounts a /proc of the current PID namespace. */
int sbx_jail_proc(void);
/* A minimal /dev (needs CAP_MKNOD: root). /dev/shm is the detached mount
 * |shm| (sbx_jail_bind_open) when it is >= 0, else a fresh tmpfs. */
int sbx_jail_dev(int shm);
/* A detached copy of the mount tree at |src| (followed), nosuid, nodev and,
 * unless |writable|, read-only: the fd (O_CLOEXEC) or -errno. */
int sbx_jail_bind_open(const char *src, bool writable);
/* A detached, private, non-recursive copy of the directory |dir| (a
 * mount of the caller's namespace) with the MOUNT_ATTR_* |attr_set|: the fd
 * (O_CLOEXEC) or -errno; its mount id in |mnt_id| when not NULL. */
int sbx_jail_copy_dir(int dir, uint64_t attr_set, uint64_t *mnt_id);
/* The unique id (never reused) of the mount |fd| is on: 0 or -errno. */
int sbx_jail_mnt_id(int fd, uint64_t *id);
/* The id of the mount namespace |ns_fd| (/proc/PID/ns/mnt): 0 or -errno. */
int sbx_jail_mntns_id(int ns_fd, uint64_t *id);
/* Whether the mount |fd| is on is attached in the mount namespace |ns_id|:
 * 1 yes, 0 no (detached, or another namespace's), -errno when the kernel
 * cannot say. The split view's names depend on it (docs/design.md, "Names
 * from a detached mount are not the project's"). */
int sbx_jail_mount_in_ns(int fd, uint64_t ns_id);
/* The same for the mount of unique id |id|. */
int sbx_jail_mount_id_in_ns(uint64_t id, uint64_t ns_id);
/* |fd| (the view's entry for a fast subtree) is a directory of the view
 * (|view_dev|) and the backing directory |ino| (the view gives backing
 * inode numbers): init's start attach and the detacher check the same. */
bool sbx_jail_is_view_dir(int fd, dev_t view_dev, ino_t ino);
/* Attaches the detached mount |fd| at |dst|. When |make| (dst lies in a
 * private directory: a final symlink is followed), a missing |dst| is first
 * created, component by component without following a symlink, as an
 * empty directory, or an empty file when |fd| is not a directory. */
int sbx_jail_bind_attach(int fd, const char *dst, bool make);
/* Creates |path| like sbx_jail_bind_attach's |make| (type S_IFDIR or S_IFREG);
 * an existing one is left as it is. */
int sbx_jail_make_path(const char *path, mode_t type);
/* Drops every capability from every set. */
int sbx_jail_drop_caps(void);
/* The Landlock ABI of the running kernel, 0 when none. */
int sbx_jail_landlock_abi(void);
/* Restricts writes to |writable| (NULL-terminated). Sets *abi to the ABI
 * used. -EOPNOTSUPP when Landlock is unavailable. */
int sbx_jail_landlock(char *const *writable, int *abi);

#endif
