/*
 * run.c: `warden run`: reads the options and the project's config, opens
 * the audit, starts the agent under the filter (sandbox/spawn.c) and runs
 * the event loop until the agent's initial process exits. Then the rest of
 * the tree is killed (nothing the agent left behind outlives the
 * supervision) and warden exits with the agent's status.
 */
#include "dns_int.h"
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
	r->stopping = true; /* from here on, escalations refuse (pipeline.c) */
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

/* Moves the journal's records into SQLite (|retry|: only when a failed
 * flush is due to be tried again); on failure they stay in the journal,
 * and the next append or a retry a second later tries again. */
static void journal_flush(struct sup_run *r, bool retry)
{
	wd_autofree char *err = NULL;
	int fr = retry ? sto_flush_retry(r->db, &err) : sto_flush(r->db, &err);
	if (fr < 0)
		wd_warn("%s (the rows stay in the journal)", err ? err : strerror(-fr));
}

static int run_loop(struct sup_run *r)
{
	int rc = sup_loop_add(r->loop, r->child.notify_fd, EPOLLIN, on_notify, r);
	if (rc == 0)
		rc = sup_loop_add(r->loop, r->sigfd, EPOLLIN, on_signal, r);
	if (rc == 0)
		rc = sup_loop_add(r->loop, r->child.pidfd, EPOLLIN, on_pidfd, r);
	if (rc == 0)
		rc = sup_tty_watch(r);
	if (rc == 0 && r->view)
		rc = sup_loop_add(r->loop, r->view_efd, EPOLLIN, sup_on_view, r);
	if (rc == 0)
		rc = sup_resolver_watch(r);
	if (rc == 0)
		rc = sup_desk_watch(r);
	if (rc < 0) {
		wd_err("the event loop could not be set up: %s", strerror(-rc));
		return rc;
	}
	while (!r->agent_exited) {
		int wait = sup_interrupt_poll(r, sup_pending_expire(r));
		/* The journal's records move into SQLite in batches: 256 of
		 * them, or every 20 ms. On this thread, which owns the
		 * connection, so that the pipeline's queries (which flush
		 * first) see them without a lock. */
		int flush = sto_flush_wait_ms(r->db);
		if (flush == 0)
			journal_flush(r, false);
		else if (flush > 0 && (wait < 0 || flush < wait))
			wait = flush;
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
			journal_flush(r, true);
		}
	}
	return 0;
}

/* What warden run gathers to start the agent, freed at its end. */
struct launch {
	char project[PATH_MAX]; /* canonical; r->opts.project points here */
	char cwd[PATH_MAX];
	char agent_cwd[PATH_MAX]; /* where the agent starts: cwd, or the project */
	char *cfgpath;
	char *audit_default, *audit_abs;
	char *prog; /* the agent's program, found in PATH */
	char **writable, **hide, **env;
	char *cmdline;
	unsigned long agent_nofile; /* the agent's RLIMIT_NOFILE (0: as ours) */
};

static void run_init(struct sup_run *r)
{
	*r = (struct sup_run){
		.desk_fd = -1,
		.sigfd = -1,
		.tty_fd = -1,
		.saved_fg = -1,
		.backing_fd = -1,
		.emul_backing_fd = -1,
		.view_efd = -1,
		.guard_ctl = -1,
		.tmp_fd = -1,
		.tmp_parent_fd = -1,
		.view_lock = PTHREAD_MUTEX_INITIALIZER,
		.view_cond = PTHREAD_COND_INITIALIZER,
	};
	r->child.notify_fd = r->child.pidfd = r->child.root_fd = r->child.exit_fd = -1;
	r->child.init_pidfd = -1;
}

/* The project: a directory warden can read, and not / or a home (the agent
 * would see all of it) unless --force. 0, or -errno after saying why. */
static int check_project(struct sup_run *r, struct launch *L)
{
	char *err = NULL;
	int rc = sup_project_dir(r->opts.project ? r->opts.project : ".", L->project, &err);
	if (rc == 0 && !r->opts.force)
		rc = sup_project_guard(L->project, &err);
	if (rc < 0) {
		wd_err("%s", err ? err : strerror(-rc));
		free(err);
		return rc;
	}
	/* Before its config is read or anything is created in it. */
	rc = sup_warden_dir_check(L->project, &err);
	if (rc < 0) {
		wd_err("refusing to start: %s", err ? err : strerror(-rc));
		free(err);
	}
	return rc;
}

