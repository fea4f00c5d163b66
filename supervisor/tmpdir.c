/*
 * tmpdir.c: the session's private temporary directories, and what is
 * shared with the host inside them.
 *
 * Each run gets a fresh directory under the host's /tmp holding tmp/,
 * var-tmp/ and shm/, which the sandbox binds over /tmp, /var/tmp and
 * /dev/shm; what must be seen is bound at its own path inside them
 * (sup_tmp_setup). At the end the directory is removed by descriptors only,
 * once every process of the sandbox is gone (sup_tmp_finish). It decides
 * nothing about writes: Landlock and the read-only binds do.
 * docs/design.md, section "Private temporary directories".
 */
#include "sup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

/* The directories made private: the sandbox's path and the subdirectory of
 * the session's directory bound there. */
static const struct {
	const char *path, *sub;
} privs[] = {{"/tmp", "tmp"}, {"/var/tmp", "var-tmp"}, {"/dev/shm", "shm"}};

static void sweep_stale(void);

/* |path| without repeated slashes, "." components or a trailing slash;
 * NULL when relative or holding "..". Caller frees. */
static char *clean_path(const char *path)
{
	if (!path || path[0] != '/')
		return NULL;
	struct wd_sb sb = {0};
	const char *s = path;
	while (*s) {
		while (*s == '/')
			s++;
		size_t n = strcspn(s, "/");
		if (n == 0)
			break;
		if (n == 2 && strncmp(s, "..", 2) == 0) {
			free(sb.buf);
			return NULL;
		}
		if (!(n == 1 && s[0] == '.')) {
			wd_sb_puts(&sb, "/");
			wd_sb_add(&sb, s, n);
		}
		s += n;
	}
	if (!sb.buf)
		return wd_strdup("/");
	return wd_sb_steal(&sb);
}

/* The private directory |path| lies strictly under, or NULL. */
static const char *private_root(struct sup_run *r, const char *path)
{
	for (size_t i = 0; r->private_dirs && r->private_dirs[i]; i++)
		if (strcmp(path, r->private_dirs[i]) != 0 &&
		    wd_path_within(path, r->private_dirs[i]))
			return r->private_dirs[i];
	return NULL;
}

struct cand {
	char *path;
	bool rw;
};

static int cand_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cand *)a)->path, ((const struct cand *)b)->path);
}

static void add_cand(struct sup_run *r, struct cand **v, size_t *n, const char *given, bool rw)
{
	char *p = clean_path(given);
	struct stat st;
	/* Only a place under a private directory needs a bind (elsewhere the
	 * host's is seen as before), and only one that exists. */
	if (!p || !private_root(r, p) || stat(p, &st) < 0 ||
	    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
		free(p);
		return;
	}
	*v = wd_realloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = (struct cand){p, rw};
}

static void add_bind(struct sup_run *r, char *src, const char *dst, bool rw, bool make)
{
	r->binds = wd_realloc(r->binds, (r->nbinds + 1) * sizeof(*r->binds));
	r->binds[r->nbinds++] = (struct sbx_bind){src, wd_strdup(dst), rw, make};
}

static void strv_push(char ***v, const char *s)
{
	size_t n = 0;
	while (*v && (*v)[n])
		n++;
	*v = wd_realloc(*v, (n + 2) * sizeof(char *));
	(*v)[n] = wd_strdup(s);
	(*v)[n + 1] = NULL;
}

/* mkdir -p of |rel| under |dirfd|, never through a symlink; the last
 * component gets |mode|. For the agent's TMPDIR inside its private /tmp,
 * made before the sandbox exists (nothing else writes there yet). */
static int make_under(int dirfd, const char *rel, mode_t mode)
{
	wd_autofree char *copy = wd_strdup(rel);
	int dir = dup(dirfd);
	if (dir < 0)
		return -errno;
	char *save = NULL;
	int rc = 0;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (mkdirat(dir, c, save && *save ? 0755 : mode) < 0 && errno != EEXIST) {
			rc = -errno;
			break;
		}
		int sub = openat(dir, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			rc = -errno;
			break;
		}
		close(dir);
		dir = sub;
	}
	close(dir);
	return rc;
}

