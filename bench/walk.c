/*
 * walk: the open-heavy workload of bench/run. Walks a directory tree and, for
 * every regular file, stats it, opens it, reads it to the end and closes it,
 * as a build or an editor indexing a project does. Prints the number of
 * files and bytes read so that a run that silently saw nothing (a view that
 * hid the tree) does not pass for a fast one.
 *
 * Usage: walk DIR
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: walk DIR\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "walk: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	struct tally t = {0};
	int64_t t0 = wd_now_mono_ns();
	walk(fd, &t);
	int64_t ns = wd_now_mono_ns() - t0;
	printf("files=%lu bytes=%llu errors=%lu seconds=%.6f\n", t.files, t.bytes, t.errors,
	       (double)ns / 1e9);
	return t.errors ? 1 : 0;
}
