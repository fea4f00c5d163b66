/*
 * policy_int.h: the private structures and helpers shared by the files of
 * policy/. Nothing here is part of the contract in policy.h.
 *
 * See docs/design.md, section "Policy".
 */
#ifndef WARDEN_POLICY_INT_H
#define WARDEN_POLICY_INT_H

#include "policy.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* ---- requests ---------------------------------------------------------- */

struct pol_request {
	enum pol_kind kind;
	/* exec */
	char *path;   /* program path as the decoder found it */
	char *interp; /* "#!" interpreter, or NULL */
	char **argv;  /* NULL-terminated copy */
	size_t argc;
	char **env; /* the NAME=value entries not known harmless, NULL-terminated */
	size_t envc;
	/* How many of them change what any program runs or loads (LD_PRELOAD,
	 * BASH_ENV, ...): those void grants and allow rules; the others only
	 * keep the request off the fast path. */
	size_t env_risky;
	char *cwd;	      /* relative to the project when inside it ("." for the root) */
	char *cwd_abs;	      /* the absolute cwd, or NULL */
	char *parent;	      /* parent command line, or NULL */
	char *project;	      /* absolute project root, or NULL */
	char *resolved;	      /* the final file after symlinks, or NULL */
	bool agent_writable;  /* the agent can have written the program */
	char *writable_why;   /* where, or NULL */
	char *env_home;	      /* the exec's HOME, or NULL */
	char *env_xdg_config; /* the exec's XDG_CONFIG_HOME, or NULL */
	/* open */
	char *opath;
	char *opath2;
	unsigned access;
	char *cmdline;
	/* agent harnesses (harness.c): the wrapper shape recognised with the
	 * exec's own HOME, for what the summary and the JSON show */
	enum pol_harness harness;
	char *inner; /* the model's command of a POL_HARNESS_CLAUDE_CODE wrapper, or NULL */
	/* The file a Codex wrapper sources, as the supervisor read it (its
	 * path and text), or NULL. */
	char *harness_path;
	char *harness_file;
	/* A recognised Codex wrapper, recorded by its parts (the template is
	 * in harness_codex.c): the PATH entry and the command as quoted; NULL
	 * otherwise. */
	char *wrap_dir;
	char *wrap_quoted;
	/* connect (network.c); |cmdline| and |cwd_abs| are the caller's */
	char *net_syscall;
	int net_family; /* AF_INET (an IPv4-mapped IPv6 address too) or AF_INET6 */
	uint8_t net_addr[16];
	uint16_t net_port;
	enum pol_net_proto net_proto;
	char **net_names; /* valid DNS names, lower case, newest first; never NULL */
	bool net_local;	  /* the kernel's word, or loopback / unspecified */
	bool net_harness;
	char *net_address; /* the address as text ("140.82.112.3", "::1") */
	char *net_dest;	   /* pol_request_destination() */
};

/* True when the environment variable |name| (no "=") changes what a program
 * runs or loads (LD_PRELOAD, BASH_ENV, GIT_CONFIG*, ...). */
bool pol_env_name_is_risky(const char *name, size_t len);
/* True when the environment entry |entry| ("NAME=value") is known harmless
 * for every program of the fast path (envnames.c says how that list is
 * made). HOME and XDG_CONFIG_HOME pass here; git judges them. */
bool pol_env_entry_fast_ok(const char *entry);
/* True when |name| (length |len|) looks like it holds a secret (PASSWORD,
 * TOKEN, API_KEY, ...). */
bool pol_name_is_secret(const char *name, size_t len);
/* What a redacted value is shown as. */
#define POL_REDACTED "<redacted>"
/* A redacted copy of one argument; |prev| is the argument before it (or
 * NULL), for "--password hunter2" and "-H 'Authorization: ...'". Caller
 * frees. */
char *pol_redact_arg(const char *prev, const char *arg);
/* A redacted copy of a free-text command line. Caller frees. */
char *pol_redact_text(const char *s);

/* ---- config ------------------------------------------------------------ */

