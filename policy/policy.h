/*
 * policy: warden's pure decision library: the request model, the project
 * config (.warden/permissions.json), sensitive markers, command
 * classification, hard deny, grants and rules, the fast path, process-tree
 * coverage, approval memory and the agent harnesses' shapes.
 *
 * It does no I/O beyond the text it is handed, reads no clock (time is a
 * parameter), never logs and never exits. Everything it returns is owned by
 * the caller unless a prototype says otherwise.
 *
 * See docs/design.md, section "Policy".
 */
#ifndef WARDEN_POLICY_H
#define WARDEN_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the request model ------------------------------------------------ */

/* What a request asks for. Each kind is one entry of policy's table
 * (kinds.c), of the supervisor's (supervisor/kinds.c) and of the judge's
 * (judge/kinds.c). POL_CONNECT: a connection to an IP destination (see
 * "the network" below); a Unix socket outside the sandbox is audited with
 * this kind too, decided at the boundary with no pol_request. POL_KIND_COUNT is not a kind: the
 * number of them, for tables and loops. */
enum pol_kind { POL_EXEC, POL_OPEN, POL_CONNECT, POL_KIND_COUNT };

/* The audit's name of a kind ("exec", "open", "connect"), and back. 0 or
 * -EINVAL. */
const char *pol_kind_name(enum pol_kind k);
int pol_kind_parse(const char *s, enum pol_kind *out);

/* Access bits of an open request. */
enum pol_access {
	POL_ACC_READ = 1u << 0,
	POL_ACC_WRITE = 1u << 1,
	POL_ACC_CREATE = 1u << 2,
	POL_ACC_DELETE = 1u << 3,
	POL_ACC_RENAME_FROM = 1u << 4,
	POL_ACC_RENAME_TO = 1u << 5,
	POL_ACC_LINK = 1u << 6,
	POL_ACC_SYMLINK = 1u << 7,
	/* Changes to an existing object's metadata or size, decided for
	 * sensitive and control files (chmod, chown, utimes, setxattr or
	 * removexattr, truncate by name). */
	POL_ACC_CHMOD = 1u << 8,
	POL_ACC_CHOWN = 1u << 9,
	POL_ACC_UTIMES = 1u << 10,
	POL_ACC_XATTR = 1u << 11,
	POL_ACC_TRUNCATE = 1u << 12,
	POL_ACC_LAST = POL_ACC_TRUNCATE, /* the highest bit */
};

struct pol_request; /* opaque */

/* The description of an exec as the decoder read it. Every string is copied
 * by pol_request_exec(); NULL where unknown. */
struct pol_exec_desc {
	const char *path;	    /* absolute path the program was found at */
	const char *interp;	    /* the "#!" interpreter when path is a script, else NULL */
	char *const *argv;	    /* NULL-terminated */
	char *const *envp;	    /* NULL-terminated; may be NULL */
	const char *cwd;	    /* absolute cwd of the caller */
	const char *parent_cmdline; /* the calling process's command line, shell-quoted */
	/* The final file after every symlink of |path|, or NULL when |path|
	 * is that file (or it is unknown). */
	const char *resolved;
	/* Set when the program's file, a symlink on the way to it or a
	 * directory above them is one the agent can have written (it lies in
	 * a place the agent may write, or belongs to someone else than root or
	 * the invoking user): no allowance by name may then apply. |why| says
	 * where, for explain and the audit (copied; may be NULL). */
	bool agent_writable;
	const char *agent_writable_why;
	/* The file a Codex wrapper sources (pol_codex_snapshot_path()) and its
	 * text, as the caller would read it; NULL when not read. Copied. */
	const char *harness_path;
	const char *harness_file;
};

/* Builds an exec request. |project| is the absolute project root (copied);
 * paths inside it are shown relative to it. Returns NULL and sets errno on
 * a bad description (no argv, no path). Caller frees with pol_request_free(). */
struct pol_request *pol_request_exec(const struct pol_exec_desc *d, const char *project);

/* Builds an open request. |path| is relative to the project or absolute
 * outside it; |access| is a mask of enum pol_access; |cmdline| is the
 * requesting process's command line (may be NULL). |path2| is the other side
 * of a rename or link (NULL otherwise). Copies all strings. */
struct pol_request *pol_request_open(const char *path, const char *path2, unsigned access,
				     const char *cmdline);

void pol_request_free(struct pol_request *r);

enum pol_kind pol_request_kind(const struct pol_request *r);

/* An exec's final file after symlinks (NULL when the path is that file or
 * for an open), and whether the agent can have written the program (with
 * why, or NULL). Pointers valid while |r| lives. */
const char *pol_request_resolved(const struct pol_request *r);
bool pol_request_agent_writable(const struct pol_request *r, const char **why);

/* True when the exec's environment carries a variable that changes what a
 * program runs (LD_PRELOAD, BASH_ENV, GIT_CONFIG*, ...). */
bool pol_request_env_changes_program(const struct pol_request *r);

/* Stable JSON (keys in a fixed order, no whitespace) for the audit and the
 * judge, with secret-looking values redacted ("<redacted>"): values of
 * secret-named --options and VAR=value assignments, URL credentials,
 * Authorization headers, long high-entropy tokens. Environment variables are
 * included only when they change what a program runs (LD_PRELOAD, ...), and
 * then redacted if secret-named. Caller frees. */
