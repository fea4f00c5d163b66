/*
 * grammar_fx.h: what the fast path's grammar tests share: a config rooted
 * at PROJECT and HOME, and tables of command lines with the class each
 * must get. grammar_fx.c holds the helpers.
 */
#ifndef WARDEN_GRAMMAR_FX_H
#define WARDEN_GRAMMAR_FX_H

#include <stddef.h>

#include "policy.h"

#define PROJECT "/work/proj"
#define HOME	"/home/u"

/* The default config with the project at PROJECT and the home at HOME.
 * Caller frees with pol_config_free(). */
struct pol_config *config(void);

enum want { FAST, NOT, DENY };

struct line {
	const char *argv[16];
	enum want want;
	const char *expect; /* a substring of the reason or matched, or NULL */
};

/* FAST for a read-only command, DENY for a critical one, else NOT. */
enum want class_of(enum pol_class c);
const char *want_name(enum want w);

/* Runs a table; returns the number of rows that did not get their class. */
int run_lines(const char *table, const struct line *t, size_t n, char *const *envp, int counts[3]);

#endif
