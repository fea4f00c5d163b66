/*
 * sup.h: the supervisor's internal interfaces: the event loop, the process
 * table, the pending-decision table and the pipeline. Only supervisor/
 * includes it.
 */
#ifndef WARDEN_SUP_H
#define WARDEN_SUP_H

#include "common.h"
#include "policy.h"
#include "sandbox.h"
#include "store.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <termios.h>

/* Exit codes of warden itself (the agent's own status passes through). */
enum {
	SUP_EXIT_USAGE = 2,    /* a bad command line or config (config check) */
	SUP_EXIT_NOSTART = 125 /* warden could not start the agent */
};

/* ---- the event loop (loop.c), in the shape of Redis's ae.c ------------- */

struct sup_loop;
typedef void (*sup_fd_fn)(struct sup_loop *l, int fd, uint32_t events, void *arg);

struct sup_loop *sup_loop_new(void);
void sup_loop_free(struct sup_loop *l);
/* Watches |fd| for |events| (EPOLLIN ...) and calls |fn| when ready. */
int sup_loop_add(struct sup_loop *l, int fd, uint32_t events, sup_fd_fn fn, void *arg);
void sup_loop_del(struct sup_loop *l, int fd);
/* Runs one round: waits at most |timeout_ms| (-1: forever) and calls the
 * handlers of ready fds. Returns how many were ready, or -errno. */
int sup_loop_once(struct sup_loop *l, int timeout_ms);

/* ---- the run's state -------------------------------------------------- */

/* How a person is asked in the standard tier: never, on the desk only (warden
 * approvals / approve / deny from another terminal), or on the desk and
 * inline on this terminal. */
enum sup_prompt { SUP_PROMPT_NONE, SUP_PROMPT_DESK, SUP_PROMPT_TTY };

/* --view / WARDEN_VIEW: the project view's mechanism. */
enum sup_view_mode { SUP_VIEW_AUTO, SUP_VIEW_FUSE, SUP_VIEW_SPLIT };
/* "auto", "fuse" or "split": 0, else -EINVAL. */
int sup_view_mode_parse(const char *arg, enum sup_view_mode *m);

struct sup_opts {
	const char *project;	/* absolute */
	const char *audit_path; /* absolute */
	enum pol_tier tier;
	bool tier_set; /* given on the command line */
	enum sup_prompt prompt;
	bool prompt_set;
	const char *task;
	bool stats;
	bool no_view;		      /* --no-view: no FUSE view (weaker: opens are not decided) */
	enum sup_view_mode view_mode; /* --view (else WARDEN_VIEW) */
	bool view_mode_set;
	bool review;   /* --role review: read-only view, sensitive reads allowed, never asks */
	bool keep_tmp; /* --keep-tmp: the private temporary directories outlive the run */
	/* --share-tmp: host places under the temporary directories shown
	 * read-only inside the private ones (NULL-terminated; argv's). */
	const char *share_tmp[17];
	int64_t approval_timeout_ms; /* --approval-timeout */
	int64_t turn_idle_ms;	     /* --turn-idle */
	bool turn_idle_set;
	const char *parent;	/* --parent: the parent session's id */
	enum pol_harness agent; /* --agent: the harness profile (POL_HARNESS_NONE: none) */
	bool agent_auto;	/* --agent auto (the default): from the program */
	bool agent_set;
	bool quiet;  /* -q: no informational start lines, no summary at exit */
	bool force;  /* --force: the project may be / or a home (or above one) */
	char **argv; /* the agent's command */
};

struct sup_proc;
struct sup_pending;
struct sup_tty;

/* Per-source latency samples for --stats. */
struct sup_stats {
	uint64_t count[16];
	int64_t *lat_ns[16];
	size_t nlat[16], caplat[16];
	uint64_t rows;
	int64_t rows_ns;
	bool journal; /* rows went to the audit's journal before each answer */
	/* Connections decided (connect.c): allowed, refused, and their
	 * decision latency. */
	uint64_t connects_allowed, connects_refused;
	int64_t *conn_lat_ns;
	size_t nconn_lat, capconn_lat;
};

/* One markers view: a place outside the project in which the sensitive
 * markers decide opens as in the project view. */
struct sup_markers {
	int fd;		   /* O_PATH of the place, until the view takes it */
	char **hidden;	   /* hidden places inside it, relative (NULL-terminated) */
	char **unmarked;   /* the harness's places inside it, relative */
	char **writable;   /* the agent's writable places inside it, relative */
	bool all_writable; /* a writable place holds it whole */
	struct sbx_view *view;
};

