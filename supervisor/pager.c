/*
 * pager.c: what `warden audit` and `warden sessions` share for a person at
 * a terminal: paging through $PAGER (or less -FRX), the terminal's width,
 * cutting a line to it, and strict parsing of a count option.
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Whether |prog| is an executable found on $PATH. */
static bool on_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	wd_autofree char *copy = wd_strdup(path);
	char *save = NULL;
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		wd_autofree char *p = wd_asprintf("%s/%s", *d ? d : ".", prog);
		if (access(p, X_OK) == 0)
			return true;
	}
	return false;
}

/* The pager command: $PAGER when set (empty or "cat": none), else less with
 * -F (quit when it fits one screen), -R (pass the table's "…" and UTF-8
 * through), -X (leave the text on the screen). NULL: no pager. */
static const char *pager_command(void)
{
	const char *p = getenv("PAGER");
	if (p)
		return *p && strcmp(p, "cat") != 0 ? p : NULL;
	return on_path("less") ? "less -FRX" : NULL;
}

void sup_pager_start(struct sup_pager *pg, bool allow)
{
	memset(pg, 0, sizeof(*pg));
	if (!isatty(STDOUT_FILENO))
		return;
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		pg->width = ws.ws_col;
	const char *cmd = allow ? pager_command() : NULL;
	if (!cmd)
		return;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return; /* print straight to the terminal */
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		if (dup2(p[0], STDIN_FILENO) < 0)
			_exit(127);
		/* As git does: less's options for a pager named without any. */
		setenv("LESS", "FRX", 0);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	/* A person who quits the pager early ends the output: writes then fail
	 * with EPIPE, which the caller does not report. */
	signal(SIGPIPE, SIG_IGN);
	/* Ctrl-C at the pager is the pager's (less ignores it while it
	 * waits for input): warden must not die under it and hand the
	 * terminal back to the shell while the pager still runs. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	if (dup2(p[1], STDOUT_FILENO) < 0) {
		close(p[1]);
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return;
	}
	close(p[1]);
	pg->pid = pid;
}

void sup_pager_end(struct sup_pager *pg)
{
	if (pg->pid <= 0)
		return;
	fflush(stdout);
	/* The pager sees the end of its input, shows the rest and exits when
	 * the person quits it. */
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, STDOUT_FILENO);
		close(devnull);
	} else {
		close(STDOUT_FILENO);
	}
	while (waitpid(pg->pid, NULL, 0) < 0 && errno == EINTR)
		;
	pg->pid = 0;
}

int sup_parse_count(const char *opt, const char *s, size_t *out)
{
	char *end = NULL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *s == '-' || *s == '+' || *end || errno || v == 0 || v > 1000000000ULL) {
		wd_err("%s: \"%s\" is not a count of rows (a whole number from 1 to 1000000000)",
		       opt, s);
		return -EINVAL;
	}
	*out = (size_t)v;
	return 0;
}

char *sup_fit_line(const char *s, size_t width)
{
	wd_autofree char *safe = wd_sanitize(s ? s : "");
	if (width == 0)
		return wd_steal_pointer(&safe);
	/* One column per code point (the start bytes of UTF-8). */
	size_t cols = 0, i = 0, cut = 0;
	for (; safe[i]; i++) {
		if (((unsigned char)safe[i] & 0xc0) == 0x80)
			continue;
		if (cols == width - 1)
			cut = i;
		if (++cols > width)
			break;
	}
	if (cols <= width)
		return wd_steal_pointer(&safe);
	return wd_asprintf("%.*s\xe2\x80\xa6", (int)cut, safe);
}
