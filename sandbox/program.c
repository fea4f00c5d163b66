/*
 * program.c: finding the program an exec names as the caller's exec finds
 * it, and predicting the image and argv the exec event must show.
 */
#include "notify_int.h"
#include "ident_int.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SCRIPT_DEPTH 4 /* the kernel allows a few nested interpreters */

/* The name the kernel gives the script to its interpreter (bprm->filename). */
static char *kernel_filename(const struct sbx_exec_event *ev, int dirfd, int flags)
{
	if (ev->syscall_nr == __NR_execveat && ev->path_arg[0] != '/' && dirfd != AT_FDCWD) {
		if (ev->path_arg[0] == '\0' && (flags & AT_EMPTY_PATH))
			return wd_asprintf("/dev/fd/%d", dirfd);
		return wd_asprintf("/dev/fd/%d/%s", dirfd, ev->path_arg);
	}
	return wd_strdup(ev->path_arg);
}

/* Where the decoder finds the programs' places and the callers'
 * credentials. */
static const struct sbx_places *notify_places;

void sbx_notify_set_places(const struct sbx_places *pl)
{
	notify_places = pl;
}

/*
 * The caller's credentials, for resolving as the caller. Every process of
 * the sandbox runs with no capability and NO_NEW_PRIVS, so none can change
 * its groups or gain a capability: a caller whose ids (from its pidfd, the
 * same call that names its process) equal those seen before has the groups
 * and capabilities seen then. Anything else reads /proc/PID/status.
 */
static struct {
	bool have;
	uint32_t ids[8];
	struct sbx_creds c;
} creds_memo;

/* The caller's credentials: the memo's when its ids match (no copy), else
 * read into |tmp| (the caller releases it) and remembered. */
static int caller_creds(pid_t pid, const uint32_t *ids, struct sbx_creds *tmp,
			const struct sbx_creds **out)
{
	*out = NULL;
	if (ids && creds_memo.have && memcmp(ids, creds_memo.ids, sizeof(creds_memo.ids)) == 0) {
		*out = &creds_memo.c;
		return 0;
	}
	int rc = sbx_creds_of(pid, tmp, NULL, NULL);
	if (rc == 0 && ids) {
		creds_memo.have = true;
		memcpy(creds_memo.ids, ids, sizeof(creds_memo.ids));
		sbx_creds_release(&creds_memo.c);
		sbx_creds_copy(&creds_memo.c, tmp);
	}
	if (rc == 0)
		*out = tmp;
	return rc;
}

/* What the kernel's exec checks on the file itself (do_open_execat): a
 * regular file, exec permission for the caller (the thread holds its
 * credentials), not on a noexec mount: faccessat2 with AT_EACCESS checks
 * exactly these with the thread's own credentials. 0 or -errno. */
static int exec_access(int fd, const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return -EACCES;
	if (syscall(SYS_faccessat2, fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) < 0)
		return -errno;
	return 0;
}

/* Notes in |ev| that the agent can have written what |w| found: the file
 * or a symlink on the way. */
static void note_writable(struct sbx_exec_event *ev, int root, const struct sbx_walk *w)
{
	if (ev->agent_writable || !notify_places)
		return;
	char *why = NULL;
	bool bad = sbx_places_writable(notify_places, root, w->dirfd, w->fd, &w->st, &why);
	for (size_t i = 0; !bad && i < w->nlinks; i++) {
		free(why);
		why = NULL;
		bad = sbx_places_writable(notify_places, root, w->link_dir[i], w->link_dir[i],
					  &w->link_st[i], &why);
		if (bad) {
			char *t = wd_asprintf("%s (a symlink on the way)", why ? why : "?");
			free(why);
			why = t;
		}
	}
	if (bad) {
		ev->agent_writable = true;
		ev->writable_why = why ? why : wd_strdup("written where the agent can write");
	} else {
		free(why);
	}
}

/*
 * Finds |path| as the caller's exec would: in its root, from |base|, with
 * its credentials, and checks the file as the kernel's exec does. Fills |w|
 * and returns 0, or -errno (the exec fails so). The supervisor takes on the
 * caller's credentials for this thread only and for the walk only.
 */
