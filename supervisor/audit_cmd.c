/*
 * audit_cmd.c: `warden audit`: the audit for a person (a table) or a program
 * (JSON, CSV), and --tool-calls, one line per tool call.
 */
#include "sup.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <string.h>

static const char audit_usage[] =
	"usage: warden audit [--project DIR] [--audit PATH] [--session ID | --last]\n"
	"                    [--since T] [--decision allow|deny] [--source S]\n"
	"                    [--kind exec|open|connect] [--limit N]\n"
	"                    [--format table|json|csv] [--tool-calls] [--no-pager]\n"
	"\n"
	"Prints the audit of the project (DIR/.warden/audit.db), oldest first.\n"
	"  --session ID   one session: its full id, or the short id of its approval\n"
	"                 ids (4f2a in 4f2a-3); warden sessions lists them\n"
	"  --last         the latest session\n"
	"  --since T      rows from T: a date (2026-12-02), a time\n"
	"                 (2026-12-02T12:00:00Z) or an age (30m, 2h, 7d)\n"
	"  --decision D   allow or deny (with --tool-calls: the calls with something\n"
	"                 refused, or with nothing refused)\n"
	"  --source S     what decided: hard_deny rule grant session_grant\n"
	"                 accepted_rule fast_path covered startup harness judge\n"
	"                 judge_cache tier user timeout stopped error decoder limit\n"
	"                 integrity boundary\n"
	"  --kind K       exec, open or connect\n"
	"  --limit N      the latest N rows (with --tool-calls: the latest N calls)\n"
	"  --format F     table (for a person), json or csv (every column)\n"
	"  --tool-calls   one line per tool call (a process the agent started) with\n"
	"                 what ran under it\n"
	"  --no-pager     do not page; on a terminal the output goes through $PAGER\n"
	"                 (less -FRX when PAGER is unset) and the table fits its width\n"
	"\n"
	"Exit status: 0, 1 when the audit cannot be read or part of it is damaged\n"
	"(every readable row is printed, the others are named on stderr), 2 bad usage.\n";

/* The sources of the audit's rows (store.h, struct sto_row). */
/* At most this long at session start: the whole check of a 100,000-row
 * audit (28 MB) takes about 35 ms from the page cache. */
#define SUP_AUDIT_CHECK_MS 250

int sup_audit_sound(struct sto_db *db)
{
	bool whole = true;
	char *err = NULL;
	int rc = sto_quick_check(db, SUP_AUDIT_CHECK_MS, &whole, &err);
	if (rc < 0) {
		wd_err("refusing to start: %s", err ? err : strerror(-rc));
		free(err);
		return rc;
	}
	if (!whole)
		wd_debug("the audit's quick check stopped after %d ms: the pages it had not "
			 "reached are not checked",
			 SUP_AUDIT_CHECK_MS);
	return 0;
}

/* One tool call and what ran under it, for --tool-calls. */
struct call {
	int64_t id, ts_us;
	char *session, *summary, *decision, *source;
	size_t n[POL_KIND_COUNT]; /* rows under it by kind */
	size_t refused;
	struct wd_sb under; /* "; "-separated summaries, capped */
};

struct calls {
	struct call *v;
	size_t n, cap;
};

static struct call *find_call(struct calls *c, int64_t id)
{
	for (size_t i = c->n; i > 0; i--)
		if (c->v[i - 1].id == id)
			return &c->v[i - 1];
	return NULL;
}

