/*
 * test_run: `warden run` end to end with the real binary, a real seccomp
 * filter, real processes and a real SQLite audit.
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
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void test_run_fast_path_allowed_and_audited(void **state)
{
	struct wt_fx *f = *state;
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c",
		  "ls README.md && cat README.md", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "README.md"));
	assert_non_null(strstr(r.out, "# a project"));
	assert_int_equal(wt_audit_count(f->db, "allow", "fast_path", "ls README.md", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", "fast_path", "cat README.md", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", "startup", "/bin/sh -c", NULL), 1);
	wt_result_free(&r);
}

static void test_run_hard_deny_refused_with_message(void **state)
{
	struct wt_fx *f = *state;
	struct wt_result r;
	/* GNU rm keeps --preserve-root, so even a broken warden would not
	 * wipe the machine here; warden must not let it start at all. */
	/* The agent is a script: an "sh -c 'rm -rf /'" agent would itself be
	 * refused at start-up, hard deny covers the agent's own command too. */
	wt_write(f->proj, "agent.sh", "rm -rf /\necho rc=$?\n");
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "agent.sh", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "rc=126")); /* sh: EACCES is 126 */
	assert_non_null(strstr(r.err, "warden: refused exec of \"rm -rf /\""));
	assert_int_equal(wt_audit_count(f->db, "deny", "hard_deny", "rm -rf /", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", NULL, "rm -rf", NULL), 0);
	wt_result_free(&r);
}

static void test_run_startup_hard_deny_starts_nothing(void **state)
{
	struct wt_fx *f = *state;
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c", "rm -rf /",
		  NULL);
	assert_int_equal(r.status, 125);
	assert_int_equal(wt_audit_count(f->db, "deny", "hard_deny", "rm -rf /", NULL), 1);
	wt_result_free(&r);
}

static void test_run_exit_status_passed_through(void **state)
{
	struct wt_fx *f = *state;
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--", "/bin/sh", "-c", "exit 7", NULL);
	assert_int_equal(r.status, 7);
	wt_result_free(&r);
	wt_warden(f->proj, &r, "run", "--", "/bin/sh", "-c", "kill -TERM $$", NULL);
	assert_int_equal(r.status, 128 + SIGTERM);
	wt_result_free(&r);
}

static void test_run_cannot_start_exits_125(void **state)
{
	struct wt_fx *f = *state;
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--", "/nonexistent/agent", NULL);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "/nonexistent/agent"));
	wt_result_free(&r);
	wt_warden(f->proj, &r, "run", "--tier", "sometimes", "--", "/bin/true", NULL);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "--tier"));
	wt_result_free(&r);
	wt_warden(f->proj, &r, "run", NULL);
	assert_int_equal(r.status, 125);
	wt_result_free(&r);
}

/* Only covered trees are traced (supervisor/trace.c): a shell reading its
 * commands from a pipe covers nothing, so it is let go at its exec event,
 * and what it starts (a command, a subshell's command) is unknown to the
 * supervisor until it execs. Those execs are still decided and audited, as
 * part of the shell's tool call (found through PPid), and a later command
 * of the agent is a tool call of its own. */
static void test_run_untraced_descendants_keep_their_tool_call(void **state)
{
	struct wt_fx *f = *state;
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c",
		  "echo '/bin/echo inner; (/bin/echo sub)' | /bin/sh; /bin/echo outer", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "inner\nsub\nouter\n"));
	wt_result_free(&r);
	assert_int_equal(wt_audit_count(f->db, "allow", "tier", "=/bin/sh", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", "fast_path", "=/bin/echo inner", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", "fast_path", "=/bin/echo sub", NULL), 1);
	struct wt_result a;
	wt_warden(f->proj, &a, "audit", "--tool-calls", NULL);
	assert_int_equal(a.status, 0);
	const char *sh = strstr(a.out, "/bin/sh\n");
	assert_non_null(sh);
	const char *under = strstr(sh, "under it: 2 execs");
	const char *outer = strstr(sh, "/bin/echo outer");
	if (!under || !outer || under > outer || !strstr(under, "/bin/echo inner") ||
	    !strstr(under, "/bin/echo sub"))
		fail_msg("the shell's tool call should hold both echoes:\n%s", a.out);
	/* "outer" is a tool call of its own, not under the shell */
	const char *line = outer;
	while (line > a.out && line[-1] != '\n')
		line--;
	assert_null(strstr(line, "under it"));
	wt_result_free(&a);
}

