/*
 * harddeny.c: the critical patterns, the first step of a decision. A hit
 * is refused with no model call, and no rule, grant, tier or person can
 * allow it: rm -r/-f of /, ~, $HOME, the project root or a path out of it;
 * filesystem and partition tools; dd onto a device; shutdown and friends;
 * recursive chmod/chown of / or the home; writes into system directories;
 * a download piped into a shell; the fork bomb.
 *
 * Targets are judged lexically (no file system access): "/usr/../" is "/".
 * A target with an unexpanded $VAR or glob other than the few spelled out
 * here is not critical, only not plain: the judge sees it.
 *
 * See docs/design.md, section "Hard deny".
 */
#include "policy_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *const system_dirs[] = {"/etc",    "/boot", "/usr",	   "/bin",
					  "/sbin",   "/lib",  "/lib32",	   "/lib64",
					  "/libx32", "/sys",  "/proc/sys", "/var/lib/dpkg"};

bool pol_hd_is_system_path(const char *path, const char **dir)
{
	if (path[0] != '/')
		return false;
	wd_autofree char *p = pol_path_lexical(path);
	for (size_t i = 0; i < WD_ARRAY_SIZE(system_dirs); i++) {
		size_t l = strlen(system_dirs[i]);
		if (strncmp(p, system_dirs[i], l) == 0 && (p[l] == '\0' || p[l] == '/')) {
			if (dir)
				*dir = system_dirs[i];
			return true;
		}
	}
	return false;
}

/* True when |a| equals |b| or is one of its ancestors (both lexical). */
static bool is_self_or_ancestor(const char *a, const char *b)
{
	return b && b[0] && wd_path_within(b, a);
}

/* The absolute, lexical form of |t| seen from |e| (NULL when it depends on
 * something unknown). "~" and "$HOME" become the home when it is known. */
static char *resolve(const struct pol_cls_env *e, const char *t)
{
	const char *home_rest = NULL;
	if (t[0] == '~' && (t[1] == '\0' || t[1] == '/'))
		home_rest = t + 1;
	else if (strncmp(t, "$HOME", 5) == 0 && (t[5] == '\0' || t[5] == '/'))
		home_rest = t + 5;
	else if (strncmp(t, "${HOME}", 7) == 0 && (t[7] == '\0' || t[7] == '/'))
		home_rest = t + 7;
	if (home_rest) {
		char *j = wd_asprintf("%s/%s", e->home ? e->home : "/home/~", home_rest);
		char *p = pol_path_lexical(j);
		free(j);
		return p;
	}
	if (t[0] == '/')
		return pol_path_lexical(t);
	const char *base = e->cwd ? e->cwd : e->project;
	if (!base)
		return NULL;
	char *j = wd_asprintf("%s/%s", base, t);
	char *p = pol_path_lexical(j);
	free(j);
	return p;
}

/* Why deleting |t| recursively is catastrophic, or NULL. |pat| receives a
 * short name of the pattern. */
static const char *dangerous_delete(const struct pol_cls_env *e, const char *t, const char **pat)
{
	/* A trailing star ("everything in it") or dot names the directory itself. */
	if (!t[0])
		return NULL;
	size_t bl = strlen(t);
	wd_autofree char *base = wd_malloc(bl + 2);
	memcpy(base, t, bl + 1);
	bool all = false;
	while (bl >= 1 && (base[bl - 1] == '*' || base[bl - 1] == '.') &&
	       (bl == 1 || base[bl - 2] == '/')) {
		base[--bl] = '\0';
		all = true;
	}
	if (bl == 0)
		snprintf(base, 2, ".");
	if (base[0] == '~' && base[1] && base[1] != '/') {
		*pat = "rm -rf ~user";
		return "it deletes another user's home directory";
	}
	wd_autofree char *abs = resolve(e, base);
	if (!abs) {
		wd_autofree char *lex = pol_path_lexical(base);
		if (strncmp(lex, "..", 2) == 0) {
			*pat = "rm -rf ..";
			return "it deletes a directory outside the project";
		}
		return NULL;
	}
	if (strcmp(abs, "/") == 0) {
		*pat = "rm -rf /";
		return "it destroys the whole system";
	}
	if (e->home && is_self_or_ancestor(abs, e->home)) {
		*pat = "rm -rf ~";
		return "it deletes the home directory";
	}
	if (!e->home && strcmp(abs, "/home/~") == 0) {
		*pat = "rm -rf ~";
		return "it deletes the home directory";
	}
	if (e->project && is_self_or_ancestor(abs, e->project)) {
		*pat = "rm -rf <project>";
		if (strcmp(abs, e->project) != 0)
			return "it deletes a directory that holds the project";
		return all ? "it empties the project" : "it deletes the project root";
	}
	const char *dir;
	if (pol_hd_is_system_path(abs, &dir)) {
		*pat = dir;
		return "it deletes system files";
	}
	if (e->project && strstr(t, "..") && !is_self_or_ancestor(e->project, abs)) {
		*pat = "rm -rf ..";
		return "its \"..\" leads out of the project";
	}
	return NULL;
}

