/*
 * twin_open: two threads of one process open the same file at the same
 * moment (the same request from the same process while one is
 * pending joins it). Prints "open N: ok" or "open N: <errno>" for each.
 *
 *   twin_open PATH
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *path;

static void *opener(void *arg)
{
	long n = (long)arg;
	int fd = open(path, O_RDONLY);
	printf("open %ld: %s\n", n, fd >= 0 ? "ok" : strerror(errno));
	fflush(stdout);
	if (fd >= 0)
		close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: twin_open PATH\n");
		return 2;
	}
	path = argv[1];
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, opener, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