/* The caller's command line (the request's "parent") is read from where its
 * own exec event, or its parent's, showed its arguments, when the bytes
 * there are still the ones seen; a caller that rewrote them in place (perl's
 * $0) shows the rewritten ones, as /proc/PID/cmdline does. */
static void test_run_parent_command_line(void **state)
{
	struct wt_fx *f = *state;
	const char *script = "/bin/echo a; /bin/echo b; "
			     "perl -e '$0 = q(renamed by perl); exec q(/bin/echo), q(c)'";
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c", script, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "a\nb\nc\n"));
	wt_result_free(&r);
	/* The shell's fork children, whose arguments are the shell's. */
	struct wt_audit_q a = {.summary_sub = "=/bin/echo a",
			       .request_sub =
				       "\"parent\":\"/bin/sh -c '/bin/echo a; /bin/echo b; perl"};
	assert_int_equal(wt_audit_match(f->db, &a), 1);
	struct wt_audit_q b = {.summary_sub = "=/bin/echo b",
			       .request_sub =
				       "\"parent\":\"/bin/sh -c '/bin/echo a; /bin/echo b; perl"};
	assert_int_equal(wt_audit_match(f->db, &b), 1);
	/* perl itself was started by the shell; its exec of echo comes from
	 * its rewritten arguments. */
	struct wt_audit_q p = {.summary_sub = "perl -e",
			       .request_sub = "\"parent\":\"/bin/sh -c '/bin/echo a"};
	assert_int_equal(wt_audit_match(f->db, &p), 1);
	struct wt_audit_q c = {.summary_sub = "=/bin/echo c",
			       .request_sub = "\"parent\":\"'renamed by perl'\""};
	assert_int_equal(wt_audit_match(f->db, &c), 1);
}

/* The decoder remembers a file's "#!" line by its identity, size, mtime and
 * ctime, and only once its ctime is over a second old. A script rewritten
 * in place with the same size, to another interpreter, has a new ctime:
 * its next exec is predicted from the new line, so it runs (a stale
 * prediction would get it killed at its exec event). */
static void test_run_rewritten_script_runs_its_new_interpreter(void **state)
{
	struct wt_fx *f = *state;
	wt_write(f->proj, "s.sh", "#!/bin/sh\necho one\n");
	char *path = wd_asprintf("%s/s.sh", f->proj);
	assert_int_equal(chmod(path, 0755), 0);
	free(path);
	usleep(2100 * 1000); /* old enough to be remembered */
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c",
		  "./s.sh; printf '#!/bin/bash\\necho 2\\n' > s.sh; ./s.sh", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "one\n2\n"));
	assert_null(strstr(r.err, "killed"));
	wt_result_free(&r);
	assert_int_equal(wt_audit_count(f->db, NULL, "integrity", NULL, NULL), 0);
}

static void test_run_tier_notes(void **state)
{
	struct wt_fx *f = *state;
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c",
		  "touch made-by-agent", NULL);
	assert_int_equal(r.status, 0);
	wt_result_free(&r);
	char *made = wd_asprintf("%s/made-by-agent", f->proj);
	assert_int_equal(access(made, F_OK), 0);
	unlink(made);
	assert_int_equal(wt_audit_count(f->db, "allow", "tier", "touch made-by-agent",
					"aggressive mode, auto-approve all escalated tool calls"),
			 1);
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c",
		  "touch made-by-agent; echo rc=$?", NULL);
	assert_non_null(strstr(r.out, "rc=126"));
	assert_non_null(strstr(r.err, "passive mode, reject all escalated tool calls"));
	assert_int_not_equal(access(made, F_OK), 0);
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "touch made-by-agent",
					"passive mode, reject all escalated tool calls"),
			 1);
	wt_result_free(&r);
	wt_warden(f->proj, &r, "run", "--tier", "standard", "--prompt", "none", "--", "/bin/sh",
		  "-c", "touch made-by-agent; echo rc=$?", NULL);
	assert_non_null(strstr(r.out, "rc=126"));
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "touch", "no person can be asked"),
			 1);
	wt_result_free(&r);
	free(made);
}

