/*
 * esc_sock: the agent side of the socket escapes (test_esc_sockets). Each
 * mode tries to reach a Unix socket and prints what happened; the driver
 * checks, on the listener it made outside warden, that nothing arrived.
 *
 *   connect PATH            a stream connect; on success sends "PWN"
 *   connect_nb PATH         the same on a non-blocking socket
 *   wait_connect PATH       waits (5 s at most) for PATH to appear, then connect
 *   cwd_connect DIR NAME    chdir(DIR), then connect to the relative NAME
 *   sendto PATH             a datagram "PWN" to PATH
 *   sendmsg PATH            the same with sendmsg and msg_name
 *   sendmmsg PATH           the same with sendmmsg
 *   race IN OUT N           N connects to IN while a thread flips the address to OUT
 *   race_dgram IN OUT N     N sendmsg datagrams with msg_name flipping IN/OUT
 *   inside                  a stream and a datagram socket in the cwd, used both ways
 *   env                     prints SSH_AUTH_SOCK as it sees it
 *   tcp PORT [threads]      a TCP connect to 127.0.0.1:PORT (from a second thread too)
 *   fdswap OUT PORT N       N connects on one descriptor number while a thread swaps
 *                           it between a TCP and a Unix socket and the address
 *                           between 127.0.0.1:PORT and OUT
 *   clone_files             clone(CLONE_FILES) without CLONE_THREAD
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static socklen_t mkaddr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "%s", path);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(a->sun_path) + 1);
}

static int do_connect(const char *path, int nonblock)
{
	int s = socket(AF_UNIX, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);
	struct sockaddr_un a;
	socklen_t l = mkaddr(&a, path);
	if (connect(s, (struct sockaddr *)&a, l) < 0) {
		printf("REFUSED %s errno=%d\n", path, errno);
		close(s);
		return 1;
	}
	printf("CONNECTED %s\n", path);
	(void)!send(s, "PWN", 3, MSG_NOSIGNAL);
	close(s);
	return 0;
}

static int do_dgram(const char *path, int how)
{
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un a;
	socklen_t l = mkaddr(&a, path);
	char msg[] = "PWN";
	struct iovec iov = {.iov_base = msg, .iov_len = 3};
	struct msghdr mh = {.msg_name = &a, .msg_namelen = l, .msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;
	if (how == 0) {
		n = sendto(s, msg, 3, 0, (struct sockaddr *)&a, l);
	} else if (how == 1) {
		n = sendmsg(s, &mh, 0);
	} else {
		struct mmsghdr mm[2] = {{.msg_hdr = mh}, {.msg_hdr = mh}};
		n = sendmmsg(s, mm, 2, 0);
	}
	if (n < 0)
		printf("REFUSED %s errno=%d\n", path, errno);
	else
		printf("SENT %s %zd\n", path, n);
	close(s);
	return n < 0;
}

/* ---- the races ---------------------------------------------------------- */

static struct sockaddr_un shared;
static char in_path[108], out_path[108];
static atomic_int stop;

/* Both paths start with '/', so every mix of their bytes is a path. */
static void *flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		/* The barriers keep the compiler from dropping a store no
		 * code of its own reads. */
		memcpy(shared.sun_path, out_path, sizeof(out_path));
		__asm__ volatile("" ::: "memory");
		for (volatile int i = 0; i < 3000; i++)
			;
		memcpy(shared.sun_path, in_path, sizeof(in_path));
		__asm__ volatile("" ::: "memory");
		for (volatile int i = 0; i < 3000; i++)
			;
	}
	return NULL;
}

static void *acceptor(void *arg)
{
	int l = *(int *)arg;
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c >= 0)
			close(c);
	}
	return NULL;
}

