/*
 * config_check.c: `warden config check [PATH]`: validates a
 * permissions.json and says every problem in it.
 */
#include "sup.h"

#include <string.h>

int sup_cmd_config(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "check") != 0) {
		fputs("usage: warden config check [PATH]\n"
		      "  validates PATH (default: .warden/permissions.json); exit 0 when valid,\n"
		      "  2 with every problem (file:line: key: what to do) when not\n",
		      argc >= 2 && strcmp(argv[1], "--help") == 0 ? stdout : stderr);
		return argc >= 2 && strcmp(argv[1], "--help") == 0 ? 0 : SUP_EXIT_USAGE;
	}
	const char *path = argc > 2 ? argv[2] : ".warden/permissions.json";
	struct pol_config *c = NULL;
	int rc = sup_config_load(path, false, &c);
	if (rc == 0)
		printf("%s: ok\n", path);
	pol_config_free(c);
	return rc < 0 ? SUP_EXIT_USAGE : 0;
}
