/*
 * decide.c: the pipeline of DESIGN.md, run for each exec notification:
 *
 *   decode -> policy (hard deny, rules and grants, coverage, fast path)
 *          -> judge (not configured: escalate) -> tier -> audit -> answer
 *
 * and for each open the project view asks about (a sensitive path), with
 * the fast path off.
 *
 * The answer is preset to refuse: only finish() with an allowing verdict
 * and a committed audit row lets a request through. Every other path (a
 * decoder refusal, an audit failure, a vanished caller, an unknown verdict)
 * refuses. A request that needs a person waits in the pending list; the
 * loop goes on serving other requests meanwhile.
 */
#include "sup.h"

#include "judge.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#define NOTE_AGGRESSIVE "aggressive mode, auto-approve all escalated tool calls"
#define NOTE_PASSIVE	"passive mode, reject all escalated tool calls"
#define NOTE_NO_PERSON	"standard mode, but no person can be asked (--prompt none): rejected"

#define NOTE_REVIEW   "review run: escalations are never asked, standard mode rejects them"
#define NOTE_DEADLINE "no decision before the deadline"
/* Indexes of sup_stats by source. */
enum {
	ST_STARTUP,
	ST_HARNESS,
	ST_HARD_DENY,
	ST_RULE,
	ST_GRANT,
	ST_FAST_PATH,
	ST_COVERED,
	ST_JUDGE,
	ST_TIER,
	ST_USER,
	ST_ERROR,
};

static int stat_index(const char *source)
{
	static const char *const names[] = {
		[ST_STARTUP] = "startup", [ST_HARNESS] = "harness", [ST_HARD_DENY] = "hard_deny",
		[ST_RULE] = "rule",	  [ST_GRANT] = "grant",	    [ST_FAST_PATH] = "fast_path",
		[ST_COVERED] = "covered", [ST_JUDGE] = "judge",	    [ST_TIER] = "tier",
		[ST_USER] = "user",
	};
	for (size_t i = 0; i < WD_ARRAY_SIZE(names); i++)
		if (names[i] && strcmp(names[i], source) == 0)
			return (int)i;
	if (strstr(source, "grant") || strcmp(source, "accepted_rule") == 0)
		return ST_GRANT;
	if (strcmp(source, "judge_cache") == 0)
		return ST_JUDGE;
	return ST_ERROR;
}

/* The project and the gated places: their files are in a view. */
static const char *tell_skip[SBX_MAX_VIEWS + 1];

void sup_tell_skip(const char *place)
{
	for (size_t i = 0; i < SBX_MAX_VIEWS; i++)
		if (!tell_skip[i]) {
			tell_skip[i] = place;
			return;
		}
}

