/*
 * cli.c: what every command says when its command line is wrong: one line
 * naming the command and the option, and where the help is.
 */
#include "sup.h"

#include <getopt.h>
#include <string.h>
#include <unistd.h>

/* The option getopt stopped at, as the person typed it ("--x", "-q"). */
static char *bad_option(int c, char *const *argv)
{
	const char *typed = optind > 0 ? argv[optind - 1] : NULL;
	/* A short option (optopt set, not a long option's value): getopt may
	 * have moved past a group ("-vx"), so the letter is what is known. */
	if (optopt > 0 && optopt < 128 && (!typed || strncmp(typed, "--", 2) != 0) && c == '?')
		return wd_asprintf("-%c", optopt);
	if (!typed)
		return wd_strdup("?");
	/* "--opt=value": the option's name only. */
	size_t n = strcspn(typed, "=");
	return wd_asprintf("%.*s", (int)n, typed);
}

void sup_opt_error(const char *cmd, int c, char *const *argv)
{
	wd_autofree char *opt = bad_option(c, argv);
	wd_autofree char *line =
		wd_asprintf(c == ':' ? "warden %s: option %s needs a value; try warden %s --help"
				     : "warden %s: unknown option %s; try warden %s --help",
			    cmd, opt, cmd);
	wd_autofree char *clean = wd_sanitize(line);
	dprintf(STDERR_FILENO, "%s\n", clean);
}

bool sup_is_help(const char *arg)
{
	return arg && (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0);
}
