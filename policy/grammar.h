/*
 * grammar.h: the command-line grammars of the fast path's programs (private
 * to policy/).
 *
 * A program's options are a table as the program itself defines them: the
 * long name, the short letter, whether it takes a value (required, or only
 * attached), and what it does (nothing harmful, writes, runs code, reads
 * names from elsewhere, prints secrets). The parser reads an argv the way
 * the program's own parser does: GNU getopt_long (any unique prefix of a
 * long option, "--opt=value" and "--opt value", clustered short options
 * with an attached value "-ofile", options after operands, "--"), POSIX
 * getopts (options stop at the first operand, exact names) or no options
 * at all. A word it cannot place (an unknown option, an ambiguous prefix,
 * a value given to an option that takes none) makes the command not
 * read-only. See docs/design.md, section "Grammars".
 */
#ifndef WARDEN_POLICY_GRAMMAR_H
#define WARDEN_POLICY_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "policy_int.h"

enum pol_gr_arity {
	GR_NOARG,
	GR_ARG,	   /* a value: "--o=v", "--o v", "-ov", "-o v" */
	GR_OPTARG, /* an optional value, attached only: "--o=v", "-ov" */
};

enum pol_gr_effect {
	GR_OK,	      /* changes nothing, runs nothing, prints no secret */
	GR_WRITES,    /* writes a file or changes the system */
	GR_RUNS,      /* runs a program or code that was not on the command line */
	GR_ELSEWHERE, /* takes the names it reads from a file, unseen */
	GR_SECRET,    /* prints secrets (the environment) */
	GR_CHECKED,   /* the value is checked by the program's own rule */
};

struct pol_gr_opt {
	const char *lng; /* long name without "--", or NULL */
	char shrt;	 /* short letter, or 0 */
	enum pol_gr_arity arity;
	enum pol_gr_effect effect;
};

enum pol_gr_style {
	GR_GNU,	     /* getopt_long: unique prefixes, permutation */
	GR_POSIX,    /* getopts: exact short options, stop at the first operand */
	GR_WORDS,    /* no options: every word is an operand */
	GR_EXACT,    /* git's own: exact long names, no short clusters */
	GR_NOABBREV, /* exact long names, clusters, options after operands (rg) */
};

/* One word of a parsed argv. */
struct pol_gr_item {
	const struct pol_gr_opt *opt; /* NULL for an operand */
	const char *word;	      /* the word it came from */
	const char *value;	      /* the option's value, or NULL */
};

struct pol_gr_parse {
	struct pol_gr_item items[64];
	size_t n;
	bool overflow;	  /* more words than items: not read-only */
	const char *bad;  /* the word that could not be placed, or NULL */
	char problem[96]; /* why, when bad is set */
};

struct pol_gr_prog;
/* A program's own rule on its parsed words (the sed script, find's
 * expression, the operand count of uniq): false with |rs| set when the words
 * do more than read. */
typedef bool (*gr_check_fn)(const struct pol_gr_prog *p, const struct pol_gr_parse *ps,
			    char *const *argv, size_t argc, struct pol_reason *rs);

struct pol_gr_prog {
	const char *name;
	const char *alias; /* a second name of the same program, or NULL */
	enum pol_gr_style style;
	const struct pol_gr_opt *opts; /* terminated by an all-zero entry */
	gr_check_fn check;	       /* NULL: the options decide */
};

/* The fast-path program |name|, or NULL. */
const struct pol_gr_prog *pol_gr_find(const char *name);
/* Every program of the table, for tests and explain; *n is set. */
const struct pol_gr_prog *pol_gr_all(size_t *n);
/* Parses |argv| (|argc| words, argv[0] the program) by |p|'s grammar. */
void pol_gr_parse(const struct pol_gr_prog *p, char *const *argv, size_t argc,
		  struct pol_gr_parse *out);
/* Parses by a bare options table (wrappers, git's global options). Parsing
 * stops at the first operand when |stop_at_operand|; *end is the index of
 * the first word not parsed (argc when all were). */
void pol_gr_parse_opts(const struct pol_gr_opt *opts, enum pol_gr_style style, bool stop_at_operand,
		       char *const *argv, size_t argc, size_t *end, struct pol_gr_parse *out);
const char *pol_gr_effect_name(enum pol_gr_effect e);
/* Appends "opt=value (effect)" of every item of |ps| to |sb|. */
void pol_gr_describe(const struct pol_gr_parse *ps, struct wd_sb *sb);
/* True when the operand |path| names a file whose reading prints secrets
 * of a process (/proc/PID/environ and the like), lexically against |cwd|
 * (may be NULL). */
bool pol_gr_path_prints_secrets(const char *path, const char *cwd);

/* Writes the reason into the calling check's |rs| and returns false. */
#define GR_FAIL(...)                                                                               \
	do {                                                                                       \
		snprintf(rs->why, sizeof(rs->why), __VA_ARGS__);                                   \
		return false;                                                                      \
	} while (0)

/* The programs' own rules (readonly_rules.c), each a gr_check_fn: sed's
 * script only prints, find's expression only tests and prints, uniq has
 * at most one input operand. */
bool pol_gr_check_sed(const struct pol_gr_prog *p, const struct pol_gr_parse *ps, char *const *argv,
		      size_t argc, struct pol_reason *rs);
bool pol_gr_check_find(const struct pol_gr_prog *p, const struct pol_gr_parse *ps,
		       char *const *argv, size_t argc, struct pol_reason *rs);
bool pol_gr_check_one_operand(const struct pol_gr_prog *p, const struct pol_gr_parse *ps,
			      char *const *argv, size_t argc, struct pol_reason *rs);
/* True when |a| is head's or tail's obsolete count ("-5") for |name|. */
bool pol_gr_obsolete_count(const char *name, const char *a);

#endif
