/*
 * trace.c: the process table and the ptrace side of the supervisor.
 *
 * Each process's entry says what covers it (the allowed command whose tree
 * it is in, or nothing) and the tool call it belongs to. Only covered
 * trees are followed with fork events; a process whose exec is allowed is
 * seized while it waits in that exec, so that its exec event checks the
 * new image against the decision. A process without an entry is one that
 * nothing covers, and its tool call comes from its ancestry. Why that
 * holds, and why a recycled pid never inherits an entry: docs/design.md,
 * section "Process trees".
 */
#include "sup.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <stdlib.h>

static size_t bucket(pid_t tid)
{
	return (size_t)tid % WD_ARRAY_SIZE(((struct sup_run *)0)->procs);
}

static struct sup_proc *find(struct sup_run *r, pid_t tid)
{
	for (struct sup_proc *p = r->procs[bucket(tid)]; p; p = p->next)
		if (p->tid == tid)
			return p;
	return NULL;
}

/* Whether the process behind |pidfd| has exited (it becomes readable). */
static bool pidfd_exited(int pidfd)
{
	struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
	return poll(&pfd, 1, 0) != 0; /* readable, or an error: gone either way */
}

struct sup_proc *sup_proc_get(struct sup_run *r, pid_t tid)
{
	struct sup_proc *p = find(r, tid);
	if (p && p != r->live && !p->traced && p->pidfd >= 0 && pidfd_exited(p->pidfd)) {
		sup_proc_del(r, tid);
		return NULL;
	}
	return p;
}

static struct sup_proc *insert(struct sup_run *r, pid_t tid, pid_t ppid, bool traced)
{
	struct sup_proc *p = wd_calloc(1, sizeof(*p));
	p->tid = tid;
	p->tgid = tid;
	p->ppid = ppid;
	p->traced = traced;
	p->pidfd = -1;
	size_t b = bucket(tid);
	p->next = r->procs[b];
	r->procs[b] = p;
	if (traced)
		r->nprocs++;
	else
		r->nuntraced++;
	return p;
}

/* A traced thread's entry. An untraced entry under its tid is stale: the
 * process it stood for has exited and the pid now names a tracee. */
static struct sup_proc *traced_get(struct sup_run *r, pid_t tid)
{
	struct sup_proc *p = find(r, tid);
	if (p && !p->traced) {
		sup_proc_del(r, tid);
		p = NULL;
	}
	return p;
}

struct sup_proc *sup_proc_add(struct sup_run *r, pid_t tid, pid_t ppid)
{
	struct sup_proc *p = traced_get(r, tid);
	return p ? p : insert(r, tid, ppid, true);
}

static void proc_free(struct sup_proc *p)
{
	sbx_exec_event_free(p->decided);
	free(p->args.bytes);
	if (p->pidfd >= 0)
		close(p->pidfd);
	free(p);
}

void sup_proc_del(struct sup_run *r, pid_t tid)
{
	for (struct sup_proc **pp = &r->procs[bucket(tid)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->tid == tid) {
			struct sup_proc *p = *pp;
			*pp = p->next;
			if (p == r->live)
				r->live = NULL;
			if (p->traced)
				r->nprocs--;
			else
				r->nuntraced--;
			proc_free(p);
			return;
		}
	}
}

/* Keeps the untraced entries within SUP_UNTRACED_MAX: drops those whose
 * process has exited, then, if that was not enough, any (and from then on
 * no untraced process counts as the agent's direct child). */
