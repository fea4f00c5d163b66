/*
 * judging.c: step 4 of the pipeline, the judge, as the supervisor runs it:
 * its configuration (WARDEN_JUDGE_URL, _MODEL, _API_KEY or the config's
 * "judge"), turns whose prompt prefix is built once and reused byte for
 * byte, rules from the people's answers in the audit, this session's
 * history, a per-turn cache (audited as judge_cache), and the HTTP client
 * on curl multi inside the event loop. Any failure escalates.
 * docs/design.md, section "The judge".
 */
#include "sup.h"

#include "judge.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#define HISTORY_MAX 400

struct hist {
	char *summary, *source, *decided_by, *note;
	bool allowed;
};

struct cached {
	char *request; /* the request JSON */
	enum jdg_outcome outcome;
	char *reason;
	char *json; /* the audit's judge column */
};

struct inflight {
	struct inflight *next;
	struct sup_run *r;
	struct sup_request *rq;
	uint64_t id;
	char *request; /* for the cache */
};

struct sup_judge {
	struct jdg_client *client;
	char *model;
	int timer_fd;
	char *prefix;
	bool turn_over;
	int64_t last_request_ns;
	int64_t turn_idle_ns;
	struct hist *hist;
	size_t nhist;
	struct cached *cache;
	size_t ncache;
	struct inflight *inflight;
	uint64_t calls;
};

static void on_curl_fd(struct sup_loop *l, int fd, uint32_t events, void *arg)
{
	(void)l;
	struct sup_run *r = arg;
	jdg_on_fd(r->judge->client, fd, events);
}

static void watch_fd(void *arg, int fd, uint32_t events)
{
	struct sup_run *r = arg;
	sup_loop_del(r->loop, fd); /* the loop has add and del: a new mask is both */
	if (events)
		sup_loop_add(r->loop, fd, events, on_curl_fd, r);
}

static void on_timer(struct sup_loop *l, int fd, uint32_t events, void *arg)
{
	(void)l;
	(void)events;
	struct sup_run *r = arg;
	uint64_t n;
	(void)!read(fd, &n, sizeof(n));
	jdg_on_timer(r->judge->client);
}

static void set_timer(void *arg, long ms)
{
	struct sup_run *r = arg;
	struct itimerspec its = {0};
	if (ms >= 0) {
		/* 0 disarms a timerfd: "now" is one nanosecond. */
		its.it_value.tv_sec = ms / 1000;
		its.it_value.tv_nsec = (ms % 1000) * 1000000L + (ms == 0 ? 1 : 0);
	}
	timerfd_settime(r->judge->timer_fd, 0, &its, NULL);
}

int sup_judge_init(struct sup_run *r)
{
	struct pol_judge_settings js;
	bool have = pol_config_judge(r->config, &js);
	const char *url = getenv("WARDEN_JUDGE_URL");
	const char *model = getenv("WARDEN_JUDGE_MODEL");
	if (!url || !*url)
		url = have ? js.url : NULL;
	if (!model || !*model)
		model = have ? js.model : NULL;
	if (!url || !*url || !model || !*model) {
		wd_info("no judge configured (WARDEN_JUDGE_URL and WARDEN_JUDGE_MODEL): every "
			"undecided request goes to the tier");
		return 0;
	}
	struct sup_judge *j = wd_calloc(1, sizeof(*j));
	j->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	j->turn_idle_ns = r->opts.turn_idle_ms * 1000000LL;
	j->model = wd_strdup(model);
	struct jdg_config cfg = {
		.url = url,
		.model = model,
		.api_key = getenv("WARDEN_JUDGE_API_KEY"),
		.api = JDG_API_AUTO,
		.connect_timeout_ms = have ? js.connect_timeout_ms : 0,
		.timeout_ms = have ? js.timeout_ms : 0,
		.watch_fd = watch_fd,
		.set_timer = set_timer,
		.hook_arg = r,
	};
	r->judge = j;
	int crc = jdg_client_new(&cfg, &j->client);
	if (crc < 0 || j->timer_fd < 0) {
		int e = crc < 0 ? -crc : errno ? errno : EINVAL;
		wd_err("the judge at %s could not be set up: %s", url, strerror(e));
		return -e;
	}
	int rc = sup_loop_add(r->loop, j->timer_fd, EPOLLIN, on_timer, r);
	if (rc < 0)
		return rc;
	wd_info("judge: %s at %s", model, url);
	return 0;
}

