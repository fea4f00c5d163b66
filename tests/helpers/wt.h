/*
 * wt: helpers for integration tests that run the real warden binary:
 * temporary projects, running warden with captured output (optionally on a
 * pseudo-terminal), and reading the audit it wrote.
 */
#ifndef WARDEN_WT_H
#define WARDEN_WT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Skips the whole test program (exit 77) with a reason when the machine
 * cannot run warden (no seccomp notify, no ptrace). */
void wt_require_sandbox(void);

/* Creates a fresh project directory under /tmp. Caller frees. */
char *wt_project(void);
/* A fresh directory /tmp/warden-TAG-home-XXXXXX made the HOME of this
 * process and of what it runs. Caller frees and removes. */
char *wt_home(const char *tag);
/* A fresh directory outside /tmp (which is the agent's, and may be private
 * to it), mode 0755: /var/cache/warden-TAG-XXXXXX. Caller frees and
 * removes. */
char *wt_outside_dir(const char *tag);

/* The usual cmocka fixture: a fresh project with a README and the path its
 * audit will have. wt_fx_setup/wt_fx_teardown are cmocka's setup and
 * teardown; teardown removes the project. */
struct wt_fx {
	char *proj;
	char *db;
};
int wt_fx_setup(void **state);
int wt_fx_teardown(void **state);

/* How many descriptors this process has open (entries of /proc/self/fd,
 * counting the one that reads it). */
int wt_count_fds(void);
/* The whole of a file of at most 1 MiB, "" when it cannot be read (a
 * /proc file refuses a read much larger than that). Caller frees. */
char *wt_slurp(const char *path);
/* Copies |from| to |to| with |mode|; exits the test on any failure. */
void wt_copy_file(const char *from, const char *to, mode_t mode);
/* For tests that run warden as another user: exits 77 (skipped) unless
 * running as root with unprivileged user namespaces allowed, then copies
 * warden into a fresh 0755 directory named after |tag| that user can
 * reach, points WARDEN_BIN at the copy and returns the directory (caller
 * removes it with wt_rmtree). */
char *wt_userns_warden(const char *tag);
/* Writes |text| to |dir|/|name| (creating parent dirs). */
void wt_write(const char *dir, const char *name, const char *text);
/* Removes a directory tree. */
void wt_rmtree(const char *dir);

struct wt_result {
	int status; /* warden's exit code */
	char *out;  /* captured stdout */
	char *err;  /* captured stderr */
};
void wt_result_free(struct wt_result *r);

/* Runs `warden ARGS...` (NULL-terminated) in |cwd| with stdin from
 * /dev/null, waits, captures output. */
void wt_warden(const char *cwd, struct wt_result *res, ...) __attribute__((sentinel));
void wt_wardenv(const char *cwd, char *const argv[], struct wt_result *res);
/* Runs in warden's process before it execs warden (after the chdir), so
 * that warden starts inside what it set up (a seccomp filter, a mount
 * namespace, other credentials) and cannot leave it. 0 or -errno; a
 * failure exits 99 with its reason on the captured stderr. */
typedef int (*wt_prep_fn)(const void *arg);
/* wt_wardenv() with |prep| (NULL: none) and, when |timeout_ms| > 0, a
 * bound: a warden still running then is killed and its status is -1. */
void wt_wardenv_prep(const char *cwd, char *const argv[], wt_prep_fn prep, const void *arg,
		     int timeout_ms, struct wt_result *res);

/* Starts `warden ARGS...` on a new pseudo-terminal (its controlling
 * terminal). Returns the pid; *master is the pty master (O_CLOEXEC). */
pid_t wt_warden_pty(const char *cwd, char *const argv[], int *master);
/* Reads from |fd| until |needle| appears or |ms| pass. Returns true when
 * found; the text read is appended to *acc (caller frees). */
bool wt_expect(int fd, const char *needle, int ms, char **acc);

/* Counts audit rows of |db| where every non-NULL condition holds
 * (substring match on summary and reason, exact on the others; a summary
 * condition starting with '=' matches exactly). */
int wt_audit_count(const char *db, const char *decision, const char *source,
		   const char *summary_sub, const char *reason_sub);
/* Total rows in the audit. */
int wt_audit_rows(const char *db);
/* Returns the path of a helper program built in tests/ (caller frees). */
char *wt_helper(const char *name);
/* The warden binary under test. */
const char *wt_bin(void);

/* A memfd that captures a child's stdout or stderr, in O_APPEND mode: a
 * memfd's file position is not locked across processes, so without it two
 * processes that write at once (50 background echoes) overwrite each
 * other's lines. */
int wt_capture_fd(const char *name);

/* A warden started in the background (stdin /dev/null, no controlling
 * terminal, so --prompt defaults to the desk), its stdout and stderr
 * captured, so that the test can act as a second terminal meanwhile. */
struct wt_bg {
	pid_t pid; /* 0 once waited for */
	int out, err;
};
void wt_warden_bg(const char *cwd, char *const argv[], struct wt_bg *bg);
/* What it wrote to stdout / stderr so far (caller frees). */
char *wt_bg_out(const struct wt_bg *bg);
char *wt_bg_err(const struct wt_bg *bg);
/* Waits at most |ms| for its stderr to contain |needle|. */
bool wt_bg_expect_err(const struct wt_bg *bg, const char *needle, int ms);
/* The session id it announced ("warden: session ID ..."), waiting at most
 * |ms|; NULL if none (caller frees). */
char *wt_bg_session(const struct wt_bg *bg, int ms);
/* Waits at most |ms| for it to exit and fills |res| (status -1 and a
 * SIGKILL when it did not exit in time); closes the captures. Returns
 * whether it exited by itself. */
bool wt_bg_wait(struct wt_bg *bg, int ms, struct wt_result *res);

/* Audit rows matching every non-NULL field (as wt_audit_count, plus: the
 * note contains |note_sub|, decided_by equals |decided_by|, the row is of
 * |session|). */
struct wt_audit_q {
	const char *decision, *source, *summary_sub, *reason_sub;
	const char *note_sub, *decided_by, *session;
	const char *request_sub; /* a substring of the request's JSON */
};
int wt_audit_match(const char *db, const struct wt_audit_q *q);

#endif
