/*
 * sync.c: jdg_decide_sync(), a blocking call for tools and tests on the
 * same multi code as the supervisor's path. It runs its own small epoll
 * loop, which is also the reference for how a caller drives the client:
 * watch_fd → epoll_ctl, set_timer → a deadline, ready fds → jdg_on_fd(),
 * an expired deadline → jdg_on_timer().
 */
#include "judge.h"

#include "common.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

struct sync_loop {
	int epfd;
	int64_t deadline_ns; /* -1: no timer */
	bool done;
	struct jdg_result *out;
};

static void sync_watch(void *arg, int fd, uint32_t events)
{
	struct sync_loop *l = arg;
	if (!events) {
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
		return;
	}
	struct epoll_event ev = {.events = events, .data.fd = fd};
	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 && errno == ENOENT)
		epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void sync_timer(void *arg, long ms)
{
	struct sync_loop *l = arg;
	l->deadline_ns = ms < 0 ? -1 : wd_now_mono_ns() + (int64_t)ms * 1000000;
}

static void sync_done(void *arg, const struct jdg_result *res)
{
	struct sync_loop *l = arg;
	jdg_result_dup(res, l->out);
	l->done = true;
}

static int wait_ms(const struct sync_loop *l)
{
	if (l->deadline_ns < 0)
		return 1000; /* curl always keeps a timer while busy; this is a guard */
	int64_t left = l->deadline_ns - wd_now_mono_ns();
	if (left <= 0)
		return 0;
	return (int)((left + 999999) / 1000000);
}

static void start_failure(struct jdg_result *out, int rc)
{
	memset(out, 0, sizeof(*out));
	out->outcome = JDG_ESCALATE;
	out->decision = JDG_DECISION_ESCALATE;
	out->reason = wd_asprintf(
		"the judge could not decide: the request could not be started (%s)", strerror(-rc));
	out->error = wd_strdup(strerror(-rc));
}

int jdg_decide_sync(const struct jdg_config *cfg, const char *prefix, const char *message,
		    struct jdg_result *out)
{
	struct sync_loop l = {.epfd = -1, .deadline_ns = -1, .out = out};
	struct jdg_config c = *cfg;
	c.watch_fd = sync_watch;
	c.set_timer = sync_timer;
	c.hook_arg = &l;
	int rc = 0;
	l.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l.epfd < 0) {
		rc = -errno;
		start_failure(out, rc);
		return rc;
	}
	struct jdg_client *cl = NULL;
	rc = jdg_client_new(&c, &cl);
	if (rc < 0) {
		start_failure(out, rc);
		goto close_ep;
	}
	rc = jdg_submit(cl, prefix, message, sync_done, &l, NULL);
	if (rc < 0) {
		start_failure(out, rc);
		goto free_client;
	}
	while (!l.done) {
		struct epoll_event evs[8];
		int n = epoll_wait(l.epfd, evs, (int)WD_ARRAY_SIZE(evs), wait_ms(&l));
		if (n < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		for (int i = 0; i < n && !l.done; i++)
			jdg_on_fd(cl, evs[i].data.fd, evs[i].events);
		if (!l.done && l.deadline_ns >= 0 && wd_now_mono_ns() >= l.deadline_ns) {
			l.deadline_ns = -1;
			jdg_on_timer(cl);
		}
	}
	if (!l.done)
		start_failure(out, rc);
free_client:
	jdg_client_free(cl);
close_ep:
	close(l.epfd);
	return rc;
}
