/*
 * grammar.c: reads an argv the way the program's own option parser reads
 * it (grammar.h), for the fast path and for explain.
 *
 * GNU getopt_long, as glibc implements it: a long option is its exact name
 * or else any prefix that only one long option starts with (two or more:
 * ambiguous, the program refuses the line); "--name=value", or the next word
 * for an option that needs a value; short options cluster ("-ni" is -n -i)
 * and a value may be attached ("-ofile") or be the next word; an optional
 * value is only ever attached; options may follow operands; "--" ends them
 * and a lone "-" is an operand. POSIX getopts stops at the first operand.
 * Pure: no I/O.
 *
 * See docs/design.md, section "Grammars".
 */
#include "grammar.h"
#include "policy_int.h"

#include <stdio.h>
#include <string.h>

static const char *const effect_names[] = {
	[GR_OK] = "harmless",		[GR_WRITES] = "writes",
	[GR_RUNS] = "runs code",	[GR_ELSEWHERE] = "reads names from elsewhere",
	[GR_SECRET] = "prints secrets", [GR_CHECKED] = "value checked",
};

const char *pol_gr_effect_name(enum pol_gr_effect e)
{
	return pol_name_of(effect_names, WD_ARRAY_SIZE(effect_names), e, "unknown");
}

static void bad(struct pol_gr_parse *out, const char *word, const char *fmt, const char *arg)
	__attribute__((format(printf, 3, 0)));

static void bad(struct pol_gr_parse *out, const char *word, const char *fmt, const char *arg)
{
	if (out->bad)
		return;
	out->bad = word;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(out->problem, sizeof(out->problem), fmt, arg);
#pragma GCC diagnostic pop
}

static void add(struct pol_gr_parse *out, const struct pol_gr_opt *o, const char *word,
		const char *value)
{
	if (out->n >= WD_ARRAY_SIZE(out->items)) {
		out->overflow = true;
		bad(out, word, "%s", "the command has more words than warden follows");
		return;
	}
	out->items[out->n++] = (struct pol_gr_item){.opt = o, .word = word, .value = value};
}

/* The long option |name| (|len| bytes, no "--") by getopt_long's rule:
 * exact, else the only one it is a prefix of. NULL with *ambiguous set when
 * two or more share the prefix. With |exact_only|, only an exact name. */
static const struct pol_gr_opt *find_long(const struct pol_gr_opt *opts, const char *name,
					  size_t len, bool exact_only, bool *ambiguous)
{
	const struct pol_gr_opt *hit = NULL;
	*ambiguous = false;
	for (const struct pol_gr_opt *o = opts; o->lng || o->shrt; o++) {
		if (!o->lng || strncmp(o->lng, name, len) != 0)
			continue;
		if (o->lng[len] == '\0')
			return o;
		if (exact_only)
			continue;
		if (hit)
			*ambiguous = true;
		hit = o;
	}
	return *ambiguous ? NULL : hit;
}

static const struct pol_gr_opt *find_short(const struct pol_gr_opt *opts, char c)
{
	for (const struct pol_gr_opt *o = opts; o->lng || o->shrt; o++)
		if (o->shrt == c)
			return o;
	return NULL;
}

/* "--name[=value]" at argv[*k]; advances *k past a separate value. */
static void parse_long(const struct pol_gr_opt *opts, bool exact, char *const *argv, size_t argc,
		       size_t *k, struct pol_gr_parse *out)
{
	const char *a = argv[*k];
	const char *eq = strchr(a + 2, '=');
	size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
	bool amb;
	const struct pol_gr_opt *o = find_long(opts, a + 2, len, exact, &amb);
	if (!o) {
		bad(out, a,
		    amb ? "%s is an ambiguous abbreviation" : "%s is not an option warden knows",
		    a);
		return;
	}
	const char *val = NULL;
	if (o->arity == GR_NOARG && eq) {
		bad(out, a, "%s takes no value", a);
		return;
	}
	if (eq)
		val = eq + 1;
	else if (o->arity == GR_ARG) {
		if (*k + 1 >= argc) {
			bad(out, a, "%s needs a value", a);
			return;
		}
		val = argv[++*k];
	}
	add(out, o, a, val);
}