/* Marks the session's directory as the person's: the sweep leaves it. */
static int keep_mark(struct sup_run *r)
{
	int mark = openat(r->tmp_fd, ".warden-kept", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (mark < 0)
		return -1;
	close(mark);
	return 0;
}

/* The session's directory: created 0700 by mkdtemp, opened, and checked to
 * be the directory just made (ours, 0700, not a symlink). */
static int make_session_dir(struct sup_run *r)
{
	char tmpl[] = "/tmp/warden-tmp-XXXXXX";
	if (!mkdtemp(tmpl))
		return -errno;
	r->tmp_dir = wd_strdup(tmpl);
	r->tmp_parent_fd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	r->tmp_fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (r->tmp_parent_fd < 0 || r->tmp_fd < 0 || fstat(r->tmp_fd, &st) < 0)
		return -errno;
	if (st.st_uid != geteuid() || (st.st_mode & 07777) != 0700)
		return -EPERM;
	/* Held until warden exits: the mark of a live session (sweep_stale).
	 * The sandbox's processes close their copies before the agent runs. */
	if (flock(r->tmp_fd, LOCK_EX | LOCK_NB) < 0)
		return -errno;
	/* --keep-tmp marks the directory now, not at the end: a warden
	 * killed with SIGKILL leaves it to the person, not to the sweep. */
	if (r->opts.keep_tmp && keep_mark(r) < 0)
		return -errno;
	for (size_t i = 0; i < WD_ARRAY_SIZE(privs); i++) {
		/* fchmod: the umask must not narrow the sticky 01777. */
		if (mkdirat(r->tmp_fd, privs[i].sub, 0700) < 0)
			return -errno;
		wd_autoclose int d = openat(r->tmp_fd, privs[i].sub,
					    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (d < 0 || fchmod(d, 01777) < 0)
			return -errno;
	}
	return 0;
}

/* Which of /tmp, /var/tmp and /dev/shm become private: a real directory
 * each (a /var/tmp that is a symlink to /tmp leads to the private /tmp
 * anyway). As root /dev is a fresh tmpfs with its own /dev/shm; in a user
 * namespace the host's must exist to be covered. */
static void private_binds(struct sup_run *r)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(privs); i++) {
		struct stat st;
		bool fresh_dev = i == 2 && geteuid() == 0;
		if (!fresh_dev && (lstat(privs[i].path, &st) < 0 || !S_ISDIR(st.st_mode)))
			continue;
		char *src = wd_asprintf("%s/%s", r->tmp_dir, privs[i].sub);
		strv_push(&r->private_dirs, privs[i].path);
		if (i == 2)
			r->shm_src = src;
		else
			add_bind(r, src, privs[i].path, true, false);
	}
}

/*
 * What is shared with the host, at its own path inside the private
 * directories (each only when it lies under one, and exists):
 *  - the project without the view (with the view, an empty mount
 *    point is made for the view instead): writable, as it is;
 *  - the writable list's places (the agent profile's, the config's
 *    "writable"): writable, as Landlock already allows;
 *  - the config's "tmp": {"share": [...]}: read-only, unless it lies
 *    in a writable place;
 *  - HOME and the working directory (outside the project): read-only,
 *    so that the agent starts where it was started and finds its
 *    configuration, and can change nothing there (a bind under /tmp
 *    would otherwise be writable under /tmp's Landlock rule).
 * Never the audit: absent from the sandbox, it is hidden.
 */
