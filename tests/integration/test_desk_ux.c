/*
 * test_desk_ux: what a person at the desk sees and gets. A real `warden
 * run` in the background waits on a person; the test is the second
 * terminal: the table shows where the request runs and its whole command
 * wrapped to the width (a cut word ends in "…"), --always says how long it
 * holds, the agent is told of an approval without a note, a project grant
 * is an insertion into the user's own file, and --watch rings the bell on a
 * terminal only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define RUN_MS 30000

static char *g_proj;

static const char *me(void)
{
	static char name[64];
	struct passwd *pw = getpwuid(getuid());
	snprintf(name, sizeof(name), "%s", pw ? pw->pw_name : "?");
	return name;
}

static int setup(void **state)
{
	(void)state;
	g_proj = wt_project();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	wt_rmtree(g_proj);
	free(g_proj);
	return 0;
}

static char *start_run(char *const argv[], struct wt_bg *bg)
{
	wt_warden_bg(g_proj, argv, bg);
	char *sid = wt_bg_session(bg, 10000);
	assert_non_null(sid);
	return sid;
}

static void finish_run(struct wt_bg *bg, struct wt_result *r)
{
	assert_true(wt_bg_wait(bg, RUN_MS, r));
}

/* The id of the one request session |sid| waits on, polled for at most
 * 10 s; also its JSON entry when |json| is not NULL. Caller frees. */
static char *pending_id(const char *sid, char **json)
{
	for (int i = 0; i < 200; i++) {
		struct wt_result r;
		wt_warden(NULL, &r, "approvals", "--session", sid, "--format", "json", NULL);
		assert_int_equal(r.status, 0);
		const char *o = strstr(r.out, "{\"id\":\"");
		if (o) {
			const char *v = o + 7, *e = strchr(v, '"');
			char *id = wd_asprintf("%.*s", (int)(e - v), v);
			if (json)
				*json = wd_strdup(o);
			wt_result_free(&r);
			return id;
		}
		wt_result_free(&r);
		usleep(50000);
	}
	fail_msg("no pending request in session %s", sid);
	return NULL;
}