char *pol_request_json(const struct pol_request *r);

/* A one-line human summary: the shell-quoted, redacted command line for an
 * exec ("rm -rf /"); for an open its verbs joined by '+' and the path:
 * "read .env", "write a/b", "delete .env", "chmod .env", "rename .env -> x"
 * (both rename bits say "rename"). Caller frees. */
char *pol_request_summary(const struct pol_request *r);

/* ---- the project config ------------------------------------------------ */

enum pol_tier { POL_TIER_UNSET, POL_TIER_AGGRESSIVE, POL_TIER_STANDARD, POL_TIER_PASSIVE };

/* "aggressive", "standard" or "passive" (unset reads as "standard", the
 * default), and back: 0, or -EINVAL for any other string. */
const char *pol_tier_name(enum pol_tier t);
int pol_tier_parse(const char *s, enum pol_tier *out);

struct pol_config; /* opaque */

/* One problem found in a config file: a sentence a person can act on. */
struct pol_config_error {
	int line;      /* 1-based line of the offending key or value, 0 if unknown */
	char key[128]; /* the JSON path of the key, e.g. "rules[2].match" */
	/* What is wrong and what to do, ready to print: it starts with
	 * "FILE:LINE: KEY: " (FILE is the |filename| given to the parser;
	 * ":LINE" is left out when the line is unknown). */
	char message[384];
};

struct pol_config_errors {
	struct pol_config_error *items;
	size_t count;
};
void pol_config_errors_free(struct pol_config_errors *e);

/* The built-in config: no rules, no grants, the built-in markers, .warden/
 * write-protected, tier unset. Caller frees with pol_config_free(). */
struct pol_config *pol_config_default(void);

/* Parses the text of a permissions.json. |filename| is used in messages only.
 * On success returns 0 and *out (caller frees). On any problem returns
 * -EINVAL, sets *out to NULL and fills *errs with every problem found (not
 * just the first); caller frees *errs with pol_config_errors_free(). */
int pol_config_parse(const char *text, size_t len, const char *filename, struct pol_config **out,
		     struct pol_config_errors *errs);

void pol_config_free(struct pol_config *c);

/* Sets the absolute project root and the user's home directory (both copied):
 * hard deny and relative paths depend on them. */
void pol_config_set_paths(struct pol_config *c, const char *project, const char *home);

/* Another home the "~/" outside places apply to (the invoking user's
 * passwd home, SUDO_USER's): copied; ignored when not absolute or already
 * known. */
void pol_config_add_home(struct pol_config *c, const char *home);

enum pol_tier pol_config_tier(const struct pol_config *c);

/* Serialises the config back to JSON, 2-space indented (for `warden rules
 * accept` and `approve --always --project`). Caller frees. */
char *pol_config_to_json(const struct pol_config *c);

/* Adds a persistent project grant for |r| (exact argv, or exact path and
 * access), recording |by| and |at_us|. 0 or -errno. */
int pol_config_add_grant(struct pol_config *c, const struct pol_request *r, const char *by,
			 int64_t at_us);
/* How many persistent grants |c| has, and grant |i| as one line of JSON,
 * as pol_config_to_json() writes it in "grants" (NULL past the end).
 * Caller frees. */
size_t pol_config_grant_count(const struct pol_config *c);
char *pol_config_grant_json(const struct pol_config *c, size_t i);

/* ---- sensitive resources ---------------------------------------------- */

/* True when |path| (relative or absolute) matches a sensitive marker: the
 * built-in list plus the config's sensitive_resources, case-insensitive
 * substring of the whole path; a file whose own name (the last component)
 * contains ".env.example" is exempt, a directory of that name exempts
 * nothing below it. If |marker| is not NULL it receives the marker that
 * matched (a pointer into |c|, valid while |c| lives). |c| may be NULL for
 * the built-in list only. */
bool pol_is_sensitive(const struct pol_config *c, const char *path, const char **marker);

/* True when renaming a directory from |from| to |to| can change whether
 * something below it is sensitive: for some relative |s|, "from/s" and
 * "to/s" differ in pol_is_sensitive(). Exact for the markers (see
 * sensitive.c); never false when they could differ. */
bool pol_sensitive_below_differs(const struct pol_config *c, const char *from, const char *to);

/* True when |path| (relative to the project) is a control file: one the
 * host runs code from later without anyone running the project (git's
 * config and hooks, .envrc, editor tasks, ...): the built-in list plus the
 * config's control_files, gitignore-like globs (a pattern without '/'
 * matches a name at any depth, "**" any number of directories, "!" excludes;
 * the last matching pattern wins). |pattern| receives the pattern that
 * matched (valid while |c| lives; built-in ones always). |c| may be NULL. */
bool pol_is_control(const struct pol_config *c, const char *path, const char **pattern);

/* True when renaming a directory from |from| to |to| can change whether
 * something below it is a control file (never false when it could). */
bool pol_control_below_differs(const struct pol_config *c, const char *from, const char *to);

/* True when |path| (relative to the project) is write-protected: .warden/ and
 * everything under it, and the config's write_protected globs. */
bool pol_is_write_protected(const struct pol_config *c, const char *path);

/* ---- session state ----------------------------------------------------- */