/* The agent starts in the current directory when it is in the project,
 * else in the project itself. (The current directory outside the project
 * is still shown read-only in a private /tmp, as before: sup_tmp_setup.) */
static void agent_cwd(struct launch *L)
{
	bool within = sup_path_within(L->cwd, L->project);
	snprintf(L->agent_cwd, sizeof(L->agent_cwd), "%s", within ? L->cwd : L->project);
	if (!within)
		wd_info("the agent starts in the project, %s (the current directory is outside "
			"it)",
			L->project);
}

/* The project, its config, the homes, the current directory and where the
 * audit is. 0, or -errno after saying why. */
static int load_project(struct sup_run *r, struct launch *L)
{
	int rc = check_project(r, L);
	if (rc < 0)
		return rc;
	r->opts.project = L->project;
	L->cfgpath = wd_asprintf("%s/.warden/permissions.json", L->project);
	if (sup_config_load(L->cfgpath, true, &r->config) < 0) {
		wd_err("nothing was started: fix the config (warden config check shows every "
		       "problem)");
		return -EINVAL;
	}
	const char *home = getenv("HOME");
	pol_config_set_paths(r->config, L->project, home ? home : "/root");
	/* The secrets are where the user's tools keep them: in the passwd
	 * home too, whatever $HOME says, and in SUDO_USER's. */
	r->homes = sup_home_list();
	for (size_t i = 0; r->homes[i]; i++)
		pol_config_add_home(r->config, r->homes[i]);
	if (!getcwd(L->cwd, sizeof(L->cwd))) {
		int e = errno;
		wd_err("cannot read the current directory: %s", strerror(e));
		return e ? -e : -EIO;
	}
	L->audit_default = wd_asprintf("%s/.warden/audit.db", L->project);
	if (!r->opts.audit_path)
		r->opts.audit_path = L->audit_default;
	else if (r->opts.audit_path[0] != '/')
		r->opts.audit_path = L->audit_abs =
			wd_asprintf("%s/%s", L->cwd, r->opts.audit_path);
	agent_cwd(L);
	return 0;
}

/* The agent's program, profile and launcher, and where it may write. */
static int find_agent(struct sup_run *r, struct launch *L)
{
	L->prog = sup_find_program(r->opts.argv[0]);
	if (!L->prog) {
		wd_err("%s: command not found or not executable", r->opts.argv[0]);
		return -ENOENT;
	}
	/* The agent's own binary, resolved: it may run itself as rg or bfs. */
	char *real_prog = realpath(L->prog, NULL);
	pol_config_set_agent_binary(r->config, real_prog ? real_prog : L->prog);
	if (!r->opts.agent_set || r->opts.agent_auto)
		r->opts.agent = sup_detect_agent(real_prog ? real_prog : L->prog, r->opts.argv[0]);
	sup_find_launcher(r, real_prog);
	free(real_prog);
	sup_warn_agent_options(r->opts.agent, r->opts.argv);
	L->writable = sup_writable_list(r->config, L->project, r->opts.agent);
	return 0;
}

/* The private temporary directories first: what they hide from the agent
 * is not a place it may write on the host. Then warden's own files, before
 * anything is opened or started, and the audit. */
static int prepare_files(struct sup_run *r, struct launch *L)
{
	int rc;
	char *err = NULL;
	if (r->opts.no_view || strcmp(r->opts.audit_path, L->audit_default) == 0)
		sup_warden_dir_prepare(L->project);
	if (r->opts.no_view && (rc = prepare_no_view(L->project)) < 0)
		return rc;
	if ((rc = sup_tmp_setup(r, L->project, L->cwd, L->prog, L->writable)) < 0)
		return rc;
	if (r->opts.no_view)
		add_warden_bind(r, L->project);
	rc = sup_own_files_check(r, L->project, L->cfgpath, L->writable, &err);
	if (rc < 0) {
		wd_err("refusing to start: %s", err ? err : strerror(-rc));
		free(err);
		return rc;
	}
	rc = sto_open(r->opts.audit_path, &r->db, &err);
	if (rc < 0) {
		wd_err("%s", err ? err : strerror(-rc));
		free(err);
		return rc;
	}
	/* A damaged audit is refused before anything is added to it. */
	if ((rc = sup_audit_sound(r->db)) < 0) {
		sto_close(r->db);
		r->db = NULL;
		return rc;
	}
	/* Rows go to the journal first, SQLite later (run_loop); with another
	 * session writing this audit, straight to SQLite as before. */
	rc = sto_journal_begin(r->db, &err);
	r->stats.journal = rc == 0;
	if (rc == -EBUSY) {
		wd_debug("%s: another session writes this audit: rows are committed one by one",
			 r->opts.audit_path);
	} else if (rc < 0) {
		wd_err("%s", err ? err : strerror(-rc));
		free(err);
		sto_close(r->db);
		r->db = NULL;
		return rc;
	}
	return 0;
}