void sup_tell(pid_t tgid, const char *fmt, ...)
{
	char body[1000], msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	/* One line, at most sizeof(msg) - 1 bytes, always newline-ended, and
	 * nothing in it that drives a terminal. */
	char *clean = wd_sanitize(body);
	int n = snprintf(msg, sizeof(msg), "warden: %s\n", clean);
	free(clean);
	if (n >= (int)sizeof(msg)) {
		n = (int)sizeof(msg) - 1;
		msg[n - 1] = '\n';
	}
	if (n < 0)
		return;

	/* A stderr inside a view (the project, a gated place) is not touched at all: even
	 * closing our copy would send a FUSE flush, and the view's workers may
	 * all be waiting on this loop. readlink does not reach the view. */
	char link[64], target[4096];
	snprintf(link, sizeof(link), "/proc/%d/fd/2", tgid);
	ssize_t tl = readlink(link, target, sizeof(target) - 1);
	if (tl <= 0)
		return;
	target[tl] = '\0';
	for (size_t i = 0; tell_skip[i]; i++)
		if (wd_path_within(target, tell_skip[i]))
			return;

	/* The caller's own stderr, the same open file description (so a
	 * tool runner that captures stderr sees it), taken with pidfd_getfd:
	 * no path is reopened. */
	wd_autoclose int pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	if (pidfd < 0)
		return;
	wd_autoclose int fd = (int)syscall(SYS_pidfd_getfd, pidfd, 2, 0);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return;
	/* Never block the loop on the agent's pipe: write only what fits
	 * now (a full pipe drops the line, the audit keeps the reason). */
	if (S_ISFIFO(st.st_mode)) {
		int queued = 0, size = fcntl(fd, F_GETPIPE_SZ);
		if (ioctl(fd, FIONREAD, &queued) < 0 || size < 0 || size - queued < n)
			return;
		(void)!write(fd, msg, (size_t)n);
	} else if (S_ISSOCK(st.st_mode)) {
		(void)!send(fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	} else if (S_ISCHR(st.st_mode)) {
		/* A terminal can be stopped (^S) or never read: a new open
		 * file description in non-blocking mode, so the loop never
		 * waits on it. */
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/fd/2", tgid);
		wd_autoclose int nb = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (nb >= 0)
			(void)!write(nb, msg, (size_t)n);
	} else if (S_ISREG(st.st_mode)) {
		(void)!write(fd, msg, (size_t)n);
	}
}

/* How the decision of one request ends. */
struct outcome {
	bool allow;
	const char *source;
	const char *reason;
	const char *decided_by;
	const char *note;
	bool covers; /* an allowed exec covers its tree (see sup_proc.cover) */
	int err;     /* the errno a refusal returns (0: EACCES) */
	/* The exec is the harness's set-up of a tool call's process, not the
	 * call: the process's next exec is. */
	bool not_a_call;
};

static void request_free(struct sup_request *rq)
{
	if (!rq)
		return;
	sbx_exec_event_free(rq->ev);
	free(rq->judge_json);
	free(rq->judge_reason);
	pol_request_free(rq->req);
	free(rq->summary);
	free(rq);
}

/* A view request answered already (over the cap), whose row was owed. */
static void free_late(struct sup_view_wait *vw)
{
	free(vw->path);
	free(vw->path2);
	free(vw);
}

/* Answers a view request: the worker thread waiting for it wakes up. */
static void answer_view(struct sup_run *r, struct sup_view_wait *vw, int result)
{
	if (vw->late) { /* answered already: only its row was owed */
		free_late(vw);
		return;
	}
	pthread_mutex_lock(&r->view_lock);
	vw->result = result;
	vw->done = true;
	pthread_cond_broadcast(&r->view_cond);
	pthread_mutex_unlock(&r->view_lock);
}

static const char *verb_of(const struct sup_request *rq)
{
	if (rq->kind == POL_EXEC)
		return "exec";
	if (rq->vw && (rq->vw->access & ~(unsigned)POL_ACC_READ))
		return "change";
	return "read";
}

/*
 * Audits and answers |rq|, then frees it. The row is committed before the
 * answer; if it cannot be, the request is refused (fail closed).
 */
static void finish(struct sup_run *r, struct sup_request *rq, struct outcome o)
{
	struct sup_proc *p = rq->kind == POL_EXEC ? sup_proc_get(r, rq->pid) : NULL;
	if (rq->kind == POL_EXEC && !p)
		p = sup_proc_adopt(r, rq->pid, 0, 0);
	struct sup_proc *covering = p ? p : sup_proc_get(r, rq->pid);
	/* The cover once the exec has happened: the decision's own row when it
	 * covers (set below, once the row exists), the caller's cover for a
	 * covered command, else nothing. */
	bool covers_next = rq->kind == POL_EXEC && o.allow && o.covers;
	/* The agent's own process covers nothing: were it to, everything it
	 * starts afterwards (every tool call) would go undecided. */
	if (p && p->tgid == r->child.pid)
		covers_next = false;
	/* An allowed exec is checked at its exec event, so warden must be the
	 * caller's tracer before the answer lets it go on. The caller is
	 * blocked in the exec (only a fatal signal ends that wait, see
	 * filter.c), so it cannot run, fork or exec meanwhile. */
	if (rq->kind == POL_EXEC && o.allow) {
		int src = sup_trace_seize(r, p, covers_next);
		if (src < 0) {
			o.allow = false;
			o.reason = "warden could not attach to it to check the exec";
			o.err = src == -ESRCH ? ESRCH : EPERM;
			wd_warn("pid %d: PTRACE_SEIZE: %s", rq->pid, strerror(-src));
		}
	}
	char *json = rq->req ? pol_request_json(rq->req) : NULL;
	int64_t t_dec = wd_now_mono_ns();
	struct sto_row row = {
		.ts_us = wd_now_real_us(),
		.session = r->session_id,
		.pid = rq->pid,
		.ppid = covering ? covering->ppid : 0,
		.kind = pol_kind_name(rq->kind),
		.request = json ? json : "{}",
		.summary = rq->summary,
		.decision = o.allow ? "allow" : "deny",
		.source = o.source,
		.reason = o.reason,
		.decided_by = o.decided_by,
		.note = o.note,
		.tool_call = covering ? covering->tool_call : 0,
		.latency_us = (t_dec - rq->t_recv_ns) / 1000,
		.judge = rq->judge_json,
	};
	int64_t t_row = wd_now_mono_ns();
	int rc = sup_audit_flush(r, &row);
	/* The first exec of an agent's child is the tool call the rest of its
	 * tree is attributed to. */
	if (rc == 0 && p && !p->startup && p->tool_call == 0 && rq->kind == POL_EXEC &&
	    !o.not_a_call)
		p->tool_call = row.id;
	r->stats.rows++;
	r->stats.rows_ns += wd_now_mono_ns() - t_row;
	free(json);
	if (rc < 0) {
		r->audit_failures++;
		wd_err("the audit row for \"%s\" could not be written (%s): refused", rq->summary,
		       strerror(-rc));
		if (o.allow) {
			o.allow = false;
			o.reason = "the audit could not be written, so nothing may run";
		}
	}
	sup_stats_add(&r->stats, stat_index(o.source), wd_now_mono_ns() - rq->t_recv_ns);
	sup_judge_record(r, rq, o.allow, o.source, o.decided_by,
			 o.note				 ? o.note
			 : strcmp(o.source, "tier") == 0 ? o.reason
							 : NULL);
	wd_debug("%s %s: %s (%s: %s)", o.allow ? "allowed" : "refused", verb_of(rq), rq->summary,
		 o.source, o.reason);

	if (!o.allow) {
		if (p && rq->ev) {
			p->refused_digest = rq->ev->digest;
			p->refused_row = row.id;
			p->refused_at_ns = wd_now_mono_ns();
		}
		/* A view caller that could not be named (tgid 0) is not told:
		 * never write to a pid that is not the one that asked. */
		if (rq->tgid > 0) {
			if (strcmp(o.source, "user") == 0)
				sup_tell(rq->tgid, "refused by %s: %s (%s\"%s\")", o.decided_by,
					 o.note ? o.note : "no note",
					 rq->kind == POL_EXEC ? "exec of " : "", rq->summary);
			else
				sup_tell(rq->tgid, "refused %s\"%s\": %s",
					 rq->kind == POL_EXEC ? "exec of " : "", rq->summary,
					 o.reason);
		}
		if (rq->kind == POL_EXEC) {
			sbx_notify_deny(r->child.notify_fd, rq->ev->id, o.err ? o.err : EACCES);
			sup_proc_keep_untraced(r, p); /* for the retry above */
		} else {
			answer_view(r, rq->vw, -(o.err ? o.err : EACCES));
		}
		request_free(rq);
		return;
	}
	/* A person's approval is told, with or without a note: the agent
	 * knows a person saw what it asked. */
	if (o.note && *o.note && rq->tgid > 0)
		sup_tell(rq->tgid, "approved by %s with note: %s", o.decided_by, o.note);
	else if (rq->tgid > 0 && strcmp(o.source, "user") == 0)
		sup_tell(rq->tgid, "approved by %s (%s\"%s\")", o.decided_by,
			 rq->kind == POL_EXEC ? "exec of " : "", rq->summary);
	if (rq->kind == POL_OPEN) {
		answer_view(r, rq->vw, 0);
		request_free(rq);
		return;
	}
	/* Record what was decided before answering: the exec event, handled
	 * later on this same thread, checks the new image against it. */
	struct sbx_exec_event *ev = wd_steal_pointer(&rq->ev);
	uint64_t id = ev->id;
	sbx_exec_event_free(p->decided);
	p->decided = ev;
	p->decided_row = row.id;
	p->next_cover = covers_next ? (strcmp(o.source, "covered") == 0 ? p->cover : row.id) : 0;
	if (sbx_notify_allow(r->child.notify_fd, id) < 0) {
		sbx_exec_event_free(p->decided); /* the caller is gone */
		p->decided = NULL;
	}
	request_free(rq);
}

static enum pol_tier effective_tier(const struct sup_run *r)
{
	if (r->opts.tier_set)
		return r->opts.tier;
	enum pol_tier t = pol_config_tier(r->config);
	return t == POL_TIER_UNSET ? POL_TIER_STANDARD : t;
}

/* Step 5: the tier decides what nobody before it could. */
static void escalate(struct sup_run *r, struct sup_request *rq)
{
	if (r->stopping) {
		/* The session is ending: nothing waits, and nothing is allowed
		 * by a tier any more (a request the judge had is refused). */
		finish(r, rq,
		       (struct outcome){.allow = false,
					.source = "stopped",
					.reason = "the session ended before a decision",
					.decided_by = "warden"});
		return;
	}
	switch (effective_tier(r)) {
	case POL_TIER_AGGRESSIVE:
		finish(r, rq,
		       (struct outcome){.allow = true,
					.source = "tier",
					.reason = NOTE_AGGRESSIVE,
					.decided_by = "warden"});
		return;
	case POL_TIER_STANDARD:
		if (r->opts.review) {
			/* A review run never waits for a person. */
			finish(r, rq,
			       (struct outcome){.allow = false,
						.source = "tier",
						.reason = NOTE_REVIEW,
						.decided_by = "warden"});
			return;
		}
		if (r->opts.prompt != SUP_PROMPT_NONE && (r->desk_fd >= 0 || r->tty_fd >= 0)) {
			sup_pending_add(r, rq);
			return;
		}
		finish(r, rq,
		       (struct outcome){.allow = false,
					.source = "tier",
					.reason = NOTE_NO_PERSON,
					.decided_by = "warden"});
		return;
	case POL_TIER_PASSIVE:
	case POL_TIER_UNSET:
	default: /* fail closed: an unknown tier refuses */
		finish(r, rq,
		       (struct outcome){.allow = false,
					.source = "tier",
					.reason = NOTE_PASSIVE,
					.decided_by = "warden"});
		return;
	}
}

/* Whether |ev| runs the system's own program of the name argv[0] gives
 * (bash, sh, git...): resolved inside /usr/bin or /bin, and named so there
 * (sh may be dash). Not a copy in the project or /tmp. */
static bool system_program(const struct sbx_exec_event *ev)
{
	const char *res = ev->resolved, *a0 = ev->argv[0];
	/* The name counts only for a file the agent cannot have written. */
	if (!res || !a0 || ev->agent_writable ||
	    !(wd_str_has_prefix(res, "/usr/bin/") || wd_str_has_prefix(res, "/bin/")))
		return false;
	const char *rb = strrchr(res, '/') + 1, *ab = strrchr(a0, '/');
	ab = ab ? ab + 1 : a0;
	if (strcmp(rb, ab) == 0)
		return true;
	return strcmp(ab, "sh") == 0 && (strcmp(rb, "dash") == 0 || strcmp(rb, "bash") == 0);
}

/* The agent harness's own machinery (startup.c): finished here when |rq|
 * is one. Hard deny is not consulted for it: none of it runs the model's
 * command, which is decided at its own exec (the wrapper's last line). */
static bool harness_machinery(struct sup_run *r, struct sup_request *rq, struct sup_proc *p)
{
	enum sup_machinery m = sup_harness_machinery(r, p, rq->ev, rq->req);
	char reason[256];
	const char *who = pol_harness_name(r->opts.agent);
	switch (m) {
	case SUP_MACH_SETUP:
		snprintf(reason, sizeof(reason),
			 "%s's own binary setting up a tool call's process; the call is "
			 "decided at its next exec",
			 who);
		break;
	case SUP_MACH_WRAPPER:
		snprintf(reason, sizeof(reason),
			 "%s's tool-call wrapper (its snapshot is inert); the command is "
			 "decided at its own exec",
			 who);
		break;
	case SUP_MACH_VALIDATE:
		snprintf(reason, sizeof(reason), "%s's own start-up, run by %s", who, r->person);
		break;
	case SUP_MACH_NONE:
	default:
		return false;
	}
	finish(r, rq,
	       (struct outcome){.allow = true,
				.source = m == SUP_MACH_VALIDATE ? "startup" : "harness",
				.reason = reason,
				.decided_by = m == SUP_MACH_VALIDATE ? r->person : "warden",
				.not_a_call = m == SUP_MACH_SETUP});
	return true;
}

/* Steps 1-3 (policy), then 4-5. */
static void run_pipeline(struct sup_run *r, struct sup_request *rq, bool startup)
{
	struct sup_proc *p = sup_proc_get(r, rq->pid);
	struct pol_context ctx = {
		.covered = rq->kind == POL_EXEC && p && p->cover != 0,
		.review = r->opts.review,
		.no_fast_path = rq->kind == POL_OPEN,
	};
	sup_judge_touch(r);
	pol_decide(rq->req, r->config, r->grants, &ctx, wd_now_real_us(), &rq->pol);
	const struct pol_decision *d = &rq->pol;
	rq->covers = rq->kind == POL_EXEC && pol_exec_covers(rq->req);

	/* The launcher's native child: the agent's start-up, and the agent
	 * from now on (startup.c). */
	if (!startup && rq->kind == POL_EXEC && d->verdict != POL_DENY_CRITICAL &&
	    sup_startup_child(r, p, rq->ev, rq->req)) {
		p->startup = true;
		startup = true;
	}
	if (!startup && rq->kind == POL_EXEC && harness_machinery(r, rq, p))
		return;
	/* A known harness's own start-up execs (Claude Code's "bash -c env",
	 * its snapshot login shell, git ls-files...), in exactly the shapes
	 * policy recognises, run by the agent process itself, by the real
	 * system program of that name, with no variable that changes what it
	 * runs. They cover nothing: what they start (env, a pager, a helper
	 * found through PATH) is decided on its own. */
	if (!startup && rq->kind == POL_EXEC && r->opts.agent != POL_HARNESS_NONE && p &&
	    p->tool_call == 0 && !p->orphan && d->verdict != POL_DENY_CRITICAL &&
	    d->verdict != POL_DENY && system_program(rq->ev) &&
	    !pol_request_env_changes_program(rq->req) &&
	    pol_is_harness_startup(r->opts.agent, rq->ev->argv, r->config)) {
		char reason[256];
		snprintf(reason, sizeof(reason), "%s's own start-up, run by %s",
			 pol_harness_name(r->opts.agent), r->person);
		finish(r, rq,
		       (struct outcome){.allow = true,
					.source = "startup",
					.reason = reason,
					.decided_by = r->person});
		return;
	}
	if (startup && d->verdict != POL_DENY_CRITICAL) {
		/* The agent's own start-up chain, approved by whoever ran
		 * warden; the agent covers nothing it starts. */
		char reason[256];
		snprintf(reason, sizeof(reason), "the agent's start-up, run by %s", r->person);
		/* What the agent now is, by inode: its own re-execs are
		 * recognised by it (startup.c). */
		if (rq->kind == POL_EXEC && !rq->ev->interp) {
			r->agent_dev = rq->ev->dev;
			r->agent_ino = rq->ev->ino;
			free(r->agent_path);
			r->agent_path = rq->ev->resolved ? wd_strdup(rq->ev->resolved) : NULL;
		}
		finish(r, rq,
		       (struct outcome){.allow = true,
					.source = "startup",
					.reason = reason,
					.decided_by = r->person});
		return;
	}
	switch (d->verdict) {
	case POL_DENY_CRITICAL:
	case POL_DENY:
		finish(r, rq,
		       (struct outcome){.allow = false,
					.source = pol_source_name(d->source),
					.reason = d->reason,
					.decided_by = "warden"});
		return;
	case POL_ALLOW:
		finish(r, rq,
		       (struct outcome){.allow = true,
					.source = pol_source_name(d->source),
					.reason = d->reason,
					.decided_by = "warden",
					.covers = d->covers});
		return;
	case POL_ASK:
		/* An ask rule goes to the tier without the judge. */
		escalate(r, rq);
		return;
	case POL_UNDECIDED:
	default:
		/* Step 4: the judge, when there is one; its verdict continues
		 * in sup_judge_verdict(). */
		if (!sup_judge_submit(r, rq))
			escalate(r, rq);
		return;
	}
}

void sup_judge_verdict(struct sup_run *r, struct sup_request *rq, int outcome, const char *reason,
		       const char *judge_json, const char *source)
{
	free(rq->judge_json);
	rq->judge_json = judge_json ? wd_strdup(judge_json) : NULL;
	switch (outcome) {
	case JDG_ALLOW:
		finish(r, rq,
		       (struct outcome){.allow = true,
					.source = source,
					.reason = reason,
					.decided_by = "judge",
					.covers = rq->covers});
		return;
	case JDG_REJECT:
		finish(r, rq,
		       (struct outcome){.allow = false,
					.source = source,
					.reason = reason,
					.decided_by = "judge"});
		return;
	default:
		/* Escalate, failures included: the tier decides, and the
		 * person sees what the judge said. */
		free(rq->judge_reason);
		rq->judge_reason = wd_strdup(reason ? reason : "");
		escalate(r, rq);
		return;
	}
}

/* Policy could not build |rq|'s request: refused, summarised as |summary|
 * (taken). */
static void refuse_unbuilt(struct sup_run *r, struct sup_request *rq, char *summary)
{
	rq->summary = summary;
	finish(r, rq,
	       (struct outcome){.allow = false,
				.source = "error",
				.reason = "the request could not be built",
				.decided_by = "warden"});
}

static struct pol_request *request_of(struct sup_run *r, const struct sbx_exec_event *ev)
{
	/* |path| as invoked, |resolved| the file that runs (when it differs):
	 * the decoder found both in the caller's own context. */
	bool same = ev->resolved && strcmp(ev->resolved, ev->path) == 0;
	struct pol_exec_desc d = {
		.path = ev->path,
		.resolved = same ? NULL : ev->resolved,
		.interp = ev->interp,
		.argv = ev->argv,
		.envp = ev->envp,
		.cwd = ev->cwd,
		.parent_cmdline = ev->parent_cmdline,
		.agent_writable = ev->agent_writable,
		.agent_writable_why = ev->writable_why,
	};
	/* Codex's wrapper counts as one only with the snapshot it sources
	 * read and checked (startup.c, harness.c). */
	wd_autofree char *snap_path = r->opts.agent == POL_HARNESS_CODEX
					      ? pol_codex_snapshot_path(ev->argv, r->config)
					      : NULL;
	wd_autofree char *snap = snap_path ? sup_read_snapshot(r, snap_path) : NULL;
	if (snap) {
		d.harness_path = snap_path;
		d.harness_file = snap;
	}
	return pol_request_exec(&d, r->opts.project);
}

#define MISSES_MAX 32

static void free_misses(struct sup_run *r)
{
	for (size_t i = 0; i < r->nmisses; i++) {
		free((char *)r->misses[i].request);
		free((char *)r->misses[i].summary);
		free((char *)r->misses[i].reason);
	}
	r->nmisses = 0;
}

int sup_audit_flush(struct sup_run *r, struct sto_row *also)
{
	if (r->nmisses == 0) {
		if (!also) {
			free(r->misses);
			r->misses = NULL;
		}
		return also ? sto_append(r->db, also) : 0;
	}
	size_t n = r->nmisses;
	struct sto_row *rows = wd_calloc(n + 1, sizeof(*rows));
	memcpy(rows, r->misses, n * sizeof(*rows));
	if (also)
		rows[n++] = *also;
	int rc = sto_append_batch(r->db, rows, n);
	if (rc == 0 && also)
		also->id = rows[n - 1].id;
	if (rc < 0)
		wd_debug("%zu rows of failed execs could not be written: %s", r->nmisses,
			 strerror(-rc));
	free(rows);
	free_misses(r);
	if (!also) {
		free(r->misses);
		r->misses = NULL;
	}
	return rc;
}

/*
 * Answers |ev| (taken) with |err| at once, without continuing it, and
 * queues its row (|source|, |reason|, |by|): an exec the caller's own
 * lookup fails (not found, no exec permission, a hidden place, a bad
 * interpreter: the kernel's errno), or the retry of an exec refused a
 * moment ago. The caller is not told again (a shell fails so on every
 * PATH entry but one) and the judge's history does not see it. Nothing
 * runs, so the row need not come before the answer: it is written in the
 * transaction of the next row (a shell's next try is usually the program
 * it finds), or when the loop is idle, or at the end, which keeps a PATH
 * search at one commit.
 */
static void quiet_refusal(struct sup_run *r, struct sbx_exec_event *ev, struct sup_proc *p,
			  int64_t t0, int err, const char *source, char *reason, const char *by)
{
	sbx_notify_deny(r->child.notify_fd, ev->id, err);
	struct pol_request *req = ev->argv[0] ? request_of(r, ev) : NULL;
	if (!r->misses)
		r->misses = wd_calloc(MISSES_MAX, sizeof(*r->misses));
	r->misses[r->nmisses++] = (struct sto_row){
		.ts_us = wd_now_real_us(),
		.session = r->session_id,
		.pid = ev->pid,
		.ppid = p ? p->ppid : 0,
		.kind = "exec",
		.request = req ? pol_request_json(req) : wd_strdup("{}"),
		.summary = ev->argv[0] ? wd_argv_join(ev->argv) : wd_strdup(ev->path),
		.decision = "deny",
		.source = source,
		.reason = reason,
		.decided_by = by,
		.tool_call = p ? p->tool_call : 0,
		.latency_us = (wd_now_mono_ns() - t0) / 1000,
	};
	pol_request_free(req);
	sup_stats_add(&r->stats, stat_index(source), wd_now_mono_ns() - t0);
	sbx_exec_event_free(ev);
	sup_proc_keep_untraced(r, p);
	if (r->nmisses == MISSES_MAX)
		sup_audit_flush(r, NULL);
}

/* The exec of |ev| (taken), whose caller's entry is |p|. */
static void on_exec(struct sup_run *r, struct sbx_exec_event *ev, struct sup_proc *p, int64_t t0)
{
	if (!ev->found && !ev->refuse_errno) {
		const char *name = strerrorname_np(ev->open_errno);
		quiet_refusal(r, ev, p, t0, ev->open_errno, "decoder",
			      wd_asprintf("the exec fails: %s (%s)", strerror(ev->open_errno),
					  name ? name : "?"),
			      "kernel");
		return;
	}
	if (p->refused_digest == ev->digest && wd_now_mono_ns() - p->refused_at_ns < 2000000000LL) {
		/* The same exec, refused a moment ago, retried on the next
		 * PATH entry (dash, bash and execvp all do): same answer. */
		quiet_refusal(r, ev, p, t0, EACCES, "repeat",
			      wd_asprintf("the same exec was refused a moment ago (row %lld)",
					  (long long)p->refused_row),
			      "warden");
		return;
	}
	struct sup_request *rq = wd_calloc(1, sizeof(*rq));
	rq->kind = POL_EXEC;
	rq->ev = ev;
	rq->pid = ev->pid;
	rq->tgid = p->tgid;
	rq->t_recv_ns = t0;
	if (ev->refuse_errno) {
		/* An argv that could not be read leaves the program path. */
		rq->summary = ev->argv[0] ? wd_argv_join(ev->argv)
					  : wd_asprintf("%s (argv not read)", ev->path);
		finish(r, rq,
		       (struct outcome){.allow = false,
					.source = "decoder",
					.reason = ev->refuse_reason,
					.decided_by = "warden",
					.err = ev->refuse_errno});
		return;
	}
	rq->req = request_of(r, ev);
	if (!rq->req) {
		refuse_unbuilt(r, rq, wd_argv_join(ev->argv));
		return;
	}
	rq->summary = pol_request_summary(rq->req);
	run_pipeline(r, rq, p->startup && !r->startup_over);
}

void sup_on_notify(struct sup_loop *l, int fd, uint32_t events, void *arg)
{
	(void)l;
	(void)events;
	struct sup_run *r = arg;
	struct sbx_exec_event *ev = NULL;
	struct sbx_sock_event *sock = NULL;
	int64_t t0 = wd_now_mono_ns();
	int rc = sbx_notify_recv(fd, r->child.root_fd, sup_args_hint, r, &ev, &sock);
	if (rc < 0) {
		if (rc != -ENOENT && rc != -EAGAIN)
			wd_warn("receiving a notification failed: %s", strerror(-rc));
		return;
	}
	if (sock) {
		sup_sock_on_notify(r, sock, t0);
		return;
	}
	struct sup_proc *p = sup_proc_get(r, ev->pid);
	if (!p)
		p = sup_proc_adopt(r, ev->pid, ev->tgid, ev->ppid);
	if (p->pidfd < 0 && p->tgid == p->tid && ev->pidfd >= 0) {
		/* The entry is checked by this pidfd whenever it is untraced,
		 * even while a decision is pending: a caller killed meanwhile
		 * never lends it to the process that gets its pid. */
		p->pidfd = ev->pidfd;
		ev->pidfd = -1;
	}
	/* Until this notification is handled (answered, or left pending),
	 * the caller's entry is known to be its own (sup_run.live). A
	 * pending decision looks the entry up again, with its check, when
	 * it is answered. */
	r->live = p;
	sup_startup_check(r, ev, p);
	on_exec(r, ev, p, t0);
	r->live = NULL;
}

/* Whether |tid| is one of the supervisor's own threads (its decoder reads
 * the first line of a script through the view). */
static bool own_thread(pid_t tid)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/task/%d", tid);
	return access(p, F_OK) == 0;
}