struct pol_session; /* opaque: session grants ("always" approvals) */
struct pol_session *pol_session_new(void);
void pol_session_free(struct pol_session *s);
/* Grants exactly |r| (same program path and argv, or same path and access)
 * for the rest of the session. Copies what it needs from |r|. */
void pol_session_grant(struct pol_session *s, const struct pol_request *r);

/* ---- deciding ---------------------------------------------------------- */

enum pol_verdict {
	POL_DENY_CRITICAL, /* hard deny: no rule, judge, tier or person can allow */
	POL_DENY,	   /* a deny rule of the config */
	POL_ALLOW,
	POL_ASK,       /* an "ask" rule: skip the judge, go to the tier */
	POL_UNDECIDED, /* to the judge, then the tier */
};

enum pol_source {
	POL_SRC_NONE,
	POL_SRC_HARD_DENY,
	POL_SRC_RULE,	       /* a config rule (allow/ask/deny) */
	POL_SRC_GRANT,	       /* a persistent project grant */
	POL_SRC_SESSION_GRANT, /* an "always" approval of this session */
	POL_SRC_ACCEPTED_RULE, /* an accepted confirm rule */
	POL_SRC_FAST_PATH,
	POL_SRC_COVERED, /* inside the tree of an allowed command */
	/* Decided by the supervisor, never by pol_decide(): */
	POL_SRC_STARTUP,     /* the agent's own start-up, by the person who ran it */
	POL_SRC_HARNESS,     /* the agent harness's own machinery */
	POL_SRC_JUDGE,	     /* the judge's verdict */
	POL_SRC_JUDGE_CACHE, /* the judge's verdict for the same request, reused */
	POL_SRC_TIER,	     /* the unattended tier */
	POL_SRC_USER,	     /* a person's answer */
	POL_SRC_TIMEOUT,     /* nobody answered before the deadline */
	POL_SRC_STOPPED,     /* the session or the caller stopped waiting */
	POL_SRC_LIMIT,	     /* too many opens waiting on the view */
	POL_SRC_DECODER,     /* the exec could not be read, or fails in the kernel */
	POL_SRC_REPEAT,	     /* the same exec refused a moment ago */
	POL_SRC_BOUNDARY,    /* a socket outside the sandbox */
	POL_SRC_INTEGRITY,   /* an exec that is not what was decided */
	POL_SRC_ERROR,	     /* the request could not be built */
};

/* The stable lower-case name of a source ("hard_deny", "fast_path", ...):
 * the audit's "source" column. pol_source_parse() reads one back: 0, or
 * -EINVAL for a name no source has. */
const char *pol_source_name(enum pol_source s);
int pol_source_parse(const char *s, enum pol_source *out);
const char *pol_verdict_name(enum pol_verdict v);

/* What the supervisor knows about the caller's process tree. */
struct pol_context {
	bool covered;	   /* an ancestor's allowed command covers this process */
	bool review;	   /* a review run: sensitive reads skip the sensitive branch */
	bool no_fast_path; /* the FUSE view: sensitive opens never take the fast path */
};

struct pol_decision {
	enum pol_verdict verdict;
	enum pol_source source;
	/* Whether an allowed exec covers the process tree it starts (docs/design.md,
	 * section "Process trees"): false for the fast path, for a shell that reads
	 * commands from a terminal or pipe (no -c), and for a script. The
	 * supervisor applies this to any later allowance of the same request
	 * too (judge, tier, person). */
	bool covers;
	/* Why, in a sentence a person understands ("rm -r on / destroys the
	 * system"). */
	char reason[320];
	/* What matched: the rule, marker or pattern ("rules[0]", ".env",
	 * "rm -rf /"). Empty when nothing did. */
	char matched[160];
};

/* Decides |r| in this order: hard deny; config deny rules; session
 * grants, project grants, accepted rules and allow/ask rules; coverage;
 * the fast path; otherwise undecided. |s| may be NULL. |now_us| is realtime
 * µs (review dates of accepted rules). Never fails: an internal problem
 * yields POL_UNDECIDED with a reason. */
void pol_decide(const struct pol_request *r, const struct pol_config *c,
		const struct pol_session *s, const struct pol_context *ctx, int64_t now_us,
		struct pol_decision *out);

/* Whether an allowed |r| would cover the tree it starts (see covers above). */
bool pol_exec_covers(const struct pol_request *r);

/* ---- classification, for `warden explain` and tests ------------------- */

enum pol_class {
	POL_CLASS_READ_ONLY, /* fast-path eligible */
	POL_CLASS_OTHER,     /* needs a decision */
	POL_CLASS_CRITICAL,  /* hard deny */
};

struct pol_classification {
	enum pol_class cls;
	char reason[320];
	char matched[160];
};

/* Classifies an argv (with optional envp) as the fast path and hard deny see
 * it, unwrapping sh -c, env, sudo, nice, timeout, xargs. |c| may be NULL. */
/* What classification parsed for the exec request |r| under |c| (may be
 * NULL): the names the program answers to, and for every command inside it
 * (wrappers, shells' scripts) the options that matched the program's table,
 * the value each took, the operands and the word that could not be placed.
 * One line per command, for `warden explain`. Caller frees; NULL for an
 * open request. */
char *pol_explain_grammar(const struct pol_request *r, const struct pol_config *c);

