/*
 * creds_int.h: a caller's credentials (creds.c), read once and taken on by
 * a thread of the supervisor to act as the caller: to resolve a path for
 * the exec decoder (ident.c, program.c) or to do a socket call on its
 * behalf (sock.c). Not part of the sandbox's interface.
 */
#ifndef WARDEN_CREDS_INT_H
#define WARDEN_CREDS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox.h"

#include <linux/capability.h>

/* A thread's own credentials, as a lookup changes and restores them. */
#define SBX_OWN_GROUPS_MAX 256
struct sbx_creds_own {
	uid_t fsuid;
	gid_t fsgid;
	size_t ngroups;
	gid_t *groups;			       /* the thread's memo, or |heap| */
	gid_t *heap;			       /* groups beyond SBX_OWN_GROUPS_MAX, malloc'd */
	struct __user_cap_data_struct caps[2]; /* effective, permitted, inheritable */
};

/* What the calling thread's own credentials were, to be put back. */
struct sbx_creds_saved {
	bool changed;
	bool groups, gid, uid, caps; /* what sbx_creds_leave() puts back */
	struct sbx_creds_own own;
};

/* Reads the credentials of |pid| from /proc/PID/status into |c| (free with
 * sbx_creds_release()), and, when not NULL, its tgid and thread count.
 * 0, or -errno with |c| empty. */
int sbx_creds_of(pid_t pid, struct sbx_creds *c, pid_t *tgid, unsigned *threads);
/* A deep copy of |src| into |dst| (free with sbx_creds_release()). */
void sbx_creds_copy(struct sbx_creds *dst, const struct sbx_creds *src);
/* Frees what |c| holds; |c| is left empty. */
void sbx_creds_release(struct sbx_creds *c);

/* How sbx_creds_enter() takes on a caller's credentials. */
enum sbx_creds_scope {
	/* For a lookup, until sbx_creds_leave(): fsuid, fsgid, groups, and
	 * the effective capabilities the caller has too. */
	SBX_CREDS_LOOKUP,
	/* For good, on a thread that ends afterwards: every uid, gid and
	 * group (as root), and no capability in any set. */
	SBX_CREDS_FOR_GOOD,
};

/* Takes on |c| for the calling thread only (raw system calls, not the C
 * library's, which would change every thread), so that the kernel checks
 * what the thread does as it would for the caller. 0, or -errno when this
 * thread cannot become the caller (SBX_CREDS_LOOKUP: -EPERM, and nothing
 * changed). After a SBX_CREDS_LOOKUP that succeeded, sbx_creds_leave(|s|)
 * puts the thread's own credentials back. */
/* This thread only (raw system calls: glibc's wrappers change every thread
 * of the process): the groups, then every gid and uid of |c|, fsgid and
 * fsuid checked. 0 or -errno. Needs CAP_SETUID and CAP_SETGID. */
int sbx_creds_set_ids(const struct sbx_creds *c);
int sbx_creds_enter(const struct sbx_creds *c, enum sbx_creds_scope scope,
		    struct sbx_creds_saved *s);
/* Puts the thread's own credentials back after SBX_CREDS_LOOKUP; dies when
 * it cannot. */
void sbx_creds_leave(struct sbx_creds_saved *s);

#endif
