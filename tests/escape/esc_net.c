/*
 * esc_net: the agent side of the network escapes (test_esc_net). Each mode
 * tries to reach an IP destination and prints what happened; the driver
 * checks, on the listeners it made outside warden, what arrived.
 *
 *   connect 4|6 ADDR PORT   a TCP connect on an AF_INET (4) or AF_INET6 (6)
 *                           socket; on success sends "PWN"
 *   connect2 ADDR PORT      two TCP connects (AF_INET) in a row, one process
 *   nonblock ADDR PORT      the same, non-blocking: EINPROGRESS, then poll
 *   race IN OUT N           N connects to 127.0.0.1:IN while a thread flips
 *                           the port in the address to OUT
 *   udp 4|6 ADDR PORT N     N datagrams "PWN" by sendto
 *   sendmmsg P1 P2          one sendmmsg of a datagram to 127.0.0.1:P1 and
 *                           one to 127.0.0.1:P2
 *   udp_shm IN OUT N        a UDP socket connected to 127.0.0.1:IN sends N
 *                           datagrams by sendmsg with no name, its msghdr in
 *                           memory shared with a second process that flips
 *                           msg_name to 127.0.0.1:OUT and back (the caller
 *                           itself is single-threaded)
 *   fastopen ADDR PORT      sendto with MSG_FASTOPEN on a fresh TCP socket
 *                           (the kernel connects to the address it names)
 *   route PORT              source routes: setsockopt(IP_OPTIONS) with a loose
 *                           source route, setsockopt(IPV6_RTHDR) with a type 2
 *                           header, and a UDP sendmsg to 127.0.0.1:PORT with
 *                           an IP_RETOPTS control message
 *   socket DOMAIN TYPE PROTO  socket(2) with those numbers
 *   fd N                    writes "PWN" to descriptor N (inherited?)
 *   io_uring                io_uring_setup(2)
 *   udp_exec ADDR PORT      one datagram "PWN" by sendto (AF_INET), then
 *                           the same process execs esc_net udp 4 ADDR PORT 1
 *   spoof ADDR PORT         rewrites its own arguments in memory to read
 *                           "git fetch origin", then connects (AF_INET)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static socklen_t mkaddr(int fam, const char *addr, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (fam == 6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, addr, &a->sin6_addr) != 1)
			exit(2);
		return sizeof(*a);
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &a->sin_addr) != 1)
		exit(2);
	return sizeof(*a);
}

static int do_connect(int fam, const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t sl = mkaddr(fam, addr, port, &ss);
	int s = socket(fam == 6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
	if (s < 0) {
		printf("SOCKET errno=%d\n", errno);
		return 1;
	}
	if (connect(s, (struct sockaddr *)&ss, sl) < 0) {
		printf("REFUSED errno=%d\n", errno);
		return 1;
	}
	ssize_t n = write(s, "PWN", 3);
	printf("CONNECTED wrote=%zd\n", n);
	close(s);
	return 0;
}

static int nonblock(const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t sl = mkaddr(4, addr, port, &ss);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (connect(s, (struct sockaddr *)&ss, sl) == 0) {
		printf("NB at once\n");
	} else if (errno != EINPROGRESS) {
		printf("REFUSED errno=%d\n", errno);
		return 1;
	} else {
		printf("NB inprogress\n");
		struct pollfd p = {.fd = s, .events = POLLOUT};
		if (poll(&p, 1, 5000) != 1) {
			printf("NB timeout\n");
			return 1;
		}
		int err = 0;
		socklen_t l = sizeof(err);
		getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &l);
		if (err) {
			printf("NB error=%d\n", err);
			return 1;
		}
	}
	ssize_t n = write(s, "PWN", 3);
	printf("NB connected wrote=%zd\n", n);
	close(s);
	return 0;
}

static struct sockaddr_in shared;
static atomic_int stop;
static int race_in, race_out;

static void *flipper(void *arg)
{
	(void)arg;
	/* Each port held for a while, so that a read at any moment (the
	 * decision's, the kernel's) sees either about as often. */
	while (!atomic_load(&stop)) {
		*(volatile in_port_t *)&shared.sin_port = htons((uint16_t)race_out);
		for (volatile int i = 0; i < 20000; i++)
			;
		*(volatile in_port_t *)&shared.sin_port = htons((uint16_t)race_in);
		for (volatile int i = 0; i < 20000; i++)
			;
	}
	return NULL;
}