static void test_run_concurrent_execs_each_audited_once(void **state)
{
	struct wt_fx *f = *state;
	struct wt_result r;
	/* The shell waits twice and says how the first wait ended, so that a
	 * wait that returned early could be told from lost output. Lines did
	 * go missing once in a while: the echoes wrote at once to a memfd,
	 * whose file position is not locked across processes, so two lines
	 * could land at the same offset. The capture is O_APPEND now
	 * (wt_capture_fd). */
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c",
		  "i=0; while [ $i -lt 50 ]; do /bin/echo x$i & i=$((i+1)); done; wait; "
		  "echo wait1=$?; wait",
		  NULL);
	assert_int_equal(r.status, 0);
	const char *w1 = strstr(r.out, "wait1=");
	if (!w1 || strncmp(w1, "wait1=0\n", 8) != 0 || strstr(w1, "\nx"))
		fprintf(stderr, "the first wait ended early (status, then what came after): %s\n",
			w1 ? w1 : "(no status)");
	int lines = 0; /* the echo lines: "x<N>" */
	for (const char *l = r.out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		if (l[0] == 'x')
			lines++;
	if (lines != 50) {
		/* Say what happened to the missing ones before failing (whole,
		 * on stderr: print_message cuts long text). */
		fprintf(stderr, "%d lines; stderr:\n%s\nmissing:", lines, r.err);
		for (int i = 0; i < 50; i++) {
			char want[32];
			snprintf(want, sizeof(want), "x%d\n", i);
			bool seen = false;
			for (const char *p = r.out; (p = strstr(p, want)); p++)
				if (p == r.out || p[-1] == '\n')
					seen = true;
			snprintf(want, sizeof(want), "=/bin/echo x%d", i);
			if (!seen)
				fprintf(stderr, " x%d (%d audit rows)", i,
					wt_audit_count(f->db, NULL, NULL, want, NULL));
		}
		struct wt_result a;
		wt_warden(f->proj, &a, "audit", "--format", "table", NULL);
		fprintf(stderr, "\naudit:\n%s\n", a.out);
		wt_result_free(&a);
	}
	assert_int_equal(lines, 50);
	/* Every exec decided and audited: none lost, none doubled. */
	assert_int_equal(wt_audit_count(f->db, "allow", "fast_path", "/bin/echo x", NULL), 50);
	for (int i = 0; i < 50; i++) {
		char want[32];
		snprintf(want, sizeof(want), "=/bin/echo x%d", i);
		assert_int_equal(wt_audit_count(f->db, "allow", "fast_path", want, NULL), 1);
	}
	wt_result_free(&r);
}

static void test_run_argv_race_never_runs_refused(void **state)
{
	struct wt_fx *f = *state;
	char *race = wt_helper("race_exec");
	char *marker = wd_asprintf("%s/PWNED", f->proj);
	const char *modes[] = {"path", "argv", "vfork"};
	for (size_t m = 0; m < 3; m++) {
		struct wt_result r;
		char *argv[] = {"run",	"--tier", "passive", "--", race, (char *)modes[m],
				"1500", marker,	  NULL};
		wt_wardenv(f->proj, argv, &r);
		print_message("race %s: %s", modes[m], r.out);
		assert_int_equal(r.status, 0);
		assert_int_not_equal(access(marker, F_OK), 0);
		wt_result_free(&r);
	}
	free(marker);
	free(race);
}

/* Whether a live (not zombie) process runs a command line containing
 * |token|. The agent's own $$ is a pid of its PID namespace, so the test
 * finds it by what it runs. */
static bool alive_with(const char *token)
{
	bool found = false;
	FILE *ps = popen("ps -eo stat=,args=", "r");
	char line[4096];
	while (ps && fgets(line, sizeof(line), ps))
		if (strstr(line, token) && line[0] != 'Z' && !strstr(line, "ps -eo"))
			found = true;
	if (ps)
		pclose(ps);
	return found;
}

static void test_run_supervisor_sigkill_kills_agent(void **state)
{
	struct wt_fx *f = *state;
	char *marker = wd_asprintf("%s/ran-after-kill", f->proj);
	char *script = wd_asprintf("sleep 4242.5; touch %s", marker);
	char *argv[] = {"run", "--tier", "aggressive", "--", "/bin/sh", "-c", script, NULL};
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	char *acc = NULL;
	for (int i = 0; i < 200 && !alive_with("sleep 4242.5"); i++)
		usleep(20000);
	assert_true(alive_with("sleep 4242.5"));
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	/* EXITKILL and init's PDEATHSIG: the whole tree dies with the
	 * supervisor. */
	bool gone = false;
	for (int i = 0; i < 100 && !gone; i++) {
		gone = !alive_with("sleep 4242.5");
		usleep(20000);
	}
	assert_true(gone);
	/* Drain the pty so that nothing blocks on its output. */
	wt_expect(master, "(nothing to wait for)", 200, &acc);
	assert_int_not_equal(access(marker, F_OK), 0);
	close(master);
	free(acc);
	free(script);
	free(marker);
}