enum rule_action { RULE_ALLOW, RULE_ASK, RULE_DENY };
enum rule_access { RACC_READ, RACC_WRITE, RACC_ANY };

struct pol_rule {
	enum rule_action action;
	char **command; /* argv prefix, NULL-terminated; NULL for a path rule */
	size_t ncommand;
	char *glob; /* path glob; NULL for a command rule */
	enum rule_access access;
};

struct pol_grant {
	char **argv;   /* exact argv; NULL for a path grant */
	char *program; /* exact program path, or NULL when not recorded */
	char *path;    /* exact path of an open grant */
	/* A connect grant's host: a name (lower case, no final dot) or an
	 * address as inet_ntop() writes it; any port (network.c). */
	char *host;
	unsigned access;
	char *by;
	int64_t at_us;
};

struct pol_outside {
	char *path;
	enum pol_outside_mode mode;
};

struct pol_config {
	struct pol_rule *rules;
	size_t nrules;
	struct pol_grant *grants;
	size_t ngrants;
	char **markers; /* the project's sensitive_resources, trimmed */
	size_t nmarkers;
	char **protect; /* write_protected globs */
	size_t nprotect;
	char **control; /* control_files patterns (control.c) */
	size_t ncontrol;
	/* |control| parsed once at load (pol_control_compile()); read-only
	 * after, so the view's threads share it. */
	struct pol_ctl_set *control_set;
	char **writable;
	size_t nwritable;
	char **tmp_share; /* "tmp": {"share": [...]} */
	size_t ntmp_share;
	char **sock_allow; /* "sockets": {"allow": [...]}: absolute paths or globs */
	size_t nsock_allow;
	char **env_keep; /* "env": {"keep": [...]}: variable names */
	size_t nenv_keep;
	char **net_allow; /* "network": {"allow": [...]}: valid entries as written */
	size_t nnet_allow;
	char **net_deny; /* "network": {"deny": [...]} */
	size_t nnet_deny;
	/* The harness's own API endpoints (pol_config_add_harness_endpoint()),
	 * each HOST:PORT; not part of the JSON config. */
	char **harness_ep;
	size_t nharness_ep;
	struct pol_outside *outside; /* the config's "outside", as written */
	size_t noutside;
	struct pol_outside *merged; /* built-in + config, "~/" expanded */
	size_t nmerged;
	char *accepted_json; /* the accepted_rules array as text, or NULL */
	size_t naccepted;
	struct pol_accepted *accepted; /* the parsed entries (approval memory), naccepted */
	enum pol_tier tier;
	char *judge_url;
	char *judge_model;
	int judge_timeout_ms;
	int judge_connect_timeout_ms;
	bool has_judge;
	char *project;
	char *home;
	/* further homes (pol_config_add_home): "~/" places apply to each */
	char **homes;
	size_t nhomes;
	/* agent harnesses: pol_config_set_agent_binary(), "" when unset */
	char agent_binary[4096];
};

/* Sets |out|'s verdict, source, matched text and reason (printf-style)
 * (decide.c). A decision of a connection never covers (pol_decide() zeroed
 * |out| first). */