static void clear_cache(struct sup_judge *j)
{
	for (size_t i = 0; i < j->ncache; i++) {
		free(j->cache[i].request);
		free(j->cache[i].reason);
		free(j->cache[i].json);
	}
	free(j->cache);
	j->cache = NULL;
	j->ncache = 0;
}

struct rules_acc {
	struct jdg_rule *rules;
	size_t n, cap;
};

static int collect_rule(const struct sto_row *row, void *arg)
{
	struct rules_acc *a = arg;
	bool allow = row->decision && strcmp(row->decision, "allow") == 0;
	bool always = allow && row->reason && strstr(row->reason, "for the rest of the");
	bool noted = row->note && *row->note;
	if (!always && !noted)
		return 0; /* a plain "once" says nothing durable */
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 32;
		a->rules = wd_realloc(a->rules, a->cap * sizeof(*a->rules));
	}
	a->rules[a->n++] = (struct jdg_rule){
		.kind = always	? JDG_RULE_ALWAYS
			: allow ? JDG_RULE_APPROVED_NOTE
				: JDG_RULE_REJECTED_NOTE,
		.action = wd_strdup(row->kind ? row->kind : "exec"),
		.resources = wd_strdup(row->summary ? row->summary : ""),
		.note = noted ? wd_strdup(row->note) : NULL,
		.ts_us = row->ts_us,
	};
	return 0;
}

/* Builds the turn's prefix from the audit (people's replies only). */
static void new_turn(struct sup_run *r)
{
	struct sup_judge *j = r->judge;
	struct rules_acc a = {0};
	const char *sessions[2] = {r->session_id, r->opts.parent};
	for (size_t i = 0; i < 2; i++) {
		if (!sessions[i])
			continue;
		struct sto_filter f = {.session = sessions[i],
				       .source = pol_source_name(POL_SRC_USER)};
		sto_query(r->db, &f, collect_rule, &a, NULL);
	}
	wd_autofree char *argv = wd_argv_join(r->opts.argv);
	/* The judge knows which agent it is (its wrappers, its habits). */
	wd_autofree char *cmd =
		r->opts.agent != POL_HARNESS_NONE
			? wd_asprintf("[%s] %s", pol_harness_name(r->opts.agent), argv)
			: wd_strdup(argv);
	struct jdg_session_info si = {cmd, r->opts.project, r->opts.task};
	free(j->prefix);
	j->prefix = jdg_prefix_build(&si, a.rules, a.n);
	for (size_t i = 0; i < a.n; i++) {
		free((char *)a.rules[i].action);
		free((char *)a.rules[i].resources);
		free((char *)a.rules[i].note);
	}
	free(a.rules);
	clear_cache(j);
	j->turn_over = false;
}

void sup_judge_touch(struct sup_run *r)
{
	struct sup_judge *j = r->judge;
	if (!j)
		return;
	int64_t now = wd_now_mono_ns();
	if (j->last_request_ns && now - j->last_request_ns >= j->turn_idle_ns)
		j->turn_over = true;
	j->last_request_ns = now;
}

void sup_judge_person_answered(struct sup_run *r)
{
	if (r->judge)
		r->judge->turn_over = true;
}

void sup_judge_record(struct sup_run *r, const struct sup_request *rq, bool allowed,
		      enum pol_source source, const char *decided_by, const char *note)
{
	struct sup_judge *j = r->judge;
	if (!j)
		return;
	if (j->nhist == HISTORY_MAX) {
		/* Keep the newest; the message cut keeps head and tail anyway. */
		struct hist *h = &j->hist[0];
		free(h->summary);
		free(h->source);
		free(h->decided_by);
		free(h->note);
		memmove(j->hist, j->hist + 1, (HISTORY_MAX - 1) * sizeof(*j->hist));
		j->nhist--;
	}
	if (!j->hist)
		j->hist = wd_calloc(HISTORY_MAX, sizeof(*j->hist));
	j->hist[j->nhist++] = (struct hist){
		.summary = wd_strdup(rq->summary ? rq->summary : ""),
		.source = wd_strdup(pol_source_name(source)),
		.decided_by = decided_by ? wd_strdup(decided_by) : NULL,
		.note = note ? wd_strdup(note) : NULL,
		.allowed = allowed,
	};
}