static int collect_call(const struct sto_row *row, void *arg)
{
	struct calls *c = arg;
	struct call *k = row->tool_call ? find_call(c, row->tool_call) : NULL;
	enum pol_source src = POL_SRC_NONE;
	(void)pol_source_parse(row->source, &src);
	if (!k) {
		/* The agent's own start-up chain is not a tool call (a
		 * harness's start-up execs, run by the agent, are). */
		if (src == POL_SRC_STARTUP && row->reason &&
		    wd_str_has_prefix(row->reason, "the agent's start-up"))
			return 0;
		/* Nor is a harness setting up a call's process: the call is
		 * that process's next exec. */
		if (src == POL_SRC_HARNESS && row->reason &&
		    strstr(row->reason, "setting up a tool call's process"))
			return 0;
		/* Nor is the harness's own connection to its API endpoint:
		 * the agent talking to its model, row after row. */
		enum pol_kind rk = POL_EXEC;
		(void)pol_kind_parse(row->kind, &rk);
		if (src == POL_SRC_HARNESS && rk == POL_CONNECT && !row->tool_call)
			return 0;
		if (c->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 64;
			c->v = wd_realloc(c->v, c->cap * sizeof(*c->v));
		}
		k = &c->v[c->n++];
		memset(k, 0, sizeof(*k));
		k->id = row->tool_call ? row->tool_call : row->id;
		k->ts_us = row->ts_us;
		k->session = wd_strdup(row->session ? row->session : "");
		k->summary = wd_strdup(row->summary ? row->summary : "");
		k->decision = wd_strdup(row->decision ? row->decision : "");
		k->source = wd_strdup(row->source ? row->source : "");
		if (!row->tool_call)
			return 0; /* the call's own row */
	}
	enum pol_kind kind = POL_EXEC; /* a row of no known kind counts as an exec */
	(void)pol_kind_parse(row->kind, &kind);
	k->n[kind]++;
	if (row->decision && strcmp(row->decision, "deny") == 0)
		k->refused++;
	if (k->under.len < 300) {
		if (k->under.len)
			wd_sb_puts(&k->under, "; ");
		wd_sb_printf(&k->under, "%s%.80s",
			     row->decision && strcmp(row->decision, "deny") == 0 ? "REFUSED " : "",
			     row->summary ? row->summary : "");
	}
	return 0;
}

/* The options of one `warden audit`. */
struct audit_opts {
	const char *project, *audit, *session;
	bool last, tool_calls, no_pager;
	enum sto_format fmt;
	struct sto_filter f;
	size_t limit;
};

static void call_table(const struct call *k, const char *t, size_t width)
{
	wd_autofree char *head = wd_asprintf("%s  %-6lld %-5s %-10s %s", t, (long long)k->id,
					     k->decision, k->source, k->summary);
	wd_autofree char *line = sup_fit_line(head, width);
	printf("%s\n", line);
	size_t execs = k->n[POL_EXEC], opens = k->n[POL_OPEN], connects = k->n[POL_CONNECT];
	if (!execs && !opens && !connects)
		return;
	char conn[64] = "";
	if (connects)
		snprintf(conn, sizeof(conn), ", %zu connect%s", connects, connects == 1 ? "" : "s");
	wd_autofree char *under =
		wd_asprintf("%26s under it: %zu exec%s, %zu open%s%s, %zu refused: %s%s", "", execs,
			    execs == 1 ? "" : "s", opens, opens == 1 ? "" : "s", conn, k->refused,
			    k->under.buf ? k->under.buf : "", k->under.len >= 300 ? " ..." : "");
	wd_autofree char *uline = sup_fit_line(under, width);
	printf("%s\n", uline);
}

static void call_json(const struct call *k, const char *t, bool first)
{
	struct wd_sb sb = {0};
	wd_sb_printf(&sb, "%s{\"id\":%lld,\"time\":", first ? "\n" : ",\n", (long long)k->id);
	wd_sb_json_str(&sb, t);
	wd_sb_printf(&sb, ",\"ts_us\":%lld,\"session\":", (long long)k->ts_us);
	wd_sb_json_str(&sb, k->session);
	wd_sb_puts(&sb, ",\"decision\":");
	wd_sb_json_str(&sb, k->decision);
	wd_sb_puts(&sb, ",\"source\":");
	wd_sb_json_str(&sb, k->source);
	wd_sb_puts(&sb, ",\"summary\":");
	wd_sb_json_str(&sb, k->summary);
	wd_sb_printf(&sb,
		     ",\"execs\":%zu,\"opens\":%zu,\"connects\":%zu,\"refused\":%zu,\"under\":",
		     k->n[POL_EXEC], k->n[POL_OPEN], k->n[POL_CONNECT], k->refused);
	wd_sb_json_str(&sb, k->under.buf ? k->under.buf : "");
	wd_sb_puts(&sb, "}");
	fwrite(sb.buf, 1, sb.len, stdout);
	wd_sb_free(&sb);
}