void pol_classify_argv(char *const argv[], char *const envp[], const struct pol_config *c,
		       struct pol_classification *out);

/* ---- additions: settings other modules read from the config ------------ */

/* Places outside the project: hidden from the agent (~/.ssh, ~/.aws, ...),
 * gated (a read-only view in which every open is a request), seen through
 * a markers view (the home: the sensitive markers decide opens as in the
 * project, everything else passes through), or left open (a built-in
 * place the config turns off). */
enum pol_outside_mode {
	POL_OUTSIDE_HIDE,
	POL_OUTSIDE_GATE,
	POL_OUTSIDE_MARKERS,
	POL_OUTSIDE_OPEN,
};

/* "hide", "gate", "markers" or "open". */
const char *pol_outside_mode_name(enum pol_outside_mode m);

/* The absolute paths Landlock lets the agent write (config "writable"), in
 * file order. Pointers into |c|, valid while |c| lives. */
size_t pol_config_writable_count(const struct pol_config *c);
const char *pol_config_writable(const struct pol_config *c, size_t i);
/* The places under /tmp, /var/tmp or /dev/shm shared with the host inside
 * the session's private ones (config "tmp": {"share": [...]}), absolute
 * and clean. */
size_t pol_config_tmp_share_count(const struct pol_config *c);
const char *pol_config_tmp_share(const struct pol_config *c, size_t i);
/* Whether |path| may be shared into the private temporary directories
 * (tmp.share, --share-tmp): an absolute path, clean (no "//", ".", ".."
 * or trailing "/"), strictly below /tmp, /var/tmp or /dev/shm. */
bool pol_tmp_share_valid(const char *path);

/* The outside places: the built-in list (the home as "markers", its token
 * files, cloud and CLI credentials, histories and the system's secrets as
 * "hide") followed by the config's "outside" entries; a later entry for the
 * same path wins. A leading "~/" is expanded for the home
 * pol_config_set_paths() gave and for each pol_config_add_home() (one entry
 * per home), else returned as written. Returns NULL past the end. Pointer valid while |c|
 * lives and until the next pol_config_set_paths(). */
size_t pol_config_outside_count(const struct pol_config *c);
const char *pol_config_outside(const struct pol_config *c, size_t i, enum pol_outside_mode *mode);

/* The config's "judge" object. Strings point into |c|; NULL / 0 when the
 * config does not set them (the environment decides then). Returns false
 * when the config has no "judge" key at all. */
struct pol_judge_settings {
	const char *url;
	const char *model;
	int timeout_ms;
	int connect_timeout_ms;
};
bool pol_config_judge(const struct pol_config *c, struct pol_judge_settings *out);

/* ---- approval memory --------------------------------------------------- */

/*
 * Memory is advice: it shows a person what people decided before on similar
 * requests and proposes confirm rules from that history. Nothing here ever
 * allows a request by itself; only an accepted rule that a person wrote into
 * accepted_rules (pol_decide() step 2) does.
 *
 * A request's arguments, for memory, are a JSON object: an exec is
 * {"program": <resolved path>, "arg1": ..., "argN": ..., "cwd": ...} (an
 * argument that reads as a plain decimal number, such as 15 or -2.5, is a
 * number; "arg0" is added only when argv[0] is not the program's own name,
 * as for busybox applets; "env" is added, as a nested object, only when a
 * run-changing variable is set), an open is {"path": ..., "access":
 * "read"|"write+create"|...} plus "path2" for a rename or link. The values
 * are the audit's redacted ones. The tool is "exec:<program>" or "open".
 */

/* One past decision, as the store supplies it. Strings are borrowed. */
struct pol_mem_record {
	const char *request;	/* the audit's request JSON (pol_request_json()) */
	const char *source;	/* only "user" is a person's decision; "timeout",
				   "tier", ... are skipped */
	bool approved;		/* decision "allow" */
	bool edited;		/* approved with arguments changed by the person (warden
				   has no editing: the store always gives false) */
	const char *decided_by; /* the person */
	int64_t ts_us;		/* realtime µs */
};

/* The memory arguments and the tool of |r|, as described above. Caller frees
 * both. */
char *pol_mem_args_json(const struct pol_request *r);
char *pol_mem_tool(const struct pol_request *r);

/* The similarity of two argument objects (JSON texts) in [0, 1]: field by
 * field, nested up to three levels, 1 for an equal value, 0.5 for the same
 * field with another value, 0 for a field only one has; the mean over all
 * fields. Secret-named fields are skipped. -1 when a text is not an
 * object. */
double pol_mem_similarity(const char *args_a, const char *args_b);

struct pol_mem_context; /* opaque: counts, deciders, times, scores, names */

/* The similar past decisions for a request of |tool| with |args_json|: the
 * records a person decided (source "user"), of the same tool, whose
 * similarity is at least |min_similarity| (0.5 by default: pass a negative
 * value). Holds no argument value at all. Copies what it keeps. Returns
 * NULL when |args_json| is not an object. Caller frees with
 * pol_mem_context_free(). */
struct pol_mem_context *pol_mem_context_new(const char *tool, const char *args_json,
					    const struct pol_mem_record *recs, size_t n,
					    double min_similarity);
