/*
 * view_split.c: the split view's start walk. It finds, in the backing tree
 * of the project, the subtrees the fanotify listener may watch instead of
 * the FUSE view: maximal subtrees that hold none of the names the FUSE view
 * must see (sensitive, control, write-protected, hidden, `.warden`) and no
 * second name of a sensitive or control file. It also collects the
 * identities of the sensitive and control files it met, for the view's
 * sticky identity table.
 *
 * Pure over an O_PATH fd of the project: never follows a symlink (every
 * directory is opened with O_NOFOLLOW below the one before), never leaves
 * the project's file system (a mount point inside stays FUSE), and stops at
 * a file and a time budget; whatever it did not finish stays FUSE. The
 * tree may change while it walks (the user works): a name made after the
 * walk passed its directory is the listener's to see (fan.c decides by
 * the current name and identity at every open), so the walk only has to
 * be right about what existed.
 */
#include "sandbox.h"

#include "common.h"
#include "policy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPLIT_MAX_DEPTH 128

struct wdir {
	char *path;   /* project-relative, "" for the root */
	size_t up;    /* index of the parent (the root: itself) */
	size_t files; /* regular files directly in it */
	size_t below; /* regular files in its subtree */
	bool clean;   /* itself: walked to the end, no name the view must see */
	bool sub;     /* its whole subtree is clean */
};

struct hlink {
	dev_t dev;
	ino_t ino;
	size_t dir;
};

struct walk {
	const struct sbx_split_walk_config *cfg;
	dev_t dev;
	struct wdir *dirs;
	size_t ndirs, capdirs;
	struct hlink *links;
	size_t nlinks, caplinks;
	struct sbx_split *out;
	size_t seen, max_files;
	int64_t until_ns;
	bool stopped;
	/* Every entry is stat'ed (a second walk, needed only when a sensitive
	 * or control file has other names somewhere); else only the ones
	 * whose identity matters and directories. */
	bool stat_all;
	bool need_links; /* a sensitive or control file with st_nlink > 1 */
};

static size_t add_dir(struct walk *w, char *path, size_t up)
{
	if (w->ndirs == w->capdirs) {
		w->capdirs = w->capdirs ? w->capdirs * 2 : 64;
		w->dirs = wd_realloc(w->dirs, w->capdirs * sizeof(*w->dirs));
	}
	w->dirs[w->ndirs] = (struct wdir){.path = path, .up = up, .clean = true};
	return w->ndirs++;
}

static void add_ident(struct walk *w, const struct stat *st, bool sens, bool ctl)
{
	struct sbx_split *o = w->out;
	for (size_t i = 0; i < o->nidents; i++)
		if (o->idents[i].dev == st->st_dev && o->idents[i].ino == st->st_ino) {
			o->idents[i].sensitive |= sens;
			o->idents[i].control |= ctl;
			return;
		}
	if ((o->nidents & (o->nidents - 1)) == 0)
		o->idents = wd_realloc(o->idents,
				       (o->nidents ? o->nidents * 2 : 16) * sizeof(*o->idents));
	o->idents[o->nidents++] =
		(struct sbx_split_ident){st->st_dev, st->st_ino, sens, ctl, st->st_nlink > 1};
	if (st->st_nlink > 1)
		w->need_links = true;
}

static void add_link(struct walk *w, const struct stat *st, size_t dir)
{
	if (w->nlinks == w->caplinks) {
		w->caplinks = w->caplinks ? w->caplinks * 2 : 64;
		w->links = wd_realloc(w->links, w->caplinks * sizeof(*w->links));
	}
	w->links[w->nlinks++] = (struct hlink){st->st_dev, st->st_ino, dir};
}

/* Whether |path| is one of the kept paths or lies on the way to one. */
static bool kept(const char *const *keep, const char *path)
{
	for (const char *const *k = keep; k && *k; k++)
		if (wd_path_within(path, *k) || wd_path_within(*k, path))
			return true;
	return false;
}