struct sup_run {
	struct sup_opts opts;
	struct sup_loop *loop;
	struct sto_db *db;
	struct pol_config *config;
	struct pol_session *grants;
	char session_id[64];
	char *person; /* who started the run */
	struct sbx_child child;
	bool agent_started; /* its first exec event was seen */
	/* The places the agent can write, by identity (for the decoder). */
	struct sbx_places *places;
	/* The agent has had a child or a tool call: from now on its own
	 * execs are decided like any other (trace.c, sup_startup_check). */
	bool startup_over;
	/* Rows of execs the kernel failed (a PATH miss), answered already,
	 * waiting to be written with the next row (sup_audit_flush). */
	struct sto_row *misses;
	size_t nmisses;
	bool agent_exited;
	int agent_status; /* wait status of the agent's initial process */
	bool stopping;
	int sigfd;
	int tty_fd;		      /* --prompt tty: /dev/tty, or -1 */
	pid_t saved_fg;		      /* the terminal's foreground group before us */
	struct sup_proc *procs[1024]; /* hash table by tid */
	size_t nprocs;		      /* traced entries (their exits reach us) */
	size_t nuntraced;	      /* untraced entries (each holds a pidfd) */
	/* An untraced entry was dropped while its process lived (more than
	 * SUP_UNTRACED_MAX at once): from then on no untraced process counts
	 * as a direct child of the agent (see sup_proc.orphan). */
	bool lost_track;
	/* The entry of the caller whose notification is being handled, for
	 * as long as that handling lasts (pipeline.c): the caller is blocked in
	 * its exec and its pidfd, opened before the notification's id check,
	 * showed it alive, so sup_proc_get() need not ask its pidfd again. */
	struct sup_proc *live;
	struct sup_pending *pending; /* requests waiting for a person */
	/* The view's hand-off: FUSE workers queue a sup_view_wait and wake
	 * the loop through view_efd; the loop answers under view_lock. */
	pthread_mutex_t view_lock;
	pthread_cond_t view_cond;
	struct sup_view_wait *view_queue;
	int view_efd;
	bool view_closing;
	unsigned view_waiting; /* view requests queued or being decided */
	unsigned view_over;    /* over the cap, waiting for their audit row */
	struct sbx_view *view;
	int backing_fd; /* O_PATH fd of the real project, until the view takes it */
	/* The split view (--view): the start walk's result and the fanotify
	 * listener of the fast subtrees; NULL when the view is all FUSE
	 * (|split_why| then says why, when split was possible to ask). */
	struct sbx_split *split;
	struct sbx_fan *fan;
	char **split_keep; /* the walk's kept paths, for directories made later */
	char split_why[160];
	/* The guardian of the listener's group (sbx_guard_start): its control
	 * pipe (-1: none) and pid; |sandbox_gone|: end_run saw every process
	 * of the sandbox gone, so the guardian may be stopped. */
	int guard_ctl;
	pid_t guard_pid;
	bool sandbox_gone;
	/* Gated places outside the project (config "mode": "gate"): their
	 * paths (NULL-terminated), backing fds until their views take them,
	 * and the views. */
	char **gate_dirs;
	int *gate_fds;
	struct sbx_view **gates;
	size_t ngates;
	/* Markers views (config "mode": "markers": each home by default):
	 * their paths (NULL-terminated, for the spawn) and state. */
	char **marker_dirs;
	struct sup_markers *markers;
	size_t nmarkers;
	/* The homes the "~/" places apply to: $HOME, the passwd home of the
	 * invoking uid, SUDO_USER's (NULL-terminated, canonical, distinct). */
	char **homes;
	struct sup_tty *tty; /* the terminal prompt (tty.c), or NULL */
	/* The places whose files are in a view (the project, the gated and
	 * markers places): sup_tell() never writes to a stderr there. */
	const char *tell_skip[SBX_MAX_VIEWS + 1];
	/* The approvals desk (desk.c). */
	int desk_fd;	 /* listening socket, -1 when none */
	char *desk_path; /* its path, removed at exit */
	unsigned next_pending_id;
	struct sup_judge *judge; /* NULL: no judge configured */
	struct sup_stats stats;
	unsigned long long audit_failures;
	/* The agent's launcher (startup.c): the canonical path of the program
	 * the person ran when it is a known launcher script (else NULL), the
	 * index in opts.argv of its first argument, and whether its native
	 * child has taken over as the agent. */
	char *launcher;
	size_t launcher_argi;
	bool startup_child;
	/* The agent's current binary (the last exec of its start-up), by
	 * inode: what Codex's process-setup re-exec must be. 0: unknown. */
	dev_t agent_dev;
	ino_t agent_ino;
	char *agent_path; /* its canonical path, or NULL */
	/* The private temporary directories (tmpdir.c): the session's
	 * directory on the host (NULL: none), descriptors of it and of /tmp
	 * for its removal, and the binds the sandbox makes. */
	char *tmp_dir;
	int tmp_fd, tmp_parent_fd;
	struct sbx_bind *binds; /* each src and dst owned */
	size_t nbinds;
	char *shm_src; /* the host directory bound over /dev/shm, or NULL */
	/* The sandbox's paths that are the session's own (/tmp, /var/tmp,
	 * /dev/shm: what is there never reaches the host), and those inside
	 * them that are the host's (bound at the same path). NULL-terminated;
	 * NULL when empty. */
	char **private_dirs;
	char **shared_dirs;
	/* The names the session saw resolve to each IP address (names.c). */
	struct sup_names *names;
	/* The session's resolver (resolver.c): when it runs, the sandbox's
	 * /etc/resolv.conf names |resolver_addr| (port 53), and a socket call
	 * to it is inside the boundary. */
	bool resolver_on;
	int resolver_family; /* AF_INET or AF_INET6 */
	uint8_t resolver_addr[16];
	struct sup_resolver *resolver; /* NULL: none */
	/* The split view's emulation of the name-changing calls (fsops.c):
	 * |fs_trap| when the filter traps them, |emul| its workers. */
	bool fs_trap;
	struct sbx_emul *emul;
	/* A dup of backing_fd for the emulation (taken by sup_fs_start), made
	 * before the view takes backing_fd; -1: none. */
	int emul_backing_fd;
	char *resolver_why; /* why there is none, or NULL */
	/* The datagram destinations each process was allowed (connect.c). */
	struct sup_dgrams *dgrams;
};

/* ---- warden run's set-up (run_opts.c, agent.c, markers.c) --------------- */

/* Reads warden run's options into |o| (-h prints the usage and exits).
 * 0, or -EINVAL after saying why on stderr. */
int sup_run_options(int argc, char **argv, struct sup_opts *o);

/* |cmd| found in PATH the way execvp would (caller frees), or NULL. */
char *sup_find_program(const char *cmd);
/* The agent's environment: without warden's variables and secret-looking
 * ones the harness or config does not keep, plus WARDEN_SESSION. Free
 * with sup_free_env(). */
char **sup_agent_environ(const char *session, const struct pol_config *c, enum pol_harness h);
void sup_free_env(char **env);
/* Who started the run (SUDO_USER for root through sudo). Caller frees. */
char *sup_person_name(void);
/* The profile of a known agent, from its program's path, then argv[0]. */
enum pol_harness sup_detect_agent(const char *real, const char *arg0);
/* Sets r->launcher when the program (canonical |real|) is a known launcher
 * script whose native child becomes the agent. */
void sup_find_launcher(struct sup_run *r, const char *real);
/* The places in the home directory harness |h| must write (NULL-ended). */
const char *const *sup_profile_writable(enum pol_harness h);
/* Where Landlock lets the agent write: the agent profile |h|'s places in
 * the home directory, the project, the temporary directories, harmless
 * devices and the config's list. NULL-terminated; caller frees each and
 * the array. */
char **sup_writable_list(const struct pol_config *c, const char *project, enum pol_harness h);

/* sbx_spawn's callbacks: serve the project's view, gated place |i|, and
 * markers view |i| on |fuse_fd| (taken). 0 or -errno. */
