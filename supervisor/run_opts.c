/*
 * run_opts.c: the command line of `warden run`: its usage text and the
 * options, checked and stored in struct sup_opts.
 */
#include "sup.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char run_usage[] =
	"usage: warden run [options] -- CMD [ARGS...]\n"
	"\n"
	"Runs CMD under warden: every exec of its process tree is decided (hard deny,\n"
	"rules and grants, the fast path, then the tier) and audited before it runs.\n"
	"\n"
	"  --project DIR     the project the agent works on (default: the current directory);\n"
	"                    the agent starts in DIR unless the current directory is in it\n"
	"  --audit PATH      the audit database (default: DIR/.warden/audit.db)\n"
	"  --tier T          what happens to requests nothing else decided:\n"
	"                    aggressive (allow), standard (ask a person), passive (refuse);\n"
	"                    default: the config's \"tier\", else standard\n"
	"  --prompt P        how a person is asked in the standard tier: desk (the default:\n"
	"                    answer from another terminal with warden approvals / approve /\n"
	"                    deny), tty (the desk, and inline on this terminal), or none\n"
	"                    (refuse: nobody can be asked)\n"
	"  --approval-timeout T\n"
	"                    refuse a request nobody answered within T (30s, 10m, 1h;\n"
	"                    default 10m, at most 24h), audited as timed out\n"
	"  --role R          agent (default) or review: a review run sees the project\n"
	"                    read-only, reads sensitive files without asking, and never\n"
	"                    waits for a person (the standard tier refuses escalations)\n"
	"  --task TEXT       what the agent was asked to do (recorded with the session and\n"
	"                    shown to the judge; at most 800 characters)\n"
	"  --parent ID       a sub-session of session ID: its judge reads ID's rules too\n"
	"  --agent A         the agent's profile: claude-code, codex, aider, none or auto\n"
	"                    (default: from the program's name): its writable places, its\n"
	"                    start-up execs, its tool-call wrapper\n"
	"  --turn-idle S     the judge's turn ends after S seconds without a request\n"
	"                    (default 2): its rules prefix is rebuilt at the next turn\n"
	"  --stats           print decision counts and latencies at exit\n"
	"  --no-view         do not mount the project view: opens of sensitive files in\n"
	"                    the project are then NOT decided (exec decisions remain)\n"
	"  --view MODE       how the project view is made: auto (the default), fuse or\n"
	"                    split. split (root only, Linux 5.19+): every subtree of\n"
	"                    the project without a sensitive, control, write-protected\n"
	"                    or hidden name is bound natively and its opens are\n"
	"                    decided by fanotify; the rest goes through the FUSE view.\n"
	"                    fuse: the whole project through FUSE (slower, the same\n"
	"                    decisions). auto: split when it is available, else fuse.\n"
	"                    The environment variable WARDEN_VIEW sets the same; the\n"
	"                    option wins\n"
	"  --keep-tmp        keep the session's private /tmp, /var/tmp and /dev/shm after\n"
	"                    the run (warden says where); by default they are removed\n"
	"  --share-tmp PATH  show the host's PATH (under /tmp, /var/tmp or /dev/shm) in\n"
	"                    the session's private one, read-only (as the config's\n"
	"                    \"tmp\": {\"share\"}); may be repeated\n"
	"  --force           run even when the project is / or your home directory (or a\n"
	"                    directory above it), which the agent would then see whole\n"
	"  -q, --quiet       no informational lines at start and no summary at exit\n"
	"                    (warnings and errors are still printed)\n"
	"  -v, --verbose     log every decision on stderr\n"
	"  -h, --help        this text\n"
	"\n"
	"Exit status: the agent's own (128+N when killed by signal N); 125 when warden\n"
	"could not start it (bad options or config, no sandbox, command not found).\n";

