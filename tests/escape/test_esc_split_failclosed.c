/*
 * test_esc_split_failclosed: the split view fails closed when the
 * supervisor dies (docs/view-plan.md, section 6, "A fault test"), under the
 * real `warden run --view split --tier standard --prompt desk` as root.
 *
 * The kernel allows every pending permission event of a fanotify group
 * when the LAST descriptor of the group closes. The supervisor holds the
 * group; its guardian (sandbox/guard.c) holds a second one until every
 * task of the sandbox is gone. The attack: the user makes src/.env (src is
 * a fast subtree, watched by fanotify) from outside after the start; the
 * agent's processes open it and wait for a person at the desk, who never
 * answers; the supervisor is SIGKILLed. Those processes are children the
 * agent forked WITHOUT exec: the supervisor attaches to a process at its
 * exec, so they are not traced and do not die with it through
 * PTRACE_O_EXITKILL; only the end of the sandbox (init's death, which
 * kills its PID namespace) stops them. Without the guardian, the group
 * closes as the supervisor exits, a moment before init's death signal is
 * sent (the file table is released before exit_notify), and an open that
 * was waiting returns the file in that moment. Each child that gets the
 * file appends a line to src/hits (a fast subtree, read from outside
 * through the backing directory) with a descriptor it already holds.
 *
 * What must hold in every round: no open succeeded (src/hits stays empty,
 * the secret is never printed) and every process of the sandbox is gone.
 * Without the guardian (sbx_guard_start not called in run.c) the escape
 * does not come every round: measured on a 2-CPU machine under load, the
 * first round with a hit was round 1 to 8 in 16 tries (16 hits in 55
 * rounds, about 0.3 a round; when a round hits, all 12 children usually
 * get the file). 25 rounds miss it with a chance of about 0.7^25, 2e-4,
 * and take about 30 s. WARDEN_SPLITFC_ROUNDS overrides the number for a
 * measurement.
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECRET "WARDEN_SPLITFC_SECRET_7c2a91"
/* The agent program's name, as /proc/PID/stat shows it. */
#define AGENT_COMM "esc_splitfc"
/* Rounds, and children (waiting opens) per round. */
#define ROUNDS	     25
#define CHILDREN     12
#define GROUP_ROUNDS 10

struct fx {
	char *proj;
};

static int setup(void **state)
{
	wt_require_sandbox();
	if (geteuid() != 0)
		skip(); /* fanotify permission events (the split view) need root */
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	wt_write(f->proj, "README.md", "# split view, fail closed\n");
	wt_write(f->proj, "src/a.txt", "plain a\n");
	wt_write(f->proj, "src/hits", "");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	free(f->proj);
	free(f);
	return 0;
}

static char *agent(void)
{
	const char *b = getenv("WARDEN_BUILD_DIR");
	return wd_asprintf("%s/tests/escape/esc_splitfc", b ? b : ".");
}

/* How many live (not zombie) processes run the agent program. */
static int agents_alive(void)
{
	int n = 0;
	DIR *d = opendir("/proc");
	if (!d)
		fail_msg("/proc: %s", strerror(errno));
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char path[300], buf[512];
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		const char *open_paren = strchr(buf, '(');
		const char *close_paren = strrchr(buf, ')');
		if (!open_paren || !close_paren || close_paren[1] != ' ')
			continue;
		size_t len = (size_t)(close_paren - open_paren - 1);
		if (len == strlen(AGENT_COMM) && memcmp(open_paren + 1, AGENT_COMM, len) == 0 &&
		    close_paren[2] != 'Z' && close_paren[2] != 'X')
			n++;
	}
	closedir(d);
	return n;
}

/* How many requests of session |sid| wait at the desk. */
static int desk_count(const char *sid)
{
	struct wt_result r;
	wt_warden(NULL, &r, "approvals", "--session", sid, "--format", "json", NULL);
	int n = 0;
	for (const char *p = r.out; r.status == 0 && p && (p = strstr(p, "{\"id\":")); p++)
		n++;
	wt_result_free(&r);
	return n;
}

static bool wait_out(const struct wt_bg *bg, const char *want, int ms)
{
	for (int waited = 0; waited < ms; waited += 20) {
		wd_autofree char *out = wt_bg_out(bg);
		if (strstr(out, want))
			return true;
		usleep(20000);
	}
	wd_autofree char *out = wt_bg_out(bg);
	wd_autofree char *err = wt_bg_err(bg);
	print_message("waited for \"%s\"\nout: %s\nerr: %s\n", want, out, err);
	return false;
}