void pol_hd_check_write_target(const struct pol_cls_env *e, const char *target, const char *what,
			       struct pol_cls_result *r)
{
	if (!target || !target[0])
		return;
	wd_autofree char *abs = resolve(e, target);
	const char *p = abs ? abs : target;
	if (strncmp(p, "/dev/", 5) == 0) {
		static const char *const harmless[] = {"/dev/null",   "/dev/zero",    "/dev/stdout",
						       "/dev/stderr", "/dev/stdin",   "/dev/tty",
						       "/dev/random", "/dev/urandom", "/dev/full"};
		for (size_t i = 0; i < WD_ARRAY_SIZE(harmless); i++)
			if (strcmp(p, harmless[i]) == 0)
				return;
		if (strncmp(p, "/dev/fd/", 8) == 0 || strncmp(p, "/dev/pts/", 9) == 0 ||
		    strncmp(p, "/dev/shm/", 9) == 0)
			return;
		pol_cls_raise(r, POL_CLASS_CRITICAL, "write /dev/",
			      "%s writes to the device %.80s and can overwrite a disk", what, p);
		return;
	}
	const char *dir;
	if (pol_hd_is_system_path(p, &dir))
		pol_cls_raise(r, POL_CLASS_CRITICAL, dir,
			      "%s writes into %s, a system directory (%.80s)", what, dir, p);
}

/* Options and operands of an rm-like argv. */
struct rm_flags {
	bool recursive, force, no_preserve_root;
};

static void rm_parse(char *const *argv, size_t argc, struct rm_flags *f)
{
	bool opts = true;
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!opts || a[0] != '-' || !a[1])
			continue;
		if (strcmp(a, "--") == 0) {
			opts = false;
		} else if (a[1] == '-') {
			f->recursive |= strcmp(a, "--recursive") == 0;
			f->force |= strcmp(a, "--force") == 0;
			f->no_preserve_root |= strcmp(a, "--no-preserve-root") == 0;
		} else {
			f->recursive |= strchr(a, 'r') != NULL || strchr(a, 'R') != NULL;
			f->force |= strchr(a, 'f') != NULL;
		}
	}
}

/* Calls |fn| on every operand (non-option argument) from index |from|. */
#define FOR_OPERANDS(argv, argc, from, var)                                                        \
	for (size_t _i = (from), _o = 1; _i < (argc); _i++)                                        \
		if (_o && strcmp((argv)[_i], "--") == 0) {                                         \
			_o = 0;                                                                    \
		} else if (_o && (argv)[_i][0] == '-' && (argv)[_i][1]) {                          \
		} else                                                                             \
			for (const char *var = (argv)[_i], *_once = var; _once; _once = NULL)

