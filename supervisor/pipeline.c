/*
 * pipeline.c: the pipeline, run for each exec notification and for each
 * open the project view asks about (with the fast path off):
 *
 *   decode -> policy (hard deny, rules and grants, coverage, fast path)
 *          -> judge (not configured: escalate) -> tier -> audit -> answer
 *
 * The answer is preset to refuse: only sup_finish() with an allowing
 * verdict and a committed audit row lets a request through. A request that
 * needs a person waits in the pending table (pending.c) while the loop
 * serves others. docs/design.md, section "The pipeline".
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

#define NOTE_NO_PERSON "standard mode, but no person can be asked (--prompt none): rejected"

#define NOTE_REVIEW "review run: escalations are never asked, standard mode rejects them"

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
		sup_finish_warden(r, rq, false, POL_SRC_STOPPED,
				  "the session ended before a decision");
		return;
	}
	switch (effective_tier(r)) {
	case POL_TIER_AGGRESSIVE:
		sup_finish_warden(r, rq, true, POL_SRC_TIER, JDG_NOTE_AGGRESSIVE);
		return;
	case POL_TIER_STANDARD:
		if (r->opts.review) {
			/* A review run never waits for a person. */
			sup_finish_warden(r, rq, false, POL_SRC_TIER, NOTE_REVIEW);
			return;
		}
		if (r->opts.prompt != SUP_PROMPT_NONE && (r->desk_fd >= 0 || r->tty_fd >= 0)) {
			sup_pending_add(r, rq);
			return;
		}
		sup_finish_warden(r, rq, false, POL_SRC_TIER, NOTE_NO_PERSON);
		return;
	case POL_TIER_PASSIVE:
	case POL_TIER_UNSET:
	default: /* fail closed: an unknown tier refuses */
		sup_finish_warden(r, rq, false, POL_SRC_TIER, JDG_NOTE_PASSIVE);
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
	sup_finish(r, rq,
		   (struct sup_outcome){.allow = true,
					.source = m == SUP_MACH_VALIDATE ? POL_SRC_STARTUP
									 : POL_SRC_HARNESS,
					.reason = reason,
					.decided_by = m == SUP_MACH_VALIDATE ? r->person : "warden",
					.not_a_call = m == SUP_MACH_SETUP});
	return true;
}

/* A known harness's own start-up execs (Claude Code's "bash -c env", its
 * snapshot login shell, git ls-files...), in exactly the shapes policy
 * recognises, run by the agent process itself, by the real system program
 * of that name, with no variable that changes what it runs. They cover
 * nothing: what they start (env, a pager, a helper found through PATH) is
 * decided on its own. Finished here when |rq| is one. */
static bool harness_startup(struct sup_run *r, struct sup_request *rq, const struct sup_proc *p)
{
	const struct pol_decision *d = &rq->pol;
	if (!(r->opts.agent != POL_HARNESS_NONE && p && p->tool_call == 0 && !p->orphan &&
	      d->verdict != POL_DENY_CRITICAL && d->verdict != POL_DENY && system_program(rq->ev) &&
	      !pol_request_env_changes_program(rq->req) &&
	      pol_is_harness_startup(r->opts.agent, rq->ev->argv, r->config)))
		return false;
	char reason[256];
	snprintf(reason, sizeof(reason), "%s's own start-up, run by %s",
		 pol_harness_name(r->opts.agent), r->person);
	sup_finish(r, rq,
		   (struct sup_outcome){.allow = true,
					.source = POL_SRC_STARTUP,
					.reason = reason,
					.decided_by = r->person});
	return true;
}

/* The agent's own start-up chain, approved by whoever ran warden; the
 * agent covers nothing it starts. */
static void agent_startup(struct sup_run *r, struct sup_request *rq)
{
	char reason[256];
	snprintf(reason, sizeof(reason), "the agent's start-up, run by %s", r->person);
	/* What the agent now is, by inode: its own re-execs are recognised by
	 * it (startup.c). */
	if (rq->ev && !rq->ev->interp) {
		r->agent_dev = rq->ev->dev;
		r->agent_ino = rq->ev->ino;
		free(r->agent_path);
		r->agent_path = rq->ev->resolved ? wd_strdup(rq->ev->resolved) : NULL;
	}
	sup_finish(r, rq,
		   (struct sup_outcome){.allow = true,
					.source = POL_SRC_STARTUP,
					.reason = reason,
					.decided_by = r->person});
}

/* The agent's own machinery among execs: the launcher's native child (the
 * agent's start-up, and the agent from now on, startup.c), the harness's
 * wrapper and set-up, its own start-up commands. */
bool sup_exec_machinery(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
			bool *startup)
{
	if (!*startup && rq->pol.verdict != POL_DENY_CRITICAL &&
	    sup_startup_child(r, p, rq->ev, rq->req)) {
		p->startup = true;
		*startup = true;
	}
	if (!*startup && harness_machinery(r, rq, p))
		return true;
	return !*startup && harness_startup(r, rq, p);
}

