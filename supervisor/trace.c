/*
 * trace.c: the process table and the ptrace side of the supervisor.
 *
 * Every process of the agent's tree is traced from its first instruction
 * (fork/vfork/clone events auto-attach, see spawn.c). That gives warden
 * three things: it follows forks, so it knows which allowed command covers
 * each process (DESIGN.md "Process trees"); it sees each exec event, where
 * the image about to run is checked against the decision (notify.c explains
 * why that closes the argv race); and PTRACE_O_EXITKILL kills the whole
 * tree if the supervisor dies. A traced process also cannot be traced by
 * another process of the tree, which closes ptrace as a side door.
 *
 * Signals sent to tracees are passed on unchanged; group stops are kept
 * (PTRACE_LISTEN), so job control works as without warden.
 */
#include "sup.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

static size_t bucket(pid_t tid)
{
	return (size_t)tid % WD_ARRAY_SIZE(((struct sup_run *)0)->procs);
}

struct sup_proc *sup_proc_get(struct sup_run *r, pid_t tid)
{
	for (struct sup_proc *p = r->procs[bucket(tid)]; p; p = p->next)
		if (p->tid == tid)
			return p;
	return NULL;
}

struct sup_proc *sup_proc_add(struct sup_run *r, pid_t tid, pid_t ppid)
{
	struct sup_proc *p = sup_proc_get(r, tid);
	if (p)
		return p;
	p = wd_calloc(1, sizeof(*p));
	p->tid = tid;
	p->tgid = tid;
	p->ppid = ppid;
	size_t b = bucket(tid);
	p->next = r->procs[b];
	r->procs[b] = p;
	r->nprocs++;
	return p;
}

static void proc_free(struct sup_proc *p)
{
	sbx_exec_event_free(p->decided);
	free(p);
}

void sup_proc_del(struct sup_run *r, pid_t tid)
{
	for (struct sup_proc **pp = &r->procs[bucket(tid)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->tid == tid) {
			struct sup_proc *p = *pp;
			*pp = p->next;
			proc_free(p);
			r->nprocs--;
			return;
		}
	}
}

/* Tgid and PPid of |tid| from /proc, for a process whose creation event we
 * have not seen yet. */
static void proc_ids(pid_t tid, pid_t *tgid, pid_t *ppid)
{
	char path[64];
	char *buf = NULL;
	*tgid = tid;
	*ppid = 0;
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
 * names the caller by its pid in the sandbox's PID namespace. Every thread
 * of the tree is traced, so the caller is in the table: the entry whose
 * innermost pid is |nstid|. The caller is blocked in its FUSE request
 * while this runs, so its pid cannot be reused meanwhile, and pids are
 * unique in the namespace: at most one entry matches. Only sensitive opens
 * come here (rare), so a walk of the table is cheap enough.
 */
pid_t sup_host_tid(struct sup_run *r, pid_t nstid)
{
	if (nstid <= 0)
		return 0;
	for (size_t b = 0; b < WD_ARRAY_SIZE(r->procs); b++)
		for (struct sup_proc *p = r->procs[b]; p; p = p->next)
			if (ns_pid(p->tid) == nstid)
				return p->tid;
	return 0;
}

pid_t sup_tgid_of(pid_t tid)
{
	pid_t tgid, ppid;
	proc_ids(tid, &tgid, &ppid);
	return tgid;
}

/* A process we have not seen: it inherits the cover of its creator (the
 * thread group for a thread, the parent for a process). */
struct sup_proc *sup_proc_adopt(struct sup_run *r, pid_t tid)
{
	pid_t tgid, ppid;
	proc_ids(tid, &tgid, &ppid);
	pid_t creator = tgid != tid ? tgid : ppid;
	struct sup_proc *c = creator ? sup_proc_get(r, creator) : NULL;
	struct sup_proc *p = sup_proc_add(r, tid, ppid);
	p->tgid = tgid;
	if (c) {
		p->cover = c->cover;
		p->tool_call = c->startup && tgid == tid ? 0 : c->tool_call;
	}
	return p;
}

static void on_new_child(struct sup_run *r, pid_t parent, pid_t child, bool is_thread)
{
	struct sup_proc *par = sup_proc_get(r, parent);
	struct sup_proc *known = sup_proc_get(r, child);
	if (known && !known->held)
		return;
	/* New, or held at its first stop until now: its creator is |parent|. */
	struct sup_proc *p = known ? known : sup_proc_add(r, child, parent);
	p->ppid = parent;
	/* fork and vfork make a process; a clone event may be a thread or
	 * a process (clone without CLONE_THREAD): /proc says which, once. */
	p->tgid = is_thread ? sup_tgid_of(child) : child;
	if (par) {
		p->cover = par->cover;
		/* A child of the agent starts a new tool call (its threads do
		 * not: they are the agent). */
		p->tool_call = par->startup && !is_thread ? 0 : par->tool_call;
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
		.kind = "exec",
		.request = json,
		.summary = ev ? ev->path : "(unknown exec)",
		.decision = "deny",
		.source = "integrity",
		.reason = why,
		.decided_by = "warden",
	};
	if (sto_append(r->db, &row) < 0)
		r->audit_failures++;
	free(json);
	wd_warn("killed pid %d: %s", pid, why);
}

static void on_exec_event(struct sup_run *r, pid_t pid)
{
	unsigned long former = 0;
	ptrace(PTRACE_GETEVENTMSG, pid, 0, &former);
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
		leader->startup = p->startup;
		leader->tool_call = p->tool_call;
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
	if (sbx_verify_exec(pid, ev, &why) < 0) {
		exec_mismatch(r, pid, ev, why);
		free(why);
		sbx_exec_event_free(ev);
		return;
	}
	sbx_exec_event_free(ev);
	p->cover = p->next_cover;
	if (pid == r->child.pid)
		r->agent_started = true;
	ptrace(PTRACE_CONT, pid, 0, 0);
}

static void on_stop(struct sup_run *r, pid_t pid, int status)
{
	int event = (status >> 16) & 0xff;
	int sig = WSTOPSIG(status);
	unsigned long msg = 0;
	if (!sup_proc_get(r, pid)) {
		if (event == PTRACE_EVENT_STOP && sig == SIGTRAP) {
			/* A new tracee's first stop, before its creator's event
			 * (the kernel may report them in either order): keep it
			 * stopped until on_new_child() says who created it, so
			 * that its cover is never guessed (clone(CLONE_PARENT)
			 * makes /proc's PPid lie about the creator). */
			struct sup_proc *p = sup_proc_add(r, pid, 0);
			p->held = true;
			return;
		}
		sup_proc_adopt(r, pid);
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
	for (size_t b = 0; b < WD_ARRAY_SIZE(r->procs); b++)
		for (struct sup_proc *p = r->procs[b]; p; p = p->next)
			kill(p->tid, SIGKILL);
}
