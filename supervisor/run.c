/*
 * run.c: `warden run`: reads the options and the project's config, opens
 * the audit, starts the agent under the filter (sandbox/spawn.c) and runs
 * the event loop until the agent's initial process exits. Then the rest of
 * the tree is killed (nothing the agent left behind outlives the
 * supervision) and warden exits with the agent's status.
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

extern char **environ;

static const char run_usage[] =
	"usage: warden run [options] -- CMD [ARGS...]\n"
	"\n"
	"Runs CMD under warden: every exec of its process tree is decided (hard deny,\n"
	"rules and grants, the fast path, then the tier) and audited before it runs.\n"
	"\n"
	"  --project DIR     the project the agent works on (default: the current directory)\n"
	"  --audit PATH      the audit database (default: DIR/.warden/audit.db)\n"
	"  --tier T          what happens to requests nothing else decided:\n"
	"                    aggressive (allow), standard (ask a person), passive (refuse);\n"
	"                    default: the config's \"tier\", else standard\n"
	"  --prompt P        how a person is asked in standard mode: desk (the default:\n"
	"                    answer from another terminal with warden approvals / approve /\n"
	"                    deny), tty (the desk, and inline on this terminal), or none\n"
	"                    (refuse: nobody can be asked)\n"
	"  --approval-timeout T\n"
	"                    refuse a request nobody answered within T (30s, 10m, 1h;\n"
	"                    default 10m), audited as timed out\n"
	"  --role R          agent (default) or review: a review run sees the project\n"
	"                    read-only, reads sensitive files without asking, and never\n"
	"                    waits for a person (standard mode refuses escalations)\n"
	"  --task TEXT       what the agent was asked to do (recorded with the session and\n"
	"                    shown to the judge; at most 800 characters)\n"
	"  --parent ID       a sub-session of session ID: its judge reads ID's rules too\n"
	"  --agent A         the agent's profile: claude-code, codex, aider, none or auto\n"
	"                    (default: from the program's name): its writable places, its\n"
	"                    start-up execs, its tool-call wrapper\n"
	"  --turn-idle S     the judge's turn ends after S seconds without a request\n"
	"                    (default 2): its rules prefix is rebuilt at the next turn\n"
	"  --stats           print decision counts and latencies at exit\n"
	"  --no-view         do not mount the project view: opens of sensitive files in\n"
	"                    the project are then NOT decided (exec decisions remain)\n"
	"  --keep-tmp        keep the session's private /tmp, /var/tmp and /dev/shm after\n"
	"                    the run (warden says where); by default they are removed\n"
	"  --share-tmp PATH  show the host's PATH (under /tmp, /var/tmp or /dev/shm) in\n"
	"                    the session's private one, read-only (as the config's\n"
	"                    \"tmp\": {\"share\"}); may be repeated\n"
	"  -v, --verbose     log every decision on stderr\n"
	"  -h, --help        this text\n"
	"\n"
	"Exit status: the agent's own (128+N when killed by signal N); 125 when warden\n"
	"could not start it (bad options or config, no sandbox, command not found).\n";

/* Finds |cmd| in PATH the way execvp would. Caller frees. */
static char *find_program(const char *cmd)
{
	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0 ? realpath(cmd, NULL) : NULL;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	wd_autofree char *copy = wd_strdup(path);
	char *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *full = wd_asprintf("%s/%s", *dir ? dir : ".", cmd);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
			return full;
		free(full);
	}
	return NULL;
}

/* The agent's environment: warden's own variables (the judge's key among
 * them) never reach it, nor do variables that look like secrets
 * (pol_env_name_is_secret: *_API_KEY, *_TOKEN, *SECRET*, SSH_AUTH_SOCK...)
 * unless its harness needs them (its own API key) or the config keeps them.
 * The names removed are said once on stderr, never the values.
 * WARDEN_SESSION tells it which session it is in. */
static char **agent_environ(const char *session, const struct pol_config *c, enum pol_harness h)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = wd_calloc(n + 2, sizeof(char *));
	size_t k = 0;
	struct wd_sb gone = {0};
	for (size_t i = 0; i < n; i++) {
		if (wd_str_has_prefix(environ[i], "WARDEN_"))
			continue;
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		if (pol_env_name_is_secret(environ[i], len) &&
		    !pol_env_keeps(c, h, environ[i], len)) {
			wd_sb_printf(&gone, "%s%.*s", gone.len ? ", " : "", (int)len, environ[i]);
			continue;
		}
		env[k++] = environ[i];
	}
	env[k++] = wd_asprintf("WARDEN_SESSION=%s", session);
	env[k] = NULL;
	if (gone.len)
		wd_info("removed from the agent's environment (they look like secrets; keep one "
			"with \"env\": {\"keep\": [NAME]} in .warden/permissions.json): %s",
			gone.buf);
	wd_sb_free(&gone);
	return env;
}

