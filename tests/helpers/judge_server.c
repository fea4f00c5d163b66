/*
 * judge_server.c: see judge_server.h. One acceptor thread; one thread per
 * connection (so a slow reply does not hold up the retry behind it); every
 * connection serves one request and closes.
 */
#include "judge_server.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HUGE_BYTES (10u * 1024 * 1024)
#define MAX_REQ	   (4u * 1024 * 1024)

struct rec {
	char *body, *path, *headers;
};

struct qreply {
	struct js_reply r;
	char *content, *raw;
};

struct js_server {
	int lfd;
	int port;
	int stop_pipe[2];
	pthread_t acceptor;
	pthread_mutex_t mu;
	struct rec *recs;
	size_t nrecs, caprecs;
	struct qreply *q;
	size_t nq, capq, qhead;
	pthread_t *conns;
	size_t nconns, capconns;
};

struct conn {
	struct js_server *s;
	int fd;
};

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static char *xstrndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (!p)
		abort();
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* Waits |ms| or until the server stops. True when stopping. */
static bool wait_or_stop(struct js_server *s, int ms)
{
	struct pollfd p = {.fd = s->stop_pipe[0], .events = POLLIN};
	return poll(&p, 1, ms) > 0;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads one request; returns the buffer (caller frees) and sets the header
 * length and body length, or NULL. */
static char *read_request(int fd, size_t *hlen, size_t *blen)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap + 1);
	if (!buf)
		abort();
	size_t want = 0;
	bool have_head = false;
	for (;;) {
		if (have_head && len >= want)
			break;
		if (len == cap) {
			if (cap >= MAX_REQ)
				goto fail;
			cap *= 2;
			buf = realloc(buf, cap + 1);
			if (!buf)
				abort();
		}
		ssize_t r = recv(fd, buf + len, cap - len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			goto fail;
		len += (size_t)r;
		buf[len] = '\0';
		if (!have_head) {
			char *e = strstr(buf, "\r\n\r\n");
			if (!e)
				continue;
			have_head = true;
			*hlen = (size_t)(e - buf) + 4;
			size_t cl = 0;
			for (char *h = strstr(buf, "\r\n"); h && h < e; h = strstr(h + 2, "\r\n"))
				if (strncasecmp(h + 2, "Content-Length:", 15) == 0)
					cl = strtoul(h + 17, NULL, 10);
			want = *hlen + cl;
		}
	}
	*blen = want - *hlen;
	return buf;
fail:
	free(buf);
	return NULL;
}

static bool pop_locked(struct js_server *s, struct qreply *out);

/* Records the request and takes its reply in one step, so that replies go
 * to requests in the order they arrived. */
static bool record(struct js_server *s, const char *buf, size_t hlen, size_t blen,
		   struct qreply *reply)
{
	const char *sp = strchr(buf, ' ');
	const char *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
	struct rec r = {
		.body = xstrndup(buf + hlen, blen),
		.path = sp && sp2 ? xstrndup(sp + 1, (size_t)(sp2 - sp - 1)) : xstrdup(""),
		.headers = xstrndup(buf, hlen),
	};
	pthread_mutex_lock(&s->mu);
	if (s->nrecs == s->caprecs) {
		s->caprecs = s->caprecs ? s->caprecs * 2 : 16;
		s->recs = realloc(s->recs, s->caprecs * sizeof(*s->recs));
		if (!s->recs)
			abort();
	}
	s->recs[s->nrecs++] = r;
	bool have = pop_locked(s, reply);
	pthread_mutex_unlock(&s->mu);
	return have;
}

static bool pop_locked(struct js_server *s, struct qreply *out)
{
	bool have = s->qhead < s->nq;
	if (have) {
		out->r = s->q[s->qhead].r;
		out->content = xstrdup(s->q[s->qhead].content);
		out->raw = xstrdup(s->q[s->qhead].raw);
		s->qhead++;
	}
	return have;
}

