/*
 * judge: the model that decides what policy left undecided (pipeline step
 * 5 in docs/design.md). It builds the prompt, talks to an OpenAI-compatible
 * /v1/chat/completions or an Anthropic /v1/messages endpoint with libcurl's
 * multi interface, and parses the verdict strictly.
 *
 * It knows nothing of the supervisor (no audit, processes, turns or tiers)
 * and never sees the sensitive-marker list, so the markers cannot reach a
 * prompt. Fail closed: every failure yields JDG_ESCALATE, never JDG_ALLOW.
 *
 * Ownership: a returned char * is the caller's to free(); an int is 0 or
 * -errno. How a caller's event loop drives the client is described above
 * jdg_client_new(); sync.c is a complete example.
 */
#ifndef WARDEN_JUDGE_H
#define WARDEN_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/* ---- prompt building (pure: no I/O, no clock) -------------------------- */

/* The cap on the user message: prefix + history + call, in bytes. */
#define JDG_MESSAGE_MAX 8192
/* The cap on the prefix (<session_context> + <user_rules>) alone, so that
 * history and call always keep room. */
#define JDG_PREFIX_MAX 5120
/* At most this many rules reach <user_rules>. */
#define JDG_RULES_MAX 50
/* At most this many characters (code points) of the task. */
#define JDG_TASK_MAX 800

/* The fixed notes of the unattended tiers (pipeline step 6 in
 * docs/design.md), quoted verbatim by the system prompt. */
#define JDG_NOTE_AGGRESSIVE "aggressive mode, auto-approve all escalated tool calls"
#define JDG_NOTE_PASSIVE    "passive mode, reject all escalated tool calls"

/* The judge's part of a request kind (kinds.c; policy's part is in
 * policy/kinds.c, the supervisor's in supervisor/kinds.c). */
struct jdg_kind_ops {
	/* What warden stops of this kind until it is decided, as the system
	 * prompt lists it ("every program the agent is about to run"); the
	 * prompt adds the kind's action name. NULL for a kind never sent to
	 * the judge, and then |not_judged| says why. */
	const char *stops;
	const char *not_judged;
};

/* The entry of |k|, or NULL when |k| is not a kind. */
const struct jdg_kind_ops *jdg_kind_ops(enum pol_kind k);

/* The fixed system prompt. Static storage: never free it. It is the same
 * bytes for every call of every session (it holds no tier, no rule, no
 * path), so a server's prefix cache keeps it across turns. */
const char *jdg_system_prompt(void);

/* What the session is: shown in <session_context>. Any field may be NULL. */
struct jdg_session_info {
	const char *command; /* the agent's command line, shell-quoted */
	const char *project; /* absolute project root */
	const char *task;    /* --task; cut to JDG_TASK_MAX characters */
};

enum jdg_rule_kind {
	JDG_RULE_ALWAYS,	/* a person's "always" approval */
	JDG_RULE_APPROVED_NOTE, /* a person's approval with a note */
	JDG_RULE_REJECTED_NOTE, /* a person's rejection with a note */
	JDG_RULE_GRANT,		/* a persistent project grant */
};

/* One rule, from people's replies in this session's audit (and the parent
 * session's) or from the project's grants. Strings are not kept. */
struct jdg_rule {
	enum jdg_rule_kind kind;
	const char *action;    /* the kind's name (pol_kind_name()): "exec", "open" */
	const char *resources; /* the request's summary (pol_request_summary) */
	const char *note;      /* the person's note; NULL for ALWAYS and GRANT */
	int64_t ts_us;	       /* when it was given: orders rules newest first */
};

/*
 * Builds the turn-stable prefix of the user message:
 *
 *   <session_context>…</session_context>\n<user_rules>…</user_rules>\n
 *
 * The rules block opens with a fixed fail-closed preamble, then lists at
 * most JDG_RULES_MAX rules: the people's rules newest first (ts_us, ties in
 * input order), de-duplicated by kind + action + resources (the newest
 * wins), then the grants. If the prefix would exceed JDG_PREFIX_MAX, whole
 * rule lines are dropped from the middle of the list (keeping the newest
 * rules and the grants) and the gap is marked. Every field is escaped
 * (& < > " and control bytes). |rules| may be NULL when |n| is 0. Does not
 * keep |s| or |rules|. The same inputs give the same bytes: build it once per
 * turn and pass it unchanged to every jdg_submit() of that turn. Caller
 * frees.
 */