static void call_csv(const struct call *k, const char *t)
{
	struct wd_sb sb = {0};
	char n[32];
	snprintf(n, sizeof(n), "%lld", (long long)k->id);
	wd_sb_csv_field(&sb, n, false);
	wd_sb_csv_field(&sb, t, false);
	wd_sb_csv_field(&sb, k->session, false);
	wd_sb_csv_field(&sb, k->decision, false);
	wd_sb_csv_field(&sb, k->source, false);
	wd_sb_csv_field(&sb, k->summary, false);
	wd_sb_printf(&sb, "%zu,%zu,%zu,%zu,", k->n[POL_EXEC], k->n[POL_OPEN], k->n[POL_CONNECT],
		     k->refused);
	wd_sb_csv_field(&sb, k->under.buf, true);
	fwrite(sb.buf, 1, sb.len, stdout);
	wd_sb_free(&sb);
}

/* Whether call |k| passes --decision: deny keeps the calls refused or with
 * something refused under them, allow the others. */
static bool call_matches(const struct call *k, const char *decision)
{
	if (!decision)
		return true;
	bool refused = strcmp(k->decision, "deny") == 0 || k->refused > 0;
	return strcmp(decision, "deny") == 0 ? refused : !refused;
}

/* warden audit --tool-calls: one line per tool call (a process the agent
 * started and everything below it), with what ran under it; the latest
 * |o->limit| calls when there is a limit. */