/* A cluster "-abc" at argv[*k]; advances *k past a separate value. */
static void parse_short(const struct pol_gr_opt *opts, bool cluster, char *const *argv, size_t argc,
			size_t *k, struct pol_gr_parse *out)
{
	const char *a = argv[*k];
	if (!cluster && a[2]) {
		bad(out, a, "%s is not an option warden knows", a);
		return;
	}
	for (const char *c = a + 1; *c; c++) {
		const struct pol_gr_opt *o = find_short(opts, *c);
		if (!o) {
			char one[3] = {'-', *c, '\0'};
			bad(out, a, "%s is not an option warden knows", one);
			return;
		}
		if (o->arity == GR_NOARG) {
			add(out, o, a, NULL);
			continue;
		}
		if (c[1]) {
			add(out, o, a, c + 1);
			return;
		}
		if (o->arity == GR_OPTARG) {
			add(out, o, a, NULL);
			return;
		}
		if (*k + 1 >= argc) {
			bad(out, a, "%s needs a value", a);
			return;
		}
		add(out, o, a, argv[++*k]);
		return;
	}
}

void pol_gr_parse_opts(const struct pol_gr_opt *opts, enum pol_gr_style style, bool stop_at_operand,
		       char *const *argv, size_t argc, size_t *end, struct pol_gr_parse *out)
{
	bool options = style != GR_WORDS;
	size_t k = 1;
	for (; k < argc && !out->bad; k++) {
		const char *a = argv[k];
		if (options && strcmp(a, "--") == 0) {
			options = false;
			continue;
		}
		if (options && a[0] == '-' && a[1] == '-') {
			parse_long(opts, style != GR_GNU, argv, argc, &k, out);
			continue;
		}
		if (options && a[0] == '-' && a[1]) {
			parse_short(opts, style != GR_EXACT, argv, argc, &k, out);
			continue;
		}
		if (stop_at_operand)
			break;
		add(out, NULL, a, NULL);
		if (style == GR_POSIX || style == GR_EXACT)
			options = false;
	}
	if (end)
		*end = k < argc ? k : argc;
}

void pol_gr_parse(const struct pol_gr_prog *p, char *const *argv, size_t argc,
		  struct pol_gr_parse *out)
{
	memset(out, 0, sizeof(*out));
	pol_gr_parse_opts(p->opts, p->style, false, argv, argc, NULL, out);
}

void pol_gr_describe(const struct pol_gr_parse *ps, struct wd_sb *sb)
{
	if (ps->n == 0 && !ps->bad)
		wd_sb_puts(sb, "(no options or operands)");
	for (size_t i = 0; i < ps->n; i++) {
		const struct pol_gr_item *it = &ps->items[i];
		if (i)
			wd_sb_puts(sb, ", ");
		if (!it->opt) {
			wd_sb_puts(sb, "operand ");
			wd_sb_shell_quote(sb, it->word);
			continue;
		}
		if (it->opt->lng)
			wd_sb_printf(sb, "--%s", it->opt->lng);
		else
			wd_sb_printf(sb, "-%c", it->opt->shrt);
		if (it->value) {
			wd_sb_putc(sb, '=');
			wd_sb_shell_quote(sb, it->value);
		}
		wd_sb_printf(sb, " (%s)", pol_gr_effect_name(it->opt->effect));
	}
	if (ps->bad) {
		if (ps->n)
			wd_sb_puts(sb, ", ");
		wd_sb_puts(sb, "NOT PARSED: ");
		wd_sb_puts(sb, ps->problem);
	}
}

bool pol_gr_path_prints_secrets(const char *path, const char *cwd)
{
	if (path[0] == '~') {
		const char *b = strrchr(path, '/');
		b = b ? b + 1 : path;
		size_t l = strlen(b);
		return strcmp(b, ".history") == 0 || (l > 8 && strcmp(b + l - 8, "_history") == 0);
	}
	/* What /proc shows of a process (environ, cmdline, mem, fds, maps of
	 * another) may hold secrets; the few files below are the machine's. */
	static const char *const machine[] = {"cpuinfo", "meminfo", "version",	  "loadavg",
					      "uptime",	 "stat",    "filesystems"};
	char *full = NULL;
	if (path[0] == '/')
		full = pol_path_lexical(path);
	else if (cwd && cwd[0] == '/') {
		char *j = wd_asprintf("%s/%s", cwd, path);
		full = pol_path_lexical(j);
		free(j);
	} else
		return false;
	bool hit = false;
	/* A shell's or a REPL's history holds what was typed: tokens too. */
	const char *base = strrchr(full, '/');
	base = base ? base + 1 : full;
	size_t bl = strlen(base);
	if (strcmp(base, ".history") == 0 || (bl > 8 && strcmp(base + bl - 8, "_history") == 0))
		hit = true;
	if (strcmp(full, "/proc") == 0)
		hit = true;
	else if (strncmp(full, "/proc/", 6) == 0) {
		hit = true;
		for (size_t i = 0; i < WD_ARRAY_SIZE(machine); i++)
			if (strcmp(full + 6, machine[i]) == 0)
				hit = false;
	}
	free(full);
	return hit;
}