int sup_start_view(void *arg, int fuse_fd);
int sup_start_gate(void *arg, size_t i, int fuse_fd);
int sup_start_markers(void *arg, size_t i, int fuse_fd);
/* The homes the "~/" places apply to (NULL-terminated; caller frees). */
char **sup_home_list(void);
/* The places outside the project the agent must not see, to be hidden by
 * mounts (NULL-terminated; caller frees); sets up the gated places and
 * markers views on the way. */
char **sup_hide_list(struct sup_run *r, const struct pol_config *c, const char *project,
		     const char *audit, bool no_view);
/* The harness's own places (|prof|) in each markers view: unmarked. */
void sup_unmark_profile(struct sup_run *r, const char *const *prof);
/* The agent's writable places inside each markers view. */
void sup_markers_writable(struct sup_run *r, char *const *writable);

/* ---- private temporary directories (tmpdir.c) -------------------------- */

/* Makes the session's directory under /tmp and computes the binds: the
 * private /tmp, /var/tmp and /dev/shm, and the places inside them shared
 * with the host (the project without the view, |writable|'s places, the
 * config's tmp.share, HOME and |cwd|). 0, or -errno after saying why. */
int sup_tmp_setup(struct sup_run *r, const char *project, const char *cwd, const char *prog,
		  char *const *writable);
/* At the end of the run: with --keep-tmp says where the directory is; else
 * removes it when |sandbox_gone| (every process of the sandbox has exited),
 * and otherwise leaves it and says where. */
void sup_tmp_finish(struct sup_run *r, bool sandbox_gone);
void sup_tmp_free(struct sup_run *r);

/* ---- warden's own files (ownfiles.c) ----------------------------------- */

/* Refuses (-EPERM, a sentence in *err: caller frees) when warden's
 * executable, the config |cfgpath|, the audit's directory, or a directory
 * above any of them could be changed by the agent (a place of |writable|,
 * the list Landlock will get, other than the private temporary
 * directories; or, by file permissions, another user). |project|'s
 * .warden/ is kept read-only in the sandbox and is not counted. */
int sup_own_files_check(const struct sup_run *r, const char *project, const char *cfgpath,
			char *const *writable, char **err);

/* ---- processes (trace.c) ----------------------------------------------- */

/* What covers a process: the audit row of the allowed command whose tree it
 * is in (0: nothing covers it). trace.c says which processes are traced and
 * why every process without an entry is one that nothing covers. */
struct sup_proc {
	struct sup_proc *next; /* hash chain */
	pid_t tid;
	/* We are its tracer: its stops and its exit reach us, so the entry is
	 * exact for as long as it exists. */
	bool traced;
	bool follows; /* traced with fork, vfork and clone events (a covered tree) */
	/* A pidfd of its process (-1 for a thread's entry). An untraced entry
	 * (a process seen at an exec, then let go) is used only while that
	 * process is alive, so a recycled pid never inherits it; a traced one
	 * keeps its pidfd for the day it is let go. */
	int pidfd;
	/* Its ancestry could not be followed back to the agent (an orphan, or
	 * an entry was dropped): it never counts as the agent's direct child. */
	bool orphan;
	pid_t tgid;    /* its process: tid for a leader, from clone events for threads */
	pid_t ppid;    /* the process (tgid) that created it */
	int64_t cover; /* row id of the covering decision, 0 if none */
	bool startup;  /* the agent's initial process (its exec chain) */
	/* The tool call this process belongs to: the audit row of the first
	 * exec of the agent's direct child it descends from (0: none yet, or
	 * the agent itself). */
	int64_t tool_call;
	/* Its first stop came before its creator's fork/clone event: it waits,
	 * stopped, until that event names its creator (no guess from /proc). */
	bool held;
	/* The exec decided for this thread, waiting for its exec event. */
	struct sbx_exec_event *decided;
	int64_t decided_row; /* its audit row */
	int64_t next_cover;  /* the cover once that exec has happened */
	/* The last exec refused to this thread: a shell retrying the same
	 * command on the next PATH entry gets the same answer, once audited. */
	uint64_t refused_digest;
	int64_t refused_at_ns;
	int64_t refused_row; /* its audit row */
	/* Where its arguments are and what they were at its last exec event
	 * (or its creator's, copied at a fork event); bytes NULL: unknown. */
	struct sbx_args args;
};

/* Untraced entries kept at once (each holds a pidfd). */
#define SUP_UNTRACED_MAX 512

/* The entry of |tid|, or NULL. An untraced entry whose process has exited
 * is dropped here and NULL returned. */
struct sup_proc *sup_proc_get(struct sup_run *r, pid_t tid);
/* A new traced entry (the agent, an auto-attached child). */
struct sup_proc *sup_proc_add(struct sup_run *r, pid_t tid, pid_t ppid);
void sup_proc_del(struct sup_run *r, pid_t tid);
/* The entry of |tid|, created when it has none: an untraced process
 * nothing covers, whose tool call comes from its ancestry. |tgid| and
 * |ppid| are its process and parent when known (sbx_exec_event's, from
 * its pidfd); 0: read from /proc. */
struct sup_proc *sup_proc_adopt(struct sup_run *r, pid_t tid, pid_t tgid, pid_t ppid);
/* sbx_args_hint for the decoder (|ctx| is the sup_run): the arguments seen
 * at the caller's own last exec event, or, for a caller without an entry
 * (made by fork, never exec'd since), at its parent's. */
const struct sbx_args *sup_args_hint(void *ctx, pid_t tid, pid_t ppid);
/* Attaches to |p|, a thread stopped in an allowed exec, so that its exec
 * event is checked; |follow| adds fork events (the exec covers its tree).
 * 0 or -errno. */
int sup_trace_seize(struct sup_run *r, struct sup_proc *p, bool follow);
/* Keeps |p| (untraced, not seized) as a pidfd-checked entry, or drops it. */
void sup_proc_keep_untraced(struct sup_run *r, struct sup_proc *p);
/* The process (thread group) of thread |tid|, from /proc; |tid| when unknown. */
pid_t sup_tgid_of(pid_t tid);
/* The supervisor's pid of the traced thread whose pid in the sandbox's PID
 * namespace is |nstid|; 0 when no traced thread has it. */
