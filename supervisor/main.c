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
	"\n"
	"Exit status of warden run: the agent's (128+N when killed by signal N), 125 when\n"
	"warden could not start it (a bad config, a damaged audit ...). Other commands:\n"
	"0 ok, 1 a check failed or the audit could not be read, 2 bad usage or an invalid\n"
	"config. man warden has the details.\n";

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
	if (strcmp(cmd, "sessions") == 0)
		return sup_cmd_sessions(argc - 1, argv + 1);
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