static void prune_untraced(struct sup_run *r)
{
	if (r->nuntraced < SUP_UNTRACED_MAX)
		return;
	for (int pass = 0; pass < 2 && r->nuntraced >= SUP_UNTRACED_MAX / 2; pass++) {
		for (size_t b = 0; b < WD_ARRAY_SIZE(r->procs); b++) {
			struct sup_proc **pp = &r->procs[b];
			while (*pp) {
				struct sup_proc *p = *pp;
				/* Entries without a pidfd wait for a decision:
				 * their process is blocked in its exec. */
				if (!p->traced && p->pidfd >= 0 && !p->startup && p != r->live &&
				    (pass == 1 || pidfd_exited(p->pidfd))) {
					*pp = p->next;
					r->nuntraced--;
					if (pass == 1)
						r->lost_track = true;
					proc_free(p);
					continue;
				}
				pp = &p->next;
			}
		}
	}
}

void sup_proc_keep_untraced(struct sup_run *r, struct sup_proc *p)
{
	if (p->traced)
		return;
	/* Only a process's own entry: a pidfd names a process, and a thread's
	 * tid may be recycled while its process lives on. Most entries have
	 * theirs already, from the notification (sup_on_notify). */
	if (p->pidfd < 0 && p->tgid == p->tid) {
		p->pidfd = (int)syscall(SYS_pidfd_open, p->tid, 0);
		/* A live process dropped from the table (out of fds): its
		 * descendants could pass for the agent's own children. */
		if (p->pidfd < 0 && errno != ESRCH)
			r->lost_track = true;
	}
	if (p->pidfd < 0) {
		sup_proc_del(r, p->tid);
		return;
	}
	prune_untraced(r);
}

/* Moves |p| between the traced and the untraced entries (the two counts). */
static void set_traced(struct sup_run *r, struct sup_proc *p, bool traced)
{
	if (p->traced == traced)
		return;
	p->traced = traced;
	if (traced) {
		r->nuntraced--;
		r->nprocs++;
	} else {
		p->follows = false;
		r->nprocs--;
		r->nuntraced++;
	}
}

int sup_trace_seize(struct sup_run *r, struct sup_proc *p, bool follow)
{
	if (p->traced)
		return 0;
	if (ptrace(PTRACE_SEIZE, p->tid, 0, follow ? SBX_TRACE_FOLLOW : SBX_TRACE_EXEC) < 0)
		return -errno;
	/* Its pidfd stays: if it is let go at its exec event, the entry goes
	 * on being checked by it (detach). */
	set_traced(r, p, true);
	p->follows = follow;
	return 0;
}

/* Lets |p| go at its exec event: nothing covers its new image. Its entry
 * stays, checked by a pidfd, for the tool call of what it starts. */
static void detach(struct sup_run *r, struct sup_proc *p)
{
	/* The pidfd, if the entry has none yet, before the detach: the
	 * process is stopped, so it is surely there. */
	set_traced(r, p, false);
	pid_t tid = p->tid;
	sup_proc_keep_untraced(r, p); /* may drop |p| */
	ptrace(PTRACE_DETACH, tid, 0, 0);
}

const struct sbx_args *sup_args_hint(void *ctx, pid_t tid, pid_t ppid)
{
	struct sup_run *r = ctx;
	/* No liveness check through the pidfds (find(), not sup_proc_get()):
	 * an entry left by a process that has exited gives a wrong guess at
	 * worst, and wrong guesses cost nothing, since the decoder compares
	 * the bytes. */
	struct sup_proc *p = find(r, tid);
	if (p && p->args.bytes)
		return &p->args;
	/* None of its own (never exec'd under warden, or only refused):
	 * what it was made with. */
	p = ppid > 0 ? find(r, ppid) : NULL;
	return p && p->args.bytes ? &p->args : NULL;
}

/* Tgid and PPid of |tid| from /proc, for a process whose creation event we
 * have not seen. /proc/TID/stat is half the kernel's work of status; it has
 * no Tgid, but a thread group of one thread is led by that thread, so only
 * a multi-threaded caller needs status as well. */