pid_t sup_host_tid(struct sup_run *r, pid_t nstid);
/* Handles every ptrace/wait event that is ready (after SIGCHLD). */
void sup_trace_reap(struct sup_run *r);
/* Kills every traced process, and every untraced one with an entry. */
void sup_trace_kill_all(struct sup_run *r);
/* Frees the process table (at the end of a run). */
void sup_trace_free(struct sup_run *r);

/* ---- the agent's own machinery (startup.c) ----------------------------- */

/* Whether exec |ev| (its request |req|) by |p| is the native binary the
 * agent's launcher starts (see startup.c for every condition). True once
 * per session; the caller then marks |p| as the agent's start-up. */
bool sup_startup_child(struct sup_run *r, struct sup_proc *p, const struct sbx_exec_event *ev,
		       const struct pol_request *req);

/* Called for every exec notification before it is decided: the agent's
 * start-up ends at the first sign it has had a child (an exec by another
 * process of its tree, or a child alive at an exec of its own). */
void sup_startup_check(struct sup_run *r, const struct sbx_exec_event *ev, struct sup_proc *p);

enum sup_machinery {
	SUP_MACH_NONE,
	SUP_MACH_SETUP,	   /* Codex's process-setup re-exec: allowed, not a tool call */
	SUP_MACH_WRAPPER,  /* Codex's per-call wrapper: allowed, the tool call's row */
	SUP_MACH_VALIDATE, /* Codex checking its snapshot: start-up */
};
/* What exec |ev| (its request |req|) by |p| is of the agent harness's own
 * machinery: only for a direct child of the agent with no tool call yet. */
enum sup_machinery sup_harness_machinery(struct sup_run *r, const struct sup_proc *p,
					 const struct sbx_exec_event *ev,
					 const struct pol_request *req);
/* The text of |path| read as the caller would (caller frees), or NULL. */
char *sup_read_snapshot(struct sup_run *r, const char *path);
/* One warning line when the agent's options turn on its own sandbox, which
 * cannot start inside warden. */
void sup_warn_agent_options(enum pol_harness agent, char *const *argv);

/* ---- the pipeline (pipeline.c, viewq.c, pending.c) ------------------------------------------- */

/* Handles one seccomp notification: decode, decide, audit, answer. */
void sup_on_notify(struct sup_loop *l, int fd, uint32_t events, void *arg);
/* The view's callback (FUSE worker threads): queues and waits. */
int sup_view_decide(void *arg, const struct sbx_view_request *req);
/* Handles the queued view requests (the loop, on view_efd). */
void sup_on_view(struct sup_loop *l, int fd, uint32_t events, void *arg);
/* Refuses every queued and future view request (at exit). */
void sup_view_close(struct sup_run *r);

/* An open the project view asks about, waiting in a FUSE worker thread
 * (view.c) until the loop answers it. */
struct sup_view_wait {
	struct sup_view_wait *next;
	char *path, *path2;
	unsigned access;
	pid_t pid;
	int result; /* 0 or -errno, valid when done */
	bool done;
	bool over_cap; /* to be refused (and audited) without asking */
	/* Refused at once, the view being saturated: the loop audits it after
	 * the answer and frees it (nobody waits on it). */
	bool late;
};

/* One request in the pipeline: an exec notification or a view open. */
struct sup_request {
	enum pol_kind kind;
	struct sbx_exec_event *ev; /* exec: owned */
	struct sup_view_wait *vw;  /* open: the waiting worker's, not owned */
	pid_t pid, tgid;
	struct pol_request *req;
	char *summary;
	int64_t t_recv_ns;
	bool covers;
	struct pol_decision pol;
	struct sup_request *next_follower; /* in sup_pending.followers */
	char *judge_json;		   /* the judge's verdict for the audit, or NULL */
	char *judge_reason;		   /* shown to the person when it escalated */
	/* connect: the socket call (owned) and the message whose destination
	 * this request decides. */
	struct sbx_sock_event *sock;
	size_t sock_msg;
	/* What the caller is told the request was (owned), or NULL: the
	 * summary, quoted. */
	char *told;
	/* connect: the caller's command line as the decision saw it (owned). */
	char *command;
};

/* A request waiting for a person. */
struct sup_pending {
	struct sup_pending *next;
	struct sup_request *rq;
	/* The same request from the same process while this one waits (other
	 * threads, a retry): it joins, and gets the same answer. */
	struct sup_request *followers;
	unsigned id;	     /* the desk's number for it in this session */
	int64_t since_us;    /* realtime, when it started waiting */
	int64_t deadline_ns; /* monotonic */
	int64_t deadline_us; /* realtime, for people */
};

/* The person's answer to a pending request. */
enum sup_answer {
	SUP_ANSWER_ONCE,
	SUP_ANSWER_ALWAYS,	   /* a session grant */
	SUP_ANSWER_ALWAYS_PROJECT, /* a session grant and a persistent project grant */
	SUP_ANSWER_REJECT,
};
/* Decides |p| as |who| answered. With SUP_ANSWER_ALWAYS_PROJECT, the
 * grant written to .warden/permissions.json is in *written (the file's new
 * text; caller frees; |written| may be NULL). Returns 0, or -errno when the
 * project grant could not be written: the request is then approved for the
 * session only, and *err says so. */
int sup_pending_answer(struct sup_run *r, struct sup_pending *p, enum sup_answer a,
		       const char *note, const char *who, char **written, char **err);
/* Refuses every pending request (at exit). */
void sup_pending_refuse_all(struct sup_run *r, const char *why);
/* Refuses pending requests whose deadline passed (audited as "timeout") and
 * drops those whose caller is gone. Returns ms until the next deadline, or
 * -1 when nothing waits. */
int sup_pending_expire(struct sup_run *r);
/* Refuses |p| and its followers as stopped: |why| audited, |err| the
 * errno the callers get (0: EACCES). */
void sup_pending_refuse(struct sup_run *r, struct sup_pending *p, const char *why, int err);
/* The pending request with desk number |id|, or NULL. */
struct sup_pending *sup_pending_find(struct sup_run *r, unsigned id);
/* Queues |rq| for a person (desk and, with --prompt tty, the terminal). */
void sup_pending_add(struct sup_run *r, struct sup_request *rq);

