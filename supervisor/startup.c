/*
 * startup.c: an agent's own machinery, recognised by identity: the native
 * child an npm launcher script starts (sup_startup_child()), and Codex's
 * per-call re-exec and wrapper script (sup_harness_machinery()), which run
 * nothing undecided and cover nothing.
 *
 * pipeline.c asks sup_startup_child() before the start-up branch and
 * sup_harness_machinery() before the harness start-up probes; request_of()
 * fills the snapshot's text with sup_read_snapshot(). Every condition and
 * why it cannot be faked: docs/design.md, section "The agent's start-up".
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Whether the exec |ev| (built into |req|) by |p| is the native binary the
 * agent's launcher starts. Every condition is one the kernel vouches for or
 * the person chose, none is a name the agent picked:
 *  - |p| is a process the agent's initial process created (its PPid, read
 *    from its pidfd or /proc before the answer: the filter refuses
 *    CLONE_PARENT, so it names the creator), it has no tool call and no
 *    earlier child of the launcher took this role;
 *  - the launcher is the program the person ran (its canonical path, from
 *    run.c), and the new program's canonical path is where that launcher's
 *    package keeps the native binary (pol_harness_launcher_child());
 *  - the agent cannot have written that file (the decoder's verdict,
 *    pol_request_agent_writable());
 *  - its arguments are the person's, as the launcher passes them on.
 * The decided file is the one that starts: the exec event checks its inode
 * (notify.c), so a swap after this decision is killed there. */
bool sup_startup_child(struct sup_run *r, struct sup_proc *p, const struct sbx_exec_event *ev,
		       const struct pol_request *req)
{
	if (!r->launcher || r->startup_child || !p || p->startup || p->orphan ||
	    p->tool_call != 0 || p->tgid != p->tid || !ev->resolved || ev->interp)
		return false;
	if (p->ppid != r->child.pid)
		return false;
	if (pol_request_agent_writable(req, NULL))
		return false;
	if (!pol_harness_launcher_child(r->opts.agent, r->launcher, ev->resolved))
		return false;
	/* argv[1..] is the person's command after the launcher (codex.js
	 * ARGS, or node codex.js ARGS). */
	char **want = r->opts.argv + r->launcher_argi;
	size_t i = 0;
	for (; want[i] && ev->argv[i + 1]; i++)
		if (strcmp(want[i], ev->argv[i + 1]) != 0)
			return false;
	if (want[i] || ev->argv[i + 1])
		return false;
	r->startup_child = true;
	return true;
}

/* Whether |dir| is the agent's own PATH entry: codex-path beside the bin
 * directory of the agent's binary (vendor/TRIPLE/codex-path), where the
 * package keeps its rg. Any other entry (a directory the agent can write)
 * would decide what the command's words run. */
static bool own_path_entry(const struct sup_run *r, const char *dir)
{
	if (!r->agent_path || !dir)
		return false;
	const char *slash = strrchr(r->agent_path, '/');
	size_t bin = slash ? (size_t)(slash - r->agent_path) : 0;
	if (bin < 4 || strncmp(r->agent_path + bin - 4, "/bin", 4) != 0)
		return false;
	size_t base = bin - 4;
	return strncmp(dir, r->agent_path, base) == 0 && strcmp(dir + base, "/codex-path") == 0;
}

/* Whether |ev| runs the system's bash (resolved in /usr/bin or /bin). */
static bool system_bash(const struct sbx_exec_event *ev)
{
	return ev->resolved && (strcmp(ev->resolved, "/usr/bin/bash") == 0 ||
				strcmp(ev->resolved, "/bin/bash") == 0);
}