static int race(const char *in, const char *out, int n, int dgram)
{
	snprintf(in_path, sizeof(in_path), "%s", in);
	snprintf(out_path, sizeof(out_path), "%s", out);
	unlink(in);
	int l = socket(AF_UNIX, dgram ? SOCK_DGRAM : SOCK_STREAM, 0);
	struct sockaddr_un a;
	socklen_t al = mkaddr(&a, in);
	if (bind(l, (struct sockaddr *)&a, al) < 0 || (!dgram && listen(l, 512) < 0)) {
		perror("bind inside");
		return 2;
	}
	pthread_t t, t2;
	if (!dgram)
		pthread_create(&t2, NULL, acceptor, &l);
	mkaddr(&shared, in);
	socklen_t sl = sizeof(shared);
	pthread_create(&t, NULL, flipper, NULL);
	int ok = 0, refused = 0;
	for (int i = 0; i < n; i++) {
		int s = socket(AF_UNIX, dgram ? SOCK_DGRAM : SOCK_STREAM, 0);
		int rc;
		if (dgram) {
			char m[] = "PWN";
			struct iovec iov = {.iov_base = m, .iov_len = 3};
			struct msghdr mh = {.msg_name = &shared,
					    .msg_namelen = sl,
					    .msg_iov = &iov,
					    .msg_iovlen = 1};
			rc = sendmsg(s, &mh, MSG_DONTWAIT) < 0 ? -1 : 0;
			char buf[8];
			while (recv(l, buf, sizeof(buf), MSG_DONTWAIT) > 0)
				;
		} else {
			rc = connect(s, (struct sockaddr *)&shared, sl);
			if (rc == 0)
				(void)!send(s, "PWN", 3, MSG_NOSIGNAL);
		}
		if (rc == 0)
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

static int inside(void)
{
	unlink("in.sock");
	unlink("in.dgram");
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a;
	socklen_t al = mkaddr(&a, "in.sock");
	if (bind(l, (struct sockaddr *)&a, al) < 0 || listen(l, 4) < 0) {
		printf("INSIDE bind errno=%d\n", errno);
		return 1;
	}
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)&a, al) < 0) {
		printf("INSIDE connect errno=%d\n", errno);
		return 1;
	}
	int s = accept(l, NULL, NULL);
	char buf[16] = {0};
	(void)!write(c, "hello", 5);
	(void)!read(s, buf, sizeof(buf) - 1);
	int d = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un b;
	socklen_t bl = mkaddr(&b, "in.dgram");
	if (bind(d, (struct sockaddr *)&b, bl) < 0) {
		printf("INSIDE dgram bind errno=%d\n", errno);
		return 1;
	}
	int e = socket(AF_UNIX, SOCK_DGRAM, 0);
	char dbuf[16] = {0};
	if (sendto(e, "dgram", 5, 0, (struct sockaddr *)&b, bl) != 5) {
		printf("INSIDE sendto errno=%d\n", errno);
		return 1;
	}
	(void)!recv(d, dbuf, sizeof(dbuf) - 1, 0);
	/* sendmmsg, done by warden: the count and each msg_len come back. */
	struct iovec iov[2] = {{.iov_base = "one", .iov_len = 3},
			       {.iov_base = "three", .iov_len = 5}};
	struct mmsghdr mm[2];
	memset(mm, 0, sizeof(mm));
	for (int i = 0; i < 2; i++)
		mm[i].msg_hdr = (struct msghdr){
			.msg_name = &b, .msg_namelen = bl, .msg_iov = &iov[i], .msg_iovlen = 1};
	int sent = sendmmsg(e, mm, 2, 0);
	char m1[8] = {0}, m2[8] = {0};
	(void)!recv(d, m1, sizeof(m1) - 1, 0);
	(void)!recv(d, m2, sizeof(m2) - 1, 0);
	/* A descriptor passed with SCM_RIGHTS (warden takes it from the
	 * sender and sends its own copy): the receiver writes through it. */
	int pfd[2];
	char got[8] = {0};
	if (pipe(pfd) == 0) {
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		memset(&u, 0, sizeof(u));
		struct iovec fi = {.iov_base = "fd", .iov_len = 2};
		struct msghdr fm = {.msg_name = &b,
				    .msg_namelen = bl,
				    .msg_iov = &fi,
				    .msg_iovlen = 1,
				    .msg_control = u.b,
				    .msg_controllen = sizeof(u.b)};
		struct cmsghdr *cm = CMSG_FIRSTHDR(&fm);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pfd[1], sizeof(int));
		if (sendmsg(e, &fm, 0) == 2) {
			char rb[8];
			struct iovec ri = {.iov_base = rb, .iov_len = sizeof(rb)};
			struct msghdr rm = {.msg_iov = &ri,
					    .msg_iovlen = 1,
					    .msg_control = u.b,
					    .msg_controllen = sizeof(u.b)};
			memset(&u, 0, sizeof(u));
			int passed = -1;
			if (recvmsg(d, &rm, 0) == 2 && CMSG_FIRSTHDR(&rm))
				memcpy(&passed, CMSG_DATA(CMSG_FIRSTHDR(&rm)), sizeof(int));
			if (passed >= 0 && write(passed, "piped", 5) == 5)
				(void)!read(pfd[0], got, sizeof(got) - 1);
		}
	}
	printf("INSIDE stream=%s dgram=%s mmsg=%d/%u/%u/%s/%s rights=%s\n", buf, dbuf, sent,
	       mm[0].msg_len, mm[1].msg_len, m1, m2, got);
	unlink("in.sock");
	unlink("in.dgram");
	return 0;
}

