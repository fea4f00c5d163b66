/*
 * doctor.c: `warden doctor`: one line per kernel feature warden relies on,
 * what it is used for, and what to do when it is missing. Exits 1 when a
 * plain `warden run` could not work here: the namespaces and the FUSE
 * device are probed the way run makes and opens them (sandbox/probe.c).
 */
#include "dns_int.h"
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

/* Runs |fn| in a forked child and returns its result (0 ok, else errno). */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(fn());
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EFAULT;
}

static int try_filter(void)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	int fd = sbx_filter_load();
	return fd < 0 ? -fd : 0;
}

static int try_ptrace(void)
{
	pid_t c = fork();
	if (c < 0)
		return errno;
	if (c == 0) {
		pause();
		_exit(0);
	}
	int rc = ptrace(PTRACE_SEIZE, c, 0, PTRACE_O_EXITKILL) < 0 ? errno : 0;
	kill(c, SIGKILL);
	waitpid(c, NULL, __WALL);
	return rc;
}

struct check {
	const char *name;
	bool required; /* warden run cannot work without it */
	int err;       /* 0: available */
	char detail[160];
	const char *fix;
};

static void print_check(const struct check *c)
{
	printf("%-5s %-34s %s\n", c->err ? (c->required ? "FAIL" : "warn") : "ok", c->name,
	       c->err ? strerror(c->err) : c->detail);
	if (c->err && c->fix)
		printf("      -> %s\n", c->fix);
}

/* What to do about the FUSE device when opening it failed with |err|, from
 * what the device is (its mode and owner, as stat says). Caller frees. */
