/*
 * net.c: the network workloads of bench/run, over loopback.
 *
 *   net sink               listens on 127.0.0.1 (a free port, printed on
 *                          the first line of stdout) and reads every
 *                          connection to its end; runs until killed
 *   net connect PORT N     N connects to 127.0.0.1:PORT, one after the
 *                          other; prints "connects=N p50_us=X p99_us=Y"
 *                          (the time connect() takes, as the caller sees it)
 *   net bulk PORT MIB      one connect, then MIB MiB written in 1 MiB
 *                          writes; prints "bytes=B seconds=S" (S: the
 *                          transfer after the connect)
 *
 * Under warden the connects are decisions (the project config lists the
 * sink's address); what follows a connect is not, so bulk measures whether
 * an allowed connection runs at native speed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One thread, epoll: accepts as fast as connections come (a listener that
 * fell behind would fill its backlog; the kernel would then drop SYNs and
 * the client wait a second for its retry), and reads each connection to
 * its end. */
static int sink(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = s};
	if (s < 0 || ep < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s, 4096) < 0 || getsockname(s, (struct sockaddr *)&a, &l) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev) < 0) {
		perror("net sink");
		return 1;
	}
	printf("%u\n", ntohs(a.sin_port));
	fflush(stdout);
	static char buf[1 << 20];
	struct epoll_event evs[64];
	for (;;) {
		int n = epoll_wait(ep, evs, 64, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("net sink: epoll_wait");
			return 1;
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == s) {
				int c;
				while ((c = accept4(s, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >=
				       0) {
					struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
					if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce) < 0)
						close(c);
				}
				continue;
			}
			ssize_t r;
			while ((r = read(fd, buf, sizeof(buf))) > 0) {
			}
			if (r == 0 || (errno != EAGAIN && errno != EINTR))
				close(fd); /* closing takes it out of the epoll set */
		}
	}
}

static int connect_to(unsigned port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "net: connect to 127.0.0.1:%u: %s\n", port, strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int connects(unsigned port, long n)
{
	double *t = calloc((size_t)n, sizeof(double));
	if (!t)
		return 1;
	for (long i = 0; i < n; i++) {
		double t0 = now_us();
		int s = connect_to(port);
		t[i] = now_us() - t0;
		if (s < 0) {
			free(t);
			return 1;
		}
		close(s);
	}
	qsort(t, (size_t)n, sizeof(double), cmp);
	printf("connects=%ld p50_us=%.1f p99_us=%.1f\n", n, t[n / 2], t[(n * 99) / 100]);
	free(t);
	return 0;
}

static int bulk(unsigned port, long mib)
{
	int s = connect_to(port);
	if (s < 0)
		return 1;
	double t0 = now_us(); /* the transfer alone, after the decided connect */
	char *buf = malloc(1 << 20);
	if (!buf)
		return 1;
	memset(buf, 'x', 1 << 20);
	long long total = 0;
	for (long i = 0; i < mib; i++) {
		size_t off = 0;
		while (off < (1u << 20)) {
			ssize_t w = write(s, buf + off, (1u << 20) - off);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				perror("net bulk: write");
				return 1;
			}
			off += (size_t)w;
			total += w;
		}
	}
	shutdown(s, SHUT_WR);
	char c;
	while (read(s, &c, 1) > 0) {
	}
	double secs = (now_us() - t0) / 1e6;
	close(s);
	free(buf);
	printf("bytes=%lld seconds=%.6f\n", total, secs);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "sink") == 0)
		return sink();
	if (argc == 4 && strcmp(argv[1], "connect") == 0)
		return connects((unsigned)atoi(argv[2]), atol(argv[3]));
	if (argc == 4 && strcmp(argv[1], "bulk") == 0)
		return bulk((unsigned)atoi(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: net sink | net connect PORT N | net bulk PORT MIB\n");
	return 2;
}