static void test_run_pending_exec_never_runs_after_kill(void **state)
{
	struct wt_fx *f = *state;
	char *marker = wd_asprintf("%s/pending-ran", f->proj);
	char *script = wd_asprintf("touch %s", marker);
	char *argv[] = {"run", "--tier",  "standard", "--prompt", "tty",
			"--",  "/bin/sh", "-c",	      script,	  NULL};
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	char *acc = NULL;
	assert_true(wt_expect(master, "[r] reject", 10000, &acc));
	assert_non_null(strstr(acc, "touch"));
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	usleep(300000);
	assert_int_not_equal(access(marker, F_OK), 0);
	close(master);
	free(acc);
	free(script);
	free(marker);
}

static void test_run_tty_prompt_approve_with_note(void **state)
{
	struct wt_fx *f = *state;
	char *marker = wd_asprintf("%s/approved", f->proj);
	/* The prompt shows this command line: wait for output only the run
	 * prints ("fin""ished" prints as "finished"). */
	char *script = wd_asprintf("touch %s && echo fin\"\"ished", marker);
	char *argv[] = {"run", "--tier",  "standard", "--prompt", "tty",
			"--",  "/bin/sh", "-c",	      script,	  NULL};
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	char *acc = NULL;
	assert_true(wt_expect(master, "[r] reject", 10000, &acc));
	dprintf(master, "a keep it inside the project\n");
	assert_true(wt_expect(master, "finished", 10000, &acc));
	int status;
	waitpid(w, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(access(marker, F_OK), 0);
	if (!strstr(acc, "with note: keep it inside the project"))
		print_message("pty said: %s\n", acc);
	assert_non_null(strstr(acc, "with note: keep it inside the project"));
	assert_int_equal(wt_audit_count(f->db, "allow", "user", "touch", NULL), 1);
	close(master);
	free(acc);
	free(script);
	free(marker);
}

static void test_run_tty_prompt_reject(void **state)
{
	struct wt_fx *f = *state;
	char *argv[] = {"run",	    "--tier", "standard",
			"--prompt", "tty",    "--",
			"/bin/sh",  "-c",     "touch nope; echo rc=$?",
			NULL};
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	char *acc = NULL;
	assert_true(wt_expect(master, "[r] reject", 10000, &acc));
	dprintf(master, "r use the build dir\n");
	assert_true(wt_expect(master, "refused by", 10000, &acc));
	assert_true(wt_expect(master, "rc=126", 10000, &acc));
	waitpid(w, NULL, 0);
	assert_non_null(strstr(acc, "warden: refused by "));
	assert_non_null(strstr(acc, ": use the build dir (exec of \"touch nope\")"));
	assert_int_equal(wt_audit_count(f->db, "deny", "user", "touch nope", "refused by"), 1);
	close(master);
	free(acc);
}

static void test_run_audit_survives_sigkill(void **state)
{
	struct wt_fx *f = *state;
	char *log = wd_asprintf("%s/ran.log", f->proj);
	char *script = wd_asprintf("i=0; while [ $i -lt 3000 ]; do /bin/true && echo $i >> %s; "
				   "i=$((i+1)); done",
				   log);
	char *argv[] = {"run", "--tier", "passive", "--", "/bin/sh", "-c", script, NULL};
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	usleep(700000);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	usleep(200000);
	char *txt = NULL;
	size_t len = 0;
	int ran = 0;
	if (wd_read_file(log, 1 << 20, &txt, &len) == 0)
		for (char *p = txt; (p = strchr(p, '\n')); p++)
			ran++;
	free(txt);
	assert_true(ran > 0);
	int rows = wt_audit_count(f->db, "allow", "fast_path", "/bin/true", NULL);
	print_message("ran %d, rows %d\n", ran, rows);
	assert_true(rows >= ran);
	/* integrity: sqlite's own check through the store. */
	assert_true(wt_audit_rows(f->db) > 0);
	close(master);
	free(script);
	free(log);
}

/* A project grant for make covers its compilers, but inside that
 * tree hard deny, sensitive arguments and a shell reading commands from a
 * pipe are still decided. */
static void test_run_coverage_still_decides_inside(void **state)
{
	struct wt_fx *f = *state;
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"grants\":[{\"command\":[\"make\",\"-j2\"],\"by\":\"t\","
		 "\"at\":\"2026-01-01T00:00:00Z\"}]}\n");
	wt_write(f->proj, ".env", "TOKEN=never-printed-1234\n");
	wt_write(f->proj, "a.c", "int a(void){return 1;}\n");
	wt_write(f->proj, "Makefile",
		 "all:\n"
		 "\tcc -c a.c -o a.o\n"
		 "\t-cat .env; echo cat-rc=$$?\n"
		 "\t-rm -rf /; echo rm-rc=$$?\n"
		 "\t-echo 'touch piped' | bash; echo pipe-rc=$$?\n");
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "standard", "--prompt", "none", "--", "/bin/sh",
		  "-c", "make -j2; true", NULL);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "never-printed-1234"));
	assert_int_equal(wt_audit_count(f->db, "allow", "grant", "=make -j2", NULL), 1);
	assert_true(wt_audit_count(f->db, "allow", "covered", "cc -c a.c", NULL) >= 1);
	char *obj = wd_asprintf("%s/a.o", f->proj);
	assert_int_equal(access(obj, F_OK), 0);
	free(obj);
	/* a sensitive argument is decided again (no person: refused) */
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "cat .env", NULL), 1);
	/* hard deny inside the covered tree */
	assert_int_equal(wt_audit_count(f->db, "deny", "hard_deny", "rm -rf /", NULL), 1);
	/* bash reading commands from a pipe covers nothing it runs */
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "=touch piped", NULL), 1);
	char *piped = wd_asprintf("%s/piped", f->proj);
	assert_int_not_equal(access(piped, F_OK), 0);
	free(piped);
	wt_result_free(&r);
}