static int print_tool_calls(struct sto_db *db, const struct audit_opts *o, size_t width, char **err)
{
	struct calls c = {0};
	struct sto_filter f = o->f;
	const char *decision = f.decision;
	f.decision = NULL; /* a call counts what ran under it, allowed or not */
	f.limit = 0;
	int rc = sto_query(db, &f, collect_call, &c, err);
	size_t keep = 0;
	for (size_t i = 0; i < c.n; i++)
		keep += call_matches(&c.v[i], decision);
	size_t skip = o->limit && o->limit < keep ? keep - o->limit : 0, shown = 0;
	if (o->fmt == STO_FMT_JSON)
		fputs("[", stdout);
	else if (o->fmt == STO_FMT_CSV)
		fputs("id,time,session,decision,source,summary,execs,opens,connects,refused,"
		      "under\r\n",
		      stdout);
	for (size_t i = 0; i < c.n; i++) {
		struct call *k = &c.v[i];
		if (call_matches(k, decision) && skip-- == 0) {
			skip = 0;
			char t[40];
			wd_format_time(k->ts_us, t, sizeof(t));
			if (o->fmt == STO_FMT_JSON)
				call_json(k, t, shown == 0);
			else if (o->fmt == STO_FMT_CSV)
				call_csv(k, t);
			else
				call_table(k, t, width);
			shown++;
		}
		free(k->session);
		free(k->summary);
		free(k->decision);
		free(k->source);
		wd_sb_free(&k->under);
	}
	if (o->fmt == STO_FMT_JSON)
		fputs(shown ? "\n]\n" : "]\n", stdout);
	free(c.v);
	if (fflush(stdout) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* Parses the command line into |o|. 0, 1 (--help printed) or -EINVAL (said
 * on stderr). */
static int audit_options(int argc, char **argv, struct audit_opts *o)
{
	static const struct option longopts[] = {
		{"project", required_argument, NULL, 'p'},
		{"audit", required_argument, NULL, 'a'},
		{"session", required_argument, NULL, 's'},
		{"last", no_argument, NULL, 'L'},
		{"since", required_argument, NULL, 'S'},
		{"decision", required_argument, NULL, 'd'},
		{"source", required_argument, NULL, 'o'},
		{"kind", required_argument, NULL, 'k'},
		{"limit", required_argument, NULL, 'l'},
		{"format", required_argument, NULL, 'f'},
		{"tool-calls", no_argument, NULL, 'c'},
		{"no-pager", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->project = optarg;
			break;
		case 'a':
			o->audit = optarg;
			break;
		case 's':
			o->session = optarg;
			break;
		case 'L':
			o->last = true;
			break;
		case 'S':
			if (wd_parse_time(optarg, wd_now_real_us(), &o->f.since_us) < 0) {
				wd_err("--since: \"%s\" is not a date, time or age (30m, 2h, 7d)",
				       optarg);
				return -EINVAL;
			}
			break;
		case 'd':
			if (strcmp(optarg, "allow") != 0 && strcmp(optarg, "deny") != 0) {
				wd_err("--decision: \"%s\" is not allow or deny", optarg);
				return -EINVAL;
			}
			o->f.decision = optarg;
			break;
		case 'o': {
			enum pol_source src_ok;
			if (pol_source_parse(optarg, &src_ok) < 0 || src_ok == POL_SRC_NONE) {
				wd_err("--source: \"%s\" is not a source of the audit (warden "
				       "audit "
				       "--help lists them)",
				       optarg);
				return -EINVAL;
			}
			o->f.source = optarg;
			break;
		}
		case 'k': {
			enum pol_kind kind_ok;
			if (pol_kind_parse(optarg, &kind_ok) < 0) {
				wd_err("--kind: \"%s\" is not exec, open or connect", optarg);
				return -EINVAL;
			}
			o->f.kind = optarg;
			break;
		}
		case 'l':
			if (sup_parse_count("--limit", optarg, &o->limit) < 0)
				return -EINVAL;
			break;
		case 'f':
			if (strcmp(optarg, "table") == 0)
				o->fmt = STO_FMT_TABLE;
			else if (strcmp(optarg, "json") == 0)
				o->fmt = STO_FMT_JSON;
			else if (strcmp(optarg, "csv") == 0)
				o->fmt = STO_FMT_CSV;
			else {
				wd_err("--format: \"%s\" is not table, json or csv", optarg);
				return -EINVAL;
			}
			break;
		case 'c':
			o->tool_calls = true;
			break;
		case 'P':
			o->no_pager = true;
			break;
		case 'h':
			fputs(audit_usage, stdout);
			return 1;
		default:
			sup_opt_error("audit", c, argv);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		wd_err("audit: unexpected argument \"%s\" (warden audit --help)", argv[optind]);
		return -EINVAL;
	}
	if (o->last && o->session) {
		wd_err("--last and --session: give one of them");
		return -EINVAL;
	}
	o->f.limit = o->limit;
	return 0;
}

int sup_cmd_audit(int argc, char **argv)
{
	struct audit_opts o = {.project = ".", .fmt = STO_FMT_TABLE};
	int rc = audit_options(argc, argv, &o);
	if (rc != 0)
		return rc > 0 ? 0 : SUP_EXIT_USAGE;
	char dir[PATH_MAX];
	if (!realpath(o.project, dir)) {
		wd_err("project %s: %s", o.project, strerror(errno));
		return SUP_EXIT_USAGE;
	}
	wd_autofree char *def = wd_asprintf("%s/.warden/audit.db", dir);
	const char *path = o.audit ? o.audit : def;
	struct sto_db *db = NULL;
	if (sup_open_audit(dir, o.audit, &db) < 0)
		return 1;
	wd_autofree char *session = NULL;
	if (o.last || o.session) {
		char *err = NULL;
		rc = sto_session_find(db, o.last ? "last" : o.session, &session, &err);
		if (rc < 0) {
			wd_err("%s", err ? err : strerror(-rc));
			free(err);
			sto_close(db);
			return rc == -ENOENT || rc == -ENOTUNIQ ? SUP_EXIT_USAGE : 1;
		}
		o.f.session = session;
	}
	struct sup_pager pg;
	sup_pager_start(&pg, !o.no_pager);
	bool paged = pg.pid > 0;
	wd_autofree char *err = NULL;
	rc = o.tool_calls ? print_tool_calls(db, &o, pg.width, &err)
			  : sto_print_width(db, &o.f, o.fmt, pg.width, stdout, &err);
	sup_pager_end(&pg);
	/* A person who quits the pager early is not an error. */
	if (rc == -EPIPE && paged)
		rc = 0;
	if (rc < 0 && err)
		wd_err("%s", err);
	else if (rc < 0)
		wd_err("%s: %s", path, strerror(-rc));
	sto_close(db);
	return rc < 0 ? 1 : 0;
}