static char *envelope(bool anthropic, const struct qreply *q)
{
	const struct js_reply *r = &q->r;
	cJSON *o = cJSON_CreateObject();
	cJSON *u;
	if (anthropic) {
		cJSON_AddStringToObject(o, "id", "msg_test");
		cJSON_AddStringToObject(o, "type", "message");
		cJSON_AddStringToObject(o, "role", "assistant");
		cJSON *content = cJSON_AddArrayToObject(o, "content");
		cJSON *b = cJSON_CreateObject();
		cJSON_AddStringToObject(b, "type", "text");
		cJSON_AddStringToObject(b, "text", q->content ? q->content : "");
		cJSON_AddItemToArray(content, b);
		cJSON_AddStringToObject(o, "stop_reason", "end_turn");
		u = cJSON_AddObjectToObject(o, "usage");
		cJSON_AddNumberToObject(u, "input_tokens", (double)r->prompt_tokens);
		cJSON_AddNumberToObject(u, "output_tokens", (double)r->completion_tokens);
		cJSON_AddNumberToObject(u, "cache_read_input_tokens", (double)r->cached_tokens);
		cJSON_AddNumberToObject(u, "cache_creation_input_tokens", 0);
	} else {
		cJSON_AddStringToObject(o, "id", "chatcmpl-test");
		cJSON_AddStringToObject(o, "object", "chat.completion");
		cJSON *choices = cJSON_AddArrayToObject(o, "choices");
		cJSON *c0 = cJSON_CreateObject();
		cJSON_AddNumberToObject(c0, "index", 0);
		cJSON *m = cJSON_AddObjectToObject(c0, "message");
		cJSON_AddStringToObject(m, "role", "assistant");
		cJSON_AddStringToObject(m, "content", q->content ? q->content : "");
		cJSON_AddStringToObject(c0, "finish_reason", "stop");
		cJSON_AddItemToArray(choices, c0);
		u = cJSON_AddObjectToObject(o, "usage");
		cJSON_AddNumberToObject(u, "prompt_tokens", (double)r->prompt_tokens);
		cJSON_AddNumberToObject(u, "completion_tokens", (double)r->completion_tokens);
		cJSON_AddNumberToObject(u, "total_tokens",
					(double)(r->prompt_tokens + r->completion_tokens));
		cJSON *d = cJSON_AddObjectToObject(u, "prompt_tokens_details");
		cJSON_AddNumberToObject(d, "cached_tokens", (double)r->cached_tokens);
	}
	char *p = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return p;
}

static void respond(struct js_server *s, int fd, bool anthropic, struct qreply *q)
{
	char head[256];
	int status = q->r.status ? q->r.status : 200;
	static char chunk[65536];
	switch (q->r.mode) {
	case JS_SLOW:
		if (wait_or_stop(s, q->r.delay_ms))
			return;
		break;
	case JS_HUGE:
	case JS_HUGE_LEN:
		if (q->r.mode == JS_HUGE)
			snprintf(head, sizeof(head),
				 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				 "Connection: close\r\n\r\n");
		else
			snprintf(head, sizeof(head),
				 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				 "Content-Length: %u\r\nConnection: close\r\n\r\n",
				 HUGE_BYTES);
		memset(chunk, 'x', sizeof(chunk));
		chunk[0] = '{';
		if (send_all(fd, head, strlen(head)) < 0)
			return;
		for (size_t sent = 0; sent < HUGE_BYTES; sent += sizeof(chunk))
			if (send_all(fd, chunk, sizeof(chunk)) < 0)
				return;
		return;
	case JS_DROP:
		snprintf(head, sizeof(head),
			 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			 "Content-Length: 1000\r\n\r\n{\"choices\":[{\"message\":{\"content\":\"");
		send_all(fd, head, strlen(head));
		return;
	case JS_NORMAL:
	default:
		break;
	}
	char *body = q->raw ? xstrdup(q->raw) : envelope(anthropic, q);
	snprintf(head, sizeof(head),
		 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n",
		 status, strlen(body));
	if (send_all(fd, head, strlen(head)) == 0)
		send_all(fd, body, strlen(body));
	free(body);
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	size_t hlen = 0, blen = 0;
	char *buf = read_request(c->fd, &hlen, &blen);
	if (buf) {
		struct qreply q = {0};
		bool have = record(c->s, buf, hlen, blen, &q);
		const char *sp = strchr(buf, ' ');
		const char *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
		bool anthropic = sp && sp2 && (size_t)(sp2 - sp - 1) >= 12 &&
				 strncmp(sp2 - 12, "/v1/messages", 12) == 0;
		if (!have) {
			q.r.status = 500;
			q.raw = xstrdup("{\"error\":\"no scripted reply\"}");
		}
		respond(c->s, c->fd, anthropic, &q);
		free(q.content);
		free(q.raw);
		free(buf);
	}
	shutdown(c->fd, SHUT_WR);
	close(c->fd);
	free(c);
	return NULL;
}