/* Steps 1-3 (policy), then 4-5. */
void sup_run_pipeline(struct sup_run *r, struct sup_request *rq, bool startup)
{
	const struct sup_kind_ops *k = sup_kind_ops(rq->kind);
	struct sup_proc *p = sup_proc_get(r, rq->pid);
	struct pol_context ctx = {
		.covered = k->traced && p && p->cover != 0,
		.review = r->opts.review,
		.no_fast_path = k->no_fast_path,
	};
	sup_judge_touch(r);
	pol_decide(rq->req, r->config, r->grants, &ctx, wd_now_real_us(), &rq->pol);
	const struct pol_decision *d = &rq->pol;
	/* pol_exec_covers() is false for anything but an exec. */
	rq->covers = pol_exec_covers(rq->req);

	if (k->machinery(r, rq, p, &startup))
		return;
	if (startup && d->verdict != POL_DENY_CRITICAL) {
		agent_startup(r, rq);
		return;
	}
	switch (d->verdict) {
	case POL_DENY_CRITICAL:
	case POL_DENY:
		sup_finish(r, rq,
			   (struct sup_outcome){.allow = false,
						.source = d->source,
						.reason = d->reason,
						.decided_by = "warden"});
		return;
	case POL_ALLOW:
		sup_finish(r, rq,
			   (struct sup_outcome){.allow = true,
						.source = d->source,
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
		       const char *judge_json, enum pol_source source)
{
	free(rq->judge_json);
	rq->judge_json = judge_json ? wd_strdup(judge_json) : NULL;
	switch (outcome) {
	case JDG_ALLOW:
		sup_finish(r, rq,
			   (struct sup_outcome){.allow = true,
						.source = source,
						.reason = reason,
						.decided_by = "judge",
						.covers = rq->covers});
		return;
	case JDG_REJECT:
		sup_finish(r, rq,
			   (struct sup_outcome){.allow = false,
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
void sup_refuse_unbuilt(struct sup_run *r, struct sup_request *rq, char *summary)
{
	rq->summary = summary;
	sup_finish_warden(r, rq, false, POL_SRC_ERROR, "the request could not be built");
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
			  int64_t t0, int err, enum pol_source source, char *reason, const char *by)
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
		.kind = pol_kind_name(POL_EXEC),
		.request = req ? pol_request_json(req) : wd_strdup("{}"),
		.summary = ev->argv[0] ? wd_argv_join(ev->argv) : wd_strdup(ev->path),
		.decision = "deny",
		.source = pol_source_name(source),
		.reason = reason,
		.decided_by = by,
		.tool_call = p ? p->tool_call : 0,
		.latency_us = (wd_now_mono_ns() - t0) / 1000,
	};
	pol_request_free(req);
	sup_stats_add(&r->stats, source, wd_now_mono_ns() - t0);
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
		quiet_refusal(r, ev, p, t0, ev->open_errno, POL_SRC_DECODER,
			      wd_asprintf("the exec fails: %s (%s)", strerror(ev->open_errno),
					  name ? name : "?"),
			      "kernel");
		return;
	}
	if (p->refused_digest == ev->digest && wd_now_mono_ns() - p->refused_at_ns < 2000000000LL) {
		/* The same exec, refused a moment ago, retried on the next
		 * PATH entry (dash, bash and execvp all do): same answer. */
		quiet_refusal(r, ev, p, t0, EACCES, POL_SRC_REPEAT,
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
		sup_finish(r, rq,
			   (struct sup_outcome){.allow = false,
						.source = POL_SRC_DECODER,
						.reason = ev->refuse_reason,
						.decided_by = "warden",
						.err = ev->refuse_errno});
		return;
	}
	rq->req = request_of(r, ev);
	if (!rq->req) {
		sup_refuse_unbuilt(r, rq, wd_argv_join(ev->argv));
		return;
	}
	rq->summary = pol_request_summary(rq->req);
	sup_run_pipeline(r, rq, p->startup && !r->startup_over);
}

void sup_on_notify(struct sup_loop *l, int fd, uint32_t events, void *arg)
{
	(void)l;
	(void)events;
	struct sup_run *r = arg;
	struct sbx_exec_event *ev = NULL;
	struct sbx_sock_event *sock = NULL;
	struct sbx_fs_event *fs = NULL;
	int64_t t0 = wd_now_mono_ns();
	int rc = sbx_notify_recv(fd, r->child.root_fd, sup_args_hint, r, &ev, &sock, &fs);
	if (rc < 0) {
		if (rc != -ENOENT && rc != -EAGAIN)
			wd_warn("receiving a notification failed: %s", strerror(-rc));
		return;
	}
	if (sock) {
		sup_sock_on_notify(r, sock, t0);
		return;
	}
	if (fs) {
		sup_fs_on_notify(r, fs);
		return;
	}
	/* A command is starting: the split view's pre-marking walk makes way
	 * for it (sandbox/fan_walk.c). */
	sbx_fan_step_aside(r->fan);
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
