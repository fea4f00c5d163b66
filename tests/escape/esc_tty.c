/*
 * esc_tty: the agent of the terminal escapes. With plain syscalls (no
 * exec, nothing to decide) it looks for terminals under /dev/pts and
 * prints one line each:
 *
 *   TTYNAME=<ttyname of fd 0, or the errno's name>
 *   OWN=<whether /dev/pts/K, K its own terminal's number, opens as fd 0's inode>
 *   PTS=<the names in /dev/pts, sorted, comma-separated>
 *   HOST <path>=<what opening the host's pty |path| gave>
 *   PRIVATE=<what writing to the pty it made with the host pty's number gave>
 *   INIT <n>=<what opening init's descriptor n gave>
 *   END
 *
 * argv[1] is the number of a pty of the host that is not the agent's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARK "WARDEN_TTY_ESCAPE_a41c9e"

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char name[256];
	int rc = ttyname_r(0, name, sizeof(name));
	printf("TTYNAME=%s\n", rc == 0 ? name : strerrorname_np(rc));
	struct stat own, st;
	if (rc == 0 && fstat(0, &own) == 0) {
		int fd = open(name, O_RDWR | O_NOCTTY);
		bool same = fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == own.st_ino &&
			    st.st_dev == own.st_dev;
		printf("OWN=%s\n", same ? "same" : fd < 0 ? strerrorname_np(errno) : "other");
		if (fd >= 0)
			close(fd);
	}
	char *names[256];
	size_t n = 0;
	DIR *d = opendir("/dev/pts");
	struct dirent *e;
	while (d && (e = readdir(d)) && n < 256)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	if (d)
		closedir(d);
	qsort(names, n, sizeof(char *), cmp);
	printf("PTS=");
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? "," : "", names[i]);
	printf("\n");
	/* The host's other pty, by its name. */
	char host[64];
	snprintf(host, sizeof(host), "/dev/pts/%s", argv[1]);
	int fd = open(host, O_RDWR | O_NOCTTY);
	printf("HOST %s=%s\n", host, fd >= 0 ? "opened" : strerrorname_np(errno));
	if (fd >= 0) {
		(void)!write(fd, MARK "\n", strlen(MARK) + 1);
		close(fd);
	}
	/* Ptys of its own up to that number: the one that gets it is the
	 * sandbox's, and what is written there must not reach the host's. */
	unsigned want = (unsigned)strtoul(argv[1], NULL, 10);
	const char *res = "not reached";
	int masters[1100];
	size_t nm = 0;
	while (nm < 1100) {
		int m = posix_openpt(O_RDWR | O_NOCTTY);
		if (m < 0) {
			res = strerrorname_np(errno);
			break;
		}
		masters[nm++] = m;
		unsigned idx;
		if (grantpt(m) < 0 || unlockpt(m) < 0 || ioctl(m, TIOCGPTN, &idx) < 0) {
			res = strerrorname_np(errno);
			break;
		}
		if (idx < want)
			continue;
		if (idx == want) {
			int s = open(ptsname(m), O_RDWR | O_NOCTTY);
			if (s < 0) {
				res = strerrorname_np(errno);
			} else {
				res = write(s, MARK "\n", strlen(MARK) + 1) > 0 ? "wrote"
										: "nowrite";
				close(s);
			}
		}
		break;
	}
	printf("PRIVATE=%s\n", res);
	for (size_t i = 0; i < nm; i++)
		close(masters[i]);
	/* init keeps the masters that reserve the terminal's number. */
	for (int i = 3; i <= 6; i++) {
		char p[64];
		snprintf(p, sizeof(p), "/proc/1/fd/%d", i);
		int f = open(p, O_RDWR | O_NOCTTY);
		printf("INIT %d=%s\n", i, f >= 0 ? "opened" : strerrorname_np(errno));
		if (f >= 0)
			close(f);
	}
	printf("END\n");
	return 0;
}
