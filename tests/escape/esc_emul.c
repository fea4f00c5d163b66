/*
 * esc_emul: the agent of test_esc_emul. Plain system calls, no exec.
 *
 *   esc_emul script DIR [nocaps] [nowhiteout]
 *                              runs the differential script in DIR (a
 *                              fixture made by the driver) and prints one
 *                              line per call: "NAME errno" (0: success).
 *                              "nocaps" first drops every capability and
 *                              sets NO_NEW_PRIVS, which makes a native run
 *                              the agent (uid 0 without capabilities).
 *   esc_emul cross DIR [nocaps] renames and links between the fast subtrees
 *                              of the driver's fixture in DIR, and onto
 *                              fast roots: "NAME errno", the state, then
 *                              the calls that still differ; to stderr, which
 *                              of them is a mount root ("layout NAME 0|1").
 *   esc_emul procself          names through /proc/self, /proc/thread-self
 *                              and /dev/fd, which must not reach the
 *                              supervisor's descriptors: "NAME errno".
 *   esc_emul setid             set-id modes: "NAME errno".
 *   esc_emul mv A B            rename(A, B): "rename errno".
 *   esc_emul ops OP... -- each OP one of "mv A B", "ln A B", "sym T B",
 *                              "rm A", "rmdir A", "trunc A": "OP A errno";
 *                              also "lnL A B" (linkat AT_SYMLINK_FOLLOW),
 *                              "xchg A B" (RENAME_EXCHANGE), "openw A"
 *                              (open for writing, then ftruncate to 0, as
 *                              truncate(1) does), "otrunc A" (O_TRUNC, as
 *                              a shell's "> A" does), "step N" (prints
 *                              "STEP N" and waits for the file goN),
 *                              "sh CMD" (system(CMD): "sh CMD status"),
 *                              "isroot A" (A is a mount's root: 1 or 0),
 *                              "cd A" (chdir).
 *   esc_emul race A B C N      one thread renames A to a buffer that
 *                              another thread flips between B and C, N
 *                              times (each success renamed back to A);
 *                              prints "race ok X refused Y other Z
 *                              flipped-seen W" and "ESCAPE C" when a
 *                              rename made C.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE	 (1 << 1)
#endif

static int line_no;

static void out(const char *name, long rc)
{
	int e = rc < 0 ? errno : 0;
	printf("%03d %s %s\n", ++line_no, name, e ? strerrorname_np(e) : "0");
	fflush(stdout);
}

#define DO(name, call) out(name, (long)(call))

static void drop_caps(void)
{
	for (int c = 0; c <= 63; c++)
		prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("drop caps");
		exit(2);
	}
}

static long r2(const char *a, const char *b, unsigned flags)
{
	return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, flags);
}

static int mkfile(const char *p)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		(void)!write(fd, "data\n", 5);
		close(fd);
	}
	return fd < 0 ? -1 : 0;
}

static void script(bool whiteout)
{
	char cwd[4096], abs1[4200], abs2[4200];
	if (!getcwd(cwd, sizeof(cwd)))
		exit(2);
	struct statx sx;
	bool root = statx(AT_FDCWD, ".", 0, STATX_BASIC_STATS, &sx) == 0 &&
		    (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	fprintf(stderr, "layout fx %d\n", root ? 1 : 0);
	int dfd = open("d", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int ffd = open("file", O_RDONLY | O_CLOEXEC);
	char longname[300], toolong[5000];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	memset(toolong, 'a', sizeof(toolong) - 1);
	toolong[sizeof(toolong) - 1] = '\0';

	/* rename and renameat2 */
	DO("rename", rename("file", "file2"));
	DO("rename-back", rename("file2", "file"));
	DO("noreplace-exists", r2("d/f1", "d/f2", RENAME_NOREPLACE));
	DO("noreplace-new", r2("d/f1", "d/f9", RENAME_NOREPLACE));
	DO("noreplace-back", r2("d/f9", "d/f1", RENAME_NOREPLACE));
	DO("exchange", r2("d/f1", "d/f2", RENAME_EXCHANGE));
	DO("exchange-missing", r2("d/f1", "d/none", RENAME_EXCHANGE));
	DO("exchange-dir-file", r2("empty", "file", RENAME_EXCHANGE));
	DO("exchange-back", r2("file", "empty", RENAME_EXCHANGE));
	DO("rename2-badflags", r2("file", "x", 0x80));
	DO("rename2-both", r2("file", "x", RENAME_NOREPLACE | RENAME_EXCHANGE));
	DO("rename-notempty", rename("empty", "full"));
	DO("rename-dir-over-dir", rename("empty", "empty2"));
	DO("rename-dir-back", rename("empty2", "empty"));
	DO("rename-file-over-dir", rename("file", "empty"));
	DO("rename-dir-over-file", rename("empty", "file"));
	DO("rename-trailing-file", rename("file/", "x"));
	DO("rename-trailing-dir", rename("empty/", "empty3/"));
	DO("rename-trailing-back", rename("empty3", "empty"));
	DO("rename-dot", rename(".", "x"));
	DO("rename-dotdot", rename("d/..", "x"));
	DO("rename-to-dot", rename("file", "d/."));
	DO("rename-into-self", rename("empty", "empty/sub"));
	DO("rename-missing", rename("none", "x"));
	DO("rename-missing-dir", rename("file", "none/x"));
	DO("rename-same", rename("file", "file"));
	DO("rename-hardlinks-same", rename("file", "file"));
	DO("rename-via-symlinked-dir", rename("ldir/f2", "ldir/f3"));
	DO("rename-via-symlinked-back", rename("ldir/f3", "ldir/f2"));
	DO("rename-symlink-itself", rename("ldir", "ldir2"));
	DO("rename-symlink-back", rename("ldir2", "ldir"));
	DO("rename-symlink-trailing", rename("ldir/", "ldir3"));
	snprintf(abs1, sizeof(abs1), "%s/file", cwd);
	snprintf(abs2, sizeof(abs2), "%s/file4", cwd);
	DO("rename-absolute", rename(abs1, abs2));
	DO("rename-absolute-back", rename(abs2, abs1));
	DO("renameat-dirfd", syscall(SYS_renameat, dfd, "f2", AT_FDCWD, "f2-top"));
	DO("renameat-dirfd-back", syscall(SYS_renameat, AT_FDCWD, "f2-top", dfd, "f2"));
	DO("renameat-badfd", syscall(SYS_renameat, 999, "f2", AT_FDCWD, "x"));
	DO("renameat-badfd-abs", syscall(SYS_renameat, 999, abs1, 999, abs2));
	DO("renameat-badfd-abs-back", syscall(SYS_renameat, 999, abs2, 999, abs1));
	DO("renameat-filefd", syscall(SYS_renameat, ffd, "x", AT_FDCWD, "y"));
	DO("renameat-negfd", syscall(SYS_renameat, -5, "f2", AT_FDCWD, "x"));
	DO("rename-efault", syscall(SYS_rename, (char *)8, "x"));
	DO("rename-efault2", syscall(SYS_rename, "file", NULL));
	DO("rename-toolong", rename(toolong, "x"));
	DO("rename-longname", rename("file", longname));
	DO("rename-empty", rename("", "x"));
	DO("rename-exdev", rename("file", "/dev/shm/esc-emul-x"));
	DO("rename-sticky", rename("sticky/other", "sticky/o2"));
	DO("rename-ro", rename("ro/x", "ro/y"));
	DO("rename-out-of-ro", rename("ro/x", "moved"));

	/* unlink, unlinkat, rmdir */
	DO("unlink-dir", unlink("empty"));
	DO("unlink-missing", unlink("none"));
	DO("unlink-trailing", unlink("file/"));
	DO("unlink-sticky", unlink("sticky/other"));
	DO("unlink-sticky-own", unlink("sticky/mine"));
	DO("unlink-ro", unlink("ro/x"));
	DO("unlink-dot", unlink("."));
	DO("unlinkat-badflags", unlinkat(AT_FDCWD, "file", 0x1000));
	DO("unlinkat-removedir-file", unlinkat(AT_FDCWD, "file", AT_REMOVEDIR));
	DO("unlinkat-dirfd", unlinkat(dfd, "f1", 0));
	DO("recreate", mkfile("d/f1"));
	DO("unlinkat-filefd", unlinkat(ffd, "x", 0));
	DO("unlinkat-badfd", unlinkat(999, "x", 0));
	DO("unlinkat-badfd-abs", unlinkat(999, "/nonexistent-esc-emul", 0));
	DO("unlinkat-symlinked-dir", unlinkat(AT_FDCWD, "ldir", AT_REMOVEDIR));
	DO("rmdir-file", rmdir("file"));
	DO("rmdir-full", rmdir("full"));
	DO("rmdir-dot", rmdir("."));
	DO("rmdir-dotdot", rmdir(".."));
	DO("rmdir-d-dot", rmdir("empty/."));
	DO("rmdir-symlink", rmdir("ldir"));
	DO("rmdir-trailing-symlink", rmdir("ldir/"));
	DO("rmdir-missing", rmdir("none"));
	DO("rmdir-empty", rmdir("empty"));
	DO("mkdir-again", mkdir("empty", 0755));
	DO("unlinkat-removedir", unlinkat(AT_FDCWD, "empty", AT_REMOVEDIR));
	DO("mkdir-again2", mkdir("empty", 0755));
	DO("unlink-efault", syscall(SYS_unlink, (char *)8));
	DO("unlink-null", syscall(SYS_unlink, NULL));
	DO("unlinkat-empty", unlinkat(AT_FDCWD, "", 0));

	/* link, linkat */
	DO("link", link("file", "d/hard"));
	DO("link-exists", link("file", "d/hard"));
	DO("link-dir", link("empty", "x"));
	DO("link-missing", link("none", "x"));
	DO("link-symlink-nofollow", linkat(AT_FDCWD, "lf", AT_FDCWD, "lk", 0));
	DO("link-symlink-follow", linkat(AT_FDCWD, "lf", AT_FDCWD, "lk2", AT_SYMLINK_FOLLOW));
	DO("link-symlink-dir-follow", linkat(AT_FDCWD, "ldir", AT_FDCWD, "lk3", AT_SYMLINK_FOLLOW));
	DO("linkat-badflags", linkat(AT_FDCWD, "file", AT_FDCWD, "x", 0x8));
	DO("linkat-dirfd", linkat(dfd, "f1", dfd, "f1-hard", 0));
	DO("linkat-empty-noflag", linkat(ffd, "", AT_FDCWD, "x", 0));
	DO("link-protected", link("hl/secret", "hs"));
	DO("link-protected-readable", link("hl/public", "hp"));
	DO("link-exdev", link("file", "/dev/shm/esc-emul-x"));
	DO("link-into-ro", link("file", "ro/new"));
	DO("link-trailing", link("file", "x/"));
	DO("link-efault", syscall(SYS_link, "file", (char *)8));

	/* symlink, symlinkat */
	DO("symlink", symlink("target", "sl"));
	DO("symlink-exists", symlink("x", "sl"));
	DO("symlinkat-dirfd", symlinkat("t", dfd, "s2"));
	DO("symlink-missing-dir", symlink("x", "none/s"));
	DO("symlink-empty-target", symlink("", "s3"));
	DO("symlink-into-ro", symlink("x", "ro/s"));
	DO("symlinkat-badfd", symlinkat("x", 999, "s4"));
	DO("symlink-trailing", symlink("x", "s5/"));
	DO("symlink-toolong-target", symlink(toolong, "s6"));

	/* truncate */
	DO("truncate", truncate("file", 3));
	DO("truncate-dir", truncate("empty", 0));
	DO("truncate-missing", truncate("none", 0));
	DO("truncate-negative", truncate("file", -1));
	DO("truncate-ro", truncate("ro/x", 0));
	DO("truncate-symlinked-dir", truncate("ldir/f2", 1));
	DO("truncate-symlink", truncate("lf", 2));
	DO("truncate-trailing", truncate("file/", 0));
	DO("truncate-absolute", truncate(abs1, 4));
	DO("truncate-dotdot", truncate("d/../file", 5));
	/* last: it leaves a whiteout (a character device) in its place; the
	 * FUSE view does not offer it (EINVAL) */
	if (whiteout)
		DO("rename2-whiteout", r2("file", "whiteout-moved", 1 << 2));

	/* the final state, so that a call that succeeded with another
	 * effect shows */
	struct stat st;
	const char *names[] = {"file",	    "d/f1",    "d/f2",	     "d/hard", "lk",
			       "lk2",	    "sl",      "d/s2",	     "empty",  "full/x",
			       "d/f1-hard", "ldir/f2", "sticky/mine"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (lstat(names[i], &st) == 0)
			printf("state %s mode %o size %lld nlink %lu\n", names[i],
			       (unsigned)st.st_mode, (long long)st.st_size,
			       (unsigned long)st.st_nlink);
		else
			printf("state %s absent\n", names[i]);
	}
	unlink("/dev/shm/esc-emul-x");
}

