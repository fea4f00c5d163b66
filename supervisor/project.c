/*
 * project.c: the project of `warden run`: that it is a directory warden can
 * read, that it is not the whole machine or the person's home, and its
 * .warden/ with a .gitignore that keeps the audit out of git.
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sup_project_dir(const char *arg, char *out, char **err)
{
	if (!realpath(arg, out)) {
		int e = errno ? errno : EIO;
		if (err)
			*err = wd_asprintf("project %s: %s", arg,
					   e == ENOENT ? "no such directory" : strerror(e));
		return -e;
	}
	/* Read as warden will read it: a file, or a directory warden may not
	 * list, is the project's problem, not the config's inside it. */
	int fd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (err)
			*err = e == ENOTDIR
				       ? wd_asprintf("project %s: not a directory (--project names "
						     "the directory the agent works in)",
						     arg)
			       : e == EACCES
				       ? wd_asprintf("project %s: permission denied: warden cannot "
						     "read it as uid %u (pick a directory you can "
						     "read with --project DIR)",
						     arg, (unsigned)geteuid())
				       : wd_asprintf("project %s: %s", arg, strerror(e));
		return -e;
	}
	close(fd);
	return 0;
}

/* Whether |a| and |st| are the same directory (by identity, not by name). */
static bool same_dir(const char *a, const struct stat *st)
{
	struct stat sa;
	return stat(a, &sa) == 0 && sa.st_dev == st->st_dev && sa.st_ino == st->st_ino;
}

int sup_project_guard(const char *project, char **err)
{
	struct stat st;
	if (stat(project, &st) < 0)
		return 0; /* sup_project_dir() said what is wrong */
	const char *what = NULL;
	wd_autofree char *above = NULL;
	if (same_dir("/", &st))
		what = "the root directory";
	char **homes = sup_home_list();
	for (size_t i = 0; homes[i] && !what; i++) {
		if (same_dir(homes[i], &st)) {
			what = "your home directory";
			break;
		}
		/* Each directory above the home, up to "/" (said above). */
		wd_autofree char *dir = wd_strdup(homes[i]);
		for (char *cut = strrchr(dir, '/'); cut && cut != dir; cut = strrchr(dir, '/')) {
			*cut = '\0';
			if (same_dir(dir, &st)) {
				above = wd_asprintf("a directory above your home directory %s",
						    homes[i]);
				what = above;
				break;
			}
		}
	}
	wd_strv_free(homes);
	if (!what)
		return 0;
	if (err)
		*err = wd_asprintf("refusing to run in %s: it is %s, and the agent would see all "
				   "of it; run warden in the project's directory (or give "
				   "--project DIR), or add --force to run there anyway",
				   project, what);
	return -EPERM;
}

bool sup_path_within(const char *cwd, const char *project)
{
	size_t n = strlen(project);
	if (n == 1 && project[0] == '/')
		return cwd[0] == '/';
	return strncmp(cwd, project, n) == 0 && (cwd[n] == '\0' || cwd[n] == '/');
}

static const char gitignore[] = "# warden's audit of this machine's sessions: local, not for git\n"
				"audit.db*\n";

/* Writes .warden/.gitignore in |wfd| unless a file of that name exists.
 * O_EXCL creates it or fails: an existing file, or a symlink planted in its
 * place, is never written through. */
static void write_gitignore(int wfd, const char *project)
{
	int fd = openat(wfd, ".gitignore", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0644);
	if (fd < 0) {
		if (errno != EEXIST)
			wd_warn("%s/.warden/.gitignore: %s (add \"audit.db*\" to it yourself to "
				"keep the audit out of git)",
				project, strerror(errno));
		return;
	}
	int rc = wd_write_all(fd, gitignore, sizeof(gitignore) - 1);
	if (rc < 0)
		wd_warn("%s/.warden/.gitignore: %s", project, strerror(-rc));
	close(fd);
}

void sup_warden_dir_prepare(const char *project)
{
	/* Before the agent starts: nothing of the sandbox can race these
	 * steps, and .warden/ is read-only to it afterwards. The directory is
	 * opened without following a symlink, so a .warden that is a link
	 * (refused before this by sup_warden_dir_check) is never written
	 * into. */
	int pfd = open(project, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return;
	bool created = mkdirat(pfd, ".warden", 0700) == 0;
	int wfd = openat(pfd, ".warden", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(pfd);
	if (wfd < 0)
		return;
	/* An existing .warden/ is the person's: warden adds its .gitignore
	 * there only when it is about to create its first audit in it. */
	struct stat st;
	if (created || (fstatat(wfd, "audit.db", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT))
		write_gitignore(wfd, project);
	close(wfd);
}

/* The names warden itself creates or writes in .warden/: the audit (and
 * SQLite's files and warden's journal next to it) and the config that "always" answers extend. */
static const char *const warden_files[] = {
	"audit.db",
	"audit.db-wal",
	"audit.db-shm",
	"audit.db-journal",
	"audit.db" STO_JOURNAL_SUFFIX,
	"permissions.json",
};

int sup_warden_dir_check(const char *project, char **err)
{
	/* Decided by lstat, on what the entry is, never on where its name
	 * leads: a repository can ship .warden as a symlink to any directory
	 * (or .warden/audit.db to any file), and warden, perhaps as root,
	 * would read its config there and create and write its audit there.
	 * Nothing races this check: the agent has not started, and once it
	 * runs .warden/ is read-only to it (the view, or the read-only bind
	 * with --no-view). */
	wd_autofree char *dir = wd_asprintf("%s/.warden", project);
	struct stat st;
	if (lstat(dir, &st) < 0) {
		if (errno == ENOENT)
			return 0; /* created by sup_warden_dir_prepare */
		int e = errno;
		if (err)
			*err = wd_asprintf("%s: %s", dir, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		char to[PATH_MAX] = "(unreadable)";
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(dir, to, sizeof(to) - 1);
			if (n > 0)
				to[n] = '\0';
		}
		if (err)
			*err = wd_asprintf(
				"%s is %s%s: warden would read its config and write its audit "
				"there. Keep .warden/ a real directory of the project: remove or "
				"rename %s (it may come with the repository) and run warden again, "
				"which creates it",
				dir, S_ISLNK(st.st_mode) ? "a symlink to " : "not a directory",
				S_ISLNK(st.st_mode) ? to : "", dir);
		return -ENOTDIR;
	}
	for (size_t i = 0; i < sizeof(warden_files) / sizeof(warden_files[0]); i++) {
		wd_autofree char *p = wd_asprintf("%s/%s", dir, warden_files[i]);
		/* A symlink only, the way out of the project: another kind of
		 * file there (a FIFO, a device) is left to its reader, which
		 * says what is wrong with it (the config's loader names a
		 * FIFO). */
		if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode)) {
			if (err)
				*err = wd_asprintf("%s is a symlink, not a file of the project's: "
						   "warden reads or writes it, and would follow it "
						   "elsewhere. Remove it (it may come with the "
						   "repository) and run warden again",
						   p);
			return -ENOTDIR;
		}
	}
	return 0;
}
