/*
 * esc_bind: the agent side of test_esc_split_bind (directories made during
 * the session become fast subtrees). Run in the project's root:
 *
 *   esc_bind wait NAME...   mkdir each NAME (through the FUSE view), then
 *                           wait up to 5 s for the last one's mount and
 *                           print "BOUND name" / "FUSE name" for each
 *   esc_bind look NAME...   the same without the mkdir
 *   esc_bind race N TARGET  N rounds: mkdir rN, then move it into the
 *                           directory TARGET while the bind happens; then
 *                           prints "BAD path" for every mount of the
 *                           project at a path holding TARGET, and
 *                           "MOUNTS n" (mounts left at the race's names)
 *                           and "EBUSY n" (renames answered EBUSY)
 *   esc_bind exdev FROM TO  link() and rename() FROM to TO: prints the
 *                           errno of each ("link=18 rename=18")
 *
 * A name argument starting with "DOT" stands for "." and the rest, so that
 * the exec's own arguments name no sensitive or control path (the exec
 * rules would refuse the program before it runs).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char cwd[4096];

/* Whether the sandbox's mountinfo lists a mount at |rel| of the project;
 * with |bad|, prints every mount whose path holds |bad| and returns
 * their count, else counts mounts at paths starting with |rel|. */
static int scan(const char *rel, const char *bad, bool prefix)
{
	FILE *m = fopen("/proc/self/mountinfo", "re");
	if (!m)
		return -1;
	char line[8192];
	int n = 0;
	size_t cl = strlen(cwd);
	while (fgets(line, sizeof(line), m)) {
		char *p = line;
		for (int i = 0; i < 4 && p; i++) {
			p = strchr(p, ' ');
			if (p)
				p++;
		}
		if (!p)
			continue;
		char *e = strchr(p, ' ');
		if (e)
			*e = '\0';
		if (strncmp(p, cwd, cl) != 0 || p[cl] != '/')
			continue;
		const char *r = p + cl + 1;
		if (bad) {
			if (strstr(r, bad)) {
				printf("BAD %s\n", r);
				n++;
			}
		} else if (rel &&
			   (prefix ? strncmp(r, rel, strlen(rel)) == 0 : strcmp(r, rel) == 0)) {
			n++;
		}
	}
	fclose(m);
	return n;
}

static int cmd_wait(int argc, char **argv, bool make)
{
	for (int i = 0; i < argc && make; i++)
		if (mkdir(argv[i], 0755) < 0)
			printf("mkdir %s: %s\n", argv[i], strerror(errno));
	for (int t = 0; t < 500 && scan(argv[argc - 1], NULL, false) < 1; t++)
		usleep(10000);
	for (int i = 0; i < argc; i++)
		printf("%s %s\n", scan(argv[i], NULL, false) > 0 ? "BOUND" : "FUSE", argv[i]);
	return 0;
}

/* Busy-waits |us| microseconds (a sleep's wake-up is coarser). */
static void spin(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

/* Each round makes rN and moves it into the directory |target| after a
 * delay that sweeps the time the bind takes, so that some moves land
 * between the binder's check of the name and its attach. */
static int cmd_race(int rounds, const char *target)
{
	mkdir(target, 0755);
	int busy = 0;
	for (int i = 0; i < rounds; i++) {
		char name[64], to[4096];
		snprintf(name, sizeof(name), "r%d", i);
		snprintf(to, sizeof(to), "%s/%s", target, name);
		if (mkdir(name, 0755) < 0)
			continue;
		spin((i * 37) % 1500);
		if (rename(name, to) < 0 && errno == EBUSY)
			busy++;
	}
	/* The binder's queue drains: no more mounts appear. */
	for (int last = -1, t = 0; t < 40; t++) {
		int n = scan("r", NULL, true);
		if (n == last)
			break;
		last = n;
		usleep(250000);
	}
	int bad = scan(NULL, target, false);
	printf("MOUNTS %d\nBADS %d\nEBUSY %d\n", scan("r", NULL, true), bad, busy);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 2; i < argc; i++)
		if (strncmp(argv[i], "DOT", 3) == 0) {
			argv[i] += 2;
			argv[i][0] = '.';
		}
	if (!getcwd(cwd, sizeof(cwd)) || argc < 3)
		return 2;
	if (strcmp(argv[1], "wait") == 0)
		return cmd_wait(argc - 2, argv + 2, true);
	if (strcmp(argv[1], "look") == 0)
		return cmd_wait(argc - 2, argv + 2, false);
	if (strcmp(argv[1], "race") == 0 && argc == 4)
		return cmd_race(atoi(argv[2]), argv[3]);
	if (strcmp(argv[1], "exdev") == 0 && argc == 4) {
		int l = link(argv[2], argv[3]) < 0 ? errno : 0;
		int r = rename(argv[2], argv[3]) < 0 ? errno : 0;
		printf("link=%d rename=%d\n", l, r);
		return 0;
	}
	return 2;
}
