/*
 * readonly_rules.c: the fast-path programs' own rules on their parsed
 * words, where options alone do not decide: sed's script, find's
 * expression, uniq's operands, head's and tail's obsolete counts.
 *
 * See docs/design.md, section "Grammars".
 */
#include "grammar.h"
#include "policy_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static size_t count_operands(const struct pol_gr_parse *ps)
{
	size_t k = 0;
	for (size_t i = 0; i < ps->n; i++)
		k += ps->items[i].opt == NULL;
	return k;
}

/* A sed script made only of addresses and the print commands p P = l q Q. */
static bool sed_print_only(const char *s)
{
	const char *p = s;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == ';' || *p == '\n')
			p++;
		if (!*p)
			return true;
		for (int addr = 0; addr < 2; addr++) {
			if (isdigit((unsigned char)*p)) {
				while (isdigit((unsigned char)*p))
					p++;
				if (*p == '~') {
					p++;
					while (isdigit((unsigned char)*p))
						p++;
				}
			} else if (*p == '$') {
				p++;
			} else if (*p == '/' || *p == '\\') {
				char d = *p == '\\' ? p[1] : '/';
				if (*p == '\\') {
					if (!d)
						return false;
					p++;
				}
				p++;
				while (*p && *p != d) {
					if (*p == '\\' && p[1])
						p++;
					p++;
				}
				if (!*p)
					return false;
				p++;
				if (*p == 'I' || *p == 'M')
					p++;
			}
			if (addr == 0 && *p == ',') {
				p++;
				if (*p == '+' || *p == '~')
					p++;
				continue;
			}
			break;
		}
		while (*p == ' ')
			p++;
		if (*p == '!')
			p++;
		while (*p == ' ')
			p++;
		if (!*p || !strchr("pP=lqQ", *p))
			return false;
		p++;
		while (isdigit((unsigned char)*p))
			p++; /* q5, l40 */
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p && *p != ';' && *p != '\n')
			return false;
	}
}

bool pol_gr_check_sed(const struct pol_gr_prog *p, const struct pol_gr_parse *ps, char *const *argv,
		      size_t argc, struct pol_reason *rs)
{
	(void)p;
	(void)argv;
	(void)argc;
	bool quiet = false, have_script = false;
	for (size_t i = 0; i < ps->n; i++) {
		const struct pol_gr_item *it = &ps->items[i];
		if (it->opt && it->opt->shrt == 'n')
			quiet = true;
		const char *script = NULL;
		if (it->opt && it->opt->shrt == 'e')
			script = it->value;
		else if (!it->opt && !have_script) {
			bool any_e = false;
			for (size_t k = 0; k < ps->n; k++)
				any_e |= ps->items[k].opt && ps->items[k].opt->shrt == 'e';
			if (!any_e)
				script = it->word;
		}
		if (!script)
			continue;
		have_script = true;
		if (!sed_print_only(script)) {
			snprintf(rs->matched, sizeof(rs->matched), "%s", "sed");
			GR_FAIL("the sed script does more than print lines");
		}
	}
	if (!quiet || !have_script) {
		snprintf(rs->matched, sizeof(rs->matched), "%s", "sed");
		GR_FAIL("sed without -n and a print-only script may do more than read");
	}
	return true;
}

