/*
 * wt.c: see wt.h.
 */
#include "wt.h"

#include "common.h"
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/seccomp.h>

const char *wt_bin(void)
{
	const char *b = getenv("WARDEN_BIN");
	if (!b) {
		fprintf(stderr, "WARDEN_BIN is not set: run the tests with ctest\n");
		exit(1);
	}
	return b;
}

char *wt_helper(const char *name)
{
	const char *d = getenv("WARDEN_HELPER_DIR");
	return wd_asprintf("%s/%s", d ? d : ".", name);
}

void wt_require_sandbox(void)
{
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0) {
		printf("SKIP: this kernel has no seccomp user notification\n");
		exit(77);
	}
}

char *wt_project(void)
{
	char tmpl[] = "/tmp/warden-test-XXXXXX";
	char *d = mkdtemp(tmpl);
	if (!d) {
		perror("mkdtemp");
		exit(1);
	}
	return wd_strdup(d);
}

static char *made_dir(char *tmpl, mode_t mode)
{
	char *d = mkdtemp(tmpl);
	if (!d || chmod(d, mode) < 0) {
		perror(tmpl);
		exit(1);
	}
	return wd_strdup(d);
}

char *wt_home(const char *tag)
{
	char *tmpl = wd_asprintf("/tmp/warden-%s-home-XXXXXX", tag);
	char *d = made_dir(tmpl, 0700);
	free(tmpl);
	setenv("HOME", d, 1);
	return d;
}

char *wt_outside_dir(const char *tag)
{
	char *tmpl = wd_asprintf("/var/cache/warden-%s-XXXXXX", tag);
	char *d = made_dir(tmpl, 0755);
	free(tmpl);
	return d;
}

int wt_count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		perror("/proc/self/fd");
		exit(1);
	}
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

void wt_write(const char *dir, const char *name, const char *text)
{
	char *path = wd_asprintf("%s/%s", dir, name);
	for (char *s = path + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	free(path);
}

void wt_rmtree(const char *dir)
{
	pid_t pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", "--", dir, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
}

void wt_result_free(struct wt_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static char *slurp_fd(int fd)
{
	struct wd_sb sb = {0};
	char buf[4096];
	lseek(fd, 0, SEEK_SET);
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		wd_sb_add(&sb, buf, (size_t)n);
	return wd_sb_steal(&sb);
}

int wt_capture_fd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd >= 0 && fcntl(fd, F_SETFL, O_APPEND) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* warden's argv: the binary, then |argv|. A run of a source tree under a
 * temporary directory (a clone in /tmp, as CI may make) shares that tree
 * into the session's private /tmp, read-only, so that the test programs
 * and scripts the agent runs from it are there. Caller frees (only the
 * array). */
static char **wt_argv(char *const argv[], size_t n)
{
	static const char *const temps[] = {"/tmp", "/var/tmp", "/dev/shm"};
	const char *src = getenv("WARDEN_SOURCE_DIR");
	bool share = false;
	for (size_t i = 0; src && n > 0 && strcmp(argv[0], "run") == 0 && i < 3; i++)
		share |= wd_path_within(src, temps[i]) && strcmp(src, temps[i]) != 0;
	char **av = wd_calloc(n + 4, sizeof(char *));
	size_t k = 0;
	av[k++] = (char *)wt_bin();
	for (size_t i = 0; i < n; i++) {
		av[k++] = argv[i];
		if (i == 0 && share) {
			av[k++] = "--share-tmp";
			av[k++] = (char *)src;
		}
	}
	return av;
}

void wt_wardenv_prep(const char *cwd, char *const argv[], wt_prep_fn prep, const void *arg,
		     int timeout_ms, struct wt_result *res)
{
	int out = wt_capture_fd("out"), err = wt_capture_fd("err");
	size_t n = 0;
	while (argv[n])
		n++;
	char **av = wt_argv(argv, n);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(out, 1);
		dup2(err, 2);
		if (cwd && chdir(cwd) < 0)
			_exit(126);
		setsid(); /* no controlling terminal: --prompt defaults to none */
		int rc = prep ? prep(arg) : 0;
		if (rc < 0) {
			dprintf(2, "test set-up failed: %s\n", strerror(-rc));
			_exit(99);
		}
		execv(av[0], av);
		_exit(127);
	}
	int status = 0;
	bool exited = timeout_ms <= 0;
	if (exited) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	} else {
		int64_t until = wd_now_mono_ns() + (int64_t)timeout_ms * 1000000;
		while (!exited && wd_now_mono_ns() < until) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			exited = w == pid || (w < 0 && errno != EINTR);
			if (!exited)
				usleep(10000);
		}
		if (!exited) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
		}
	}
	res->status = !exited		  ? -1
		      : WIFEXITED(status) ? WEXITSTATUS(status)
					  : 128 + WTERMSIG(status);
	res->out = slurp_fd(out);
	res->err = slurp_fd(err);
	close(out);
	close(err);
	free(av);
}