/* The options the command line left to the config or the defaults. */
static void settle_defaults(struct sup_run *r)
{
	if (!r->opts.prompt_set)
		r->opts.prompt = SUP_PROMPT_DESK;
	if (r->opts.approval_timeout_ms <= 0)
		r->opts.approval_timeout_ms = 10 * 60 * 1000;
	if (!r->opts.turn_idle_set)
		r->opts.turn_idle_ms = 2000;
	if (!r->opts.tier_set) {
		enum pol_tier t = pol_config_tier(r->config);
		r->opts.tier = t == POL_TIER_UNSET ? POL_TIER_STANDARD : t;
	}
}

/* Writes the session's row in the audit. */
static int record_session(struct sup_run *r, struct launch *L)
{
	L->cmdline = wd_argv_join(r->opts.argv);
	struct sto_session ses = {
		.id = r->session_id,
		.started_us = wd_now_real_us(),
		.project = L->project,
		.command = L->cmdline,
		.tier = pol_tier_name(r->opts.tier),
		.role = r->opts.review ? "review" : "agent",
		.agent = r->opts.agent != POL_HARNESS_NONE ? pol_harness_name(r->opts.agent) : NULL,
		.parent = r->opts.parent,
		.task = r->opts.task,
	};
	/* The id is the session's key in the audit, which every session of
	 * the project shares: the database says whether it is taken (two
	 * sessions started in the same second draw the same 16 bits once in
	 * 65,536 pairs), and a taken one is drawn again. The desk's socket is
	 * named after it, so it opens once the id is the session's. */
	int rc;
	for (int tries = 0;; tries++) {
		rc = sto_session_begin(r->db, &ses, NULL);
		if (rc != -EEXIST || tries == 16)
			break;
		make_session_id(r->session_id, sizeof(r->session_id));
	}
	if (rc < 0)
		wd_err("%s: the session could not be recorded: %s", r->opts.audit_path,
		       strerror(-rc));
	return rc;
}

static bool keep_denied_name(void *arg, const char *name)
{
	return pol_net_name_denied(arg, name);
}