void pol_mem_context_free(struct pol_mem_context *m);
/* The number of similar decisions, and of approvals and denials among them. */
size_t pol_mem_context_count(const struct pol_mem_context *m, size_t *approved, size_t *denied);
/* "3 similar: 2 approved, 1 denied (by ann)", or "no similar decisions".
 * Caller frees. */
char *pol_mem_context_summary(const struct pol_mem_context *m);
/* {"similar":3,"approved":2,"denied":1,"deciders":["ann"],"min_similarity":0.5,
 * "decisions":[{"decision":"allow","decided_by":"ann","at":"...Z","score":0.875,
 * "equal_fields":["program","arg1","env.*"]}, ...]} with the 20 most similar
 * decisions (best first). Caller frees. */
char *pol_mem_context_json(const struct pol_mem_context *m);

/* For `warden approvals` and the tty prompt: the summary line and the JSON
 * context of |r| against |recs|, at the default similarity. 0, or -EINVAL
 * when the request cannot be described. Caller frees both. */
int pol_mem_advice(const struct pol_request *r, const struct pol_mem_record *recs, size_t n,
		   char **summary, char **json);

/* Proposed confirm rules: at most one per tool and argument shape. */
struct pol_propose_opts {
	size_t min_count;    /* approvals decided as-is needed (5) */
	size_t min_deciders; /* distinct people among them (2) */
	size_t max_denied;   /* denials and edited approvals allowed inside (0) */
	int review_days;     /* written into an accepted rule (90) */
};
/* clang-format off */
#define POL_PROPOSE_DEFAULTS {5, 2, 0, 90}
/* clang-format on */

struct pol_proposals; /* opaque list */
struct pol_proposal;  /* opaque: one proposal, owned by its list */

/* Proposes rules from |recs| (people's decisions; other sources skipped).
 * Pure data: proposing changes nothing. Caller frees with
 * pol_proposals_free(). */
struct pol_proposals *pol_propose(const struct pol_mem_record *recs, size_t n,
				  const struct pol_propose_opts *o);
void pol_proposals_free(struct pol_proposals *p);
size_t pol_proposals_count(const struct pol_proposals *p);
const struct pol_proposal *pol_proposals_get(const struct pol_proposals *p, size_t i);
/* The proposal with |id|, or NULL. */
const struct pol_proposal *pol_proposals_find(const struct pol_proposals *p, const char *id);

/* A stable id ("r-" and 12 hex digits, a hash of tool, shape and
 * conditions). Owned by the proposal. */
const char *pol_proposal_id(const struct pol_proposal *p);
const char *pol_proposal_tool(const struct pol_proposal *p);
/* Evidence: approvals as-is, distinct deciders, denials (and edited
 * approvals) inside and outside the bounds. */
void pol_proposal_evidence(const struct pol_proposal *p, size_t *approved, size_t *deciders,
			   size_t *denied_inside, size_t *denied_outside);
/* One line: exec:/usr/bin/make: program == "/usr/bin/make", arg1 in
 * ["build", "test"], 1 <= arg2 <= 8 (12 approved as-is by ann, bob; 0
 * denied inside, 1 outside). Caller frees. */
char *pol_proposal_describe(const struct pol_proposal *p);
/* Every condition, one a line, each starting with |indent|. Caller frees. */
char *pol_proposal_conditions(const struct pol_proposal *p, const char *indent);
/* The proposal as JSON: id, tool, fields, conditions, evidence, review_days,
 * describe. Caller frees. */
char *pol_proposal_json(const struct pol_proposal *p);
/* The accepted_rules entry a person's acceptance makes (2-space indented
 * JSON object: id, tool, conditions, accepted_at, accepted_by,
 * review_days). Caller frees. */
char *pol_proposal_accept(const struct pol_proposal *p, const char *by, int64_t at_us);

/* Adds the accepted rule |rule_json| to the text of a permissions.json
 * (|text| may be NULL or empty for a new file), replacing an entry with the
 * same id, keeping every other key and value. The result is validated: on
 * success returns 0 and *out (caller frees); on a problem -EINVAL with
 * *errs filled as pol_config_parse() does (caller frees). */
int pol_config_text_accept(const char *text, size_t len, const char *filename,
			   const char *rule_json, char **out, struct pol_config_errors *errs);

/* Whether an accepted rule of |c| covers the request: that tool, exactly
 * the covered non-secret fields, each inside its bounds with the same type,
 * before accepted_at + review_days. *index (may be NULL) gets the rule's
 * position in accepted_rules. pol_decide() applies this in step 2, never to
 * a hard-denied request. */
bool pol_accepted_covers(const struct pol_config *c, const struct pol_request *r, int64_t now_us,
			 size_t *index);
/* The same for a hand-made |tool| and |args_json| (tests, tools). */
bool pol_accepted_covers_args(const struct pol_config *c, const char *tool, const char *args_json,
			      int64_t now_us, size_t *index);

/* ---- end of approval memory --------------------------------------------- */

/* ---- agent harnesses --------------------------------------------------- */

/* The wrapper shapes of agent harnesses (harness_claude.c and harness_codex.c
 * have the exact grammar):
 *   POL_HARNESS_CLAUDE_CODE  bash -c "source HOME/.claude/shell-snapshots/
 *                            snapshot-bash-ID.sh 2>/dev/null || true &&
 *                            shopt -u extglob && eval 'CMD' < /dev/null &&
 *                            pwd -P >| /tmp/claude-HEX-cwd", character for
 *                            character; decided on CMD.
 *   POL_HARNESS_CODEX        bash -lc CMD (a generic shape: any program may
 *                            produce it; decided as any sh -c), or Codex's
 *                            snapshot wrapper (see pol_codex_shape()).
 *   POL_HARNESS_AIDER        sh -c CMD (generic too). */