enum sup_machinery sup_harness_machinery(struct sup_run *r, const struct sup_proc *p,
					 const struct sbx_exec_event *ev,
					 const struct pol_request *req)
{
	if (!pol_harness_profile(r->opts.agent)->call_machinery || !p || p->startup || p->orphan ||
	    p->tool_call != 0 || pol_request_agent_writable(req, NULL))
		return SUP_MACH_NONE;
	switch (pol_codex_shape(req, r->config, NULL)) {
	case POL_CODEX_SETUP:
		/* The agent's own binary, by inode (the exec event checks that
		 * this is the file that starts). */
		if (r->agent_ino != 0 && ev->dev == r->agent_dev && ev->ino == r->agent_ino &&
		    !ev->interp)
			return SUP_MACH_SETUP;
		return SUP_MACH_NONE;
	case POL_CODEX_WRAPPER:
		/* A variable that changes what bash runs (BASH_ENV...) would run
		 * code before the script: then it is an ordinary request. */
		if (system_bash(ev) && !pol_request_env_changes_program(req) &&
		    own_path_entry(r, pol_request_codex_path_entry(req)))
			return SUP_MACH_WRAPPER;
		return SUP_MACH_NONE;
	case POL_CODEX_VALIDATE:
		if (system_bash(ev) && !pol_request_env_changes_program(req))
			return SUP_MACH_VALIDATE;
		return SUP_MACH_NONE;
	case POL_CODEX_NONE:
	default:
		return SUP_MACH_NONE;
	}
}

/* The largest snapshot read; a larger one is not recognised. */
#define SNAPSHOT_MAX (1 << 20)

/*
 * Reads |path| as the caller would ("" when it does not exist): resolved
 * inside the sandbox's root (an
 * absolute symlink on the way stays inside it, RESOLVE_IN_ROOT), no magic
 * link, a regular file owned by the user the agent runs as (Codex wrote it;
 * warden reads nothing of anyone else's), at most SNAPSHOT_MAX bytes.
 * The fd is O_CLOEXEC and closed before returning. What is read is what
 * the decision sees; a writer racing bash's later read of the same file is
 * the residual case the README's Codex section names (builtins only: every
 * exec is still decided, and the wrapper covers nothing).
 */
char *sup_read_snapshot(struct sup_run *r, const char *path)
{
	if (r->child.root_fd < 0 || !path || path[0] != '/')
		return NULL;
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = -1;
	for (int tries = 0; tries < 4; tries++) {
		fd = (int)syscall(SYS_openat2, r->child.root_fd, path + 1, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	/* Nothing there: the wrapper sources nothing (its `.` fails quietly),
	 * which is as inert as an empty file. Codex's snapshot can vanish
	 * mid-session (it removes them). */
	if (fd < 0)
		return errno == ENOENT ? wd_strdup("") : NULL;
	wd_autoclose int f = fd;
	struct stat st;
	if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
	    st.st_size > SNAPSHOT_MAX)
		return NULL;
	char *buf = wd_malloc(SNAPSHOT_MAX + 1);
	size_t n = 0;
	for (;;) {
		ssize_t k = read(f, buf + n, SNAPSHOT_MAX + 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			free(buf);
			return NULL;
		}
		if (k == 0)
			break;
		n += (size_t)k;
		if (n > SNAPSHOT_MAX) {
			free(buf);
			return NULL;
		}
	}
	buf[n] = '\0';
	/* A NUL inside would hide the rest from the check. */
	if (strlen(buf) != n) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Codex's own sandbox (bubblewrap) needs a new user namespace, which
 * warden refuses by design: every call would fail. */
void sup_warn_agent_options(enum pol_harness agent, char *const *argv)
{
	if (agent != POL_HARNESS_CODEX || !argv)
		return;
	for (size_t i = 1; argv[i]; i++) {
		const char *a = argv[i], *mode = NULL;
		if ((strcmp(a, "--sandbox") == 0 || strcmp(a, "-s") == 0) && argv[i + 1])
			mode = argv[i + 1];
		else if (wd_str_has_prefix(a, "--sandbox="))
			mode = a + 10;
		else if (wd_str_has_prefix(a, "-s") && a[2])
			mode = a + 2;
		else if ((strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0) && argv[i + 1] &&
			 wd_str_has_prefix(argv[i + 1], "sandbox_mode="))
			mode = argv[i + 1] + 13;
		else if (wd_str_has_prefix(a, "--config=sandbox_mode="))
			mode = a + 22;
		if (!mode)
			continue;
		if (mode[0] == '"' || mode[0] == '\'')
			mode++;
		if (wd_str_has_prefix(mode, "workspace-write") ||
		    wd_str_has_prefix(mode, "read-only")) {
			wd_warn("codex's own sandbox (%s) cannot start inside warden, which "
				"refuses "
				"new namespaces: every tool call will fail; run codex with "
				"--sandbox danger-full-access (warden is the sandbox)",
				mode);
			return;
		}
	}
}
