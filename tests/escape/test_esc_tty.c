/*
 * test_esc_tty: the agent's terminal under the sandbox's /dev/pts. The
 * agent (tests/escape/esc_tty.c, plain syscalls, under the real `warden
 * run` on a pseudo-terminal) must be able to name its own terminal
 * (ttyname, `tty`, GPG_TTY=$(tty)) and reach no other pty of the host:
 * not by the host pty's name, not by making ptys of its own until one has
 * that number, not through the descriptors init keeps.
 *
 * The same holds without root (a user namespace, where the sandbox's /dev
 * is otherwise the host's): there the host's other pty belongs to the
 * user, as the user's other terminal windows do.
 *
 * A test that finds a real escape fails with "ESCAPE FOUND: ...".
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
#include <grp.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define MARK "WARDEN_TTY_ESCAPE_a41c9e"

static char *agent(void)
{
	const char *b = getenv("WARDEN_BUILD_DIR");
	return wd_asprintf("%s/tests/escape/esc_tty", b ? b : ".");
}

/* A pty of the host that is not the agent's: the master, its number. */
static int host_pty(unsigned *index, int *slave)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	assert_true(m >= 0);
	assert_int_equal(grantpt(m), 0);
	assert_int_equal(unlockpt(m), 0);
	assert_int_equal(ioctl(m, TIOCGPTN, index), 0);
	/* Open on the host, as another session's terminal is: what reaches
	 * it would be read on its master. */
	*slave = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(*slave >= 0);
	return m;
}

/* The agent's report, run on a terminal of its own (the pty's master is
 * returned in *master for its number). */
static char *run_agent(const struct wt_fx *f, unsigned other, unsigned *own)
{
	char num[16];
	snprintf(num, sizeof(num), "%u", other);
	char *prog = agent();
	char *argv[] = {"run", "--tier", "aggressive", "--", prog, num, NULL};
	int master;
	pid_t w = wt_warden_pty(f->proj, argv, &master);
	assert_int_equal(ioctl(master, TIOCGPTN, own), 0);
	char *acc = NULL;
	bool end = wt_expect(master, "END", 20000, &acc);
	int status = 0;
	for (int i = 0; i < 500 && waitpid(w, &status, WNOHANG) == 0; i++)
		usleep(10000);
	if (waitpid(w, &status, WNOHANG) == 0) {
		kill(w, SIGKILL);
		waitpid(w, &status, 0);
	}
	close(master);
	free(prog);
	if (!end)
		print_message("the agent said: %s\n", acc ? acc : "");
	assert_true(end);
	return acc;
}

static bool has_line(const char *out, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = out; (p = strstr(p, line)); p += n)
		if ((p == out || p[-1] == '\n') && (p[n] == '\r' || p[n] == '\n'))
			return true;
	return false;
}

/* tty, GPG_TTY=$(tty): the agent's terminal has its host name, and that
 * name opens that terminal. */
static void test_esc_tty_own_terminal_is_named(void **state)
{
	struct wt_fx *f = *state;
	unsigned other, own;
	int slave;
	int m = host_pty(&other, &slave);
	char *out = run_agent(f, other, &own);
	char *want = wd_asprintf("TTYNAME=/dev/pts/%u", own);
	if (!has_line(out, want))
		print_message("the agent said: %s\n", out);
	assert_true(has_line(out, want));
	assert_true(has_line(out, "OWN=same"));
	free(want);
	free(out);
	close(slave);
	close(m);
}

/* /dev/pts shows the private ptmx and the agent's own terminal only; the
 * host's other pty is not reachable by its name, by a pty of the
 * sandbox's own made with its number, or through init's descriptors. */
