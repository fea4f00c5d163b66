/*
 * test_view: the project view on a real FUSE mount.
 *
 * The test process makes itself a private mount namespace (so every mount
 * vanishes when it exits), and for each test mounts the view over a fresh
 * temporary project directory at the same path, as the sandbox child does,
 * serves it in-process with sbx_view_start() and drives it with real tools
 * (sh, cat, git, make, gcc, python3) run in the mount and with direct
 * syscalls. The real directory stays reachable for the test (as "the user
 * outside") through an O_PATH fd opened before the mount.
 *
 * Needs root (mount(2) of FUSE), /dev/fuse and unshare(CLONE_NEWNS); where
 * any is missing it says why and exits 77 (skipped).
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

/* ---- the decide callback: records every request ----------------------- */

#define MAX_RECORDS 64

struct record {
	char path[256];
	char path2[256];
	unsigned access;
	pid_t pid;
};

static struct {
	pthread_mutex_t lock;
	struct record rec[MAX_RECORDS];
	int n;
	int verdict;	 /* what decide answers */
	int slow_ms;	 /* decide sleeps this long for ".env" */
	int in_progress; /* decide calls not returned yet */
} g_dec = {.lock = PTHREAD_MUTEX_INITIALIZER};

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

static int records(void)
{
	pthread_mutex_lock(&g_dec.lock);
	int n = g_dec.n;
	pthread_mutex_unlock(&g_dec.lock);
	return n;
}

/* The index of the first record for |path|, or -1. */
static int find_record(const char *path)
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

struct fx {
	char dir[64]; /* the project: the real dir, with the view mounted over it */
	int real;     /* O_PATH fd of the real dir (the user's side) */
	struct sbx_view *view;
};

static bool g_read_only;
static size_t g_fd_budget; /* 0: the view's default */
static const char *const g_hidden[] = {".warden/audit.db", ".warden/audit.db-wal",
				       ".warden/audit.db-shm", NULL};

static void put_real(struct fx *f, const char *name, const char *text)
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

static int setup(void **state)
{
	g_read_only = false;
	g_fd_budget = 0;
	return setup_common(state);
}

static int setup_small_budget(void **state)
{
	g_read_only = false;
	g_fd_budget = 200;
	return setup_common(state);
}

static int setup_ro(void **state)
{
	g_read_only = true;
	g_fd_budget = 0;
	return setup_common(state);
}

static int teardown(void **state)
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

static pid_t spawn_sh(const char *dir, const char *cmd)
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

