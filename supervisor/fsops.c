/*
 * fsops.c: the supervisor's side of the name-changing calls the filter
 * traps with the split view (rename, link, symlink, unlink, rmdir,
 * truncate and their *at forms; sandbox/emul.c decodes and performs them
 * and says why that cannot be raced).
 *
 * The notification loop decodes a call (reads its names once, takes the
 * caller's directories) and hands it here; it goes to the emulation's
 * workers, which make it as the agent and answer. The loop never waits for
 * a worker: a call that waits (on the FUSE view's decision for a sensitive
 * name, which the loop itself answers) holds only its worker. Memory is
 * bounded: the workers are a fixed pool, and the queue in front of them has
 * a fixed size; a call past it fails with ENOMEM.
 */
#include "sup.h"

#include <errno.h>
#include <string.h>

/* The project view's mkdir hook: queued for the binder, never waited for
 * (the view's request is still open). */
static void made_dir(void *arg, const char *path, dev_t dev, ino_t ino)
{
	sbx_emul_made_dir(arg, path, dev, ino);
}

int sup_fs_start(struct sup_run *r, char *const *writable)
{
	if (!r->fs_trap)
		return 0;
	/* A call touching a fast subtree is decided by the view's callback,
	 * as the view decides the same call in its own part: one queue of
	 * decisions, one audit, one way of telling. */
	struct sbx_emul_config c = {
		.notify_fd = r->child.notify_fd,
		.agent_pid = r->child.pid,
		.root_fd = r->child.root_fd,
		.writable = writable,
		.fast = r->child.fast,
		.nfast = r->child.nfast,
		.project = r->opts.project,
		.policy = r->config,
		.view = r->view,
		/* The view's queue runs only with a view; fast subtrees
		 * exist only with one (without, nothing is fast). */
		.decide = r->view ? sup_view_decide : NULL,
		.decide_arg = r,
		/* Taken (run.c made it; -1 for review runs). */
		.backing_fd = r->emul_backing_fd,
		/* Directories the view makes become fast subtrees. */
		.fan = r->fan,
		.split_keep = (const char *const *)r->split_keep,
	};
	r->emul_backing_fd = -1;
	int rc = sbx_emul_start(&c, &r->emul);
	if (rc < 0)
		wd_err("the emulation of the agent's renames, links and removals could not start: "
		       "%s",
		       strerror(-rc));
	else if (r->view && r->fan)
		sbx_view_on_made_dir(r->view, made_dir, r->emul);
	return rc;
}

void sup_fs_on_notify(struct sup_run *r, struct sbx_fs_event *ev)
{
	if (!r->emul) {
		/* Fail closed: nothing performs it, nothing continues it. */
		sbx_notify_answer(r->child.notify_fd, ev->id, -ENOSYS);
		sbx_fs_event_free(ev);
		return;
	}
	(void)sbx_emul_submit(r->emul, ev);
}

void sup_fs_stop_binding(struct sup_run *r)
{
	if (r->view)
		sbx_view_on_made_dir(r->view, NULL, NULL);
	sbx_emul_stop_binding(r->emul);
}

void sup_fs_stop(struct sup_run *r)
{
	sbx_emul_stop(r->emul);
	r->emul = NULL;
}

void sup_fs_print_stats(const struct sup_run *r, FILE *out)
{
	if (!r->emul)
		return;
	struct sbx_emul_counts c;
	sbx_emul_counts(r->emul, &c);
	fprintf(out,
		"  emulated name changes: %llu performed, %llu failed as the agent's own would, "
		"%llu refused for lack of room, %llu in fast subtrees decided\n",
		(unsigned long long)c.performed, (unsigned long long)c.failed,
		(unsigned long long)c.overflow, (unsigned long long)c.decided);
	if (r->fan)
		fprintf(out,
			"  split view: fast subtrees bound during the session: %llu, failed: "
			"%llu\n",
			(unsigned long long)c.bound, (unsigned long long)c.bind_failed);
}
