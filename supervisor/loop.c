/*
 * loop.c: the supervisor's one event loop, in the shape of Redis's ae.c: a
 * table from fd to handler over epoll. Handlers never block: a decision that
 * needs a person or a model waits in a table, not in a handler.
 */
#include "sup.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

struct handler {
	int fd;
	sup_fd_fn fn;
	void *arg;
};

struct sup_loop {
	int epfd;
	struct handler *h; /* indexed by fd */
	size_t cap;
};

struct sup_loop *sup_loop_new(void)
{
	struct sup_loop *l = wd_calloc(1, sizeof(*l));
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		int e = errno;
		free(l);
		errno = e;
		return NULL;
	}
	return l;
}

void sup_loop_free(struct sup_loop *l)
{
	if (!l)
		return;
	close(l->epfd);
	free(l->h);
	free(l);
}

int sup_loop_add(struct sup_loop *l, int fd, uint32_t events, sup_fd_fn fn, void *arg)
{
	if (fd < 0)
		return -EBADF;
	if ((size_t)fd >= l->cap) {
		size_t cap = l->cap ? l->cap : 64;
		while (cap <= (size_t)fd)
			cap *= 2;
		l->h = wd_realloc(l->h, cap * sizeof(*l->h));
		memset(l->h + l->cap, 0, (cap - l->cap) * sizeof(*l->h));
		l->cap = cap;
	}
	struct epoll_event ev = {.events = events, .data.fd = fd};
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	l->h[fd] = (struct handler){.fd = fd, .fn = fn, .arg = arg};
	return 0;
}

void sup_loop_del(struct sup_loop *l, int fd)
{
	if (fd < 0 || (size_t)fd >= l->cap || !l->h[fd].fn)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	l->h[fd].fn = NULL;
}

int sup_loop_once(struct sup_loop *l, int timeout_ms)
{
	struct epoll_event evs[32];
	int n = epoll_wait(l->epfd, evs, (int)WD_ARRAY_SIZE(evs), timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		int fd = evs[i].data.fd;
		/* A handler may have removed a later fd of this round. */
		if ((size_t)fd < l->cap && l->h[fd].fn)
			l->h[fd].fn(l, fd, evs[i].events, l->h[fd].arg);
	}
	return n;
}