void wt_wardenv(const char *cwd, char *const argv[], struct wt_result *res)
{
	wt_wardenv_prep(cwd, argv, NULL, NULL, 0, res);
}

void wt_warden(const char *cwd, struct wt_result *res, ...)
{
	char *argv[128];
	size_t n = 0;
	va_list ap;
	va_start(ap, res);
	while (n < 127 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	wt_wardenv(cwd, argv, res);
}

pid_t wt_warden_pty(const char *cwd, char *const argv[], int *master)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0) {
		perror("posix_openpt");
		exit(1);
	}
	char *slave = ptsname(m);
	size_t n = 0;
	while (argv[n])
		n++;
	char **av = wt_argv(argv, n);
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		int s = open(slave, O_RDWR);
		if (s < 0)
			_exit(126);
		ioctl(s, TIOCSCTTY, 0);
		dup2(s, 0);
		dup2(s, 1);
		dup2(s, 2);
		if (s > 2)
			close(s);
		if (cwd && chdir(cwd) < 0)
			_exit(126);
		execv(av[0], av);
		_exit(127);
	}
	free(av);
	*master = m;
	return pid;
}

bool wt_expect(int fd, const char *needle, int ms, char **acc)
{
	struct wd_sb sb = {0};
	if (*acc)
		wd_sb_puts(&sb, *acc);
	free(*acc);
	int64_t until = wd_now_mono_ns() + (int64_t)ms * 1000000;
	bool found = sb.buf && strstr(sb.buf, needle);
	while (!found) {
		int64_t left = (until - wd_now_mono_ns()) / 1000000;
		if (left <= 0)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		char buf[1024];
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r <= 0)
			break;
		wd_sb_add(&sb, buf, (size_t)r);
		found = strstr(sb.buf, needle) != NULL;
	}
	*acc = wd_sb_steal(&sb);
	return found;
}

struct count_arg {
	const char *decision, *source, *summary_sub, *reason_sub;
	int n;
};

static int count_cb(const struct sto_row *row, void *arg)
{
	struct count_arg *c = arg;
	if (c->decision && strcmp(row->decision ? row->decision : "", c->decision) != 0)
		return 0;
	if (c->source && strcmp(row->source ? row->source : "", c->source) != 0)
		return 0;
	const char *sum = row->summary ? row->summary : "";
	if (c->summary_sub && c->summary_sub[0] == '=' && strcmp(sum, c->summary_sub + 1) != 0)
		return 0;
	if (c->summary_sub && c->summary_sub[0] != '=' && !strstr(sum, c->summary_sub))
		return 0;
	if (c->reason_sub && !strstr(row->reason ? row->reason : "", c->reason_sub))
		return 0;
	c->n++;
	return 0;
}

int wt_audit_count(const char *db, const char *decision, const char *source,
		   const char *summary_sub, const char *reason_sub)
{
	struct sto_db *d = NULL;
	char *err = NULL;
	if (sto_open(db, &d, &err) < 0) {
		fprintf(stderr, "audit %s: %s\n", db, err ? err : "cannot open");
		free(err);
		return -1;
	}
	struct count_arg c = {decision, source, summary_sub, reason_sub, 0};
	struct sto_filter f = {0};
	sto_query(d, &f, count_cb, &c, NULL);
	sto_close(d);
	return c.n;
}

int wt_audit_rows(const char *db)
{
	return wt_audit_count(db, NULL, NULL, NULL, NULL);
}

void wt_warden_bg(const char *cwd, char *const argv[], struct wt_bg *bg)
{
	bg->out = wt_capture_fd("out");
	bg->err = wt_capture_fd("err");
	size_t n = 0;
	while (argv[n])
		n++;
	char **av = wt_argv(argv, n);
	bg->pid = fork();
	if (bg->pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(bg->out, 1);
		dup2(bg->err, 2);
		if (cwd && chdir(cwd) < 0)
			_exit(126);
		setsid();
		execv(av[0], av);
		_exit(127);
	}
	free(av);
}

/* Reads a capture without moving the offset the writer shares. */
static char *pslurp(int fd)
{
	struct wd_sb sb = {0};
	char buf[4096];
	off_t off = 0;
	ssize_t n;
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		wd_sb_add(&sb, buf, (size_t)n);
		off += n;
	}
	return wd_sb_steal(&sb);
}

char *wt_bg_out(const struct wt_bg *bg)
{
	return pslurp(bg->out);
}

char *wt_bg_err(const struct wt_bg *bg)
{
	return pslurp(bg->err);
}

bool wt_bg_expect_err(const struct wt_bg *bg, const char *needle, int ms)
{
	int64_t until = wd_now_mono_ns() + (int64_t)ms * 1000000;
	for (;;) {
		char *e = pslurp(bg->err);
		bool found = strstr(e, needle) != NULL;
		free(e);
		if (found)
			return true;
		if (wd_now_mono_ns() >= until)
			return false;
		usleep(20000);
	}
}