/* ---- a descriptor swapped under a waiting connect ------------------------ */

static union {
	struct sockaddr_un un;
	struct sockaddr_in in;
	char raw[sizeof(struct sockaddr_un)];
} swap_addr;
static struct sockaddr_un swap_un;
static struct sockaddr_in swap_in;
static int swap_fd = 100;

/* Non-blocking sockets: a connect that got through to the listener, which
 * never accepts, must not hang the case once its backlog is full. */
static void *swapper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int u = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		dup2(u, swap_fd);
		close(u);
		memcpy(swap_addr.raw, &swap_un, sizeof(swap_un));
		__asm__ volatile("" ::: "memory");
		for (volatile int i = 0; i < 2000; i++)
			;
		int t = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		dup2(t, swap_fd);
		close(t);
		memset(swap_addr.raw, 0, sizeof(swap_addr.raw));
		memcpy(swap_addr.raw, &swap_in, sizeof(swap_in));
		__asm__ volatile("" ::: "memory");
		for (volatile int i = 0; i < 2000; i++)
			;
	}
	return NULL;
}

static int fdswap(const char *out, int port, int n)
{
	mkaddr(&swap_un, out);
	swap_in = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	swap_in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int t = socket(AF_INET, SOCK_STREAM, 0);
	dup2(t, swap_fd);
	close(t);
	memcpy(swap_addr.raw, &swap_in, sizeof(swap_in));
	pthread_t th;
	pthread_create(&th, NULL, swapper, NULL);
	int ok = 0, failed = 0;
	for (int i = 0; i < n; i++) {
		if (connect(swap_fd, (struct sockaddr *)&swap_addr, sizeof(swap_addr.un)) == 0)
			ok++;
		else
			failed++;
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("FDSWAP ok=%d failed=%d\n", ok, failed);
	return 0;
}

static int clone_files(void)
{
	long pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		waitpid((pid_t)pid, NULL, 0);
		printf("CLONE_FILES allowed\n");
		return 1;
	}
	printf("CLONE_FILES refused errno=%d\n", errno);
	return 0;
}

static void *tcp_thread(void *arg)
{
	int port = *(int *)arg;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int rc = connect(s, (struct sockaddr *)&a, sizeof(a));
	printf("TCP %s\n", rc == 0 ? "connected" : strerror(errno));
	close(s);
	return NULL;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	const char *m = argv[1];
	if (strcmp(m, "connect") == 0 && argc > 2)
		return do_connect(argv[2], 0);
	if (strcmp(m, "connect_nb") == 0 && argc > 2)
		return do_connect(argv[2], 1);
	if (strcmp(m, "wait_connect") == 0 && argc > 2) {
		struct stat st;
		for (int i = 0; i < 500 && stat(argv[2], &st) < 0; i++)
			usleep(10000);
		return do_connect(argv[2], 0);
	}
	if (strcmp(m, "cwd_connect") == 0 && argc > 3) {
		if (chdir(argv[2]) < 0) {
			printf("CHDIR errno=%d\n", errno);
			return 2;
		}
		return do_connect(argv[3], 0);
	}
	if (strcmp(m, "sendto") == 0 && argc > 2)
		return do_dgram(argv[2], 0);
	if (strcmp(m, "sendmsg") == 0 && argc > 2)
		return do_dgram(argv[2], 1);
	if (strcmp(m, "sendmmsg") == 0 && argc > 2)
		return do_dgram(argv[2], 2);
	if ((strcmp(m, "race") == 0 || strcmp(m, "race_dgram") == 0) && argc > 4)
		return race(argv[2], argv[3], atoi(argv[4]), m[4] == '_');
	if (strcmp(m, "inside") == 0)
		return inside();
	if (strcmp(m, "env") == 0) {
		const char *v = getenv("SSH_AUTH_SOCK");
		printf("SSH_AUTH_SOCK=%s\n", v ? v : "(unset)");
		return 0;
	}
	if (strcmp(m, "fdswap") == 0 && argc > 4)
		return fdswap(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (strcmp(m, "clone_files") == 0)
		return clone_files();
	if (strcmp(m, "tcp") == 0 && argc > 2) {
		int port = atoi(argv[2]);
		tcp_thread(&port);
		if (argc > 3) {
			pthread_t t;
			pthread_create(&t, NULL, tcp_thread, &port);
			pthread_join(t, NULL);
		}
		return 0;
	}
	return 2;
}