/* find's expression: tests and the actions that only print. */
struct find_prim {
	const char *name;
	int args;
};
/* clang-format off */
static const struct find_prim find_prims[] = {
	{"-print", 0}, {"-print0", 0}, {"-ls", 0}, {"-prune", 0}, {"-quit", 0}, {"-true", 0},
	{"-false", 0}, {"-empty", 0}, {"-executable", 0}, {"-readable", 0}, {"-writable", 0},
	{"-nogroup", 0}, {"-nouser", 0}, {"-xdev", 0}, {"-mount", 0}, {"-depth", 0}, {"-d", 0},
	{"-follow", 0}, {"-noleaf", 0}, {"-daystart", 0}, {"-ignore_readdir_race", 0},
	{"-noignore_readdir_race", 0}, {"-not", 0}, {"!", 0}, {"(", 0}, {")", 0}, {",", 0},
	{"-a", 0}, {"-and", 0}, {"-o", 0}, {"-or", 0}, {"-help", 0}, {"--help", 0},
	{"-version", 0}, {"--version", 0}, {"-name", 1}, {"-iname", 1}, {"-path", 1},
	{"-ipath", 1}, {"-wholename", 1}, {"-iwholename", 1}, {"-lname", 1}, {"-ilname", 1},
	{"-regex", 1}, {"-iregex", 1}, {"-regextype", 1}, {"-type", 1}, {"-xtype", 1},
	{"-size", 1}, {"-perm", 1}, {"-user", 1}, {"-group", 1}, {"-uid", 1}, {"-gid", 1},
	{"-links", 1}, {"-inum", 1}, {"-samefile", 1}, {"-newer", 1}, {"-anewer", 1},
	{"-cnewer", 1}, {"-mtime", 1}, {"-atime", 1}, {"-ctime", 1}, {"-mmin", 1}, {"-amin", 1},
	{"-cmin", 1}, {"-used", 1}, {"-maxdepth", 1}, {"-mindepth", 1}, {"-printf", 1},
	{"-fstype", 1}, {"-context", 1},
};
/* clang-format on */

bool pol_gr_check_find(const struct pol_gr_prog *p, const struct pol_gr_parse *ps,
		       char *const *argv, size_t argc, struct pol_reason *rs)
{
	(void)p;
	(void)ps;
	size_t i = 1;
	/* -H -L -P -D x -Olevel, then the paths: words up to the first that
	 * starts with '-' or is ( or !. */
	while (i < argc && argv[i][0] == '-' && strchr("HLPDO", argv[i][1]) && argv[i][1]) {
		if (strcmp(argv[i], "-D") == 0)
			i++;
		i++;
	}
	while (i < argc && argv[i][0] != '-' && strcmp(argv[i], "(") != 0 &&
	       strcmp(argv[i], "!") != 0)
		i++;
	for (; i < argc; i++) {
		const char *a = argv[i];
		const struct find_prim *hit = NULL;
		for (size_t k = 0; k < WD_ARRAY_SIZE(find_prims); k++)
			if (strcmp(a, find_prims[k].name) == 0)
				hit = &find_prims[k];
		/* -newerXY ref */
		if (!hit && strncmp(a, "-newer", 6) == 0 && strlen(a) == 8 &&
		    strchr("amcBt", a[6]) && strchr("amcBt", a[7])) {
			i++;
			continue;
		}
		if (!hit) {
			snprintf(rs->matched, sizeof(rs->matched), "%s", a);
			GR_FAIL("find %.60s is not a test or an action warden knows (actions that "
				"run, "
				"delete or write are not read-only)",
				a);
		}
		i += (size_t)hit->args;
	}
	return true;
}

bool pol_gr_check_one_operand(const struct pol_gr_prog *p, const struct pol_gr_parse *ps,
			      char *const *argv, size_t argc, struct pol_reason *rs)
{
	(void)argv;
	(void)argc;
	if (count_operands(ps) > 1) {
		snprintf(rs->matched, sizeof(rs->matched), "%s", p->name);
		GR_FAIL("%s with a second operand writes its output to that file", p->name);
	}
	return true;
}

/* GNU head and tail still read "-20" (and tail "+20") as a line count, but
 * only as the first argument. */
bool pol_gr_obsolete_count(const char *name, const char *a)
{
	if (strcmp(name, "head") != 0 && strcmp(name, "tail") != 0)
		return false;
	if (a[0] != '-' && !(a[0] == '+' && strcmp(name, "tail") == 0))
		return false;
	const char *q = a + 1;
	if (!isdigit((unsigned char)*q))
		return false;
	while (isdigit((unsigned char)*q))
		q++;
	return strspn(q, "bcklmqvfz") == strlen(q) && strlen(q) <= 2;
}