char *jdg_prefix_build(const struct jdg_session_info *s, const struct jdg_rule *rules, size_t n);

/* One decided request of this session, for <tool_history>. */
struct jdg_history_entry {
	const char *summary;	/* pol_request_summary() of the request */
	bool allowed;		/* the final outcome */
	const char *source;	/* "fast_path", "judge", "tier", "user", ... */
	const char *decided_by; /* "warden", "judge", a user name; may be NULL */
	const char *note;	/* a person's note, or the fixed tier note; may be NULL */
};

/*
 * Builds the variable part of the user message, to follow a prefix of
 * |prefix_len| bytes:
 *
 *   <tool_history>…</tool_history>\n<tool_call>…</tool_call>\n
 *
 * |hist| is oldest first (rendered in that order). |request_json| is
 * pol_request_json() of the request (already redacted); occurrences of
 * |project| (may be NULL) in it are shown relative to the project. All
 * text is escaped. If prefix_len + the result would exceed JDG_MESSAGE_MAX,
 * the middle of the history is cut first, then the middle of the call, each
 * cut marked "[... N bytes cut ...]", keeping the head and the tail of both
 * so that a malicious tail is never hidden. Does not keep its arguments.
 * Caller frees.
 */
char *jdg_message_build(size_t prefix_len, const struct jdg_history_entry *hist, size_t nhist,
			const char *request_json, const char *project);

/* ---- verdicts (pure) ---------------------------------------------------- */

enum jdg_decision { JDG_DECISION_ALLOW, JDG_DECISION_DENY, JDG_DECISION_ESCALATE };
enum jdg_risk { JDG_RISK_LOW, JDG_RISK_MEDIUM, JDG_RISK_HIGH, JDG_RISK_CRITICAL };

/* What the pipeline does with a verdict. */
enum jdg_outcome {
	JDG_ESCALATE, /* to the tier (the zero value: fail closed) */
	JDG_ALLOW,    /* allowed by the judge */
	JDG_REJECT,   /* deny + critical: refused; no tier may allow it */
};

#define JDG_REASON_MAX 1024

struct jdg_verdict {
	enum jdg_decision decision;
	enum jdg_risk risk;
	char reason[JDG_REASON_MAX]; /* cut (on a UTF-8 boundary) when longer */
};

/* Parses exactly {"decision":…,"risk_level":…,"reason":…} from |len| bytes
 * of |text| (need not be NUL-terminated). Unknown, duplicate or missing
 * keys, wrong types, unknown enum values, text before or after the object
 * and embedded NULs are failures: -EBADMSG and, if |err| is not NULL, a
 * malloc'd one-line message in *err (caller frees). Whitespace around the
 * object is accepted. */
int jdg_verdict_parse(const char *text, size_t len, struct jdg_verdict *out, char **err);

/* The outcome table: allow → ALLOW; allow+critical → ESCALATE;
 * deny+critical → REJECT; other deny → ESCALATE; escalate → ESCALATE. */
enum jdg_outcome jdg_verdict_outcome(const struct jdg_verdict *v);

/* Stable lower-case names ("allow", "critical", "reject", ...). */
const char *jdg_decision_name(enum jdg_decision d);
const char *jdg_risk_name(enum jdg_risk r);
const char *jdg_outcome_name(enum jdg_outcome o);

enum jdg_api {
	JDG_API_AUTO,	   /* from the URL: a path ending in /v1/messages is Anthropic */
	JDG_API_OPENAI,	   /* /v1/chat/completions: OpenAI, Ollama, llama-server, vLLM */
	JDG_API_ANTHROPIC, /* /v1/messages */
};

