/*
 * markers.c: the places outside the project for `warden run`: the homes,
 * the gated places and markers views, the places hidden by mounts, and
 * the spawn callbacks that start each view (the project's included).
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* The descriptors each large view may keep: three quarters of
 * RLIMIT_NOFILE (raised at start) shared by the project's view and the
 * markers views, each of which may be walked whole; the gated places are
 * small and take the view's default minimum. */
static size_t view_budget(const struct sup_run *r)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 0; /* the view's own default */
	return (size_t)rl.rlim_cur / 4 * 3 / (1 + r->nmarkers);
}

int sup_start_view(void *arg, int fuse_fd)
{
	struct sup_run *r = arg;
	wd_autofree char *rel = NULL;
	const char *hidden[6] = {NULL};
	/* The audit database and its companions are not part of the view. */
	size_t plen = strlen(r->opts.project);
	if (strncmp(r->opts.audit_path, r->opts.project, plen) == 0 &&
	    r->opts.audit_path[plen] == '/') {
		rel = wd_strdup(r->opts.audit_path + plen + 1);
		hidden[0] = rel;
	}
	wd_autofree char *wal = rel ? wd_asprintf("%s-wal", rel) : NULL;
	wd_autofree char *shm = rel ? wd_asprintf("%s-shm", rel) : NULL;
	wd_autofree char *jrn = rel ? wd_asprintf("%s-journal", rel) : NULL;
	wd_autofree char *wdj = rel ? wd_asprintf("%s%s", rel, STO_JOURNAL_SUFFIX) : NULL;
	hidden[1] = wal;
	hidden[2] = shm;
	hidden[3] = jrn;
	hidden[4] = wdj;
	struct sbx_view_config vc = {
		.backing_fd = r->backing_fd,
		.policy = r->config,
		.read_only = r->opts.review,
		.hidden = hidden,
		.decide = sup_view_decide,
		.decide_arg = r,
		.threads = 0,
		.fd_budget = view_budget(r),
		/* As root spawn made the mount itself (fsopen) in the initial
		 * user namespace, and its INIT waits on fuse_fd. */
		.passthrough = !sbx_needs_userns(),
	};
	r->backing_fd = -1; /* the view owns it now, even on failure */
	return sbx_view_start(&vc, fuse_fd, &r->view);
}

/* Serves gated place |i| (spawn's on_gate): a read-only view in which
 * everything is sensitive, named by absolute path. */
int sup_start_gate(void *arg, size_t i, int fuse_fd)
{
	struct sup_run *r = arg;
	if (i >= r->ngates) {
		close(fuse_fd);
		return -EINVAL;
	}
	struct sbx_view_config vc = {
		.backing_fd = r->gate_fds[i],
		.policy = r->config,
		.read_only = true,
		.decide = sup_view_decide,
		.decide_arg = r,
		.prefix = r->gate_dirs[i],
		.all_sensitive = true,
	};
	r->gate_fds[i] = -1; /* the view owns it now, even on failure */
	return sbx_view_start(&vc, fuse_fd, &r->gates[i]);
}

/* Serves markers view |i| (spawn's on_markers): the place as it is, with
 * changes only in the agent's writable places (and Landlock's check), its
 * hidden places answering ENOENT, and opens
 * of files whose path (relative to it) carries a sensitive marker decided
 * and audited under their absolute path, as in the project view. */
int sup_start_markers(void *arg, size_t i, int fuse_fd)
{
	struct sup_run *r = arg;
	if (i >= r->nmarkers) {
		close(fuse_fd);
		return -EINVAL;
	}
	struct sup_markers *m = &r->markers[i];
	struct sbx_view_config vc = {
		.backing_fd = m->fd,
		.policy = r->config,
		.hidden = (const char *const *)m->hidden,
		.unmarked = (const char *const *)m->unmarked,
		.writable = m->all_writable ? NULL : (const char *const *)m->writable,
		.decide = sup_view_decide,
		.decide_arg = r,
		.fd_budget = view_budget(r),
		.prefix = r->marker_dirs[i],
	};
	m->fd = -1; /* the view owns it now, even on failure */
	return sbx_view_start(&vc, fuse_fd, &m->view);
}

/*
 * The gated places: config entries with "mode": "gate" that are existing
 * directories outside the project, each opened (O_PATH) now, from the real
 * file system. A gated file, a place that does not exist, or any gate with
 * --no-view (no view machinery) is hidden instead, with a warning. Returns
 * whether |p| is gated.
 */
