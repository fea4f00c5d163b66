/*
 * test_install: what `make install` installs, through the same cmake
 * install rules, into a temporary DESTDIR: the binary, the man page
 * warden(1) and the bash completion; that the Makefile passes PREFIX and
 * DESTDIR on; that the man page renders without a warning and names every
 * command and long option the source parses; that the completion completes
 * them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <ctype.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *src_dir(void)
{
	const char *s = getenv("WARDEN_SOURCE_DIR");
	if (!s)
		fail_msg("WARDEN_SOURCE_DIR is not set: run the tests with ctest");
	return s;
}

/* Runs |cmd| with /bin/sh; returns its exit status and what it printed on
 * stdout and stderr together (caller frees). */
static int sh(const char *cmd, char **out)
{
	char *full = wd_asprintf("(%s) 2>&1", cmd);
	FILE *p = popen(full, "r");
	free(full);
	assert_non_null(p);
	struct wd_sb sb = {0};
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		wd_sb_add(&sb, buf, n);
	int st = pclose(p);
	*out = wd_sb_steal(&sb);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool have(const char *prog)
{
	char *cmd = wd_asprintf("command -v %s >/dev/null", prog), *out;
	int rc = sh(cmd, &out);
	free(cmd);
	free(out);
	return rc == 0;
}

static char *read_text(const char *path)
{
	char *text = NULL;
	size_t len;
	if (wd_read_file(path, 1 << 20, &text, &len) < 0)
		fail_msg("cannot read %s", path);
	return text;
}

struct fx {
	char *dest;
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->dest = wt_project();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->dest);
	free(f->dest);
	free(f);
	return 0;
}

static void test_install_puts_the_three_files(void **state)
{
	struct fx *f = *state;
	const char *build = getenv("WARDEN_BUILD_DIR");
	assert_non_null(build);
	char *cmd = wd_asprintf("DESTDIR='%s' cmake --install '%s' --prefix /usr/local", f->dest,
				build),
	     *out;
	int rc = sh(cmd, &out);
	if (rc != 0)
		fail_msg("%s: %d\n%s", cmd, rc, out);
	free(cmd);
	free(out);

	char *bin = wd_asprintf("%s/usr/local/bin/warden", f->dest);
	char *man = wd_asprintf("%s/usr/local/share/man/man1/warden.1", f->dest);
	char *comp = wd_asprintf("%s/usr/local/share/bash-completion/completions/warden", f->dest);
	struct stat st;
	assert_int_equal(stat(bin, &st), 0);
	assert_true(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0755);
	assert_int_equal(stat(man, &st), 0);
	assert_true(S_ISREG(st.st_mode) && !(st.st_mode & 0022));
	assert_int_equal(stat(comp, &st), 0);
	assert_true(S_ISREG(st.st_mode) && !(st.st_mode & 0022));
	/* nothing else: no libraries, tests or benchmarks */
	cmd = wd_asprintf("find '%s' -type f | wc -l", f->dest);
	assert_int_equal(sh(cmd, &out), 0);
	assert_int_equal(atoi(out), 3);
	free(cmd);
	free(out);

	/* The installed binary runs. */
	cmd = wd_asprintf("'%s' version", bin);
	assert_int_equal(sh(cmd, &out), 0);
	assert_true(wd_str_has_prefix(out, "warden "));
	free(cmd);
	free(out);

	/* The page renders without a warning: groff with every warning on,
	 * else mandoc's lint, else man -l. */
	if (have("groff"))
		cmd = wd_asprintf("groff -man -Tutf8 -ww -z '%s'", man);
	else if (have("mandoc"))
		cmd = wd_asprintf("mandoc -Tlint -Wwarning '%s'", man);
	else if (have("man"))
		cmd = wd_asprintf("man --warnings -l '%s' >/dev/null", man);
	else
		cmd = NULL;
	if (cmd) {
		rc = sh(cmd, &out);
		if (rc != 0 || *out)
			fail_msg("%s: exit %d, said:\n%s", cmd, rc, out);
		free(cmd);
		free(out);
	}
	/* Well-formed whatever renders it: a title, the sections a man page
	 * has, and nothing but roff requests at the starts of lines. */
	char *page = read_text(man);
	assert_non_null(strstr(page, "\n.TH WARDEN 1 "));
	static const char *const sections[] = {"NAME",	   "SYNOPSIS",	  "DESCRIPTION",
					       "COMMANDS", "EXIT STATUS", "FILES"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(sections); i++) {
		char *h = wd_asprintf("\n.SH %s\n", sections[i]);
		if (!strstr(page, h))
			fail_msg("the man page has no section %s", sections[i]);
		free(h);
	}
	free(page);

	/* The completion file is valid bash and completes. */
	cmd = wd_asprintf("bash -n '%s'", comp);
	assert_int_equal(sh(cmd, &out), 0);
	free(cmd);
	free(out);
	cmd = wd_asprintf("bash -c \"source '%s'; COMP_WORDS=(warden se); COMP_CWORD=1; _warden; "
			  "echo \\${COMPREPLY[*]}; COMP_WORDS=(warden audit --l); COMP_CWORD=2; "
			  "_warden; echo \\${COMPREPLY[*]}; COMP_WORDS=(warden audit --kind ''); "
			  "COMP_CWORD=3; _warden; echo \\${COMPREPLY[*]}\"",
			  comp);
	rc = sh(cmd, &out);
	if (rc != 0 || strcmp(out, "sessions\n--last --limit\nexec open connect\n") != 0)
		fail_msg("%s: %d\n%s", cmd, rc, out);
	free(cmd);
	free(out);
	free(bin);
	free(man);
	free(comp);
}

