/*
 * jail_int.h: the child's set-up steps (jail.c), for spawn.c only.
 */
#ifndef WARDEN_JAIL_INT_H
#define WARDEN_JAIL_INT_H

int jail_private_mounts(void);
/* Hides |path|: an empty read-only tmpfs over a directory, an empty
 * read-only file over a file; absent paths need nothing. */
int jail_hide(const char *path);
/* Mounts a /proc of the current PID namespace. */
int jail_proc(void);
/* A minimal /dev (needs CAP_MKNOD: root). */
int jail_dev(void);
/* Drops every capability from every set. */
int jail_drop_caps(void);
/* The Landlock ABI of the running kernel, 0 when none. */
int jail_landlock_abi(void);
/* Restricts writes to |writable| (NULL-terminated). Sets *abi to the ABI
 * used. -EOPNOTSUPP when Landlock is unavailable. */
int jail_landlock(char *const *writable, int *abi);

#endif