/* The session: its id and row, who runs it, and how a person is asked. */
static int begin_session(struct sup_run *r, struct launch *L)
{
	make_session_id(r->session_id, sizeof(r->session_id));
	r->person = sup_person_name();
	r->grants = pol_session_new();
	r->names = sup_names_new();
	/* A denied name stays on its addresses (the deny entries never change
	 * in a run; the config outlives the names). */
	sup_names_set_keep(r->names, keep_denied_name, r->config);
	/* The host's /etc/hosts (root's file: the agent cannot add to it)
	 * names loopback "localhost"; the session's resolver names what the
	 * sandbox resolves, and its bind must be in place before the spawn. */
	sup_hosts_load(r->names, "/etc/hosts");
	if (sup_resolver_start(r, &r->resolver_why) < 0)
		wd_debug("no session resolver: %s", r->resolver_why);
	settle_defaults(r);
	bool asks = r->opts.tier == POL_TIER_STANDARD && !r->opts.review;
	if (asks && r->opts.prompt == SUP_PROMPT_TTY && sup_tty_open(r) < 0) {
		wd_err("--prompt tty needs a controlling terminal; use --prompt desk or none in "
		       "scripts");
		return -ENOTTY;
	}
	int rc = record_session(r, L);
	if (rc < 0)
		return rc;
	wd_info("session %s (tier %s)", r->session_id, pol_tier_name(r->opts.tier));
	if (asks && r->opts.prompt != SUP_PROMPT_NONE) {
		rc = sup_desk_open(r);
		if (rc < 0) {
			wd_err("the approvals desk could not be opened: %s", strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* The signals warden handles in its loop, and the loop. */
static int setup_loop(struct sup_run *r)
{
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
	r->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	r->loop = sup_loop_new();
	if (r->sigfd < 0 || !r->loop) {
		int e = errno;
		wd_err("the event loop could not be set up: %s", strerror(e));
		return e ? -e : -EIO;
	}
	return 0;
}

/* The view keeps one O_PATH fd per file the kernel knows: a large tree
 * needs far more than the usual 1024. Returns the soft limit the agent
 * gets: the one it would have had (0: leave it as ours). */
static unsigned long raise_nofile(void)
{
	struct rlimit nofile = {0};
	if (getrlimit(RLIMIT_NOFILE, &nofile) < 0)
		return 0;
	unsigned long agent_nofile = nofile.rlim_cur;
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
	return agent_nofile;
}

/*
 * The split view, when it is asked for and the kernel allows it: the start
 * walk over the project (which subtrees go native, which identities are
 * sensitive or control) and the fanotify group that will watch them. The
 * listener's threads start after the spawn (dns_int.h says why not
 * before); the walk and the group start none. 0, or -EINVAL when split
 * was asked for and cannot run.
 */
static int prepare_split(struct sup_run *r, struct launch *L)
{
	/* --view, else WARDEN_VIEW (run_opts.c), else auto. */
	enum sup_view_mode mode = r->opts.view_mode;
	if (r->opts.no_view || mode == SUP_VIEW_FUSE) {
		snprintf(r->split_why, sizeof(r->split_why), "%s",
			 r->opts.no_view ? "--no-view" : "--view=fuse or WARDEN_VIEW=fuse");
		return 0;
	}
	int group = -1;
	int rc = sbx_split_probe(r->backing_fd, &group, r->split_why, sizeof(r->split_why));
	if (rc < 0) {
		if (mode == SUP_VIEW_SPLIT) {
			wd_err("--view=split is not available here: %s", r->split_why);
			return -EINVAL;
		}
		wd_debug("project view: FUSE (%s)", r->split_why);
		return 0;
	}
	/* The names the view hides (the audit in the project, with its
	 * companions beside it) and hidden places inside the project keep
	 * their directories FUSE. */
	size_t plen = strlen(L->project), nk = 0;
	const char **keep = wd_calloc(wd_strv_len(L->hide) + 2, sizeof(char *));
	if (strncmp(r->opts.audit_path, L->project, plen) == 0 && r->opts.audit_path[plen] == '/')
		keep[nk++] = r->opts.audit_path + plen + 1;
	for (size_t i = 0; L->hide && L->hide[i]; i++)
		if (strncmp(L->hide[i], L->project, plen) == 0 && L->hide[i][plen] == '/')
			keep[nk++] = L->hide[i] + plen + 1;
	struct sbx_split_walk_config wc = {
		.backing_fd = r->backing_fd,
		.policy = r->config,
		.keep = keep,
	};
	rc = sbx_split_walk(&wc, &r->split);
	/* Directories made during the session are bound by the same test
	 * (fsops.c). */
	r->split_keep = wd_strv_dup((char *const *)keep, NULL);
	free(keep);
	struct sbx_fan_config fc = {
		.policy = r->config,
		.project = L->project,
		.backing_fd = r->backing_fd,
		.split = r->split,
		.group = group, /* taken by sbx_fan_new, even when it fails */
		.decide = sup_view_decide,
		.decide_arg = r,
	};
	if (rc == 0)
		rc = sbx_fan_new(&fc, &r->fan);
	else
		close(group);
	if (rc < 0) {
		sbx_split_free(r->split);
		r->split = NULL;
		snprintf(r->split_why, sizeof(r->split_why),
			 "the split view could not be set up: %s", strerror(-rc));
		if (mode == SUP_VIEW_SPLIT) {
			wd_err("--view=split: %s", r->split_why);
			return -EINVAL;
		}
		wd_debug("project view: FUSE (%s)", r->split_why);
		return 0;
	}
	wd_debug("project view: split (%zu fast subtrees, %zu files; %zu directories through "
		 "FUSE; walk %.3f s%s)",
		 r->split->nfast, r->split->fast_files_total, r->split->fuse_dirs, r->split->walk_s,
		 r->split->complete ? "" : ", stopped at its budget");
	return 0;
}

/* The project view's descriptors, and the places outside the project:
 * hidden, gated or in a markers view. */
static int prepare_views(struct sup_run *r, struct launch *L)
{
	if (!r->opts.no_view) {
		r->backing_fd = open(L->project, O_PATH | O_DIRECTORY | O_CLOEXEC);
		r->view_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (r->backing_fd < 0 || r->view_efd < 0) {
			int e = errno;
			wd_err("%s: %s", L->project, strerror(e));
			return e ? -e : -EIO;
		}
	}
	L->agent_nofile = raise_nofile();
	L->hide = sup_hide_list(r, r->config, L->project, r->opts.audit_path, r->opts.no_view);
	if (prepare_split(r, L) < 0)
		return -EINVAL;
	if (!r->opts.no_view)
		sup_tell_skip(r, L->project);
	for (size_t i = 0; i < r->ngates; i++)
		sup_tell_skip(r, r->gate_dirs[i]);
	for (size_t i = 0; i < r->nmarkers; i++)
		sup_tell_skip(r, r->marker_dirs[i]);
	sup_unmark_profile(r, sup_profile_writable(r->opts.agent));
	sup_markers_writable(r, L->writable);
	return 0;
}

/* Once the sandbox is up: the views sealed, the writable places known by
 * identity, and the agent's first entry in the process table. */
static void after_spawn(struct sup_run *r, struct launch *L)
{
	/* The hides are mounted: later lookups may be evicted. */
	sbx_view_seal(r->view);
	for (size_t i = 0; i < r->nmarkers; i++)
		sbx_view_seal(r->markers[i].view);
	/* The places Landlock lets the agent write, as the sandbox sees them
	 * now that everything is mounted (the view over the project, a
	 * private /tmp): a program under one of them is not what its name
	 * says. Programs may belong to root or the user who runs warden. */
	r->places = sbx_places_open(r->child.root_fd, L->writable, getuid());
	sbx_notify_set_places(r->places);
	if (r->child.landlock_abi == 0)
		wd_warn("Landlock is not available on this kernel: nothing but file "
			"permissions limits where the agent writes outside the project view");
	if (r->opts.no_view)
		wd_warn("--no-view: opens of sensitive files in the project are not decided");
	struct sup_proc *first = sup_proc_add(r, r->child.pid, getpid());
	first->startup = true;
}

/*
 * The split view's listener, right after the spawn and before anything of
 * the supervisor's may open a file of the sandbox (after_spawn): the fast
 * mounts are watched from the moment they exist, and an open made before
 * the listener runs waits for it. The identities the walk met are sticky
 * for the view and the listener alike from here: the agent has run none
 * of its own code yet (its exec waits for the loop). Those of files with
 * a second name all go in (the view would find them by its own walk);
 * single-name ones up to SPLIT_IDENTS, since the view's table is scanned
 * on every open it decides about. Without a listener nothing could
 * answer the fast mounts' opens: the run does not start.
 */
#define SPLIT_IDENTS 4096
static int start_listener(struct sup_run *r)
{
	size_t single = 0;
	for (size_t i = 0; r->view && i < r->split->nidents; i++) {
		const struct sbx_split_ident *id = &r->split->idents[i];
		if (!id->multi && single++ >= SPLIT_IDENTS)
			continue;
		sbx_view_identity_add(r->view, id->dev, id->ino, id->sensitive, id->control);
	}
	int rc = sbx_fan_set_sandbox(r->fan, r->child.pid, r->child.fast, r->child.nfast);
	if (rc == 0)
		rc = sbx_fan_start(r->fan, r->view);
	if (rc < 0)
		wd_err("the split view's listener could not be started: %s", strerror(-rc));
	return rc;
}

/* Starts the agent in the sandbox. */
static int spawn_agent(struct sup_run *r, struct launch *L)
{
	L->env = sup_agent_environ(r->session_id, r->config, r->opts.agent);
	/* The harness reaches its own API from its own process only. */
	sup_connect_harness_endpoints(r, L->env);
	/* The config is complete: the resolver decides lookups from here. */
	sup_resolver_arm(r);
	int rc = prepare_views(r, L);
	if (rc < 0)
		return rc;
	/* The split view's fast subtrees see no rename, link or removal:
	 * those calls are trapped and performed by the supervisor. */
	r->fs_trap = r->fan != NULL;
	/* Renames and links between two fast subtrees are made on the
	 * backing tree (sandbox/emul.c says why that gives the agent nothing
	 * more); never for a review run, which may not write. The view takes
	 * backing_fd during the spawn: the emulation's copy is made now. */
	if (r->fs_trap && !r->opts.review && r->backing_fd >= 0)
		r->emul_backing_fd = fcntl(r->backing_fd, F_DUPFD_CLOEXEC, 0);
	struct sbx_spawn_config sc = {
		.path = L->prog,
		.argv = r->opts.argv,
		.envp = L->env,
		.cwd = L->agent_cwd,
		.take_terminal = true,
		.view_dir = r->opts.no_view ? NULL : L->project,
		.on_view = sup_start_view,
		.on_view_arg = r,
		.gate_dirs = r->gate_dirs,
		.on_gate = sup_start_gate,
		.marker_dirs = r->marker_dirs,
		.on_markers = sup_start_markers,
		.hide = L->hide,
		.writable = L->writable,
		.nofile_soft = L->agent_nofile,
		.binds = r->binds,
		.nbinds = r->nbinds,
		.private_dirs = r->private_dirs,
		.shm_dir = r->shm_src,
		.split = r->fan ? r->split : NULL,
		.fan = r->fan,
		.split_backing_fd = r->backing_fd,
		.split_read_only = r->opts.review,
		/* The name-changing calls are performed by the supervisor
		 * (fsops.c) with the split view. */
		.fs_trap = r->fs_trap,
	};
	char *err = NULL;
	rc = sbx_spawn(&sc, &r->child, &err);
	if (rc < 0) {
		wd_err("%s", err ? err : "the agent could not be started");
		free(err);
		return rc;
	}
	/*
	 * The guardian holds a second descriptor of the listener's group, so
	 * that this process's death cannot release the group and allow the
	 * opens waiting for a decision (guard.c). Forked here, from the main
	 * thread (its death signal follows the forking thread), once init
	 * exists and before the agent's first exec is answered: no open of
	 * the agent's can wait before it holds the group. Without it the run
	 * does not start.
	 */
	if (r->fan) {
		rc = sbx_guard_start(sbx_fan_group_fd(r->fan), r->child.init_pidfd, &r->guard_ctl,
				     &r->guard_pid);
		if (rc < 0) {
			wd_err("the split view's guardian could not be started: %s", strerror(-rc));
			return rc;
		}
	}
	/* The sandbox exists: threads may start (dns_int.h says why not
	 * before). */
	(void)sup_resolver_serve(r);
	if (r->fan && (rc = start_listener(r)) < 0)
		return rc;
	after_spawn(r, L);
	return sup_fs_start(r, L->writable);
}

/* The end of a run that got as far as the audit (|rc|: how the run went):
 * the terminal back, the temporary directories gone, the session's row
 * closed. Returns warden's exit status. */
static int end_run(struct sup_run *r, int rc)
{
	if (r->saved_fg > 0 || r->child.pid > 0) {
		if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) != getpgrp())
			tcsetpgrp(STDIN_FILENO, getpgrp());
	}
	/* The private temporary directories go once nothing of the sandbox
	 * can act on them any more. */
	bool gone = r->child.init_pidfd < 0 || sbx_child_gone(&r->child, 5000) == 0;
	r->sandbox_gone = gone;
	sup_tmp_finish(r, gone);
	int code = SUP_EXIT_NOSTART;
	if (rc == 0 && r->agent_exited) {
		code = r->agent_started ? exit_code_of(r->agent_status) : SUP_EXIT_NOSTART;
		if (!r->agent_started)
			wd_err("the agent could not be started");
	}
	sup_resolver_finish(r);
	if (r->db) {
		sto_session_end(r->db, r->session_id, wd_now_real_us(), code, NULL);
		if (r->opts.stats)
			sup_stats_print_run(r, stderr);
		if (r->agent_started && !r->opts.quiet)
			sup_print_summary(r);
		sto_close(r->db);
	}
	if (r->audit_failures)
		wd_err("%llu audit rows could not be written; those requests were refused",
		       r->audit_failures);
	return code;
}

static void free_launch(struct launch *L)
{
	free(L->cfgpath);
	free(L->audit_default);
	free(L->audit_abs);
	free(L->prog);
	wd_strv_free(L->writable);
	wd_strv_free(L->hide);
	if (L->env)
		sup_free_env(L->env);
	free(L->cmdline);
}

/* Stops the views and frees the run's state. */
static void free_views(struct sup_run *r)
{
	/*
	 * The guardian before the listener. Once every process of the sandbox
	 * is gone, nothing can wait on the group: it exits at once. Otherwise
	 * (the sandbox outlived end_run's wait) it must not let go of the
	 * group while an open may come: its control pipe is closed without
	 * the stop byte, so it kills init and exits only once the sandbox is
	 * gone; it is not waited for here.
	 */
	if (r->sandbox_gone)
		sbx_guard_stop(r->guard_ctl, r->guard_pid);
	else
		wd_close(&r->guard_ctl);
	r->guard_ctl = -1;
	r->guard_pid = 0;
	/* No more binds (they mark in the listener's group), then the
	 * listener: it shares the view's identity table. */
	sup_fs_stop_binding(r);
	sbx_fan_stop(r->fan);
	r->fan = NULL;
	sbx_split_free(r->split);
	r->split = NULL;
	wd_strv_free(r->split_keep);
	r->split_keep = NULL;
	sbx_child_free_fast(&r->child);
	sbx_view_stop(r->view);
	/* After the views: a worker waiting in a call through a view is
	 * answered by the view's stop. */
	sup_fs_stop(r);
	wd_close(&r->backing_fd);
	wd_close(&r->emul_backing_fd);
	for (size_t i = 0; i < r->ngates; i++) {
		sbx_view_stop(r->gates[i]);
		wd_close(&r->gate_fds[i]);
		free(r->gate_dirs[i]);
	}
	free(r->gate_dirs);
	free(r->gate_fds);
	free(r->gates);
	for (size_t i = 0; i < r->nmarkers; i++) {
		sbx_view_stop(r->markers[i].view);
		wd_close(&r->markers[i].fd);
		wd_strv_free(r->markers[i].hidden);
		wd_strv_free(r->markers[i].unmarked);
		wd_strv_free(r->markers[i].writable);
	}
	free(r->markers);
	wd_strv_free(r->marker_dirs);
	wd_close(&r->view_efd);
}

static void free_run(struct sup_run *r)
{
	sup_tty_close(r);
	sup_desk_close(r);
	sup_judge_free(r); /* after wind_down this is a no-op */
	sup_trace_free(r);
	free_views(r);
	wd_strv_free(r->homes);
	sup_tmp_free(r);
	sbx_notify_set_places(NULL);
	sbx_places_free(r->places);
	sup_stats_free(&r->stats);
	wd_close(&r->child.notify_fd);
	wd_close(&r->child.root_fd);
	wd_close(&r->child.exit_fd);
	wd_close(&r->child.pidfd);
	wd_close(&r->sigfd);
	sup_loop_free(r->loop);
	pol_session_free(r->grants);
	sup_resolver_stop(r);
	free(r->resolver_why);
	sup_connect_free(r);
	sup_names_free(r->names);
	pol_config_free(r->config);
	free(r->person);
	free(r->launcher);
	free(r->agent_path);
}

int sup_cmd_run(int argc, char **argv)
{
	struct sup_run r;
	struct launch L = {0};
	run_init(&r);
	if (sup_run_options(argc, argv, &r.opts) < 0)
		return SUP_EXIT_NOSTART;
	/* -q: the informational lines of the start-up are not printed (the
	 * level comes back once the agent runs: a request waiting for a
	 * person is still announced). */
	enum wd_log_level level = wd_log_get_level();
	if (r.opts.quiet && level == WD_LOG_INFO)
		wd_log_set_level(WD_LOG_WARN);
	if (load_project(&r, &L) < 0 || find_agent(&r, &L) < 0 || prepare_files(&r, &L) < 0) {
		/* Nothing was started: no session, no loop, no view. */
		sup_tmp_finish(&r, true);
		sup_tmp_free(&r);
		wd_strv_free(r.homes);
		pol_config_free(r.config);
		free(r.launcher);
		free_launch(&L);
		return SUP_EXIT_NOSTART;
	}
	int rc = begin_session(&r, &L);
	if (rc == 0)
		rc = setup_loop(&r);
	if (rc == 0)
		rc = sup_judge_init(&r);
	if (rc == 0 && (rc = spawn_agent(&r, &L)) == 0) {
		wd_log_set_level(level);
		rc = run_loop(&r);
		wind_down(&r);
	}
	int code = end_run(&r, rc);
	free_run(&r);
	free_launch(&L);
	return code;
}
