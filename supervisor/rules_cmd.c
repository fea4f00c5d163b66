/*
 * rules_cmd.c: `warden rules propose` and `warden rules accept`: confirm
 * rules proposed from the decisions people made (approval memory), and the
 * explicit step that writes one into .warden/permissions.json.
 *
 * Proposing changes nothing. Accepting is a person's choice, named with
 * --by, and shows every condition before it writes. Memory itself never
 * allows anything: only an accepted rule in the committed config does.
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

/* At most this many of the newest people's decisions are read. */
#define RULES_MAX_RECORDS 100000

static const char rules_usage[] =
	"usage: warden rules propose [--project DIR] [--audit PATH] [--min-count N]\n"
	"                            [--min-deciders N] [--max-denied N] [--review-days N]\n"
	"                            [--format table|json]\n"
	"       warden rules accept ID --by NAME [--project DIR] [--audit PATH]\n"
	"                            [the same --min-count ... options as propose]\n"
	"\n"
	"propose: confirm rules from the decisions people made in the audit, one per\n"
	"  program (or open) and argument shape: == for a value that never changed, in\n"
	"  for up to 10 seen values, lo <= x <= hi for numbers. A rule needs N approvals\n"
	"  (5) by N people (2) and no more than N denials inside its bounds (0). It\n"
	"  changes nothing.\n"
	"accept: shows every condition of rule ID, writes it under accepted_rules in\n"
	"  DIR/.warden/permissions.json (accepted_at, accepted_by, review_days) and\n"
	"  prints the entry to commit. A later request inside it is allowed with no\n"
	"  question until the review date; anything else is decided as before.\n";

struct rules_opts {
	const char *project;
	const char *audit;
	const char *by;
	bool json;
	struct pol_propose_opts p;
};