static void free_env(char **env)
{
	for (size_t i = 0; env[i]; i++)
		if (wd_str_has_prefix(env[i], "WARDEN_SESSION="))
			free(env[i]);
	free(env);
}

static char *person_name(void)
{
	const char *sudo = getenv("SUDO_USER");
	if (sudo && *sudo && getuid() == 0)
		return wd_strdup(sudo);
	struct passwd *pw = getpwuid(getuid());
	if (pw)
		return wd_strdup(pw->pw_name);
	return wd_asprintf("uid %u", (unsigned)getuid());
}

static void make_session_id(char *out, size_t n)
{
	int64_t us = wd_now_real_us();
	time_t t = (time_t)(us / 1000000);
	struct tm tm;
	gmtime_r(&t, &tm);
	unsigned rnd = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!read(fd, &rnd, sizeof(rnd));
		close(fd);
	}
	snprintf(out, n, "%04d%02d%02d-%02d%02d%02d-%04x", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rnd & 0xffff);
}

static void on_signal(struct sup_loop *l, int fd, uint32_t events, void *arg)
{
	(void)l;
	(void)events;
	struct sup_run *r = arg;
	/* Read until a read comes back short (nothing more was pending then).
	 * A SIGCHLD raised while the reap below runs stays pending, and the
	 * signalfd, level-triggered, wakes the next round for it. */
	struct signalfd_siginfo si[8];
	ssize_t n;
	while ((n = read(fd, si, sizeof(si))) >= (ssize_t)sizeof(si[0])) {
		bool chld = false;
		for (ssize_t i = 0; i < n / (ssize_t)sizeof(si[0]); i++) {
			if (si[i].ssi_signo == SIGCHLD) {
				chld = true;
				continue;
			}
			/* SIGINT, SIGTERM, SIGHUP, SIGQUIT: the agent's group
			 * gets them, what waits is refused, and warden follows
			 * the agent's fate (interrupt.c). */
			sup_interrupt_signal(r, &si[i]);
		}
		if (chld)
			sup_trace_reap(r);
		if (n < (ssize_t)sizeof(si))
			break;
	}
}

/* The agent's pidfd: its initial process has exited. While it is traced
 * (before its first exec event) its status is ours to reap; otherwise init,
 * its parent, reports it (sbx_child_exit), right after its own wait. */
static void on_pidfd(struct sup_loop *l, int fd, uint32_t events, void *arg)
{
	(void)events;
	struct sup_run *r = arg;
	sup_loop_del(l, fd);
	sup_trace_reap(r);
	if (r->agent_exited)
		return;
	int status;
	if (sbx_child_exit(r->child.exit_fd, &status) < 0) {
		wd_warn("the sandbox's init did not say how the agent ended");
		status = SIGKILL;
	}
	r->agent_exited = true;
	r->agent_status = status;
}

static void on_notify(struct sup_loop *l, int fd, uint32_t events, void *arg)
{
	if (events & EPOLLIN)
		sup_on_notify(l, fd, events, arg);
	else if (events & (EPOLLHUP | EPOLLERR))
		sup_loop_del(l, fd); /* no process left under the filter */
}

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

static int start_view(void *arg, int fuse_fd)
{
	struct sup_run *r = arg;
	wd_autofree char *rel = NULL;
	const char *hidden[5] = {NULL};
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
	hidden[1] = wal;
	hidden[2] = shm;
	hidden[3] = jrn;
	struct sbx_view_config vc = {
		.backing_fd = r->backing_fd,
		.policy = r->config,
		.read_only = r->opts.review,
		.hidden = hidden,
		.decide = sup_view_decide,
		.decide_arg = r,
		.threads = 0,
		.fd_budget = view_budget(r),
	};
	r->backing_fd = -1; /* the view owns it now, even on failure */
	return sbx_view_start(&vc, fuse_fd, &r->view);
}

/* Serves gated place |i| (spawn's on_gate): a read-only view in which
 * everything is sensitive, named by absolute path. */