static void *acceptor_main(void *arg)
{
	struct js_server *s = arg;
	for (;;) {
		struct pollfd p[2] = {{.fd = s->lfd, .events = POLLIN},
				      {.fd = s->stop_pipe[0], .events = POLLIN}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		struct conn *c = malloc(sizeof(*c));
		if (!c)
			abort();
		*c = (struct conn){.s = s, .fd = fd};
		pthread_t t;
		if (pthread_create(&t, NULL, conn_main, c) != 0) {
			close(fd);
			free(c);
			continue;
		}
		pthread_mutex_lock(&s->mu);
		if (s->nconns == s->capconns) {
			s->capconns = s->capconns ? s->capconns * 2 : 16;
			s->conns = realloc(s->conns, s->capconns * sizeof(*s->conns));
			if (!s->conns)
				abort();
		}
		s->conns[s->nconns++] = t;
		pthread_mutex_unlock(&s->mu);
	}
	return NULL;
}

struct js_server *js_start(void)
{
	struct js_server *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_mutex_init(&s->mu, NULL);
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* loopback only */
	socklen_t al = sizeof(a);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s->lfd, 64) < 0 || getsockname(s->lfd, (struct sockaddr *)&a, &al) < 0 ||
	    pipe2(s->stop_pipe, O_CLOEXEC) < 0)
		goto fail;
	s->port = ntohs(a.sin_port);
	if (pthread_create(&s->acceptor, NULL, acceptor_main, s) != 0)
		goto fail;
	return s;
fail:
	if (s->lfd >= 0)
		close(s->lfd);
	free(s);
	return NULL;
}

void js_reset(struct js_server *s)
{
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->nrecs; i++) {
		free(s->recs[i].body);
		free(s->recs[i].path);
		free(s->recs[i].headers);
	}
	s->nrecs = 0;
	for (size_t i = 0; i < s->nq; i++) {
		free(s->q[i].content);
		free(s->q[i].raw);
	}
	s->nq = s->qhead = 0;
	pthread_mutex_unlock(&s->mu);
}

void js_stop(struct js_server *s)
{
	if (!s)
		return;
	(void)!write(s->stop_pipe[1], "x", 1);
	pthread_join(s->acceptor, NULL);
	for (size_t i = 0; i < s->nconns; i++)
		pthread_join(s->conns[i], NULL);
	js_reset(s);
	free(s->recs);
	free(s->q);
	free(s->conns);
	close(s->lfd);
	close(s->stop_pipe[0]);
	close(s->stop_pipe[1]);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int js_port(const struct js_server *s)
{
	return s->port;
}

char *js_url(const struct js_server *s, const char *path)
{
	char *u = NULL;
	if (asprintf(&u, "http://127.0.0.1:%d%s", s->port, path ? path : "") < 0)
		abort();
	return u;
}

void js_push(struct js_server *s, const struct js_reply *r)
{
	pthread_mutex_lock(&s->mu);
	if (s->nq == s->capq) {
		s->capq = s->capq ? s->capq * 2 : 16;
		s->q = realloc(s->q, s->capq * sizeof(*s->q));
		if (!s->q)
			abort();
	}
	s->q[s->nq++] =
		(struct qreply){.r = *r, .content = xstrdup(r->content), .raw = xstrdup(r->raw)};
	pthread_mutex_unlock(&s->mu);
}

size_t js_count(struct js_server *s)
{
	pthread_mutex_lock(&s->mu);
	size_t n = s->nrecs;
	pthread_mutex_unlock(&s->mu);
	return n;
}

int js_request(struct js_server *s, size_t i, char **body, char **path, char **headers)
{
	pthread_mutex_lock(&s->mu);
	int rc = -1;
	if (i < s->nrecs) {
		if (body)
			*body = xstrdup(s->recs[i].body);
		if (path)
			*path = xstrdup(s->recs[i].path);
		if (headers)
			*headers = xstrdup(s->recs[i].headers);
		rc = 0;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}
