/*
 * pts_int.h: the agent's own terminal nodes under the sandbox's /dev/pts
 * (pts.c), for spawn.c only.
 */
#ifndef WARDEN_PTS_INT_H
#define WARDEN_PTS_INT_H

#include <stddef.h>
#include <sys/types.h>

#define JAIL_PTS_MAX 3 /* stdin, stdout, stderr */

struct sbx_jail_pts {
	int mnt[JAIL_PTS_MAX];	      /* detached clones of the nodes, until attached */
	unsigned index[JAIL_PTS_MAX]; /* K of /dev/pts/K */
	dev_t rdev[JAIL_PTS_MAX];
	int hold[JAIL_PTS_MAX]; /* the private pty K's master, kept by init */
	size_t n;
};

/* In init, before the sandbox's /dev is mounted: a detached clone of the
 * node of each of fds 0-2 that is a pty of the host shown at /dev/pts/K
 * (checked to be that descriptor's inode). Finds none on any doubt. */
void sbx_jail_pts_collect(struct sbx_jail_pts *pts);
/* In a user namespace, where /dev is the host's: a devpts instance of the
 * sandbox's own over /dev/pts (sbx_jail_dev makes it as root). 0 or -errno. */
int sbx_jail_pts_private(void);
/* When the private devpts cannot be mounted: an empty, read-only tmpfs
 * over the host's /dev/pts, so that no terminal of the host is reachable
 * by name and /dev/ptmx opens none. 0 or -errno. */
int sbx_jail_pts_empty(void);
/* After the private devpts is mounted on /dev/pts: attaches each node at
 * /dev/pts/K, K reserved in the private instance by a master kept in
 * pts->hold. 0 or -errno (the nodes not attached are then not shown). */
int sbx_jail_pts_attach(struct sbx_jail_pts *pts);
/* Moves the held masters to fds |first|, first+1...; returns the next
 * free fd (init closes from there), or -errno. */
int sbx_jail_pts_keep(struct sbx_jail_pts *pts, int first);
/* Closes everything (a failed set-up). */
void sbx_jail_pts_drop(struct sbx_jail_pts *pts);

#endif