static char *fuse_advice(int err)
{
	struct stat st;
	if (err == ENOENT || stat(SBX_FUSE_DEV, &st) < 0)
		return wd_asprintf(
			"there is no %s: load the module (modprobe fuse; in a container, "
			"pass the device in), or run warden run --no-view",
			SBX_FUSE_DEV);
	if (err == ENODEV)
		return wd_asprintf("the kernel has no FUSE file system: load the module "
				   "(modprobe fuse), or run warden run --no-view");
	if ((err == EACCES || err == EPERM) && getuid() != 0)
		return wd_asprintf("%s is mode %04o, owner uid %u: this user cannot open it. "
				   "Make it 0666 (as root: chmod 0666 %s, or a udev rule "
				   "KERNEL==\"fuse\", MODE=\"0666\"), run warden as root, or run "
				   "warden run --no-view",
				   SBX_FUSE_DEV, (unsigned)(st.st_mode & 07777),
				   (unsigned)st.st_uid, SBX_FUSE_DEV);
	return wd_asprintf("%s (mode %04o, owner uid %u) cannot be opened here (a container's "
			   "device policy?): allow it, or run warden run --no-view",
			   SBX_FUSE_DEV, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
}

/* Whether the FUSE device is the only required thing that fails: then
 * `warden run --no-view` works. */
static bool only_view_fails(const struct check *c, size_t n)
{
	bool view = false;
	for (size_t i = 0; i < n; i++) {
		if (!c[i].err || !c[i].required)
			continue;
		if (strcmp(c[i].name, SBX_FUSE_DEV) != 0)
			return false;
		view = true;
	}
	return view;
}

/* What a person must know to run |agent| under warden (warden doctor
 * --agent NAME): how to start it, what of it cannot work inside warden. */
static int agent_notes(const char *agent)
{
	if (strcmp(agent, "codex") == 0) {
		printf("\nagent codex (the Codex CLI, npm @openai/codex; checked with 0.169.0):\n"
		       "info  unattended: warden run --agent codex -- codex -a never exec "
		       "--sandbox danger-full-access \"TASK\"\n"
		       "      (or codex exec -c approval_policy=never --sandbox "
		       "danger-full-access \"TASK\"; codex exec has no --ask-for-approval)\n"
		       "warn  Codex's own sandbox (bubblewrap: --sandbox workspace-write or "
		       "read-only, -s, -c sandbox_mode=...) cannot start inside warden,\n"
		       "      which refuses new namespaces by design: every tool call would fail "
		       "with \"No permissions to create new namespace\".\n"
		       "      -> run codex with --sandbox danger-full-access: warden is the "
		       "sandbox (warden run warns when it sees the other modes)\n"
		       "info  profile: writes ~/.codex; start-up: its native binary started by "
		       "bin/codex.js, lsb_release -a, getconf LONG_BIT,\n"
		       "      git probes of the project, the snapshot login shell; its "
		       "`git ls-remote` of github.com/openai/plugins is decided like any "
		       "request\n"
		       "info  each tool call runs as /bin/bash -c WRAPPER, decided by the command "
		       "inside it (audited as \"[codex] CMD\");\n"
		       "      apply_patch writes in Codex's own process: the view decides its "
		       "sensitive opens, ordinary project files need no decision\n");
		return 0;
	}
	if (strcmp(agent, "claude-code") == 0 || strcmp(agent, "aider") == 0) {
		printf("\nagent %s: nothing of it is known not to work inside warden; the README's "
		       "\"Real agents\" section has its command line.\n",
		       agent);
		return 0;
	}
	fprintf(stderr, "warden doctor: --agent must be claude-code, codex or aider\n");
	return SUP_EXIT_USAGE;
}

/* Checks the kernel's features warden needs into |checks| (7). Returns
 * how many. */
static size_t kernel_checks(struct check *checks)
{
	size_t n = 0;

	checks[n] = (struct check){"seccomp user notification", true, in_child(try_filter), "",
				   "needs Linux 5.5 or later with CONFIG_SECCOMP_FILTER"};
	snprintf(checks[n++].detail, 160, "execve/execveat are stopped and decided");

	checks[n] = (struct check){"ptrace of the agent tree", true, in_child(try_ptrace), "",
				   "set /proc/sys/kernel/yama/ptrace_scope to 1 (3 forbids "
				   "all tracing) or run outside a container that blocks ptrace"};
	snprintf(checks[n++].detail, 160, "checks every exec's image and argv at the exec event");

	long pfd = syscall(SYS_pidfd_open, getpid(), 0);
	checks[n] = (struct check){"pidfd_open / pidfd_getfd", true, pfd < 0 ? errno : 0, "",
				   "needs Linux 5.6 or later"};
	snprintf(checks[n++].detail, 160, "waits for the agent; tells it why on its own stderr");
	if (pfd >= 0)
		close((int)pfd);

	/* The namespaces and the FUSE device exactly as `warden run` makes and
	 * opens them (sbx_probe, spawn.c's clone flags and device), so that
	 * doctor cannot pass what run then fails on. */
	struct sbx_probe pr;
	if (sbx_probe(true, &pr) < 0)
		pr.ns_err = pr.fuse_err = EIO;
	bool userns = sbx_needs_userns();
	checks[n] =
		(struct check){userns ? "namespaces (user, mount, pid)" : "namespaces (mount, pid)",
			       true, pr.ns_err, "",
			       userns ? "enable unprivileged user namespaces (sysctl "
					"kernel.unprivileged_userns_clone=1, user.max_user_"
					"namespaces > 0), or run warden as root"
				      : "run outside a container that refuses new namespaces"};
	snprintf(checks[n++].detail, 160, "the sandbox%s; the view is mounted only there",
		 userns ? ", made by a user without root" : "");

	/* The advice outlives this function, as the other checks' literals do. */
	static char fuse_fix[400];
	checks[n] = (struct check){SBX_FUSE_DEV, true, pr.ns_err ? 0 : pr.fuse_err, "", NULL};
	if (pr.ns_err)
		snprintf(checks[n].detail, 160, "not tried: it is opened inside the namespaces");
	else
		snprintf(checks[n].detail, 160, "the project view that decides sensitive opens");
	if (checks[n].err) {
		wd_autofree char *advice = fuse_advice(checks[n].err);
		snprintf(fuse_fix, sizeof(fuse_fix), "%s", advice);
		checks[n].fix = fuse_fix;
	}
	n++;

	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	checks[n] = (struct check){"Landlock", false, abi < 0 ? errno : 0, "",
				   "boot with lsm=...,landlock (Linux 5.13 or later): without "
				   "it nothing limits where the agent writes outside the view"};
	snprintf(checks[n++].detail, 160, "ABI version %ld: the floor under writes", abi);

	return n;
}

/* Which project view `warden run` (--view=auto) gets for |project| and
 * why: the same probe and start walk as the run (run.c prepare_split). */
static void view_mechanism(const char *project, const struct pol_config *c)
{
	const char *name = "project view";
	char why[160] = "";
	wd_autoclose int fd = open(project, O_PATH | O_DIRECTORY | O_CLOEXEC);
	const char *env = getenv("WARDEN_VIEW");
	int rc = fd < 0 ? -errno : sbx_split_probe(fd, NULL, why, sizeof(why));
	if (fd < 0)
		snprintf(why, sizeof(why), "%s: %s", project, strerror(-rc));
	else if (env && strcmp(env, "fuse") == 0) {
		snprintf(why, sizeof(why), "WARDEN_VIEW=fuse");
		rc = -EPERM;
	}
	struct sbx_split *s = NULL;
	if (rc == 0) {
		const char *const keep[] = {NULL};
		struct sbx_split_walk_config wc = {.backing_fd = fd, .policy = c, .keep = keep};
		rc = sbx_split_walk(&wc, &s);
		if (rc < 0)
			snprintf(why, sizeof(why), "the start walk failed: %s", strerror(-rc));
	}
	if (rc < 0) {
		printf("ok    %-34s FUSE (%s)\n", name, why);
		printf("      -> every open, lookup and read goes through FUSE: slower on "
		       "open-heavy work%s\n",
		       geteuid() != 0 ? "; run as root (sudo warden) for the fast view" : "");
		return;
	}
	printf("ok    %-34s split: fanotify on %zu fast subtrees (%zu files), FUSE for %zu "
	       "directories\n",
	       name, s->nfast, s->fast_files_total, s->fuse_dirs);
	sbx_split_free(s);
}

/* Whether the view's reads and writes of open files pass through the
 * kernel (view_pt.c), from a probe file system made for the question, as
 * the run negotiates it: root runs only. */
static void view_passthrough(void)
{
	const char *name = "view reads (FUSE passthrough)";
	struct sbx_pt_probe pr;

	if (sbx_needs_userns()) {
		printf("warn  %-34s off: not a root run\n", name);
		printf("      -> reads of files in the view's FUSE part each go through the "
		       "view; registering backing files needs CAP_SYS_ADMIN (sudo warden)\n");
		return;
	}
	sbx_pt_probe(&pr);
	if (pr.init_offered && pr.backing_ok)
		printf("ok    %-34s on: reads, writes and mmap of open files go straight to "
		       "the file\n",
		       name);
	else
		printf("warn  %-34s off: %s\n", name, pr.why);
}

int sup_cmd_doctor(int argc, char **argv)
{
	const char *agent = NULL;
	const char *project = ".";
	for (int i = 1; i < argc; i++) {
		if (sup_is_help(argv[i])) {
			fputs("usage: warden doctor [--project DIR] [--agent "
			      "claude-code|codex|aider]\n"
			      "  checks that this machine (and the project's config) can run "
			      "warden\n"
			      "  run; exit 0 when it can, 1 when something blocks it\n",
			      stdout);
			return 0;
		}
		if (strcmp(argv[i], "--agent") == 0 && i + 1 < argc) {
			agent = argv[++i];
		} else if (strncmp(argv[i], "--agent=", 8) == 0) {
			agent = argv[i] + 8;
		} else if (strcmp(argv[i], "--project") == 0 && i + 1 < argc) {
			project = argv[++i];
		} else {
			fputs("usage: warden doctor [--project DIR] [--agent "
			      "claude-code|codex|aider]\n",
			      stderr);
			return SUP_EXIT_USAGE;
		}
	}
	struct utsname u;
	uname(&u);
	printf("warden %s on Linux %s (%s)\n", WARDEN_VERSION, u.release, u.machine);
	struct check checks[7] = {0};
	size_t n = kernel_checks(checks);
	bool ok = true;
	for (size_t i = 0; i < n; i++) {
		print_check(&checks[i]);
		if (checks[i].err && checks[i].required)
			ok = false;
	}
	/* The session's resolver: optional (without it a connection is shown
	 * by address unless warden resolved the name itself). */
	wd_autofree char *res_why = NULL;
	struct check res = {"session resolver", false, -sup_resolver_probe(&res_why), "",
			    "run warden as root: the resolver listens on port 53 of "
			    "127.0.0.0/8 in the host's network namespace"};
	if (res.err) {
		snprintf(res.detail, sizeof(res.detail), "%s", res_why ? res_why : "");
		printf("warn  %-34s %s\n", res.name, res.detail);
		printf("      -> connections are named only from /etc/hosts and warden's own "
		       "lookups; %s\n",
		       res.fix);
	} else {
		snprintf(res.detail, sizeof(res.detail), "%s", res_why ? res_why : "");
		print_check(&res);
	}
	/* What the project's config lets through the boundary. */
	wd_autofree char *cfg = wd_asprintf("%s/.warden/permissions.json", project);
	struct pol_config *c = NULL;
	if (sup_config_load(cfg, true, &c) == 0) {
		view_mechanism(project, c);
		view_passthrough();
		sup_sockets_describe(c, stdout);
		pol_config_free(c);
	} else {
		ok = false;
	}
	if (ok)
		printf("warden run can work here.\n");
	else if (only_view_fails(checks, n))
		printf("warden run cannot work here: fix the FAIL line above, or run "
		       "warden run --no-view (opens of sensitive files are then not "
		       "decided).\n");
	else
		printf("warden run cannot work here: fix the FAIL lines above.\n");
	if (agent) {
		int rc = agent_notes(agent);
		if (rc != 0)
			return rc;
	}
	return ok ? 0 : 1;
}