static void test_esc_tty_no_other_host_pty(void **state)
{
	struct wt_fx *f = *state;
	unsigned other, own;
	int slave;
	int m = host_pty(&other, &slave);
	char *out = run_agent(f, other, &own);
	char *pts = wd_asprintf("PTS=%u,ptmx", own); /* sorted as strings: digits first */
	char *host = wd_asprintf("HOST /dev/pts/%u=opened", other);
	if (!has_line(out, pts) || strstr(out, host) || strstr(out, "INIT 4=opened"))
		print_message("the agent said: %s\n", out);
	if (strstr(out, host))
		fail_msg("ESCAPE FOUND: the agent opened another pty of the host (%s)", host);
	for (int i = 3; i <= 6; i++) {
		char line[32];
		snprintf(line, sizeof(line), "INIT %d=opened", i);
		if (strstr(out, line))
			fail_msg("ESCAPE FOUND: the agent opened init's descriptor %d", i);
	}
	assert_true(has_line(out, pts));
	/* Its own pty with the host pty's number is its own. */
	assert_true(has_line(out, "PRIVATE=wrote") || own == other);
	char buf[4096];
	ssize_t n = read(m, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (strstr(buf, MARK))
		fail_msg("ESCAPE FOUND: the agent wrote to another pty of the host");
	free(host);
	free(pts);
	free(out);
	close(slave);
	close(m);
}

#define NOBODY 65534

/* A directory only root can change, holding copies of warden and the
 * agent that nobody can run (warden refuses to run from a place the agent
 * could write). Caller frees and removes. */
static char *nobody_bin(void)
{
	char t[] = "/tmp/warden-esc-ttybin-XXXXXX";
	char *dir = wd_strdup(mkdtemp(t));
	assert_int_equal(chmod(dir, 0755), 0);
	const char *src[] = {wt_bin(), NULL};
	char *prog = agent();
	src[1] = prog;
	const char *dst[] = {"warden", "esc_tty"};
	for (size_t i = 0; i < 2; i++) {
		char *text = NULL;
		size_t len = 0;
		assert_int_equal(wd_read_file(src[i], 64 << 20, &text, &len), 0);
		char *to = wd_asprintf("%s/%s", dir, dst[i]);
		int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
		assert_true(fd >= 0);
		assert_int_equal(wd_write_all(fd, text, len), 0);
		close(fd);
		free(to);
		free(text);
	}
	free(prog);
	return dir;
}

/* The user's other terminal: a pty of the host that nobody owns. */
static void test_esc_tty_no_other_host_pty_userns(void **state)
{
	struct wt_fx *f = *state;
	unsigned other, own;
	int slave;
	int m = host_pty(&other, &slave);
	assert_int_equal(fchown(slave, NOBODY, (gid_t)-1), 0);
	assert_int_equal(chown(f->proj, NOBODY, NOBODY), 0);
	char *bin = nobody_bin();
	char *warden = wd_asprintf("%s/warden", bin), *prog = wd_asprintf("%s/esc_tty", bin);
	char num[16];
	snprintf(num, sizeof(num), "%u", other);
	int master;
	pid_t w = forkpty(&master, NULL, NULL, NULL);
	assert_true(w >= 0);
	if (w == 0) {
		/* The terminal is the user's, as a login gives it. */
		if (fchown(0, NOBODY, (gid_t)-1) < 0 || chdir(f->proj) < 0 ||
		    setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) < 0)
			_exit(126);
		/* The project is this user's home here: --force says so. */
		setenv("HOME", f->proj, 1);
		execl(warden, warden, "run", "--force", "--no-view", "--tier", "aggressive", "--",
		      prog, num, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(ioctl(master, TIOCGPTN, &own), 0);
	char *out = NULL;
	bool end = wt_expect(master, "END", 20000, &out);
	int status = 0;
	for (int i = 0; i < 500 && waitpid(w, &status, WNOHANG) == 0; i++)
		usleep(10000);
	if (waitpid(w, &status, WNOHANG) == 0) {
		kill(w, SIGKILL);
		waitpid(w, &status, 0);
	}
	close(master);
	if (!end)
		print_message("the agent said: %s\n", out ? out : "");
	assert_true(end);
	char *host = wd_asprintf("HOST /dev/pts/%u=opened", other);
	char *pts = wd_asprintf("PTS=%u,ptmx", own);
	char *name = wd_asprintf("TTYNAME=/dev/pts/%u", own);
	if (strstr(out, host) || !has_line(out, pts) || !has_line(out, name))
		print_message("the agent said: %s\n", out);
	if (strstr(out, host))
		fail_msg("ESCAPE FOUND: the agent opened the user's other terminal (%s)", host);
	char buf[4096];
	ssize_t n = read(m, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (strstr(buf, MARK))
		fail_msg("ESCAPE FOUND: the agent wrote to the user's other terminal");
	assert_true(has_line(out, pts));
	assert_true(has_line(out, name));
	assert_true(has_line(out, "OWN=same"));
	free(name);
	free(pts);
	free(host);
	free(out);
	unlink(warden);
	unlink(prog);
	rmdir(bin);
	free(prog);
	free(warden);
	free(bin);
	close(slave);
	close(m);
}

int main(void)
{
	wt_require_sandbox();
	if (geteuid() != 0) {
		/* Without root the sandbox keeps the host's /dev. */
		print_message("skipped: the private /dev needs root\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_esc_tty_own_terminal_is_named, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_esc_tty_no_other_host_pty, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_esc_tty_no_other_host_pty_userns, wt_fx_setup,
						wt_fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