static int find_as_caller(struct sbx_exec_event *ev, int root, int base, const char *path,
			  bool follow, const uint32_t *ids, struct sbx_walk *w)
{
	*w = (struct sbx_walk){.fd = -1, .dirfd = -1};
	struct sbx_creds tmp = {0};
	const struct sbx_creds *cr;
	struct sbx_creds_saved sv;
	int entered = caller_creds(ev->pid, ids, &tmp, &cr);
	if (entered == 0)
		entered = sbx_creds_enter(cr, SBX_CREDS_LOOKUP, &sv);
	sbx_creds_release(&tmp);
	if (entered < 0) {
		/* Not the kernel's answer: refused, and the reason says why. */
		sbx_exec_refuse(
			ev, EACCES,
			"warden could not take on the caller's credentials to find its program");
		return -EACCES;
	}
	struct sbx_walk_caller wc = {.pid = ev->pid};
	int rc;
	if (path[0] == '\0') {
		/* execveat(fd, "", AT_EMPTY_PATH): the caller's own fd. */
		w->fd = base >= 0 ? dup(base) : -1;
		rc = w->fd < 0 ? -EBADF : fstat(w->fd, &w->st) < 0 ? -errno : 0;
	} else if (path[0] != '/' && base < 0) {
		rc = -EBADF;
	} else {
		rc = sbx_walk_path(root, path[0] == '/' ? root : base, path, follow, &wc, w);
	}
	if (rc == 0)
		rc = exec_access(w->fd, &w->st);
	sbx_creds_leave(&sv);
	if (rc < 0)
		sbx_walk_free(w);
	return rc;
}

/* The caller's cwd (O_PATH), opened on first use: most programs are run by
 * absolute path and never need it. -1 when it cannot be opened. */
static int caller_cwd(pid_t pid, int *cwdfd)
{
	if (*cwdfd < 0)
		*cwdfd = sbx_proc_open(pid, "cwd");
	return *cwdfd;
}

/* Fills dev/ino, interp, expect_argv and exe_dev/exe_ino: what the exec
 * event must show if the kernel runs what we looked at. |fd| and |st| are
 * the program's file. An interpreter is found as the kernel finds it (from
 * the caller's cwd when relative, with its credentials); one that cannot be
 * found or executed fails the exec, as the kernel would. */
static void predict_image(struct sbx_exec_event *ev, int root, int fd, struct stat st, int dirfd,
			  int flags, int *cwdfd, const uint32_t *ids)
{
	ev->found = true;
	ev->dev = st.st_dev;
	ev->ino = st.st_ino;
	ev->exe_dev = st.st_dev;
	ev->exe_ino = st.st_ino;
	char **argv = wd_strv_dup(ev->argv, NULL);
	char *filename = kernel_filename(ev, dirfd, flags);
	/* |fd| is the caller's to close; each interpreter's walk is ours.
	 * |st| describes |cur| on entry to each round. */
	int cur = fd;
	struct sbx_walk iw = {.fd = -1, .dirfd = -1};
	for (int depth = 0; depth < SCRIPT_DEPTH; depth++) {
		char *interp = NULL, *arg = NULL;
		if (!sbx_shebang_of(cur, &st, &interp, &arg))
			break;
		/* binfmt_script: argv[0] is replaced by interp [arg] filename. */
		size_t n = 0;
		while (argv[n])
			n++;
		char **nv = wd_calloc(n + 3, sizeof(char *));
		size_t k = 0;
		nv[k++] = wd_strdup(interp);
		if (arg)
			nv[k++] = wd_strdup(arg);
		nv[k++] = filename;
		for (size_t i = 1; i < n; i++)
			nv[k++] = argv[i];
		free(argv[0]);
		free(argv);
		argv = nv;
		filename = wd_strdup(interp);
		if (!ev->interp)
			ev->interp = wd_strdup(interp);
		sbx_walk_free(&iw);
		int rc =
			find_as_caller(ev, root, interp[0] == '/' ? -1 : caller_cwd(ev->pid, cwdfd),
				       interp, true, ids, &iw);
		free(interp);
		free(arg);
		if (rc < 0) {
			/* The kernel fails the exec: no interpreter to run. */
			ev->found = false;
			ev->open_errno = -rc;
			break;
		}
		note_writable(ev, root, &iw);
		cur = iw.fd;
		st = iw.st;
		ev->exe_dev = st.st_dev;
		ev->exe_ino = st.st_ino;
	}
	sbx_walk_free(&iw);
	free(filename);
	ev->expect_argv = argv;
}