static void proc_ids(pid_t tid, pid_t *tgid, pid_t *ppid)
{
	char path[64];
	char *buf = NULL;
	*tgid = tid;
	*ppid = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	long threads = 0;
	if (wd_read_proc(path, 4096, &buf, NULL) == 0) {
		/* pid (comm) state ppid pgrp ... num_threads is the 20th field;
		 * comm may hold anything, so count from its last ')'. */
		char *c = strrchr(buf, ')');
		for (int field = 2; c && *c && field < 20;) {
			c++;
			if (*c == ' ') {
				field++;
				if (field == 4)
					*ppid = (pid_t)strtol(c + 1, NULL, 10);
				else if (field == 20)
					threads = strtol(c + 1, NULL, 10);
			}
		}
	}
	free(buf);
	buf = NULL;
	if (threads == 1)
		return;
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (wd_read_proc(path, 16384, &buf, NULL) < 0)
		return;
	char *t = strstr(buf, "\nTgid:");
	if (t)
		*tgid = (pid_t)strtol(t + 6, NULL, 10);
	t = strstr(buf, "\nPPid:");
	if (t)
		*ppid = (pid_t)strtol(t + 6, NULL, 10);
	free(buf);
}

/* The innermost pid of |tid| (the last field of NSpid: its pid in the
 * sandbox's PID namespace), or 0 when unknown. */
static pid_t ns_pid(pid_t tid)
{
	char path[64];
	char *buf = NULL;
	pid_t id = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (wd_read_proc(path, 16384, &buf, NULL) < 0)
		return 0;
	char *t = strstr(buf, "\nNSpid:");
	if (t) {
		char *end = strchr(t + 1, '\n');
		for (char *s = t + 7; s && (!end || s < end);) {
			char *next;
			long v = strtol(s, &next, 10);
			if (next == s)
				break;
			id = (pid_t)v;
			s = next;
		}
	}
	free(buf);
	return id;
}

/*
 * In a user namespace the view is mounted by the sandbox's init, so FUSE
 * names the caller by its pid in the sandbox's PID namespace. The caller is
 * blocked in its FUSE request while this runs, so its pid cannot be reused
 * meanwhile, and pids are unique in the namespace: at most one thread
 * matches. First the table (traced entries, and untraced ones whose process
 * the pidfd shows alive: both are in the sandbox), then the sandbox's
 * processes from init down (/proc/PID/task/TID/children), for a process
 * that never exec'd under warden. Only sensitive opens come here (rare).
 */
pid_t sup_host_tid(struct sup_run *r, pid_t nstid)
{
	if (nstid <= 0)
		return 0;
	for (size_t b = 0; b < WD_ARRAY_SIZE(r->procs); b++)
		for (struct sup_proc *p = r->procs[b]; p; p = p->next)
			if ((p->traced || (p->pidfd >= 0 && !pidfd_exited(p->pidfd))) &&
			    ns_pid(p->tid) == nstid)
				return p->tid;
	/* A breadth-first walk of the sandbox's processes, at most 8192. */
	size_t cap = 8192, head = 0, tail = 0;
	pid_t *queue = wd_calloc(cap, sizeof(pid_t));
	pid_t found = 0;
	if (r->child.init_pid > 0)
		queue[tail++] = r->child.init_pid;
	while (!found && head < tail) {
		/* Each thread of the process: is it the caller, and whom did
		 * it create. */
		pid_t pid = queue[head++];
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		DIR *d = opendir(path);
		struct dirent *e;
		while (d && !found && (e = readdir(d))) {
			pid_t t = (pid_t)strtol(e->d_name, NULL, 10);
			if (t <= 0)
				continue;
			if (pid != r->child.init_pid && ns_pid(t) == nstid) {
				found = t;
				break;
			}
			char cpath[320], *kids = NULL;
			snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", pid, e->d_name);
			if (wd_read_proc(cpath, 1 << 20, &kids, NULL) < 0)
				continue;
			for (char *c = kids; *c;) {
				char *next;
				long v = strtol(c, &next, 10);
				if (next == c)
					break;
				if (v > 0 && tail < cap)
					queue[tail++] = (pid_t)v;
				c = next;
			}
			free(kids);
		}
		if (d)
			closedir(d);
	}
	free(queue);
	return found;
}

