/*
 * client.c: the judge's HTTP client on libcurl's multi interface, driven by
 * the caller's event loop through two hooks (curl's socket and timer
 * callbacks) and two entry points (jdg_on_fd, jdg_on_timer). Nothing here
 * blocks: a slow model delays only its own request.
 *
 * Each request is one easy handle, re-added once to the multi handle after
 * a failed attempt (the retry). Its callback is called exactly once, after
 * the last attempt, unless it is cancelled first. Every failure becomes
 * JDG_ESCALATE (fail closed).
 *
 * The API key lives in the client (wiped when freed) and in the header
 * list of each request; curl's verbose mode is never switched on and no
 * error text includes headers, so the key is never logged.
 */
#include "judge.h"
#include "judge_int.h"

#include "common.h"

#include <curl/curl.h>
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#define DEFAULT_CONNECT_MS 3000
#define DEFAULT_TIMEOUT_MS 15000
#define DEFAULT_MAX_BODY   (1024 * 1024)
#define VERDICT_AUDIT_MAX  4096 /* bytes of the model's text kept for the audit */

struct jdg_req {
	struct jdg_client *c;
	struct jdg_req *next;
	uint64_t id;
	CURL *easy;
	struct curl_slist *hdrs;
	char *body;
	struct wd_sb resp;
	bool too_big;
	int attempts;
	int64_t t0_ns;
	jdg_done_fn cb;
	void *arg;
	char errbuf[CURL_ERROR_SIZE];
};

struct jdg_client {
	CURLM *multi;
	char *url, *model, *key;
	enum jdg_api api;
	long connect_ms, timeout_ms;
	size_t max_body;
	int retries;
	jdg_watch_fn watch_fd;
	jdg_timer_fn set_timer;
	void *hook_arg;
	struct jdg_req *reqs;
	size_t nreqs;
	uint64_t next_id;
};

/* ---- curl's callbacks ---------------------------------------------------- */

static int sock_cb(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
	(void)e;
	(void)socketp;
	struct jdg_client *c = userp;
	uint32_t ev = 0;
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		ev |= EPOLLIN;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		ev |= EPOLLOUT;
	if (c->watch_fd)
		c->watch_fd(c->hook_arg, s, what == CURL_POLL_REMOVE ? 0 : ev);
	return 0;
}

static int timer_cb(CURLM *m, long ms, void *userp)
{
	(void)m;
	struct jdg_client *c = userp;
	if (c->set_timer)
		c->set_timer(c->hook_arg, ms);
	return 0;
}

static size_t write_cb(char *p, size_t size, size_t nmemb, void *userp)
{
	struct jdg_req *q = userp;
	size_t n = size * nmemb;
	/* A body over the cap is cut off here: returning short makes curl
	 * fail the transfer with CURLE_WRITE_ERROR. */
	if (q->resp.len + n > q->c->max_body) {
		q->too_big = true;
		return 0;
	}
	wd_sb_add(&q->resp, p, n);
	return n;
}

/* ---- the client -------------------------------------------------------- */

int jdg_client_new(const struct jdg_config *cfg, struct jdg_client **out)
{
	*out = NULL;
	if (!cfg || !cfg->url || !*cfg->url || !cfg->model || !*cfg->model)
		return -EINVAL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -ENOMEM;
	struct jdg_client *c = wd_calloc(1, sizeof(*c));
	c->multi = curl_multi_init();
	if (!c->multi) {
		free(c);
		curl_global_cleanup();
		return -ENOMEM;
	}
	c->url = wd_strdup(cfg->url);
	c->model = wd_strdup(cfg->model);
	c->key = cfg->api_key && *cfg->api_key ? wd_strdup(cfg->api_key) : NULL;
	c->api = cfg->api == JDG_API_AUTO ? jdg_api_detect(cfg->url) : cfg->api;
	c->connect_ms = cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : DEFAULT_CONNECT_MS;
	c->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
	c->max_body = cfg->max_response_bytes ? cfg->max_response_bytes : DEFAULT_MAX_BODY;
	c->retries = cfg->retries == 0 ? 1 : cfg->retries < 0 ? 0 : cfg->retries;
	c->watch_fd = cfg->watch_fd;
	c->set_timer = cfg->set_timer;
	c->hook_arg = cfg->hook_arg;
	c->next_id = 1;
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	*out = c;
	return 0;
}

enum jdg_api jdg_client_api(const struct jdg_client *c)
{
	return c->api;
}

size_t jdg_pending(const struct jdg_client *c)
{
	return c->nreqs;
}