static int start_gate(void *arg, size_t i, int fuse_fd)
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
static int start_markers(void *arg, size_t i, int fuse_fd)
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
static char **home_list(void)
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
static void unmark_profile(struct sup_run *r, const char *const *prof)
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
static void markers_writable(struct sup_run *r, char *const *writable)
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
static char **hide_list(struct sup_run *r, const struct pol_config *c, const char *project,
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
		static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
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

/* The profile of a known agent, from its program (resolved path, then the
 * name it was called by). */
static enum pol_harness detect_agent(const char *real, const char *arg0)
{
	const char *names[2] = {real, arg0};
	for (size_t i = 0; i < 2; i++) {
		const char *b = strrchr(names[i], '/');
		b = b ? b + 1 : names[i];
		if (strcmp(b, "claude") == 0 || strstr(names[i], "/@anthropic-ai/claude-code/"))
			return POL_HARNESS_CLAUDE_CODE;
		if (strcmp(b, "codex") == 0 || strstr(names[i], "/@openai/codex/"))
			return POL_HARNESS_CODEX;
		if (strcmp(b, "aider") == 0)
			return POL_HARNESS_AIDER;
	}
	return POL_HARNESS_NONE;
}

/* The agent's launcher script, when the person ran one whose native child
 * becomes the agent (startup.c): Codex's bin/codex.js, run as itself or
 * as `node codex.js`. |real| is the program's canonical path. With --agent
 * auto, `node .../@openai/codex/bin/codex.js` selects the codex profile. */
static void find_launcher(struct sup_run *r, const char *real)
{
	static const char tail[] = "/@openai/codex/bin/codex.js";
	if (!real)
		return;
	if (wd_str_has_suffix(real, tail)) {
		if (r->opts.agent == POL_HARNESS_CODEX) {
			r->launcher = wd_strdup(real);
			r->launcher_argi = 1;
		}
		return;
	}
	const char *b = strrchr(real, '/');
	b = b ? b + 1 : real;
	if (strncmp(b, "node", 4) != 0 || !r->opts.argv[1])
		return;
	char *script = realpath(r->opts.argv[1], NULL);
	if (script && wd_str_has_suffix(script, tail)) {
		if (!r->opts.agent_set || r->opts.agent_auto)
			r->opts.agent = POL_HARNESS_CODEX;
		if (r->opts.agent == POL_HARNESS_CODEX) {
			r->launcher = script;
			r->launcher_argi = 2;
			return;
		}
	}
	free(script);
}

/* What each agent's harness must be able to write in the home directory
 * (its configuration and session state); its temporary files are under
 * /tmp, the session's own and writable. */
static const char *const *profile_writable(enum pol_harness h)
{
	static const char *const claude[] = {".claude", ".claude.json", ".claude.json.backup",
					     ".cache/claude", NULL};
	static const char *const codex[] = {".codex", NULL};
	static const char *const aider[] = {".aider", ".cache/aider", NULL};
	static const char *const none[] = {NULL};
	switch (h) {
	case POL_HARNESS_CLAUDE_CODE:
		return claude;
	case POL_HARNESS_CODEX:
		return codex;
	case POL_HARNESS_AIDER:
		return aider;
	case POL_HARNESS_NONE:
	default:
		return none;
	}
}

/* Where Landlock lets the agent write: the project (through the view),
 * the temporary directories (the session's private ones: tmpdir.c),
 * harmless devices, the agent profile's places and the config's list. */
char **sup_writable_list(const struct pol_config *c, const char *project, enum pol_harness h)
{
	static const char *const base[] = {"/tmp",	"/var/tmp", "/dev/null", "/dev/zero",
					   "/dev/full", "/dev/tty", "/dev/pts",	 "/dev/shm"};
	const char *const *prof = profile_writable(h);
	const char *home = getenv("HOME");
	size_t n = pol_config_writable_count(c), np = 0;
	while (prof[np])
		np++;
	char **v = wd_calloc(n + np + WD_ARRAY_SIZE(base) + 2, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; home && home[0] == '/' && i < np; i++)
		v[k++] = wd_asprintf("%s/%s", home, prof[i]);
	v[k++] = wd_strdup(project);
	for (size_t i = 0; i < WD_ARRAY_SIZE(base); i++)
		v[k++] = wd_strdup(base[i]);
	for (size_t i = 0; i < n; i++)
		v[k++] = wd_strdup(pol_config_writable(c, i));
	return v;
}

/*
 * Without the view nothing else keeps the project's .warden/ from the agent
 * (the config, the grants, the audit): the sandbox binds it read-only over
 * itself, so it must be a real directory of the project (a symlink would
 * be an entry of the writable project the agent could replace); a missing
 * one is made, so that the agent cannot create it either.
 */
static int prepare_no_view(const char *project)
{
	wd_autofree char *w = wd_asprintf("%s/.warden", project);
	struct stat st;
	if (lstat(w, &st) < 0 && errno == ENOENT && mkdir(w, 0755) < 0 && errno != EEXIST) {
		int e = errno;
		wd_err("%s: %s (--no-view binds it read-only, so it must exist)", w, strerror(e));
		return -e;
	}
	if (lstat(w, &st) < 0 || !S_ISDIR(st.st_mode)) {
		wd_err("refusing to start: %s is not a directory of the project (a symlink?): "
		       "with --no-view the agent could replace it and write the config; make it "
		       "a real directory",
		       w);
		return -EPERM;
	}
	return 0;
}

/* The read-only bind of .warden/ over itself (--no-view), after the
 * private directories' binds (a project under /tmp is bound first). */
static void add_warden_bind(struct sup_run *r, const char *project)
{
	char *w = wd_asprintf("%s/.warden", project);
	r->binds = wd_realloc(r->binds, (r->nbinds + 1) * sizeof(*r->binds));
	r->binds[r->nbinds++] = (struct sbx_bind){w, wd_strdup(w), false, false};
}

static void free_list(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static int parse_run_options(int argc, char **argv, struct sup_opts *o)
{
	static const struct option longopts[] = {
		{"project", required_argument, NULL, 'p'},
		{"audit", required_argument, NULL, 'a'},
		{"tier", required_argument, NULL, 't'},
		{"prompt", required_argument, NULL, 'P'},
		{"task", required_argument, NULL, 'T'},
		{"stats", no_argument, NULL, 'S'},
		{"no-view", no_argument, NULL, 'N'},
		{"keep-tmp", no_argument, NULL, 'K'},
		{"share-tmp", required_argument, NULL, 'H'},
		{"approval-timeout", required_argument, NULL, 'D'},
		{"role", required_argument, NULL, 'R'},
		{"turn-idle", required_argument, NULL, 'I'},
		{"parent", required_argument, NULL, 'Q'},
		{"agent", required_argument, NULL, 'G'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->project = optarg;
			break;
		case 'a':
			o->audit_path = optarg;
			break;
		case 't':
			if (pol_tier_parse(optarg, &o->tier) < 0) {
				wd_err("--tier must be aggressive, standard or passive, not \"%s\"",
				       optarg);
				return -EINVAL;
			}
			o->tier_set = true;
			break;
		case 'P':
			if (strcmp(optarg, "tty") == 0)
				o->prompt = SUP_PROMPT_TTY;
			else if (strcmp(optarg, "desk") == 0)
				o->prompt = SUP_PROMPT_DESK;
			else if (strcmp(optarg, "none") == 0)
				o->prompt = SUP_PROMPT_NONE;
			else {
				wd_err("--prompt must be desk, tty or none, not \"%s\"", optarg);
				return -EINVAL;
			}
			o->prompt_set = true;
			break;
		case 'T':
			if (strlen(optarg) > 800) {
				wd_err("--task is limited to 800 characters (%zu given)",
				       strlen(optarg));
				return -EINVAL;
			}
			o->task = optarg;
			break;
		case 'S':
			o->stats = true;
			break;
		case 'N':
			o->no_view = true;
			break;
		case 'K':
			o->keep_tmp = true;
			break;
		case 'H': {
			if (!pol_tmp_share_valid(optarg)) {
				wd_err("--share-tmp: \"%s\" is not an absolute path under /tmp, "
				       "/var/tmp or /dev/shm",
				       optarg);
				return -EINVAL;
			}
			size_t n = 0;
			while (o->share_tmp[n])
				n++;
			if (n + 1 >= WD_ARRAY_SIZE(o->share_tmp)) {
				wd_err("--share-tmp: at most %zu places",
				       WD_ARRAY_SIZE(o->share_tmp) - 1);
				return -EINVAL;
			}
			o->share_tmp[n] = optarg;
			break;
		}
		case 'D': {
			int64_t us = 0;
			char *rel = wd_asprintf(
				"%s%s", optarg,
				strspn(optarg, "0123456789") == strlen(optarg) ? "s" : "");
			int bad = wd_parse_time(rel, 0, &us);
			free(rel);
			if (bad < 0 || us >= 0) {
				wd_err("--approval-timeout: \"%s\" is not a duration (30s, 10m, "
				       "1h)",
				       optarg);
				return -EINVAL;
			}
			o->approval_timeout_ms = -us / 1000;
			break;
		}
		case 'I': {
			char *end = NULL;
			double secs = strtod(optarg, &end);
			if (end == optarg || *end || secs < 0 || secs > 3600) {
				wd_err("--turn-idle: \"%s\" is not a number of seconds (0-3600)",
				       optarg);
				return -EINVAL;
			}
			o->turn_idle_ms = (int64_t)(secs * 1000);
			o->turn_idle_set = true;
			break;
		}
		case 'G':
			o->agent_auto = strcmp(optarg, "auto") == 0;
			if (o->agent_auto || strcmp(optarg, "none") == 0)
				o->agent = POL_HARNESS_NONE;
			else if (strcmp(optarg, "claude-code") == 0)
				o->agent = POL_HARNESS_CLAUDE_CODE;
			else if (strcmp(optarg, "codex") == 0)
				o->agent = POL_HARNESS_CODEX;
			else if (strcmp(optarg, "aider") == 0)
				o->agent = POL_HARNESS_AIDER;
			else {
				wd_err("--agent must be claude-code, codex, aider, auto or none, "
				       "not "
				       "\"%s\"",
				       optarg);
				return -EINVAL;
			}
			o->agent_set = true;
			break;
		case 'Q':
			o->parent = optarg;
			break;
		case 'R':
			if (strcmp(optarg, "review") == 0)
				o->review = true;
			else if (strcmp(optarg, "agent") != 0) {
				wd_err("--role must be agent or review, not \"%s\"", optarg);
				return -EINVAL;
			}
			break;
		case 'v':
			wd_log_set_level(WD_LOG_DEBUG);
			break;
		case 'h':
			fputs(run_usage, stdout);
			exit(0);
		default:
			fputs(run_usage, stderr);
			return -EINVAL;
		}
	}
	if (optind >= argc) {
		wd_err("warden run needs a command: warden run [options] -- CMD [ARGS...]");
		return -EINVAL;
	}
	o->argv = argv + optind;
	return 0;
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return SUP_EXIT_NOSTART;
}

/* After the agent's exit: refuse what waits, kill what is left, and reap
 * it, for at most two seconds (EXITKILL finishes the job if we exit). */
static void wind_down(struct sup_run *r)
{
	sup_audit_flush(r, NULL);
	r->stopping = true; /* from here on, escalations refuse (decide.c) */
	sup_desk_close(r);
	sup_view_close(r);
	sup_judge_free(r);
	sup_pending_refuse_all(r, "the agent exited before a decision");
	sup_trace_kill_all(r);
	int64_t until = wd_now_mono_ns() + 2000000000LL;
	while (r->nprocs > 0 && wd_now_mono_ns() < until) {
		int status;
		pid_t pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid < 0)
			break;
		if (pid == 0) {
			usleep(2000);
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			sup_proc_del(r, pid);
		else if (WIFSTOPPED(status))
			kill(pid, SIGKILL);
	}
}

static int run_loop(struct sup_run *r)
{
	int rc = sup_loop_add(r->loop, r->child.notify_fd, EPOLLIN, on_notify, r);
	if (rc == 0)
		rc = sup_loop_add(r->loop, r->sigfd, EPOLLIN, on_signal, r);
	if (rc == 0)
		rc = sup_loop_add(r->loop, r->child.pidfd, EPOLLIN, on_pidfd, r);
	if (rc == 0)
		rc = sup_prompt_watch(r);
	if (rc == 0 && r->view)
		rc = sup_loop_add(r->loop, r->view_efd, EPOLLIN, sup_on_view, r);
	if (rc == 0)
		rc = sup_desk_watch(r);
	if (rc < 0) {
		wd_err("the event loop could not be set up: %s", strerror(-rc));
		return rc;
	}
	while (!r->agent_exited) {
		int wait = sup_interrupt_poll(r, sup_pending_expire(r));
		rc = sup_loop_once(r->loop, wait < 0 || wait > 1000 ? 1000 : wait);
		if (rc < 0) {
			wd_err("the event loop failed: %s", strerror(-rc));
			return rc;
		}
		/* Tracee events come with SIGCHLD (the signalfd reaps); a quiet
		 * round reaps too, so that nothing can be left waiting. */
		if (rc == 0) {
			sup_trace_reap(r);
			sup_audit_flush(r, NULL); /* the failed execs' rows */
		}
	}
	return 0;
}

int sup_cmd_run(int argc, char **argv)
{
	struct sup_run r = {
		.desk_fd = -1,
		.sigfd = -1,
		.tty_fd = -1,
		.saved_fg = -1,
		.backing_fd = -1,
		.view_efd = -1,
		.tmp_fd = -1,
		.tmp_parent_fd = -1,
		.view_lock = PTHREAD_MUTEX_INITIALIZER,
		.view_cond = PTHREAD_COND_INITIALIZER,
	};
	char **hide = NULL, **writable = NULL;
	/* Declared before any goto out: the cleanup frees it. */
	wd_autofree char *cmdline = NULL;
	r.child.notify_fd = r.child.pidfd = r.child.root_fd = r.child.exit_fd = -1;
	r.child.init_pidfd = -1;
	if (parse_run_options(argc, argv, &r.opts) < 0)
		return SUP_EXIT_NOSTART;

	char project[PATH_MAX];
	if (!realpath(r.opts.project ? r.opts.project : ".", project)) {
		wd_err("project %s: %s", r.opts.project ? r.opts.project : ".", strerror(errno));
		return SUP_EXIT_NOSTART;
	}
	r.opts.project = project;
	wd_autofree char *cfgpath = wd_asprintf("%s/.warden/permissions.json", project);
	if (sup_config_load(cfgpath, true, &r.config) < 0) {
		wd_err("nothing was started: fix the config (warden config check shows every "
		       "problem)");
		return SUP_EXIT_NOSTART;
	}
	const char *home = getenv("HOME");
	pol_config_set_paths(r.config, project, home ? home : "/root");
	/* The secrets are where the user's tools keep them: in the passwd
	 * home too, whatever $HOME says, and in SUDO_USER's. */
	r.homes = home_list();
	for (size_t i = 0; r.homes[i]; i++)
		pol_config_add_home(r.config, r.homes[i]);

	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd))) {
		wd_err("cannot read the current directory: %s", strerror(errno));
		free_list(r.homes);
		pol_config_free(r.config);
		return SUP_EXIT_NOSTART;
	}
	wd_autofree char *audit_default = wd_asprintf("%s/.warden/audit.db", project);
	wd_autofree char *audit_abs = NULL;
	if (!r.opts.audit_path)
		r.opts.audit_path = audit_default;
	else if (r.opts.audit_path[0] != '/')
		r.opts.audit_path = audit_abs = wd_asprintf("%s/%s", cwd, r.opts.audit_path);
	char *err = NULL;
	int rc = 0;
	char *prog = find_program(r.opts.argv[0]);
	if (!prog) {
		wd_err("%s: command not found or not executable", r.opts.argv[0]);
		free_list(r.homes);
		pol_config_free(r.config);
		return SUP_EXIT_NOSTART;
	}
	/* The agent's own binary, resolved: it may run itself as rg or bfs. */
	char *real_prog = realpath(prog, NULL);
	pol_config_set_agent_binary(r.config, real_prog ? real_prog : prog);
	if (!r.opts.agent_set || r.opts.agent_auto)
		r.opts.agent = detect_agent(real_prog ? real_prog : prog, r.opts.argv[0]);
	find_launcher(&r, real_prog);
	free(real_prog);
	sup_warn_agent_options(r.opts.agent, r.opts.argv);
	writable = sup_writable_list(r.config, project, r.opts.agent);
	/* The private temporary directories first: what they hide from the
	 * agent is not a place it may write on the host. Then warden's own
	 * files, before anything is opened or started. */
	if (r.opts.no_view && (rc = prepare_no_view(project)) < 0)
		goto early;
	if ((rc = sup_tmp_setup(&r, project, cwd, prog, writable)) < 0)
		goto early;
	if (r.opts.no_view)
		add_warden_bind(&r, project);
	rc = sup_own_files_check(&r, project, cfgpath, writable, &err);
	if (rc < 0) {
		wd_err("refusing to start: %s", err);
		free(err);
		err = NULL;
		goto early;
	}
	rc = sto_open(r.opts.audit_path, &r.db, &err);
	if (rc < 0) {
		wd_err("%s", err ? err : strerror(-rc));
		free(err);
		goto early;
	}
	make_session_id(r.session_id, sizeof(r.session_id));
	r.person = person_name();
	r.grants = pol_session_new();
	if (!r.opts.prompt_set)
		r.opts.prompt = SUP_PROMPT_DESK;
	if (r.opts.approval_timeout_ms <= 0)
		r.opts.approval_timeout_ms = 10 * 60 * 1000;
	if (!r.opts.turn_idle_set)
		r.opts.turn_idle_ms = 2000;
	if (!r.opts.tier_set) {
		enum pol_tier t = pol_config_tier(r.config);
		r.opts.tier = t == POL_TIER_UNSET ? POL_TIER_STANDARD : t;
	}
	bool asks = r.opts.tier == POL_TIER_STANDARD && !r.opts.review;
	if (asks && r.opts.prompt == SUP_PROMPT_TTY && sup_prompt_open(&r) < 0) {
		wd_err("--prompt tty needs a controlling terminal; use --prompt desk or none in "
		       "scripts");
		rc = -ENOTTY;
		goto out;
	}
	cmdline = wd_argv_join(r.opts.argv);
	struct sto_session ses = {
		.id = r.session_id,
		.started_us = wd_now_real_us(),
		.project = project,
		.command = cmdline,
		.tier = pol_tier_name(r.opts.tier),
		.role = r.opts.review ? "review" : "agent",
		.agent = r.opts.agent != POL_HARNESS_NONE ? pol_harness_name(r.opts.agent) : NULL,
		.parent = r.opts.parent,
		.task = r.opts.task,
	};
	/* The id is the session's key in the audit, which every session of
	 * the project shares: the database says whether it is taken (two
	 * sessions started in the same second draw the same 16 bits once in
	 * 65,536 pairs), and a taken one is drawn again. The desk's socket is
	 * named after it, so it opens once the id is the session's. */
	for (int tries = 0;; tries++) {
		rc = sto_session_begin(r.db, &ses);
		if (rc != -EEXIST || tries == 16)
			break;
		make_session_id(r.session_id, sizeof(r.session_id));
	}
	if (rc < 0) {
		wd_err("%s: the session could not be recorded: %s", r.opts.audit_path,
		       strerror(-rc));
		goto out;
	}
	wd_info("session %s (tier %s)", r.session_id, pol_tier_name(r.opts.tier));
	if (asks && r.opts.prompt != SUP_PROMPT_NONE) {
		rc = sup_desk_open(&r);
		if (rc < 0) {
			wd_err("the approvals desk could not be opened: %s", strerror(-rc));
			goto out;
		}
	}

	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTTOU, SIG_IGN); /* so that the supervisor can move the terminal */
	signal(SIGTTIN, SIG_IGN); /* a read from the background fails, never stops warden */
	r.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	r.loop = sup_loop_new();
	if (r.sigfd < 0 || !r.loop) {
		wd_err("the event loop could not be set up: %s", strerror(errno));
		rc = -errno;
		goto out;
	}
	rc = sup_judge_init(&r);
	if (rc < 0)
		goto out;
	char **env = agent_environ(r.session_id, r.config, r.opts.agent);
	if (!r.opts.no_view) {
		r.backing_fd = open(project, O_PATH | O_DIRECTORY | O_CLOEXEC);
		r.view_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (r.backing_fd < 0 || r.view_efd < 0) {
			wd_err("%s: %s", project, strerror(errno));
			rc = -errno;
			free_env(env);
			goto out;
		}
	}
	/* The view keeps one O_PATH fd per file the kernel knows: a large
	 * tree needs far more than the usual 1024. The agent gets the soft
	 * limit it would have had. */
	struct rlimit nofile = {0};
	unsigned long agent_nofile = 0;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
		agent_nofile = nofile.rlim_cur;
		struct rlimit want = nofile;
		/* Root may raise the hard limit too, up to fs.nr_open. */
		char *nr = NULL;
		if (geteuid() == 0 && wd_read_file("/proc/sys/fs/nr_open", 64, &nr, NULL) == 0) {
			unsigned long max = strtoul(nr, NULL, 10);
			if (max > 1048576)
				max = 1048576;
			if (max > want.rlim_max)
				want.rlim_max = max;
		}
		free(nr);
		want.rlim_cur = want.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &want) < 0) {
			/* No CAP_SYS_RESOURCE: up to the hard limit only. */
			want = nofile;
			want.rlim_cur = want.rlim_max;
			if (setrlimit(RLIMIT_NOFILE, &want) < 0)
				agent_nofile = 0;
		}
		wd_debug("the views keep up to %lu objects between them before they drop the "
			 "least recently used files (three quarters of RLIMIT_NOFILE)",
			 (unsigned long)want.rlim_cur / 4 * 3);
	}
	hide = hide_list(&r, r.config, project, r.opts.audit_path, r.opts.no_view);
	if (!r.opts.no_view)
		sup_tell_skip(project);
	for (size_t i = 0; i < r.ngates; i++)
		sup_tell_skip(r.gate_dirs[i]);
	for (size_t i = 0; i < r.nmarkers; i++)
		sup_tell_skip(r.marker_dirs[i]);
	unmark_profile(&r, profile_writable(r.opts.agent));
	markers_writable(&r, writable);
	struct sbx_spawn_config sc = {
		.path = prog,
		.argv = r.opts.argv,
		.envp = env,
		.cwd = cwd,
		.take_terminal = true,
		.view_dir = r.opts.no_view ? NULL : project,
		.on_view = start_view,
		.on_view_arg = &r,
		.gate_dirs = r.gate_dirs,
		.on_gate = start_gate,
		.marker_dirs = r.marker_dirs,
		.on_markers = start_markers,
		.hide = hide,
		.writable = writable,
		.nofile_soft = agent_nofile,
		.binds = r.binds,
		.nbinds = r.nbinds,
		.private_dirs = r.private_dirs,
		.shm_dir = r.shm_src,
	};
	rc = sbx_spawn(&sc, &r.child, &err);
	if (rc < 0) {
		wd_err("%s", err ? err : "the agent could not be started");
		free(err);
		free_env(env);
		goto out;
	}
	/* The hides are mounted: later lookups may be evicted. */
	sbx_view_seal(r.view);
	for (size_t i = 0; i < r.nmarkers; i++)
		sbx_view_seal(r.markers[i].view);
	/* The places Landlock lets the agent write, as the sandbox sees them
	 * now that everything is mounted (the view over the project, a
	 * private /tmp): a program under one of them is not what its name
	 * says. Programs may belong to root or the user who runs warden. */
	r.places = sbx_places_open(r.child.root_fd, writable, getuid());
	sbx_notify_set_places(r.places);
	if (r.child.landlock_abi == 0)
		wd_warn("Landlock is not available on this kernel: nothing but file "
			"permissions limits where the agent writes outside the project view");
	if (r.opts.no_view)
		wd_warn("--no-view: opens of sensitive files in the project are not decided");
	struct sup_proc *first = sup_proc_add(&r, r.child.pid, getpid());
	first->startup = true;
	rc = run_loop(&r);
	free_env(env);
	wind_down(&r);