static int opt_prompt(const char *arg, struct sup_opts *o)
{
	if (strcmp(arg, "tty") == 0)
		o->prompt = SUP_PROMPT_TTY;
	else if (strcmp(arg, "desk") == 0)
		o->prompt = SUP_PROMPT_DESK;
	else if (strcmp(arg, "none") == 0)
		o->prompt = SUP_PROMPT_NONE;
	else {
		wd_err("--prompt must be desk, tty or none, not \"%s\"", arg);
		return -EINVAL;
	}
	o->prompt_set = true;
	return 0;
}

static int opt_share_tmp(const char *arg, struct sup_opts *o)
{
	if (!pol_tmp_share_valid(arg)) {
		wd_err("--share-tmp: \"%s\" is not an absolute path under /tmp, /var/tmp or "
		       "/dev/shm",
		       arg);
		return -EINVAL;
	}
	size_t n = 0;
	while (o->share_tmp[n])
		n++;
	if (n + 1 >= WD_ARRAY_SIZE(o->share_tmp)) {
		wd_err("--share-tmp: at most %zu places", WD_ARRAY_SIZE(o->share_tmp) - 1);
		return -EINVAL;
	}
	o->share_tmp[n] = arg;
	return 0;
}

/* A person's answer is waited for at most a day: a longer wait keeps the
 * agent's call blocked for longer than anyone watches a session, and a
 * number past this bound must not wrap around to a deadline in the past. */
#define SUP_APPROVAL_TIMEOUT_MAX_S (24 * 3600)

static int opt_approval_timeout(const char *arg, struct sup_opts *o)
{
	char *end = NULL;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	unsigned long long unit = 0;
	if (end != arg && arg[0] >= '0' && arg[0] <= '9' && errno != ERANGE && (!end[0] || !end[1]))
		unit = !end[0] || end[0] == 's' ? 1
		       : end[0] == 'm'		? 60
		       : end[0] == 'h'		? 3600
		       : end[0] == 'd'		? 86400
						: 0;
	if (unit == 0 || v == 0) {
		wd_err("--approval-timeout: \"%s\" is not a duration (30s, 10m, 1h)", arg);
		return -EINVAL;
	}
	/* Compared before multiplying: no product can overflow. */
	if (v > SUP_APPROVAL_TIMEOUT_MAX_S / unit) {
		wd_err("--approval-timeout: \"%s\" is longer than the maximum, 24h", arg);
		return -EINVAL;
	}
	o->approval_timeout_ms = (int64_t)(v * unit * 1000);
	return 0;
}

static int opt_turn_idle(const char *arg, struct sup_opts *o)
{
	char *end = NULL;
	double secs = strtod(arg, &end);
	if (end == arg || *end || secs < 0 || secs > 3600) {
		wd_err("--turn-idle: \"%s\" is not a number of seconds (0-3600)", arg);
		return -EINVAL;
	}
	o->turn_idle_ms = (int64_t)(secs * 1000);
	o->turn_idle_set = true;
	return 0;
}

int sup_view_mode_parse(const char *arg, enum sup_view_mode *m)
{
	if (strcmp(arg, "auto") == 0)
		*m = SUP_VIEW_AUTO;
	else if (strcmp(arg, "fuse") == 0)
		*m = SUP_VIEW_FUSE;
	else if (strcmp(arg, "split") == 0)
		*m = SUP_VIEW_SPLIT;
	else
		return -EINVAL;
	return 0;
}

static int opt_view(const char *arg, struct sup_opts *o)
{
	if (sup_view_mode_parse(arg, &o->view_mode) < 0) {
		wd_err("--view must be auto, fuse or split, not \"%s\"", arg);
		return -EINVAL;
	}
	o->view_mode_set = true;
	return 0;
}

static int opt_agent(const char *arg, struct sup_opts *o)
{
	o->agent_auto = strcmp(arg, "auto") == 0;
	if (o->agent_auto || strcmp(arg, "none") == 0)
		o->agent = POL_HARNESS_NONE;
	else if (strcmp(arg, "claude-code") == 0)
		o->agent = POL_HARNESS_CLAUDE_CODE;
	else if (strcmp(arg, "codex") == 0)
		o->agent = POL_HARNESS_CODEX;
	else if (strcmp(arg, "aider") == 0)
		o->agent = POL_HARNESS_AIDER;
	else {
		wd_err("--agent must be claude-code, codex, aider, auto or none, not \"%s\"", arg);
		return -EINVAL;
	}
	o->agent_set = true;
	return 0;
}