static bool add_gate(struct sup_run *r, const char *given, const char *project)
{
	if (r->opts.no_view) {
		wd_warn("%s: \"gate\" needs the view (--no-view given): hidden instead", given);
		return false;
	}
	/* Compared, mounted and shown as its canonical path: "~/" or a
	 * symlink must not slip past the checks below. Absent: nothing to
	 * show (hidden, which for an absent place changes nothing). */
	wd_autofree char *p = realpath(given, NULL);
	if (!p)
		return false;
	if (wd_path_within(p, project)) {
		wd_warn("%s: \"gate\" is for places outside the project (the project's "
			"sensitive files are decided already): hidden instead",
			given);
		return false;
	}
	if (wd_path_within(project, p)) {
		wd_warn("%s: the project is inside this gated place: neither gated nor hidden",
			given);
		return true; /* not hidden either: that would hide the project */
	}
	/* A directory or a regular file; anything else (a socket, a device)
	 * is hidden. */
	int fd = open(p, O_PATH | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
		if (fd >= 0 || errno != ENOENT)
			wd_warn("%s: \"gate\" needs a directory or a regular file: hidden instead",
				given);
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (r->ngates + r->nmarkers + 2 >= SBX_MAX_VIEWS) {
		wd_warn("%s: more than %zu gated places: hidden instead", p,
			SBX_MAX_VIEWS - 2 - r->nmarkers);
		close(fd);
		return false;
	}
	r->gate_dirs = wd_realloc(r->gate_dirs, (r->ngates + 2) * sizeof(char *));
	r->gate_fds = wd_realloc(r->gate_fds, (r->ngates + 1) * sizeof(int));
	r->gates = wd_realloc(r->gates, (r->ngates + 1) * sizeof(struct sbx_view *));
	r->gate_dirs[r->ngates] = wd_strdup(p);
	r->gate_dirs[r->ngates + 1] = NULL;
	r->gate_fds[r->ngates] = fd;
	r->gates[r->ngates] = NULL;
	r->ngates++;
	return true;
}

/* The homes the "~/" places apply to: $HOME, the passwd home of the
 * invoking uid and, when run through sudo, SUDO_USER's: canonical,
 * distinct, each a directory its user owns (a system account's "home",
 * /usr/sbin or /, is no home). Caller frees. */
char **sup_home_list(void)
{
	struct passwd *pw = getpwuid(getuid());
	wd_autofree char *own = pw && pw->pw_dir ? wd_strdup(pw->pw_dir) : NULL;
	wd_autofree char *sudo = NULL;
	uid_t sudo_uid = 0;
	const char *su = getenv("SUDO_USER");
	if (getuid() == 0 && su && *su && (pw = getpwnam(su)) && pw->pw_dir) {
		sudo = wd_strdup(pw->pw_dir);
		sudo_uid = pw->pw_uid;
	}
	const char *cand[] = {getenv("HOME"), own, sudo};
	const uid_t owner[] = {getuid(), getuid(), sudo_uid};
	char **v = wd_calloc(WD_ARRAY_SIZE(cand) + 1, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; i < WD_ARRAY_SIZE(cand); i++) {
		char *h = cand[i] && cand[i][0] == '/' ? realpath(cand[i], NULL) : NULL;
		struct stat st;
		bool skip = !h || strcmp(h, "/") == 0 || stat(h, &st) < 0 || !S_ISDIR(st.st_mode) ||
			    st.st_uid != owner[i];
		for (size_t j = 0; j < k && !skip; j++)
			skip = strcmp(v[j], h) == 0;
		if (skip)
			free(h);
		else
			v[k++] = h;
	}
	return v;
}

/* The canonical path of |p| with its last component unresolved (the name
 * a view sees for it) and with the part that does not exist yet as
 * written: "~/.config/gh" before ~/.config exists is hidden by that name
 * when it appears. NULL when nothing of it resolves. */
static char *canonical_parent(const char *p)
{
	wd_autofree char *dir = wd_strdup(p);
	char *cut = strrchr(dir, '/');
	while (cut && cut != dir) {
		*cut = '\0';
		char *real = realpath(dir, NULL);
		if (real) {
			const char *rest = p + (cut - dir) + 1;
			char *out = strcmp(real, "/") == 0 ? wd_asprintf("/%s", rest)
							   : wd_asprintf("%s/%s", real, rest);
			free(real);
			return out;
		}
		cut = strrchr(dir, '/');
	}
	return p[0] == '/' ? wd_strdup(p) : NULL;
}

/* Whether |p| (canonical) may be a markers view: an existing directory,
 * not "/", /tmp, /var/tmp or the kernel's own trees (a view serves what the supervisor
 * sees, mounts below it included), not inside the project (decided there
 * already) and not the project itself. */
static bool markers_place(const char *given, const char *p, const char *project)
{
	static const char *const kernel[] = {"/proc", "/sys", "/dev", "/run"};
	struct stat st;
	if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	/* The shared temporary directories are the sandbox's own business. */
	bool bad = strcmp(p, "/") == 0 || strcmp(p, "/tmp") == 0 || strcmp(p, "/var/tmp") == 0;
	for (size_t i = 0; i < WD_ARRAY_SIZE(kernel); i++)
		bad |= wd_path_within(p, kernel[i]);
	if (bad) {
		wd_warn("%s: \"markers\" is for a directory such as a home, not this one: left "
			"as it is",
			given);
		return false;
	}
	return !wd_path_within(p, project);
}

/*
 * The markers views: config entries with "mode": "markers" (each home by
 * default), canonical, none inside another (the outer one decides its
 * whole tree). With --no-view there are none: the places are then seen as
 * they are, and the places hidden inside them are hidden by mounts.
 */
static void collect_markers(struct sup_run *r, const struct pol_config *c, const char *project)
{
	size_t n = pol_config_outside_count(c), k = 0;
	char **v = wd_calloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n && !r->opts.no_view; i++) {
		enum pol_outside_mode mode;
		const char *p = pol_config_outside(c, i, &mode);
		char *real =
			mode == POL_OUTSIDE_MARKERS && p && p[0] == '/' ? realpath(p, NULL) : NULL;
		if (real && markers_place(p, real, project))
			v[k++] = real;
		else
			free(real);
	}
	size_t kept = 0;
	for (size_t i = 0; i < k; i++) {
		bool inner = false;
		for (size_t j = 0; j < k && !inner; j++)
			inner = j != i && v[j] && wd_path_within(v[i], v[j]) &&
				(strcmp(v[i], v[j]) != 0 || j < i);
		if (inner || kept + 2 >= SBX_MAX_VIEWS) {
			free(v[i]);
			v[i] = NULL;
			continue;
		}
		int fd = open(v[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			free(v[i]);
			v[i] = NULL;
			continue;
		}
		r->markers = wd_realloc(r->markers, (kept + 1) * sizeof(*r->markers));
		r->markers[kept] = (struct sup_markers){.fd = fd};
		r->markers[kept].hidden = wd_calloc(1, sizeof(char *));
		r->markers[kept].unmarked = wd_calloc(1, sizeof(char *));
		r->markers[kept].writable = wd_calloc(1, sizeof(char *));
		v[kept++] = v[i];
		if (kept - 1 != i)
			v[i] = NULL;
	}
	v[kept] = NULL;
	r->marker_dirs = v;
	r->nmarkers = kept;
}

/* Hides |p| inside the markers view that holds it, if one does: the view
 * answers ENOENT for it and everything below, whenever it appears (the
 * mount hide finds nothing there then). Returns whether one does. */
static bool hide_in_markers(struct sup_run *r, const char *p)
{
	wd_autofree char *canon = canonical_parent(p);
	for (size_t i = 0; canon && i < r->nmarkers; i++) {
		const char *dir = r->marker_dirs[i];
		if (!wd_path_within(canon, dir) || strcmp(canon, dir) == 0)
			continue;
		wd_strv_push(&r->markers[i].hidden, canon + strlen(dir) + 1);
		return true;
	}
	return false;
}

/* The harness's own places in each markers view: no marker applies there
 * (Claude Code reads its ~/.claude/.credentials.json at start), as its
 * own API key stays in its environment. */
void sup_unmark_profile(struct sup_run *r, const char *const *prof)
{
	for (size_t i = 0; i < r->nmarkers; i++)
		for (size_t h = 0; r->homes[h]; h++)
			for (size_t j = 0; prof[j]; j++) {
				wd_autofree char *p = wd_asprintf("%s/%s", r->homes[h], prof[j]);
				const char *dir = r->marker_dirs[i];
				if (wd_path_within(p, dir) && strcmp(p, dir) != 0)
					wd_strv_push(&r->markers[i].unmarked, p + strlen(dir) + 1);
			}
}

/* The agent's writable places inside each markers view: the view refuses
 * every change elsewhere, so that it never lets the agent write where it
 * could not without the view. A writable place that holds a markers place
 * whole makes it writable throughout, unless it is one of the session's
 * private directories (/tmp): a home under /tmp is bound there read-only,
 * with only the writable places in it writable. */
void sup_markers_writable(struct sup_run *r, char *const *writable)
{
	for (size_t i = 0; i < r->nmarkers; i++) {
		const char *dir = r->marker_dirs[i];
		struct sup_markers *m = &r->markers[i];
		for (size_t j = 0; writable && writable[j]; j++) {
			wd_autofree char *w = canonical_parent(writable[j]);
			if (!w)
				continue;
			if (wd_path_within(dir, w)) {
				bool priv = false;
				for (size_t k = 0; r->private_dirs && r->private_dirs[k]; k++)
					priv |= strcmp(w, r->private_dirs[k]) == 0;
				m->all_writable |= !priv;
			} else if (wd_path_within(w, dir)) {
				wd_strv_push(&m->writable, w + strlen(dir) + 1);
			}
		}
	}
}

/* The places outside the project that the agent must not see. A place
 * inside a markers view is hidden by that view (by name, at every lookup);
 * its target too, when it is a symlink to elsewhere. Any other is hidden
 * by a mount at start. */
char **sup_hide_list(struct sup_run *r, const struct pol_config *c, const char *project,
		     const char *audit, bool no_view)
{
	size_t n = pol_config_outside_count(c);
	char **v = wd_calloc(2 * (n + 12) + 1, sizeof(char *));
	size_t k = 0;
	/* Sockets that reach outside the sandbox: the user's session bus and
	 * agents ($XDG_RUNTIME_DIR: systemd-run --user, ssh-agent, gpg-agent)
	 * and Docker (root on the host). */
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (xdg && xdg[0] == '/')
		v[k++] = wd_strdup(xdg);
	v[k++] = wd_strdup("/run/docker.sock");
	v[k++] = wd_strdup("/var/run/docker.sock");
	/* The audit, when it is not in the project (the view hides it there;
	 * without the view nothing else does). */
	size_t plen = strlen(project);
	if (no_view || !(strncmp(audit, project, plen) == 0 && audit[plen] == '/')) {
		static const char *const sfx[] = {"", "-wal", "-shm", "-journal",
						  STO_JOURNAL_SUFFIX};
		for (size_t i = 0; i < WD_ARRAY_SIZE(sfx); i++)
			v[k++] = wd_asprintf("%s%s", audit, sfx[i]);
	}
	/* The approvals desk: no process of the agent may answer itself. */
	char *desk = sup_desk_dir(true);
	if (desk)
		v[k++] = desk;
	collect_markers(r, c, project);
	for (size_t i = 0; i < n; i++) {
		enum pol_outside_mode mode;
		const char *p = pol_config_outside(c, i, &mode);
		if (!p || p[0] != '/' || mode == POL_OUTSIDE_MARKERS || mode == POL_OUTSIDE_OPEN)
			continue;
		if (mode == POL_OUTSIDE_GATE && add_gate(r, p, project))
			continue;
		/* Hiding a place that holds the project would hide the
		 * project itself. */
		wd_autofree char *real = realpath(p, NULL);
		if (real && wd_path_within(project, real)) {
			wd_warn("%s: the project is inside this place: not hidden", p);
			continue;
		}
		v[k++] = wd_strdup(p);
	}
	for (size_t i = 0, end = k; i < end; i++) {
		if (!hide_in_markers(r, v[i]))
			continue;
		/* A symlink's target elsewhere, seen only through the name the
		 * view hides now: hidden where it is. */
		char *real = realpath(v[i], NULL);
		wd_autofree char *canon = canonical_parent(v[i]);
		if (real && canon && strcmp(real, canon) != 0 && !hide_in_markers(r, real) &&
		    !wd_path_within(project, real))
			v[k++] = real;
		else
			free(real);
	}
	return v;
}