out:
	if (r.saved_fg > 0 || r.child.pid > 0) {
		if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) != getpgrp())
			tcsetpgrp(STDIN_FILENO, getpgrp());
	}
	/* The private temporary directories go once nothing of the sandbox
	 * can act on them any more. */
	bool gone = r.child.init_pidfd < 0 || sbx_child_gone(&r.child, 5000) == 0;
	sup_tmp_finish(&r, gone);
	int code = SUP_EXIT_NOSTART;
	if (rc == 0 && r.agent_exited) {
		code = r.agent_started ? exit_code_of(r.agent_status) : SUP_EXIT_NOSTART;
		if (!r.agent_started)
			wd_err("the agent could not be started");
	}
	if (r.db) {
		sto_session_end(r.db, r.session_id, wd_now_real_us(), code);
		if (r.opts.stats)
			sup_stats_print(&r.stats, stderr);
		if (r.opts.stats && r.view) {
			size_t nodes;
			uint64_t evicted;
			sbx_view_counts(r.view, &nodes, &evicted);
			fprintf(stderr,
				"  view: %zu objects held at exit, %llu entries dropped to stay "
				"within its descriptors\n",
				nodes, (unsigned long long)evicted);
		}
		sto_close(r.db);
	}
	if (r.audit_failures)
		wd_err("%llu audit rows could not be written; those requests were refused",
		       r.audit_failures);
	sup_prompt_close(&r);
	sup_desk_close(&r);
	sup_judge_free(&r); /* after wind_down this is a no-op */
	sup_trace_free(&r);
	sbx_view_stop(r.view);
	wd_close(&r.backing_fd);
	for (size_t i = 0; i < r.ngates; i++) {
		sbx_view_stop(r.gates[i]);
		wd_close(&r.gate_fds[i]);
		free(r.gate_dirs[i]);
	}
	free(r.gate_dirs);
	free(r.gate_fds);
	free(r.gates);
	for (size_t i = 0; i < r.nmarkers; i++) {
		sbx_view_stop(r.markers[i].view);
		wd_close(&r.markers[i].fd);
		free_list(r.markers[i].hidden);
		free_list(r.markers[i].unmarked);
		free_list(r.markers[i].writable);
	}
	free(r.markers);
	free_list(r.marker_dirs);
	free_list(r.homes);
	wd_close(&r.view_efd);
	free_list(hide);
	free_list(writable);
	sup_tmp_free(&r);
	sbx_notify_set_places(NULL);
	sbx_places_free(r.places);
	sup_stats_free(&r.stats);
	wd_close(&r.child.notify_fd);
	wd_close(&r.child.root_fd);
	wd_close(&r.child.exit_fd);
	wd_close(&r.child.pidfd);
	wd_close(&r.sigfd);
	sup_loop_free(r.loop);
	pol_session_free(r.grants);
	pol_config_free(r.config);
	free(r.person);
	free(r.launcher);
	free(r.agent_path);
	free(prog);
	return code;
early:
	sup_tmp_finish(&r, true);
	sup_tmp_free(&r);
	free_list(writable);
	free_list(r.homes);
	pol_config_free(r.config);
	free(r.launcher);
	free(prog);
	return SUP_EXIT_NOSTART;
}