static struct cand *shared_places(struct sup_run *r, const char *project, const char *cwd,
				  const char *prog, char *const *writable, size_t *np)
{
	struct cand *v = NULL;
	size_t n = 0;
	if (r->opts.no_view)
		add_cand(r, &v, &n, project, true);
	for (size_t i = 0; writable && writable[i]; i++)
		add_cand(r, &v, &n, writable[i], true);
	for (size_t i = 0; i < pol_config_tmp_share_count(r->config); i++) {
		const char *s = pol_config_tmp_share(r->config, i);
		bool rw = false;
		for (size_t k = 0; writable && writable[k]; k++)
			if (wd_path_within(s, writable[k]) && private_root(r, writable[k]))
				rw = true;
		size_t before = n;
		add_cand(r, &v, &n, s, rw);
		if (n == before)
			wd_debug("tmp.share: %s does not exist: nothing to share", s);
	}
	for (size_t i = 0; r->opts.share_tmp[i]; i++)
		add_cand(r, &v, &n, r->opts.share_tmp[i], false);
	if (prog) {
		wd_autofree char *real = realpath(prog, NULL);
		char *slash = real ? strrchr(real, '/') : NULL;
		if (slash && slash != real) {
			*slash = '\0';
			add_cand(r, &v, &n, real, false);
		}
	}
	add_cand(r, &v, &n, getenv("HOME"), false);
	if (!wd_path_within(cwd, project))
		add_cand(r, &v, &n, cwd, false);
	*np = n;
	return v;
}