static void state_of(const char *const *names, size_t n)
{
	struct stat st;
	for (size_t i = 0; i < n; i++) {
		if (lstat(names[i], &st) == 0)
			printf("state %s mode %o size %lld nlink %lu\n", names[i],
			       (unsigned)st.st_mode, (long long)st.st_size,
			       (unsigned long)st.st_nlink);
		else
			printf("state %s absent\n", names[i]);
	}
}

/* Between fast subtrees (fa, fb: two mounts of one file system) every
 * call answers as natively; a fast root (fc, fd, fe, ff: their parent is
 * the FUSE part) replaced, exchanged or removed answers as natively too.
 * The calls after the state are the ones that still differ. */
static void cross(void)
{
	const char *roots[] = {"fa", "fb", "fc", "fd", "fe", "ff", "top"};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		struct statx sx;
		bool root = statx(AT_FDCWD, roots[i], AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS,
				  &sx) == 0 &&
			    (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
		fprintf(stderr, "layout %s %d\n", roots[i], root ? 1 : 0);
	}
	int fa = open("fa", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fb = open("fb", O_PATH | O_DIRECTORY | O_CLOEXEC);
	DO("x-rename", rename("fa/f", "fb/f"));
	DO("x-rename-back", rename("fb/f", "fa/f"));
	DO("x-rename-dir", rename("fa/sub", "fb/sub"));
	DO("x-rename-dir-back", rename("fb/sub", "fa/sub"));
	DO("x-noreplace-exists", r2("fa/f", "fb/g", RENAME_NOREPLACE));
	DO("x-exchange", r2("fa/f", "fb/g", RENAME_EXCHANGE));
	DO("x-exchange-back", r2("fb/g", "fa/f", RENAME_EXCHANGE));
	DO("x-exchange-missing", r2("fa/f", "fb/none", RENAME_EXCHANGE));
	DO("x-rename-over", rename("fa/f2", "fb/g"));
	DO("x-rename-notempty", rename("fa/sub", "fb/full"));
	DO("x-rename-file-over-dir", rename("fa/f", "fb/full"));
	DO("x-rename-missing", rename("fa/none", "fb/x"));
	DO("x-rename-into-ro", rename("fa/f", "fb/ro/f"));
	DO("x-rename-out-of-ro", rename("fb/ro/x", "fa/x"));
	DO("x-rename-sticky", rename("fa/sticky/other", "fb/o"));
	DO("x-rename-trailing", rename("fa/f/", "fb/x"));
	DO("x-renameat-dirfd", syscall(SYS_renameat, fa, "f", fb, "f3"));
	DO("x-renameat-dirfd-back", syscall(SYS_renameat, fb, "f3", fa, "f"));
	DO("x-rename-via-symlink", rename("fa/tob/g", "fa/g-via"));
	DO("x-rename-via-symlink-back", rename("fa/g-via", "fa/tob/g"));
	char cwd[4096], abs1[4200], abs2[4200];
	if (!getcwd(cwd, sizeof(cwd)))
		exit(2);
	snprintf(abs1, sizeof(abs1), "%s/fa/f", cwd);
	snprintf(abs2, sizeof(abs2), "%s/fb/f-abs", cwd);
	DO("x-rename-absolute", rename(abs1, abs2));
	DO("x-rename-absolute-back", rename(abs2, abs1));
	DO("x-link", link("fa/f", "fb/hard"));
	DO("x-link-exists", link("fa/f", "fb/hard"));
	DO("x-link-dir", link("fa/sub", "fb/sublink"));
	DO("x-link-missing", link("fa/none", "fb/x"));
	DO("x-link-protected", link("fa/theirs", "fb/t"));
	DO("x-link-symlink-nofollow", linkat(AT_FDCWD, "fa/lf", AT_FDCWD, "fb/lk", 0));
	DO("x-link-follow-file", linkat(AT_FDCWD, "fa/f", AT_FDCWD, "fb/lk2", AT_SYMLINK_FOLLOW));
	DO("x-link-into-ro", link("fa/f", "fb/ro/h"));
	DO("x-linkat-dirfd", linkat(fa, "f", fb, "hard2", 0));
	DO("root-rename-over-empty", rename("top/e1", "fc"));
	DO("root-rename-notempty", rename("top/e2", "fd"));
	DO("root-exchange", r2("top/e3", "fe", RENAME_EXCHANGE));
	DO("root-rmdir-notempty", rmdir("ff"));
	const char *names[] = {
		"fa/f",	    "fb/f",  "fa/sub/x", "fb/sub", "fb/g",     "fa/f2", "fb/hard",
		"fb/hard2", "fb/lk", "fb/lk2",	 "fb/f3",  "fb/ro/x",  "fa/x",	"fc",
		"top/e1",   "fd/z",  "top/e2",	 "fe/w",   "top/e3/v", "ff/q",	"fa/sticky/other"};
	state_of(names, sizeof(names) / sizeof(names[0]));
	/* What still differs: fast <-> FUSE part, and a symlink followed
	 * across fast subtrees. */
	DO("d-rename-fast-to-fuse", rename("fa/f4", "top/f4"));
	DO("d-link-fast-to-root", link("fa/f", "rootlink"));
	DO("d-link-follow-symlink",
	   linkat(AT_FDCWD, "fa/lf", AT_FDCWD, "fb/lk3", AT_SYMLINK_FOLLOW));
}

static void procself(void)
{
	mkfile("victim");
	int fd = open("victim", O_RDWR | O_CLOEXEC);
	int dfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char p[128];
	snprintf(p, sizeof(p), "/proc/self/fd/%d/victim", dfd);
	DO("unlink-proc-self-dirfd", unlink(p));
	snprintf(p, sizeof(p), "/dev/fd/%d/victim", dfd);
	DO("unlink-dev-fd-dirfd", unlink(p));
	snprintf(p, sizeof(p), "/proc/thread-self/fd/%d/victim", dfd);
	DO("rename-thread-self", rename(p, "x"));
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	DO("truncate-proc-self-fd", truncate(p, 0));
	DO("link-proc-self-fd", linkat(AT_FDCWD, p, AT_FDCWD, "lnk", AT_SYMLINK_FOLLOW));
	/* The supervisor's own low descriptors (its listener, its audit) by
	 * number: never reached. */
	for (int n = 3; n < 12; n++) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", n);
		char name[32];
		snprintf(name, sizeof(name), "truncate-fd-%d", n);
		DO(name, truncate(p, 0));
	}
	DO("rename-proc-self-cwd", rename("/proc/self/cwd/victim", "x"));
	DO("linkat-empty-path", linkat(fd, "", AT_FDCWD, "lnk2", AT_EMPTY_PATH));
	struct stat st;
	printf("victim size %lld\n", stat("victim", &st) == 0 ? (long long)st.st_size : -1LL);
}

