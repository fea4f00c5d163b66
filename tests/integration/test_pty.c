/*
 * test_pty: warden on a real terminal. A pseudo-terminal stands for the
 * person's: keystrokes are written to its master, what they see is read
 * from it, and Ctrl-C is the byte the terminal turns into SIGINT.
 *
 *  - --prompt tty with an interactive agent inside the user's interactive
 *    shell (job control, as a person runs it): after an answer, the next
 *    line typed goes to the agent, never to the outer shell (warden must
 *    not read the terminal from the background and stop on SIGTTIN);
 *  - a question asked while the agent keeps the terminal raw (a TUI);
 *  - Ctrl-C while an exec or an open waits for a person, SIGTERM to
 *    warden meanwhile, and Ctrl-C at warden's question.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* SIGKILLs |pid| and, first, every process below it (by /proc's PPid):
 * what a failed case leaves behind (a stopped warden) must not outlive it.
 * Only this test's own descendants are named. */
static void kill_tree(pid_t pid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		pid_t child = (pid_t)atoi(e->d_name);
		if (child <= 0)
			continue;
		char path[64], *text = NULL;
		snprintf(path, sizeof(path), "/proc/%d/status", child);
		if (wd_read_file(path, 1 << 16, &text, NULL) < 0)
			continue;
		const char *pp = strstr(text, "\nPPid:");
		pid_t ppid = pp ? (pid_t)atoi(pp + 6) : 0;
		free(text);
		if (ppid == pid)
			kill_tree(child);
	}
	if (d)
		closedir(d);
	kill(pid, SIGKILL);
}

/* Waits at most |ms| for |pid|; -1 when it is still running. */
static int wait_ms(pid_t pid, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		int status;
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			return status;
		usleep(10000);
	}
	return -1;
}

/* Forgets what was read so far: the next wt_expect sees only new output. */
static void reset(char **acc)
{
	free(*acc);
	*acc = NULL;
}

/*
 * The person's interactive shell (bash, with job control) on a terminal,
 * and in it `warden run --prompt tty -- bash -i`: an exec that needs a
 * person, answered "a", then a line that says which shell reads it.
 */