static int race(int in, int out, int n)
{
	race_in = in;
	race_out = out;
	shared.sin_family = AF_INET;
	shared.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	shared.sin_port = htons((uint16_t)in);
	pthread_t t;
	pthread_create(&t, NULL, flipper, NULL);
	int ok = 0, refused = 0;
	for (int i = 0; i < n; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(s, (struct sockaddr *)&shared, sizeof(shared)) == 0)
			ok++;
		else
			refused++;
		close(s);
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("RACE ok=%d refused=%d\n", ok, refused);
	return 0;
}

static int udp(int fam, const char *addr, int port, int n)
{
	struct sockaddr_storage ss;
	socklen_t sl = mkaddr(fam, addr, port, &ss);
	int s = socket(fam == 6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
	int sent = 0, err = 0;
	for (int i = 0; i < n; i++) {
		if (sendto(s, "PWN", 3, 0, (struct sockaddr *)&ss, sl) == 3)
			sent++;
		else
			err = errno;
	}
	printf("UDP sent=%d errno=%d\n", sent, err);
	return sent == n ? 0 : 1;
}

static int mmsg(int p1, int p2)
{
	struct sockaddr_in a[2];
	struct iovec iov[2] = {{.iov_base = "one", .iov_len = 3},
			       {.iov_base = "two", .iov_len = 3}};
	struct mmsghdr m[2];
	memset(m, 0, sizeof(m));
	for (int i = 0; i < 2; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].sin_family = AF_INET;
		a[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a[i].sin_port = htons((uint16_t)(i ? p2 : p1));
		m[i].msg_hdr.msg_name = &a[i];
		m[i].msg_hdr.msg_namelen = sizeof(a[i]);
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	int rc = sendmmsg(s, m, 2, 0);
	printf("MMSG rc=%d errno=%d\n", rc, rc < 0 ? errno : 0);
	return 0;
}

/* What the two processes share: the message header and its parts. */
struct shm {
	struct msghdr mh;
	struct sockaddr_in out;
	struct iovec iov;
	char data[4];
	atomic_int stop;
};

static int udp_shm(int in, int out, int n)
{
	struct shm *m =
		mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 2;
	memset(m, 0, sizeof(*m));
	memcpy(m->data, "PWN", 3);
	m->iov.iov_base = m->data;
	m->iov.iov_len = 3;
	m->mh.msg_iov = &m->iov;
	m->mh.msg_iovlen = 1;
	m->out.sin_family = AF_INET;
	m->out.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	m->out.sin_port = htons((uint16_t)out);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)in)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		printf("REFUSED errno=%d\n", errno);
		return 1;
	}
	pid_t child = fork();
	if (child == 0) {
		/* Another process, not a thread: the caller stays single-threaded. */
		while (!atomic_load(&m->stop)) {
			*(void *volatile *)&m->mh.msg_name = &m->out;
			*(volatile socklen_t *)&m->mh.msg_namelen = sizeof(m->out);
			for (volatile int i = 0; i < 20000; i++)
				;
			*(volatile socklen_t *)&m->mh.msg_namelen = 0;
			*(void *volatile *)&m->mh.msg_name = NULL;
			for (volatile int i = 0; i < 20000; i++)
				;
		}
		_exit(0);
	}
	int sent = 0, refused = 0;
	for (int i = 0; i < n; i++) {
		if (sendmsg(s, &m->mh, 0) == 3)
			sent++;
		else
			refused++;
	}
	atomic_store(&m->stop, 1);
	waitpid(child, NULL, 0);
	printf("UDP_SHM sent=%d refused=%d\n", sent, refused);
	return 0;
}

