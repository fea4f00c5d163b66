/*
 * main.c: warden's command line: one verb per command.
 */
#include "sup.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <string.h>

static const char usage[] =
	"usage: warden COMMAND [options]\n"
	"\n"
	"warden runs an untrusted AI coding agent so that every exec of its process\n"
	"tree is decided before it happens and recorded in an SQLite audit.\n"
	"\n"
	"commands:\n"
	"  run [options] -- CMD [ARGS...]   run CMD under warden (warden run --help)\n"
	"  audit [options]                  print the audit (warden audit --help)\n"
	"  approvals [--watch] [--format F] requests waiting for a person, in your sessions\n"
	"  approve ID [--always [--project]] [--note TEXT]\n"
	"  deny ID [--note TEXT]            answer a waiting request\n"
	"  doctor [--agent NAME]            check that this machine can run warden (and NAME)\n"
	"  config check [PATH]              validate a .warden/permissions.json\n"
	"  explain [options] -- CMD...      what policy decides for a command, without running it\n"
	"  rules propose|accept [options]   confirm rules from the decisions people made\n"
	"  version                          print the version\n"
	"\n"
	"Exit status of warden run: the agent's (128+N when killed by signal N), 125 when\n"
	"warden could not start it. Other commands: 0 ok, 1 a check failed, 2 bad usage or\n"
	"an invalid config.\n";

static const char audit_usage[] =
	"usage: warden audit [--project DIR] [--audit PATH] [--session ID] [--since T]\n"
	"                    [--source S] [--kind exec|open|connect] [--limit N]\n"
	"                    [--format table|json|csv] [--tool-calls]\n"
	"\n"
	"Prints the audit, oldest first. --tool-calls prints one line per tool call\n"
	"(a process the agent started) with what ran under it. T is a date (2026-12-02), a time\n"
	"(2026-12-02T12:00:00Z) or an age (30m, 2h, 7d).\n";

/* One tool call and what ran under it, for --tool-calls. */
struct call {
	int64_t id, ts_us;
	char *session, *summary, *decision, *source;
	size_t execs, opens, connects, refused;
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
	enum pol_kind kind = POL_EXEC;
	(void)pol_kind_parse(row->kind, &kind);
	if (kind == POL_OPEN)
		k->opens++;
	else if (kind == POL_CONNECT)
		k->connects++;
	else
		k->execs++;
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

/* warden audit --tool-calls: one line per tool call (a process the agent
 * started and everything below it), with what ran under it. */
static int print_tool_calls(struct sto_db *db, const struct sto_filter *f)
{
	struct calls c = {0};
	int rc = sto_query(db, f, collect_call, &c);
	for (size_t i = 0; i < c.n; i++) {
		struct call *k = &c.v[i];
		char t[40];
		wd_format_time(k->ts_us, t, sizeof(t));
		printf("%s  %-6lld %-5s %-10s %s\n", t, (long long)k->id, k->decision, k->source,
		       k->summary);
		if (k->execs || k->opens || k->connects) {
			char conn[64] = "";
			if (k->connects)
				snprintf(conn, sizeof(conn), ", %zu connect%s", k->connects,
					 k->connects == 1 ? "" : "s");
			printf("%26s under it: %zu exec%s, %zu open%s%s, %zu refused: %s%s\n", "",
			       k->execs, k->execs == 1 ? "" : "s", k->opens,
			       k->opens == 1 ? "" : "s", conn, k->refused, k->under.buf,
			       k->under.len >= 300 ? " ..." : "");
		}
		free(k->session);
		free(k->summary);
		free(k->decision);
		free(k->source);
		wd_sb_free(&k->under);
	}
	free(c.v);
	return rc;
}

int sup_cmd_audit(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"project", required_argument, NULL, 'p'},
		{"audit", required_argument, NULL, 'a'},
		{"session", required_argument, NULL, 's'},
		{"since", required_argument, NULL, 'S'},
		{"source", required_argument, NULL, 'o'},
		{"kind", required_argument, NULL, 'k'},
		{"limit", required_argument, NULL, 'l'},
		{"format", required_argument, NULL, 'f'},
		{"tool-calls", no_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool tool_calls = false;
	const char *project = ".", *audit = NULL;
	struct sto_filter f = {0};
	enum sto_format fmt = STO_FMT_TABLE;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			project = optarg;
			break;
		case 'a':
			audit = optarg;
			break;
		case 's':
			f.session = optarg;
			break;
		case 'S':
			if (wd_parse_time(optarg, wd_now_real_us(), &f.since_us) < 0) {
				wd_err("--since: \"%s\" is not a date, time or age (30m, 2h, 7d)",
				       optarg);
				return SUP_EXIT_USAGE;
			}
			break;
		case 'o':
			f.source = optarg;
			break;
		case 'k':
			f.kind = optarg;
			break;
		case 'l':
			f.limit = (size_t)strtoul(optarg, NULL, 10);
			break;
		case 'f':
			if (strcmp(optarg, "table") == 0)
				fmt = STO_FMT_TABLE;
			else if (strcmp(optarg, "json") == 0)
				fmt = STO_FMT_JSON;
			else if (strcmp(optarg, "csv") == 0)
				fmt = STO_FMT_CSV;
			else {
				wd_err("--format must be table, json or csv");
				return SUP_EXIT_USAGE;
			}
			break;
		case 'c':
			tool_calls = true;
			break;
		case 'h':
			fputs(audit_usage, stdout);
			return 0;
		default:
			fputs(audit_usage, stderr);
			return SUP_EXIT_USAGE;
		}
	}
	char dir[PATH_MAX];
	if (!realpath(project, dir)) {
		wd_err("project %s: %s", project, strerror(errno));
		return SUP_EXIT_USAGE;
	}
	struct sto_db *db = NULL;
	if (sup_open_audit(dir, audit, &db) < 0)
		return 1;
	int rc = tool_calls ? print_tool_calls(db, &f) : sto_print(db, &f, fmt, stdout);
	sto_close(db);
	if (rc < 0) {
		wd_err("%s: %s", audit, strerror(-rc));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return SUP_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "run") == 0)
		return sup_cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "audit") == 0)
		return sup_cmd_audit(argc - 1, argv + 1);
	if (strcmp(cmd, "approvals") == 0)
		return sup_cmd_approvals(argc - 1, argv + 1);
	if (strcmp(cmd, "approve") == 0)
		return sup_cmd_answer(argc - 1, argv + 1, true);
	if (strcmp(cmd, "deny") == 0)
		return sup_cmd_answer(argc - 1, argv + 1, false);
	if (strcmp(cmd, "doctor") == 0)
		return sup_cmd_doctor(argc - 1, argv + 1);
	if (strcmp(cmd, "config") == 0)
		return sup_cmd_config(argc - 1, argv + 1);
	if (strcmp(cmd, "explain") == 0)
		return sup_cmd_explain(argc - 1, argv + 1);
	if (strcmp(cmd, "rules") == 0)
		return sup_cmd_rules(argc - 1, argv + 1);
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
		printf("warden %s\n", WARDEN_VERSION);
		return 0;
	}
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	wd_err("unknown command \"%s\"", cmd);
	fputs(usage, stderr);
	return SUP_EXIT_USAGE;
}