static void test_pty_answer_keeps_keyboard_in_agent(void **state)
{
	struct wt_fx *f = *state;
	if (access("/bin/bash", X_OK) != 0)
		skip();
	int master;
	pid_t outer = forkpty(&master, NULL, NULL, NULL);
	assert_true(outer >= 0);
	if (outer == 0) {
		if (chdir(f->proj) < 0)
			_exit(126);
		unsetenv("WARDEN_SESSION");
		setenv("TERM", "dumb", 1);
		setenv("INPUTRC", "/dev/null", 1);
		setenv("PS1", "outer\\$ ", 1);
		execl("/bin/bash", "bash", "--norc", "--noprofile", "-i", (char *)NULL);
		_exit(127);
	}
	char *acc = NULL;
	const char *stage = "the outer shell's prompt";
	/* "\$" shows as "#" for root, "$" otherwise: the typed text never
	 * matches a prompt. */
	bool ok = wt_expect(master, "outer", 10000, &acc);
	if (ok) {
		reset(&acc);
		/* PS1 given on the command line is exported to warden, and the
		 * agent inherits it (the outer shell's is its own). */
		dprintf(master,
			"PS1='inner\\$ ' %s run --tier standard --prompt tty -- bash --norc "
			"--noprofile -i\n",
			wt_bin());
		stage = "the agent's prompt";
		ok = wt_expect(master, "inner# ", 20000, &acc) || strstr(acc, "inner$ ");
	}
	if (ok) {
		reset(&acc);
		dprintf(master, "touch x\n");
		stage = "warden's question";
		ok = wt_expect(master, "[r] reject", 10000, &acc);
	}
	if (ok) {
		reset(&acc);
		dprintf(master, "a\n");
		stage = "the agent's prompt after the answer";
		ok = wt_expect(master, "inner# ", 10000, &acc) || strstr(acc, "inner$ ");
	}
	bool inside = false;
	if (ok) {
		reset(&acc);
		/* Which shell reads the next line: only the agent has
		 * WARDEN_SESSION. The typed text shows IN""SIDE, never INSIDE. */
		dprintf(master,
			"test -n \"$WARDEN_SESSION\" && echo IN\"\"SIDE || echo OUT\"\"SIDE\n");
		stage = "the line after the answer";
		inside = wt_expect(master, "INSIDE", 8000, &acc);
	}
	if (!inside)
		print_message("waiting for %s, the terminal showed: %s\n", stage, acc ? acc : "");
	bool outside = acc && strstr(acc, "OUTSIDE");
	bool stopped = acc && strstr(acc, "Stopped");
	/* A second question, refused: taken and given back once more. */
	bool again = false;
	if (inside) {
		reset(&acc);
		dprintf(master, "touch x2\n");
		stage = "the second question";
		again = wt_expect(master, "[r] reject", 10000, &acc);
		if (again) {
			reset(&acc);
			dprintf(master, "r\n");
			stage = "the agent's prompt after the refusal";
			again = wt_expect(master, "inner# ", 10000, &acc) || strstr(acc, "inner$ ");
		}
		if (again) {
			reset(&acc);
			dprintf(master, "test -n \"$WARDEN_SESSION\" && echo ST\"\"ILL || echo "
					"OUT\"\"SIDE\n");
			stage = "the line after the refusal";
			again = wt_expect(master, "STILL", 8000, &acc);
		}
		if (!again)
			print_message("waiting for %s, the terminal showed: %s\n", stage,
				      acc ? acc : "");
		outside = outside || (acc && strstr(acc, "OUTSIDE"));
		stopped = stopped || (acc && strstr(acc, "Stopped"));
	}
	reset(&acc);
	if (inside) {
		dprintf(master, "exit\n");
		wt_expect(master, "outer", 10000, &acc);
		reset(&acc);
		dprintf(master, "exit\n");
	}
	int status = wait_ms(outer, 10000);
	if (status == -1) {
		kill_tree(outer);
		waitpid(outer, NULL, 0);
	}
	wt_expect(master, "(drain)", 200, &acc);
	free(acc);
	close(master);
	assert_false(outside);
	assert_false(stopped);
	assert_true(inside);
	assert_true(again);
	char *x = wd_asprintf("%s/x", f->proj);
	assert_int_equal(access(x, F_OK), 0);
	free(x);
	assert_int_equal(wt_audit_count(f->db, "allow", "user", "touch x", NULL), 1);
}

/*
 * A TUI keeps the terminal raw (no line editing, Enter sends CR): the
 * question is still answered with a line, and the agent gets its terminal
 * back in exactly the modes it set, with a SIGWINCH to redraw.
 */
static void test_pty_question_while_agent_is_raw(void **state)
{
	struct wt_fx *f = *state;
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"rules\": [{\"action\": \"allow\", \"command\": [\"stty\"]}]}\n");
	char *argv[] = {"run",
			"--tier",
			"standard",
			"--prompt",
			"tty",
			"--",
			"/bin/sh",
			"-c",
			"trap 'echo redr\"\"awn' WINCH; stty raw -echo; stty -g > before; touch y; "
			"stty -g > after; stty sane; echo fi\"\"nished",
			NULL};
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	char *acc = NULL;
	bool asked = wt_expect(master, "[r] reject", 10000, &acc);
	reset(&acc);
	dprintf(master, "a\r"); /* Enter on a raw terminal */
	bool done = asked && wt_expect(master, "finished", 10000, &acc);
	/* Told to redraw what the question covered. */
	bool redrawn = acc && strstr(acc, "redrawn");
	if (!done)
		print_message("the terminal showed: %s\n", acc ? acc : "");
	int status = wait_ms(w, 10000);
	if (status == -1) {
		kill(w, SIGKILL);
		waitpid(w, &status, 0);
	}
	free(acc);
	close(master);
	assert_true(asked);
	assert_true(done);
	assert_true(redrawn);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char *bpath = wd_asprintf("%s/before", f->proj), *apath = wd_asprintf("%s/after", f->proj);
	char *b = NULL, *a = NULL;
	assert_int_equal(wd_read_file(bpath, 4096, &b, NULL), 0);
	assert_int_equal(wd_read_file(apath, 4096, &a, NULL), 0);
	assert_string_equal(a, b); /* raw as the agent left it */
	free(a);
	free(b);
	free(apath);
	free(bpath);
	assert_int_equal(wt_audit_count(f->db, "allow", "user", "=touch y", NULL), 1);
}