/* Binds the shared places |v| (taken), sorted, each once. */
static void bind_shared(struct sup_run *r, struct cand *v, size_t n, const char *project)
{
	qsort(v, n, sizeof(*v), cand_cmp);
	for (size_t i = 0; i < n; i++) {
		/* The same place twice: writable wins. */
		while (i + 1 < n && strcmp(v[i].path, v[i + 1].path) == 0) {
			v[i + 1].rw |= v[i].rw;
			free(v[i].path);
			v[i].path = NULL;
			i++;
		}
		bool skip = !r->opts.no_view && wd_path_within(v[i].path, project);
		/* Inside a place bound already: seen as it is there, unless a
		 * writable place is inside a read-only one. */
		for (size_t k = 0; k < i && !skip; k++)
			if (v[k].path && wd_path_within(v[i].path, v[k].path))
				skip = v[k].rw || !v[i].rw;
		if (skip) {
			free(v[i].path);
			v[i].path = NULL;
			continue;
		}
		add_bind(r, wd_strdup(v[i].path), v[i].path, v[i].rw, true);
		strv_push(&r->shared_dirs, v[i].path);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

/* The agent's TMPDIR under its private /tmp: an empty directory of its
 * own there, so that its tools find it. */
static void make_tmpdir_env(struct sup_run *r)
{
	wd_autofree char *td = clean_path(getenv("TMPDIR"));
	const char *root = td ? private_root(r, td) : NULL;
	for (size_t i = 0; root && i < WD_ARRAY_SIZE(privs); i++) {
		if (strcmp(root, privs[i].path) != 0 || i == 2)
			continue;
		wd_autoclose int sub = openat(r->tmp_fd, privs[i].sub,
					      O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 || make_under(sub, td + strlen(root) + 1, 0700) < 0)
			wd_warn("TMPDIR %s could not be made in the private %s", td, root);
	}
}

int sup_tmp_setup(struct sup_run *r, const char *project, const char *cwd, const char *prog,
		  char *const *writable)
{
	sweep_stale();
	int rc = make_session_dir(r);
	if (rc < 0) {
		wd_err("the session's private temporary directory could not be made under /tmp: "
		       "%s",
		       strerror(-rc));
		return rc;
	}
	private_binds(r);
	size_t n = 0;
	struct cand *v = shared_places(r, project, cwd, prog, writable, &n);
	bind_shared(r, v, n, project);
	make_tmpdir_env(r);
	wd_debug("private temporary directories in %s", r->tmp_dir);
	return 0;
}

/* ---- removal ------------------------------------------------------------ */

/* Directories deeper than this under the session's directory are moved up
 * to it (and emptied from there): the removal holds at most this many
 * descriptors and stack frames, however deep the agent's tree. */
#define RM_DEPTH 32

struct rm {
	int top;	  /* the session's directory */
	unsigned moved;	  /* directories moved up to |top| so far */
	uint64_t entries; /* entries seen, a bound on the work */
};

/* Opens the directory |name| in |dfd| for reading and emptying, never
 * following a symlink: a directory the agent made unreadable (000, 0500)
 * is its own, so it is made 0700 first, through an O_PATH descriptor of
 * that very directory. */
static int open_dir(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		wd_autoclose int p =
			openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (p < 0)
			return -errno;
		char via[64];
		snprintf(via, sizeof(via), "/proc/self/fd/%d", p);
		if (chmod(via, 0700) < 0)
			return -errno;
		fd = open(via, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0700) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static int rm_dir_contents(struct rm *m, int dfd, unsigned depth);

/* Removes the entry |name| of |dfd|: unlinkat never follows a symlink, and
 * a directory is opened with O_NOFOLLOW, emptied and removed. */
static int rm_entry(struct rm *m, int dfd, const char *name, unsigned depth)
{
	if (unlinkat(dfd, name, 0) == 0)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return errno == ENOENT ? 0 : -errno;
	if (depth >= RM_DEPTH) {
		/* Too deep: move it up to the top and empty it from there
		 * (rm_tree goes round until the top is empty). */
		for (;;) {
			char up[64];
			snprintf(up, sizeof(up), ".warden-deep-%u", m->moved++);
			if (renameat(dfd, name, m->top, up) == 0)
				return 0;
			if (errno != EEXIST && errno != ENOTEMPTY)
				return -errno;
		}
	}
	int sub = open_dir(dfd, name);
	if (sub < 0)
		return sub;
	int rc = rm_dir_contents(m, sub, depth + 1);
	close(sub);
	if (rc < 0)
		return rc;
	return unlinkat(dfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* Empties the directory |dfd| (read from the start until a pass finds it
 * empty: entries removed during a readdir may hide others). */
static int rm_dir_contents(struct rm *m, int dfd, unsigned depth)
{
	for (;;) {
		int d2 = dup(dfd);
		DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
		if (!d) {
			if (d2 >= 0)
				close(d2);
			return -errno;
		}
		rewinddir(d);
		bool any = false;
		int rc = 0;
		struct dirent *e;
		while (rc == 0 && (e = readdir(d))) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			if (++m->entries > 100000000ULL)
				rc = -E2BIG;
			else
				rc = rm_entry(m, dfd, e->d_name, depth);
			any = true;
		}
		closedir(d);
		if (rc < 0)
			return rc;
		if (!any)
			return 0;
	}
}

/* Removes the directory |name| of |parent| and everything below it, by
 * descriptors only (see rm_entry). 0 or -errno. */
static int remove_tree(int parent, const char *name, int top)
{
	struct rm m = {.top = top};
	int rc = rm_dir_contents(&m, top, 0);
	if (rc < 0)
		return rc;
	/* The name is removed only while it is still that directory. */
	struct stat a, b;
	if (fstat(top, &a) < 0 || fstatat(parent, name, &b, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return -ESTALE;
	return unlinkat(parent, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* Whether |fd| (a directory) holds exactly tmp/, var-tmp/ and shm/, and
 * maybe resolv.conf: a session's directory, and not one kept with
 * --keep-tmp. */
static bool session_shaped(int fd)
{
	int d2 = dup(fd);
	DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
	if (!d) {
		if (d2 >= 0)
			close(d2);
		return false;
	}
	size_t n = 0;
	bool ok = true;
	struct dirent *e;
	while (ok && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		/* The session resolver's resolv.conf (resolver.c), which a
		 * session has or not. */
		if (strcmp(e->d_name, "resolv.conf") == 0)
			continue;
		bool known = false;
		for (size_t i = 0; i < WD_ARRAY_SIZE(privs); i++)
			known |= strcmp(e->d_name, privs[i].sub) == 0;
		ok = known;
		n++;
	}
	closedir(d);
	return ok && n == WD_ARRAY_SIZE(privs);
}

/*
 * Removes what sessions of this user left behind when their warden was
 * killed (SIGKILL leaves no chance to clean up): a directory named like
 * ours in /tmp, ours (owner, 0700), shaped like a session's (not kept),
 * made over a minute ago, whose lock nobody holds. A running session holds
 * the lock (flock on its directory) from mkdtemp to its exit, so a live
 * one is never taken; once its warden is dead, so is its sandbox (init
 * dies with it, and every tracee with its tracer).
 */
static void sweep_stale(void)
{
	wd_autoclose int tmp = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int d2 = tmp >= 0 ? dup(tmp) : -1;
	DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
	if (!d) {
		if (d2 >= 0)
			close(d2);
		return;
	}
	time_t now = time(NULL);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!wd_str_has_prefix(e->d_name, "warden-tmp-") || strlen(e->d_name) != 17)
			continue;
		wd_autoclose int fd =
			openat(tmp, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
		    (st.st_mode & 07777) != 0700 || now - st.st_mtime < 60 || !session_shaped(fd) ||
		    flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue;
		int rc = remove_tree(tmp, e->d_name, fd);
		if (rc < 0)
			wd_debug("/tmp/%s, left by a killed session, could not be removed: %s",
				 e->d_name, strerror(-rc));
		else
			wd_debug("removed /tmp/%s, left by a killed session", e->d_name);
	}
	closedir(d);
}

void sup_tmp_finish(struct sup_run *r, bool sandbox_gone)
{
	if (!r->tmp_dir)
		return;
	if (r->opts.keep_tmp) {
		wd_info("the session's temporary directories are kept in %s (tmp/ was its /tmp, "
			"var-tmp/ its /var/tmp, shm/ its /dev/shm)",
			r->tmp_dir);
	} else if (!sandbox_gone) {
		/* Left to the person too: the lock dies with warden, while
		 * the sandbox's processes may still be using it. */
		(void)keep_mark(r);
		wd_warn("the sandbox had not ended: its temporary directories are left in %s",
			r->tmp_dir);
	} else {
		/*
		 * Every process of the sandbox is gone (sbx_child_gone), so
		 * nothing changes the tree while it is removed; and it is
		 * removed by descriptors from the directory mkdtemp made,
		 * never by a path: a symlink the agent planted is unlinked,
		 * never followed, a directory is opened O_NOFOLLOW, and no
		 * mount of the sandbox exists in the host's namespace. The
		 * name in /tmp is removed only when it is still that
		 * directory.
		 */
		const char *base = strrchr(r->tmp_dir, '/') + 1;
		int rc = remove_tree(r->tmp_parent_fd, base, r->tmp_fd);
		if (rc < 0)
			wd_warn("%s could not be removed: %s", r->tmp_dir, strerror(-rc));
	}
}

void sup_tmp_free(struct sup_run *r)
{
	wd_close(&r->tmp_fd);
	wd_close(&r->tmp_parent_fd);
	free(r->tmp_dir);
	r->tmp_dir = NULL;
	for (size_t i = 0; i < r->nbinds; i++) {
		free((char *)r->binds[i].src);
		free((char *)r->binds[i].dst);
	}
	free(r->binds);
	r->binds = NULL;
	r->nbinds = 0;
	free(r->shm_src);
	r->shm_src = NULL;
	for (size_t i = 0; r->private_dirs && r->private_dirs[i]; i++)
		free(r->private_dirs[i]);
	free(r->private_dirs);
	r->private_dirs = NULL;
	for (size_t i = 0; r->shared_dirs && r->shared_dirs[i]; i++)
		free(r->shared_dirs[i]);
	free(r->shared_dirs);
	r->shared_dirs = NULL;
}
