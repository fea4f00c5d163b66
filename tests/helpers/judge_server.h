/*
 * judge_server: a real HTTP/1.1 server for the judge's tests, in a thread of
 * the test process, listening on 127.0.0.1 at an ephemeral port. It speaks
 * just enough of both APIs: a request to a path ending in /v1/messages gets
 * an Anthropic envelope, any other an OpenAI chat-completions one. It records
 * every request (path, headers, body) and answers from a queue of scripted
 * replies, one per request; an empty queue answers HTTP 500.
 *
 * It only ever accepts connections on the loopback address and never opens
 * one, so a test using it sends no traffic beyond 127.0.0.1.
 */
#ifndef WARDEN_TEST_JUDGE_SERVER_H
#define WARDEN_TEST_JUDGE_SERVER_H

#include <stddef.h>
#include <stdint.h>

enum js_mode {
	JS_NORMAL,   /* status + body */
	JS_SLOW,     /* wait delay_ms (or until stopped), then answer normally */
	JS_HUGE,     /* 10 MB of body with no Content-Length, until the peer goes */
	JS_HUGE_LEN, /* announces Content-Length: 10 MB, then sends it */
	JS_DROP,     /* announces 1000 bytes, sends 100, closes */
};

struct js_reply {
	enum js_mode mode;
	int status;	     /* 0: 200 */
	const char *content; /* the model's text, wrapped in the API's envelope */
	const char *raw;     /* or the exact body (wins over content) */
	int delay_ms;	     /* JS_SLOW */
	int64_t prompt_tokens, completion_tokens, cached_tokens;
};

struct js_server;

/* Starts the server; NULL with errno on failure. Free with js_stop(). */
struct js_server *js_start(void);
void js_stop(struct js_server *s);
int js_port(const struct js_server *s);
/* "http://127.0.0.1:PORT" + |path|. Caller frees. */
char *js_url(const struct js_server *s, const char *path);

/* Queues one reply (copied). */
void js_push(struct js_server *s, const struct js_reply *r);
/* Forgets the recorded requests and the queued replies. */
void js_reset(struct js_server *s);

/* The number of requests received so far (complete or not). */
size_t js_count(struct js_server *s);
/* Copies of request |i|'s body, path and raw header block (any may be NULL
 * when not wanted). Caller frees each. -1 when there is no request |i|. */
int js_request(struct js_server *s, size_t i, char **body, char **path, char **headers);

#endif
