/*
 * walk: the open-heavy workload of bench/run. Walks a directory tree and, for
 * every regular file, stats it, opens it, reads it to the end and closes it,
 * as a build or an editor indexing a project does. Prints the number of
 * files and bytes read so that a run that silently saw nothing (a view that
 * hid the tree) does not pass for a fast one.
 *
 * Usage: walk DIR [PASSES]   walks DIR PASSES times (default 1), one line
 *                            per pass; the second pass is the warm walk of
 *                            a session (the view has seen every file once)
 *        walk --write DIR N  creates N files of 1 KiB in directories of
 *                            100 under DIR, then deletes them all, as a
 *                            package manager's install does
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

struct tally {
	unsigned long files;
	unsigned long long bytes;
	unsigned long errors;
};

static void read_file(int dirfd, const char *name, struct tally *t)
{
	char buf[65536];
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		t->errors++;
		return;
	}
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		t->bytes += (unsigned long long)n;
	if (n < 0)
		t->errors++;
	close(fd);
	t->files++;
}

/* Walks the directory open at |dirfd| (takes ownership of it). */
static void walk(int dirfd, struct tally *t)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		t->errors++;
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			t->errors++;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, e->d_name,
					 O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
			if (sub < 0)
				t->errors++;
			else
				walk(sub, t);
		} else if (S_ISREG(st.st_mode)) {
			read_file(dirfd, e->d_name, t);
		}
	}
	closedir(d);
}

/* Creates |n| files of 1 KiB under |dir| (made, then removed with all it
 * holds), in directories of 100. Prints one line like a walk's. */
static int write_heavy(const char *dir, unsigned long n)
{
	char buf[1024], path[4096];
	memset(buf, 'w', sizeof(buf));
	int64_t t0 = wd_now_mono_ns();
	unsigned long errors = 0, made = 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "walk: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	for (unsigned long i = 0; i < n; i++) {
		if (i % 100 == 0) {
			snprintf(path, sizeof(path), "%s/d%05lu", dir, i / 100);
			if (mkdir(path, 0755) < 0)
				errors++;
		}
		snprintf(path, sizeof(path), "%s/d%05lu/f%07lu.js", dir, i / 100, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			errors++;
		else
			made++;
		if (fd >= 0)
			close(fd);
	}
	for (unsigned long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/d%05lu/f%07lu.js", dir, i / 100, i);
		if (unlink(path) < 0)
			errors++;
		if (i % 100 == 99 || i == n - 1) {
			snprintf(path, sizeof(path), "%s/d%05lu", dir, i / 100);
			if (rmdir(path) < 0)
				errors++;
		}
	}
	if (rmdir(dir) < 0)
		errors++;
	int64_t ns = wd_now_mono_ns() - t0;
	printf("written=%lu errors=%lu seconds=%.6f\n", made, errors, (double)ns / 1e9);
	return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--write") == 0)
		return write_heavy(argv[2], strtoul(argv[3], NULL, 10));
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: walk DIR [PASSES] | walk --write DIR N\n");
		return 2;
	}
	int passes = argc == 3 ? atoi(argv[2]) : 1;
	if (passes < 1)
		passes = 1;
	int rc = 0;
	for (int p = 1; p <= passes; p++) {
		int fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "walk: %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		struct tally t = {0};
		int64_t t0 = wd_now_mono_ns();
		walk(fd, &t);
		int64_t ns = wd_now_mono_ns() - t0;
		printf("pass=%d files=%lu bytes=%llu errors=%lu seconds=%.6f\n", p, t.files,
		       t.bytes, t.errors, (double)ns / 1e9);
		if (t.errors)
			rc = 1;
	}
	return rc;
}