static void test_make_install_honours_prefix_and_destdir(void **state)
{
	(void)state;
	if (!have("make"))
		skip();
	char *cmd = wd_asprintf("make -n -C '%s' install DESTDIR=/tmp/pkg-root PREFIX=/opt/w",
				src_dir()),
	     *out;
	int rc = sh(cmd, &out);
	if (rc != 0)
		fail_msg("%s: %d\n%s", cmd, rc, out);
	/* the release build, then its install rules with both */
	const char *build = strstr(out, "cmake --build --preset release");
	const char *inst = strstr(out, "DESTDIR=\"/tmp/pkg-root\" cmake --install build/release "
				       "--prefix \"/opt/w\"");
	if (!build || !inst || inst < build)
		fail_msg("make install does not build the release preset and install it with "
			 "PREFIX and DESTDIR:\n%s",
			 out);
	free(cmd);
	free(out);
}

/* Every long option the source's getopt tables hold, and every command
 * main() dispatches, is in the man page and the completion. */
static void test_man_page_and_completion_name_every_option(void **state)
{
	(void)state;
	char *mandir = wd_asprintf("%s/man/warden.1", src_dir());
	char *compf = wd_asprintf("%s/completions/warden.bash", src_dir());
	char *page = read_text(mandir), *comp = read_text(compf);
	char *supdir = wd_asprintf("%s/supervisor", src_dir());
	DIR *d = opendir(supdir);
	assert_non_null(d);
	struct dirent *e;
	int options = 0;
	struct wd_sb missing = {0};
	while ((e = readdir(d))) {
		if (!wd_str_has_suffix(e->d_name, ".c"))
			continue;
		char *path = wd_asprintf("%s/%s", supdir, e->d_name);
		char *text = read_text(path);
		for (const char *p = text; (p = strstr(p, "{\"")); p++) {
			const char *q = strchr(p + 2, '"');
			if (!q || (size_t)(q - p - 2) > 40)
				continue;
			const char *t = q + 1;
			while (*t == ',' || *t == ' ')
				t++;
			if (!wd_str_has_prefix(t, "required_argument") &&
			    !wd_str_has_prefix(t, "no_argument") &&
			    !wd_str_has_prefix(t, "optional_argument"))
				continue;
			char name[48];
			snprintf(name, sizeof(name), "%.*s", (int)(q - p - 2), p + 2);
			options++;
			/* roff spells a dash \- */
			struct wd_sb roff = {0};
			wd_sb_puts(&roff, "\\-\\-");
			for (const char *c = name; *c; c++)
				wd_sb_puts(&roff, *c == '-' ? "\\-" : (char[]){*c, 0});
			char *plain = wd_asprintf("--%s", name);
			if (!strstr(page, roff.buf))
				wd_sb_printf(&missing, "man page: %s (%s)\n", plain, e->d_name);
			if (!strstr(comp, plain))
				wd_sb_printf(&missing, "completion: %s (%s)\n", plain, e->d_name);
			free(plain);
			wd_sb_free(&roff);
		}
		free(text);
		free(path);
	}
	closedir(d);
	assert_true(options > 40);

	char *mainc = wd_asprintf("%s/main.c", supdir);
	char *text = read_text(mainc);
	int commands = 0;
	for (const char *p = text; (p = strstr(p, "strcmp(cmd, \"")); p++) {
		const char *s = p + strlen("strcmp(cmd, \"");
		const char *q = strchr(s, '"');
		char name[32];
		snprintf(name, sizeof(name), "%.*s", (int)(q - s), s);
		if (name[0] == '-' || strcmp(name, "help") == 0)
			continue;
		commands++;
		char *in_page = wd_asprintf("warden %s", name);
		char *in_comp = wd_asprintf(" %s ", name);
		if (!strstr(page, in_page))
			wd_sb_printf(&missing, "man page: command %s\n", name);
		if (!strstr(comp, in_comp))
			wd_sb_printf(&missing, "completion: command %s\n", name);
		free(in_page);
		free(in_comp);
	}
	assert_true(commands >= 10);
	if (missing.len)
		fail_msg("not documented:\n%s", missing.buf);
	free(text);
	free(mainc);
	free(supdir);
	free(page);
	free(comp);
	free(mandir);
	free(compf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_install_puts_the_three_files, setup, teardown),
		cmocka_unit_test(test_make_install_honours_prefix_and_destdir),
		cmocka_unit_test(test_man_page_and_completion_name_every_option),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
