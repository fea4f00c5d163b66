/*
 * test_esc_codex: Codex's launcher and per-call wrapper under the real
 * `warden run --agent codex --tier passive`, with an adversarial agent.
 *
 * A fake npm install (under the build directory, where the agent cannot
 * write): node_modules/@openai/codex/bin/codex.js is a /bin/sh launcher
 * that starts node_modules/@openai/codex-linux-x64/vendor/TRIPLE/bin/codex
 * as a child with the person's arguments, as 0.169.0's launcher does on
 * node < 22.15; that "native binary" is a copy of bash. The cases:
 *
 *   - the launcher's native child starts in passive, as the agent's start-up;
 *   - the same place with other arguments, a second child, or another
 *     program of the package (codex-code-mode-host) is decided like any request
 *     (passive refuses it);
 *   - Codex's exact wrapper, run by the native agent's child, runs when the
 *     snapshot it sources is inert, and its command is decided at its own
 *     exec (fast path for ls);
 *   - the same wrapper with a snapshot that writes a file, or defines a
 *     function named [ that the wrapper would call, is an ordinary script:
 *     refused, and the file is never written.
 *
 * Markers live in the temporary project; nothing here can harm the machine
 * if warden failed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__aarch64__)
#define PLAT "codex-linux-arm64/vendor/aarch64-unknown-linux-musl"
#else
#define PLAT "codex-linux-x64/vendor/x86_64-unknown-linux-musl"
#endif
#define SNAP_NAME "01a23b20-bc98-71a0-b948-61b5c8c0665f.1796288330989055548.sh"

struct fx {
	char *proj, *base, *home, *db;
	char *launcher; /* BASE/node_modules/@openai/codex/bin/codex.js */
	char *openai;	/* BASE/node_modules/@openai */
};

static void copy_file(const char *from, const char *to, mode_t mode)
{
	char *cmd = wd_asprintf("cp '%s' '%s' && chmod %o '%s'", from, to, (unsigned)mode, to);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# codex escape\n");
	const char *b = getenv("WARDEN_BUILD_DIR");
	f->base = wd_asprintf("%s/tests/escape/codex-%d", b ? b : "/tmp", (int)getpid());
	f->openai = wd_asprintf("%s/node_modules/@openai", f->base);
	f->launcher = wd_asprintf("%s/codex/bin/codex.js", f->openai);
	f->home = wd_asprintf("%s/home", f->base);
	char *mk = wd_asprintf("mkdir -p '%s' '%s'", f->home, f->openai);
	assert_int_equal(system(mk), 0);
	free(mk);
	wt_write(f->home, ".codex/shell_snapshots/.keep", "");
	/* The native binary: a copy of bash in the platform package. */
	wt_write(f->openai, PLAT "/bin/.keep", "");
	char *native = wd_asprintf("%s/" PLAT "/bin/codex", f->openai);
	copy_file("/bin/bash", native, 0755);
	free(native);
	char *host = wd_asprintf("%s/" PLAT "/bin/codex-code-mode-host", f->openai);
	copy_file("/bin/bash", host, 0755);
	free(host);
	setenv("HOME", f->home, 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	wt_rmtree(f->base);
	free(f->proj);
	free(f->base);
	free(f->home);
	free(f->db);
	free(f->launcher);
	free(f->openai);
	free(f);
	return 0;
}

/* Writes the launcher with |body| after the lines that find the native
 * binary ($n) and another program of the package ($host), both without
 * running anything. */
static void launcher(const struct fx *f, const char *body)
{
	char *text = wd_asprintf("#!/bin/sh\n"
				 "o=\"${0%%/codex/bin/codex.js}\"\n"
				 "n=\"$o/" PLAT "/bin/codex\"\n"
				 "host=\"$o/" PLAT "/bin/codex-code-mode-host\"\n"
				 "%s\n",
				 body);
	wt_write(f->openai, "codex/bin/codex.js", text);
	chmod(f->launcher, 0755);
	free(text);
}

/* warden run --agent codex --tier passive -- LAUNCHER -c SCRIPT */
static void run(const struct fx *f, struct wt_result *r, const char *script)
{
	char *argv[] = {"run", "--agent",   "codex", "--tier",	     "passive",
			"--",  f->launcher, "-c",    (char *)script, NULL};
	wt_wardenv(f->proj, argv, r);
	print_message("status %d\nout: %.1500s\nerr: %.2500s\n", r->status, r->out, r->err);
}

static int native_rows(const struct fx *f, const char *decision, const char *source)
{
	return wt_audit_count(f->db, decision, source, "-musl/bin/codex ", NULL);
}

static void test_esc_codex_launcher_child_starts(void **state)
{
	struct fx *f = *state;
	launcher(f, "\"$n\" \"$@\"\nexit $?");
	struct wt_result r;
	run(f, &r, "exit 7");
	assert_int_equal(r.status, 7);
	assert_int_equal(native_rows(f, "allow", "startup"), 1);
	assert_int_equal(native_rows(f, "deny", NULL), 0);
	wt_result_free(&r);
}

static void test_esc_codex_launcher_child_other_args(void **state)
{
	struct fx *f = *state;
	launcher(f, "\"$n\" --norc \"$@\"\nexit $?");
	struct wt_result r;
	run(f, &r, "exit 0");
	assert_int_not_equal(r.status, 0);
	assert_int_equal(native_rows(f, "allow", NULL), 0);
	assert_int_equal(native_rows(f, "deny", "tier"), 1);
	wt_result_free(&r);
}

static void test_esc_codex_launcher_second_child(void **state)
{
	struct fx *f = *state;
	launcher(f, "\"$n\" \"$@\" || exit 1\n\"$n\" \"$@\"\nexit $?");
	struct wt_result r;
	run(f, &r, "exit 0");
	assert_int_not_equal(r.status, 0);
	assert_int_equal(native_rows(f, "allow", "startup"), 1);
	assert_int_equal(native_rows(f, "deny", "tier"), 1);
	wt_result_free(&r);
}

static void test_esc_codex_launcher_other_program(void **state)
{
	struct fx *f = *state;
	launcher(f, "\"$host\" \"$@\"\nexit $?");
	struct wt_result r;
	run(f, &r, "exit 0");
	assert_int_not_equal(r.status, 0);
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "codex-code-mode-host", NULL), 1);
	wt_result_free(&r);
}