/* One round; fails the test when the invariant did not hold. With
 * |whole_group|, the signal goes to the supervisor's process group (as a
 * terminal's ^C or `kill -9 -PGID` would), not to its pid only. */
static void one_round(const struct fx *f, int round, bool whole_group)
{
	wd_autofree char *env = wd_asprintf("%s/src/.env", f->proj);
	wd_autofree char *go = wd_asprintf("%s/go1", f->proj);
	unlink(env);
	unlink(go);
	wd_autofree char *prog = agent();
	char nkids[16];
	snprintf(nkids, sizeof(nkids), "%d", CHILDREN);
	char *argv[] = {"run",	    "--view",	"split", "--tier",
			"standard", "--prompt", "desk",	 "--approval-timeout",
			"10m",	    "--",	prog,	 "src",
			".env",	    "src/hits", nkids,	 NULL};
	struct wt_bg bg;
	wt_warden_bg(f->proj, argv, &bg);
	wd_autofree char *sid = wt_bg_session(&bg, 10000);
	assert_non_null(sid);
	assert_true(wait_out(&bg, "STEP 1\n", 20000));
	/* The user makes the secret from outside, through the backing
	 * directory: a new inode in a fast subtree, never marked. */
	wt_write(f->proj, "src/.env", "TOKEN=" SECRET "\n");
	wt_write(f->proj, "go1", "");
	char forked[32];
	snprintf(forked, sizeof(forked), "FORKED %d\n", CHILDREN);
	assert_true(wait_out(&bg, forked, 20000));
	/* Every child's open waits for a person at the desk. */
	int waiting = 0;
	for (int i = 0; i < 400 && waiting < CHILDREN; i++) {
		waiting = desk_count(sid);
		if (waiting < CHILDREN)
			usleep(25000);
	}
	if (waiting < CHILDREN)
		fail_msg("round %d: %d of %d opens wait at the desk", round, waiting, CHILDREN);
	assert_true(agents_alive() >= CHILDREN);

	/* wt_warden_bg made warden a session (and process group) leader. */
	kill(whole_group ? -bg.pid : bg.pid, SIGKILL);
	struct wt_result res = {0};
	wt_bg_wait(&bg, 20000, &res);

	/* Every process of the sandbox goes: the guardian kills init, whose
	 * exit kills its PID namespace. */
	int alive = 0;
	for (int i = 0; i < 500 && (alive = agents_alive()) > 0; i++)
		usleep(10000);
	if (alive > 0)
		fail_msg("round %d: %d processes of the sandbox outlived the supervisor", round,
			 alive);

	wd_autofree char *hits_path = wd_asprintf("%s/src/hits", f->proj);
	wd_autofree char *hits = wt_slurp(hits_path);
	if (hits && hits[0])
		fail_msg("ESCAPE FOUND: round %d: an open of src/.env succeeded after the "
			 "supervisor's death:\n%s",
			 round, hits);
	if (res.out && strstr(res.out, SECRET))
		fail_msg("ESCAPE FOUND: round %d: the agent printed the secret", round);
	wt_result_free(&res);
}

static int rounds(int dflt)
{
	const char *o = getenv("WARDEN_SPLITFC_ROUNDS");
	return o && atoi(o) > 0 ? atoi(o) : dflt;
}

static void test_split_sigkill_supervisor_pending_open(void **state)
{
	struct fx *f = *state;
	for (int i = 1, n = rounds(ROUNDS); i <= n; i++)
		one_round(f, i, false);
}

/*
 * The same with SIGKILL sent to the supervisor's whole process group: the
 * guardian is a fork of the supervisor and would be in that group, but it
 * makes a session of its own (guard.c), so it survives to hold the group
 * until the sandbox is gone. With the guardian's setsid removed (guardian
 * killed with the supervisor), the window is much narrower than in the
 * first test without a guardian: measured, 4 hits in 126 rounds (about
 * 0.03 a round; first hit at rounds 8, 13, 20, 25, none in two runs of
 * 30). GROUP_ROUNDS (10) therefore catches that mistake in only about one
 * run of four; catching it reliably would take some 100 rounds (two
 * minutes), too long for the suite. Without any guardian, all 4 runs of 10
 * rounds passed: the same signal reaches the sandbox's init, which is in the supervisor's
 * process group, so the namespace is killed as the group closes. It stays
 * as a check of the invariant for that signal, not as a detector.
 */
static void test_split_sigkill_supervisor_group_pending_open(void **state)
{
	struct fx *f = *state;
	for (int i = 1, n = rounds(GROUP_ROUNDS); i <= n; i++)
		one_round(f, i, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_split_sigkill_supervisor_pending_open, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_split_sigkill_supervisor_group_pending_open,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
