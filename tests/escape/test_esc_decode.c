/*
 * test_esc_decode: what the exec decoder remembers between execs (the
 * decoding thread's own credentials, the walks up of "could the agent have
 * written it") never answers for a file system that changed, under the
 * real `warden run`.
 *
 * A copy of touch named ls in a root-owned 0755 directory outside every
 * writable place takes the fast path as ls (only root could have put it
 * there). Between two execs of it, the directory (or the one above it) is
 * made writable by others, moved into the project, or a symlink on the way
 * is flipped to the project: the second exec must be seen as a program the
 * agent can have written. The host makes the change while the agent waits
 * (the agent writes "ready" and waits for "go"); the agent makes it itself
 * where it can (chmod of a directory its uid owns: Landlock has no right
 * for chmod). Each case first lets the remembered walk age past a second,
 * so that the second exec would be answered from the memo if it were
 * stale. Runs as root; everything it writes is under fresh temporary
 * directories it removes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fx {
	char *proj;
	char *home;
	char *db;
	char *outside; /* not under /tmp: that is the agent's */
	char *ls;      /* outside/sys/bin/ls, a copy of touch */
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# decode\n");
	f->home = wt_home("esc-dec");
	f->outside = wt_outside_dir("esc-dec");
	char *sys = wd_asprintf("%s/sys", f->outside);
	char *bin = wd_asprintf("%s/sys/bin", f->outside);
	mkdir(sys, 0755);
	mkdir(bin, 0755);
	chmod(sys, 0755);
	chmod(bin, 0755);
	f->ls = wd_asprintf("%s/ls", bin);
	wt_copy_file("/usr/bin/touch", f->ls, 0755);
	free(sys);
	free(bin);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	wt_rmtree(f->home);
	wt_rmtree(f->outside);
	free(f->proj);
	free(f->home);
	free(f->db);
	free(f->outside);
	free(f->ls);
	free(f);
	return 0;
}

static bool exists(const char *dir, const char *name)
{
	char *p = wd_asprintf("%s/%s", dir, name);
	struct stat st;
	bool ok = lstat(p, &st) == 0;
	free(p);
	return ok;
}

static int count(const struct fx *f, const char *decision, const char *source, const char *summary,
		 const char *request)
{
	struct wt_audit_q q = {.decision = decision,
			       .source = source,
			       .summary_sub = summary,
			       .request_sub = request};
	return wt_audit_match(f->db, &q);
}

/* The agent's script: |first| (after the memo's ctimes aged), then
 * "ready" and a wait for "go", then |second|. */
static char *two_execs(const char *first, const char *second)
{
	return wd_asprintf(
		"sleep 2\n"
		"%s\n"
		": > ready\n"
		"i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
		"%s\n"
		"echo done\n",
		first, second);
}

typedef void (*host_step)(const struct fx *f);

/* Runs |text| as the agent (tier |tier|, options |extra| before "--"),
 * doing |step| on the host when the agent says "ready". */