/* Resolves JDG_API_AUTO against |url| (query and fragment ignored). */
enum jdg_api jdg_api_detect(const char *url);

struct jdg_usage {
	int64_t prompt_tokens;	   /* -1 when the server did not say */
	int64_t completion_tokens; /* -1 when the server did not say */
	int64_t cached_tokens;	   /* prompt tokens served from the server's cache; -1 if unsaid */
};

/* Extracts the model's text from a response body of |api| (OpenAI:
 * choices[0].message.content; Anthropic: the text blocks of content[],
 * joined) and the usage. Unknown envelope keys are ignored; a missing or
 * non-string content, an error object or a refusal is -EBADMSG and, if
 * |err| is not NULL, a malloc'd one-line message in *err (caller frees).
 * *content is the caller's to free. */
int jdg_envelope_parse(enum jdg_api api, const char *body, size_t len, char **content,
		       struct jdg_usage *usage, char **err);

/* ---- the HTTP client (libcurl multi, driven by the caller's loop) ------- */

/* Called by the client: start watching |fd| for |epoll_events| (EPOLLIN,
 * EPOLLOUT or both), replacing any earlier mask for |fd|; 0 means stop
 * watching it. May be called from inside jdg_submit(), jdg_on_fd(),
 * jdg_on_timer(), jdg_cancel() and jdg_client_free(). */
typedef void (*jdg_watch_fn)(void *arg, int fd, uint32_t epoll_events);
/* Called by the client: call jdg_on_timer() once |ms| milliseconds from now
 * (0: as soon as the loop turns, not from inside this call), replacing any
 * earlier timer; -1 means no timer. */
typedef void (*jdg_timer_fn)(void *arg, long ms);

struct jdg_config {
	const char *url;	   /* required; copied */
	const char *model;	   /* required; copied */
	const char *api_key;	   /* may be NULL; copied, wiped on free, never logged */
	enum jdg_api api;	   /* JDG_API_AUTO detects it from |url| */
	long connect_timeout_ms;   /* 0: 3000 */
	long timeout_ms;	   /* each attempt, total; 0: 15000 */
	size_t max_response_bytes; /* 0: 1 MiB; a longer body is a failure */
	int retries;		   /* attempts after a failed one; 0: the default, 1; <0: none */
	jdg_watch_fn watch_fd;	   /* required for jdg_submit() */
	jdg_timer_fn set_timer;	   /* required for jdg_submit() */
	void *hook_arg;		   /* passed to both hooks */
};

/* What a request came to. Every string is owned by the client and valid
 * only during the jdg_done_fn call; copy with jdg_result_dup() to keep. */
struct jdg_result {
	enum jdg_outcome outcome;   /* JDG_ESCALATE on any failure */
	bool ok;		    /* a well-formed verdict was received */
	enum jdg_decision decision; /* valid when ok */
	enum jdg_risk risk;	    /* valid when ok */
	const char *reason;	    /* never NULL: the model's reason, or the failure */
	const char *verdict;	    /* the model's text as received (for the audit), or NULL */
	const char *error;	    /* NULL when ok, else what went wrong (last attempt) */
	long http_status;	    /* of the last attempt; 0 if none was received */
	struct jdg_usage usage;	    /* of the last attempt (Anthropic: prompt_tokens
				   includes cached and cache-writing input) */
	int64_t latency_us;	    /* from jdg_submit() to the callback */
	int attempts;		    /* HTTP attempts made (1 + retries used) */
	uint64_t req_id;
};

/* Called exactly once per submitted request that is not cancelled, from
 * inside jdg_on_fd() or jdg_on_timer() (or jdg_decide_sync()). It may call
 * jdg_submit() and jdg_cancel(), but not jdg_client_free(). */
typedef void (*jdg_done_fn)(void *arg, const struct jdg_result *res);

struct jdg_client; /* opaque */