enum pol_harness {
	POL_HARNESS_NONE,
	POL_HARNESS_CLAUDE_CODE,
	POL_HARNESS_CODEX,
	POL_HARNESS_AIDER,
};

/* "none", "claude-code", "codex", "aider". */
const char *pol_harness_name(enum pol_harness h);

/* What warden knows of a harness (profiles.c): one row per enum
 * pol_harness, static, never freed. */
struct pol_harness_profile {
	enum pol_harness harness;
	const char *name; /* as pol_harness_name() */
	/* The variables it needs to reach its model (its own API keys), kept
	 * although they look like secrets; NULL-terminated. */
	const char *const *env_keep;
	/* The places in HOME (relative) it writes: its configuration and
	 * session state; NULL-terminated. */
	const char *const *home_writable;
	/* The tail of its npm launcher script's canonical path, whose native
	 * child becomes the agent (pol_harness_launcher_child()), or NULL. */
	const char *launcher;
	/* Whether it runs per-call machinery of its own (Codex's set-up
	 * re-exec and wrapper: pol_codex_shape()) before a tool call. */
	bool call_machinery;
};
/* The profile of |h|; POL_HARNESS_NONE's (nothing kept, nothing
 * writable, no machinery) for a value out of range. */
const struct pol_harness_profile *pol_harness_profile(enum pol_harness h);

/* Which harness shape |argv| (NULL-terminated) is, by argv[0]'s program
 * name, with *inner set to the model's command (caller frees; NULL when
 * none). The Claude Code shape needs |c|'s home (pol_config_set_paths()):
 * with no |c| or no home it is never recognised. A hostile imitation (a
 * second eval, a quote broken out of, a snapshot elsewhere, another cwd
 * file, an extra && part) is POL_HARNESS_NONE.
 *
 * pol_decide() classifies a Claude Code wrapper on its inner command, and
 * when that is one plain command (no operator, redirect or expansion),
 * grants and rules match it as if it had been run alone: a grant of
 * {"make","-j2"} allows the wrapper around `make -j2`, and an allowed
 * wrapper covers what it starts. pol_request_summary() shows such a
 * wrapper as "[claude-code] CMD", and pol_request_json() adds
 * "harness":"claude-code","inner":"CMD" after "argv" (the wrapper's argv is
 * kept); the request knows the home from the exec's HOME variable, which
 * only selects what is shown: the decision uses the config's home. */
enum pol_harness pol_harness_unwrap(char *const argv[], const struct pol_config *c, char **inner);

/* Sets the resolved absolute path of the agent's own executable (copied;
 * NULL or a relative path clears it). Not part of the JSON config. An exec
 * of exactly that path whose argv[0] is "rg", "bfs" or "ugrep" is
 * classified as that tool: bfs with find's rules (-rm is -delete, so
 * `bfs ~ -delete` is a hard deny), ugrep with grep's (its --filter, --pager,
 * --view, --save-config and -Q are not read-only). A busybox binary is
 * classified as the applet argv[0] names. Any other program is classified
 * by what it is, whatever argv[0] says. */
void pol_config_set_agent_binary(struct pol_config *c, const char *path);

/* Whether |argv| is one of the start-up execs of harness |kind|, for the
 * supervisor to audit as start-up rather than judge. Claude Code's, exactly:
 *   bash -c env
 *   bash -c -l SCRIPT (or -l -c) where SCRIPT's first line is
 *     SNAPSHOT_FILE=HOME/.claude/shell-snapshots/snapshot-bash-ID.sh
 *     (HOME from |c|) and every write redirect of SCRIPT goes to
 *     "$SNAPSHOT_FILE", /dev/null or another fd (its body is otherwise not
 *     checked: apply this only to execs of the agent process itself)
 *   git ls-files
 *   git config --get remote.origin.url
 *   sh -c 'ps aux | grep WORDS [| grep WORDS]...' (plain words only)
 * argv[0] is matched by program name. False for every other kind. This
 * does not replace pol_decide(): a hard deny still refuses. */
bool pol_is_harness_startup(enum pol_harness kind, char *const argv[], const struct pol_config *c);

/* What a Codex exec of its own machinery is (harness_codex.c has the grammar):
 *   POL_CODEX_SETUP     X --codex-run-as-process-setup FD PID pipe "" CWD
 *                       PROG ARGV0 [ARG...]: Codex's binary re-run to set up
 *                       a tool call's process, which then execs PROG (decided
 *                       at that exec). The argv shape only: the supervisor
 *                       checks that X is the agent's own binary (its inode).
 *   POL_CODEX_WRAPPER   0.169.0's per-call wrapper, character for character:
 *                       /bin/bash -c SCRIPT that saves 56 variables, sources
 *                       HOME/.codex/shell_snapshots/THREAD.NS.sh, restores
 *                       them, prepends one PATH entry and ends with
 *                       exec '/bin/bash' -c Q(CMD); *inner is CMD.
 *   POL_CODEX_VALIDATE  bash -c 'set -e; . "HOME/.codex/shell_snapshots/
 *                       THREAD.tmp-NS"': Codex checking a snapshot it wrote.
 * The two shapes that source a snapshot count only when the request carries
 * that file's text (pol_exec_desc.harness_path/harness_file, read by the
 * supervisor as the caller would read it) and the text is inert
 * (pol_codex_snapshot_inert()). HOME is |c|'s. *inner points into |r|. */
