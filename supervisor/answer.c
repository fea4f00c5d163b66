/*
 * answer.c: the end of the pipeline: audits a decided request, then
 * answers it (the exec notification or the waiting view worker), and
 * writes the queued rows of execs the kernel failed. The row is committed
 * before an allowing answer; see docs/design.md, section "The pipeline".
 */
#include "sup.h"

#include <errno.h>
#include <string.h>

static void request_free(struct sup_request *rq)
{
	if (!rq)
		return;
	sbx_exec_event_free(rq->ev);
	sbx_sock_event_free(rq->sock);
	free(rq->told);
	free(rq->command);
	free(rq->judge_json);
	free(rq->judge_reason);
	pol_request_free(rq->req);
	free(rq->summary);
	free(rq);
}

const char *sup_exec_verb(const struct sup_request *rq)
{
	(void)rq;
	return "exec";
}

const char *sup_open_verb(const struct sup_request *rq)
{
	if (rq->vw && (rq->vw->access & ~(unsigned)POL_ACC_READ))
		return "change";
	return "read";
}

/* An allowed exec is checked at its exec event, so warden must be the
 * caller's tracer before the answer lets it go on. The caller is blocked
 * in the exec (only a fatal signal ends that wait, see filter.c), so it
 * cannot run, fork or exec meanwhile. Refuses |o| when that fails. */
static void seize_caller(struct sup_run *r, const struct sup_request *rq, struct sup_proc *p,
			 bool covers_next, struct sup_outcome *o)
{
	int src = sup_trace_seize(r, p, covers_next);
	if (src < 0) {
		o->allow = false;
		o->reason = "warden could not attach to it to check the exec";
		o->err = src == -ESRCH ? ESRCH : EPERM;
		wd_warn("pid %d: PTRACE_SEIZE: %s", rq->pid, strerror(-src));
	}
}

/* Writes |rq|'s audit row; returns its id (0 when it could not be written,
 * which refuses |o|). */
static int64_t write_row(struct sup_run *r, const struct sup_request *rq, struct sup_proc *p,
			 const struct sup_proc *covering, struct sup_outcome *o)
{
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
		.decision = o->allow ? "allow" : "deny",
		.source = pol_source_name(o->source),
		.reason = o->reason,
		.decided_by = o->decided_by,
		.note = o->note,
		.tool_call = covering ? covering->tool_call : 0,
		.latency_us = (t_dec - rq->t_recv_ns) / 1000,
		.judge = rq->judge_json,
	};
	int64_t t_row = wd_now_mono_ns();
	int rc = sup_audit_flush(r, &row);
	/* The first exec of an agent's child is the tool call the rest of its
	 * tree is attributed to. */
	if (rc == 0 && p && !p->startup && p->tool_call == 0 && sup_kind_ops(rq->kind)->traced &&
	    !o->not_a_call)
		p->tool_call = row.id;
	r->stats.rows++;
	r->stats.rows_ns += wd_now_mono_ns() - t_row;
	free(json);
	if (rc < 0) {
		r->audit_failures++;
		wd_err("the audit row for \"%s\" could not be written (%s): refused", rq->summary,
		       strerror(-rc));
		if (o->allow) {
			o->allow = false;
			o->reason = "the audit could not be written, so nothing may run";
		}
	}
	return row.id;
}

/* What the caller of |rq| is told it asked for: its summary, quoted, or
 * the kind's own words (rq->told). Caller frees. */
static char *told(const struct sup_request *rq)
{
	return rq->told ? wd_strdup(rq->told) : wd_asprintf("\"%s\"", rq->summary);
}

/* Answers the refused |rq|, audited as row |row_id|, and frees it. */
static void answer_refusal(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
			   const struct sup_outcome *o, int64_t row_id)
{
	if (p && rq->ev) {
		p->refused_digest = rq->ev->digest;
		p->refused_row = row_id;
		p->refused_at_ns = wd_now_mono_ns();
	}
	/* A view caller that could not be named (tgid 0) is not told: never
	 * write to a pid that is not the one that asked. */
	const struct sup_kind_ops *k = sup_kind_ops(rq->kind);
	if (rq->tgid > 0) {
		wd_autofree char *what = told(rq);
		if (o->source == POL_SRC_USER)
			sup_tell(r, rq->tgid, "refused by %s: %s (%s%s)", o->decided_by,
				 o->note ? o->note : "no note", k->told_as, what);
		else
			sup_tell(r, rq->tgid, "refused %s%s: %s", k->told_as, what, o->reason);
	}
	k->refuse(r, rq, p, o->err ? o->err : EACCES);
	request_free(rq);
}

