/*
 * config_check.c: `warden config check [PATH]`: validates a
 * permissions.json and says every problem in it.
 */
#include "sup.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>

static const char check_usage[] =
	"usage: warden config check [PATH]\n"
	"  validates PATH (default: .warden/permissions.json); exit 0 when valid (or\n"
	"  when there is no .warden/permissions.json: the defaults apply), 1 with\n"
	"  every problem (file:line: key: what to do) when not, 2 on bad usage\n";

/* No config in the project: a valid state, the built-in defaults. */
static bool no_default_config(const char *path)
{
	struct stat st;
	return lstat(path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
}

int sup_config_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(check_usage, stdout);
			return 0;
		}
		sup_opt_error("config check", c, argv);
		return SUP_EXIT_USAGE;
	}
	if (argc - optind > 1) {
		fprintf(stderr, "warden config check: one PATH at most; try warden config check "
				"--help\n");
		return SUP_EXIT_USAGE;
	}
	const char *path = optind < argc ? argv[optind] : NULL;
	if (!path && no_default_config(".warden/permissions.json")) {
		printf("no .warden/permissions.json here: the built-in defaults apply (warden "
		       "explain shows what they decide)\n");
		return 0;
	}
	if (!path)
		path = ".warden/permissions.json";
	struct pol_config *cfg = NULL;
	int rc = sup_config_load(path, false, &cfg);
	if (rc == 0)
		printf("%s: ok\n", path);
	pol_config_free(cfg);
	return rc < 0 ? 1 : 0;
}

int sup_cmd_config(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return sup_config_check(argc - 1, argv + 1);
	bool help = argc >= 2 && sup_is_help(argv[1]);
	fputs("usage: warden config check [PATH]   (warden config check --help)\n",
	      help ? stdout : stderr);
	return help ? 0 : SUP_EXIT_USAGE;
}
