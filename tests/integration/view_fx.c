/*
 * view_fx.c: the project view tests' shared fixture and helpers
 * (view_fx.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "policy.h"
#include "sandbox.h"

#include "view_fx.h"

/* ---- the decide callback: records every request ----------------------- */

struct view_decisions g_dec = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int decide(void *arg, const struct sbx_view_request *req)
{
	(void)arg;
	pthread_mutex_lock(&g_dec.lock);
	if (g_dec.n < MAX_RECORDS) {
		struct record *r = &g_dec.rec[g_dec.n++];

		snprintf(r->path, sizeof(r->path), "%s", req->path);
		snprintf(r->path2, sizeof(r->path2), "%s", req->path2 ? req->path2 : "");
		r->access = req->access;
		r->pid = req->pid;
	}
	g_dec.in_progress++;
	int verdict = g_dec.verdict, slow = g_dec.slow_ms;
	pthread_mutex_unlock(&g_dec.lock);
	if (slow && strcmp(req->path, ".env") == 0) {
		struct timespec ts = {slow / 1000, (slow % 1000) * 1000000L};

		nanosleep(&ts, NULL);
	}
	pthread_mutex_lock(&g_dec.lock);
	g_dec.in_progress--;
	pthread_mutex_unlock(&g_dec.lock);
	return verdict;
}

int records(void)
{
	pthread_mutex_lock(&g_dec.lock);
	int n = g_dec.n;
	pthread_mutex_unlock(&g_dec.lock);
	return n;
}

/* The index of the first record for |path|, or -1. */
int find_record(const char *path)
{
	int found = -1;

	pthread_mutex_lock(&g_dec.lock);
	for (int i = 0; i < g_dec.n && found < 0; i++)
		if (strcmp(g_dec.rec[i].path, path) == 0)
			found = i;
	pthread_mutex_unlock(&g_dec.lock);
	return found;
}

/* ---- the fixture ------------------------------------------------------ */

static bool g_read_only;
static bool g_passthrough;
static size_t g_fd_budget; /* 0: the view's default */
static const char *const g_hidden[] = {".warden/audit.db", ".warden/audit.db-wal",
				       ".warden/audit.db-shm", NULL};

void put_real(struct fx *f, const char *name, const char *text)
{
	int fd = openat(f->real, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(wd_write_all(fd, text, strlen(text)), 0);
	close(fd);
}

static int setup_common(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	struct sbx_view_config cfg = {0};

	snprintf(f->dir, sizeof(f->dir), "/tmp/wd-view-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->real = open(f->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(f->real >= 0);
	assert_int_equal(mkdirat(f->real, ".warden", 0755), 0);
	put_real(f, ".warden/permissions.json", "{}\n");
	put_real(f, ".warden/audit.db", "audit\n");
	put_real(f, ".warden/audit.db-wal", "wal\n");
	put_real(f, "README", "hello view\n");
	put_real(f, ".env", "API_KEY=s3cr3t\n");

	cfg.backing_fd = open(f->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(cfg.backing_fd >= 0);
	cfg.policy = NULL; /* the built-in markers and .warden/ */
	cfg.read_only = g_read_only;
	cfg.hidden = g_hidden;
	cfg.decide = decide;
	cfg.threads = 4;
	cfg.fd_budget = g_fd_budget;
	cfg.passthrough = g_passthrough;
	int fuse_fd = sbx_fuse_mount(f->dir, 0, 0);

	assert_true(fuse_fd >= 0);
	assert_int_equal(sbx_view_start(&cfg, fuse_fd, &f->view), 0);
	/* As warden does once the sandbox's mounts are made (the budget test
	 * makes one first, then seals). */
	if (!g_fd_budget)
		sbx_view_seal(f->view);

	pthread_mutex_lock(&g_dec.lock);
	g_dec.n = 0;
	g_dec.verdict = -EACCES;
	g_dec.slow_ms = 0;
	pthread_mutex_unlock(&g_dec.lock);
	*state = f;
	return 0;
}

int setup(void **state)
{
	g_read_only = false;
	g_passthrough = false;
	g_fd_budget = 0;
	return setup_common(state);
}

int setup_small_budget(void **state)
{
	g_read_only = false;
	g_passthrough = false;
	g_fd_budget = 200;
	return setup_common(state);
}

int setup_ro(void **state)
{
	g_read_only = true;
	g_passthrough = false;
	g_fd_budget = 0;
	return setup_common(state);
}

int setup_pt(void **state)
{
	g_read_only = false;
	g_passthrough = true;
	g_fd_budget = 0;
	return setup_common(state);
}

int setup_pt_ro(void **state)
{
	g_read_only = true;
	g_passthrough = true;
	g_fd_budget = 0;
	return setup_common(state);
}

int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	assert_int_equal(umount2(f->dir, MNT_DETACH), 0);
	sbx_view_stop(f->view);
	close(f->real);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* ---- helpers ---------------------------------------------------------- */

pid_t spawn_sh(const char *dir, const char *cmd)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (chdir(dir) < 0)
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	return pid;
}

int wait_status(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Runs |fmt| with sh -c in the project (through the view); its status. */
int __attribute__((format(printf, 2, 3))) sh(struct fx *f, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return wait_status(spawn_sh(f->dir, cmd));
}

char *vpath(struct fx *f, const char *name)
{
	return wd_asprintf("%s/%s", f->dir, name);
}

char *read_view(struct fx *f, const char *name)
{
	wd_autofree char *p = vpath(f, name);
	char *text = NULL;
	size_t len;

	if (wd_read_file(p, 1 << 24, &text, &len) < 0)
		return NULL;
	return text;
}

void write_view(struct fx *f, const char *name, const char *text)
{
	wd_autofree char *p = vpath(f, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(wd_write_all(fd, text, strlen(text)), 0);
	assert_int_equal(close(fd), 0);
}

int64_t ms_since(int64_t t0)
{
	return (wd_now_mono_ns() - t0) / 1000000;
}

int can_run(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_view: skipped: mounting FUSE needs root\n");
		return 77;
	}
	if (access("/dev/fuse", R_OK | W_OK) != 0) {
		fprintf(stderr, "test_view: skipped: no usable /dev/fuse (%s)\n", strerror(errno));
		return 77;
	}
	if (unshare(CLONE_NEWNS) != 0) {
		fprintf(stderr, "test_view: skipped: unshare(CLONE_NEWNS): %s\n", strerror(errno));
		return 77;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		fprintf(stderr, "test_view: skipped: making / private: %s\n", strerror(errno));
		return 77;
	}
	return 0;
}