bool sbx_split_entry_named(const struct pol_config *pol, const char *const *keep, const char *path,
			   bool *sens, bool *ctl)
{
	*sens = sbx_view_path_sensitive(pol, NULL, path);
	*ctl = pol_is_control(pol, path, NULL);
	return *sens || *ctl || sbx_view_path_write_protected(pol, NULL, path) || kept(keep, path);
}

static bool over_budget(struct walk *w)
{
	if (w->stopped)
		return true;
	if (++w->seen > w->max_files || ((w->seen & 255) == 0 && wd_now_mono_ns() > w->until_ns))
		w->stopped = true;
	return w->stopped;
}

/* Walks directory |fd| (taken), node |di|. */
static void walk_dir(struct walk *w, int fd, size_t di, int depth)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		w->dirs[di].clean = false;
		return;
	}
	const struct pol_config *pol = w->cfg->policy;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (over_budget(w)) {
			w->dirs[di].clean = false;
			break;
		}
		const char *dpath = w->dirs[di].path;
		char *child =
			*dpath ? wd_asprintf("%s/%s", dpath, de->d_name) : wd_strdup(de->d_name);
		bool sens, ctl;
		bool named = sbx_split_entry_named(pol, w->cfg->keep, child, &sens, &ctl);
		if (named)
			w->dirs[di].clean = false;
		/* The type from the directory itself: a plain file's identity
		 * matters only for a second name of a sensitive or control
		 * file, which only a walk with stat_all looks for. */
		unsigned char type = de->d_type;
		struct stat st;
		bool stat_it = w->stat_all || type == DT_UNKNOWN || type == DT_DIR ||
			       (type == DT_REG && (sens || ctl));
		if (!stat_it) {
			if (type == DT_REG)
				w->dirs[di].files++;
			free(child);
			errno = 0;
			continue;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			/* Gone meanwhile, or unreadable: not known, so not fast. */
			w->dirs[di].clean = false;
			free(child);
			errno = 0;
			continue;
		}
		if (S_ISREG(st.st_mode)) {
			w->dirs[di].files++;
			if (sens || ctl)
				add_ident(w, &st, sens, ctl);
			if (st.st_nlink > 1)
				add_link(w, &st, di);
			free(child);
		} else if (S_ISDIR(st.st_mode)) {
			int cfd = -1;
			if (st.st_dev == w->dev && depth < SPLIT_MAX_DEPTH)
				cfd = openat(dirfd(d), de->d_name,
					     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			struct stat cst;
			if (cfd >= 0 && (fstat(cfd, &cst) < 0 || cst.st_dev != st.st_dev ||
					 cst.st_ino != st.st_ino)) {
				close(cfd); /* replaced since the stat */
				cfd = -1;
			}
			size_t ci = add_dir(w, child, di);
			if (named) /* what lies below is named by it too */
				w->dirs[ci].clean = false;
			if (cfd < 0)
				w->dirs[ci].clean = false; /* another fs, too deep, gone */
			else
				walk_dir(w, cfd, ci, depth + 1);
		} else {
			free(child);
		}
		errno = 0;
	}
	if (errno != 0)
		w->dirs[di].clean = false;
	closedir(d);
}

static bool ident_listed(const struct sbx_split *o, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < o->nidents; i++)
		if (o->idents[i].dev == dev && o->idents[i].ino == ino)
			return true;
	return false;
}