/*
 * Driving the client from an event loop (sync.c is a complete example):
 *   1. jdg_client_new(&cfg, &c) once, with cfg.watch_fd / cfg.set_timer hooks.
 *   2. Per turn: prefix = jdg_prefix_build(...), kept until the turn ends.
 *   3. Per request: msg = jdg_message_build(strlen(prefix), ...);
 *      jdg_submit(c, prefix, msg, done, arg, &id); free(msg).
 *   4. watch_fd(fd, ev): add/modify/remove |fd| in the loop's table; when
 *      it is ready call jdg_on_fd(c, fd, revents).
 *   5. set_timer(ms): arm one timer (a timerfd: note that 0 disarms a
 *      timerfd, so arm 0 ms as 1 ns); when it fires call jdg_on_timer(c).
 *   6. done(arg, res) runs from inside jdg_on_fd/jdg_on_timer: map
 *      res->outcome (ALLOW, REJECT, ESCALATE → tier) and put
 *      jdg_result_json(res, model) in the audit row.
 *   7. jdg_cancel(c, id) when the caller goes away; jdg_client_free(c) at
 *      the end (never from inside done()).
 */

/* Creates a client for |cfg| (copies every string; keeps the hooks) in
 * *out. Returns 0, -EINVAL on a missing url or model, or -ENOMEM when curl
 * cannot start (then *out is NULL). Caller frees with jdg_client_free(). */
int jdg_client_new(const struct jdg_config *cfg, struct jdg_client **out);

/* Cancels every request without calling its callback, removes its fds
 * (watch_fd(…, 0)) and the timer, and frees |c|. NULL is a no-op. */
void jdg_client_free(struct jdg_client *c);

/* The API the client speaks (after detection). */
enum jdg_api jdg_client_api(const struct jdg_client *c);

/*
 * Starts judging one request. |prefix| is jdg_prefix_build()'s string for
 * this turn, |message| jdg_message_build()'s (both copied). The system
 * prompt and |prefix| go first so a server's prefix cache hits; for
 * Anthropic they are two cache_control blocks of "system". On success
 * returns 0, sets *req_id (may be NULL) and |cb| will be called exactly once
 * unless jdg_cancel() comes first. -errno when the request could not be
 * started (then |cb| is never called: escalate).
 */
int jdg_submit(struct jdg_client *c, const char *prefix, const char *message, jdg_done_fn cb,
	       void *arg, uint64_t *req_id);

/* Drops request |req_id|: its callback will not be called. -ENOENT when it
 * is unknown or already done. */
int jdg_cancel(struct jdg_client *c, uint64_t req_id);

/* The loop's side: |fd| (one the client asked to watch) is ready with
 * |epoll_events| (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP). Calls the
 * callbacks of requests that finished. */
void jdg_on_fd(struct jdg_client *c, int fd, uint32_t epoll_events);
/* The loop's side: the timer set through set_timer expired. */
void jdg_on_timer(struct jdg_client *c);

/* The number of requests in flight. */
size_t jdg_pending(const struct jdg_client *c);

/* A copy of |r| whose strings the copy owns. Free with jdg_result_clear(). */
void jdg_result_dup(const struct jdg_result *r, struct jdg_result *out);
/* Frees the strings of a jdg_result_dup() copy and zeroes it. */
void jdg_result_clear(struct jdg_result *r);

/* The audit's "judge" column: {"outcome","decision","risk_level","reason",
 * "verdict","error","http_status","attempts","latency_us","usage":{…}}, with
 * |model| (may be NULL) added. Caller frees. */
char *jdg_result_json(const struct jdg_result *r, const char *model);

/* Blocking convenience for tools and tests: runs the same multi code in its
 * own poll loop until the request finishes. |cfg|'s hooks are ignored.
 * Fills |out| (caller frees with jdg_result_clear()). Returns 0 when |out|
 * holds a result (which may itself be a failure: outcome ESCALATE) or
 * -errno when the request could not be started (out->outcome is then
 * ESCALATE and out->reason says why). */
int jdg_decide_sync(const struct jdg_config *cfg, const char *prefix, const char *message,
		    struct jdg_result *out);

#endif