static void hd_rm(const struct pol_cls_env *e, char *const *argv, size_t argc,
		  struct pol_cls_result *r)
{
	struct rm_flags f = {0};
	rm_parse(argv, argc, &f);
	FOR_OPERANDS(argv, argc, 1, t)
	{
		const char *pat = NULL;
		const char *why = (f.recursive || f.force) ? dangerous_delete(e, t, &pat) : NULL;
		if (why) {
			pol_cls_raise(r, POL_CLASS_CRITICAL, pat, "rm %s on %.80s: %s%s",
				      f.recursive ? "-r" : "-f", t, why,
				      f.no_preserve_root
					      ? " (and --no-preserve-root disables rm's guard)"
					      : "");
			return;
		}
		pol_hd_check_write_target(e, t, "rm", r);
	}
}

static bool is_test_predicate(const char *a)
{
	static const char *const actions[] = {
		"-exec",  "-execdir",  "-ok",	    "-okdir", "-delete", "-depth", "-xdev",
		"-mount", "-maxdepth", "-mindepth", "-print", "-print0", "-follow"};
	if (a[0] != '-' && a[0] != '(' && a[0] != '!')
		return false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(actions); i++)
		if (strcmp(a, actions[i]) == 0)
			return false;
	return true;
}

/* find ROOT -delete with no test deletes ROOT and everything in it. */
static void hd_find(const struct pol_cls_env *e, char *const *argv, size_t argc,
		    struct pol_cls_result *r)
{
	bool del = false, tests = false;
	size_t roots_end = 1;
	while (roots_end < argc && argv[roots_end][0] != '-' && argv[roots_end][0] != '(' &&
	       argv[roots_end][0] != '!')
		roots_end++;
	for (size_t i = roots_end; i < argc; i++) {
		if (strcmp(argv[i], "-delete") == 0)
			del = true;
		else if (strcmp(argv[i], "-maxdepth") == 0 || strcmp(argv[i], "-mindepth") == 0)
			i++;
		else if (is_test_predicate(argv[i]))
			tests = true;
		if (strcmp(argv[i], "-exec") == 0 || strcmp(argv[i], "-execdir") == 0) {
			/* find ROOT -exec rm -rf {} with no test: rm -rf ROOT. */
			size_t b = i + 1, k = b;
			while (k < argc && strcmp(argv[k], ";") != 0 && strcmp(argv[k], "+") != 0)
				k++;
			if (!tests && k > b && strcmp(pol_cls_prog_name(argv[b]), "rm") == 0) {
				struct rm_flags f = {0};
				rm_parse(argv + b, k - b, &f);
				if (f.recursive || f.force)
					del = true;
			}
			i = k;
		}
	}
	if (!del || tests)
		return;
	for (size_t i = 1; i < roots_end; i++) {
		const char *pat;
		const char *why = dangerous_delete(e, argv[i], &pat);
		if (why) {
			pol_cls_raise(r, POL_CLASS_CRITICAL, pat,
				      "find %.80s deleting everything: %s", argv[i], why);
			return;
		}
	}
}

static bool only_list_options(char *const *argv, size_t argc)
{
	for (size_t i = 1; i < argc; i++)
		if (strcmp(argv[i], "-l") != 0 && strcmp(argv[i], "--list") != 0 &&
		    strcmp(argv[i], "-s") != 0 && argv[i][0] == '-')
			return false;
	return argc > 1 && (strcmp(argv[1], "-l") == 0 || strcmp(argv[1], "--list") == 0);
}

static void hd_chmod(const struct pol_cls_env *e, const char *name, char *const *argv, size_t argc,
		     struct pol_cls_result *r)
{
	bool rec = false, reference = false;
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--recursive") == 0 || (a[0] == '-' && a[1] != '-' && strchr(a, 'R')))
			rec = true;
		if (strncmp(a, "--reference", 11) == 0)
			reference = true;
	}
	size_t n = 0;
	FOR_OPERANDS(argv, argc, 1, t)
	{
		if (n++ == 0 && !reference)
			continue; /* the mode or owner */
		const char *pat = NULL;
		const char *why = rec ? dangerous_delete(e, t, &pat) : NULL;
		if (why && (strcmp(pat, "rm -rf /") == 0 || strcmp(pat, "rm -rf ~") == 0)) {
			pol_cls_raise(r, POL_CLASS_CRITICAL,
				      pat[7] == '/' ? "chmod -R /" : "chmod -R ~",
				      "%s -R on %.80s changes every file of %s", name, t,
				      pat[7] == '/' ? "the system" : "the home directory");
			return;
		}
		pol_hd_check_write_target(e, t, name, r);
	}
}