pid_t sup_tgid_of(pid_t tid)
{
	pid_t tgid, ppid;
	proc_ids(tid, &tgid, &ppid);
	return tgid;
}

/*
 * A process without an entry: nothing covers it (see the top of this file).
 * A thread belongs to its process's tool call. A process belongs to the
 * tool call of its nearest ancestor with an entry; a direct child of the
 * agent, or a process whose ancestors up to the agent have none (they
 * forked but never exec'd), starts a new one (tool_call 0 until its first
 * exec is audited). An ancestry that ends elsewhere (an orphan, adopted by
 * init) starts one too, but is marked: it is not the agent's child.
 */
struct sup_proc *sup_proc_adopt(struct sup_run *r, pid_t tid, pid_t tgid, pid_t ppid)
{
	if (tgid <= 0)
		proc_ids(tid, &tgid, &ppid);
	struct sup_proc *p = insert(r, tid, ppid, false);
	p->tgid = tgid;
	p->orphan = r->lost_track;
	/* The agent's pid names it for as long as the session lasts. */
	p->startup = tid == r->child.pid;
	if (tgid != tid) {
		struct sup_proc *g = sup_proc_get(r, tgid);
		if (g) {
			p->tool_call = g->startup ? 0 : g->tool_call;
			p->orphan = p->orphan || g->orphan;
			return p;
		}
	}
	pid_t a = ppid;
	for (int depth = 0; depth < 256; depth++) {
		if (a <= 0 || a == r->child.init_pid) {
			p->orphan = true;
			return p;
		}
		if (a == r->child.pid)
			return p; /* the agent's: a new tool call */
		struct sup_proc *e = sup_proc_get(r, a);
		if (e) {
			p->tool_call = e->tool_call;
			p->orphan = p->orphan || e->orphan;
			return p;
		}
		pid_t t, pp;
		proc_ids(a, &t, &pp);
		a = pp;
	}
	p->orphan = true;
	return p;
}

/* Whether process |pid| has a child now: /proc/PID/task/TID/children of
 * each of its threads (a child's parent is the thread that made it). */
static bool has_children(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/task", pid);
	DIR *d = opendir(p);
	if (!d)
		return true; /* cannot tell: take it as having had one */
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char cp[96], buf[64];
		snprintf(cp, sizeof(cp), "/proc/%d/task/%.16s/children", pid, de->d_name);
		/* A pid, or a list longer than the buffer (-EFBIG). A kernel
		 * without the file (CONFIG_PROC_CHILDREN) cannot say: the
		 * other sign (an exec by another process) still ends it. */
		ssize_t n = wd_read_proc_into(cp, buf, sizeof(buf) - 1);
		found = n > 0 || n == -EFBIG;
	}
	closedir(d);
	return found;
}

/*
 * The agent's start-up is the exec chain of its first process until it has
 * had a child: from then on it is running tool calls, and an exec of its
 * own process is decided like any other (and covers nothing, pipeline.c).
 * The agent is not traced between its execs, so "has had a child" is seen
 * from two sides: an exec by any other process of the tree (every process
 * but the agent's descends from it), and, at an exec of the agent's own, a
 * child still alive (one that forked and has not exec'd). A child that
 * forked, did its work without an exec and exited before the agent's next
 * exec is not seen; it ran no program, so it was no tool call warden could
 * have decided. Once over, start-up never comes back.
 */
void sup_startup_check(struct sup_run *r, const struct sbx_exec_event *ev, struct sup_proc *p)
{
	if (r->startup_over)
		return;
	pid_t tgid = ev->tgid > 0 ? ev->tgid : p->tgid;
	if (tgid != r->child.pid || has_children(r->child.pid)) {
		r->startup_over = true;
		wd_debug("the agent's start-up is over (an exec by pid %d)", ev->pid);
	}
}

