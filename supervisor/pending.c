/*
 * pending.c: the requests that wait for a person: the table the desk and
 * the terminal show, their answers (and project grants), their deadlines.
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#define NOTE_DEADLINE "no decision before the deadline"

static void pending_unlink(struct sup_run *r, struct sup_pending *p)
{
	for (struct sup_pending **pp = &r->pending; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	sup_tty_forget(r, p);
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
		sup_tty_enqueue(r, p);
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
	mkdir(dir, 0700); /* as warden run makes it (project.c) */
	int64_t now = wd_now_real_us();
	int rc = sup_grant_write(path, req, who, now, shown, &err);
	if (rc == 0)
		rc = pol_config_add_grant(r->config, req, who, now);
	else
		wd_warn("%s", err ? err : strerror(-rc));
	return rc;
}

int sup_pending_answer(struct sup_run *r, struct sup_pending *p, enum sup_answer a,
		       const char *note, const char *who, char **written, char **err)
{
	pending_unlink(r, p);
	struct sup_request *rq = p->rq, *followers = p->followers;
	free(p);
	sup_judge_person_answered(r);
	const char *n = note && *note ? note : NULL;
	char reason[512];
	int rc = 0;
	struct sup_outcome o = {.source = POL_SRC_USER, .decided_by = who, .note = n};
	switch (a) {
	case SUP_ANSWER_ALWAYS_PROJECT: {
		char *json = NULL;
		rc = write_project_grant(r, rq->req, who, &json);
		if (rc < 0 && err)
			*err = wd_asprintf("the project grant could not be written: %s; approved "
					   "for this session only",
					   strerror(-rc));
		if (rc == 0 && written)
			*written = wd_steal_pointer(&json);
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
	sup_finish(r, rq, o);
	while (followers) {
		struct sup_request *f = followers;
		followers = f->next_follower;
		sup_finish(r, f, o);
	}
	return rc;
}

/* A killed caller leaves an invalid notification behind. */
bool sup_exec_waits(struct sup_run *r, const struct sup_request *rq)
{
	return sbx_notify_id_valid(r->child.notify_fd, rq->ev->id);
}

bool sup_open_waits(struct sup_run *r, const struct sup_request *rq)
{
	(void)r;
	(void)rq;
	return true; /* a view request is answered by its worker either way */
}

/* Whether the caller of a pending request still waits for it. */
static bool caller_waits(struct sup_run *r, const struct sup_request *rq)
{
	return sup_kind_ops(rq->kind)->waits(r, rq);
}

/* Finishes every follower of |p| with |o| and empties the list. */
static void finish_followers(struct sup_run *r, struct sup_pending *p, struct sup_outcome o)
{
	while (p->followers) {
		struct sup_request *f = p->followers;
		p->followers = f->next_follower;
		sup_finish(r, f, o);
	}
}

/* Drops the followers whose caller was killed while waiting. */
static void drop_gone_followers(struct sup_run *r, struct sup_pending *p)
{
	struct sup_outcome gone = {.allow = false,
				   .source = POL_SRC_STOPPED,
				   .reason = "the process stopped waiting (killed)",
				   .decided_by = "warden"};
	for (struct sup_request **fp = &p->followers; *fp;) {
		struct sup_request *f = *fp;
		if (caller_waits(r, f)) {
			fp = &f->next_follower;
			continue;
		}
		*fp = f->next_follower;
		sup_finish(r, f, gone);
	}
}

int sup_pending_expire(struct sup_run *r)
{
	int64_t now = wd_now_mono_ns(), next = -1;
	struct sup_outcome gone = {.allow = false,
				   .source = POL_SRC_STOPPED,
				   .reason = "the process stopped waiting (killed)",
				   .decided_by = "warden"};
	struct sup_outcome late = {.allow = false,
				   .source = POL_SRC_TIMEOUT,
				   .reason = NOTE_DEADLINE,
				   .decided_by = "warden"};
	struct sup_pending *p = r->pending;
	while (p) {
		struct sup_pending *nx = p->next;
		drop_gone_followers(r, p);
		if (p->deadline_ns <= now) {
			pending_unlink(r, p);
			sup_finish(r, p->rq, late);
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
			sup_finish(r, old, gone);
		} else if (next < 0 || p->deadline_ns - now < next) {
			next = p->deadline_ns - now;
		}
		p = nx;
	}
	return next < 0 ? -1 : (int)(next / 1000000 + 1);
}

void sup_pending_refuse_all(struct sup_run *r, const char *why)
{
	struct sup_outcome o = {
		.allow = false, .source = POL_SRC_STOPPED, .reason = why, .decided_by = "warden"};
	while (r->pending) {
		struct sup_pending *p = r->pending;
		pending_unlink(r, p);
		sup_finish(r, p->rq, o);
		finish_followers(r, p, o);
		free(p);
	}
}

void sup_pending_refuse(struct sup_run *r, struct sup_pending *p, const char *why, int err)
{
	struct sup_outcome o = {.allow = false,
				.source = POL_SRC_STOPPED,
				.reason = why,
				.decided_by = "warden",
				.err = err};
	pending_unlink(r, p);
	sup_finish(r, p->rq, o);
	finish_followers(r, p, o);
	free(p);
}