/* The racing mode: |buf| is flipped between the names |b| and |c| by a
 * second thread while the first one renames |a| to it. */
static char race_buf[PATH_MAX];
static atomic_bool race_stop;
static const char *race_b, *race_c;

static void *flipper(void *p)
{
	(void)p;
	size_t nb = strlen(race_b) + 1, nc = strlen(race_c) + 1;
	while (!atomic_load_explicit(&race_stop, memory_order_relaxed)) {
		memcpy(race_buf, race_c, nc);
		for (volatile int i = 0; i < 50; i++)
			;
		memcpy(race_buf, race_b, nb);
		for (volatile int i = 0; i < 50; i++)
			;
	}
	return NULL;
}

/* The one entry of |dir| (the race's directory holds only the file that
 * moves), in |name|; false when there is not exactly one. */
static bool only_entry(const char *dir, char *name, size_t len)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	int n = 0;
	for (struct dirent *de; (de = readdir(d));) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n++ == 0)
			snprintf(name, len, "%s/%s", dir, de->d_name);
	}
	closedir(d);
	return n == 1;
}

static int race(const char *a, const char *b, const char *c, long n)
{
	race_b = b;
	race_c = c;
	memcpy(race_buf, b, strlen(b) + 1);
	char dir[PATH_MAX], where[PATH_MAX + 256];
	snprintf(dir, sizeof(dir), "%s", a);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return 2;
	*slash = '\0';
	pthread_t t;
	if (pthread_create(&t, NULL, flipper, NULL) != 0)
		return 2;
	long ok = 0, refused = 0, other = 0;
	bool escaped = false;
	for (long i = 0; i < n && !escaped && other < 100; i++) {
		if (rename(a, race_buf) == 0) {
			ok++;
			/* Wherever it went (b, c, or a name torn between
			 * them): c only when the race was won. */
			if (access(c, F_OK) == 0)
				escaped = true;
			else if (!only_entry(dir, where, sizeof(where)) || rename(where, a) != 0)
				other++;
		} else if (errno == EACCES) {
			refused++;
		} else {
			other++;
		}
	}
	atomic_store(&race_stop, true);
	pthread_join(t, NULL);
	printf("race ok %ld refused %ld other %ld\n", ok, refused, other);
	if (escaped || access(c, F_OK) == 0)
		printf("ESCAPE %s\n", c);
	fflush(stdout);
	return 0;
}