/* cp/mv/install/ln/rsync: the destination, or every operand for mv. */
static void hd_copy(const struct pol_cls_env *e, const char *name, char *const *argv, size_t argc,
		    struct pol_cls_result *r)
{
	const char *last = NULL;
	for (size_t i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
			pol_hd_check_write_target(e, argv[i + 1], name, r);
		else if (strncmp(argv[i], "--target-directory=", 19) == 0)
			pol_hd_check_write_target(e, argv[i] + 19, name, r);
	}
	FOR_OPERANDS(argv, argc, 1, t)
	{
		last = t;
		if (strcmp(name, "mv") == 0) {
			const char *pat;
			const char *why = dangerous_delete(e, t, &pat);
			if (why && strcmp(pat, "rm -rf ..") != 0) {
				pol_cls_raise(r, POL_CLASS_CRITICAL, pat, "mv of %.80s: %s", t,
					      why);
				return;
			}
			pol_hd_check_write_target(e, t, name, r);
		}
	}
	if (last && strchr(last, ':') == NULL)
		pol_hd_check_write_target(e, last, name, r);
}

/* Option values that name a file written: curl -o, wget -O, tar -C, dd of=. */
static void hd_outputs(const struct pol_cls_env *e, const char *name, char *const *argv,
		       size_t argc, struct pol_cls_result *r)
{
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(name, "curl") == 0 &&
		    (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0))
			pol_hd_check_write_target(e, next, "curl -o", r);
		if (strcmp(name, "wget") == 0) {
			if (strcmp(a, "-O") == 0 || strcmp(a, "-P") == 0)
				pol_hd_check_write_target(e, next, "wget", r);
			if (strncmp(a, "--output-document=", 18) == 0)
				pol_hd_check_write_target(e, a + 18, "wget", r);
			if (strncmp(a, "--directory-prefix=", 19) == 0)
				pol_hd_check_write_target(e, a + 19, "wget", r);
		}
		if (strcmp(name, "tar") == 0) {
			if (strcmp(a, "-C") == 0 || strcmp(a, "--directory") == 0)
				pol_hd_check_write_target(e, next, "tar -C", r);
			if (strncmp(a, "--directory=", 12) == 0)
				pol_hd_check_write_target(e, a + 12, "tar -C", r);
		}
		if (strcmp(name, "dd") == 0 && strncmp(a, "of=", 3) == 0)
			pol_hd_check_write_target(e, a + 3, "dd", r);
	}
}

static const char *const disk_tools[] = {"fdisk",  "sfdisk", "cfdisk",	   "gdisk",  "sgdisk",
					 "parted", "wipefs", "blkdiscard", "mke2fs", "mkswap"};
static const char *const power_tools[] = {"shutdown", "reboot", "halt", "poweroff"};
static const char *const write_all_operands[] = {"touch",  "mkdir", "rmdir",  "truncate", "tee",
						 "unlink", "shred", "chattr", NULL};