void pol_decision_set(struct pol_decision *out, enum pol_verdict v, enum pol_source src,
		      const char *matched, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* ---- request kinds (kinds.c) ------------------------------------------- */

struct cJSON;

/*
 * What policy does differently for each kind of request: one entry per
 * enum pol_kind in kinds.c, so that a new kind is one entry and its
 * functions, not a branch in every file. The functions live with their
 * part (request.c: JSON and summary; decide.c: matching and deciding;
 * config_out.c: grants; memory.c: approval memory's arguments).
 *
 * A kind whose requests policy never builds (|no_request| says why) has
 * a name and no function; every other kind has every function.
 */
struct pol_kind_ops {
	const char *name;	/* the audit's word (pol_kind_name()) */
	const char *no_request; /* NULL, or why no pol_request has this kind */
	/* The request's stable, redacted JSON (pol_request_json()). */
	void (*json)(struct wd_sb *sb, const struct pol_request *r);
	/* The one-line summary after any harness prefix (pol_request_summary()). */
	void (*summary)(struct wd_sb *sb, const struct pol_request *r);
	/* Exactly the same request (session grants); |a| and |b| of this kind. */
	bool (*same)(const struct pol_request *a, const struct pol_request *b);
	/* A project grant covers |r| exactly. */
	bool (*grant_matches)(const struct pol_grant *g, const struct pol_request *r);
	/* A config rule matches |r|; |deep|: deny and ask rules, which also
	 * see behind wrappers and either side of a pair. */
	bool (*rule_matches)(const struct pol_rule *ru, const struct pol_request *r,
			     const struct pol_config *c, bool deep);
	/* pol_decide() for this kind; |out| is preset to undecided. */
	void (*decide)(const struct pol_request *r, const struct pol_config *c,
		       const struct pol_session *s, const struct pol_context *ctx, int64_t now_us,
		       struct pol_decision *out);
	/* Fills |g| (zeroed) with the grant of |r| (pol_config_add_grant()):
	 * 0, or -EINVAL when |r| cannot be granted. */
	int (*to_grant)(const struct pol_request *r, struct pol_grant *g);
	/* Approval memory's arguments and tool name from the request's parsed
	 * JSON (pol_mem_args_from_request()); NULL when it has none. */
	struct cJSON *(*mem_args)(const struct cJSON *root, char **tool);
	/* An allow rule is written without secrets in mind: it does not cover
	 * a request with a sensitive part or a run-changing environment. */
	bool sensitive_voids_allow_rules;
};

/* The entry of |k|, or NULL when |k| is not a kind. */
const struct pol_kind_ops *pol_kind_ops(enum pol_kind k);

/* The kinds' functions, named in kinds.c's table. */
void pol_exec_json(struct wd_sb *sb, const struct pol_request *r);
void pol_open_json(struct wd_sb *sb, const struct pol_request *r);
void pol_exec_summary(struct wd_sb *sb, const struct pol_request *r);
void pol_open_summary(struct wd_sb *sb, const struct pol_request *r);
bool pol_exec_same(const struct pol_request *a, const struct pol_request *b);
bool pol_open_same(const struct pol_request *a, const struct pol_request *b);
bool pol_exec_grant_matches(const struct pol_grant *g, const struct pol_request *r);
bool pol_open_grant_matches(const struct pol_grant *g, const struct pol_request *r);
bool pol_exec_rule_matches(const struct pol_rule *ru, const struct pol_request *r,
			   const struct pol_config *c, bool deep);
bool pol_open_rule_matches(const struct pol_rule *ru, const struct pol_request *r,
			   const struct pol_config *c, bool deep);
void pol_exec_decide(const struct pol_request *r, const struct pol_config *c,
		     const struct pol_session *s, const struct pol_context *ctx, int64_t now_us,
		     struct pol_decision *out);
void pol_open_decide(const struct pol_request *r, const struct pol_config *c,
		     const struct pol_session *s, const struct pol_context *ctx, int64_t now_us,
		     struct pol_decision *out);
int pol_exec_to_grant(const struct pol_request *r, struct pol_grant *g);
int pol_open_to_grant(const struct pol_request *r, struct pol_grant *g);
struct cJSON *pol_mem_exec_args(const struct cJSON *root, char **tool);
struct cJSON *pol_mem_open_args(const struct cJSON *root, char **tool);
/* The connect kind's (network.c). */
void pol_connect_json(struct wd_sb *sb, const struct pol_request *r);
void pol_connect_summary(struct wd_sb *sb, const struct pol_request *r);
bool pol_connect_same(const struct pol_request *a, const struct pol_request *b);
bool pol_connect_grant_matches(const struct pol_grant *g, const struct pol_request *r);
bool pol_connect_rule_matches(const struct pol_rule *ru, const struct pol_request *r,
			      const struct pol_config *c, bool deep);
void pol_connect_decide(const struct pol_request *r, const struct pol_config *c,
			const struct pol_session *s, const struct pol_context *ctx, int64_t now_us,
			struct pol_decision *out);
int pol_connect_to_grant(const struct pol_request *r, struct pol_grant *g);
struct cJSON *pol_mem_connect_args(const struct cJSON *root, char **tool);

/* The session grant that covers |r| by its kind's measure (decide.c), or
 * NULL. Pointer valid while |s| lives. */
const struct pol_request *pol_session_covering(const struct pol_session *s,
					       const struct pol_request *r);
/* Copies the connect fields of |r| into |c| (a session grant). */
void pol_connect_copy(struct pol_request *c, const struct pol_request *r);
/* A connect grant's host as it is kept: a DNS name (lower case, final dot
 * dropped) or an IPv4 or IPv6 address (an IPv4-mapped one as IPv4), as
 * inet_ntop() writes it. 0 and *out (caller frees), or -EINVAL. */
int pol_net_host_canon(const char *s, char **out);
/* The request JSON of a connect has no "kind": its keys are the socket
 * rows' ("syscall" first). True when |root| (a parsed request JSON) is
 * one with a "destination" (an IP connect, not a Unix socket's row). */
bool pol_net_json_is_connect(const struct cJSON *root);

/* A JSON string of |s| (null when NULL); bytes that are not UTF-8 are
 * shown as the text \xNN (request.c). */
void pol_json_str(struct wd_sb *sb, const char *s);
/* The same of pol_redact_text(|s|). */
void pol_json_redacted(struct wd_sb *sb, const char *s);

/* ---- approval memory (memory.c, memory_int.h) -------------------------- */

struct pol_accepted;
/* Frees |n| accepted rules and the array. */
void pol_accepted_free(struct pol_accepted *a, size_t n);

/* ---- end of approval memory --------------------------------------------- */

/* |names|[|i|] when |i| is one of the |n| and has a name, else |dflt|: an
 * enum's name from its table (names.c). */
const char *pol_name_of(const char *const *names, size_t n, size_t i, const char *dflt);
/* The index of |s| (may be NULL) among |names|[|from|..|n|), or -EINVAL. */
int pol_name_find(const char *const *names, size_t from, size_t n, const char *s);
/* Parses an outside mode ("hide", "gate", ...): 0, or -EINVAL when
 * unknown (names.c). */
int pol_outside_mode_parse(const char *s, enum pol_outside_mode *m);

/* Config helpers of config_out.c and names.c. */
/* Rebuilds c->merged from the built-in outside list, c->outside and c->home. */
void pol_config_merge_outside(struct pol_config *c);
const char *pol_access_name(unsigned bit);
/* Parses an access name ("read", "write", ...) into a bit; 0 when unknown. */
unsigned pol_access_from_name(const char *s);
/* Parses "2026-12-02T12:00:00[.123]Z" into realtime µs. 0 or -EINVAL. */
int pol_parse_iso_time(const char *s, int64_t *out_us);

/* ---- the JSON line map (jsonlines.c) ------------------------------------ */

struct pol_linemap;
/* Scans |text| for every key and array element and the line it starts on.
 * Never fails: an unparsable tail is simply not mapped. Caller frees. */
struct pol_linemap *pol_linemap_build(const char *text, size_t len);
void pol_linemap_free(struct pol_linemap *m);
/* Line of the |nth| (0-based) occurrence of |path|; 0 if not mapped. */
int pol_linemap_line(const struct pol_linemap *m, const char *path, int nth);
/* True when the scanner met a syntax error; *off is where. */
bool pol_linemap_error(const struct pol_linemap *m, size_t *off);
/* 1-based line of byte |off| in |text|. */
int pol_line_of_offset(const char *text, size_t len, size_t off);

/* ---- JSON out (memory.c) -------------------------------------------------- */

struct cJSON;
/* Writes |v| 2-space indented: objects one key a line, arrays of scalars on
 * one line, arrays holding objects one element a line, a rule condition
 * ({"eq"}, {"in"}, {"min","max"}) on one line. Used by pol_config_to_json()
 * and by the proposals' JSON. */
void pol_json_pretty(struct wd_sb *sb, const struct cJSON *v, int indent);

/* ---- globs and markers (sensitive.c) ------------------------------------- */

/* 0 when |pat| is a usable glob; else -EINVAL with, when |err| is not
 * NULL, a sentence saying what is wrong (caller frees). */
int pol_glob_check(const char *pat, char **err);
/* -EINVAL with a copy of |what| in *err (when |err| is not NULL): the
 * failure of a check whose message is a fixed sentence. */
int pol_invalid(const char *what, char **err);
/* True when |path| matches |pat| or lies under a directory that does. */
bool pol_glob_match(const char *pat, const char *path);
/* 0 when |pat| is a usable control_files pattern (control.c); else -EINVAL
 * with, when |err| is not NULL, what is wrong (caller frees). */
int pol_control_check(const char *pat, char **err);
/* The |n| control_files patterns |pats| parsed for pol_is_control(); the
 * strings must outlive the set (they are the config's own). */
struct pol_ctl_set *pol_control_compile(char *const *pats, size_t n);
void pol_control_set_free(struct pol_ctl_set *s);
/* The |i|th control pattern (the built-in ones, then |c|'s), NULL past the
 * last; the |i|th sensitive marker (|c|'s, then the built-in ones) alike. */
const char *pol_control_pattern(const struct pol_config *c, size_t i);
const char *pol_sensitive_marker(const struct pol_config *c, size_t i);
/* |path| with "//", "." and ".." resolved lexically ("a/../b" is "b",
 * "/.." is "/", leading ".." of a relative path stay). Caller frees. */
char *pol_path_lexical(const char *path);
/* Whether |hay| (|hl| bytes) contains |needle| (|nl| bytes, not 0), byte
 * for byte: the callers lower-case both first. False for an empty needle. */
bool pol_lcontains(const char *hay, size_t hl, const char *needle, size_t nl);
/* Case-insensitive substring search, byte-wise (safe on any bytes). */
bool pol_icontains(const char *hay, const char *needle);

/* ---- the shell splitter (shell.c) ---------------------------------------- */

enum pol_sh_tok_kind {
	SH_WORD,
	SH_OP_AND,   /* && */
	SH_OP_OR,    /* || */
	SH_OP_SEMI,  /* ; or a newline */
	SH_OP_PIPE,  /* | */
	SH_OP_OTHER, /* & |& ;; ( ) and anything else that is not plain */
	SH_REDIR,    /* > >> < << <<< >& &> <> >| with an optional fd */
};

/* Word flags: any of these makes a script not plain. */
enum pol_sh_word_flag {
	SHW_EXPANSION = 1u << 0, /* $VAR, ${..}, $(..), backticks, <(..) */
	SHW_GLOB = 1u << 1,	 /* unquoted * ? [ { */
	SHW_TILDE = 1u << 2,	 /* unquoted leading ~ */
	SHW_COMMENT = 1u << 3,	 /* a # that starts a comment (word dropped) */
	SHW_ASSIGN = 1u << 4,	 /* NAME=value in command position */
	SHW_SPECIAL = 1u << 5,	 /* a keyword, { } or a leading ! */
};

struct pol_sh_tok {
	enum pol_sh_tok_kind kind;
	unsigned flags;
	char *text;	  /* the word with quotes removed, or the operator */
	bool write_redir; /* SH_REDIR that writes (>, >>, >|, &>, <>) */
	bool heredoc;	  /* SH_REDIR << or <<- */
};

struct pol_sh_script {
	struct pol_sh_tok *toks;
	size_t ntoks;
	/* Nested scripts found in $(..), backticks, <(..), >(..) and heredoc
	 * bodies: looked into for hard deny. */
	char **nested;
	size_t nnested;
	/* Heredoc bodies, in the order of their << redirects. */
	char **heredocs;
	size_t nheredocs;
	bool unterminated; /* an open quote or substitution at the end */
	bool plain;	   /* only plain words joined by && || ; | */
};

/* Splits |s|. Never fails; a script that cannot be understood is marked not
 * plain. |depth| bounds recursion through substitutions. Caller frees with
 * pol_sh_script_free(). */
void pol_sh_split(const char *s, struct pol_sh_script *out);
void pol_sh_script_free(struct pol_sh_script *sc);

/* ---- classification (classify.c, unwrap.c, vocab.c, harddeny.c) -------- */

/* What the classifier knows besides the argv. */
struct pol_cls_env {
	const struct pol_config *cfg;
	const char *path;    /* resolved program path of the top-level argv, or NULL */
	const char *cwd;     /* absolute cwd, or NULL */
	const char *project; /* absolute project root, or NULL */
	const char *home;    /* home directory, or NULL */
	/* The top-level request's program: the name it was invoked by (the
	 * path's basename), its final file's name, and whether the agent can
	 * have written it; NULL / false when unknown. */
	const char *resolved;
	bool agent_writable;
	struct wd_sb *trace; /* explain: what each command parsed to, or NULL */
	/* The exec's HOME and XDG_CONFIG_HOME, or NULL when unset. */
	const char *env_home;
	const char *env_xdg_config;
};

struct pol_cls_result {
	enum pol_class cls;
	char reason[320];
	char matched[160];
	bool sensitive; /* OTHER because an argument matched a sensitive marker */
	bool risky_env; /* OTHER because of a run-changing environment */
};

/* Sets |r| to |cls| when that is worse than what it holds. */
void pol_cls_raise(struct pol_cls_result *r, enum pol_class cls, const char *matched,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Formats a reason into |reason| (|rn| bytes) and copies |m| (NULL: "")
 * into |matched| (|mn| bytes): what pol_cls_raise() and pol_decide() record. */
void pol_reason_vset(char *reason, size_t rn, char *matched, size_t mn, const char *m,
		     const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

/* network.c, for net_lookup.c: |name| lower-cased without its final dot
 * into |buf| (false: NULL or too long); whether the network entry |entry|
 * ("*", a name, "*.suffix", "localhost"; ports ignored) names the folded
 * name |low| (an address or CIDR entry names none). */
bool pol_net_name_fold(const char *name, char *buf, size_t n);
bool pol_net_entry_names(const char *entry, const char *low);

/* Classifies |argv| (|argc| words). |depth| counts nested unwraps. */
void pol_cls_argv(const struct pol_cls_env *e, char *const *argv, size_t argc, int depth,
		  struct pol_cls_result *r);
/* Classifies a shell script given to sh -c. */
void pol_cls_script(const struct pol_cls_env *e, const char *script, int depth,
		    struct pol_cls_result *r);

/* Hard deny of one simple command whose program name is |name| (basename,
 * backslashes stripped): raises |r| to CRITICAL on a hit. */
void pol_hd_check_command(const struct pol_cls_env *e, const char *name, char *const *argv,
			  size_t argc, struct pol_cls_result *r);
/* Hard deny of a write to |target| (a redirect, a copy destination). */
void pol_hd_check_write_target(const struct pol_cls_env *e, const char *target, const char *what,
			       struct pol_cls_result *r);
/* The fork bomb and curl-into-shell patterns in the raw text of a script. */
void pol_hd_check_script_text(const char *script, struct pol_cls_result *r);
/* True when |path| (absolute) is a system directory or lies inside one. */
bool pol_hd_is_system_path(const char *path, const char **dir);

/* The program name of an argv[0]: its basename with leading backslashes
 * removed ("\rm" and "/bin/rm" are "rm"). Points into |arg0|. */
const char *pol_cls_prog_name(const char *arg0);
/* The name the request really runs: the resolved path's basename unless it
 * is only argv[0]'s name with a version suffix (python3 -> python3.11).
 * Copies into |buf|. */
const char *pol_cls_identity(const char *path, const char *arg0, char *buf, size_t n);
/* True for sh, bash, dash, zsh, ksh, mksh, fish, ash, busybox... */
bool pol_cls_is_shell(const char *name);
/* How deep wrappers and nested scripts are followed. */
#define CLS_MAX_DEPTH 8

/* True when the NULL-terminated |list| holds the |n| bytes at |s|. */
bool pol_cls_in_list(const char *const *list, const char *s, size_t n);

/* ---- wrappers and shells as command lines (unwrap.c) --------------------- */

/* A program that runs another one: its own options and operands. */
struct wrapper {
	const char *name;
	const char *argopts;	      /* short options that take a separate argument */
	const char *const *long_args; /* long options that take one */
	int positional;		      /* operands before the command (timeout's duration) */
	bool assignments;	      /* VAR=value words before the command */
	bool privileged;
};

/* What a wrapper's own words do besides running the command. */
struct unwrap_info {
	const char *risky;   /* a run-changing VAR= assignment, or NULL */
	const char *split;   /* env -S's string, or NULL */
	const char *outfile; /* time -o's file, or NULL */
	bool lookup;	     /* command -v / -V: a lookup, runs nothing */
	bool shell;	     /* sudo -s / -i: an interactive shell */
	bool edit;	     /* sudo -e: sudoedit of the operands */
};

/* The wrapper called |name|, or NULL. */
const struct wrapper *pol_cls_find_wrapper(const char *name);
/* Index of the command |w| wraps in |argv| (|argc| when there is none);
 * fills |info| with what the wrapper's own words do. */
size_t pol_cls_skip_wrapper(const struct wrapper *w, char *const *argv, size_t argc,
			    struct unwrap_info *info);
/* The wrapper's own words, parsed by its grammar: false (with |r| raised)
 * when one is unknown or not harmless, or when the grammar does not find
 * the command where the unwrapping did (index |k|). */
bool pol_cls_wrapper_grammar_ok(const struct pol_cls_env *e, const struct wrapper *w,
				char *const *argv, size_t argc, size_t k, struct pol_cls_result *r);
/* For sh/bash/...: the index of the -c script, or 0 when there is no -c.
 * *problem is set when a flag makes the shell read more code than the
 * script, or when a word is not one warden knows; *home_files for a login
 * or interactive shell, which reads HOME's start-up files. */
size_t pol_cls_shell_script_index(const char *name, char *const *argv, size_t argc,
				  const char **problem, bool *home_files);

/* Unwraps wrappers (env, nice, timeout, nohup, stdbuf, sudo, ...) and
 * returns the index of the real program in argv, or -1 when none. Sets
 * *risky_env when an env VAR= assignment is run-changing, *privileged for
 * sudo/doas. */
long pol_cls_unwrap(char *const *argv, size_t argc, bool *risky_env, bool *privileged);

/* Why a fast-path check reached its answer, and the word it turned on
 * (the command, or the offending option or operand). */
struct pol_reason {
	char why[200];
	char matched[64];
};

/* True when |name| with |argv| is a known read-only command under its
 * program's grammar (readonly.c, grammar.h): every word parsed as the
 * program parses it, no option that writes, runs, reads its names from
 * elsewhere or prints secrets, and the program's own operand rule. |cwd|
 * (may be NULL) places relative operands. Writes the reason either way into
 * |rs|. Appends the parsed words to |trace|
 * when it is not NULL (explain). */
bool pol_readonly_check(const char *name, char *const *argv, size_t argc, const char *cwd,
			struct wd_sb *trace, struct pol_reason *rs);

/* The git command lines that only read (git.c): global options and the
 * subcommand as git parses them. Appends to |trace| when not NULL. */
bool pol_git_readonly(char *const *argv, size_t argc, struct wd_sb *trace, struct pol_reason *rs);

/* The program an argv[0] makes a multi-call program play (git-log: git
 * log; busybox, toybox applets; systemctl's shutdown, reboot, halt,
 * poweroff, telinit, runlevel), for the program whose own name is
 * |prog|; NULL when |prog| does not dispatch on argv[0] or argv[0] names
 * the program itself. */
const char *pol_cls_multicall_applet(const char *prog, const char *arg0);

/* ---- agent harnesses (harness*.c, profiles.c) --------------------------- */

/* The harness shape of |argv| whose program name (after pol_cls_identity()) is
 * |name|, with the model's command in *inner (caller frees; NULL when
 * POL_HARNESS_NONE). |home| may be NULL: the Claude Code shape is then not
 * recognised. */
enum pol_harness pol_hn_unwrap(char *const *argv, size_t argc, const char *name, const char *home,
			       char **inner);
/* When |r| is a Claude Code wrapper (recognised with |home|) whose inner
 * command is one plain simple command, fills |view| with it as an exec
 * request (its words as argv, no program path, |r|'s environment) for
 * grants and rules to match, and returns true. Free with
 * pol_hn_inner_view_free(). */
bool pol_hn_inner_view(const struct pol_request *r, const char *home, struct pol_request *view);
/* The parts of Codex's wrapper |script| that are not its template (each
 * caller-freed), or false when it is not the wrapper. */
bool pol_hn_codex_wrapper_parts(const char *script, const char *home, char **snap, char **dir,
				char **quoted);
/* pol_codex_shape() with the home given (request.c: the exec's HOME). */
enum pol_codex_shape pol_hn_codex_shape(const struct pol_request *r, const char *home,
					const char **inner);
void pol_hn_inner_view_free(struct pol_request *view);
/* The name an argv is classified as: the tool the agent's own binary plays
 * (argv[0] rg, bfs, ugrep), the applet of a busybox, else |identity|. */
const char *pol_hn_multicall_name(const struct pol_cls_env *e, const char *identity,
				  const char *arg0);
/* For a find or grep clone |name|: sets *tool to the name whose rules apply
 * ("find" for bfs, "grep" for ugrep, else |name|), raises |r| for the
 * clone's own options that are not read-only, and returns an argv with the
 * clone's spellings made find's (a new vector of borrowed strings, caller
 * frees the vector only), or NULL when |argv| serves as it is. */
char **pol_hn_tool_argv(const char *name, char *const *argv, size_t argc, const char **tool,
			struct pol_cls_result *r);

/* The parts of harness.c, harness_claude.c and harness_codex.c share. */
/* The model's command inside a Claude Code wrapper script, or NULL.
 * Caller frees. */
char *pol_hn_claude_inner(const char *script, const char *home);
/* The model's command inside Codex's wrapper script, or NULL (caller
 * frees); *snap, when |snap| is not NULL, the snapshot it sources. */
char *pol_hn_codex_inner(const char *script, const char *home, char **snap);
/* Whether |argv| is one of Claude Code's start-up execs (|home| may be
 * NULL) or Codex's (pol_is_harness_startup()). */
bool pol_hn_claude_startup(char *const *argv, size_t argc, const char *home);
bool pol_hn_codex_startup(char *const *argv, size_t argc);

/* A cursor over a script (harness_scan.c). Each consumes at *p and
 * advances it only on success. */
/* The literal |lit|. */
bool pol_hn_eat(const char **p, const char *lit);
/* 1..|max| characters of |set| (or of [A-Za-z0-9] plus |set| when
 * |alnum|). */
bool pol_hn_eat_span(const char **p, const char *set, bool alnum, size_t max);
/* The single-quoted word at *p with '\'' and '"'"' read as a quote, as
 * bash reads them, followed by |term| (a space, or '\0' for the end): the
 * unquoted text (caller frees) or NULL. */
char *pol_hn_eat_quoted_to(const char **p, char term);
/* A home directory that bash reads as one word with no expansion. */
bool pol_hn_home_is_plain(const char *home);
/* Whether argv[0]'s program name is |name|. */
bool pol_hn_is_named(const char *arg0, const char *name);
/* Whether |argv| is exactly program |name| with the words |rest|. */
bool pol_hn_argv_is(char *const *argv, size_t argc, const char *name, const char *const *rest,
		    size_t nrest);

#endif