static void setid(void)
{
	mkfile("f");
	mkdir("dir", 0755);
	DO("chmod-u+s", chmod("f", 04755));
	DO("chmod-g+s", chmod("f", 02755));
	DO("chmod-dir-g+s", chmod("dir", 02755));
	DO("chmod-plain", chmod("f", 0700));
	int fd = open("f", O_RDONLY | O_CLOEXEC);
	DO("fchmod-u+s", fchmod(fd, 04755));
	DO("fchmodat-u+s", fchmodat(AT_FDCWD, "f", 04755, 0));
	DO("fchmodat2-u+s", syscall(452, AT_FDCWD, "f", 04755, 0));
	DO("open-creat-suid", open("g", O_WRONLY | O_CREAT | O_CLOEXEC, 04755));
	DO("openat-creat-sgid", openat(AT_FDCWD, "h", O_WRONLY | O_CREAT | O_CLOEXEC, 02755));
	DO("open-nocreat-mode-ignored", open("f", O_RDONLY | O_CLOEXEC, 04755));
	DO("creat-suid", creat("i", 04755));
	DO("mkdir-sgid", mkdir("sg", 02775));
	DO("mkdirat-suid", mkdirat(AT_FDCWD, "su", 04755));
	DO("mknod-suid", mknod("fifo", S_IFIFO | 04644, 0));
	DO("mknodat-sgid", mknodat(AT_FDCWD, "fifo2", S_IFIFO | 02644, 0));
	DO("openat2", syscall(437, AT_FDCWD, "f", &(long long[3]){0, 0, 0}, 24));
	struct stat st;
	stat("f", &st);
	printf("f mode %o\n", (unsigned)(st.st_mode & 07777));
	printf("g %s\n", access("g", F_OK) == 0 ? "exists" : "absent");
	printf("sg %s\n", access("sg", F_OK) == 0 ? "exists" : "absent");
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "script") == 0 && argc > 2) {
		if (chdir(argv[2]) < 0)
			return 2;
		bool whiteout = true;
		for (int i = 3; i < argc; i++) {
			if (strcmp(argv[i], "nocaps") == 0)
				drop_caps();
			else if (strcmp(argv[i], "nowhiteout") == 0)
				whiteout = false;
		}
		script(whiteout);
	} else if (strcmp(argv[1], "cross") == 0 && argc > 2) {
		if (chdir(argv[2]) < 0)
			return 2;
		if (argc > 3 && strcmp(argv[3], "nocaps") == 0)
			drop_caps();
		cross();
	} else if (strcmp(argv[1], "ops") == 0) {
		for (int i = 2; i < argc; i++) {
			const char *op = argv[i], *a = i + 1 < argc ? argv[i + 1] : "",
				   *b = i + 2 < argc ? argv[i + 2] : "";
			char name[512];
			snprintf(name, sizeof(name), "%s %s", op, a);
			if (strcmp(op, "mv") == 0)
				DO(name, rename(a, b)), i += 2;
			else if (strcmp(op, "ln") == 0)
				DO(name, link(a, b)), i += 2;
			else if (strcmp(op, "sym") == 0)
				DO(name, symlink(a, b)), i += 2;
			else if (strcmp(op, "rm") == 0)
				DO(name, unlink(a)), i++;
			else if (strcmp(op, "rmdir") == 0)
				DO(name, rmdir(a)), i++;
			else if (strcmp(op, "trunc") == 0)
				DO(name, truncate(a, 0)), i++;
			else if (strcmp(op, "lnL") == 0)
				DO(name, linkat(AT_FDCWD, a, AT_FDCWD, b, AT_SYMLINK_FOLLOW)),
					i += 2;
			else if (strcmp(op, "xchg") == 0)
				DO(name, r2(a, b, RENAME_EXCHANGE)), i += 2;
			else if (strcmp(op, "openw") == 0 || strcmp(op, "otrunc") == 0) {
				bool t = op[1] == 't';
				int fd = open(a, O_WRONLY | O_CREAT | O_CLOEXEC | (t ? O_TRUNC : 0),
					      0644);
				if (fd >= 0 && !t && ftruncate(fd, 0) < 0) {
					int e = errno;
					close(fd);
					errno = e;
					fd = -1;
				}
				DO(name, fd);
				if (fd >= 0)
					close(fd);
				i++;
			} else if (strcmp(op, "sh") == 0) {
				int st = system(a);
				printf("%03d sh %s %d\n", ++line_no, a,
				       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
				fflush(stdout);
				i++;
			} else if (strcmp(op, "mkdirp") == 0) {
				/* mkdir -p, each component in turn */
				char path[512];
				snprintf(path, sizeof(path), "%s", a);
				long rc = 0;
				for (char *s = strchr(path + 1, '/'); s && rc == 0;
				     s = strchr(s + 1, '/')) {
					*s = '\0';
					if (mkdir(path, 0755) < 0 && errno != EEXIST)
						rc = -1;
					*s = '/';
				}
				if (rc == 0 && mkdir(path, 0755) < 0 && errno != EEXIST)
					rc = -1;
				DO(name, rc);
				i++;
			} else if (strcmp(op, "read") == 0) {
				/* prints what it read after the result */
				char buf[256] = "";
				int fd = open(a, O_RDONLY | O_CLOEXEC);
				DO(name, fd);
				if (fd >= 0) {
					ssize_t k = read(fd, buf, sizeof(buf) - 1);
					buf[k > 0 ? k : 0] = '\0';
					printf("content %s\n", buf);
					fflush(stdout);
					close(fd);
				}
				i++;
			} else if (strcmp(op, "sleep") == 0) {
				usleep((useconds_t)atoi(a) * 1000);
				i++;
			} else if (strcmp(op, "cd") == 0) {
				DO(name, chdir(a));
				i++;
			} else if (strcmp(op, "isroot") == 0) {
				struct statx sx;
				bool root = statx(AT_FDCWD, a, AT_SYMLINK_NOFOLLOW, 0, &sx) == 0 &&
					    (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
				printf("%03d isroot %s %d\n", ++line_no, a, root);
				fflush(stdout);
				i++;
			} else if (strcmp(op, "step") == 0 || strcmp(op, "stepin") == 0) {
				/* stepin DIR N: the go file in DIR, for a cwd
				 * elsewhere */
				bool in = op[4] == 'i';
				const char *n = in ? b : a;
				char go[600];
				printf("STEP %s\n", n);
				fflush(stdout);
				snprintf(go, sizeof(go), "%s%sgo%s", in ? a : "", in ? "/" : "", n);
				while (access(go, F_OK) != 0)
					usleep(20000);
				i += in ? 2 : 1;
			} else
				return 2;
		}
	} else if (strcmp(argv[1], "mv") == 0 && argc > 3) {
		DO("rename", rename(argv[2], argv[3]));
	} else if (strcmp(argv[1], "race") == 0 && argc > 5) {
		return race(argv[2], argv[3], argv[4], atol(argv[5]));
	} else if (strcmp(argv[1], "procself") == 0) {
		procself();
	} else if (strcmp(argv[1], "setid") == 0) {
		setid();
	} else {
		return 2;
	}
	return 0;
}