static void req_free(struct jdg_req *q)
{
	if (q->easy) {
		curl_multi_remove_handle(q->c->multi, q->easy);
		curl_easy_cleanup(q->easy);
	}
	/* The header list holds the key: wipe it before freeing. */
	for (struct curl_slist *h = q->hdrs; h; h = h->next)
		explicit_bzero(h->data, strlen(h->data));
	curl_slist_free_all(q->hdrs);
	free(q->body);
	wd_sb_free(&q->resp);
	free(q);
}

static void req_unlink(struct jdg_req *q)
{
	for (struct jdg_req **pp = &q->c->reqs; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			q->c->nreqs--;
			return;
		}
	}
}

void jdg_client_free(struct jdg_client *c)
{
	if (!c)
		return;
	while (c->reqs) {
		struct jdg_req *q = c->reqs;
		req_unlink(q);
		req_free(q);
	}
	curl_multi_cleanup(c->multi);
	if (c->set_timer)
		c->set_timer(c->hook_arg, -1);
	if (c->key) {
		explicit_bzero(c->key, strlen(c->key));
		free(c->key);
	}
	free(c->url);
	free(c->model);
	free(c);
	curl_global_cleanup();
}

static struct curl_slist *headers(const struct jdg_client *c)
{
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json");
	h = curl_slist_append(h, "Expect:"); /* no 100-continue round trip */
	char *line = NULL;
	if (c->api == JDG_API_ANTHROPIC) {
		h = curl_slist_append(h, "anthropic-version: 2023-06-01");
		if (c->key)
			line = wd_asprintf("x-api-key: %s", c->key);
	} else if (c->key) {
		line = wd_asprintf("Authorization: Bearer %s", c->key);
	}
	if (line) {
		h = curl_slist_append(h, line);
		explicit_bzero(line, strlen(line));
		free(line);
	}
	return h;
}

static CURL *easy_new(struct jdg_req *q)
{
	const struct jdg_client *c = q->c;
	CURL *e = curl_easy_init();
	if (!e)
		return NULL;
	CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                                              \
	do {                                                                                       \
		if (rc == CURLE_OK)                                                                \
			rc = curl_easy_setopt(e, opt, val);                                        \
	} while (0)
	SET(CURLOPT_URL, c->url);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_NOPROXY, "localhost,127.0.0.1,::1"); /* loopback is never proxied */
	SET(CURLOPT_HTTPHEADER, q->hdrs);
	SET(CURLOPT_POSTFIELDS, q->body);
	SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(q->body));
	SET(CURLOPT_USERAGENT, "warden-judge/1");
	SET(CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
	SET(CURLOPT_TIMEOUT_MS, c->timeout_ms);
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->max_body);
	SET(CURLOPT_WRITEFUNCTION, write_cb);
	SET(CURLOPT_WRITEDATA, q);
	SET(CURLOPT_ERRORBUFFER, q->errbuf);
	SET(CURLOPT_PRIVATE, q);
#undef SET
	if (rc != CURLE_OK) {
		curl_easy_cleanup(e);
		return NULL;
	}
	return e;
}

static int start_attempt(struct jdg_req *q)
{
	wd_sb_free(&q->resp);
	q->too_big = false;
	q->errbuf[0] = '\0';
	q->attempts++;
	return curl_multi_add_handle(q->c->multi, q->easy) == CURLM_OK ? 0 : -ENOMEM;
}

int jdg_submit(struct jdg_client *c, const char *prefix, const char *message, jdg_done_fn cb,
	       void *arg, uint64_t *req_id)
{
	if (!c || !cb || !c->watch_fd || !c->set_timer)
		return -EINVAL;
	struct jdg_req *q = wd_calloc(1, sizeof(*q));
	q->c = c;
	q->cb = cb;
	q->arg = arg;
	q->body = jdg_body_build(c->api, c->model, prefix ? prefix : "", message ? message : "");
	q->hdrs = headers(c);
	if (!q->body || !q->hdrs || !(q->easy = easy_new(q))) {
		req_free(q);
		return -ENOMEM;
	}
	q->id = c->next_id++;
	q->t0_ns = wd_now_mono_ns();
	q->next = c->reqs;
	c->reqs = q;
	c->nreqs++;
	int rc = start_attempt(q);
	if (rc < 0) {
		req_unlink(q);
		req_free(q);
		return rc;
	}
	if (req_id)
		*req_id = q->id;
	return 0;
}

