/*
 * esc_review_split: the agent of test_esc_review_split. Plain system
 * calls, no exec. Run in the project's root; "src" is a fast subtree and
 * "fdir" a directory the FUSE view keeps (it holds a sensitive file).
 *
 *   esc_review_split detached  holds a descriptor of the fast root "src",
 *                              has its bind detached (rmdir "src"), then
 *                              renames and links a plain file of its own
 *                              to the control name "HEAD" through that
 *                              descriptor: "NAME errno" per call.
 *   esc_review_split deep      gives a plain file the control name
 *                              "HEAD" in a directory whose path is longer
 *                              than PATH_MAX (its name cannot be read
 *                              back from /proc), then renames that
 *                              directory up to "src/X": "NAME errno".
 *   esc_review_split mv A B    rename(A, B): "rename errno".
 *   esc_review_split ln A B    link(A, B): "link errno".
 *   esc_review_split swap SECS renames "lnk/payload" to "lnk/HEAD" while
 *                              another thread swaps the symlink "lnk"
 *                              between "fdir" (FUSE) and "src" (fast),
 *                              for at most SECS seconds or until a rename
 *                              succeeds: "swap tries N won W".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static void out(const char *name, long rc)
{
	int e = rc < 0 ? errno : 0;
	printf("%s %s\n", name, e ? strerrorname_np(e) : "0");
	fflush(stdout);
}

static int mkfile(const char *p, const char *text)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static void detached(void)
{
	/* Made through the fast mount: a plain name, allowed undecided. */
	out("mkfile", mkfile("src/payload", "#!/bin/sh\necho PLANTED\n"));
	int dfd = open("src", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	out("open-src", dfd);
	/* The fast root is the object of an rmdir: the emulation detaches
	 * its bind before the FUSE view refuses the rmdir (not empty). */
	out("rmdir-src", rmdir("src"));
	out("rename-HEAD", renameat(dfd, "payload", dfd, "HEAD"));
	out("mkdir-sub", mkdirat(dfd, "sub", 0755));
	out("link-sub-HEAD", linkat(dfd, "payload", dfd, "sub/HEAD", 0));
}

static void deep(void)
{
	out("mkfile", mkfile("src/payload", "ref: refs/heads/main\n"));
	char name[256];
	memset(name, 'd', 250);
	name[250] = '\0';
	int src = open("src", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int parent = -1, dir = src;
	/* 18 levels of 251 bytes: the deepest directory's path is longer
	 * than PATH_MAX. */
	for (int i = 0; i < 18 && dir >= 0; i++) {
		if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST)
			break;
		if (parent >= 0 && parent != src)
			close(parent);
		parent = dir;
		dir = openat(dir, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	out("deep-dir", dir);
	out("rename-deep-HEAD", renameat(AT_FDCWD, "src/payload", dir, "HEAD"));
	out("rename-up", renameat(parent, name, src, "X"));
}

static atomic_bool stop;

static void *swapper(void *arg)
{
	(void)arg;
	/* "lnk" and "lnk2" point at the two parts; each exchange flips
	 * where "lnk" leads. */
	while (!atomic_load(&stop))
		syscall(SYS_renameat2, AT_FDCWD, "lnk", AT_FDCWD, "lnk2", RENAME_EXCHANGE);
	return NULL;
}

static void swap(int secs)
{
	if (mkfile("src/payload", "#!/bin/sh\necho PLANTED\n") < 0 ||
	    mkfile("fdir/payload", "#!/bin/sh\necho PLANTED\n") < 0 || symlink("fdir", "lnk") < 0 ||
	    symlink("src", "lnk2") < 0) {
		perror("swap setup");
		exit(2);
	}
	pthread_t t;
	if (pthread_create(&t, NULL, swapper, NULL) != 0)
		exit(2);
	time_t end = time(NULL) + secs;
	long tries = 0, won = 0;
	while (time(NULL) < end && !won) {
		tries++;
		if (rename("lnk/payload", "lnk/HEAD") == 0)
			won++;
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	printf("swap tries %ld won %ld\n", tries, won);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "detached") == 0)
		detached();
	else if (argc > 3 && strcmp(argv[1], "mv") == 0)
		out("rename", rename(argv[2], argv[3]));
	else if (argc > 3 && strcmp(argv[1], "ln") == 0)
		out("link", link(argv[2], argv[3]));
	else if (argc > 1 && strcmp(argv[1], "deep") == 0)
		deep();
	else if (argc > 2 && strcmp(argv[1], "swap") == 0)
		swap(atoi(argv[2]));
	else
		return 2;
	return 0;
}