/* ---- the pipeline's parts (answer.c, pipeline.c, viewq.c) -------------- */

/* How the decision of one request ends. */
struct sup_outcome {
	bool allow;
	enum pol_source source;
	const char *reason;
	const char *decided_by;
	const char *note;
	bool covers; /* an allowed exec covers its tree (see sup_proc.cover) */
	int err;     /* the errno a refusal returns (0: EACCES) */
	/* The exec is the harness's set-up of a tool call's process, not the
	 * call: the process's next exec is. */
	bool not_a_call;
};

/* Writes the queued rows of execs the kernel failed (answer.c), in one
 * transaction with |also| (may be NULL) when given. Returns
 * sto_append_batch()'s result; |also|->id is set on success. */
int sup_audit_flush(struct sup_run *r, struct sto_row *also);
/* Audits and answers |rq| (answer.c), then frees it. */
void sup_finish(struct sup_run *r, struct sup_request *rq, struct sup_outcome o);
/* sup_finish() of a decision warden reached itself (decided_by "warden"). */
void sup_finish_warden(struct sup_run *r, struct sup_request *rq, bool allow,
		       enum pol_source source, const char *reason);
/* Steps 1-5 for |rq| (pipeline.c). */
void sup_run_pipeline(struct sup_run *r, struct sup_request *rq, bool startup);
/* Policy could not build |rq|'s request: refused (pipeline.c). */
void sup_refuse_unbuilt(struct sup_run *r, struct sup_request *rq, char *summary);
/* Answers a view request: the worker waiting for it wakes up (viewq.c). */
void sup_view_answer(struct sup_run *r, struct sup_view_wait *vw, int result);

/* ---- names (names.c) ----------------------------------------------------- */

/* The names the session saw resolve to each IP address. |addr| is in
 * network order, 4 bytes for AF_INET and 16 for AF_INET6; an IPv4 address
 * mapped into IPv6 (::ffff:a.b.c.d) is to be given as AF_INET by the
 * caller. Every function is safe from any thread. */
struct sup_names;
struct sup_names *sup_names_new(void);
void sup_names_free(struct sup_names *t);
/* Records that |name| resolved to |addr| (lower-cased, final dot dropped;
 * a name with bytes outside [A-Za-z0-9._-] is ignored). */
void sup_names_add(struct sup_names *t, const char *name, int family, const uint8_t *addr);
/* Every name |addr| had in this session, newest first, NULL-terminated
 * (caller frees with wd_strv_free()), or NULL when nobody resolved it. */
char **sup_names_of(struct sup_names *t, int family, const uint8_t *addr);
/* How many addresses have names. */
size_t sup_names_count(struct sup_names *t);
/* Names |fn| holds (|arg|, a name lower case without the final dot) are
 * never pushed out of an address, nor is an address that has one forgotten
 * (names.c says how). Called under the table's lock from any thread that
 * adds: |fn| must be pure and read only what never changes in the run. */
typedef bool (*sup_names_keep_fn)(void *arg, const char *name);
void sup_names_set_keep(struct sup_names *t, sup_names_keep_fn fn, void *arg);

/* ---- request kinds (kinds.c) -------------------------------------------- */

/*
 * What the supervisor does differently for each kind of request: one
 * entry per enum pol_kind in kinds.c, so that a new kind is one entry and
 * its functions, not a branch in every file. The functions live with
 * their part (answer.c, pipeline.c, pending.c, viewq.c, desk.c, tty.c).
 * Policy's part of a kind is policy/kinds.c, the judge's judge/kinds.c.
 *
 * A kind the pipeline never decides (|no_pipeline| says why) has no
 * function; every other kind has every function.
 */
struct sup_kind_ops {
	const char *no_pipeline; /* NULL, or why no sup_request has this kind */
	/* The caller is a process warden follows: its entry in the process
	 * table (adopted when new) is seized before an allowing answer and
	 * checked at its exec event, its first row opens a tool call, and an
	 * allowed request may cover its tree. */
	bool traced;
	/* The fast path never allows it (pol_context.no_fast_path). */
	bool no_fast_path;
	/* What precedes the summary in the lines the caller is told:
	 * "exec of " or "". */
	const char *told_as;
	/* The verb of the debug line ("exec", "read", "change"). */
	const char *(*verb)(const struct sup_request *rq);
	/* Finishes |rq| when it is the agent's own machinery (its start-up,
	 * its harness's wrapper) and returns true; may set *startup (the
	 * agent's start-up chain goes on). Called after policy decided. */
	bool (*machinery)(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
			  bool *startup);
	/* Whether the caller of a pending |rq| still waits for its answer. */
	bool (*waits)(struct sup_run *r, const struct sup_request *rq);
	/* The answers, once the row is written: lets |rq| go on (|p| its
	 * caller's entry when traced, |covers_next| and |row_id| what an
	 * allowed exec covers), or refuses it with |err|. Neither frees |rq|. */
	void (*allow)(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
		      const struct sup_outcome *o, bool covers_next, int64_t row_id);
	void (*refuse)(struct sup_run *r, struct sup_request *rq, struct sup_proc *p, int err);
	/* The desk's view of the caller: its working directory and its full
	 * command. Caller frees. */
	char *(*cwd)(const struct sup_request *rq);
	char *(*command)(const struct sup_request *rq);
	/* The terminal prompt's lines about |rq| (its question and caller),
	 * |code| the prompt's code; every field from the agent sanitised. */
	void (*prompt)(struct wd_sb *sb, const struct sup_request *rq, const char *code);
};

/* The entry of |k|, or NULL when |k| is not a kind. */
const struct sup_kind_ops *sup_kind_ops(enum pol_kind k);

/* The kinds' functions, named in kinds.c's table. */
const char *sup_exec_verb(const struct sup_request *rq);
const char *sup_open_verb(const struct sup_request *rq);
bool sup_exec_machinery(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
			bool *startup);
bool sup_open_machinery(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
			bool *startup);
bool sup_exec_waits(struct sup_run *r, const struct sup_request *rq);
bool sup_open_waits(struct sup_run *r, const struct sup_request *rq);
void sup_exec_allow(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
		    const struct sup_outcome *o, bool covers_next, int64_t row_id);
void sup_open_allow(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
		    const struct sup_outcome *o, bool covers_next, int64_t row_id);