static bool parse_count(const char *s, long lo, long hi, long *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || !end || *end || end == s || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* Says which range option |c| (named |name|) takes, |arg| being outside it. */
static void count_error(int c, const char *name, const char *arg)
{
	if (c == 'r')
		wd_err("%s: \"%s\" is not a number of days from 1 to 3650", name, arg);
	else if (c == 'm')
		wd_err("%s: \"%s\" is not a count from 0 to 1000000", name, arg);
	else
		wd_err("%s: \"%s\" is not a count from 1 to 1000000", name, arg);
}

/* Parses the options of both verbs. Returns -1 to go on, else an exit code. */
static int parse_opts(int argc, char **argv, struct rules_opts *o)
{
	static const struct option longopts[] = {
		{"project", required_argument, NULL, 'p'},
		{"audit", required_argument, NULL, 'a'},
		{"min-count", required_argument, NULL, 'c'},
		{"min-deciders", required_argument, NULL, 'd'},
		{"max-denied", required_argument, NULL, 'm'},
		{"review-days", required_argument, NULL, 'r'},
		{"format", required_argument, NULL, 'f'},
		{"by", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	long v;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		const char *name = c == 'c'   ? "--min-count"
				   : c == 'd' ? "--min-deciders"
				   : c == 'm' ? "--max-denied"
					      : "--review-days";
		switch (c) {
		case 'p':
			o->project = optarg;
			break;
		case 'a':
			o->audit = optarg;
			break;
		case 'b':
			o->by = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0) {
				wd_err("--format must be table or json");
				return SUP_EXIT_USAGE;
			}
			o->json = strcmp(optarg, "json") == 0;
			break;
		case 'c':
		case 'd':
		case 'm':
		case 'r':
			if (!parse_count(optarg, c == 'm' ? 0 : 1, c == 'r' ? 3650 : 1000000, &v)) {
				count_error(c, name, optarg);
				return SUP_EXIT_USAGE;
			}
			if (c == 'c')
				o->p.min_count = (size_t)v;
			else if (c == 'd')
				o->p.min_deciders = (size_t)v;
			else if (c == 'm')
				o->p.max_denied = (size_t)v;
			else
				o->p.review_days = (int)v;
			break;
		case 'h':
			fputs(rules_usage, stdout);
			return 0;
		default:
			sup_opt_error("rules", c, argv);
			return SUP_EXIT_USAGE;
		}
	}
	return -1;
}

/* Reads the people's decisions of the project's audit and proposes. */
static int load_proposals(const struct rules_opts *o, const char *dir, struct sup_records *rs,
			  struct pol_proposals **out)
{
	struct sto_db *db = NULL;
	if (sup_open_audit(dir, o->audit, &db) < 0)
		return 1;
	wd_autofree char *err = NULL;
	int rc = sto_people_decisions(db, NULL, RULES_MAX_RECORDS, sup_records_take, rs, &err);
	if (rc < 0)
		wd_err("%s", err ? err : strerror(-rc));
	sto_close(db);
	if (rc < 0)
		return 1;
	*out = pol_propose(rs->v, rs->n, &o->p);
	return 0;
}

static void print_table(const struct pol_proposals *ps, size_t nrecords,
			const struct pol_propose_opts *p)
{
	size_t n = pol_proposals_count(ps);
	if (n == 0) {
		printf("no rule to propose from %zu decision%s by people: a rule needs %zu "
		       "approvals by %zu people, with at most %zu denial%s inside its bounds, "
		       "and no nested value or text field with more than 10 values\n",
		       nrecords, nrecords == 1 ? "" : "s", p->min_count, p->min_deciders,
		       p->max_denied, p->max_denied == 1 ? "" : "s");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pol_proposal *r = pol_proposals_get(ps, i);
		size_t ok, who, in, out;
		pol_proposal_evidence(r, &ok, &who, &in, &out);
		char *conds = pol_proposal_conditions(r, "    ");
		printf("%s  %s\n%s", pol_proposal_id(r), pol_proposal_tool(r), conds);
		printf("    evidence: %zu approved as-is by %zu %s; %zu denied inside, %zu "
		       "outside\n",
		       ok, who, who == 1 ? "person" : "people", in, out);
		printf("    accept:   warden rules accept %s --by NAME\n\n", pol_proposal_id(r));
		free(conds);
	}
	printf("%zu rule%s proposed; nothing changed. Read every condition before you "
	       "accept.\n",
	       n, n == 1 ? "" : "s");
}

static int cmd_propose(const struct rules_opts *o, const char *dir)
{
	struct sup_records rs = {0};
	struct pol_proposals *ps = NULL;
	int rc = load_proposals(o, dir, &rs, &ps);
	if (rc == 0 && o->json) {
		fputc('[', stdout);
		for (size_t i = 0; i < pol_proposals_count(ps); i++) {
			char *j = pol_proposal_json(pol_proposals_get(ps, i));
			printf("%s%s", i ? ",\n" : "\n", j);
			free(j);
		}
		fputs("\n]\n", stdout);
	} else if (rc == 0) {
		print_table(ps, rs.n, &o->p);
	}
	pol_proposals_free(ps);
	sup_records_free(&rs);
	return rc;
}

/* Writes |text| to |path| through a temporary file and a rename, so that a
 * reader sees the old file or the new one, never half of one. */
static int write_atomic(const char *path, const char *text)
{
	wd_autofree char *tmp = wd_asprintf("%s.tmp.%d", path, (int)getpid());
	struct stat st;
	mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 0777) : 0644;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	int rc = wd_write_all(fd, text, strlen(text));
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

static int write_accepted(const char *dir, const char *rule)
{
	wd_autofree char *wdir = wd_asprintf("%s/.warden", dir);
	wd_autofree char *path = wd_asprintf("%s/permissions.json", wdir);
	if (mkdir(wdir, 0700) < 0 && errno != EEXIST) {
		wd_err("%s: %s", wdir, strerror(errno));
		return 1;
	}
	char *text = NULL;
	size_t len = 0;
	int rc = sup_config_read(path, &text, &len);
	if (rc < 0 && rc != -ENOENT)
		return 1; /* said why */
	char *out = NULL;
	struct pol_config_errors errs = {0};
	rc = pol_config_text_accept(text, len, path, rule, &out, &errs);
	free(text);
	if (rc < 0) {
		for (size_t i = 0; i < errs.count; i++)
			fprintf(stderr, "%s\n", errs.items[i].message);
		wd_err("%s was not changed: fix it first (warden config check)", path);
		pol_config_errors_free(&errs);
		return SUP_EXIT_USAGE;
	}
	rc = write_atomic(path, out);
	free(out);
	if (rc < 0) {
		wd_err("%s: cannot write: %s", path, strerror(-rc));
		return 1;
	}
	printf("wrote %s\n", path);
	return 0;
}

static int cmd_accept(const struct rules_opts *o, const char *dir, const char *id)
{
	if (!o->by || !o->by[0]) {
		wd_err("rules accept: --by NAME is required: accepting is a person's choice");
		return SUP_EXIT_USAGE;
	}
	struct sup_records rs = {0};
	struct pol_proposals *ps = NULL;
	int rc = load_proposals(o, dir, &rs, &ps);
	const struct pol_proposal *r = rc == 0 ? pol_proposals_find(ps, id) : NULL;
	if (rc == 0 && !r) {
		wd_err("no proposed rule %s in this audit now; run warden rules propose (with "
		       "the same --min-count, --min-deciders, --max-denied and --review-days)",
		       id);
		rc = 1;
	}
	if (r) {
		int64_t now = wd_now_real_us();
		char review[40];
		wd_format_time(now + (int64_t)o->p.review_days * 86400LL * 1000000LL, review,
			       sizeof(review));
		char *conds = pol_proposal_conditions(r, "    ");
		size_t ok, who, in, out;
		pol_proposal_evidence(r, &ok, &who, &in, &out);
		printf("accepting %s for %s, by %s.\n"
		       "Until %.10s, every request of %s with exactly these fields is allowed\n"
		       "with no question (nothing else changes):\n%s"
		       "evidence: %zu approved as-is by %zu people; %zu denied inside, %zu "
		       "outside\n",
		       id, pol_proposal_tool(r), o->by, review, pol_proposal_tool(r), conds, ok,
		       who, in, out);
		free(conds);
		char *rule = pol_proposal_accept(r, o->by, now);
		rc = write_accepted(dir, rule);
		if (rc == 0)
			printf("commit this entry of accepted_rules (git add .warden/"
			       "permissions.json):\n%s",
			       rule);
		free(rule);
	}
	pol_proposals_free(ps);
	sup_records_free(&rs);
	return rc;
}

int sup_cmd_rules(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		bool help = argc >= 2;
		fputs(rules_usage, help ? stdout : stderr);
		return help ? 0 : SUP_EXIT_USAGE;
	}
	const char *verb = argv[1];
	struct rules_opts o = {.project = ".", .p = POL_PROPOSE_DEFAULTS};
	int rc = parse_opts(argc - 1, argv + 1, &o);
	if (rc >= 0)
		return rc;
	char **rest = argv + 1 + optind;
	int nrest = argc - 1 - optind;
	char dir[PATH_MAX];
	if (!realpath(o.project, dir)) {
		wd_err("project %s: %s", o.project, strerror(errno));
		return SUP_EXIT_USAGE;
	}
	if (strcmp(verb, "propose") == 0 && nrest == 0)
		return cmd_propose(&o, dir);
	if (strcmp(verb, "accept") == 0 && nrest == 1)
		return cmd_accept(&o, dir, rest[0]);
	fputs(rules_usage, stderr);
	return SUP_EXIT_USAGE;
}