int sup_view_decide(void *arg, const struct sbx_view_request *req)
{
	struct sup_run *r = arg;
	if (req->access == POL_ACC_READ &&
	    (r->child.view_pids_host ? own_thread(req->pid) : req->pid == 0))
		return 0;
	struct sup_view_wait vw = {
		.path = wd_strdup(req->path),
		.path2 = req->path2 ? wd_strdup(req->path2) : NULL,
		.access = req->access,
		.pid = req->pid,
	};
	pthread_mutex_lock(&r->view_lock);
	/*
	 * Workers that wait on the loop. At most 48 opens wait for a decision
	 * (a person, the judge): a quarter of the view's 64 workers stay free.
	 * An open over that cap is refused without asking anyone, but still
	 * goes through the loop, which audits the refusal before answering
	 * (one SQLite commit, not a person). Those two kinds together never
	 * take more than 56 workers: every other request is served without
	 * the loop, and the loop itself may need a worker (it reads a
	 * script's first line and stats a new image through the view), so a
	 * worker is always free for it and nothing can wait in a circle. Past
	 * 56 the open is refused at once and its row is written right after.
	 */
	bool counted = r->view_waiting < SBX_VIEW_MAX_THREADS - 16;
	bool room = r->view_waiting + r->view_over < SBX_VIEW_MAX_THREADS - 8;
	vw.over_cap = !counted;
	if (r->view_closing) {
		/* The session is ending and the loop no longer answers. */
		vw.done = true;
		vw.result = -EACCES;
	} else if (!room) {
		struct sup_view_wait *late = wd_calloc(1, sizeof(*late));
		*late = vw;
		late->late = true;
		late->over_cap = true;
		late->next = r->view_queue;
		r->view_queue = late;
		uint64_t one = 1;
		(void)!write(r->view_efd, &one, sizeof(one));
		pthread_mutex_unlock(&r->view_lock);
		return -EACCES; /* |late| owns the strings now */
	} else {
		if (counted)
			r->view_waiting++;
		else
			r->view_over++;
		vw.next = r->view_queue;
		r->view_queue = &vw;
		uint64_t one = 1;
		(void)!write(r->view_efd, &one, sizeof(one));
	}
	bool queued = !vw.done;
	while (!vw.done)
		pthread_cond_wait(&r->view_cond, &r->view_lock);
	if (queued && counted)
		r->view_waiting--;
	else if (queued)
		r->view_over--;
	pthread_mutex_unlock(&r->view_lock);
	free(vw.path);
	free(vw.path2);
	return vw.result;
}

