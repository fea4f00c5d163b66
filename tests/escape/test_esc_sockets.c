/*
 * test_esc_sockets: local control channels. Under the real `warden run
 * --tier passive --prompt none`, the agent (tests/escape/esc_sock.c) tries
 * to reach Unix sockets outside the project: a tmux-like server socket, an
 * X11-like one, one under /run, one that appears during the run, one
 * reached through a symlink in the project or a relative path from a cwd
 * outside, one named by an address a second thread rewrites while warden
 * decides, and datagrams by sendto, sendmsg and sendmmsg. The listeners
 * are the test's own (never a real service); each case asserts that the
 * listener got nothing (not only an errno: once /tmp is private to the
 * session the path may simply not exist there) and, where warden decided,
 * the audit row. The positive cases check that sockets inside the project,
 * sockets the config allows, a non-blocking connect and TCP keep working.
 *
 * A case that finds an escape fails with "ESCAPE FOUND: ...".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "store.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

struct fx {
	char *proj;
	char *db;
	char *dir;   /* a fresh directory for this case's outside sockets */
	char *run_d; /* under /run */
};

static char *rnd(void)
{
	unsigned v = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!read(fd, &v, sizeof(v));
		close(fd);
	}
	return wd_asprintf("%08x", v);
}

/* The project's config: f->dir shared into the private /tmp, plus |extra|
 * (more top-level keys, or NULL). */
static void share(const struct fx *f, const char *extra)
{
	wd_autofree char *cfg = wd_asprintf("{\"tmp\": {\"share\": [\"%s\"]}%s%s}\n", f->dir,
					    extra ? ", " : "", extra ? extra : "");
	wt_write(f->proj, ".warden/permissions.json", cfg);
}

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wd_autofree char *r = rnd();
	f->dir = wd_asprintf("/tmp/tmux-%u-%s", (unsigned)getuid(), r);
	mkdir(f->dir, 0700);
	/* The session's /tmp is its own: the host's sockets there are out of
	 * sight. Shared with the sandbox (tmp.share), they are in sight, and
	 * the socket rules alone must keep them out of reach. */
	share(f, NULL);
	f->run_d = wd_asprintf("/run/warden-esc-%s.sock", r);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	wt_rmtree(f->dir);
	unlink(f->run_d);
	free(f->proj);
	free(f->db);
	free(f->dir);
	free(f->run_d);
	free(f);
	return 0;
}

static char *esc(void)
{
	const char *b = getenv("WARDEN_BUILD_DIR");
	return wd_asprintf("%s/tests/escape/esc_sock", b ? b : ".");
}

/* A listener of the test's own at |path| (its directory made 0700). */
static int listener(const char *path, int type)
{
	wd_autofree char *d = wd_strdup(path);
	char *slash = strrchr(d, '/');
	*slash = '\0';
	mkdir(d, 0700);
	unlink(path);
	int s = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	if (type == SOCK_STREAM)
		assert_int_equal(listen(s, 64), 0);
	return s;
}

/* Fails the test when |l| got a connection or a datagram. */
static void assert_untouched(int l, const char *what)
{
	char buf[16];
	int c = accept(l, NULL, NULL);
	ssize_t n = c < 0 ? recv(l, buf, sizeof(buf), MSG_DONTWAIT) : -1;
	if (c >= 0 || n >= 0)
		fail_msg("ESCAPE FOUND: the listener at %s outside the project got %s", what,
			 c >= 0 ? "a connection" : "a datagram");
	close(l);
}

