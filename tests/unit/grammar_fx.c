/*
 * grammar_fx.c: the grammar tests' shared helpers (grammar_fx.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grammar.h"
#include "policy.h"
#include "policy_int.h"

#include "grammar_fx.h"

struct pol_config *config(void)
{
	struct pol_config *c = pol_config_default();
	pol_config_set_paths(c, PROJECT, HOME);
	return c;
}

enum want class_of(enum pol_class c)
{
	return c == POL_CLASS_READ_ONLY ? FAST : c == POL_CLASS_CRITICAL ? DENY : NOT;
}

const char *want_name(enum want w)
{
	return w == FAST ? "fast_path" : w == DENY ? "hard_deny" : "not";
}

/* Runs a table; returns the number of rows that did not get their class. */
int run_lines(const char *table, const struct line *t, size_t n, char *const *envp, int counts[3])
{
	struct pol_config *c = config();
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		struct pol_classification out;
		pol_classify_argv((char *const *)t[i].argv, envp, c, &out);
		enum want got = class_of(out.cls);
		if (counts)
			counts[t[i].want]++;
		bool ok = got == t[i].want;
		if (ok && t[i].expect && !strstr(out.reason, t[i].expect) &&
		    !strstr(out.matched, t[i].expect))
			ok = false;
		if (!ok) {
			fprintf(stderr, "%s row %zu [", table, i);
			for (size_t k = 0; t[i].argv[k]; k++)
				fprintf(stderr, "%s ", t[i].argv[k]);
			fprintf(stderr, "]: got %s (%s | %s), want %s naming \"%s\"\n",
				want_name(got), out.reason, out.matched, want_name(t[i].want),
				t[i].expect ? t[i].expect : "");
			bad++;
		}
	}
	pol_config_free(c);
	return bad;
}