int jdg_cancel(struct jdg_client *c, uint64_t req_id)
{
	for (struct jdg_req *q = c->reqs; q; q = q->next) {
		if (q->id == req_id) {
			req_unlink(q);
			req_free(q);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- finishing a request ------------------------------------------------- */

struct attempt {
	bool ok;
	bool retryable;
	long status;
	char *content;
	struct jdg_verdict v;
	struct jdg_usage usage;
	char error[256];
};

/* Judges one finished transfer of |q|: transport, status, envelope,
 * verdict. Fills |a| (a->content is the caller's to free). */
static void attempt_result(struct jdg_req *q, CURLcode code, struct attempt *a)
{
	const struct jdg_client *c = q->c;
	memset(a, 0, sizeof(*a));
	a->usage.prompt_tokens = a->usage.completion_tokens = a->usage.cached_tokens = -1;
	a->retryable = true;
	curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &a->status);
	if (q->too_big || code == CURLE_FILESIZE_EXCEEDED) {
		snprintf(a->error, sizeof(a->error), "the response was larger than %zu bytes",
			 c->max_body);
		return;
	}
	if (code == CURLE_OPERATION_TIMEDOUT) {
		snprintf(a->error, sizeof(a->error), "no answer within %ld ms", c->timeout_ms);
		return;
	}
	if (code != CURLE_OK) {
		snprintf(a->error, sizeof(a->error), "%s",
			 q->errbuf[0] ? q->errbuf : curl_easy_strerror(code));
		return;
	}
	if (a->status < 200 || a->status > 299) {
		snprintf(a->error, sizeof(a->error), "the server answered HTTP %ld", a->status);
		/* A client error other than a timeout or a rate limit will
		 * not change on a second try. */
		a->retryable =
			a->status >= 500 || a->status == 408 || a->status == 429 || a->status < 200;
		return;
	}
	wd_autofree char *err = NULL;
	if (jdg_envelope_parse(c->api, q->resp.buf, q->resp.len, &a->content, &a->usage, &err) <
	    0) {
		snprintf(a->error, sizeof(a->error), "unusable response: %s", err);
		return;
	}
	if (jdg_verdict_parse(a->content, strlen(a->content), &a->v, &err) < 0) {
		snprintf(a->error, sizeof(a->error), "unusable verdict: %s", err);
		return;
	}
	a->ok = true;
}

static void finish(struct jdg_req *q, struct attempt *a)
{
	struct jdg_result res = {
		.ok = a->ok,
		.outcome = a->ok ? jdg_verdict_outcome(&a->v) : JDG_ESCALATE,
		.decision = a->ok ? a->v.decision : JDG_DECISION_ESCALATE,
		.risk = a->ok ? a->v.risk : JDG_RISK_LOW,
		.http_status = a->status,
		.usage = a->usage,
		.latency_us = (wd_now_mono_ns() - q->t0_ns) / 1000,
		.attempts = q->attempts,
		.req_id = q->id,
	};
	char reason[400];
	if (a->ok) {
		res.reason = a->v.reason;
	} else {
		snprintf(reason, sizeof(reason), "the judge could not decide: %s", a->error);
		res.reason = reason;
		res.error = a->error;
	}
	if (a->content && strlen(a->content) > VERDICT_AUDIT_MAX) {
		size_t n = VERDICT_AUDIT_MAX;
		while (n > 0 && ((unsigned char)a->content[n] & 0xc0) == 0x80)
			n--;
		a->content[n] = '\0';
	}
	res.verdict = a->content;
	q->cb(q->arg, &res);
}

static void check_done(struct jdg_client *c)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(c->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		CURL *e = m->easy_handle;
		CURLcode code = m->data.result;
		struct jdg_req *q = NULL;
		curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&q);
		if (!q)
			continue;
		struct attempt a;
		attempt_result(q, code, &a);
		curl_multi_remove_handle(c->multi, e);
		if (!a.ok && a.retryable && q->attempts <= c->retries && start_attempt(q) == 0) {
			free(a.content);
			continue;
		}
		/* Unlinked before the callback, so that a jdg_cancel() of
		 * this id from inside it finds nothing. */
		req_unlink(q);
		finish(q, &a);
		free(a.content);
		req_free(q);
	}
}

void jdg_on_fd(struct jdg_client *c, int fd, uint32_t epoll_events)
{
	int flags = 0, running = 0;
	if (epoll_events & EPOLLIN)
		flags |= CURL_CSELECT_IN;
	if (epoll_events & EPOLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (epoll_events & (EPOLLERR | EPOLLHUP))
		flags |= CURL_CSELECT_ERR;
	curl_multi_socket_action(c->multi, fd, flags, &running);
	check_done(c);
}

void jdg_on_timer(struct jdg_client *c)
{
	int running = 0;
	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(c);
}