char *wt_bg_session(const struct wt_bg *bg, int ms)
{
	static const char tag[] = "warden: session ";
	if (!wt_bg_expect_err(bg, tag, ms))
		return NULL;
	char *e = pslurp(bg->err);
	const char *s = strstr(e, tag) + strlen(tag);
	size_t len = strcspn(s, " \n");
	char *id = len ? wd_asprintf("%.*s", (int)len, s) : NULL;
	free(e);
	return id;
}

bool wt_bg_wait(struct wt_bg *bg, int ms, struct wt_result *res)
{
	int64_t until = wd_now_mono_ns() + (int64_t)ms * 1000000;
	int status = 0;
	bool exited = false;
	while (bg->pid > 0) {
		pid_t p = waitpid(bg->pid, &status, WNOHANG);
		if (p == bg->pid || (p < 0 && errno != EINTR)) {
			exited = p == bg->pid;
			break;
		}
		if (wd_now_mono_ns() >= until) {
			kill(bg->pid, SIGKILL);
			while (waitpid(bg->pid, &status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		usleep(20000);
	}
	bg->pid = 0;
	res->status = !exited		  ? -1
		      : WIFEXITED(status) ? WEXITSTATUS(status)
					  : 128 + WTERMSIG(status);
	res->out = pslurp(bg->out);
	res->err = pslurp(bg->err);
	close(bg->out);
	close(bg->err);
	bg->out = bg->err = -1;
	return exited;
}

struct match_arg {
	const struct wt_audit_q *q;
	int n;
};

static bool eq_or_null(const char *want, const char *have)
{
	return !want || strcmp(have ? have : "", want) == 0;
}

static int match_cb(const struct sto_row *row, void *arg)
{
	struct match_arg *m = arg;
	const struct wt_audit_q *q = m->q;
	if (!eq_or_null(q->decision, row->decision) || !eq_or_null(q->source, row->source) ||
	    !eq_or_null(q->decided_by, row->decided_by) || !eq_or_null(q->session, row->session))
		return 0;
	const char *sum = row->summary ? row->summary : "";
	if (q->summary_sub && q->summary_sub[0] == '=' && strcmp(sum, q->summary_sub + 1) != 0)
		return 0;
	if (q->summary_sub && q->summary_sub[0] != '=' && !strstr(sum, q->summary_sub))
		return 0;
	if (q->reason_sub && !strstr(row->reason ? row->reason : "", q->reason_sub))
		return 0;
	if (q->note_sub && (!row->note || !strstr(row->note, q->note_sub)))
		return 0;
	if (q->request_sub && (!row->request || !strstr(row->request, q->request_sub)))
		return 0;
	m->n++;
	return 0;
}

int wt_audit_match(const char *db, const struct wt_audit_q *q)
{
	struct sto_db *d = NULL;
	char *err = NULL;
	if (sto_open(db, &d, &err) < 0) {
		fprintf(stderr, "audit %s: %s\n", db, err ? err : "cannot open");
		free(err);
		return -1;
	}
	struct match_arg m = {q, 0};
	struct sto_filter f = {0};
	sto_query(d, &f, match_cb, &m, NULL);
	sto_close(d);
	return m.n;
}

int wt_fx_setup(void **state)
{
	struct wt_fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# a project\n");
	*state = f;
	return 0;
}

int wt_fx_teardown(void **state)
{
	struct wt_fx *f = *state;
	wt_rmtree(f->proj);
	free(f->proj);
	free(f->db);
	free(f);
	return 0;
}

char *wt_slurp(const char *path)
{
	char *data = NULL;
	if (wd_read_file(path, 1u << 20, &data, NULL) < 0)
		return wd_strdup("");
	return data;
}

void wt_copy_file(const char *from, const char *to, mode_t mode)
{
	char *data = NULL;
	size_t len = 0;
	int fd = -1;
	if (wd_read_file(from, 512u << 20, &data, &len) < 0 ||
	    (fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)) < 0 ||
	    write(fd, data, len) != (ssize_t)len) {
		fprintf(stderr, "copying %s to %s: %s\n", from, to, strerror(errno));
		exit(1);
	}
	close(fd);
	free(data);
}

char *wt_userns_warden(const char *tag)
{
	if (getuid() != 0) {
		printf("SKIP: needs root, to run warden as an unprivileged user\n");
		exit(77);
	}
	char *max = wt_slurp("/proc/sys/user/max_user_namespaces");
	char *clone = wt_slurp("/proc/sys/kernel/unprivileged_userns_clone");
	if (atoi(max) == 0 || (*clone && atoi(clone) == 0)) {
		printf("SKIP: unprivileged user namespaces are disabled here\n");
		exit(77);
	}
	free(max);
	free(clone);
	char *tmpl = wd_asprintf("/tmp/warden-%s-XXXXXX", tag);
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		exit(1);
	}
	chmod(tmpl, 0755);
	char *bin = wd_asprintf("%s/warden", tmpl);
	wt_copy_file(wt_bin(), bin, 0755);
	setenv("WARDEN_BIN", bin, 1); /* wt_wardenv_prep runs this copy */
	free(bin);
	return tmpl;
}