void sbx_exec_refuse(struct sbx_exec_event *ev, int err, const char *why)
{
	if (!ev->refuse_errno) {
		ev->refuse_errno = err;
		ev->refuse_reason = wd_strdup(why);
	}
}

/*
 * Finds the program as the caller's exec will (ident.c: in the caller's
 * root, cwd and credentials), fills the path strings, the identity the exec
 * event must show, and whether the agent can have written the program. When
 * nothing races, this is the file the exec opens; when something does, the
 * exec event compares identities and kills the difference (sbx_verify_exec),
 * so a lookup that is right when nothing races is all the decision needs.
 */
void sbx_exec_resolve(struct sbx_exec_event *ev, int root, int dirfd, int flags,
		      const uint32_t *ids)
{
	wd_autoclose int cwdfd = -1;
	wd_autoclose int dirbase = -1; /* execveat's dirfd, as the caller has it */
	wd_autoclose int own_root = -1;
	int base = -1; /* where a relative path starts: dirbase or cwdfd */
	char *base_path = NULL;
	if (ev->syscall_nr == __NR_execveat && dirfd != AT_FDCWD && ev->path_arg[0] != '/') {
		char what[32];
		snprintf(what, sizeof(what), "fd/%d", dirfd);
		base = dirbase = sbx_proc_open(ev->pid, what);
		base_path = sbx_proc_link(ev->pid, what);
	} else {
		if (ev->path_arg[0] != '/')
			base = caller_cwd(ev->pid, &cwdfd);
		base_path = ev->cwd ? wd_strdup(ev->cwd) : NULL;
	}
	if (ev->path_arg[0] == '/')
		ev->path = wd_strdup(ev->path_arg);
	else if (ev->path_arg[0] == '\0')
		ev->path = wd_strdup(base_path ? base_path : "?");
	else
		ev->path = wd_asprintf("%s/%s", base_path ? base_path : "?", ev->path_arg);
	free(base_path);
	if (root < 0)
		root = own_root = sbx_proc_open(ev->pid, "root");

	struct sbx_walk w;
	int rc = -ENOENT;
	if (root >= 0 && (ev->path_arg[0] != '\0' || (flags & AT_EMPTY_PATH)))
		rc = find_as_caller(ev, root, base, ev->path_arg, !(flags & AT_SYMLINK_NOFOLLOW),
				    ids, &w);
	if (rc < 0) {
		/* The exec would fail the same way: the caller answers with
		 * this errno and never lets the syscall continue. */
		ev->open_errno = -rc;
		return;
	}
	ev->resolved = sbx_fd_path(w.fd);
	note_writable(ev, root, &w);
	predict_image(ev, root, w.fd, w.st, dirfd, flags, &cwdfd, ids);
	sbx_walk_free(&w);
}

int sbx_program_identity(const struct sbx_places *pl, const char *path, char **resolved,
			 bool *agent_writable, char **writable_why)
{
	*resolved = NULL;
	*agent_writable = false;
	*writable_why = NULL;
	wd_autoclose int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	wd_autoclose int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || cwd < 0)
		return -errno;
	struct sbx_walk w;
	struct sbx_walk_caller c = {.pid = getpid()};
	int rc = sbx_walk_path(root, path[0] == '/' ? root : cwd, path, true, &c, &w);
	if (rc == 0)
		rc = exec_access(w.fd, &w.st);
	if (rc < 0) {
		sbx_walk_free(&w);
		return rc;
	}
	*resolved = sbx_fd_path(w.fd);
	struct sbx_exec_event ev = {0};
	const struct sbx_places *saved = notify_places;
	notify_places = pl;
	note_writable(&ev, root, &w);
	notify_places = saved;
	*agent_writable = ev.agent_writable;
	*writable_why = ev.writable_why;
	sbx_walk_free(&w);
	return 0;
}
