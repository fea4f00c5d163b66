/*
 * test_view_pt: the project view's kernel FUSE passthrough (view_pt.c) on a
 * real FUSE mount, with the fixture of test_view.c (view_fx.c).
 *
 * Every test first checks that passthrough was negotiated and then that the
 * opens it made did pass through (sbx_view_passthrough()), so a view that
 * silently serves everything itself fails here. A kernel without passthrough
 * (before 6.9, or built without CONFIG_FUSE_PASSTHROUGH) skips (77).
 *
 * Needs root, /dev/fuse and unshare(CLONE_NEWNS), like test_view.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "sandbox.h"

#include "view_fx.h"

static struct sbx_view_pt_status pt_status(struct fx *f)
{
	struct sbx_view_pt_status s;

	sbx_view_passthrough(f->view, &s);
	return s;
}

/* Writes |len| bytes of a pattern that differs at every offset. */
static void put_big(struct fx *f, const char *name, size_t len)
{
	wd_autofree unsigned char *b = wd_malloc(len);
	int fd = openat(f->real, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(i * 2654435761u >> 13);
	assert_true(fd >= 0);
	assert_int_equal(wd_write_all(fd, b, len), 0);
	close(fd);
}

/* The contents of |name| in the real directory (the user's side). */
static int read_real(struct fx *f, const char *name, char **text)
{
	wd_autofree char *p = wd_asprintf("/proc/self/fd/%d/%s", f->real, name);
	return wd_read_file(p, 1 << 20, text, NULL);
}

/* |name| read with read(2) through the view is the real file. */
static void assert_same_file(struct fx *f, const char *name)
{
	wd_autofree char *p = vpath(f, name);
	wd_autofree char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	wd_autofree char *r = wd_asprintf("/proc/self/fd/%d/%s", f->real, name);

	assert_int_equal(wd_read_file(p, 1 << 26, &a, &alen), 0);
	assert_int_equal(wd_read_file(r, 1 << 26, &b, &blen), 0);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
}

/* A big file reads right through read(2) and through mmap, and the opens
 * passed through: the view's read callback was never asked. */
static void test_pt_big_read_and_mmap(void **state)
{
	struct fx *f = *state;
	const size_t len = 24u << 20;
	wd_autofree char *p = vpath(f, "big.bin");

	assert_true(pt_status(f).on);
	put_big(f, "big.bin", len);
	assert_same_file(f, "big.bin");

	int fd = open(p, O_RDONLY | O_CLOEXEC);
	int rfd = openat(f->real, "big.bin", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0 && rfd >= 0);
	unsigned char *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	unsigned char *r = mmap(NULL, len, PROT_READ, MAP_SHARED, rfd, 0);
	assert_true(m != MAP_FAILED && r != MAP_FAILED);
	assert_memory_equal(m, r, len);
	munmap(m, len);
	munmap(r, len);
	close(fd);
	close(rfd);

	struct sbx_view_pt_status s = pt_status(f);
	assert_true(s.opens >= 2);
	assert_int_equal(s.failed, 0);
}

/* Writes through passthrough land in the backing file; O_APPEND appends;
 * O_TRUNC truncates; a file created through the view passes through. */
static void test_pt_writes_land(void **state)
{
	struct fx *f = *state;
	wd_autofree char *text = NULL;

	put_real(f, "w.txt", "0123456789\n");
	assert_int_equal(sh(f, "printf AB | dd of=w.txt bs=1 seek=2 conv=notrunc 2>/dev/null"), 0);
	assert_int_equal(sh(f, "printf 'tail\\n' >> w.txt"), 0);
	assert_int_equal(read_real(f, "w.txt", &text), 0);
	assert_string_equal(text, "01AB456789\ntail\n");
	free(text);
	text = NULL;
	assert_int_equal(sh(f, "printf new > w.txt"), 0);
	assert_int_equal(read_real(f, "w.txt", &text), 0);
	assert_string_equal(text, "new");
	free(text);
	text = NULL;

	uint64_t before = pt_status(f).opens;
	write_view(f, "created.txt", "made here\n");
	assert_true(pt_status(f).opens > before);
	assert_int_equal(read_real(f, "created.txt", &text), 0);
	assert_string_equal(text, "made here\n");

	/* A shared writable mapping writes the backing file too. */
	wd_autofree char *p = vpath(f, "w.txt");
	int fd = open(p, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	char *m = mmap(NULL, 3, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	memcpy(m, "NEW", 3);
	assert_int_equal(msync(m, 3, MS_SYNC), 0);
	munmap(m, 3);
	close(fd);
	free(text);
	text = NULL;
	assert_int_equal(read_real(f, "w.txt", &text), 0);
	assert_string_equal(text, "NEW");
}

/* The user's edits outside are read fresh by the next open. */
static void test_pt_outside_edit_read_fresh(void **state)
{
	struct fx *f = *state;
	wd_autofree char *a = NULL, *b = NULL;

	put_real(f, "edit.txt", "first version\n");
	a = read_view(f, "edit.txt");
	assert_non_null(a);
	assert_string_equal(a, "first version\n");
	put_real(f, "edit.txt", "second, longer version\n");
	b = read_view(f, "edit.txt");
	assert_non_null(b);
	assert_string_equal(b, "second, longer version\n");
	assert_true(pt_status(f).opens >= 2);
}

/* A reader and a writer of one file at once: both pass through to the
 * vnode's one backing id (the kernel refuses a second one, and mixing). */
static void test_pt_reader_and_writer(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = vpath(f, "rw.txt");
	char buf[16] = {0};

	put_real(f, "rw.txt", "aaaa");
	uint64_t before = pt_status(f).opens;
	int rd = open(p, O_RDONLY | O_CLOEXEC);
	int wr = open(p, O_WRONLY | O_CLOEXEC);
	int rw = open(p, O_RDWR | O_APPEND | O_CLOEXEC);
	assert_true(rd >= 0 && wr >= 0 && rw >= 0);
	assert_int_equal(pwrite(wr, "bb", 2, 0), 2);
	assert_int_equal(write(rw, "cc", 2), 2);
	assert_int_equal(pread(rd, buf, sizeof(buf) - 1, 0), 6);
	assert_string_equal(buf, "bbaacc");
	close(rd);
	close(wr);
	close(rw);
	assert_int_equal(pt_status(f).opens, before + 3);
	/* After the last close the next open registers again. */
	wd_autofree char *t = read_view(f, "rw.txt");
	assert_string_equal(t, "bbaacc");
}

/* Runs the real |name| as the host would (not through the view): 0 when
 * it ran and exited 0, else the exec's errno. */
static int host_exec(struct fx *f, const char *name)
{
	wd_autofree char *p = wd_asprintf("/proc/self/fd/%d/%s", f->real, name);
	pid_t pid = fork();
	if (pid == 0) {
		execl(p, name, (char *)NULL);
		_exit(errno);
	}
	assert_true(pid > 0);
	return wait_status(pid);
}

/* A binary in the view runs (exec maps it through passthrough), while the
 * view holds its registration: the host can still replace it. */
static void test_pt_exec(void **state)
{
	struct fx *f = *state;

	assert_int_equal(sh(f, "cp /bin/true ./mytrue && chmod 755 mytrue"), 0);
	uint64_t before = pt_status(f).opens;
	assert_int_equal(sh(f, "./mytrue && ./mytrue"), 0);
	assert_true(pt_status(f).opens > before);
	/* A long-running copy: while it runs, the user outside still opens the
	 * real file for writing (the view's registration holds no write
	 * access), and the agent's open for writing gets ETXTBSY as natively. */
	assert_int_equal(sh(f, "cp /bin/sleep ./mysleep"), 0);
	pid_t pid = spawn_sh(f->dir, "exec ./mysleep 2");
	wd_autofree char *exe = wd_asprintf("/proc/%d/exe", (int)pid);
	char target[PATH_MAX] = "";
	for (int i = 0; i < 200 && !strstr(target, "mysleep"); i++) {
		ssize_t len = readlink(exe, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = '\0';
		if (!strstr(target, "mysleep"))
			usleep(25 * 1000);
	}
	assert_non_null(strstr(target, "mysleep"));
	wd_autofree char *p = vpath(f, "mysleep");
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, ETXTBSY);
	/* The host runs it too (sleep without an operand exits 1): the
	 * view's registration holds no write access that would refuse it. */
	assert_int_equal(host_exec(f, "mysleep"), 1);
	kill(pid, SIGKILL);
	wait_status(pid);
	fd = openat(f->real, "mysleep", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	/* The agent's open for writing holds write access to the real file
	 * (the kernel's backing open is the open's): the host's exec of it
	 * fails with ETXTBSY, as natively, and runs once it is closed. */
	wd_autofree char *t = vpath(f, "mytrue");
	int w = open(t, O_WRONLY | O_CLOEXEC);
	assert_true(w >= 0);
	assert_int_equal(host_exec(f, "mytrue"), ETXTBSY);
	close(w);
	/* The write access ends with the release the kernel sends after the
	 * close (asynchronously, as the view's own handle always did). */
	int rc = ETXTBSY;
	for (int i = 0; i < 100 && rc == ETXTBSY; i++) {
		rc = host_exec(f, "mytrue");
		if (rc == ETXTBSY)
			usleep(20 * 1000);
	}
	assert_int_equal(rc, 0);
}

/* A file whose backing registration fails (it lies on overlayfs, stacked
 * once already: the kernel answers ELOOP for max_stack_depth 1) is served
 * by the view instead, and reads and writes right, every open of it, while
 * other files still pass through. */
static void test_pt_fallback_served_by_view(void **state)
{
	struct fx *f = *state;
	char lower[128], upper[128], work[128], ov[64], opts[512];

	snprintf(lower, sizeof(lower), "%s-lo", f->dir);
	snprintf(upper, sizeof(upper), "%s-up", f->dir);
	snprintf(work, sizeof(work), "%s-wk", f->dir);
	snprintf(ov, sizeof(ov), "/proc/self/fd/%d/ov", f->real);
	assert_int_equal(mkdir(lower, 0755), 0);
	assert_int_equal(mkdir(upper, 0755), 0);
	assert_int_equal(mkdir(work, 0755), 0);
	assert_int_equal(mkdirat(f->real, "ov", 0755), 0);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
	if (mount("overlay", ov, "overlay", 0, opts) != 0) {
		fprintf(stderr, "test_pt_fallback_served_by_view: no overlayfs (%s)\n",
			strerror(errno));
		skip();
	}
	int fd = openat(f->real, "ov/data.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(wd_write_all(fd, "on overlay\n", 11), 0);
	close(fd);

	uint64_t failed = pt_status(f).failed;
	wd_autofree char *t = read_view(f, "ov/data.txt");
	assert_non_null(t);
	assert_string_equal(t, "on overlay\n");
	assert_true(pt_status(f).failed > failed);
	assert_int_equal(pt_status(f).last_err, ELOOP);
	/* Two opens at once (the second follows the first's mode), a write
	 * and a read back. */
	wd_autofree char *p = vpath(f, "ov/data.txt");
	int a = open(p, O_RDONLY | O_CLOEXEC), b = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	char buf[32] = {0};
	assert_true(a >= 0 && b >= 0);
	assert_int_equal(write(b, "more\n", 5), 5);
	assert_int_equal(pread(a, buf, sizeof(buf) - 1, 0), 16);
	assert_string_equal(buf, "on overlay\nmore\n");
	close(a);
	close(b);
	/* Other files still pass through. */
	put_real(f, "plain.txt", "plain\n");
	uint64_t before = pt_status(f).opens;
	wd_autofree char *q = read_view(f, "plain.txt");
	assert_string_equal(q, "plain\n");
	assert_true(pt_status(f).opens > before);
	assert_int_equal(umount2(ov, MNT_DETACH), 0);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s'", lower, upper, work);
	assert_int_equal(system(cmd), 0);
}

/* Passthrough changes no decision: a sensitive file's open is still
 * asked (and refused), .warden/ and a review's view refuse writes at
 * open, so nothing reaches the backing file; an allowed sensitive open
 * passes through. */
static void test_pt_decisions_kept(void **state)
{
	struct fx *f = *state;

	g_dec.verdict = -EACCES;
	assert_int_not_equal(sh(f, "cat .env"), 0);
	assert_true(find_record(".env") >= 0);
	assert_int_not_equal(sh(f, "echo x >> .warden/permissions.json"), 0);
	wd_autofree char *perm = NULL;
	assert_int_equal(read_real(f, ".warden/permissions.json", &perm), 0);
	assert_string_equal(perm, "{}\n");
	/* A read-only open that passed through cannot be turned into a
	 * writer: write(2), a shared writable mapping and F_SETFL are the
	 * open's, not the backing file's. */
	wd_autofree char *pp = vpath(f, ".warden/permissions.json");
	uint64_t ro = pt_status(f).opens;
	int fd = open(pp, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(pt_status(f).opens > ro);
	assert_int_equal(write(fd, "x", 1), -1);
	assert_int_equal(errno, EBADF);
	assert_true(mmap(NULL, 3, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	assert_int_equal(errno, EACCES);
	assert_int_equal(fcntl(fd, F_SETFL, O_APPEND), 0);
	assert_int_equal(write(fd, "x", 1), -1);
	close(fd);
	free(perm);
	perm = NULL;
	assert_int_equal(read_real(f, ".warden/permissions.json", &perm), 0);
	assert_string_equal(perm, "{}\n");

	g_dec.verdict = 0;
	uint64_t before = pt_status(f).opens;
	int asked = records();
	assert_int_equal(sh(f, "test \"$(cat .env)\" = API_KEY=s3cr3t"), 0);
	assert_true(records() > asked);
	assert_true(pt_status(f).opens > before);
}

static void test_pt_read_only(void **state)
{
	struct fx *f = *state;
	wd_autofree char *t = NULL;

	assert_true(pt_status(f).on);
	wd_autofree char *r = read_view(f, "README");
	assert_string_equal(r, "hello view\n");
	assert_int_not_equal(sh(f, "echo x >> README"), 0);
	assert_int_equal(read_real(f, "README", &t), 0);
	assert_string_equal(t, "hello view\n");
	assert_true(pt_status(f).opens >= 1);
}

/* Without the flag the view negotiates nothing: the old path. */
static void test_pt_off_without_flag(void **state)
{
	struct fx *f = *state;
	struct sbx_view_pt_status s = pt_status(f);

	wd_autofree char *r = read_view(f, "README");
	assert_string_equal(r, "hello view\n");
	s = pt_status(f);
	assert_false(s.on);
	assert_non_null(s.why);
	assert_int_equal(s.opens, 0);
}

/* 0 when the kernel offers FUSE passthrough (a probe mount), else 77. */
static int kernel_has_passthrough(void)
{
	struct sbx_pt_probe pr;

	sbx_pt_probe(&pr);
	if (pr.init_offered)
		return 0;
	fprintf(stderr, "test_view_pt: skipped: %s\n", pr.why);
	return 77;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pt_big_read_and_mmap, setup_pt, teardown),
		cmocka_unit_test_setup_teardown(test_pt_writes_land, setup_pt, teardown),
		cmocka_unit_test_setup_teardown(test_pt_outside_edit_read_fresh, setup_pt,
						teardown),
		cmocka_unit_test_setup_teardown(test_pt_reader_and_writer, setup_pt, teardown),
		cmocka_unit_test_setup_teardown(test_pt_exec, setup_pt, teardown),
		cmocka_unit_test_setup_teardown(test_pt_fallback_served_by_view, setup_pt,
						teardown),
		cmocka_unit_test_setup_teardown(test_pt_decisions_kept, setup_pt, teardown),
		cmocka_unit_test_setup_teardown(test_pt_read_only, setup_pt_ro, teardown),
		cmocka_unit_test_setup_teardown(test_pt_off_without_flag, setup, teardown),
	};
	int rc = can_run();

	if (rc)
		return rc;
	if ((rc = kernel_has_passthrough()) != 0)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