static char *replace_all(const char *s, const char *from, const char *to)
{
	struct wd_sb out = {0};
	const char *p = s, *hit;
	while ((hit = strstr(p, from))) {
		wd_sb_add(&out, p, (size_t)(hit - p));
		wd_sb_puts(&out, to);
		p = hit + strlen(from);
	}
	wd_sb_puts(&out, p);
	return wd_sb_steal(&out);
}

/* The real 0.169.0 wrapper (the unit fixture), with this HOME and its PATH
 * entry in the package under |path_entry_base| (NULL: this test's). */
static char *wrapper_text(const struct fx *f, const char *path_entry_base)
{
	const char *src = getenv("WARDEN_SOURCE_DIR");
	char *path =
		wd_asprintf("%s/tests/unit/fixtures/codex-0.169.0/wrapper-ls.sh", src ? src : ".");
	FILE *in = fopen(path, "rb");
	assert_non_null(in);
	struct wd_sb sb = {0};
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		wd_sb_add(&sb, buf, n);
	fclose(in);
	free(path);
	char *w = wd_sb_steal(&sb);
	/* The fixture's home and package, replaced by this test's. */
	char *a = replace_all(w, "/tmp/cx/home", f->home);
	free(w);
	char *b = replace_all(a, "/work/wt-codex/build/agents/node_modules/@openai",
			      path_entry_base ? path_entry_base : f->openai);
	free(a);
	return b;
}

/* The native agent runs Codex's wrapper as a tool call (a direct child),
 * with |snapshot| as the snapshot it sources. */
static void run_wrapper_in(const struct fx *f, struct wt_result *r, const char *snapshot,
			   const char *path_entry_base)
{
	wt_write(f->home, ".codex/shell_snapshots/" SNAP_NAME, snapshot);
	char *w = wrapper_text(f, path_entry_base);
	wt_write(f->base, "wrapper.sh", w);
	free(w);
	launcher(f, "\"$n\" \"$@\"\nexit $?");
	char *script = wd_asprintf("/bin/bash -c \"$(<'%s/wrapper.sh')\"; exit $?", f->base);
	run(f, r, script);
	free(script);
}

static void run_wrapper(const struct fx *f, struct wt_result *r, const char *snapshot)
{
	run_wrapper_in(f, r, snapshot, NULL);
}

