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
	"  sessions [options]               one line per session (warden sessions --help)\n"
	"  approvals [--watch] [--format F] requests waiting for a person, in your sessions\n"
	"  approve ID [--always [--project]] [--note TEXT]\n"
	"  deny ID [--note TEXT]            answer a waiting request\n"
	"  doctor [--agent NAME]            check that this machine can run warden (and NAME)\n"
	"  config check [PATH]              validate a .warden/permissions.json\n"
	"  explain [options] -- CMD...      what policy decides for a command, without running it\n"
	"  rules propose|accept [options]   confirm rules from the decisions people made\n"
	"  version                          print the version\n"
	"  help [COMMAND]                   this text, or COMMAND's (as COMMAND --help)\n"
	"\n"
	"Exit status of warden run: the agent's (128+N when killed by signal N), 125 when\n"
	"warden could not start it (a bad config, a damaged audit ...). Other commands:\n"
	"0 ok, 1 a negative answer (doctor found a blocker, config check found problems,\n"
	"no such request, rows of the audit could not be read), 2 bad usage.\n"
	"man warden has the details.\n";

/* warden version [-h|--help]. */
static int cmd_version(int argc, char **argv)
{
	if (argc > 1 && sup_is_help(argv[1])) {
		puts("usage: warden version\n  prints warden's version");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "warden version: takes no arguments; try warden version --help\n");
		return SUP_EXIT_USAGE;
	}
	printf("warden %s\n", WARDEN_VERSION);
	return 0;
}

static int dispatch(int argc, char **argv);

/* warden help [COMMAND]: COMMAND's own help, as COMMAND --help prints it. */
static int cmd_help(int argc, char **argv)
{
	if (argc < 2 || sup_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	char *av[] = {argv[1], "--help", NULL};
	return dispatch(2, av);
}

int main(int argc, char **argv)
{
	/* Every command says itself what is wrong with an option, prefixed
	 * "warden CMD:" (sup_opt_error), instead of getopt's bare message. */
	opterr = 0;
	if (argc < 2) {
		fputs(usage, stderr);
		return SUP_EXIT_USAGE;
	}
	return dispatch(argc - 1, argv + 1);
}

/* Runs the command argv[0] with its arguments. */
static int dispatch(int argc, char **argv)
{
	const char *cmd = argv[0];
	if (strcmp(cmd, "run") == 0)
		return sup_cmd_run(argc, argv);
	if (strcmp(cmd, "audit") == 0)
		return sup_cmd_audit(argc, argv);
	if (strcmp(cmd, "sessions") == 0)
		return sup_cmd_sessions(argc, argv);
	if (strcmp(cmd, "approvals") == 0)
		return sup_cmd_approvals(argc, argv);
	if (strcmp(cmd, "approve") == 0)
		return sup_cmd_answer(argc, argv, true);
	if (strcmp(cmd, "deny") == 0)
		return sup_cmd_answer(argc, argv, false);
	if (strcmp(cmd, "doctor") == 0)
		return sup_cmd_doctor(argc, argv);
	if (strcmp(cmd, "config") == 0)
		return sup_cmd_config(argc, argv);
	if (strcmp(cmd, "explain") == 0)
		return sup_cmd_explain(argc, argv);
	if (strcmp(cmd, "rules") == 0)
		return sup_cmd_rules(argc, argv);
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0)
		return cmd_version(argc, argv);
	if (strcmp(cmd, "help") == 0 || sup_is_help(cmd))
		return cmd_help(argc, argv);
	wd_err("unknown command \"%s\"; try warden help", cmd);
	return SUP_EXIT_USAGE;
}