static void on_new_child(struct sup_run *r, pid_t parent, pid_t child, bool is_thread)
{
	struct sup_proc *par = traced_get(r, parent);
	struct sup_proc *known = traced_get(r, child);
	/* New, or held at its first stop until now: its creator is |parent|.
	 * (An entry that is neither would be stale: its fields are reset from
	 * the creator all the same.) */
	struct sup_proc *p = known ? known : sup_proc_add(r, child, parent);
	p->ppid = parent;
	p->follows = true; /* it inherited its creator's options */
	/* fork and vfork make a process; a clone event may be a thread or
	 * a process (clone without CLONE_THREAD): /proc says which, once. */
	p->tgid = is_thread ? sup_tgid_of(child) : child;
	if (par) {
		p->cover = par->cover;
		p->tool_call = par->tool_call;
		p->orphan = par->orphan;
		/* fork copies the memory, arguments and all; a thread shares it */
		free(p->args.bytes);
		p->args = par->args;
		if (par->args.bytes) {
			p->args.bytes = wd_malloc(par->args.len);
			memcpy(p->args.bytes, par->args.bytes, par->args.len);
		}
	}
	if (p->held) {
		p->held = false;
		ptrace(PTRACE_CONT, child, 0, 0);
	}
}

/* A failed exec check: audit it and kill the process before its first
 * instruction. */
static void exec_mismatch(struct sup_run *r, pid_t pid, struct sbx_exec_event *ev, const char *why)
{
	kill(pid, SIGKILL);
	char *json = wd_asprintf("{\"program\":\"(exec check)\",\"pid\":%d}", pid);
	struct sto_row row = {
		.ts_us = wd_now_real_us(),
		.session = r->session_id,
		.pid = pid,
		.kind = pol_kind_name(POL_EXEC),
		.request = json,
		.summary = ev ? ev->path : "(unknown exec)",
		.decision = "deny",
		.source = pol_source_name(POL_SRC_INTEGRITY),
		.reason = why,
		.decided_by = "warden",
	};
	if (sto_append(r->db, &row, NULL) < 0)
		r->audit_failures++;
	free(json);
	wd_warn("killed pid %d: %s", pid, why);
}

static void on_exec_event(struct sup_run *r, pid_t pid)
{
	unsigned long former = 0;
	if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &former) < 0) {
		/* Without the former tid, the exec'ing thread's entry (its
		 * decision, its cover) could outlive it under a tid the kernel
		 * hands out again: nothing of this exec can be trusted. */
		exec_mismatch(r, pid, NULL, "its exec event could not be read");
		return;
	}
	struct sup_proc *p = sup_proc_get(r, (pid_t)former);
	if (!p)
		p = sup_proc_get(r, pid);
	struct sbx_exec_event *ev = p ? wd_steal_pointer(&p->decided) : NULL;
	if ((pid_t)former != pid && p) {
		/* A non-leader thread exec'd: it now has the leader's pid. */
		struct sup_proc *leader = sup_proc_add(r, pid, p->ppid);
		leader->tgid = pid;
		leader->cover = p->cover;
		leader->next_cover = p->next_cover;
		leader->startup = p->startup || pid == r->child.pid;
		leader->tool_call = p->tool_call;
		leader->follows = p->follows;
		leader->orphan = p->orphan;
		sup_proc_del(r, (pid_t)former);
		p = leader;
	}
	if (!ev) {
		/* Every exec is notified before it runs: an exec event with
		 * no decision means something went around the filter. */
		exec_mismatch(r, pid, NULL, "an exec happened without a decision");
		return;
	}
	char *why = NULL;
	struct sbx_args args;
	if (sbx_verify_exec(pid, ev, &args, &why) < 0) {
		exec_mismatch(r, pid, ev, why);
		free(why);
		sbx_exec_event_free(ev);
		return;
	}
	sbx_exec_event_free(ev);
	free(p->args.bytes);
	p->args = args; /* where its next exec's caller_cmdline() looks */
	/* A new program: what the old one was let send goes with it. */
	sup_dgrams_forget(r->dgrams, p->tgid ? p->tgid : pid);
	p->cover = p->next_cover;
	if (pid == r->child.pid)
		r->agent_started = true;
	if (p->cover == 0) {
		/* Nothing covers the new image: what it starts needs no
		 * following (the top of this file says why). */
		detach(r, p);
		return;
	}
	if (!p->follows) {
		/* It covers its tree now: follow it before its first
		 * instruction (options may change at any ptrace stop). */
		if (ptrace(PTRACE_SETOPTIONS, pid, 0, SBX_TRACE_FOLLOW) < 0) {
			exec_mismatch(r, pid, NULL, "its tree could not be followed");
			return;
		}
		p->follows = true;
	}
	ptrace(PTRACE_CONT, pid, 0, 0);
}