static int by_size(const void *a, const void *b, void *arg)
{
	const struct wdir *dirs = arg;
	size_t x = dirs[*(const size_t *)a].below, y = dirs[*(const size_t *)b].below;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Picks the fast roots once every directory is walked. */
static void choose(struct walk *w)
{
	struct sbx_split *o = w->out;
	/* A second name of a sensitive or control file keeps its directory
	 * under the view, which knows the identity (idents). */
	for (size_t i = 0; i < w->nlinks; i++)
		if (ident_listed(o, w->links[i].dev, w->links[i].ino))
			w->dirs[w->links[i].dir].clean = false;
	/* The project's root always stays FUSE: it holds .warden/, or may
	 * get it during the session (an audit kept elsewhere leaves none),
	 * and a root clean of every name would otherwise be the one
	 * maximal subtree, leaving nothing below it fast. */
	if (w->ndirs > 0)
		w->dirs[0].clean = false;
	/* Children come after their parents: fold the subtrees bottom-up. */
	for (size_t i = 0; i < w->ndirs; i++) {
		w->dirs[i].sub = w->dirs[i].clean;
		w->dirs[i].below = w->dirs[i].files;
	}
	for (size_t i = w->ndirs; i-- > 1;) {
		struct wdir *up = &w->dirs[w->dirs[i].up];
		up->sub = up->sub && w->dirs[i].sub;
		up->below += w->dirs[i].below;
	}
	size_t *roots = wd_calloc(w->ndirs + 1, sizeof(*roots));
	size_t n = 0;
	for (size_t i = 1; i < w->ndirs; i++) {
		if (w->dirs[i].sub && !w->dirs[w->dirs[i].up].sub)
			roots[n++] = i;
	}
	qsort_r(roots, n, sizeof(*roots), by_size, w->dirs);
	size_t cap = w->cfg->max_mounts ? w->cfg->max_mounts : 256;
	if (n > cap)
		n = cap;
	o->fast = wd_calloc(n + 1, sizeof(*o->fast));
	o->fast_files = wd_calloc(n + 1, sizeof(*o->fast_files));
	for (size_t i = 0; i < n; i++) {
		o->fast[i] = wd_strdup(w->dirs[roots[i]].path);
		o->fast_files[i] = w->dirs[roots[i]].below;
		o->fast_files_total += w->dirs[roots[i]].below;
	}
	o->nfast = n;
	/* Directories that stay FUSE: those not in a kept subtree. */
	for (size_t i = 0; i < w->ndirs; i++) {
		bool in_fast = false;
		for (size_t j = 0; j < n && !in_fast; j++)
			in_fast = wd_path_within(w->dirs[i].path, o->fast[j]);
		if (!in_fast)
			o->fuse_dirs++;
	}
	free(roots);
}

/* One walk from the project's root; frees what only the walk needed. */
static void walk_once(struct walk *w, int fd)
{
	add_dir(w, wd_strdup(""), 0);
	walk_dir(w, fd, 0, 0);
	choose(w);
	for (size_t i = 0; i < w->ndirs; i++)
		free(w->dirs[i].path);
	free(w->dirs);
	free(w->links);
	w->dirs = NULL;
	w->links = NULL;
	w->ndirs = w->capdirs = w->nlinks = w->caplinks = 0;
}

int sbx_split_walk(const struct sbx_split_walk_config *cfg, struct sbx_split **out)
{
	int64_t t0 = wd_now_mono_ns();
	struct stat st;
	if (fstat(cfg->backing_fd, &st) < 0)
		return -errno;
	int fd = openat(cfg->backing_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct walk w = {
		.cfg = cfg,
		.dev = st.st_dev,
		.out = wd_calloc(1, sizeof(struct sbx_split)),
		.max_files = cfg->max_files ? cfg->max_files : 200000,
		.until_ns = t0 + (int64_t)((cfg->max_s > 0 ? cfg->max_s : 2.0) * 1e9),
	};
	walk_once(&w, fd);
	if (w.need_links) {
		/* A sensitive or control file has another name somewhere: every
		 * plain file is stat'ed, so that the directory holding that
		 * name stays FUSE (choose). Rare; the first walk's result is
		 * dropped whole and the budget starts again. */
		sbx_split_free(w.out);
		w.out = wd_calloc(1, sizeof(struct sbx_split));
		w.stat_all = true;
		w.seen = 0;
		w.stopped = false;
		fd = openat(cfg->backing_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			int e = errno;
			sbx_split_free(w.out);
			return -e;
		}
		walk_once(&w, fd);
	}
	w.out->complete = !w.stopped;
	w.out->walk_s = (double)(wd_now_mono_ns() - t0) / 1e9;
	*out = w.out;
	return 0;
}

void sbx_split_free(struct sbx_split *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfast; i++)
		free(s->fast[i]);
	free(s->fast);
	free(s->fast_files);
	free(s->idents);
	free(s);
}