static int route(int port)
{
	/* LSRR (131) of one hop, 127.0.0.2, then the end of the options. */
	unsigned char lsrr[8] = {131, 7, 4, 127, 0, 0, 2, 0};
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int rc = setsockopt(s, IPPROTO_IP, IP_OPTIONS, lsrr, sizeof(lsrr));
	printf("IP_OPTIONS rc=%d errno=%d\n", rc, rc < 0 ? errno : 0);
	close(s);
	/* A type 2 routing header: next header, length 2, type 2, one segment
	 * left, reserved, one address (::1). */
	unsigned char rthdr[24] = {0, 2, 2, 1};
	rthdr[23] = 1;
	s = socket(AF_INET6, SOCK_STREAM, 0);
	rc = setsockopt(s, IPPROTO_IPV6, IPV6_RTHDR, rthdr, sizeof(rthdr));
	printf("IPV6_RTHDR rc=%d errno=%d\n", rc, rc < 0 ? errno : 0);
	close(s);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	union {
		char buf[CMSG_SPACE(sizeof(lsrr))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct iovec iov = {.iov_base = "PWN", .iov_len = 3};
	struct msghdr mh = {.msg_name = &a,
			    .msg_namelen = sizeof(a),
			    .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = IPPROTO_IP;
	c->cmsg_type = IP_RETOPTS;
	c->cmsg_len = CMSG_LEN(sizeof(lsrr));
	memcpy(CMSG_DATA(c), lsrr, sizeof(lsrr));
	ssize_t n = sendmsg(s, &mh, 0);
	printf("IP_RETOPTS rc=%zd errno=%d\n", n, n < 0 ? errno : 0);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2)
		return 2;
	const char *m = argv[1];
	if (strcmp(m, "connect") == 0 && argc == 5)
		return do_connect(atoi(argv[2]), argv[3], atoi(argv[4]));
	if (strcmp(m, "udp_exec") == 0 && argc == 4) {
		udp(4, argv[2], atoi(argv[3]), 1);
		char *again[] = {argv[0], "udp", "4", argv[2], argv[3], "1", NULL};
		execv("/proc/self/exe", again);
		printf("EXEC errno=%d\n", errno);
		return 1;
	}
	if (strcmp(m, "spoof") == 0 && argc == 4) {
		/* The arguments are one run of NUL-ended strings: overwrite
		 * them all, as a process may (/proc/PID/cmdline shows it). */
		char *start = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]);
		char addr[64];
		int port = atoi(argv[3]);
		snprintf(addr, sizeof(addr), "%s", argv[2]);
		static const char lie[] = "git\0fetch\0origin";
		memset(start, 0, (size_t)(end - start));
		if ((size_t)(end - start) >= sizeof(lie))
			memcpy(start, lie, sizeof(lie));
		return do_connect(4, addr, port);
	}
	if (strcmp(m, "connect2") == 0 && argc == 4) {
		do_connect(4, argv[2], atoi(argv[3]));
		return do_connect(4, argv[2], atoi(argv[3]));
	}
	if (strcmp(m, "nonblock") == 0 && argc == 4)
		return nonblock(argv[2], atoi(argv[3]));
	if (strcmp(m, "race") == 0 && argc == 5)
		return race(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (strcmp(m, "udp") == 0 && argc == 6)
		return udp(atoi(argv[2]), argv[3], atoi(argv[4]), atoi(argv[5]));
	if (strcmp(m, "udp_shm") == 0 && argc == 5)
		return udp_shm(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (strcmp(m, "fastopen") == 0 && argc == 4) {
		struct sockaddr_storage ss;
		socklen_t sl = mkaddr(4, argv[2], atoi(argv[3]), &ss);
		int s = socket(AF_INET, SOCK_STREAM, 0);
		ssize_t n = sendto(s, "PWN", 3, MSG_FASTOPEN, (struct sockaddr *)&ss, sl);
		printf("FASTOPEN rc=%zd errno=%d\n", n, n < 0 ? errno : 0);
		return 0;
	}
	if (strcmp(m, "route") == 0 && argc == 3)
		return route(atoi(argv[2]));
	if (strcmp(m, "sendmmsg") == 0 && argc == 4)
		return mmsg(atoi(argv[2]), atoi(argv[3]));
	if (strcmp(m, "socket") == 0 && argc == 5) {
		int s = socket(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
		if (s < 0)
			printf("SOCKET errno=%d\n", errno);
		else
			printf("SOCKET ok\n");
		return 0;
	}
	if (strcmp(m, "fd") == 0 && argc == 3) {
		ssize_t n = write(atoi(argv[2]), "PWN", 3);
		printf("FD wrote=%zd errno=%d\n", n, n < 0 ? errno : 0);
		return 0;
	}
	if (strcmp(m, "io_uring") == 0) {
		char params[120] = {0};
		long rc = syscall(__NR_io_uring_setup, 4, params);
		printf("IO_URING rc=%ld errno=%d\n", rc, rc < 0 ? errno : 0);
		return 0;
	}
	return 2;
}