static void on_stop(struct sup_run *r, pid_t pid, int status)
{
	int event = (status >> 16) & 0xff;
	int sig = WSTOPSIG(status);
	unsigned long msg = 0;
	if (!traced_get(r, pid)) {
		if (event == PTRACE_EVENT_STOP && sig == SIGTRAP) {
			/* A new tracee's first stop, before its creator's event
			 * (the kernel may report them in either order): keep it
			 * stopped until on_new_child() says who created it, so
			 * that its cover is never guessed. */
			struct sup_proc *p = sup_proc_add(r, pid, 0);
			p->held = true;
			return;
		}
		/* An exec event of a thread that took its leader's pid finds
		 * its entry under the former tid (on_exec_event). Any other
		 * stop of a tracee without an entry: make one. */
		if (event != PTRACE_EVENT_EXEC)
			set_traced(r, sup_proc_adopt(r, pid, 0, 0), true);
	}
	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0)
			on_new_child(r, pid, (pid_t)msg, event == PTRACE_EVENT_CLONE);
		ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	case PTRACE_EVENT_EXEC:
		on_exec_event(r, pid);
		return;
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			ptrace(PTRACE_LISTEN, pid, 0, 0); /* a group stop: keep it */
		else
			ptrace(PTRACE_CONT, pid, 0, 0); /* the first stop of a new tracee */
		return;
	case 0:
		/* Signal-delivery stop: deliver the signal as it was. */
		ptrace(PTRACE_CONT, pid, 0, (void *)(uintptr_t)sig);
		return;
	default:
		ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	}
}

void sup_trace_reap(struct sup_run *r)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);
		if (pid <= 0)
			return;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (pid == r->child.pid) {
				r->agent_exited = true;
				r->agent_status = status;
			}
			sup_proc_del(r, pid);
			continue;
		}
		if (WIFSTOPPED(status))
			on_stop(r, pid, status);
	}
}

void sup_trace_kill_all(struct sup_run *r)
{
	if (r->child.pid > 0)
		kill(-r->child.pid, SIGKILL);
	/* A traced entry's pid is exact; an untraced one is reached through
	 * its pidfd only, never by a pid that may have been recycled. The
	 * rest of the namespace dies with init. */
	for (size_t b = 0; b < WD_ARRAY_SIZE(r->procs); b++)
		for (struct sup_proc *p = r->procs[b]; p; p = p->next) {
			if (p->traced)
				kill(p->tid, SIGKILL);
			else if (p->pidfd >= 0)
				syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
		}
}

void sup_trace_free(struct sup_run *r)
{
	for (size_t b = 0; b < WD_ARRAY_SIZE(r->procs); b++) {
		while (r->procs[b]) {
			struct sup_proc *p = r->procs[b];
			r->procs[b] = p->next;
			proc_free(p);
		}
	}
	r->nprocs = 0;
	r->nuntraced = 0;
}