static void test_esc_codex_wrapper_inert_snapshot(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	run_wrapper(f, &r,
		    "# Snapshot file\nunalias -a 2>/dev/null || true\nshopt -u autocd\n"
		    "declare -x LANG=\"C.UTF-8\"\n");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "README.md"));
	assert_int_equal(wt_audit_count(f->db, "allow", "harness", "=[codex] ls", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", "fast_path", "=/bin/bash -c ls", NULL), 1);
	wt_result_free(&r);
}

/* The snapshot gone (Codex removes them): nothing is sourced, the
 * wrapper is still Codex's. */
static void test_esc_codex_wrapper_no_snapshot(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	run_wrapper(f, &r, "");
	wt_result_free(&r);
	char *snap = wd_asprintf("%s/.codex/shell_snapshots/" SNAP_NAME, f->home);
	assert_int_equal(unlink(snap), 0);
	free(snap);
	char *script = wd_asprintf("/bin/bash -c \"$(<'%s/wrapper.sh')\"; exit $?", f->base);
	run(f, &r, script);
	free(script);
	assert_int_equal(r.status, 0);
	/* One from the run with the empty snapshot, one without it. */
	assert_int_equal(wt_audit_count(f->db, "allow", "harness", "=[codex] ls", NULL), 2);
	wt_result_free(&r);
}

static void test_esc_codex_wrapper_snapshot_writes(void **state)
{
	struct fx *f = *state;
	char *snap = wd_asprintf("# Snapshot file\necho pwned > '%s/pwned'\n", f->proj);
	struct wt_result r;
	run_wrapper(f, &r, snap);
	free(snap);
	char *marker = wd_asprintf("%s/pwned", f->proj);
	struct stat st;
	if (stat(marker, &st) == 0)
		fail_msg("ESCAPE FOUND: the wrapper sourced a snapshot that wrote %s", marker);
	free(marker);
	assert_int_equal(wt_audit_count(f->db, "allow", "harness", NULL, NULL), 0);
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "__CODEX_SNAPSHOT", NULL), 1);
	wt_result_free(&r);
}

static void test_esc_codex_wrapper_snapshot_function(void **state)
{
	struct fx *f = *state;
	/* A function named [ runs at the wrapper's first restore test. */
	char *snap = wd_asprintf("[ () { echo pwned > '%s/pwned'; }\n", f->proj);
	struct wt_result r;
	run_wrapper(f, &r, snap);
	free(snap);
	char *marker = wd_asprintf("%s/pwned", f->proj);
	struct stat st;
	if (stat(marker, &st) == 0)
		fail_msg("ESCAPE FOUND: the wrapper ran a function its snapshot defined (%s)",
			 marker);
	free(marker);
	assert_int_equal(wt_audit_count(f->db, "allow", "harness", NULL, NULL), 0);
	wt_result_free(&r);
}

/* A wrapper whose PATH entry is a directory the agent writes (the
 * project) would let a planted program answer to the command's words: an
 * ordinary script, refused in passive. */
static void test_esc_codex_wrapper_foreign_path_entry(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	run_wrapper_in(f, &r, "# Snapshot file\n", f->proj);
	assert_int_not_equal(r.status, 0);
	assert_int_equal(wt_audit_count(f->db, "allow", "harness", NULL, NULL), 0);
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "=[codex] ls", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, NULL, NULL, "=/bin/bash -c ls", NULL), 0);
	wt_result_free(&r);
}

/* Codex's own sandbox cannot start inside warden: one line at start says
 * so for every spelling that turns it on, none for danger-full-access. */
static void test_esc_codex_sandbox_warning(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *a, *b;
		bool warn;
	} cases[] = {
		{"--sandbox", "workspace-write", true},
		{"-s", "read-only", true},
		{"-sread-only", NULL, true},
		{"--sandbox=workspace-write", NULL, true},
		{"-c", "sandbox_mode=\"read-only\"", true},
		{"--sandbox", "danger-full-access", false},
		{"-c", "model=\"read-only\"", false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = {"run", "--agent",   "codex", "--tier",		 "passive",
				"--",  "/bin/true", "exec",  (char *)cases[i].a, (char *)cases[i].b,
				NULL};
		struct wt_result r;
		wt_wardenv(f->proj, argv, &r);
		bool warned = strstr(r.err, "codex's own sandbox") != NULL;
		if (warned != cases[i].warn)
			fail_msg("%s %s: warned %d\n%s", cases[i].a, cases[i].b ? cases[i].b : "",
				 warned, r.err);
		wt_result_free(&r);
	}
}

int main(void)
{
	wt_require_sandbox();
#define T(name) cmocka_unit_test_setup_teardown(test_esc_codex_##name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(launcher_child_starts),     T(launcher_child_other_args),
		T(launcher_second_child),     T(launcher_other_program),
		T(wrapper_inert_snapshot),    T(wrapper_snapshot_writes),
		T(wrapper_snapshot_function), T(wrapper_foreign_path_entry),
		T(wrapper_no_snapshot),	      T(sandbox_warning),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