void sup_on_view(struct sup_loop *l, int fd, uint32_t events, void *arg)
{
	(void)l;
	(void)events;
	struct sup_run *r = arg;
	uint64_t n;
	(void)!read(fd, &n, sizeof(n));
	pthread_mutex_lock(&r->view_lock);
	struct sup_view_wait *q = r->view_queue;
	r->view_queue = NULL;
	pthread_mutex_unlock(&r->view_lock);
	while (q) {
		struct sup_view_wait *vw = q;
		q = q->next;
		struct sup_request *rq = wd_calloc(1, sizeof(*rq));
		rq->kind = POL_OPEN;
		rq->vw = vw;
		/* FUSE names the thread (in a user namespace, by its pid in the
		 * sandbox); the process is what joins and is told. A caller
		 * that cannot be named is audited as pid 0, with no command
		 * line, and is never written to. */
		rq->pid = r->child.view_pids_host ? vw->pid : sup_host_tid(r, vw->pid);
		rq->tgid = rq->pid ? sup_tgid_of(rq->pid) : 0;
		rq->t_recv_ns = wd_now_mono_ns();
		char *cmdline = rq->pid ? sbx_proc_cmdline(rq->pid, 4096) : NULL;
		rq->req = pol_request_open(vw->path, vw->path2, vw->access, cmdline);
		free(cmdline);
		if (!rq->req) {
			refuse_unbuilt(r, rq, wd_strdup(vw->path));
			continue;
		}
		rq->summary = pol_request_summary(rq->req);
		if (vw->late)
			finish(r, rq,
			       (struct outcome){
				       .allow = false,
				       .source = "limit",
				       .reason = "the view was saturated by opens waiting on "
						 "warden; refused at once, this row written "
						 "right after the answer",
				       .decided_by = "warden"});
		else if (vw->over_cap)
			finish(r, rq,
			       (struct outcome){.allow = false,
						.source = "limit",
						.reason =
							"too many opens are already waiting for a "
							"decision; refused without asking",
						.decided_by = "warden"});
		else
			run_pipeline(r, rq, false);
	}
}