/* Runs |script| under standard tier, desk only, on a terminal; waits for
 * the request to wait for a person, types Ctrl-C, and returns warden's
 * wait status (-1: it did not exit within 5 seconds). */
static int ctrl_c_while_waiting(struct wt_fx *f, const char *script)
{
	char *argv[] = {
		"run", "--tier", "standard", "--prompt", "desk",	 "--approval-timeout",
		"60s", "--",	 "/bin/sh",  "-c",	 (char *)script, NULL};
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	char *acc = NULL;
	bool waiting = wt_expect(master, "waiting for a person", 10000, &acc);
	if (!waiting)
		print_message("the terminal showed: %s\n", acc ? acc : "");
	reset(&acc);
	usleep(200000); /* the caller sits in its wait */
	(void)!write(master, "\003", 1);
	int status = waiting ? wait_ms(w, 5000) : -1;
	if (status == -1) {
		kill(w, SIGKILL);
		waitpid(w, NULL, 0);
	}
	wt_expect(master, "(drain)", 200, &acc);
	free(acc);
	close(master);
	return status;
}

/* dash runs the last command of -c with exec: the agent's own process
 * waits in the notification, and Ctrl-C must end that wait. */
static void test_pty_ctrl_c_ends_waiting_exec(void **state)
{
	struct wt_fx *f = *state;
	int status = ctrl_c_while_waiting(f, "touch z");
	assert_true(status != -1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGINT);
	char *z = wd_asprintf("%s/z", f->proj);
	assert_int_not_equal(access(z, F_OK), 0);
	free(z);
	assert_int_equal(
		wt_audit_count(f->db, "deny", "stopped", "=touch z", "the process got SIGINT"), 1);
}

/* The same for an open that waits in the project view. */
static void test_pty_ctrl_c_ends_waiting_open(void **state)
{
	struct wt_fx *f = *state;
	wt_write(f->proj, ".env", "TOKEN=1\n");
	int status = ctrl_c_while_waiting(f, "read x < .env; echo got \"$x\"");
	assert_true(status != -1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGINT);
	assert_int_equal(wt_audit_count(f->db, "deny", "stopped", ".env", "SIGINT"), 1);
}

/* An interactive shell as the agent runs each command as a job of its own
 * (its own process group, the terminal's foreground): Ctrl-C reaches that
 * job only, and must end the job's wait as well. (An untraced job may be
 * killed by the kernel before warden looks; a traced caller, as in the
 * cases above, is not.) */
