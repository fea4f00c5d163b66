/*
 * sessions_cmd.c: `warden sessions`: one line per `warden run` of the
 * project: its id, start, duration, agent, tier, how many requests were
 * allowed, refused and put to a person, and the exit status.
 */
#include "sup.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <string.h>

static const char sessions_usage[] =
	"usage: warden sessions [--project DIR] [--audit PATH] [--limit N]\n"
	"                       [--format table|json] [--no-pager]\n"
	"\n"
	"One line per session (warden run) of the project, oldest first: its id (the\n"
	"last four digits are the short id of its approval ids), start (UTC),\n"
	"duration, agent, tier, requests allowed, refused and asked (put to a person,\n"
	"answered or not), and exit status (125: warden could not start the agent;\n"
	"- while running, or when warden itself was killed).\n"
	"  --limit N   the latest N sessions\n"
	"  --format F  table or json\n";

static void duration(const struct sto_session_info *s, char *buf, size_t n)
{
	if (!s->ended_us || s->ended_us < s->started_us) {
		snprintf(buf, n, "-");
		return;
	}
	long long sec = (s->ended_us - s->started_us) / 1000000;
	if (sec >= 3600)
		snprintf(buf, n, "%lldh%02lldm", sec / 3600, sec / 60 % 60);
	else if (sec >= 60)
		snprintf(buf, n, "%lldm%02llds", sec / 60, sec % 60);
	else
		snprintf(buf, n, "%llds", sec);
}

struct listing {
	bool json;
	size_t rows, width;
};

static int session_line(const struct sto_session_info *s, void *arg)
{
	struct listing *l = arg;
	char start[40], dur[32], exit_s[16];
	wd_format_time(s->started_us, start, sizeof(start));
	duration(s, dur, sizeof(dur));
	snprintf(exit_s, sizeof(exit_s), "%d", s->exit_status);
	const char *agent = s->role && strcmp(s->role, "review") == 0 ? "review"
			    : s->agent				      ? s->agent
								      : "-";
	if (l->json) {
		struct wd_sb sb = {0};
		wd_sb_puts(&sb, l->rows ? ",\n{\"id\":" : "\n{\"id\":");
		wd_sb_json_str(&sb, s->id ? s->id : "");
		wd_sb_puts(&sb, ",\"start\":");
		wd_sb_json_str(&sb, start);
		wd_sb_printf(&sb, ",\"started_us\":%lld,", (long long)s->started_us);
		if (s->ended_us)
			wd_sb_printf(&sb, "\"ended_us\":%lld,\"duration_s\":%lld,",
				     (long long)s->ended_us,
				     (long long)(s->ended_us - s->started_us) / 1000000);
		else
			wd_sb_puts(&sb, "\"ended_us\":null,\"duration_s\":null,");
		wd_sb_puts(&sb, "\"agent\":");
		wd_sb_json_str(&sb, agent);
		wd_sb_puts(&sb, ",\"tier\":");
		wd_sb_json_str(&sb, s->tier ? s->tier : "");
		/* Counts a damaged file could not give are null. */
		const char *names[3] = {"allowed", "refused", "asked"};
		const int64_t counts[3] = {s->allowed, s->refused, s->asked};
		for (int i = 0; i < 3; i++) {
			if (counts[i] < 0)
				wd_sb_printf(&sb, ",\"%s\":null", names[i]);
			else
				wd_sb_printf(&sb, ",\"%s\":%lld", names[i], (long long)counts[i]);
		}
		wd_sb_putc(&sb, ',');
		if (s->has_exit)
			wd_sb_printf(&sb, "\"exit_status\":%d}", s->exit_status);
		else
			wd_sb_puts(&sb, "\"exit_status\":null}");
		fwrite(sb.buf, 1, sb.len, stdout);
		wd_sb_free(&sb);
	} else {
		if (l->rows == 0) {
			wd_autofree char *head = wd_asprintf(
				"%-22s %-20s %8s  %-12s %-10s %8s %8s %6s %5s", "SESSION", "START",
				"DURATION", "AGENT", "TIER", "ALLOWED", "REFUSED", "ASKED", "EXIT");
			wd_autofree char *fit_head = sup_fit_line(head, l->width);
			printf("%s\n", fit_head);
		}
		char n[3][24];
		const int64_t counts[3] = {s->allowed, s->refused, s->asked};
		for (int i = 0; i < 3; i++)
			snprintf(n[i], sizeof(n[i]), counts[i] < 0 ? "?" : "%lld",
				 (long long)counts[i]);
		wd_autofree char *line =
			wd_asprintf("%-22s %-20s %8s  %-12s %-10s %8s %8s %6s %5s",
				    s->id ? s->id : "-", start, dur, agent, s->tier ? s->tier : "-",
				    n[0], n[1], n[2], s->has_exit ? exit_s : "-");
		wd_autofree char *fit = sup_fit_line(line, l->width);
		printf("%s\n", fit);
	}
	l->rows++;
	return 0;
}

int sup_cmd_sessions(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"project", required_argument, NULL, 'p'},
		{"audit", required_argument, NULL, 'a'},
		{"limit", required_argument, NULL, 'l'},
		{"format", required_argument, NULL, 'f'},
		{"no-pager", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *project = ".", *audit = NULL;
	size_t limit = 0;
	bool json = false, no_pager = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			project = optarg;
			break;
		case 'a':
			audit = optarg;
			break;
		case 'l':
			if (sup_parse_count("--limit", optarg, &limit) < 0)
				return SUP_EXIT_USAGE;
			break;
		case 'f':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0) {
				wd_err("--format: \"%s\" is not table or json", optarg);
				return SUP_EXIT_USAGE;
			}
			json = strcmp(optarg, "json") == 0;
			break;
		case 'P':
			no_pager = true;
			break;
		case 'h':
			fputs(sessions_usage, stdout);
			return 0;
		default:
			sup_opt_error("sessions", c, argv);
			return SUP_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		wd_err("sessions: unexpected argument \"%s\" (warden sessions --help)",
		       argv[optind]);
		return SUP_EXIT_USAGE;
	}
	char dir[PATH_MAX];
	if (!realpath(project, dir)) {
		wd_err("project %s: %s", project, strerror(errno));
		return SUP_EXIT_USAGE;
	}
	struct sto_db *db = NULL;
	if (sup_open_audit(dir, audit, &db) < 0)
		return 1;
	struct sup_pager pg;
	sup_pager_start(&pg, !no_pager);
	struct listing l = {.json = json, .width = pg.width};
	if (json)
		fputs("[", stdout);
	wd_autofree char *err = NULL;
	int rc = sto_sessions(db, limit, session_line, &l, &err);
	if (json)
		fputs(l.rows ? "\n]\n" : "]\n", stdout);
	else if (rc == 0 && l.rows == 0)
		printf("no session yet\n");
	sup_pager_end(&pg);
	if (rc < 0)
		wd_err("%s", err ? err : strerror(-rc));
	sto_close(db);
	return rc < 0 ? 1 : 0;
}