void pol_hd_check_command(const struct pol_cls_env *e, const char *name, char *const *argv,
			  size_t argc, struct pol_cls_result *r)
{
	if (strncmp(name, "mkfs", 4) == 0) {
		pol_cls_raise(r, POL_CLASS_CRITICAL, "mkfs",
			      "%.60s formats a file system, erasing it", name);
		return;
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(disk_tools); i++) {
		if (strcmp(name, disk_tools[i]) == 0 && !only_list_options(argv, argc)) {
			pol_cls_raise(r, POL_CLASS_CRITICAL, disk_tools[i],
				      "%s changes disk partitions or file systems", name);
			return;
		}
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(power_tools); i++) {
		if (strcmp(name, power_tools[i]) == 0) {
			pol_cls_raise(r, POL_CLASS_CRITICAL, power_tools[i], "%s stops the machine",
				      name);
			return;
		}
	}
	if ((strcmp(name, "init") == 0 || strcmp(name, "telinit") == 0) && argc > 1 &&
	    (strcmp(argv[1], "0") == 0 || strcmp(argv[1], "6") == 0)) {
		pol_cls_raise(r, POL_CLASS_CRITICAL, "init 0/6",
			      "%s %s halts or reboots the machine", name, argv[1]);
		return;
	}
	if (strcmp(name, "systemctl") == 0) {
		for (size_t i = 1; i < argc; i++)
			if (strcmp(argv[i], "poweroff") == 0 || strcmp(argv[i], "reboot") == 0 ||
			    strcmp(argv[i], "halt") == 0 || strcmp(argv[i], "kexec") == 0) {
				pol_cls_raise(r, POL_CLASS_CRITICAL, "systemctl poweroff",
					      "systemctl %s stops the machine", argv[i]);
				return;
			}
	}
	if (strcmp(name, "shred") == 0) {
		FOR_OPERANDS(argv, argc, 1, t)
		if (strncmp(t, "/dev/", 5) == 0) {
			pol_cls_raise(r, POL_CLASS_CRITICAL, "shred /dev/",
				      "shred of the device %.80s destroys a disk", t);
			return;
		}
	}
	if (strcmp(name, "rm") == 0) {
		hd_rm(e, argv, argc, r);
		return;
	}
	if (strcmp(name, "find") == 0)
		hd_find(e, argv, argc, r);
	if (strcmp(name, "chmod") == 0 || strcmp(name, "chown") == 0 || strcmp(name, "chgrp") == 0)
		hd_chmod(e, name, argv, argc, r);
	if (strcmp(name, "cp") == 0 || strcmp(name, "mv") == 0 || strcmp(name, "install") == 0 ||
	    strcmp(name, "ln") == 0 || strcmp(name, "rsync") == 0)
		hd_copy(e, name, argv, argc, r);
	for (size_t i = 0; write_all_operands[i]; i++)
		if (strcmp(name, write_all_operands[i]) == 0) {
			FOR_OPERANDS(argv, argc, 1, t)
			pol_hd_check_write_target(e, t, name, r);
		}
	if (strcmp(name, "sed") == 0) {
		bool inplace = false;
		for (size_t i = 1; i < argc; i++)
			if (strncmp(argv[i], "-i", 2) == 0 ||
			    strncmp(argv[i], "--in-place", 10) == 0)
				inplace = true;
		if (inplace) {
			FOR_OPERANDS(argv, argc, 1, t)
			pol_hd_check_write_target(e, t, "sed -i", r);
		}
	}
	hd_outputs(e, name, argv, argc, r);
}

/* ":(){ :|:& };:" and any NAME(){ NAME|NAME& } with any spacing. */
static bool has_fork_bomb(const char *s)
{
	size_t n = strlen(s);
	char *t = wd_malloc(n + 1);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			t[m++] = s[i];
	t[m] = '\0';
	bool hit = false;
	for (char *p = strstr(t, "(){"); p && !hit; p = strstr(p + 1, "(){")) {
		char *b = p;
		while (b > t && (isalnum((unsigned char)b[-1]) || strchr(":_.-", b[-1])))
			b--;
		size_t nl = (size_t)(p - b);
		if (nl == 0 || nl > 64)
			continue;
		char pat[140];
		snprintf(pat, sizeof(pat), "%.*s|%.*s&", (int)nl, b, (int)nl, b);
		char *end = strchr(p, '}');
		char *found = strstr(p, pat);
		hit = found && (!end || found < end);
	}
	free(t);
	return hit;
}

void pol_hd_check_script_text(const char *script, struct pol_cls_result *r)
{
	if (has_fork_bomb(script))
		pol_cls_raise(
			r, POL_CLASS_CRITICAL, "fork bomb",
			"the script is a fork bomb: it starts processes until the machine stalls");
}