void sup_view_close(struct sup_run *r)
{
	pthread_mutex_lock(&r->view_lock);
	r->view_closing = true;
	for (struct sup_view_wait *q = r->view_queue, *next; q; q = next) {
		next = q->next;
		if (q->late) { /* answered already; its row is lost with the run */
			free_late(q);
			continue;
		}
		q->result = -EACCES;
		q->done = true;
	}
	r->view_queue = NULL;
	pthread_cond_broadcast(&r->view_cond);
	pthread_mutex_unlock(&r->view_lock);
}

static void pending_unlink(struct sup_run *r, struct sup_pending *p)
{
	for (struct sup_pending **pp = &r->pending; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	sup_prompt_forget(r, p);
}

/* The waiting request |rq| repeats: same process, same kind, same request. */
static struct sup_pending *pending_same(struct sup_run *r, const struct sup_request *rq)
{
	if (!rq->req || rq->tgid <= 0) /* an unnamed caller joins nothing */
		return NULL;
	wd_autofree char *json = pol_request_json(rq->req);
	for (struct sup_pending *p = r->pending; p; p = p->next) {
		if (p->rq->tgid != rq->tgid || p->rq->kind != rq->kind || !p->rq->req)
			continue;
		wd_autofree char *other = pol_request_json(p->rq->req);
		if (strcmp(json, other) == 0)
			return p;
	}
	return NULL;
}

void sup_pending_add(struct sup_run *r, struct sup_request *rq)
{
	struct sup_pending *same = pending_same(r, rq);
	if (same) {
		/* One question for the person, one answer for both callers. */
		rq->next_follower = same->followers;
		same->followers = rq;
		return;
	}
	struct sup_pending *p = wd_calloc(1, sizeof(*p));
	p->rq = rq;
	p->id = ++r->next_pending_id;
	p->since_us = wd_now_real_us();
	p->deadline_ns = wd_now_mono_ns() + r->opts.approval_timeout_ms * 1000000LL;
	p->deadline_us = p->since_us + r->opts.approval_timeout_ms * 1000LL;
	/* Appended: the desk lists them oldest first. */
	struct sup_pending **pp = &r->pending;
	while (*pp)
		pp = &(*pp)->next;
	*pp = p;
	if (r->desk_fd >= 0) {
		char until[40];
		wd_format_time(p->deadline_us, until, sizeof(until));
		wd_info("waiting for a person: %s-%u %s (warden approve %s-%u, warden deny %s-%u; "
			"refused at %s)",
			r->session_id + strlen(r->session_id) - 4, p->id, rq->summary,
			r->session_id + strlen(r->session_id) - 4, p->id,
			r->session_id + strlen(r->session_id) - 4, p->id, until);
	}
	if (r->opts.prompt == SUP_PROMPT_TTY && r->tty_fd >= 0)
		sup_prompt_enqueue(r, p);
}

struct sup_pending *sup_pending_find(struct sup_run *r, unsigned id)
{
	for (struct sup_pending *p = r->pending; p; p = p->next)
		if (p->id == id)
			return p;
	return NULL;
}

/* Writes a persistent grant for |req| into the project's permissions.json
 * (grant_write.c: an insertion into the file's own text). */
static int write_project_grant(struct sup_run *r, const struct pol_request *req, const char *who,
			       char **shown)
{
	wd_autofree char *path = wd_asprintf("%s/.warden/permissions.json", r->opts.project);
	wd_autofree char *dir = wd_asprintf("%s/.warden", r->opts.project);
	wd_autofree char *err = NULL;
	mkdir(dir, 0755);
	int64_t now = wd_now_real_us();
	int rc = sup_grant_write(path, req, who, now, shown, &err);
	if (rc == 0)
		rc = pol_config_add_grant(r->config, req, who, now);
	else
		wd_warn("%s", err ? err : strerror(-rc));
	return rc;
}

int sup_pending_answer(struct sup_run *r, struct sup_pending *p, enum sup_answer a,
		       const char *note, const char *who, char **msg)
{
	pending_unlink(r, p);
	struct sup_request *rq = p->rq, *followers = p->followers;
	free(p);
	sup_judge_person_answered(r);
	const char *n = note && *note ? note : NULL;
	char reason[512];
	int rc = 0;
	struct outcome o = {.source = "user", .decided_by = who, .note = n};
	if (msg)
		*msg = NULL;
	switch (a) {
	case SUP_ANSWER_ALWAYS_PROJECT: {
		char *json = NULL;
		rc = write_project_grant(r, rq->req, who, &json);
		if (msg)
			*msg = rc < 0 ? wd_asprintf("the project grant could not be written: %s; "
						    "approved for this session only",
						    strerror(-rc))
				      : wd_asprintf("wrote %s/.warden/permissions.json:\n%s",
						    r->opts.project, json);
		free(json);
	}
		/* A project grant is a session grant too. */
		/* fall through */
	case SUP_ANSWER_ALWAYS:
		pol_session_grant(r->grants, rq->req);
		snprintf(reason, sizeof(reason), "approved by %s for the rest of the %s", who,
			 a == SUP_ANSWER_ALWAYS_PROJECT && rc == 0 ? "project" : "session");
		o.allow = true;
		o.covers = rq->covers;
		break;
	case SUP_ANSWER_ONCE:
		snprintf(reason, sizeof(reason), "approved by %s", who);
		o.allow = true;
		o.covers = rq->covers;
		break;
	case SUP_ANSWER_REJECT:
	default:
		snprintf(reason, sizeof(reason), "refused by %s", who);
		o.allow = false;
		break;
	}
	o.reason = reason;
	finish(r, rq, o);
	while (followers) {
		struct sup_request *f = followers;
		followers = f->next_follower;
		finish(r, f, o);
	}
	return rc;
}

/* Whether the caller of a pending request still waits for it: a killed
 * caller leaves an invalid notification (exec) behind. */
static bool caller_waits(struct sup_run *r, const struct sup_request *rq)
{
	if (rq->kind != POL_EXEC)
		return true; /* a view request is answered by its worker either way */
	return sbx_notify_id_valid(r->child.notify_fd, rq->ev->id);
}

/* Finishes every follower of |p| with |o| and empties the list. */
static void finish_followers(struct sup_run *r, struct sup_pending *p, struct outcome o)
{
	while (p->followers) {
		struct sup_request *f = p->followers;
		p->followers = f->next_follower;
		finish(r, f, o);
	}
}

/* Drops the followers whose caller was killed while waiting. */
static void drop_gone_followers(struct sup_run *r, struct sup_pending *p)
{
	struct outcome gone = {.allow = false,
			       .source = "stopped",
			       .reason = "the process stopped waiting (killed)",
			       .decided_by = "warden"};
	for (struct sup_request **fp = &p->followers; *fp;) {
		struct sup_request *f = *fp;
		if (caller_waits(r, f)) {
			fp = &f->next_follower;
			continue;
		}
		*fp = f->next_follower;
		finish(r, f, gone);
	}
}

int sup_pending_expire(struct sup_run *r)
{
	int64_t now = wd_now_mono_ns(), next = -1;
	struct outcome gone = {.allow = false,
			       .source = "stopped",
			       .reason = "the process stopped waiting (killed)",
			       .decided_by = "warden"};
	struct outcome late = {.allow = false,
			       .source = "timeout",
			       .reason = NOTE_DEADLINE,
			       .decided_by = "warden"};
	struct sup_pending *p = r->pending;
	while (p) {
		struct sup_pending *nx = p->next;
		drop_gone_followers(r, p);
		if (p->deadline_ns <= now) {
			pending_unlink(r, p);
			finish(r, p->rq, late);
			finish_followers(r, p, late);
			free(p);
		} else if (!caller_waits(r, p->rq)) {
			/* The first caller is gone: a follower, if any, goes on
			 * waiting in its place (same question, same deadline). */
			struct sup_request *old = p->rq;
			if (p->followers) {
				p->rq = p->followers;
				p->followers = p->rq->next_follower;
				p->rq->next_follower = NULL;
			} else {
				pending_unlink(r, p);
				free(p);
			}
			finish(r, old, gone);
		} else if (next < 0 || p->deadline_ns - now < next) {
			next = p->deadline_ns - now;
		}
		p = nx;
	}
	return next < 0 ? -1 : (int)(next / 1000000 + 1);
}

void sup_pending_refuse_all(struct sup_run *r, const char *why)
{
	struct outcome o = {
		.allow = false, .source = "stopped", .reason = why, .decided_by = "warden"};
	while (r->pending) {
		struct sup_pending *p = r->pending;
		pending_unlink(r, p);
		finish(r, p->rq, o);
		finish_followers(r, p, o);
		free(p);
	}
}