static int wait_status(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Runs |fmt| with sh -c in the project (through the view); its status. */
static int __attribute__((format(printf, 2, 3))) sh(struct fx *f, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return wait_status(spawn_sh(f->dir, cmd));
}

static char *vpath(struct fx *f, const char *name)
{
	return wd_asprintf("%s/%s", f->dir, name);
}

static char *read_view(struct fx *f, const char *name)
{
	wd_autofree char *p = vpath(f, name);
	char *text = NULL;
	size_t len;

	if (wd_read_file(p, 1 << 24, &text, &len) < 0)
		return NULL;
	return text;
}

static void write_view(struct fx *f, const char *name, const char *text)
{
	wd_autofree char *p = vpath(f, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(wd_write_all(fd, text, strlen(text)), 0);
	assert_int_equal(close(fd), 0);
}

static int64_t ms_since(int64_t t0)
{
	return (wd_now_mono_ns() - t0) / 1000000;
}

/* ---- behaviour -------------------------------------------------------- */

/*
 * A tree with many more files than the view's descriptor budget (200 here;
 * RLIMIT_NOFILE's three quarters in warden): walked, read and read again,
 * every file is served, the view stays near its budget because the kernel
 * was asked to drop the least recently used files, and a file held open
 * meanwhile, and the walker's cwd, are left alone (a dropped busy dentry
 * would read as deleted). A file hidden by a mount made before the view
 * was sealed (as warden hides places inside the project) stays hidden:
 * dropping its entry would detach the mount.
 */
static void test_view_many_files_within_budget(void **state)
{
	struct fx *f = *state;
	put_real(f, "hidden.txt", "NOT-FOR-THE-AGENT\n");
	wd_autofree char *hidden = vpath(f, "hidden.txt");
	assert_int_equal(mount("/dev/null", hidden, NULL, MS_BIND, NULL), 0);
	sbx_view_seal(f->view);
	assert_int_equal(mkdirat(f->real, "many", 0755), 0);
	for (int i = 0; i < 3000; i++) {
		char name[32];
		snprintf(name, sizeof(name), "many/f%04d", i);
		put_real(f, name, "0123456789\n");
	}
	wd_autofree char *out = wd_asprintf("%s/out", f->dir);
	unlink(out);
	pid_t holder =
		spawn_sh(f->dir, "exec 3< many/f0000; sleep 3; readlink /proc/$$/fd/3 > held");
	usleep(200000);
	assert_int_equal(sh(f,
			    "cd many && for r in 1 2; do cat f* | wc -c; done > ../out && "
			    "test \"$(/bin/pwd)\" = \"%s/many\" && ls -l | wc -l >> ../out",
			    f->dir),
			 0);
	wd_autofree char *counts = read_view(f, "out");
	assert_non_null(counts);
	assert_string_equal(counts, "33000\n33000\n3001\n");
	assert_int_equal(wait_status(holder), 0);
	wd_autofree char *link = read_view(f, "held");
	assert_non_null(link);
	assert_non_null(strstr(link, "/many/f0000"));
	assert_null(strstr(link, "deleted"));
	size_t nodes = 0;
	uint64_t evicted = 0;
	for (int i = 0; i < 100; i++) {
		sbx_view_counts(f->view, &nodes, &evicted);
		if (nodes <= 200)
			break;
		usleep(20000);
	}
	print_message("view: %zu objects held, %llu entries dropped\n", nodes,
		      (unsigned long long)evicted);
	assert_true(evicted >= 2800);
	assert_true(nodes <= 200);
	wd_autofree char *after = read_view(f, "hidden.txt");
	assert_non_null(after);
	assert_string_equal(after, "");
	assert_int_equal(umount2(hidden, MNT_DETACH), 0);
}

static void test_view_serves_the_project(void **state)
{
	struct fx *f = *state;
	struct stat vst, rst;
	wd_autofree char *text = read_view(f, "README");

	assert_string_equal(text, "hello view\n");
	/* The mount covers the real directory at the same path. */
	assert_int_equal(stat(f->dir, &vst), 0);
	assert_int_equal(fstat(f->real, &rst), 0);
	assert_true(vst.st_dev != rst.st_dev);
}

static void test_view_create_read_write_truncate(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = vpath(f, "data.bin");
	char buf[64] = {0};
	struct stat st;
	int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "abcdef", 6, 0), 6);
	assert_int_equal(pwrite(fd, "XY", 2, 2), 2);
	assert_int_equal(pwrite(fd, "end", 3, 100), 3); /* a hole */
	assert_int_equal(pread(fd, buf, 6, 0), 6);
	assert_memory_equal(buf, "abXYef", 6);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 103);
	assert_int_equal(pread(fd, buf, 3, 50), 3);
	assert_memory_equal(buf, "\0\0\0", 3);
	assert_int_equal(ftruncate(fd, 4), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 4);
	assert_int_equal(close(fd), 0);
	assert_int_equal(truncate(p, 2), 0); /* by name: setattr without a handle */
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 2);
	/* The real file has what the view wrote. */
	assert_int_equal(fstatat(f->real, "data.bin", &st, 0), 0);
	assert_int_equal(st.st_size, 2);
	assert_int_equal(sh(f, "printf 'x\\n' >> data.bin && test \"$(cat data.bin)\" = abx"), 0);
	assert_int_equal(open(p, O_CREAT | O_EXCL | O_WRONLY, 0600), -1);
	assert_int_equal(errno, EEXIST);
}

static void test_view_rename(void **state)
{
	struct fx *f = *state;
	wd_autofree char *a = vpath(f, "a"), *b = vpath(f, "b"), *d1 = vpath(f, "d1");
	wd_autofree char *d2 = vpath(f, "d2");

	write_view(f, "a", "A");
	write_view(f, "b", "B");
	/* Over an existing file. */
	assert_int_equal(rename(a, b), 0);
	assert_int_equal(access(a, F_OK), -1);
	wd_autofree char *tb = read_view(f, "b");
	assert_string_equal(tb, "A");
	/* NOREPLACE and EXCHANGE. */
	write_view(f, "a", "A2");
	assert_int_equal(renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_NOREPLACE), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE), 0);
	wd_autofree char *ta = read_view(f, "a"), *tb2 = read_view(f, "b");
	assert_string_equal(ta, "A");
	assert_string_equal(tb2, "A2");
	/* A directory with contents, then the contents under the new name. */
	assert_int_equal(mkdir(d1, 0755), 0);
	write_view(f, "d1/inner", "in");
	assert_int_equal(rename(d1, d2), 0);
	wd_autofree char *ti = read_view(f, "d2/inner");
	assert_string_equal(ti, "in");
	assert_int_equal(sh(f, "mkdir -p x/y && echo z > x/y/z && mv x w && cat w/y/z"), 0);
	assert_int_equal(faccessat(f->real, "w/y/z", F_OK, 0), 0);
}

