/*
 * emul_int.h: what emul.c shares with emul_aux.c, the emulation's threads
 * that are not workers (the detacher and the backer). Not part of the
 * sandbox's interface: the supervisor uses sandbox.h.
 */
#ifndef WARDEN_EMUL_INT_H
#define WARDEN_EMUL_INT_H

#include <stdbool.h>
#include <sys/stat.h>

#include "creds_int.h"
#include "sandbox.h"

/* The agent's uids, gids and groups (as |c| says), and NO_NEW_PRIVS, for
 * the calling thread only (raw system calls: the C library's would change
 * every thread of the supervisor). 0 or -errno. */
int sbx_emul_take_creds(const struct sbx_creds *c);

/* One thread that serves one request at a time. */
struct sbx_emul_aux;
/* Stops and joins it; safe with NULL. Call only once no caller waits. */
void sbx_emul_aux_stop(struct sbx_emul_aux *h);

/* The detacher: joins the mount namespace |mntns_fd| and the root
 * |root_fd| and keeps its capabilities (the descriptors are borrowed and
 * must outlive it; |host_proc_fd| is the host's /proc). */
int sbx_emul_detacher_start(int mntns_fd, int root_fd, int host_proc_fd, struct sbx_emul_aux **out);
/* Unmounts (MNT_DETACH) the mount whose root |fd| (an O_PATH descriptor of
 * the caller's process) is. 0 or -errno. */
int sbx_emul_detach(struct sbx_emul_aux *h, int fd);

/* One side of a call made on the backing tree: the parent the worker
 * resolved in the sandbox (|pfd|, its project-relative path |prel|, ""
 * for the project's root), the last component, and what it held there. */
struct sbx_emul_bside {
	int pfd;
	const char *prel;
	const char *last;
	bool have;
	struct stat st;
};

/* The backer: the agent's credentials (|c|, read before this returns),
 * no capability, no Landlock domain, the supervisor's mount namespace;
 * |backing_fd| (taken, even on failure) is an O_PATH descriptor of the
 * project's backing tree. */
int sbx_emul_backer_start(const struct sbx_creds *c, int backing_fd, struct sbx_emul_aux **out);
/* The rename or link |op| with |flags| between |a| and |b|, made on the
 * backing tree when both parents and both objects are the ones the worker
 * saw (emul_aux.c says why that is safe). 0, -errno, or -EXDEV when
 * anything differs. */
long sbx_emul_backer_call(struct sbx_emul_aux *h, enum sbx_fs_op op, unsigned flags,
			  const struct sbx_emul_bside *a, const struct sbx_emul_bside *b);

#endif