static void run(const struct fx *f, struct wt_result *r, ...)
{
	char *argv[32] = {"run", "--tier", "passive", "--prompt", "none", "--"};
	size_t n = 6;
	argv[n++] = esc();
	va_list ap;
	va_start(ap, r);
	while (n < 31 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	wt_wardenv(f->proj, argv, r);
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", r->status, r->out, r->err);
	free(argv[6]);
}

struct rowq {
	const char *decision, *source, *sum;
	int n;
};

static int rowq_cb(const struct sto_row *row, void *arg)
{
	struct rowq *q = arg;
	if (strcmp(row->kind ? row->kind : "", "connect") != 0)
		return 0;
	if (q->decision && strcmp(q->decision, row->decision ? row->decision : "") != 0)
		return 0;
	if (q->source && strcmp(q->source, row->source ? row->source : "") != 0)
		return 0;
	if (q->sum && !strstr(row->summary ? row->summary : "", q->sum))
		return 0;
	q->n++;
	return 0;
}

/* Audit rows of kind "connect" by decision and source (exact) and a
 * substring of the summary; NULL matches anything. */
static int rows(const struct fx *f, const char *decision, const char *source, const char *sum)
{
	struct sto_db *d = NULL;
	char *err = NULL;
	if (sto_open(f->db, &d, &err) < 0) {
		free(err);
		return -1;
	}
	struct rowq q = {decision, source, sum, 0};
	struct sto_filter flt = {0};
	sto_query(d, &flt, rowq_cb, &q, NULL);
	sto_close(d);
	return q.n;
}

/* A refused connect to |path| by |mode|: nothing reached the listener, the
 * process was told, the audit says so. */
static void refused(struct fx *f, const char *mode, const char *path, int type, const char *arg)
{
	int l = listener(path, type);
	struct wt_result r;
	run(f, &r, mode, arg ? arg : path, NULL);
	assert_untouched(l, path);
	assert_null(strstr(r.out, "CONNECTED"));
	assert_null(strstr(r.out, "SENT"));
	assert_non_null(strstr(r.err, "warden: refused"));
	wd_autofree char *sum = wd_asprintf(" %s", path);
	assert_true(rows(f, "deny", "boundary", sum) >= 1);
	assert_int_equal(rows(f, "allow", NULL, sum), 0);
	wt_result_free(&r);
}

static void test_esc_sock_tmux(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = wd_asprintf("%s/default", f->dir);
	refused(f, "connect", p, SOCK_STREAM, NULL);
}

static void test_esc_sock_x11(void **state)
{
	struct fx *f = *state;
	wd_autofree char *r = rnd();
	wd_autofree char *d = wd_asprintf("%s/.X11-unix-%s", f->dir, r);
	wd_autofree char *p = wd_asprintf("%s/X0", d);
	refused(f, "connect", p, SOCK_STREAM, NULL);
	wt_rmtree(d);
}

static void test_esc_sock_run(void **state)
{
	struct fx *f = *state;
	refused(f, "connect", f->run_d, SOCK_STREAM, NULL);
}

/* The agent asks for a socket that only appears after warden started. */
static void test_esc_sock_appears_later(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = wd_asprintf("%s/late.sock", f->dir);
	wd_autofree char *prog = esc();
	char *argv[] = {"run", "--tier", "passive",	 "--prompt", "none",
			"--",  prog,	 "wait_connect", p,	     NULL};
	struct wt_bg bg;
	wt_warden_bg(f->proj, argv, &bg);
	free(wt_bg_session(&bg, 10000));
	usleep(200000);
	int l = listener(p, SOCK_STREAM);
	struct wt_result r;
	assert_true(wt_bg_wait(&bg, 20000, &r));
	print_message("out: %s\nerr: %s\n", r.out, r.err);
	assert_untouched(l, p);
	assert_non_null(strstr(r.out, "REFUSED"));
	assert_true(rows(f, "deny", "boundary", "late.sock") >= 1);
	wt_result_free(&r);
}

/* A symlink in the project that points at the socket outside. */
static void test_esc_sock_symlink(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = wd_asprintf("%s/default", f->dir);
	wd_autofree char *link = wd_asprintf("%s/tmux.sock", f->proj);
	assert_int_equal(symlink(p, link), 0);
	refused(f, "connect", p, SOCK_STREAM, "tmux.sock");
	/* The row names the file reached and the name given. */
	assert_true(rows(f, "deny", "boundary", "(as tmux.sock)") >= 1);
}

/* A relative path from a cwd outside the project. */
static void test_esc_sock_relative(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = wd_asprintf("%s/default", f->dir);
	int l = listener(p, SOCK_STREAM);
	struct wt_result r;
	run(f, &r, "cwd_connect", f->dir, "default", NULL);
	assert_untouched(l, p);
	assert_non_null(strstr(r.out, "REFUSED"));
	assert_true(rows(f, "deny", "boundary", "(as default)") >= 1);
	wt_result_free(&r);
}

/* A second thread rewrites the address between an inside socket and the
 * outside one while connect waits for warden. */
static void test_esc_sock_race_connect(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = wd_asprintf("%s/default", f->dir);
	wd_autofree char *in = wd_asprintf("%s/in.sock", f->proj);
	int l = listener(p, SOCK_STREAM);
	struct wt_result r;
	run(f, &r, "race", in, p, "1500", NULL);
	assert_untouched(l, p);
	/* Both sides were seen: the race was run, not lost. */
	assert_non_null(strstr(r.out, "RACE ok="));
	assert_null(strstr(r.out, "RACE ok=0 "));
	assert_true(rows(f, "deny", "boundary", p) >= 1);
	assert_int_equal(rows(f, "allow", NULL, p), 0);
	wt_result_free(&r);
}

/* The same with an unconnected datagram socket whose msg_name flips. */
static void test_esc_sock_race_dgram(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = wd_asprintf("%s/dgram", f->dir);
	wd_autofree char *in = wd_asprintf("%s/in.dgram", f->proj);
	int l = listener(p, SOCK_DGRAM);
	struct wt_result r;
	run(f, &r, "race_dgram", in, p, "1500", NULL);
	assert_untouched(l, p);
	assert_non_null(strstr(r.out, "RACE ok="));
	assert_null(strstr(r.out, "RACE ok=0 "));
	assert_true(rows(f, "deny", "boundary", p) >= 1);
	wt_result_free(&r);
}

static void test_esc_sock_sendto(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = wd_asprintf("%s/log", f->dir);
	refused(f, "sendto", p, SOCK_DGRAM, NULL);
}

static void test_esc_sock_sendmsg(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = wd_asprintf("%s/log", f->dir);
	refused(f, "sendmsg", p, SOCK_DGRAM, NULL);
}

static void test_esc_sock_sendmmsg(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = wd_asprintf("%s/log", f->dir);
	refused(f, "sendmmsg", p, SOCK_DGRAM, NULL);
}

/* An ssh-agent: its socket is neither in the agent's environment nor
 * reachable. */
static void test_esc_sock_ssh_agent(void **state)
{
	struct fx *f = *state;
	wd_autofree char *r = rnd();
	wd_autofree char *d = wd_asprintf("%s/ssh-%s", f->dir, r);
	wd_autofree char *p = wd_asprintf("%s/agent.42", d);
	int l = listener(p, SOCK_STREAM);
	setenv("SSH_AUTH_SOCK", p, 1);
	struct wt_result res;
	run(f, &res, "env", NULL);
	assert_non_null(strstr(res.out, "SSH_AUTH_SOCK=(unset)"));
	assert_non_null(strstr(res.err, "SSH_AUTH_SOCK"));
	wt_result_free(&res);
	run(f, &res, "connect", p, NULL);
	unsetenv("SSH_AUTH_SOCK");
	assert_untouched(l, p);
	assert_true(rows(f, "deny", "boundary", p) >= 1);
	wt_result_free(&res);
	wt_rmtree(d);
}

/* A thread swaps the descriptor a connect names between a TCP socket and a
 * Unix one, and the address between 127.0.0.1 and the outside socket: what
 * warden saw as a TCP connect must not become a Unix one. */
static void test_esc_sock_fd_swap(void **state)
{
	struct fx *f = *state;
	wd_autofree char *p = wd_asprintf("%s/default", f->dir);
	int l = listener(p, SOCK_STREAM);
	int t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(t, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(t, 4096), 0);
	socklen_t al = sizeof(a);
	getsockname(t, (struct sockaddr *)&a, &al);
	char port[16];
	snprintf(port, sizeof(port), "%u", ntohs(a.sin_port));
	/* The TCP side is allowed, so that warden does those connects. */
	wd_autofree char *cfg = wd_asprintf("\"network\": {\"allow\": [\"127.0.0.1:%s\"]}", port);
	share(f, cfg);
	struct wt_result r;
	run(f, &r, "fdswap", p, port, "1500", NULL);
	assert_untouched(l, p);
	assert_non_null(strstr(r.out, "FDSWAP ok="));
	close(t);
	wt_result_free(&r);
}

/* No other process may share a descriptor table (the swap above would then
 * come from a process warden does not count as a thread). */
static void test_esc_sock_clone_files(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	run(f, &r, "clone_files", NULL);
	assert_non_null(strstr(r.out, "CLONE_FILES refused errno=1"));
	wt_result_free(&r);
}

/* ---- what must keep working -------------------------------------------- */

static void test_esc_sock_inside_works(void **state)
{
	struct fx *f = *state;
	struct wt_result r;
	run(f, &r, "inside", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(
		strstr(r.out, "INSIDE stream=hello dgram=dgram mmsg=2/3/5/one/three rights=piped"));
	/* Inside needs no row. */
	assert_int_equal(rows(f, NULL, "boundary", NULL), 0);
	wt_result_free(&r);
}

static void allowed(void **state, const char *mode)
{
	struct fx *f = *state;
	wd_autofree char *p = wd_asprintf("%s/ok.sock", f->dir);
	wd_autofree char *cfg = wd_asprintf("\"sockets\": {\"allow\": [\"%s\"]}", p);
	share(f, cfg);
	int l = listener(p, SOCK_STREAM);
	struct wt_result r;
	run(f, &r, mode, p, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "CONNECTED"));
	int c = accept(l, NULL, NULL);
	assert_true(c >= 0);
	char buf[8] = {0};
	assert_int_equal(recv(c, buf, sizeof(buf) - 1, 0), 3);
	assert_string_equal(buf, "PWN");
	close(c);
	close(l);
	assert_true(rows(f, "allow", "rule", p) >= 1);
	wt_result_free(&r);
	/* warden doctor lists it. */
	wt_warden(f->proj, &r, "doctor", NULL);
	assert_non_null(strstr(r.out, p));
	wt_result_free(&r);
}

static void test_esc_sock_allowed_works(void **state)
{
	allowed(state, "connect");
}

static void test_esc_sock_allowed_nonblocking(void **state)
{
	allowed(state, "connect_nb");
}

/* A loopback connect the config's network.allow lists passes, from one
 * thread and from a second one (warden does both: an IP connect is
 * decided, test_esc_net). */
static void test_esc_sock_tcp_untouched(void **state)
{
	struct fx *f = *state;
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 8), 0);
	socklen_t al = sizeof(a);
	getsockname(l, (struct sockaddr *)&a, &al);
	char port[16];
	snprintf(port, sizeof(port), "%u", ntohs(a.sin_port));
	wd_autofree char *cfg = wd_asprintf("\"network\": {\"allow\": [\"127.0.0.1:%s\"]}", port);
	share(f, cfg);
	struct wt_result r;
	run(f, &r, "tcp", port, "threads", NULL);
	const char *first = strstr(r.out, "TCP connected");
	assert_non_null(first);
	assert_non_null(strstr(first + 1, "TCP connected"));
	close(l);
	wt_result_free(&r);
}

int main(void)
{
	wt_require_sandbox();
#define T(n) cmocka_unit_test_setup_teardown(test_esc_sock_##n, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(tmux),
		T(x11),
		T(run),
		T(appears_later),
		T(symlink),
		T(relative),
		T(race_connect),
		T(race_dgram),
		T(sendto),
		T(sendmsg),
		T(sendmmsg),
		T(ssh_agent),
		T(fd_swap),
		T(clone_files),
		T(inside_works),
		T(allowed_works),
		T(allowed_nonblocking),
		T(tcp_untouched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