enum pol_codex_shape {
	POL_CODEX_NONE,
	POL_CODEX_SETUP,
	POL_CODEX_WRAPPER,
	POL_CODEX_VALIDATE,
};
enum pol_codex_shape pol_codex_shape(const struct pol_request *r, const struct pol_config *c,
				     const char **inner);

/* The snapshot file an exec of argv would source, when argv is Codex's
 * wrapper or its validation shell (with |c|'s home); caller frees; NULL
 * otherwise. The supervisor reads that file for pol_exec_desc. */
char *pol_codex_snapshot_path(char *const argv[], const struct pol_config *c);

/* Whether |text|, a Codex shell snapshot, is only what Codex writes there
 * and nothing that runs code when sourced: comments, blank lines,
 * "unalias -a 2>/dev/null || true", shopt -s/-u NAME, set -o NAME for a
 * few options that run nothing (not xtrace: PS4 would expand), and
 * declare -x NAME[="VALUE"] with VALUE as declare -p quotes it (nothing
 * expands). A function, an alias, any other command: false. NULL: false. */
bool pol_codex_snapshot_inert(const char *text);

/* Whether |resolved| (a canonical path) is the native binary that the
 * launcher |launcher| (the canonical path of the agent's own program) of
 * harness |kind| starts: for Codex, launcher NM/@openai/codex/bin/codex.js
 * and the binary NM/@openai/codex-linux-{x64,arm64}/vendor/TRIPLE/bin/codex,
 * the same below NM/@openai/codex/node_modules/@openai/, or
 * NM/@openai/codex/vendor/TRIPLE/bin/codex (where 0.169.0's launcher looks).
 * A place only: the caller checks that the agent cannot have written it. */
bool pol_harness_launcher_child(enum pol_harness kind, const char *launcher, const char *resolved);

/* Codex 0.169.0's wrapper rebuilt from the parts pol_request_json() keeps
 * of it ("wrapper": snapshot, path_entry, exec), byte for byte. Caller
 * frees; NULL when a part is missing. */
char *pol_codex_wrapper_text(const char *snapshot, const char *path_entry, const char *quoted);

/* The PATH entry a recognised Codex wrapper prepends (pointing into |r|),
 * or NULL. */
const char *pol_request_codex_path_entry(const struct pol_request *r);

/* The harness whose exact wrapper |r| is, with the model's command in
 * *inner (pointing into |r|), or POL_HARNESS_NONE (and NULL): Claude Code's
 * wrapper, or Codex's snapshot wrapper whose snapshot is inert. */
enum pol_harness pol_request_harness(const struct pol_request *r, const char **inner);

/* ---- the boundary: environment and sockets (boundary.c) ----------------- */

/* Whether an environment variable named |name| (|len| bytes, no '=') looks
 * like a secret: *_API_KEY, *_TOKEN, *SECRET*, *_PASSWORD, *_PASSWD, ...,
 * and the well-known ones (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN,
 * SSH_AUTH_SOCK, ...). Compared without case. */
bool pol_env_name_is_secret(const char *name, size_t len);
/* Whether the agent keeps variable |name| although it looks like a secret:
 * its harness |h| needs it (its own API key), or the config's "env": {"keep"}
 * lists it. |c| may be NULL. */
bool pol_env_keeps(const struct pol_config *c, enum pol_harness h, const char *name, size_t len);
/* Whether |name| is a valid variable name ([A-Za-z_][A-Za-z0-9_]*). */
bool pol_env_name_valid(const char *name);
size_t pol_config_env_keep_count(const struct pol_config *c);
const char *pol_config_env_keep(const struct pol_config *c, size_t i);

/* The config's "sockets": {"allow": [...]}: absolute paths of Unix sockets
 * outside the project the agent may connect to; a glob ("*" within a
 * directory, "**" across) or a directory (everything under it). Pointers
 * into |c|. */
size_t pol_config_socket_allow_count(const struct pol_config *c);
const char *pol_config_socket_allow(const struct pol_config *c, size_t i);
/* The sockets.allow entry that |path| (absolute and canonical: the kernel's
 * name of the socket file it resolved) matches, or NULL. */
const char *pol_socket_allowed(const struct pol_config *c, const char *path);

/* ---- the network (network.c) -------------------------------------------- */

/*
 * A connection to an IPv4 or IPv6 destination by a process of the agent's
 * tree (connect, or sendto/sendmsg/sendmmsg with an address) is a request
 * of kind POL_CONNECT. The supervisor reads the destination from the
 * stopped caller, names it with what the session's resolver saw, asks the
 * kernel whether the address is the host's own, and performs the allowed
 * call itself on the caller's socket (sandbox/sock.c), so what is decided
 * is what is connected. A Unix socket outside the sandbox is still decided
 * at the boundary (supervisor/sockets.c) and only audited with this kind.
 *
 * Decision order (pol_decide()): hard deny (a cloud metadata address or
 * name; an address the kernel routes to the host itself, unless an allow
 * entry names that address literally or the caller is the harness's own
 * process and the address is its API endpoint); the config's
 * "network": {"deny"}; session grants and project grants ("always for
 * this host"); the config's "network": {"allow"} (the fast path); the
 * harness's own API endpoint for the harness's own process (source
 * "harness"); otherwise undecided (the judge, then the tier).
 */

