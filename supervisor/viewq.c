/*
 * viewq.c: the hand-off between the view's FUSE worker threads and the
 * loop: a worker queues the open it asks about and waits; the loop runs
 * it through the pipeline and wakes the worker with the answer.
 */
#include "sup.h"

#include <errno.h>
#include <string.h>

/* A view request answered already (over the cap), whose row was owed. */
static void free_late(struct sup_view_wait *vw)
{
	free(vw->path);
	free(vw->path2);
	free(vw);
}

/* Answers a view request: the worker thread waiting for it wakes up. */
void sup_view_answer(struct sup_run *r, struct sup_view_wait *vw, int result)
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

void sup_open_allow(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
		    const struct sup_outcome *o, bool covers_next, int64_t row_id)
{
	(void)p;
	(void)o;
	(void)covers_next;
	(void)row_id;
	sup_view_answer(r, rq->vw, 0);
}

void sup_open_refuse(struct sup_run *r, struct sup_request *rq, struct sup_proc *p, int err)
{
	(void)p;
	sup_view_answer(r, rq->vw, -err);
}

/* The agent's machinery is recognised by what it execs: an open is always
 * decided on its own. */
bool sup_open_machinery(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
			bool *startup)
{
	(void)r;
	(void)rq;
	(void)p;
	(void)startup;
	return false;
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
			sup_refuse_unbuilt(r, rq, wd_strdup(vw->path));
			continue;
		}
		rq->summary = pol_request_summary(rq->req);
		if (vw->late)
			sup_finish_warden(r, rq, false, POL_SRC_LIMIT,
					  "the view was saturated by opens waiting on "
					  "warden; refused at once, this row written "
					  "right after the answer");
		else if (vw->over_cap)
			sup_finish_warden(r, rq, false, POL_SRC_LIMIT,
					  "too many opens are already waiting for a "
					  "decision; refused without asking");
		else
			sup_run_pipeline(r, rq, false);
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
