/*
 * ownfiles.c: warden refuses to start when the agent could change what
 * warden itself runs or trusts at its next start: its executable, the
 * project's config, and the audit's directory.
 *
 * Every element of each path is checked, as written and as the kernel
 * resolves it, against the places the agent may write (Landlock's list)
 * and against file permissions; owners, modes and the resolved path come
 * from the kernel, never from a name. The check runs before the sandbox
 * exists. docs/design.md, section "Warden's own files".
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

struct own {
	const char *project;
	char *warden_dir; /* PROJECT/.warden */
	char **places;	  /* canonical places the agent may write on the host */
	bool landlock;
	char *why;
};

static bool is_protected(const struct own *o, const char *x)
{
	return wd_path_within(x, o->warden_dir);
}

/* Checks one element |x| of the path of |file| (|x| is |file| itself when
 * |last|). Sets o->why and returns false when it can be changed. */
static bool check_elem(struct own *o, const char *what, const char *file, const char *x, bool last,
		       const char *fix)
{
	struct stat st;
	if (lstat(x, &st) < 0)
		return true; /* not there: the next existing one is checked */
	const char *why = NULL;
	wd_autofree char *own = NULL;
	wd_autofree char *parent = wd_strdup(x);
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	else if (slash)
		parent[1] = '\0';
	/* Landlock: the agent can change the entry |x| when it may write in
	 * its directory, and the file itself when it lies in such a place. */
	for (size_t i = 0; o->places[i] && !why && !is_protected(o, x); i++) {
		bool in = strcmp(x, "/") != 0 && wd_path_within(parent, o->places[i]);
		if (last && wd_path_within(x, o->places[i]))
			in = true;
		if (in) {
			own = wd_asprintf("%s lies in %s, where the agent may write", x,
					  o->places[i]);
			why = own;
		}
	}
	if (!why && !S_ISLNK(st.st_mode) && (st.st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX))) {
		own = wd_asprintf("%s is writable by %s", x,
				  st.st_mode & S_IWOTH ? "every user" : "its group");
		why = own;
	}
	if (!why && !o->landlock && st.st_uid == getuid() && !is_protected(o, x)) {
		own = wd_asprintf("%s is yours, and without Landlock (not available on this "
				  "kernel) the agent, running as you, could change it",
				  x);
		why = own;
	}
	if (!why)
		return true;
	o->why = wd_asprintf("%s %s could be changed by the agent: %s. %s", what, file, why, fix);
	return false;
}

/* Every element of |path| (absolute), from "/" down. */
static bool check_chain(struct own *o, const char *what, const char *file, const char *path,
			const char *fix)
{
	wd_autofree char *p = wd_strdup(path);
	if (!check_elem(o, what, file, "/", false, fix))
		return false;
	for (char *s = p + 1;; s++) {
		char c = *s;
		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		bool ok = check_elem(o, what, file, p, c == '\0', fix);
		*s = c;
		if (!ok || c == '\0')
			return ok;
	}
}

/* |path| as written and as resolved (its deepest existing ancestor through
 * realpath, the rest appended). */
static bool check_path(struct own *o, const char *what, const char *path, const char *fix)
{
	if (!check_chain(o, what, path, path, fix))
		return false;
	wd_autofree char *head = wd_strdup(path);
	const char *tail = "";
	char real[PATH_MAX];
	while (!realpath(head, real)) {
		char *s = strrchr(head, '/');
		if (!s || s == head)
			return true;
		*s = '\0';
		tail = path + (s - head);
	}
	wd_autofree char *full = wd_asprintf("%s%s", strcmp(real, "/") == 0 ? "" : real, tail);
	if (strcmp(full, path) == 0)
		return true;
	return check_chain(o, what, path, full, fix);
}

/* The places the agent may write on the host: |writable| resolved as
 * Landlock opens them, without the private temporary directories. */
static char **host_places(const struct sup_run *r, char *const *writable)
{
	size_t n = 0;
	while (writable && writable[n])
		n++;
	char **v = wd_calloc(n + 1, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool private = false;
		for (size_t j = 0; r->private_dirs && r->private_dirs[j]; j++)
		private |= strcmp(writable[i], r->private_dirs[j]) == 0;
		char real[PATH_MAX];
		if (!private && realpath(writable[i], real))
			v[k++] = wd_strdup(real);
	}
	return v;
}

int sup_own_files_check(const struct sup_run *r, const char *project, const char *cfgpath,
			char *const *writable, char **err)
{
	struct own o = {
		.project = project,
		.warden_dir = wd_asprintf("%s/.warden", project),
		.places = host_places(r, writable),
		.landlock = sbx_landlock_abi() > 0,
	};
	/* The file that runs: /proc/self/exe's path must name it. */
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat a, b;
	bool ok = n > 0;
	if (ok) {
		exe[n] = '\0';
		ok = exe[0] == '/' && stat("/proc/self/exe", &a) == 0 && stat(exe, &b) == 0 &&
		     a.st_dev == b.st_dev && a.st_ino == b.st_ino;
		if (!ok)
			o.why = wd_asprintf("warden's executable (%s) is not the file at that path "
					    "any more: it was replaced or removed while warden "
					    "started; run it again",
					    exe);
	} else {
		o.why = wd_asprintf("/proc/self/exe cannot be read (%s): warden cannot tell "
				    "where its executable is",
				    strerror(errno));
	}
	ok = ok && check_path(&o, "warden's executable", exe,
			      "Install warden where the agent cannot write: make install (to "
			      "/usr/local/bin), or run it from a directory outside the project "
			      "and the writable places that only you or root can write");
	ok = ok && check_path(&o, "the config", cfgpath,
			      "Keep .warden/ a real directory of the project (not a symlink into "
			      "a writable place), owned by you or root and not writable by "
			      "others, and do not list the project's parents in \"writable\"");
	if (ok) {
		wd_autofree char *dir = wd_strdup(r->opts.audit_path);
		char *s = strrchr(dir, '/');
		if (s && s != dir)
			*s = '\0';
		ok = check_path(&o, "the audit's directory", dir,
				"Choose an --audit path outside the project and the writable "
				"places (the default, the project's .warden/audit.db, is safe)");
	}
	free(o.warden_dir);
	for (size_t i = 0; o.places[i]; i++)
		free(o.places[i]);
	free(o.places);
	if (ok)
		return 0;
	if (err)
		*err = o.why;
	else
		free(o.why);
	return -EPERM;
}