/* One option with a value (|c| as in longopts). */
static int opt_value(int c, const char *arg, struct sup_opts *o)
{
	switch (c) {
	case 't':
		if (pol_tier_parse(arg, &o->tier) < 0) {
			wd_err("--tier must be aggressive, standard or passive, not \"%s\"", arg);
			return -EINVAL;
		}
		o->tier_set = true;
		return 0;
	case 'T':
		if (strlen(arg) > 800) {
			wd_err("--task is limited to 800 characters (%zu given)", strlen(arg));
			return -EINVAL;
		}
		o->task = arg;
		return 0;
	case 'R':
		if (strcmp(arg, "review") == 0)
			o->review = true;
		else if (strcmp(arg, "agent") != 0) {
			wd_err("--role must be agent or review, not \"%s\"", arg);
			return -EINVAL;
		}
		return 0;
	case 'P':
		return opt_prompt(arg, o);
	case 'H':
		return opt_share_tmp(arg, o);
	case 'D':
		return opt_approval_timeout(arg, o);
	case 'I':
		return opt_turn_idle(arg, o);
	case 'V':
		return opt_view(arg, o);
	case 'G':
		return opt_agent(arg, o);
	default:
		return -EINVAL;
	}
}

int sup_run_options(int argc, char **argv, struct sup_opts *o)
{
	static const struct option longopts[] = {
		{"project", required_argument, NULL, 'p'},
		{"audit", required_argument, NULL, 'a'},
		{"tier", required_argument, NULL, 't'},
		{"prompt", required_argument, NULL, 'P'},
		{"task", required_argument, NULL, 'T'},
		{"stats", no_argument, NULL, 'S'},
		{"no-view", no_argument, NULL, 'N'},
		{"view", required_argument, NULL, 'V'},
		{"keep-tmp", no_argument, NULL, 'K'},
		{"share-tmp", required_argument, NULL, 'H'},
		{"approval-timeout", required_argument, NULL, 'D'},
		{"role", required_argument, NULL, 'R'},
		{"turn-idle", required_argument, NULL, 'I'},
		{"parent", required_argument, NULL, 'Q'},
		{"agent", required_argument, NULL, 'G'},
		{"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{"force", no_argument, NULL, 'F'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:vqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->project = optarg;
			break;
		case 'a':
			o->audit_path = optarg;
			break;
		case 'Q':
			o->parent = optarg;
			break;
		case 'S':
			o->stats = true;
			break;
		case 'N':
			o->no_view = true;
			break;
		case 'K':
			o->keep_tmp = true;
			break;
		case 'v':
			wd_log_set_level(WD_LOG_DEBUG);
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'F':
			o->force = true;
			break;
		case 'h':
			fputs(run_usage, stdout);
			exit(0);
		case '?':
		case ':':
			sup_opt_error("run", c, argv);
			return -EINVAL;
		default:
			if (opt_value(c, optarg, o) < 0)
				return -EINVAL;
		}
	}
	if (optind >= argc) {
		wd_err("warden run needs a command: warden run [options] -- CMD [ARGS...]");
		return -EINVAL;
	}
	/* WARDEN_VIEW when --view was not given: checked here, with the
	 * options, before anything is started. */
	const char *env = getenv("WARDEN_VIEW");
	if (!o->view_mode_set && env && *env) {
		if (sup_view_mode_parse(env, &o->view_mode) < 0) {
			wd_err("WARDEN_VIEW must be auto, fuse or split, not \"%s\"", env);
			return -EINVAL;
		}
	}
	o->argv = argv + optind;
	return 0;
}