/* Columns of a line (UTF-8 characters). */
static size_t line_cols(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

#define LONGWORD                                                                                   \
	"Zlongword_0123456789_0123456789_0123456789_0123456789_0123456789_0123456789_0123456789_"  \
	"end"

/* The table: the cwd, and the whole command wrapped to $COLUMNS; the
 * JSON: the cwd and the whole command. */
static void test_desk_ux_table_cwd_full_command(void **state)
{
	(void)state;
	wt_write(g_proj, "sub/keep", "");
	char *argv[] = {"run",
			"--tier",
			"standard",
			"--prompt",
			"desk",
			"--",
			"/bin/sh",
			"-c",
			"cd sub && touch alpha_file beta_file gamma_file delta_file epsilon_file "
			"zeta_file eta_file theta_file iota_file kappa_file " LONGWORD,
			NULL};
	struct wt_bg bg;
	char *sid = start_run(argv, &bg);
	char *json = NULL;
	char *id = pending_id(sid, &json);
	char *cwd = wd_asprintf("\"cwd\":\"%s/sub\"", g_proj);
	assert_non_null(strstr(json, cwd));
	assert_non_null(strstr(json, "\"command\":\"touch alpha_file"));
	assert_non_null(strstr(json, "kappa_file " LONGWORD "\""));

	setenv("COLUMNS", "100", 1);
	struct wt_result t;
	wt_warden(NULL, &t, "approvals", "--session", sid, NULL);
	unsetenv("COLUMNS");
	assert_int_equal(t.status, 0);
	print_message("%s", t.out);
	char *in = wd_asprintf("in: %s/sub", g_proj);
	assert_non_null(strstr(t.out, in));
	static const char *const words[] = {"alpha_file",   "beta_file", "gamma_file", "delta_file",
					    "epsilon_file", "zeta_file", "eta_file",   "theta_file",
					    "iota_file",    "kappa_file"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(words); i++)
		assert_non_null(strstr(t.out, words[i]));
	/* No line is wider than the terminal; the long word is cut only
	 * with "…", and put back together it is whole. */
	struct wd_sb joined = {0};
	int cuts = 0;
	for (const char *l = t.out; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		assert_true(line_cols(l, n) <= 100);
		const char *tail = n >= 3 ? l + n - 3 : NULL;
		bool cut = tail && memcmp(tail, "\xe2\x80\xa6", 3) == 0;
		cuts += cut;
		const char *w = l;
		while (w < l + n && *w == ' ')
			w++;
		wd_sb_add(&joined, w, (size_t)(l + n - w) - (cut ? 3 : 0));
		if (!cut)
			wd_sb_putc(&joined, '\n');
		if (!nl)
			break;
		l = nl + 1;
	}
	assert_true(cuts >= 1);
	assert_non_null(strstr(joined.buf, LONGWORD));
	wd_sb_free(&joined);

	struct wt_result a;
	wt_warden(NULL, &a, "deny", id, NULL);
	wt_result_free(&a);
	struct wt_result r;
	finish_run(&bg, &r);
	wt_result_free(&r);
	wt_result_free(&t);
	free(in);
	free(cwd);
	free(json);
	free(id);
	free(sid);
}

/* approve --always says for how long; the agent hears of an approval
 * that has no note. */
static void test_desk_ux_always_and_told(void **state)
{
	(void)state;
	char *argv[] = {"run",	    "--tier", "standard",
			"--prompt", "desk",   "--",
			"/bin/sh",  "-c",     "touch one && touch two && echo done",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(argv, &bg);
	char *id = pending_id(sid, NULL);
	struct wt_result a;
	wt_warden(NULL, &a, "approve", id, "--always", NULL);
	assert_int_equal(a.status, 0);
	assert_non_null(strstr(a.out, "for the rest of this session"));
	wt_result_free(&a);
	free(id);
	id = pending_id(sid, NULL);
	wt_warden(NULL, &a, "approve", id, NULL);
	assert_int_equal(a.status, 0);
	assert_null(strstr(a.out, "for the rest of this session"));
	wt_result_free(&a);
	struct wt_result r;
	finish_run(&bg, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "done"));
	char *told1 = wd_asprintf("warden: approved by %s (exec of \"touch one\")", me());
	char *told2 = wd_asprintf("warden: approved by %s (exec of \"touch two\")", me());
	assert_non_null(strstr(r.err, told1));
	assert_non_null(strstr(r.err, told2));
	wt_result_free(&r);
	free(told1);
	free(told2);
	free(id);
	free(sid);
}

/* approve --always --project into |before|: the file afterwards is
 * |before| with only the grant added: |head|, the grant's one line, |tail|. */
static void project_grant_keeps(const char *before, const char *head, const char *tail)
{
	wt_write(g_proj, ".warden/permissions.json", before);
	char *argv[] = {"run",	    "--tier", "standard",
			"--prompt", "desk",   "--",
			"/bin/sh",  "-c",     "touch granted_file; echo rc=$?",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(argv, &bg);
	char *id = pending_id(sid, NULL);
	struct wt_result a;
	wt_warden(NULL, &a, "approve", id, "--always", "--project", "--yes", NULL);
	assert_int_equal(a.status, 0);
	print_message("%s", a.out);
	char *perm = wd_asprintf("%s/.warden/permissions.json", g_proj);
	char *wrote = wd_asprintf("wrote %s:\n", perm);
	char *will = wd_asprintf("will be written to %s:", perm);
	assert_non_null(strstr(a.out, wrote));
	assert_non_null(strstr(a.out, will));
	/* The grant's line as the session printed it. */
	const char *g = strstr(a.out, wrote) + strlen(wrote);
	char *grant = wd_asprintf("%.*s", (int)strcspn(g, "\n"), g);
	assert_true(grant[0] == '{');
	assert_non_null(strstr(grant, "\"touch\",\"granted_file\""));
	struct wt_result r;
	finish_run(&bg, &r);
	assert_non_null(strstr(r.out, "rc=0"));
	wt_result_free(&r);
	char *text = NULL;
	assert_int_equal(wd_read_file(perm, 1 << 20, &text, NULL), 0);
	char *want = wd_asprintf("%s%s%s", head, grant, tail);
	assert_string_equal(text, want);
	/* And it is a grant: the next run is not asked. */
	char *made = wd_asprintf("%s/granted_file", g_proj);
	unlink(made);
	wt_warden(g_proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c",
		  "touch granted_file; echo rc=$?", NULL);
	assert_non_null(strstr(r.out, "rc=0"));
	wt_result_free(&r);
	free(made);
	free(want);
	free(text);
	free(grant);
	free(will);
	free(wrote);
	free(perm);
	wt_result_free(&a);
	free(id);
	free(sid);
}

static void test_desk_ux_project_grant_new_key(void **state)
{
	(void)state;
	/* Tabs, a key order of the user's, no "grants": one is added at the
	 * end of the top-level object, in the file's own indentation. */
	project_grant_keeps("{\n\t\"sensitive_resources\": [\".env\", \"secrets/**\"],\n"
			    "\t\"tier\":   \"standard\"\n}\n",
			    "{\n\t\"sensitive_resources\": [\".env\", \"secrets/**\"],\n"
			    "\t\"tier\":   \"standard\",\n\t\"grants\": [\n\t\t",
			    "\n\t]\n}\n");
}

static void test_desk_ux_project_grant_appends(void **state)
{
	(void)state;
	/* An existing grant: the new one follows it with the same
	 * separator; the rest is untouched. */
	project_grant_keeps(
		"{\n  \"grants\": [\n      {\"command\": [\"true\"], \"by\": \"ann\", "
		"\"at\": \"2026-01-02T03:04:05Z\"}\n  ],\n  \"tier\": \"standard\"\n}\n",
		"{\n  \"grants\": [\n      {\"command\": [\"true\"], \"by\": \"ann\", "
		"\"at\": \"2026-01-02T03:04:05Z\"},\n      ",
		"\n  ],\n  \"tier\": \"standard\"\n}\n");
}

static void test_desk_ux_project_grant_compact_and_empty(void **state)
{
	(void)state;
	/* One line without spaces stays one line. */
	project_grant_keeps("{\"tier\":\"standard\"}\n", "{\"tier\":\"standard\", \"grants\":[",
			    "]}\n");
	/* An empty "grants" gets the grant on a line of its own, one level
	 * deeper than the key. */
	project_grant_keeps("{\n    \"grants\": [],\n    \"tier\": \"standard\"\n}\n",
			    "{\n    \"grants\": [\n        ",
			    "\n    ],\n    \"tier\": \"standard\"\n}\n");
}

/* A file the writer must not rewrite (invalid now): nothing is written,
 * the approval holds for the session. */
static void test_desk_ux_project_grant_invalid_file_untouched(void **state)
{
	(void)state;
	wt_write(g_proj, ".warden/permissions.json", "{\"tier\": \"standard\"}\n");
	char *argv[] = {"run",	    "--tier", "standard",
			"--prompt", "desk",   "--",
			"/bin/sh",  "-c",     "touch later_file; echo rc=$?",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(argv, &bg);
	char *id = pending_id(sid, NULL);
	/* Broken while the session runs. */
	static const char broken[] = "{\"tier\": \"standard\", \"bogus\": 1}\n";
	wt_write(g_proj, ".warden/permissions.json", broken);
	struct wt_result a;
	wt_warden(NULL, &a, "approve", id, "--always", "--project", "--yes", NULL);
	assert_non_null(strstr(a.out, "for the rest of this session"));
	wt_result_free(&a);
	struct wt_result r;
	finish_run(&bg, &r);
	assert_non_null(strstr(r.out, "rc=0"));
	wt_result_free(&r);
	char *perm = wd_asprintf("%s/.warden/permissions.json", g_proj);
	char *text = NULL;
	assert_int_equal(wd_read_file(perm, 1 << 20, &text, NULL), 0);
	assert_string_equal(text, broken);
	free(text);
	free(perm);
	free(id);
	free(sid);
}

/* approvals --watch rings the bell for a new request on a terminal, and
 * never into a pipe. Both watch only the test's session (other sessions
 * of the machine's user may come and go meanwhile). */
static void test_desk_ux_watch_bell(void **state)
{
	(void)state;
	char *argv[] = {"run",	    "--tier", "standard",
			"--prompt", "desk",   "--",
			"/bin/sh",  "-c",     "sleep 2; touch rung",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(argv, &bg);
	char *wargv[] = {"approvals", "--watch", "--session", sid, NULL};
	int master = -1;
	pid_t w = wt_warden_pty(NULL, wargv, &master);
	struct wt_bg piped;
	wt_warden_bg(NULL, wargv, &piped);
	char *acc = NULL;
	/* The first screen: nothing waits yet, no bell. */
	assert_true(wt_expect(master, "no pending requests", 10000, &acc));
	assert_null(strchr(acc, '\a'));
	free(acc);
	acc = NULL;
	char *id = pending_id(sid, NULL);
	bool rang = wt_expect(master, "\a", 10000, &acc);
	free(acc);
	assert_true(rang);
	/* The piped watch has listed it by now, without a bell. */
	usleep(1500000);
	char *out = wt_bg_out(&piped);
	assert_non_null(strstr(out, id));
	assert_null(strchr(out, '\a'));
	free(out);
	struct wt_result a;
	wt_warden(NULL, &a, "deny", id, NULL);
	wt_result_free(&a);
	struct wt_result r;
	finish_run(&bg, &r);
	wt_result_free(&r);
	kill(w, SIGTERM);
	waitpid(w, NULL, 0);
	close(master);
	wt_bg_wait(&piped, 100, &r);
	wt_result_free(&r);
	free(id);
	free(sid);
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_desk_ux_table_cwd_full_command, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_desk_ux_always_and_told, setup, teardown),
		cmocka_unit_test_setup_teardown(test_desk_ux_project_grant_new_key, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_desk_ux_project_grant_appends, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_desk_ux_project_grant_compact_and_empty, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_desk_ux_project_grant_invalid_file_untouched,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_desk_ux_watch_bell, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