void sup_exec_refuse(struct sup_run *r, struct sup_request *rq, struct sup_proc *p, int err);
void sup_open_refuse(struct sup_run *r, struct sup_request *rq, struct sup_proc *p, int err);
char *sup_exec_cwd(const struct sup_request *rq);
char *sup_open_cwd(const struct sup_request *rq);
char *sup_exec_command(const struct sup_request *rq);
char *sup_open_command(const struct sup_request *rq);
void sup_exec_prompt(struct wd_sb *sb, const struct sup_request *rq, const char *code);
void sup_open_prompt(struct wd_sb *sb, const struct sup_request *rq, const char *code);
const char *sup_connect_verb(const struct sup_request *rq);
bool sup_connect_machinery(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
			   bool *startup);
bool sup_connect_waits(struct sup_run *r, const struct sup_request *rq);
void sup_connect_allow(struct sup_run *r, struct sup_request *rq, struct sup_proc *p,
		       const struct sup_outcome *o, bool covers_next, int64_t row_id);
void sup_connect_refuse(struct sup_run *r, struct sup_request *rq, struct sup_proc *p, int err);
char *sup_connect_cwd(const struct sup_request *rq);
char *sup_connect_command(const struct sup_request *rq);
void sup_connect_prompt(struct wd_sb *sb, const struct sup_request *rq, const char *code);

/* ---- the approvals desk (desk.c) ------------------------------------------ */

/* The directory of desk sockets: $XDG_RUNTIME_DIR/warden or /run/warden,
 * created 0700. Caller frees. NULL with errno on failure. */
char *sup_desk_dir(bool create);
/* Opens this session's socket (sup_desk_watch puts it in the loop). 0 or -errno. */
int sup_desk_open(struct sup_run *r);
void sup_desk_close(struct sup_run *r);
/* Puts the listening socket in the loop (after sup_desk_open). */
int sup_desk_watch(struct sup_run *r);
/* warden approvals / approve / deny. */
int sup_cmd_approvals(int argc, char **argv);
int sup_cmd_answer(int argc, char **argv, bool approve);

/* Writes "warden: <msg>\n" to the stderr of |tgid| without ever blocking
 * the supervisor (tell.c). */