enum pol_net_proto { POL_NET_TCP, POL_NET_UDP, POL_NET_OTHER };

/* "tcp", "udp" or "other". */
const char *pol_net_proto_name(enum pol_net_proto p);

/* A destination as the supervisor read it. Strings are copied by
 * pol_request_connect(). */
struct pol_connect_desc {
	const char *syscall; /* "connect", "sendto", "sendmsg" or "sendmmsg" */
	int family;	     /* AF_INET or AF_INET6 */
	uint8_t addr[16];    /* network order; AF_INET uses the first 4 bytes */
	uint16_t port;	     /* host order */
	enum pol_net_proto proto;
	/* The names the session saw resolve to this address, newest first,
	 * NULL-terminated; NULL when none (an address nobody resolved). */
	const char *const *names;
	/* The kernel routes the address to this host: loopback, unspecified
	 * (0.0.0.0, ::), or an address of one of its interfaces (an IPv4
	 * address mapped into IPv6 counts as itself). */
	bool local;
	/* The caller is the agent harness's own process (its start-up chain,
	 * or a known launcher's native child), not one of its tool calls. */
	bool harness;
	const char *cmdline; /* the caller's command line, shell-quoted; may be NULL */
	const char *cwd;     /* the caller's cwd; may be NULL */
};

/* Builds a connect request. NULL and errno EINVAL on a bad description (a
 * family other than AF_INET/AF_INET6). Caller frees with pol_request_free(). */
struct pol_request *pol_request_connect(const struct pol_connect_desc *d);

/* The destination as people read it: "github.com:443" when named (the
 * newest name), else "140.82.112.3:443" or "[::1]:8080". Pointer valid while
 * |r| lives; NULL for another kind. */
const char *pol_request_destination(const struct pol_request *r);

/* The config's "network": {"allow": [...], "deny": [...]} entries as
 * written. Pointers into |c|. */
size_t pol_config_net_allow_count(const struct pol_config *c);
const char *pol_config_net_allow(const struct pol_config *c, size_t i);
size_t pol_config_net_deny_count(const struct pol_config *c);
const char *pol_config_net_deny(const struct pol_config *c, size_t i);

/* Adds the agent harness's own API endpoint ("api.anthropic.com:443",
 * "127.0.0.1:8080", "[::1]:9000"; the port defaults to 443): reachable by
 * the harness's own process only, never by its tool calls. 0, or -EINVAL
 * when |entry| is not a valid network entry. */
int pol_config_add_harness_endpoint(struct pol_config *c, const char *entry);
size_t pol_config_harness_endpoint_count(const struct pol_config *c);
const char *pol_config_harness_endpoint(const struct pol_config *c, size_t i);

/* Whether |entry| is a valid network entry: HOST[:PORT], HOST a DNS name
 * (letters, digits, '-', '.'), "*.suffix" (any name below suffix, not the
 * suffix itself), "*" (any destination), an IPv4 address or CIDR
 * (10.0.0.0/8), or a bracketed IPv6 address or CIDR ("[::1]",
 * "[fd00::/8]"); PORT 1-65535 or "*" (the default: any). On failure *why
 * is a sentence (static). */
bool pol_net_entry_valid(const char *entry, const char **why);

/* Whether |name| (a DNS name, any case, an optional final '.') is a cloud
 * metadata name (metadata.google.internal, ...): the resolver may refuse to
 * resolve it, and a connection named so is hard-denied. */
bool pol_net_metadata_name(const char *name);

/*
 * A lookup: the session's resolver (supervisor/resolver.c) decides the
 * name it is asked for before any DNS server sees it, since a query name
 * is itself data leaving the host ("<base32 of .env>.attacker.example").
 * POL_DENY_CRITICAL for a cloud metadata name; POL_DENY when a
 * network.deny entry names it (a name, "*.suffix", "*", "localhost";
 * address and CIDR entries name no name); POL_ALLOW when a network.allow
 * entry names it or it is the host of an agent harness endpoint (any
 * process may resolve it: the connection is decided by who makes it);
 * else POL_UNDECIDED (the tier decides: refused in passive and review
 * runs, forwarded in standard and aggressive). Ports do not count. |name|
 * any case, an optional final '.'. |reason| (|n| bytes) is a sentence,
 * |matched| (|mn|) the entry's place ("network.deny[0]"); either may be
 * NULL.
 */
enum pol_verdict pol_net_lookup_decide(const struct pol_config *c, const char *name, char *reason,
				       size_t n, char *matched, size_t mn);

/* Whether |name| is a metadata name or a network.deny entry names it (as
 * pol_net_lookup_decide() would deny it): what the session's names keep
 * for an address however many newer names it gets. */
bool pol_net_name_denied(const struct pol_config *c, const char *name);

/* ---- end of agent harnesses --------------------------------------------- */

#endif
