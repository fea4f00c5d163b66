/*
 * ident_int.h: resolving an exec's path as its caller would, and the
 * identity facts about what it found (ident.c). Shared by the exec decoder
 * (notify.c); not part of the sandbox's interface.
 */
#ifndef WARDEN_IDENT_INT_H
#define WARDEN_IDENT_INT_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "creds_int.h"
#include "sandbox.h"

/* The kernel follows at most this many symlinks in one lookup. */
#define SBX_WALK_LINKS 40

/* What a walk found. Every fd is owned by the walk: sbx_walk_free(). */
struct sbx_walk {
	int fd;			      /* O_PATH of the final object, -1 on failure */
	int dirfd;		      /* O_PATH of the directory it was found in; -1 when it was
			    reached through a /proc magic link or a caller's fd */
	struct stat st;		      /* fstat of |fd| */
	size_t nlinks;		      /* symlinks followed on the way */
	int link_dir[SBX_WALK_LINKS]; /* the directory each lay in */
	struct stat link_st[SBX_WALK_LINKS];
};

/* The caller a walk resolves for: its ids as its own /proc names them (for
 * /proc/self and /proc/thread-self), read on first need. */
struct sbx_walk_caller {
	pid_t pid;	       /* in the supervisor's pid namespace */
	pid_t ns_tgid, ns_tid; /* 0 until read */
};

/*
 * Resolves |path| as the caller's own lookup does: an absolute path (and an
 * absolute symlink met on the way) from |root| (the caller's root), a
 * relative one from |start| (its cwd or its dirfd); ".." never climbs above
 * |root|; /proc/self and /proc/thread-self of a proc mount name the caller;
 * a /proc magic link (exe, cwd, fd/N) is followed by the kernel. Follows
 * the final symlink when |follow|. Permission checks are the kernel's, made
 * with the credentials the calling thread has (see sbx_creds_enter()).
 * Returns 0 and fills |w|, or -errno as the kernel's lookup would fail (w->fd
 * is -1; free it all the same).
 */
int sbx_walk_path(int root, int start, const char *path, bool follow, struct sbx_walk_caller *c,
		  struct sbx_walk *w);
void sbx_walk_free(struct sbx_walk *w);

/* Whether the object |st| (the program's file or a symlink on the way),
 * found in directory |dirfd| (-1: unknown, so |fd| is re-found by its
 * path), can have been written by the agent. When it can, *writable_why
 * says why (a fact for the decision, not an error; caller frees). */
bool sbx_places_writable(const struct sbx_places *pl, int root, int dirfd, int fd,
			 const struct stat *st, char **writable_why);
/* How many walks up sbx_places_writable() answered from its memo (for the
 * tests that show the memo is used and never stale). */
size_t sbx_places_memo_hits(const struct sbx_places *pl);

#endif