/*
 * "#!" lines the kernel reads in its own way (binfmt_script): a trailing
 * space with no newline gives the interpreter an empty argument, and
 * spaces before a NUL are kept. The exec check compares the new argv byte
 * for byte with what the decoder predicted, so a decoder that parsed these
 * differently would kill a script that was allowed (exit 137).
 */
static void test_run_shebang_edge_cases_run(void **state)
{
	struct wt_fx *f = *state;
	wt_write(f->proj, "s1", "#!/bin/echo ");
	char *s1 = wd_asprintf("%s/s1", f->proj), *s2 = wd_asprintf("%s/s2", f->proj);
	static const char nul_line[] = "#!/bin/echo -n  \0\n"; /* a NUL: not wt_write */
	int fd = open(s2, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, nul_line, sizeof(nul_line) - 1), (ssize_t)sizeof(nul_line) - 1);
	close(fd);
	assert_int_equal(chmod(s1, 0755), 0);
	assert_int_equal(chmod(s2, 0755), 0);
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c",
		  "./s1; echo \"rc1=$?\"; ./s2; echo \"rc2=$?\"", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, " ./s1\nrc1=0"));
	assert_non_null(strstr(r.out, "rc2=0"));
	assert_int_equal(wt_audit_count(f->db, "deny", "integrity", NULL, NULL), 0);
	wt_result_free(&r);
	free(s1);
	free(s2);
}

/* An argv over 256 KiB in all is refused with a clear reason. */
static void test_run_argv_over_cap_refused(void **state)
{
	struct wt_fx *f = *state;
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c",
		  "A=$(head -c 100000 /dev/zero | tr '\\0' a); /bin/echo \"$A\" \"$A\" \"$A\"; "
		  "echo rc=$?",
		  NULL);
	assert_non_null(strstr(r.out, "rc=126"));
	assert_non_null(strstr(r.err, "over 256 KiB"));
	assert_int_equal(wt_audit_count(f->db, "deny", "decoder", "/bin/echo", "over 256 KiB"), 1);
	wt_result_free(&r);
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_run_fast_path_allowed_and_audited, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_hard_deny_refused_with_message,
						wt_fx_setup, wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_startup_hard_deny_starts_nothing,
						wt_fx_setup, wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_exit_status_passed_through, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_cannot_start_exits_125, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_parent_command_line, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_untraced_descendants_keep_their_tool_call,
						wt_fx_setup, wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_rewritten_script_runs_its_new_interpreter,
						wt_fx_setup, wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_tier_notes, wt_fx_setup, wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_concurrent_execs_each_audited_once,
						wt_fx_setup, wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_argv_race_never_runs_refused, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_supervisor_sigkill_kills_agent,
						wt_fx_setup, wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_pending_exec_never_runs_after_kill,
						wt_fx_setup, wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_tty_prompt_approve_with_note, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_tty_prompt_reject, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_audit_survives_sigkill, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_coverage_still_decides_inside, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_argv_over_cap_refused, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_run_shebang_edge_cases_run, wt_fx_setup,
						wt_fx_teardown),
	};
	return cmocka_run_group_tests_name("run", tests, NULL, NULL);
}