static void test_pty_ctrl_c_ends_wait_of_agent_job(void **state)
{
	struct wt_fx *f = *state;
	if (access("/bin/bash", X_OK) != 0)
		skip();
	char *argv[] = {
		"run", "--tier", "standard",  "--prompt", "desk",	 "--approval-timeout",
		"60s", "--",	 "/bin/bash", "--norc",	  "--noprofile", "-i",
		NULL};
	setenv("PS1", "agent\\$ ", 1);
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	unsetenv("PS1");
	char *acc = NULL;
	const char *stage = "the agent's prompt";
	bool ok = wt_expect(master, "agent# ", 20000, &acc) || strstr(acc, "agent$ ");
	if (ok) {
		reset(&acc);
		dprintf(master, "touch j\n");
		stage = "the request to wait";
		ok = wt_expect(master, "waiting for a person", 10000, &acc);
	}
	if (ok) {
		reset(&acc);
		usleep(200000);
		(void)!write(master, "\003", 1);
		dprintf(master, "echo al\"\"ive\n");
		stage = "the agent after Ctrl-C";
		ok = wt_expect(master, "alive", 5000, &acc);
	}
	if (!ok)
		print_message("waiting for %s, the terminal showed: %s\n", stage, acc ? acc : "");
	reset(&acc);
	dprintf(master, "exit\n");
	int status = wait_ms(w, 5000);
	if (status == -1) {
		kill(w, SIGKILL);
		waitpid(w, &status, 0);
	}
	wt_expect(master, "(drain)", 200, &acc);
	free(acc);
	close(master);
	assert_true(ok);
	/* Refused by warden's look at the caller, or, when the caller is not
	 * traced and the kernel turned the SIGINT into a kill first, dropped
	 * as killed: stopped either way, never left to the deadline. */
	assert_int_equal(wt_audit_count(f->db, "deny", "stopped", "=touch j", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "deny", "timeout", "=touch j", NULL), 0);
}

/* kill -TERM of warden while a request waits: refused at once, the agent
 * gets the signal, warden exits with the agent's status. */
static void test_pty_sigterm_to_warden_ends_waiting(void **state)
{
	struct wt_fx *f = *state;
	char *argv[] = {"run", "--tier",  "standard", "--approval-timeout", "60s", "--", "/bin/sh",
			"-c",  "touch t", NULL};
	struct wt_bg bg;
	wt_warden_bg(f->proj, argv, &bg);
	bool waiting = wt_bg_expect_err(&bg, "waiting for a person", 10000);
	usleep(200000);
	kill(bg.pid, SIGTERM);
	struct wt_result res;
	bool exited = wt_bg_wait(&bg, 5000, &res);
	if (!exited)
		print_message("warden said: %s\n", res.err ? res.err : "");
	assert_true(waiting);
	assert_true(exited);
	assert_int_equal(res.status, 128 + SIGTERM);
	wt_result_free(&res);
	assert_int_equal(wt_audit_count(f->db, "deny", "stopped", "=touch t", "warden got SIGTERM"),
			 1);
}

/* Ctrl-C at warden's question: that question is refused, and the agent
 * goes on (it is told no, it is not interrupted). */
static void test_pty_ctrl_c_at_question_refuses(void **state)
{
	struct wt_fx *f = *state;
	char *argv[] = {"run",	    "--tier", "standard",
			"--prompt", "tty",    "--",
			"/bin/sh",  "-c",     "touch q; echo rc=$?; echo al\"\"ive",
			NULL};
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	char *acc = NULL;
	bool asked = wt_expect(master, "[r] reject", 10000, &acc);
	reset(&acc);
	(void)!write(master, "\003", 1);
	bool alive = asked && wt_expect(master, "alive", 8000, &acc);
	if (!alive)
		print_message("the terminal showed: %s\n", acc ? acc : "");
	int status = wait_ms(w, 5000);
	if (status == -1) {
		kill(w, SIGKILL);
		waitpid(w, &status, 0);
	}
	bool said = acc && strstr(acc, "cancelled at warden's question");
	bool rc126 = acc && strstr(acc, "rc=126");
	free(acc);
	close(master);
	assert_true(asked);
	assert_true(alive);
	assert_true(said);
	assert_true(rc126);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(wt_audit_count(f->db, "deny", "stopped", "=touch q", "Ctrl-C"), 1);
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pty_answer_keeps_keyboard_in_agent,
						wt_fx_setup, wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_pty_question_while_agent_is_raw, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_pty_ctrl_c_ends_waiting_exec, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_pty_ctrl_c_ends_waiting_open, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_pty_ctrl_c_ends_wait_of_agent_job, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_pty_sigterm_to_warden_ends_waiting,
						wt_fx_setup, wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_pty_ctrl_c_at_question_refuses, wt_fx_setup,
						wt_fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
