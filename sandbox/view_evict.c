/*
 * view_evict.c: the project view's evictor, which keeps the descriptors the
 * view holds within its budget.
 */
#include "view_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "policy.h"

/* ---- the evictor ------------------------------------------------------ */

struct victim {
	struct vnode *node;   /* only under lock: it may be forgotten after */
	struct vnode *parent; /* pinned (refs) until the round ends */
	char *name;
	uint64_t used;
};

static int by_use(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;
	return x->used < y->used ? -1 : x->used > y->used;
}

static bool evictable(const struct sbx_view *v, const struct vnode *n)
{
	return n != &v->root && n->nlookup > 0 && n->refs == 0 && !S_ISDIR(n->type) &&
	       n->opens == 0 && !n->sensitive && !n->wprot && !n->control && !n->evicting &&
	       !n->pinned && n->parent && n->name;
}

/* One round under lock: picks the least recently used files, down to seven
 * eighths of the budget, pins their parents and copies their names. */
static size_t pick_victims(struct sbx_view *v, struct victim **out)
{
	size_t low = v->fd_budget - v->fd_budget / 8, want = v->count > low ? v->count - low : 0;
	struct victim *c = NULL;
	size_t n = 0, cap = 0;

	if (want > VIEW_EVICT_BATCH)
		want = VIEW_EVICT_BATCH;
	for (size_t i = 0; want && i < v->table_size; i++)
		for (struct vnode *x = v->table[i]; x; x = x->hnext) {
			if (!evictable(v, x))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				c = wd_realloc(c, cap * sizeof(*c));
			}
			c[n++] = (struct victim){.node = x, .used = x->used};
		}
	qsort(c, n, sizeof(*c), by_use);
	if (n > want)
		n = want;
	for (size_t i = 0; i < n; i++) {
		struct vnode *x = c[i].node;
		x->evicting = true;
		c[i].name = wd_strdup(x->name);
		c[i].parent = x->parent;
		x->parent->refs++;
	}
	*out = c;
	return n;
}

void *sbx_view_evictor_loop(void *arg)
{
	struct sbx_view *v = arg;
	sigset_t mask;

	sigfillset(&mask);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	pthread_mutex_lock(&v->lock);
	while (!v->evict_stop) {
		if (v->count <= v->fd_budget) {
			pthread_cond_wait(&v->evict_cond, &v->lock);
			continue;
		}
		struct victim *c = NULL;
		size_t n = pick_victims(v, &c);
		pthread_mutex_unlock(&v->lock);
		for (size_t i = 0; i < n; i++)
			fuse_lowlevel_notify_inval_entry(v->se, sbx_view_ino(v, c[i].parent),
							 c[i].name, strlen(c[i].name));
		pthread_mutex_lock(&v->lock);
		for (size_t i = 0; i < n; i++) {
			c[i].parent->refs--;
			sbx_view_node_release(v, c[i].parent);
			free(c[i].name);
		}
		free(c);
		v->evicted += n;
		/* The kernel's forgets come asynchronously: give them time
		 * before counting again (and do not spin when everything left
		 * is in use). */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (n ? 20 : 500) * 1000 * 1000L;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (!v->evict_stop)
			pthread_cond_timedwait(&v->evict_cond, &v->lock, &ts);
	}
	pthread_mutex_unlock(&v->lock);
	return NULL;
}

void sbx_view_seal(struct sbx_view *v)
{
	if (v)
		atomic_store(&v->sealed, true);
}

void sbx_view_counts(struct sbx_view *v, size_t *nodes, uint64_t *evicted)
{
	pthread_mutex_lock(&v->lock);
	*nodes = v->count;
	*evicted = v->evicted;
	pthread_mutex_unlock(&v->lock);
}
