/*
 * readonly.c: the table of read-only commands and their argument rules.
 *
 * A command is read-only when it cannot change files, run other programs or
 * print secrets with the arguments it was given. Each entry is a name and,
 * where some options break that, a check of the arguments. Whatever is not
 * in the table needs a decision.
 */
#include "policy_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef bool (*ro_check_fn)(char *const *argv, size_t argc, char *why, size_t n, char *matched);

struct ro_entry {
	const char *name;
	ro_check_fn check; /* NULL: every argument is fine */
};

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(why, n, __VA_ARGS__);                                                     \
		return false;                                                                      \
	} while (0)

/* True when |a| is the option |opt| or "|opt|=...". */
static bool is_opt(const char *a, const char *opt)
{
	size_t l = strlen(opt);
	return strncmp(a, opt, l) == 0 && (a[l] == '\0' || a[l] == '=');
}

/* A short-option cluster ("-xvf") containing |c|. */
static bool short_has(const char *a, char c)
{
	return a[0] == '-' && a[1] != '-' && a[1] && strchr(a + 1, c);
}

static size_t count_operands(char *const *argv, size_t argc)
{
	size_t ops = 0;
	bool opts = true;
	for (size_t i = 1; i < argc; i++) {
		if (opts && strcmp(argv[i], "--") == 0)
			opts = false;
		else if (!opts || argv[i][0] != '-' || !argv[i][1])
			ops++;
	}
	return ops;
}

static bool check_find(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	static const char *const bad[] = {"-exec",   "-execdir", "-ok",	     "-okdir", "-delete",
					  "-fprint", "-fprint0", "-fprintf", "-fls"};
	for (size_t i = 1; i < argc; i++)
		for (size_t k = 0; k < WD_ARRAY_SIZE(bad); k++)
			if (strcmp(argv[i], bad[k]) == 0) {
				snprintf(matched, 64, "%s", bad[k]);
				FAIL("find %s runs a command, deletes or writes files", bad[k]);
			}
	return true;
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

static bool check_sed(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	bool quiet = false, have_script = false;
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (is_opt(a, "--in-place") || (a[0] == '-' && a[1] == 'i') || short_has(a, 'i')) {
			snprintf(matched, 64, "%s", "sed -i");
			FAIL("sed -i edits files in place");
		}
		if (is_opt(a, "--file") || short_has(a, 'f')) {
			snprintf(matched, 64, "%s", "sed -f");
			FAIL("sed -f runs a script from a file");
		}
		if (strcmp(a, "-n") == 0 || strcmp(a, "--quiet") == 0 ||
		    strcmp(a, "--silent") == 0 ||
		    (short_has(a, 'n') && !short_has(a, 'e') && !short_has(a, 'l'))) {
			quiet = true;
			continue;
		}
		const char *script = NULL;
		if (strcmp(a, "-e") == 0 || strcmp(a, "--expression") == 0) {
			script = i + 1 < argc ? argv[++i] : "";
		} else if (strncmp(a, "--expression=", 13) == 0) {
			script = a + 13;
		} else if (strncmp(a, "-e", 2) == 0 && a[2]) {
			script = a + 2;
		} else if (strcmp(a, "-l") == 0) {
			i++;
			continue;
		} else if (a[0] == '-' && a[1]) {
			continue;
		} else if (!have_script) {
			script = a;
		} else {
			continue; /* a file */
		}
		have_script = true;
		if (!sed_print_only(script)) {
			snprintf(matched, 64, "%s", "sed");
			FAIL("the sed script does more than print lines");
		}
	}
	if (!quiet || !have_script) {
		snprintf(matched, 64, "%s", "sed");
		FAIL("sed without -n and a print-only script may do more than read");
	}
	return true;
}

static bool check_rg(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	for (size_t i = 1; i < argc; i++) {
		if (is_opt(argv[i], "--pre") || is_opt(argv[i], "--hostname-bin")) {
			snprintf(matched, 64, "%s", "rg --pre");
			FAIL("rg %s runs another program on every file", argv[i]);
		}
	}
	return true;
}

static bool check_sort(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (is_opt(a, "--output") || (a[0] == '-' && a[1] != '-' && strchr(a, 'o'))) {
			snprintf(matched, 64, "%s", "sort -o");
			FAIL("sort -o writes a file");
		}
		if (is_opt(a, "--compress-program")) {
			snprintf(matched, 64, "%s", "sort --compress-program");
			FAIL("sort --compress-program runs another program");
		}
	}
	return true;
}

static bool check_one_operand(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	if (count_operands(argv, argc) > 1) {
		snprintf(matched, 64, "%s", argv[0]);
		FAIL("%.60s with a second operand writes its output to that file",
		     cls_prog_name(argv[0]));
	}
	return true;
}

static bool check_date(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	for (size_t i = 1; i < argc; i++)
		if (is_opt(argv[i], "--set") || short_has(argv[i], 's')) {
			snprintf(matched, 64, "%s", "date -s");
			FAIL("date -s sets the clock");
		}
	return true;
}

static bool check_no_operands(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	if (count_operands(argv, argc) > 0) {
		snprintf(matched, 64, "%s", argv[0]);
		FAIL("%.60s with an operand changes a setting", cls_prog_name(argv[0]));
	}
	return true;
}

static bool check_printenv(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	if (count_operands(argv, argc) == 0) {
		snprintf(matched, 64, "%s", "printenv");
		FAIL("printenv without a name prints every variable, secrets included");
	}
	for (size_t i = 1; i < argc; i++)
		if (pol_name_is_secret(argv[i], strlen(argv[i]))) {
			snprintf(matched, 64, "%s", argv[i]);
			FAIL("printenv %.60s prints a secret", argv[i]);
		}
	return true;
}