static void test_view_links(void **state)
{
	struct fx *f = *state;
	wd_autofree char *src = vpath(f, "orig"), *hard = vpath(f, "hard");
	wd_autofree char *rel = vpath(f, "rel"), *abs = vpath(f, "abs");
	char buf[PATH_MAX];
	struct stat st;
	ssize_t n;

	write_view(f, "orig", "content");
	assert_int_equal(link(src, hard), 0);
	assert_int_equal(stat(src, &st), 0);
	assert_int_equal(st.st_nlink, 2);
	write_view(f, "hard", "changed");
	wd_autofree char *t = read_view(f, "orig");
	assert_string_equal(t, "changed");

	assert_int_equal(symlink("orig", rel), 0);
	assert_int_equal(symlink(src, abs), 0);
	n = readlink(rel, buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "orig", 4);
	assert_int_equal(lstat(rel, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	wd_autofree char *tr = read_view(f, "rel"), *ta = read_view(f, "abs");
	assert_string_equal(tr, "changed");
	assert_string_equal(ta, "changed");
	assert_int_equal(unlink(src), 0);
	assert_int_equal(stat(hard, &st), 0);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(stat(rel, &st), -1); /* dangling now */
	assert_int_equal(errno, ENOENT);
}

static void test_view_chmod_chown_utimens(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = vpath(f, "m");
	struct timespec ts[2] = {{.tv_sec = 1000000000, .tv_nsec = 5}, {.tv_sec = 1200000000}};
	struct stat st;
	int64_t now = wd_now_real_us() / 1000000;

	write_view(f, "m", "m");
	assert_int_equal(chmod(p, 0751), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0751);
	assert_int_equal(fstatat(f->real, "m", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0751);
	assert_int_equal(chown(p, 1234, 5678), 0);
	assert_int_equal(fstatat(f->real, "m", &st, 0), 0);
	assert_int_equal(st.st_uid, 1234);
	assert_int_equal(st.st_gid, 5678);

	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	assert_int_equal(fstatat(f->real, "m", &st, 0), 0);
	assert_int_equal(st.st_atim.tv_sec, 1000000000);
	assert_int_equal(st.st_atim.tv_nsec, 5);
	assert_int_equal(st.st_mtim.tv_sec, 1200000000);
	/* UTIME_NOW for atime, UTIME_OMIT keeps mtime. */
	ts[0].tv_nsec = UTIME_NOW;
	ts[1].tv_nsec = UTIME_OMIT;
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	assert_int_equal(fstatat(f->real, "m", &st, 0), 0);
	assert_true(st.st_atim.tv_sec >= now);
	assert_int_equal(st.st_mtim.tv_sec, 1200000000);
	/* Through a handle (futimens) too. */
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1] = (struct timespec){.tv_sec = 1300000000};
	assert_int_equal(futimens(fd, ts), 0);
	close(fd);
	assert_int_equal(fstatat(f->real, "m", &st, 0), 0);
	assert_int_equal(st.st_mtim.tv_sec, 1300000000);
	assert_int_equal(sh(f, "touch -d @1400000000 m && test $(stat -c %%Y m) = 1400000000"), 0);
	/* A directory's handle is not an fd: futimens and fstat on an open
	 * directory must still reach the directory. */
	wd_autofree char *dp = vpath(f, "dir");
	assert_int_equal(mkdir(dp, 0755), 0);
	int dfd = open(dp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1] = (struct timespec){.tv_sec = 1100000000};
	assert_int_equal(futimens(dfd, ts), 0);
	assert_int_equal(fchmod(dfd, 0700), 0);
	assert_int_equal(fstat(dfd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	close(dfd);
	assert_int_equal(fstatat(f->real, "dir", &st, 0), 0);
	assert_int_equal(st.st_mtim.tv_sec, 1100000000);
	assert_int_equal(st.st_mode & 07777, 0700);
}

static void test_view_readdir_10000(void **state)
{
	struct fx *f = *state;
	char name[32];

	assert_int_equal(mkdirat(f->real, "many", 0755), 0);
	int dfd = openat(f->real, "many", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	for (int i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "f%05d", i);
		int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	close(dfd);
	assert_int_equal(sh(f, "test $(ls many | wc -l) = 10000"), 0);
	assert_int_equal(sh(f, "test $(ls -l many | grep -c ' f[0-9]') = 10000"), 0);
	assert_int_equal(sh(f, "test $(find many -type f | wc -l) = 10000"), 0);
	assert_int_equal(sh(f, "test \"$(ls many | sort | uniq | head -1)\" = f00000"), 0);
}

static void test_view_concurrent_writers(void **state)
{
	struct fx *f = *state;
	pid_t pids[4];

	write_view(f, "shared", "");
	for (int i = 0; i < 4; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			char path[128], own[128], block[4096];
			snprintf(path, sizeof(path), "%s/shared", f->dir);
			snprintf(own, sizeof(own), "%s/own%d", f->dir, i);
			memset(block, 'a' + i, sizeof(block));
			int fd = open(path, O_WRONLY | O_CLOEXEC);
			int fo = open(own, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd < 0 || fo < 0)
				_exit(1);
			for (int k = 0; k < 256; k++) {
				off_t off = ((off_t)k * 4 + i) * (off_t)sizeof(block);
				if (pwrite(fd, block, sizeof(block), off) != sizeof(block))
					_exit(2);
				if (write(fo, block, sizeof(block)) != sizeof(block))
					_exit(3);
			}
			_exit(close(fd) || close(fo) ? 4 : 0);
		}
		assert_true(pids[i] > 0);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(wait_status(pids[i]), 0);
	wd_autofree char *all = read_view(f, "shared");
	assert_int_equal(strlen(all), 4 * 256 * 4096);
	for (size_t b = 0; b < 4 * 256; b++)
		for (size_t k = 0; k < 4096; k += 512)
			assert_int_equal(all[b * 4096 + k], 'a' + (int)(b % 4));
	assert_int_equal(
		sh(f, "for i in 0 1 2 3; do test $(stat -c %%s own$i) = 1048576 || exit 1; done"),
		0);
}

static void test_view_git(void **state)
{
	struct fx *f = *state;

	if (system("command -v git >/dev/null") != 0)
		skip();
	/* git init writes .git/config, a control file: allowed here, and
	 * asked once per change; git's ordinary writes (index, objects,
	 * refs, logs) are never asked. */
	pthread_mutex_lock(&g_dec.lock);
	g_dec.verdict = 0;
	pthread_mutex_unlock(&g_dec.lock);
	assert_int_equal(sh(f,
			    "mkdir repo && cd repo && git init -q && echo one > a.txt && "
			    "mkdir sub && echo two > sub/b.txt && git add -A && "
			    "git -c user.name=t -c user.email=t@example.com commit -q -m first && "
			    "echo three >> a.txt && git -c user.name=t -c user.email=t@example.com "
			    "commit -q -am second && test $(git rev-list --count HEAD) = 2 && "
			    "git status --porcelain | wc -l | grep -qx 0 && git fsck --no-progress "
			    ">/dev/null 2>&1 && "
			    "git checkout -q HEAD~1 && test \"$(cat a.txt)\" = one"),
			 0);
	assert_true(find_record("repo/.git/config.lock") >= 0);
	char other[256] = "";
	pthread_mutex_lock(&g_dec.lock);
	for (int i = 0; i < g_dec.n; i++) {
		const char *p = g_dec.rec[i].path, *p2 = g_dec.rec[i].path2;
		/* git writes its config as config.lock, renamed over it. */
		bool control = strcmp(p, "repo/.git/config") == 0 ||
			       strcmp(p2, "repo/.git/config") == 0 ||
			       wd_str_has_prefix(p, "repo/.git/hooks");
		if (!control)
			snprintf(other, sizeof(other), "%s (access %u)", p, g_dec.rec[i].access);
	}
	pthread_mutex_unlock(&g_dec.lock);
	if (other[0])
		fail_msg("git's ordinary write of %s was asked about", other);
}

static void test_view_make_gcc(void **state)
{
	struct fx *f = *state;

	if (system("command -v gcc >/dev/null && command -v make >/dev/null") != 0)
		skip();
	write_view(f, "main.c",
		   "#include \"lib.h\"\n#include <stdio.h>\n"
		   "int main(void) { printf(\"%d\\n\", add(40, 2)); return 0; }\n");
	write_view(f, "lib.c", "#include \"lib.h\"\nint add(int a, int b) { return a + b; }\n");
	write_view(f, "lib.h", "int add(int a, int b);\n");
	write_view(f, "Makefile",
		   "prog: main.o lib.o\n\tgcc -o $@ $^\n"
		   "%.o: %.c lib.h\n\tgcc -O1 -c -o $@ $<\n");
	assert_int_equal(sh(f, "make -s -j2 >/dev/null && test \"$(./prog)\" = 42"), 0);
	/* Up to date, then rebuilt after a change. */
	assert_int_equal(sh(f, "make -q"), 0);
	assert_int_equal(
		sh(f, "sleep 1.1; touch lib.h && make -s -j2 >/dev/null && ./prog >/dev/null"), 0);
}

static void test_view_editor_save(void **state)
{
	struct fx *f = *state;
	wd_autofree char *doc = vpath(f, "doc.txt"), *tmp = vpath(f, ".doc.txt.swp");
	char buf[32] = {0};

	write_view(f, "doc.txt", "version 1\n");
	int old = open(doc, O_RDONLY | O_CLOEXEC);
	assert_true(old >= 0);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(wd_write_all(fd, "version 2\n", 10), 0);
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(rename(tmp, doc), 0);
	wd_autofree char *t = read_view(f, "doc.txt");
	assert_string_equal(t, "version 2\n");
	/* The file opened before the save still reads the old version. */
	assert_int_equal(pread(old, buf, sizeof(buf) - 1, 0), 10);
	assert_string_equal(buf, "version 1\n");
	close(old);
	assert_int_equal(faccessat(f->real, ".doc.txt.swp", F_OK, 0), -1);
}

static void test_view_python(void **state)
{
	struct fx *f = *state;

	if (system("command -v python3 >/dev/null") != 0)
		skip();
	assert_int_equal(sh(f, "python3 -c 'import os; open(\"p.txt\",\"w\").write(\"py\"); "
			       "assert open(\"p.txt\").read() == \"py\"; "
			       "assert open(\"README\").read() == \"hello view\\n\"; "
			       "os.replace(\"p.txt\", \"q.txt\"); assert "
			       "os.listdir(\".\").count(\"q.txt\") == 1'"),
			 0);
}

static void test_view_dotdot_stays_in_the_view(void **state)
{
	struct fx *f = *state;
	const char *slash = strrchr(f->dir, '/');
	const char *base = slash ? slash + 1 : f->dir;
	wd_autofree char *up = wd_asprintf("%s/..", f->dir);
	wd_autofree char *again = wd_asprintf("%s/../%s/README", f->dir, base);
	wd_autofree char *hid = wd_asprintf("%s/../%s/.warden/audit.db", f->dir, base);
	struct stat a, b, v;

	/* The root's parent is the mountpoint's normal parent. */
	assert_int_equal(stat(up, &a), 0);
	assert_int_equal(stat("/tmp", &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_dev, b.st_dev);
	/* Coming back down through it lands in the view again. */
	assert_int_equal(stat(f->dir, &v), 0);
	assert_int_equal(stat(again, &a), 0);
	assert_int_equal(a.st_dev, v.st_dev);
	assert_int_equal(stat(hid, &a), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(sh(f,
			    "cd .. && cd .. && cd '%s' && cat README >/dev/null && "
			    "test ! -e .warden/audit.db",
			    f->dir),
			 0);
}

/* ---- sensitive -------------------------------------------------------- */

static void test_view_sensitive_cat_refused(void **state)
{
	struct fx *f = *state;
	pid_t pid = spawn_sh(f->dir, "exec cat .env 2>/dev/null");

	assert_int_not_equal(wait_status(pid), 0);
	int i = find_record(".env");
	assert_true(i >= 0);
	assert_int_equal(g_dec.rec[i].pid, pid); /* the requesting process */
	assert_int_equal(g_dec.rec[i].access, POL_ACC_READ);
	assert_string_equal(g_dec.rec[i].path2, "");
	/* A stat is no open: allowed, not asked. */
	assert_int_equal(sh(f, "test -s .env && ls -la . | grep -q ' .env$'"), 0);
}

static void test_view_plain_open_not_asked(void **state)
{
	struct fx *f = *state;

	assert_int_equal(sh(f, "cat README >/dev/null && cp README R2 && cat R2 >/dev/null && "
			       "echo x > new && ls >/dev/null"),
			 0);
	assert_int_equal(records(), 0);
}

static void test_view_sensitive_symlink(void **state)
{
	struct fx *f = *state;

	/* Made through the view: the symlink itself is decided (refused). */
	assert_int_not_equal(sh(f, "ln -s .env x 2>/dev/null"), 0);
	int i = find_record("x");
	assert_true(i >= 0);
	assert_string_equal(g_dec.rec[i].path2, ".env");
	assert_int_equal(g_dec.rec[i].access, POL_ACC_SYMLINK);
	assert_int_not_equal(sh(f, "cat x 2>/dev/null"), 0);
	/* Made by the user outside: following it opens .env through the view,
	 * relative or absolute. */
	assert_int_equal(symlinkat(".env", f->real, "x2"), 0);
	wd_autofree char *abs_target = wd_asprintf("%s/.env", f->dir);
	assert_int_equal(symlinkat(abs_target, f->real, "x3"), 0);
	pid_t pid = spawn_sh(f->dir, "exec cat x2 2>/dev/null");
	assert_int_not_equal(wait_status(pid), 0);
	assert_int_not_equal(sh(f, "cat x3 2>/dev/null"), 0);
	i = find_record(".env");
	assert_true(i >= 0);
	assert_int_equal(g_dec.rec[i].pid, pid);
	assert_int_equal(g_dec.rec[i].access, POL_ACC_READ);
}

static void test_view_sensitive_hard_link(void **state)
{
	struct fx *f = *state;
	int i;

	/* A hard link the user made before the run, opened under its plain
	 * name before the view ever saw ".env" by name. */
	assert_int_equal(mkdirat(f->real, "docs", 0755), 0);
	assert_int_equal(linkat(f->real, ".env", f->real, "docs/notes", 0), 0);
	assert_int_not_equal(sh(f, "cat docs/notes 2>/dev/null"), 0);
	i = find_record("docs/notes");
	assert_true(i >= 0);
	assert_int_equal(g_dec.rec[i].access, POL_ACC_READ);

	/* Through the view: the link is decided (refused). */
	assert_int_not_equal(sh(f, "ln .env y 2>/dev/null"), 0);
	i = find_record(".env");
	assert_true(i >= 0);
	assert_string_equal(g_dec.rec[i].path2, "y");
	assert_int_equal(g_dec.rec[i].access, POL_ACC_LINK);
	assert_int_not_equal(sh(f, "cat y 2>/dev/null"), 0);

	/* After .env was seen by name, a new name of it made outside. */
	assert_int_equal(linkat(f->real, ".env", f->real, "plain", 0), 0);
	assert_int_not_equal(sh(f, "cat plain 2>/dev/null"), 0);
	assert_true(find_record("plain") >= 0);
}

static void test_view_sensitive_mv_cp_python_mmap(void **state)
{
	struct fx *f = *state;
	wd_autofree char *env = vpath(f, ".env");

	assert_int_not_equal(sh(f, "mv .env notes.txt 2>/dev/null"), 0);
	int i = find_record(".env");
	assert_true(i >= 0);
	assert_string_equal(g_dec.rec[i].path2, "notes.txt");
	assert_true(g_dec.rec[i].access & POL_ACC_RENAME_FROM);
	assert_int_equal(faccessat(f->real, ".env", F_OK, AT_SYMLINK_NOFOLLOW), 0);
	/* Renaming onto a sensitive name is decided too. */
	assert_int_not_equal(sh(f, "mv README .env.local 2>/dev/null"), 0);
	i = find_record("README");
	assert_true(i >= 0);
	assert_int_equal(g_dec.rec[i].access, POL_ACC_RENAME_TO);

	g_dec.n = 0;
	assert_int_not_equal(sh(f, "cp .env z 2>/dev/null"), 0);
	assert_true(find_record(".env") >= 0);
	assert_int_not_equal(sh(f, "python3 -c 'open(\".env\").read()' 2>/dev/null"), 0);

	/* mmap needs an fd: the open is refused before any page is mapped. */
	g_dec.n = 0;
	int fd = open(env, O_RDONLY | O_CLOEXEC);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, EACCES);
	i = find_record(".env");
	assert_true(i >= 0);
	assert_int_equal(g_dec.rec[i].pid, getpid());
	/* Creating a new sensitive file is decided as a create. */
	assert_int_not_equal(sh(f, "{ echo k > id_rsa; } 2>/dev/null"), 0);
	i = find_record("id_rsa");
	assert_true(i >= 0);
	assert_true(g_dec.rec[i].access & POL_ACC_CREATE);
	assert_int_equal(faccessat(f->real, "id_rsa", F_OK, 0), -1);
}

static void test_view_sensitive_allowed(void **state)
{
	struct fx *f = *state;
	wd_autofree char *env = vpath(f, ".env");

	g_dec.verdict = 0;
	assert_int_equal(sh(f, "test \"$(cat .env)\" = API_KEY=s3cr3t"), 0);
	assert_true(find_record(".env") >= 0);
	int fd = open(env, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	char *m = mmap(NULL, 14, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(m != MAP_FAILED);
	assert_memory_equal(m, "API_KEY=s3cr3t", 14);
	munmap(m, 14);
	close(fd);
	/* Every open is asked again: nothing is remembered by the view. */
	int before = records();
	assert_int_equal(sh(f, "cat .env >/dev/null && mv .env notes.txt"), 0);
	assert_true(records() >= before + 2);
	/* The object stays sensitive under its new name. */
	before = records();
	assert_int_equal(sh(f, "cat notes.txt >/dev/null"), 0);
	assert_true(find_record("notes.txt") >= 0);
	assert_true(records() > before);
}

static void test_view_pending_decision_does_not_block_others(void **state)
{
	struct fx *f = *state;

	g_dec.slow_ms = 2000;
	int64_t t0 = wd_now_mono_ns();
	pid_t slow = spawn_sh(f->dir, "exec cat .env 2>/dev/null");
	while (find_record(".env") < 0 && ms_since(t0) < 5000)
		usleep(10000);
	assert_true(find_record(".env") >= 0);

	int64_t t1 = wd_now_mono_ns();
	assert_int_equal(sh(f, "cat README >/dev/null && ls -la >/dev/null && echo y > other && "
			       "cat other >/dev/null"),
			 0);
	int64_t other_ms = ms_since(t1);
	pthread_mutex_lock(&g_dec.lock);
	int pending = g_dec.in_progress;
	pthread_mutex_unlock(&g_dec.lock);
	assert_int_equal(pending, 1); /* still waiting when the others finished */
	assert_true(other_ms < 1000);
	assert_int_not_equal(wait_status(slow), 0);
	assert_true(ms_since(t0) >= 1900);
}

/* ---- write-protected, hidden, read-only ------------------------------- */

static void test_view_warden_is_read_only(void **state)
{
	struct fx *f = *state;
	wd_autofree char *perm = vpath(f, ".warden/permissions.json");
	wd_autofree char *newf = vpath(f, ".warden/new");
	wd_autofree char *t = read_view(f, ".warden/permissions.json");

	assert_string_equal(t, "{}\n");
	assert_int_equal(open(perm, O_WRONLY | O_CLOEXEC), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(open(perm, O_RDONLY | O_TRUNC | O_CLOEXEC), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(open(newf, O_WRONLY | O_CREAT | O_CLOEXEC, 0644), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(chmod(perm, 0777), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(truncate(perm, 0), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(unlink(perm), -1);
	assert_int_equal(errno, EROFS);
	/* access(W_OK) is the kernel's answer from the mode bits (the mount
	 * has default_permissions): the write itself is what is refused. */
	assert_int_not_equal(sh(f, "mv .warden/permissions.json p 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "mv README .warden/ 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "mv .warden w 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "rm -rf .warden 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "mkdir .warden/d 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "ln .warden/permissions.json pj 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "ln -s x .warden/s 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "setfattr -n user.x -v 1 .warden/permissions.json 2>/dev/null"),
			     0);
	assert_int_equal(sh(f, "cat .warden/permissions.json >/dev/null"), 0);
	wd_autofree char *after = read_view(f, ".warden/permissions.json");
	assert_string_equal(after, "{}\n");
}

static void test_view_hidden(void **state)
{
	struct fx *f = *state;
	wd_autofree char *db = vpath(f, ".warden/audit.db");
	wd_autofree char *wal = vpath(f, ".warden/audit.db-wal");
	struct stat st;

	assert_int_equal(stat(db, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(stat(wal, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(sh(f, "ls -a .warden | grep -q permissions.json"), 0);
	assert_int_not_equal(sh(f, "ls -a .warden | grep -q audit"), 0);
	assert_int_not_equal(sh(f, "find . | grep -q audit"), 0);
	/* The real file is untouched by all that. */
	assert_int_equal(fstatat(f->real, ".warden/audit.db", &st, 0), 0);
}

static void test_view_read_only(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = vpath(f, "t");
	wd_autofree char *readme = vpath(f, "README");

	assert_int_equal(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(open(readme, O_WRONLY | O_CLOEXEC), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(mkdir(p, 0755), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(unlink(readme), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(chmod(readme, 0600), -1);
	assert_int_equal(errno, EROFS);
	assert_int_not_equal(sh(f, "touch t 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "touch README 2>/dev/null"), 0);
	assert_int_not_equal(sh(f, "mv README R 2>/dev/null"), 0);
	assert_int_equal(sh(f, "cat README >/dev/null && ls >/dev/null"), 0);
}

static void test_view_stop_while_mounted(void **state)
{
	struct fx *f = *state;
	struct stat st;

	assert_int_equal(sh(f, "cat README >/dev/null"), 0);
	int64_t t0 = wd_now_mono_ns();
	sbx_view_stop(f->view); /* still mounted: the workers must be woken */
	f->view = NULL;
	assert_true(ms_since(t0) < 2000);
	/* The connection is gone: nothing is served, nothing hangs. */
	wd_autofree char *readme = vpath(f, "README");
	assert_int_equal(open(readme, O_RDONLY | O_CLOEXEC), -1);
	assert_int_equal(errno, ENOTCONN);
	assert_int_equal(stat(readme, &st) == 0 || errno == ENOTCONN, 1);
}

/* ---- main ------------------------------------------------------------- */

static int can_run(void)
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

/*
 * A caller that is not the view's user: what it makes belongs to it (its
 * fsuid and fsgid; a set-group-ID directory's group and bit, as the kernel
 * gives them), never with set-user-ID or set-group-ID on a file, and what
 * it may not touch it cannot touch through the view (default_permissions).
 * The caller is a child of the test that became nobody.
 */
static void test_view_caller_credentials(void **state)
{
	struct fx *f = *state;
	struct stat st;

	assert_int_equal(chmod(f->dir, 0755), 0);
	wd_autofree char *pub = vpath(f, "pub");
	wd_autofree char *sg = vpath(f, "sg");
	assert_int_equal(mkdir(pub, 0777), 0);
	assert_int_equal(chmod(pub, 0777), 0);
	assert_int_equal(mkdir(sg, 0777), 0);
	assert_int_equal(chown(sg, 0, 100), 0);
	assert_int_equal(chmod(sg, 02777), 0);
	wd_autofree char *rootonly = vpath(f, "rootonly");
	write_view(f, "rootonly", "root\n");
	assert_int_equal(chmod(rootonly, 0600), 0);

	pid_t pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
			_exit(100);
		int fd = open(vpath(f, "pub/file"), O_WRONLY | O_CREAT | O_EXCL, 04755);
		if (fd < 0 || close(fd) < 0)
			_exit(101);
		if (mkdir(vpath(f, "pub/dir"), 0755) < 0 || symlink("x", vpath(f, "pub/ln")) < 0)
			_exit(102);
		fd = open(vpath(f, "sg/file"), O_WRONLY | O_CREAT, 02755);
		if (fd < 0 || close(fd) < 0 || mkdir(vpath(f, "sg/dir"), 0755) < 0)
			_exit(103);
		if (chmod(vpath(f, "pub/file"), 06755) < 0)
			_exit(104);
		/* Someone else's: no read, no chmod, no chown, no times. */
		if (open(vpath(f, "rootonly"), O_RDONLY) >= 0 || errno != EACCES)
			_exit(105);
		if (chmod(vpath(f, "rootonly"), 0666) == 0 ||
		    chown(vpath(f, "pub/file"), 0, 0) == 0)
			_exit(106);
		struct timespec ts[2] = {{.tv_sec = 1000}, {.tv_sec = 1000}};
		if (utimensat(AT_FDCWD, vpath(f, "rootonly"), ts, 0) == 0)
			_exit(107);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(wait_status(pid), 0);
	static const char *const made[] = {"pub/file", "pub/dir", "pub/ln", "sg/file", "sg/dir"};
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		assert_int_equal(fstatat(f->real, made[i], &st, AT_SYMLINK_NOFOLLOW), 0);
		if (st.st_uid != 65534)
			fail_msg("%s belongs to uid %u", made[i], (unsigned)st.st_uid);
		assert_int_equal(st.st_gid, wd_str_has_prefix(made[i], "sg/") ? 100 : 65534);
	}
	assert_int_equal(fstatat(f->real, "pub/file", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(fstatat(f->real, "sg/file", &st, 0), 0);
	assert_int_equal(st.st_mode & 07000, 0);
	assert_int_equal(fstatat(f->real, "sg/dir", &st, 0), 0);
	assert_true(st.st_mode & S_ISGID);
	assert_int_equal(fstatat(f->real, "rootonly", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_not_equal(st.st_mtim.tv_sec, 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_view_serves_the_project, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_create_read_write_truncate, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_view_rename, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_chmod_chown_utimens, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_readdir_10000, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_concurrent_writers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_git, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_make_gcc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_editor_save, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_python, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_dotdot_stays_in_the_view, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_view_sensitive_cat_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_plain_open_not_asked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_sensitive_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_sensitive_hard_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_sensitive_mv_cp_python_mmap, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_view_sensitive_allowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_pending_decision_does_not_block_others,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_warden_is_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_hidden, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_read_only, setup_ro, teardown),
		cmocka_unit_test_setup_teardown(test_view_stop_while_mounted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_many_files_within_budget,
						setup_small_budget, teardown),
		cmocka_unit_test_setup_teardown(test_view_caller_credentials, setup, teardown),
	};
	int rc = can_run();

	if (rc)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