static void done(void *arg, const struct jdg_result *res)
{
	struct inflight *f = arg;
	struct sup_run *r = f->r;
	struct sup_judge *j = r->judge;
	for (struct inflight **pp = &j->inflight; *pp; pp = &(*pp)->next)
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	char *json = jdg_result_json(res, j->model);
	if (!pol_request_agent_writable(f->rq->req, NULL)) {
		j->cache = wd_realloc(j->cache, (j->ncache + 1) * sizeof(*j->cache));
		j->cache[j->ncache++] = (struct cached){wd_strdup(f->request), res->outcome,
							wd_strdup(res->reason), wd_strdup(json)};
	}
	sup_judge_verdict(r, f->rq, res->outcome, res->reason, json, POL_SRC_JUDGE);
	free(json);
	free(f->request);
	free(f);
}

bool sup_judge_submit(struct sup_run *r, struct sup_request *rq)
{
	struct sup_judge *j = r->judge;
	if (!j || !j->client)
		return false;
	if (!j->prefix || j->turn_over)
		new_turn(r);
	char *request = pol_request_json(rq->req);
	/* A verdict on a program the agent can have written holds for that
	 * file as it was, not for whatever bears its name next: never from
	 * the cache (and never into it, in on_result). */
	bool writable = pol_request_agent_writable(rq->req, NULL);
	for (size_t i = 0; !writable && i < j->ncache; i++) {
		if (strcmp(j->cache[i].request, request) == 0) {
			free(request);
			sup_judge_verdict(r, rq, j->cache[i].outcome, j->cache[i].reason,
					  j->cache[i].json, POL_SRC_JUDGE_CACHE);
			return true;
		}
	}
	struct jdg_history_entry *h = wd_calloc(j->nhist + 1, sizeof(*h));
	for (size_t i = 0; i < j->nhist; i++)
		h[i] = (struct jdg_history_entry){j->hist[i].summary, j->hist[i].allowed,
						  j->hist[i].source, j->hist[i].decided_by,
						  j->hist[i].note};
	char *msg = jdg_message_build(strlen(j->prefix), h, j->nhist, request, r->opts.project);
	free(h);
	struct inflight *f = wd_calloc(1, sizeof(*f));
	f->r = r;
	f->rq = rq;
	f->request = request;
	int rc = jdg_submit(j->client, j->prefix, msg, done, f, &f->id);
	free(msg);
	if (rc < 0) {
		free(f->request);
		free(f);
		return false; /* the caller escalates */
	}
	j->calls++;
	f->next = j->inflight;
	j->inflight = f;
	return true;
}

void sup_judge_free(struct sup_run *r)
{
	struct sup_judge *j = r->judge;
	if (!j)
		return;
	/* Requests still with the model: refused, never allowed (the caller
	 * set r->stopping, so the escalation refuses whatever the tier). */
	while (j->inflight) {
		struct inflight *f = j->inflight;
		j->inflight = f->next;
		if (j->client)
			jdg_cancel(j->client, f->id);
		sup_judge_verdict(r, f->rq, JDG_ESCALATE,
				  "the session ended before the judge answered", NULL,
				  POL_SRC_JUDGE);
		free(f->request);
		free(f);
	}
	if (j->client)
		jdg_client_free(j->client);
	if (j->timer_fd >= 0) {
		sup_loop_del(r->loop, j->timer_fd);
		close(j->timer_fd);
	}
	for (size_t i = 0; i < j->nhist; i++) {
		free(j->hist[i].summary);
		free(j->hist[i].source);
		free(j->hist[i].decided_by);
		free(j->hist[i].note);
	}
	free(j->hist);
	clear_cache(j);
	free(j->prefix);
	free(j->model);
	free(j);
	r->judge = NULL;
}

uint64_t sup_judge_calls(const struct sup_run *r)
{
	return r->judge ? r->judge->calls : 0;
}