static void run_with_step(const struct fx *f, const char *tier, const char *extra, const char *text,
			  host_step step, struct wt_result *r)
{
	wt_write(f->proj, "agent.sh", text);
	int out[2];
	assert_int_equal(pipe(out), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(out[0]);
		char *argv[] = {"run", "--tier",  (char *)tier, extra ? (char *)extra : "-q",
				"--",  "/bin/sh", "agent.sh",	NULL};
		struct wt_result cr;
		wt_wardenv(f->proj, argv, &cr);
		dprintf(out[1], "%d\n%s\n--err--\n%s", cr.status, cr.out, cr.err);
		_exit(0);
	}
	close(out[1]);
	for (int i = 0; i < 600 && !exists(f->proj, "ready"); i++)
		usleep(50 * 1000);
	assert_true(exists(f->proj, "ready"));
	if (step)
		step(f);
	wt_write(f->proj, "go", "");
	wd_autofree char *text_out = NULL;
	{
		struct wd_sb sb = {0};
		char buf[4096];
		ssize_t n;
		while ((n = read(out[0], buf, sizeof(buf))) > 0)
			wd_sb_add(&sb, buf, (size_t)n);
		text_out = wd_sb_steal(&sb);
	}
	close(out[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	*r = (struct wt_result){
		.status = atoi(text_out), .out = wd_strdup(text_out), .err = wd_strdup("")};
	print_message("%.3000s\n", text_out);
}

static void step_chmod_bin(const struct fx *f)
{
	char *bin = wd_asprintf("%s/sys/bin", f->outside);
	assert_int_equal(chmod(bin, 0777), 0);
	free(bin);
}

static void step_chmod_sys(const struct fx *f)
{
	char *sys = wd_asprintf("%s/sys", f->outside);
	assert_int_equal(chmod(sys, 0777), 0);
	free(sys);
}

static void step_move_into_project(const struct fx *f)
{
	char *bin = wd_asprintf("%s/sys/bin", f->outside);
	char *to = wd_asprintf("%s/bin", f->proj);
	assert_int_equal(rename(bin, to), 0);
	free(bin);
	free(to);
}

static void step_flip_link(const struct fx *f)
{
	char *link = wd_asprintf("%s/sys/link", f->outside);
	char *tmp = wd_asprintf("%s/sys/link.new", f->outside);
	assert_int_equal(symlink(f->proj, tmp), 0);
	assert_int_equal(rename(tmp, link), 0);
	free(link);
	free(tmp);
}

/* The host makes the program's directory (then, in the second run, the
 * one above it) writable by others between two execs. Before (a memo of
 * the walk up keyed on identity): the second exec took the fast path and
 * made m2. */
static void test_esc_decode_chmod_between_execs(void **state)
{
	struct fx *f = *state;
	host_step steps[] = {step_chmod_bin, step_chmod_sys};
	for (size_t i = 0; i < WD_ARRAY_SIZE(steps); i++) {
		char *first = wd_asprintf("%s m1; echo rc1=$?", f->ls);
		char *second = wd_asprintf("%s m2; echo rc2=$?", f->ls);
		char *text = two_execs(first, second);
		struct wt_result r;
		run_with_step(f, "passive", "--no-view", text, steps[i], &r);
		assert_non_null(strstr(r.out, "rc1=0"));
		assert_non_null(strstr(r.out, "done"));
		if (exists(f->proj, "m2"))
			fail_msg("ESCAPE FOUND: a program made writable by others ran as ls");
		assert_non_null(strstr(r.out, "rc2=126"));
		assert_int_equal(count(f, "allow", "fast_path", "ls m1", NULL), (int)i + 1);
		assert_int_equal(count(f, "allow", NULL, "ls m2", NULL), 0);
		assert_true(count(f, "deny", NULL, "ls m2", "writable by its group or by others") >=
			    1);
		wt_result_free(&r);
		char *sys = wd_asprintf("%s/sys", f->outside);
		char *bin = wd_asprintf("%s/sys/bin", f->outside);
		chmod(sys, 0755);
		chmod(bin, 0755);
		free(sys);
		free(bin);
		char *m1 = wd_asprintf("%s/m1", f->proj);
		unlink(m1);
		free(m1);
		char *ready = wd_asprintf("%s/ready", f->proj), *go = wd_asprintf("%s/go", f->proj);
		unlink(ready);
		unlink(go);
		free(ready);
		free(go);
		free(text);
		free(first);
		free(second);
	}
}

/* The agent itself makes the directory writable by others (its uid owns
 * it; the aggressive tier lets chmod run). Before: the second exec took
 * the fast path as ls. */
static void test_esc_decode_agent_chmod(void **state)
{
	struct fx *f = *state;
	char *bin = wd_asprintf("%s/sys/bin", f->outside);
	char *first = wd_asprintf("%s m1; echo rc1=$?", f->ls);
	char *second = wd_asprintf("chmod 777 %s; echo ch=$?\n%s m2; echo rc2=$?", bin, f->ls);
	char *text = two_execs(first, second);
	struct wt_result r;
	run_with_step(f, "aggressive", "--no-view", text, NULL, &r);
	assert_non_null(strstr(r.out, "done"));
	struct stat st;
	assert_int_equal(stat(bin, &st), 0);
	bool changed = (st.st_mode & 07777) == 0777;
	chmod(bin, 0755);
	wt_result_free(&r);
	free(text);
	free(first);
	free(second);
	free(bin);
	if (!changed)
		skip(); /* the agent could not chmod here: nothing to test */
	assert_int_equal(count(f, "allow", "fast_path", "ls m1", NULL), 1);
	assert_int_equal(count(f, "allow", "fast_path", "ls m2", NULL), 0);
	assert_int_equal(count(f, "allow", "tier", "ls m2", "writable by its group or by others"),
			 1);
}

/* The program's directory moved into the project between two execs: the
 * same directory, now where the agent can write. Before: the second exec
 * took the fast path. */
static void test_esc_decode_dir_moved_into_project(void **state)
{
	struct fx *f = *state;
	char *first = wd_asprintf("%s m1; echo rc1=$?", f->ls);
	char *second = wd_strdup("./bin/ls m2; echo rc2=$?");
	char *text = two_execs(first, second);
	struct wt_result r;
	run_with_step(f, "passive", "--no-view", text, step_move_into_project, &r);
	assert_non_null(strstr(r.out, "rc1=0"));
	assert_non_null(strstr(r.out, "done"));
	if (exists(f->proj, "m2"))
		fail_msg("ESCAPE FOUND: a directory moved into the project kept its verdict");
	assert_non_null(strstr(r.out, "rc2=126"));
	assert_int_equal(count(f, "allow", NULL, "ls m2", NULL), 0);
	assert_true(count(f, "deny", NULL, "ls m2", "written where the agent can write") >= 1);
	wt_result_free(&r);
	free(text);
	free(first);
	free(second);
}

/* A symlink on the way, in a directory outside the project, flipped from
 * the system-like directory to the project (where the agent put its own
 * ls) between two execs of the same path. */
static void test_esc_decode_symlink_flipped(void **state)
{
	struct fx *f = *state;
	char *link = wd_asprintf("%s/sys/link", f->outside);
	assert_int_equal(symlink("bin", link), 0);
	char *own = wd_asprintf("%s/ls", f->proj);
	wt_copy_file("/usr/bin/touch", own, 0755);
	free(own);
	char *first = wd_asprintf("%s/ls m1; echo rc1=$?", link);
	char *second = wd_asprintf("%s/ls m2; echo rc2=$?", link);
	char *text = two_execs(first, second);
	struct wt_result r;
	run_with_step(f, "passive", "--no-view", text, step_flip_link, &r);
	assert_non_null(strstr(r.out, "rc1=0"));
	if (exists(f->proj, "m2"))
		fail_msg("ESCAPE FOUND: a flipped symlink kept the verdict of its old target");
	assert_non_null(strstr(r.out, "rc2=126"));
	assert_true(count(f, "deny", NULL, "ls m2", "written where the agent can write") >= 1);
	wt_result_free(&r);
	free(text);
	free(first);
	free(second);
	free(link);
}

int main(void)
{
	wt_require_sandbox();
	if (geteuid() != 0) {
		fprintf(stderr, "test_esc_decode needs root\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_esc_decode_chmod_between_execs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_decode_agent_chmod, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_decode_dir_moved_into_project, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_decode_symlink_flipped, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