static bool check_file(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	for (size_t i = 1; i < argc; i++)
		if (is_opt(argv[i], "--compile") || short_has(argv[i], 'C')) {
			snprintf(matched, 64, "%s", "file -C");
			FAIL("file -C writes a compiled magic file");
		}
	return true;
}

static bool check_tree(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	for (size_t i = 1; i < argc; i++)
		if (strcmp(argv[i], "-o") == 0) {
			snprintf(matched, 64, "%s", "tree -o");
			FAIL("tree -o writes a file");
		}
	return true;
}

static bool check_set(char *const *argv, size_t argc, char *why, size_t n, char *matched)
{
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool opt = (a[0] == '-' || a[0] == '+') && a[1];
		bool prev_o = strcmp(argv[i - 1], "-o") == 0 || strcmp(argv[i - 1], "+o") == 0;
		if (!opt && !prev_o) {
			snprintf(matched, 64, "%s", "set");
			FAIL("set with operands changes the positional parameters");
		}
	}
	return true;
}

static const struct ro_entry ro_table[] = {
	{"ls", NULL},	       {"cat", NULL},
	{"head", NULL},	       {"tail", NULL},
	{"wc", NULL},	       {"pwd", NULL},
	{"echo", NULL},	       {"true", NULL},
	{"false", NULL},       {"grep", NULL},
	{"egrep", NULL},       {"fgrep", NULL},
	{"stat", NULL},	       {"file", check_file},
	{"which", NULL},       {"id", NULL},
	{"uname", NULL},       {"date", check_date},
	{"basename", NULL},    {"dirname", NULL},
	{"realpath", NULL},    {"readlink", NULL},
	{"sort", check_sort},  {"uniq", check_one_operand},
	{"cut", NULL},	       {"tr", NULL},
	{"nl", NULL},	       {"tac", NULL},
	{"rev", NULL},	       {"seq", NULL},
	{"whoami", NULL},      {"printenv", check_printenv},
	{"find", check_find},  {"sed", check_sed},
	{"rg", check_rg},      {"git", pol_git_readonly},
	{"printf", NULL},      {"test", NULL},
	{"[", NULL},	       {"diff", NULL},
	{"cmp", NULL},	       {"md5sum", NULL},
	{"sha1sum", NULL},     {"sha256sum", NULL},
	{"sha512sum", NULL},   {"b2sum", NULL},
	{"cksum", NULL},       {"od", NULL},
	{"hexdump", NULL},     {"xxd", check_one_operand},
	{"strings", NULL},     {"column", NULL},
	{"fold", NULL},	       {"expand", NULL},
	{"unexpand", NULL},    {"paste", NULL},
	{"join", NULL},	       {"comm", NULL},
	{"tree", check_tree},  {"du", NULL},
	{"df", NULL},	       {"nproc", NULL},
	{"arch", NULL},	       {"tty", NULL},
	{"groups", NULL},      {"uptime", NULL},
	{"free", NULL},	       {"ps", NULL},
	{"jq", NULL},	       {"sleep", NULL},
	{"locale", NULL},      {"getconf", NULL},
	{"zcat", NULL},	       {"fmt", NULL},
	{"pr", NULL},	       {"numfmt", NULL},
	{"factor", NULL},      {"hostname", check_no_operands},
	{"lsb_release", NULL}, {"cd", NULL},
	{":", NULL},	       {"set", check_set},
	{"type", NULL},	       {"ag", NULL},
	{"fd", NULL},	       {"fdfind", NULL},
};

/* Toolchains whose "--version" is asked before almost every build. */
static const char *const versioned[] = {
	"gcc",	  "g++",     "cc",	  "c++",   "clang",  "clang++", "make",	  "cmake",
	"ninja",  "node",    "npm",	  "npx",   "yarn",   "pnpm",	"python", "python3",
	"pip",	  "pip3",    "go",	  "cargo", "rustc",  "rustup",	"java",	  "javac",
	"ruby",	  "gem",     "perl",	  "php",   "dotnet", "deno",	"bun",	  "tsc",
	"docker", "kubectl", "terraform", "uv",	   "pytest", "meson",	"bazel",
};

static bool version_query(const char *name, char *const *argv, size_t argc)
{
	if (argc != 2)
		return false;
	const char *a = argv[1];
	if (strcmp(a, "--version") != 0 && strcmp(a, "-version") != 0 &&
	    strcmp(a, "version") != 0 && strcmp(a, "-V") != 0 && strcmp(a, "--help") != 0)
		return false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(versioned); i++)
		if (strcmp(name, versioned[i]) == 0)
			return true;
	return false;
}

bool pol_readonly_check(const char *name, char *const *argv, size_t argc, char *why, size_t n,
			char *matched)
{
	snprintf(matched, 64, "%s", name);
	if (version_query(name, argv, argc)) {
		snprintf(why, n, "%s %s only prints version or usage", name, argv[1]);
		return true;
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(ro_table); i++) {
		if (strcmp(name, ro_table[i].name) != 0)
			continue;
		why[0] = '\0';
		if (ro_table[i].check && !ro_table[i].check(argv, argc, why, n, matched))
			return false;
		if (!why[0])
			snprintf(why, n, "%s is a read-only command", name);
		return true;
	}
	snprintf(why, n, "%.100s is not a known read-only command", name);
	return false;
}