void sup_tell(const struct sup_run *r, pid_t tgid, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* sup_tell() never writes to a stderr inside |place| (the project's view or
 * a gated place's); called once per place, the string must outlive the run. */
void sup_tell_skip(struct sup_run *r, const char *place);

/* ---- socket calls (sockets.c) ------------------------------------------ */

/* Decides and answers the socket call |ev| (taken), received at |t0|. */
void sup_sock_on_notify(struct sup_run *r, struct sbx_sock_event *ev, int64_t t0);

/* fsops.c: the trapped name-changing calls (split view). */
/* Starts the emulation when r->fs_trap: |writable| is the agent's Landlock
 * list; the fast subtrees are r->child.fast. */
int sup_fs_start(struct sup_run *r, char *const *writable);
void sup_fs_on_notify(struct sup_run *r, struct sbx_fs_event *ev);
void sup_fs_stop(struct sup_run *r);
/* No directory made from now on is bound as a fast subtree (before the
 * listener stops). */
void sup_fs_stop_binding(struct sup_run *r);
void sup_fs_print_stats(const struct sup_run *r, FILE *out);
/* Does the decided call |ev| (taken) on a thread of its own, which answers
 * it. */
void sup_sock_do(struct sup_run *r, struct sbx_sock_event *ev);

/* ---- IP destinations (connect.c) ----------------------------------------- */

/* Decides the IP destinations of |ev| (taken; an AF_INET/AF_INET6 socket's
 * call, received at |t0|) one at a time through the pipeline, then does
 * the call (sup_sock_do) or refuses it at the first refusal. */
void sup_connect_on_notify(struct sup_run *r, struct sbx_sock_event *ev, int64_t t0);
/* Adds the agent harness's own API endpoints (from |envp|, the agent's
 * environment, or the harness's defaults) to the config, and records the
 * names of the endpoints it resolves. */
void sup_connect_harness_endpoints(struct sup_run *r, char *const *envp);
void sup_connect_free(struct sup_run *r);

/* The per-run cache of datagram destinations a process was allowed:
 * later sends from that process (tgid) to one of them go without a new
 * row. An entry lives as long as its process (checked by its pidfd). */
struct sup_dgrams;
struct sup_dgrams *sup_dgrams_new(void);
void sup_dgrams_free(struct sup_dgrams *c);
/* Whether process |tgid| was allowed to send to |d| by |proto|. */
bool sup_dgrams_has(struct sup_dgrams *c, pid_t tgid, const struct sbx_inet *d, int proto);
/* Forgets what |tgid| was allowed: the process has exec'd another program,
 * which is decided again (trace.c, at the exec event). */
void sup_dgrams_forget(struct sup_dgrams *c, pid_t tgid);
/* Records it; |pidfd| (taken) names the process, opened while it was known
 * to be alive. */
void sup_dgrams_add(struct sup_dgrams *c, pid_t tgid, int pidfd, const struct sbx_inet *d,
		    int proto);
/* The call's name: "connect", "sendto", "sendmsg" or "sendmmsg". */
const char *sup_sock_op_name(enum sbx_sock_op op);
/* Says which outside sockets (and secret-looking variables) the config
 * lets the agent have, for warden doctor. */
void sup_sockets_describe(const struct pol_config *c, FILE *out);

/* ---- the person at the terminal (tty.c) ----------------------------- */

/* Opens /dev/tty for --prompt tty. 0 or -errno. */
int sup_tty_open(struct sup_run *r);
/* Puts the terminal in the event loop (after sup_tty_open). */
int sup_tty_watch(struct sup_run *r);
/* Queues |p| for the person: shows it now if nothing else is shown. */
void sup_tty_enqueue(struct sup_run *r, struct sup_pending *p);
/* |p| was decided elsewhere (desk, deadline): stop showing it. */
void sup_tty_forget(struct sup_run *r, struct sup_pending *p);
void sup_tty_close(struct sup_run *r);
/* Refuses |p| as stopped (|why| audited, |err| the errno the caller gets;
 * 0: EACCES), saying so on the terminal when it is the question shown. */
void sup_tty_refuse(struct sup_run *r, struct sup_pending *p, const char *why, int err);
/* Ctrl-C at a question: refuses the request shown. False when no question
 * holds the terminal. */
bool sup_tty_cancel(struct sup_run *r);

/* ---- the terminal's foreground (fg.c) ---------------------------------- */

/* What a question on the terminal took, to be given back. */
struct sup_fg {
	pid_t saved_pgrp;     /* the foreground group before the question */
	struct termios modes; /* the terminal's modes before it */
	bool have_modes;
	bool moved; /* warden moved the foreground to its own group */
	bool held;
};
/* Takes terminal |fd| for a question; |move|: warden may move the
 * foreground (it gave the agent the terminal at start). */
void sup_fg_take(struct sup_fg *fg, int fd, bool move);
/* Gives it back: modes, then the foreground to the group that had it, or
 * to |agent_pgrp| when that group is gone; continues both. */
void sup_fg_give_back(struct sup_fg *fg, int fd, pid_t agent_pgrp);
/* At exit: restores the modes of a terminal still held. */
void sup_fg_release(struct sup_fg *fg, int fd);
/* Whether warden's process group is the foreground of terminal |fd|: the
 * only time warden may read it. */
bool sup_fg_ours(int fd);

/* ---- interrupts while requests wait (interrupt.c) ---------------------- */

/* warden got |si| (SIGINT, SIGTERM, SIGHUP, SIGQUIT): passes it to the
 * agent's group and refuses every waiting request; Ctrl-C typed at a
 * question cancels that question instead. */
void sup_interrupt_signal(struct sup_run *r, const struct signalfd_siginfo *si);
/* Refuses each waiting request whose caller has an interrupt pending (a
 * Ctrl-C reached its group). Returns how long the loop may sleep: |wait|,
 * shortened while requests wait. */
int sup_interrupt_poll(struct sup_run *r, int wait);

/* ---- the judge (judging.c) --------------------------------------------- */

struct sup_judge;
/* Sets up the judge from the environment and the config; none configured
 * leaves r->judge NULL (every undecided request escalates). 0 or -errno. */
int sup_judge_init(struct sup_run *r);
void sup_judge_free(struct sup_run *r);
/* Sends |rq| to the judge; its verdict comes back through
 * sup_judge_verdict(). False when there is no judge or the call could not
 * start: the caller escalates. */
bool sup_judge_submit(struct sup_run *r, struct sup_request *rq);
/* The pipeline's continuation after the judge (pipeline.c). Takes |rq|. */
void sup_judge_verdict(struct sup_run *r, struct sup_request *rq, int outcome, const char *reason,
		       const char *judge_json, enum pol_source source);
/* A request arrived (turns end after --turn-idle of silence). */
void sup_judge_touch(struct sup_run *r);
/* A person answered: the next call starts a new turn. */
void sup_judge_person_answered(struct sup_run *r);
/* Appends a decided request to the judge's history. */
void sup_judge_record(struct sup_run *r, const struct sup_request *rq, bool allowed,
		      enum pol_source source, const char *decided_by, const char *note);
uint64_t sup_judge_calls(const struct sup_run *r);

/* ---- stats (stats.c) ---------------------------------------------------- */

void sup_stats_add(struct sup_stats *s, enum pol_source source, int64_t ns);
void sup_stats_print(const struct sup_stats *s, FILE *out);
/* All of --stats at the end of run |r| (stats.c). */
void sup_stats_print_run(const struct sup_run *r, FILE *out);
void sup_stats_free(struct sup_stats *s);

/* ---- leaves shared by the supervisor and the commands ------------------- */

/* Loads the permissions.json at |path| (config_load.c); with |missing_ok|,
 * no file is the built-in config. Prints every problem (file:line: key: what to do) on
 * stderr and returns -EINVAL for a bad file. Caller frees *out. */
int sup_config_load(const char *path, bool missing_ok, struct pol_config **out);
/* Reads the config file at |path| without following a final symlink or
 * blocking on a FIFO, refusing anything but a regular file (checked on the
 * descriptor read). Caller frees *text. 0 or -errno, after saying why on
 * stderr except for -ENOENT. */
int sup_config_read(const char *path, char **text, size_t *len);

/* Opens the audit of the project in |dir| (or |audit| when given) for the
 * commands that read it (audit_open.c), saying on stderr what to do when there is none.
 * 0 or -errno. */
int sup_open_audit(const char *dir, const char *audit, struct sto_db **db);
/* The quick check of the audit at session start (audit_cmd.c), bounded in
 * time; says on stderr what is damaged and what to do. 0 or -errno. */
int sup_audit_sound(struct sto_db *db);
int sup_cmd_sessions(int argc, char **argv);

/* pager.c: output for a person at a terminal. */
struct sup_pager {
	pid_t pid;    /* the pager, 0: none */
	size_t width; /* the terminal's columns, 0 when stdout is not a terminal */
};
/* When stdout is a terminal: measures it and, when |allow|, starts $PAGER
 * (or less -FRX when PAGER is unset; none when it is empty or "cat") and
 * points stdout into it. */
void sup_pager_start(struct sup_pager *pg, bool allow);
/* Ends the output into the pager and waits for the person to quit it. */
void sup_pager_end(struct sup_pager *pg);
/* Parses a count of rows given to option |opt| (1 .. 10^9, digits only);
 * on bad input says so on stderr, naming |opt|, and returns -EINVAL. */
int sup_parse_count(const char *opt, const char *s, size_t *out);
/* |s| made safe for a terminal (wd_sanitize) and cut to |width| columns
 * (0: whole), ending in "…" when cut. Caller frees. */
char *sup_fit_line(const char *s, size_t width);

/* The people's decisions read from the audit (advice.c), strings owned. */
struct sup_records {
	struct pol_mem_record *v;
	size_t n;
};
/* sto_people_decisions()'s callback: appends |row| to |arg|, a sup_records. */
int sup_records_take(const struct sto_row *row, void *arg);
void sup_records_free(struct sup_records *rs);
/* Approval memory for a pending request (advice.c): the summary line
 * ("3 similar: 2 approved, 1 denied (by ann)") and the JSON context, from
 * the latest people's decisions in |db|. Advice only. 0 or -errno; caller
 * frees both. */
int sup_memory_advice(struct sto_db *db, const struct pol_request *req, char **summary,
		      char **json);

/* ---- command lines (cli.c) ---------------------------------------------- */

/* After getopt_long (opterr = 0, optstring starting with ':') returned |c|,
 * '?' or ':': one line on stderr, "warden CMD: unknown option --x; try
 * warden CMD --help" (or "option --x needs a value"). */
void sup_opt_error(const char *cmd, int c, char *const *argv);
/* Whether |arg| is -h or --help. */
bool sup_is_help(const char *arg);

/* ---- the project of warden run (project.c) ----------------------------- */

/* Canonicalises |arg| into |out| (PATH_MAX bytes) and checks that it is a directory warden
 * can read. 0, or -errno with a sentence naming the project in *err. */
int sup_project_dir(const char *arg, char *out, char **err);
/* -EPERM with a sentence in *err when |project| is / or a home directory
 * of the person (or a directory above one): the agent would see all of it. */
int sup_project_guard(const char *project, char **err);
/* -ENOTDIR with a sentence naming it in *err when |project|'s .warden
 * exists and is not a real directory (a symlink, by lstat), or when a file
 * warden writes or reads in it (audit.db and SQLite's files beside it,
 * permissions.json) is a symlink; 0 when .warden is missing. Called before
 * the config is read. */
int sup_warden_dir_check(const char *project, char **err);
/* Creates |project|'s .warden/ (0700) when it is missing, and a .gitignore
 * in it that keeps the audit out of git when warden created .warden/ or is
 * about to create its first audit.db there and there is none. Never
 * replaces a file; a failure is only warned about (the caller's own steps
 * say what is wrong with .warden/). */
void sup_warden_dir_prepare(const char *project);
/* Whether the canonical directory |cwd| is |project| or inside it. */
bool sup_path_within(const char *cwd, const char *project);

/* ---- the summary at exit (summary.c) ------------------------------------ */

/* "warden: 41 allowed, 3 refused, 1 asked; warden audit --session ID" on
 * stderr, counted from the session's rows in the audit (asked: put to a
 * person). */
void sup_print_summary(struct sup_run *r);

/* ---- commands ------------------------------------------------------------ */

int sup_cmd_run(int argc, char **argv);
int sup_cmd_audit(int argc, char **argv);
int sup_cmd_doctor(int argc, char **argv);
int sup_cmd_config(int argc, char **argv); /* config_check.c */
/* warden config check [PATH]: argv[0] is "check". */
int sup_config_check(int argc, char **argv);
int sup_cmd_explain(int argc, char **argv);

int sup_cmd_rules(int argc, char **argv); /* rules_cmd.c: rules propose|accept */

/* ---- explain --open (openq.c) --------------------------------------------- */

/* Where an open goes in a session, by the view's rules (sandbox/view_rules.c)
 * and the outside places run.c mounts. */
enum sup_open_route {
	SUP_OPEN_FREE,	    /* no decision: the kernel (and the view) let it through */
	SUP_OPEN_DECIDED,   /* the view asks warden: |decision| is the pipeline's start */
	SUP_OPEN_READ_ONLY, /* write-protected: EROFS, nobody is asked */
	SUP_OPEN_HIDDEN,    /* the agent does not see it */
	SUP_OPEN_LANDLOCK,  /* a write outside every writable place: EACCES */
};
struct sup_open_answer {
	enum sup_open_route route;
	bool decided;		      /* |decision| is set (route SUP_OPEN_DECIDED) */
	struct pol_decision decision; /* pol_decide() of the view's request */
	char why[512];		      /* where the open goes, and why */
	char *path;		      /* the absolute path resolved */
	char *summary;		      /* the request's summary ("read .env") */
};
/* Answers for an open of |path| (relative to |project|, a real path, or
 * absolute) with |access| (enum pol_access). 0, or -EINVAL for an empty
 * path. Free with sup_open_answer_free(). */
int sup_open_question(const struct pol_config *cfg, const char *project, const char *path,
		      unsigned access, struct sup_open_answer *out);
void sup_open_answer_free(struct sup_open_answer *a);
/* What tier |t| does with an undecided request ("passive: refused"). */
const char *sup_tier_outcome(enum pol_tier t);

/* ---- the host's own addresses (netaddr.c) ---------------------------------- */

/* Whether the kernel routes |addr| (network order: 4 bytes for AF_INET,
 * 16 for AF_INET6; an IPv4-mapped IPv6 address is taken as its IPv4
 * address) to this host, in the calling thread's network namespace (which
 * must be the agent's): loopback (127.0.0.0/8, ::1), unspecified (0.0.0.0/8,
 * ::), or an address the kernel accepts as its own (a fresh UDP socket of
 * that family binds to addr:0; an IPv6 link-local address is tried with
 * each interface's scope). What it fails to ask (no socket, another
 * family) counts as local: the safe side, refused unless listed. Also
 * broadcast and multicast IPv4 addresses, which a UDP socket may bind,
 * count as local. Opens and closes one descriptor (O_CLOEXEC) per try;
 * safe from any thread; never blocks. The answer holds until the host's
 * addresses change, which the agent cannot do (no CAP_NET_ADMIN). */
bool sup_addr_local(int family, const uint8_t *addr);

/* ---- project grants (grant_write.c) ---------------------------------------- */

/* Adds a persistent grant for |req| (by |who|, at |at_us|) to the config
 * file |path| as a textual insertion that keeps the rest of the file byte
 * for byte (a new file when there is none), checked by parsing the result
 * (the old config plus this grant, nothing else) before an atomic rename.
 * 0 and *shown (the grant's JSON; caller frees), or -errno and *err. */
int sup_grant_write(const char *path, const struct pol_request *req, const char *who, int64_t at_us,
		    char **shown, char **err);

/* ---- the desk's table (wrap.c) ---------------------------------------------- */

/* Prints |text| wrapped to |width| columns (at least 10), each line after
 * the first preceded by |indent| spaces, and a newline: breaks between
 * words; a word longer than a line is cut and each cut line ends in "…". */
void sup_wrap(FILE *out, const char *text, int indent, int width);
/* The width of the terminal on |fd|, else $COLUMNS, else 80. */
int sup_term_width(int fd);

#endif