void sup_exec_refuse(struct sup_run *r, struct sup_request *rq, struct sup_proc *p, int err)
{
	sbx_notify_deny(r->child.notify_fd, rq->ev->id, err);
	sup_proc_keep_untraced(r, p); /* for the retry (answer_refusal) */
}

/* Lets the allowed exec |rq| (audited as row |row_id|) go on. */
void sup_exec_allow(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
		    const struct sup_outcome *o, bool covers_next, int64_t row_id)
{
	/* Record what was decided before answering: the exec event, handled
	 * later on this same thread, checks the new image against it. */
	struct sbx_exec_event *ev = wd_steal_pointer(&rq->ev);
	uint64_t id = ev->id;
	sbx_exec_event_free(p->decided);
	p->decided = ev;
	p->decided_row = row_id;
	p->next_cover = covers_next ? (o->source == POL_SRC_COVERED ? p->cover : row_id) : 0;
	if (sbx_notify_allow(r->child.notify_fd, id) < 0) {
		sbx_exec_event_free(p->decided); /* the caller is gone */
		p->decided = NULL;
	}
}

/*
 * Audits and answers |rq|, then frees it. The row is committed before the
 * answer; if it cannot be, the request is refused (fail closed).
 */
void sup_finish(struct sup_run *r, struct sup_request *rq, struct sup_outcome o)
{
	const struct sup_kind_ops *k = sup_kind_ops(rq->kind);
	struct sup_proc *p = k->traced ? sup_proc_get(r, rq->pid) : NULL;
	if (k->traced && !p)
		p = sup_proc_adopt(r, rq->pid, 0, 0);
	struct sup_proc *covering = p ? p : sup_proc_get(r, rq->pid);
	/* The cover once the exec has happened: the decision's own row when it
	 * covers (set below, once the row exists), the caller's cover for a
	 * covered command, else nothing. */
	bool covers_next = k->traced && o.allow && o.covers;
	/* The agent's own process covers nothing: were it to, everything it
	 * starts afterwards (every tool call) would go undecided. */
	if (p && p->tgid == r->child.pid)
		covers_next = false;
	if (k->traced && o.allow)
		seize_caller(r, rq, p, covers_next, &o);
	int64_t row_id = write_row(r, rq, p, covering, &o);
	sup_stats_add(&r->stats, o.source, wd_now_mono_ns() - rq->t_recv_ns);
	sup_judge_record(r, rq, o.allow, o.source, o.decided_by,
			 o.note			    ? o.note
			 : o.source == POL_SRC_TIER ? o.reason
						    : NULL);
	wd_debug("%s %s: %s (%s: %s)", o.allow ? "allowed" : "refused", k->verb(rq), rq->summary,
		 pol_source_name(o.source), o.reason);
	if (!o.allow) {
		answer_refusal(r, rq, p, &o, row_id);
		return;
	}
	/* A person's approval is told, with or without a note: the agent
	 * knows a person saw what it asked. */
	if (o.note && *o.note && rq->tgid > 0)
		sup_tell(r, rq->tgid, "approved by %s with note: %s", o.decided_by, o.note);
	else if (rq->tgid > 0 && o.source == POL_SRC_USER) {
		wd_autofree char *what = told(rq);
		sup_tell(r, rq->tgid, "approved by %s (%s%s)", o.decided_by, k->told_as, what);
	}
	k->allow(r, rq, p, &o, covers_next, row_id);
	request_free(rq);
}

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
		return also ? sto_append(r->db, also, NULL) : 0;
	}
	size_t n = r->nmisses;
	struct sto_row *rows = wd_calloc(n + 1, sizeof(*rows));
	memcpy(rows, r->misses, n * sizeof(*rows));
	if (also)
		rows[n++] = *also;
	int rc = sto_append_batch(r->db, rows, n, NULL);
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

void sup_finish_warden(struct sup_run *r, struct sup_request *rq, bool allow,
		       enum pol_source source, const char *reason)
{
	sup_finish(r, rq,
		   (struct sup_outcome){.allow = allow,
					.source = source,
					.reason = reason,
					.decided_by = "warden"});
}
