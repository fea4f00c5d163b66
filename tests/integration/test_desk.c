/*
 * test_desk: the approvals desk end to end. A real `warden run`
 * in the background blocks an agent's exec on a person; the test is the
 * second terminal: it lists the request with `warden approvals --format
 * json` and answers it with `warden approve` / `warden deny`, or talks to
 * the session's socket directly as another user.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/capability.h>

#define NOTE_AGGRESSIVE "aggressive mode, auto-approve all escalated tool calls"
#define NOTE_PASSIVE	"passive mode, reject all escalated tool calls"
#define NOTE_DEADLINE	"no decision before the deadline"

/* How long a run may take before the test calls it a hang. */
#define RUN_MS 30000

/* ---- the desk as a second terminal sees it -------------------------- */

struct pend {
	char id[32];
	char session[64];
	char kind[16];
	char request[256];
	char process[512];
	char deadline[64];
	long pid;
	bool has_deadline_in;
};

/* Copies the JSON string value of |key| in [obj, end) to |out|. */
static bool jstr(const char *obj, const char *end, const char *key, char *out, size_t n)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	const char *s = strstr(obj, pat);
	if (!s || s >= end)
		return false;
	s += strlen(pat);
	size_t k = 0;
	for (; *s && *s != '"'; s++) {
		char ch = *s;
		if (*s == '\\' && s[1]) {
			s++;
			ch = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
		}
		if (k + 1 < n) /* a longer value is cut, still read to its end */
			out[k++] = ch;
	}
	out[k] = '\0';
	return *s == '"';
}

static bool jnum(const char *obj, const char *end, const char *key, long *out)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *s = strstr(obj, pat);
	if (!s || s >= end)
		return false;
	char *e = NULL;
	*out = strtol(s + strlen(pat), &e, 10);
	return e != s + strlen(pat);
}

/* The pending requests of session |sid| per `warden approvals --format
 * json`; returns how many (at most |max| filled). */
static size_t desk_list(const char *sid, struct pend *v, size_t max)
{
	struct wt_result r;
	wt_warden(NULL, &r, "approvals", "--session", sid, "--format", "json", NULL);
	assert_int_equal(r.status, 0);
	assert_true(r.out[0] == '[');
	size_t n = 0;
	static const char tag[] = "{\"id\":";
	for (const char *o = strstr(r.out, tag); o; n++) {
		const char *next = strstr(o + 1, tag);
		const char *end = next ? next : o + strlen(o);
		if (n < max) {
			struct pend *p = &v[n];
			memset(p, 0, sizeof(*p));
			assert_true(jstr(o, end, "id", p->id, sizeof(p->id)));
			assert_true(jstr(o, end, "session", p->session, sizeof(p->session)));
			assert_true(jstr(o, end, "kind", p->kind, sizeof(p->kind)));
			assert_true(jstr(o, end, "request", p->request, sizeof(p->request)));
			assert_true(jstr(o, end, "process", p->process, sizeof(p->process)));
			assert_true(jstr(o, end, "deadline", p->deadline, sizeof(p->deadline)));
			assert_true(jnum(o, end, "pid", &p->pid));
			long left = 0;
			p->has_deadline_in = jnum(o, end, "deadline_in_s", &left);
		}
		o = next;
	}
	wt_result_free(&r);
	return n;
}

/* Polls the desk until session |sid| lists exactly |want| requests, for at
 * most |ms|. Returns the last count. */
static size_t desk_wait(const char *sid, size_t want, int ms, struct pend *v, size_t max)
{
	int64_t until = wd_now_mono_ns() + (int64_t)ms * 1000000;
	size_t n;
	while ((n = desk_list(sid, v, max)) != want && wd_now_mono_ns() < until)
		usleep(50000);
	return n;
}

static int find_req(const struct pend *v, size_t n, const char *request)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].request, request) == 0)
			return (int)i;
	return -1;
}

static const char *me(void)
{
	static char name[64];
	struct passwd *pw = getpwuid(getuid());
	snprintf(name, sizeof(name), "%s", pw ? pw->pw_name : "?");
	return name;
}

/* The runtime directory of the desk, as supervisor/desk.c picks it. */
static char *desk_dir(void)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	if (x && x[0] == '/')
		return wd_asprintf("%s/warden", x);
	if (geteuid() == 0)
		return wd_strdup("/run/warden");
	return wd_asprintf("/tmp/warden-%u", (unsigned)getuid());
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Starts `warden run ARGS...` in the background and returns its session
 * id (the test fails when none is announced). */
static char *start_run(const char *proj, char *const argv[], struct wt_bg *bg)
{
	wt_warden_bg(proj, argv, bg);
	char *sid = wt_bg_session(bg, 10000);
	if (!sid) {
		char *e = wt_bg_err(bg);
		print_message("warden said: %s\n", e);
		free(e);
	}
	assert_non_null(sid);
	return sid;
}

static void finish_run(struct wt_bg *bg, struct wt_result *r)
{
	bool exited = wt_bg_wait(bg, RUN_MS, r);
	if (!exited)
		print_message("the run did not finish: out %s\nerr %s\n", r->out, r->err);
	assert_true(exited);
}

/* ---- flows ------------------------------------------------------------ */

/* The same request from the same process while one waits joins it: two
 * threads opening .env at once make one desk entry, and one answer lets
 * both through (each audited). */
static void test_desk_same_request_joins(void **state)
{
	struct wt_fx *f = *state;
	char *twin = wt_helper("twin_open");
	wt_write(f->proj, ".env", "TOKEN=twin-secret\n");
	char *argv[] = {"run", "--tier", "standard", "--prompt", "desk", "--", twin, ".env", NULL};
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv, &bg);
	struct pend v[4];
	assert_int_equal(desk_wait(sid, 1, 10000, v, 4), 1);
	usleep(500000); /* the second open has arrived by now, and joined */
	assert_int_equal(desk_list(sid, v, 4), 1);
	struct wt_result a;
	wt_warden(NULL, &a, "approve", v[0].id, NULL);
	assert_int_equal(a.status, 0);
	wt_result_free(&a);
	struct wt_result r;
	finish_run(&bg, &r);
	assert_non_null(strstr(r.out, "open 0: ok"));
	assert_non_null(strstr(r.out, "open 1: ok"));
	struct wt_audit_q q = {
		.decision = "allow", .source = "user", .summary_sub = "=read .env", .session = sid};
	assert_int_equal(wt_audit_match(f->db, &q), 2);
	wt_result_free(&r);
	free(sid);
	free(twin);
}

static void test_desk_approve_with_note(void **state)
{
	struct wt_fx *f = *state;
	char *argv[] = {"run",	    "--tier", "standard",
			"--prompt", "desk",   "--",
			"/bin/sh",  "-c",     "touch x && echo after",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv, &bg);
	struct pend v[4];
	assert_int_equal(desk_wait(sid, 1, 10000, v, 4), 1);
	assert_int_equal(find_req(v, 1, "touch x"), 0);
	assert_string_equal(v[0].session, sid);
	assert_string_equal(v[0].kind, "exec");
	assert_true(v[0].pid > 0);
	assert_non_null(strstr(v[0].process, "touch x && echo after"));
	assert_true(strlen(v[0].deadline) >= 20); /* 2026-12-02T13:12:39.694Z */
	assert_true(v[0].has_deadline_in);
	/* The id names its session: the last four characters of it. */
	assert_memory_equal(v[0].id, sid + strlen(sid) - 4, 4);
	char *made = wd_asprintf("%s/x", f->proj);
	assert_int_not_equal(access(made, F_OK), 0); /* still waiting */

	struct wt_result a;
	wt_warden(NULL, &a, "approve", v[0].id, "--note", "keep it inside the project", NULL);
	assert_int_equal(a.status, 0);
	assert_non_null(strstr(a.out, "approved"));
	wt_result_free(&a);

	struct wt_result r;
	finish_run(&bg, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "after"));
	assert_int_equal(access(made, F_OK), 0);
	char *told =
		wd_asprintf("warden: approved by %s with note: keep it inside the project", me());
	assert_non_null(strstr(r.err, told));
	struct wt_audit_q q = {.decision = "allow",
			       .source = "user",
			       .summary_sub = "=touch x",
			       .note_sub = "keep it inside the project",
			       .decided_by = me(),
			       .session = sid};
	assert_int_equal(wt_audit_match(f->db, &q), 1);
	/* Answered: gone from the desk (the session is over anyway). */
	assert_int_equal(desk_list(sid, v, 4), 0);
	wt_result_free(&r);
	free(told);
	free(made);
	free(sid);
}

static void test_desk_deny_with_note(void **state)
{
	struct wt_fx *f = *state;
	char *argv[] = {"run",	    "--tier", "standard",
			"--prompt", "desk",   "--",
			"/bin/sh",  "-c",     "touch x; echo rc=$?",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv, &bg);
	struct pend v[4];
	assert_int_equal(desk_wait(sid, 1, 10000, v, 4), 1);
	assert_string_equal(v[0].request, "touch x");
	struct wt_result a;
	wt_warden(NULL, &a, "deny", v[0].id, "--note", "use the build dir instead", NULL);
	assert_int_equal(a.status, 0);
	assert_non_null(strstr(a.out, "refused"));
	wt_result_free(&a);

	struct wt_result r;
	finish_run(&bg, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "rc=126"));
	assert_non_null(strstr(r.err, "Permission denied"));
	char *made = wd_asprintf("%s/x", f->proj);
	assert_int_not_equal(access(made, F_OK), 0);
	char *told = wd_asprintf("warden: refused by %s: use the build dir instead", me());
	assert_non_null(strstr(r.err, told));
	struct wt_audit_q q = {.decision = "deny",
			       .source = "user",
			       .summary_sub = "=touch x",
			       .note_sub = "use the build dir instead",
			       .decided_by = me(),
			       .session = sid};
	assert_int_equal(wt_audit_match(f->db, &q), 1);
	assert_int_equal(wt_audit_count(f->db, "allow", NULL, "=touch x", NULL), 0);
	wt_result_free(&r);
	free(told);
	free(made);
	free(sid);
}

static void test_desk_always_session(void **state)
{
	struct wt_fx *f = *state;
	char *argv[] = {"run",
			"--tier",
			"standard",
			"--",
			"/bin/sh",
			"-c",
			"touch a1 && echo one; touch a1 && echo two; touch a2; echo three=$?",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv, &bg);
	struct pend v[4];
	assert_int_equal(desk_wait(sid, 1, 10000, v, 4), 1);
	assert_string_equal(v[0].request, "touch a1");
	struct wt_result a;
	wt_warden(NULL, &a, "approve", v[0].id, "--always", NULL);
	assert_int_equal(a.status, 0);
	wt_result_free(&a);

	/* The second "touch a1" is not asked; "touch a2" is. */
	for (int i = 0; i < 200; i++) {
		if (desk_list(sid, v, 4) == 1 && strcmp(v[0].request, "touch a2") == 0)
			break;
		usleep(50000);
	}
	assert_int_equal(desk_list(sid, v, 4), 1);
	assert_string_equal(v[0].request, "touch a2");
	wt_warden(NULL, &a, "deny", v[0].id, NULL);
	assert_int_equal(a.status, 0);
	wt_result_free(&a);

	struct wt_result r;
	finish_run(&bg, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "one"));
	assert_non_null(strstr(r.out, "two"));
	assert_non_null(strstr(r.out, "three=126"));
	assert_int_equal(count_of(r.err, "waiting for a person"), 2);
	assert_int_equal(wt_audit_count(f->db, "allow", "user", "=touch a1", "rest of the session"),
			 1);
	assert_int_equal(wt_audit_count(f->db, "allow", "session_grant", "=touch a1", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, "deny", "user", "=touch a2", NULL), 1);
	char *a2 = wd_asprintf("%s/a2", f->proj);
	assert_int_not_equal(access(a2, F_OK), 0);
	free(a2);
	wt_result_free(&r);
	free(sid);
}

/* approve --always --project --yes, then a later run of the same command.
 * |existing|: the project has a permissions.json already. */
static void project_grant_flow(struct wt_fx *f, bool existing)
{
	if (existing)
		wt_write(f->proj, ".warden/permissions.json", "{}\n");
	char *argv[] = {"run", "--tier", "standard", "--", "/bin/sh", "-c", "touch pg; echo rc=$?",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv, &bg);
	struct pend v[4];
	assert_int_equal(desk_wait(sid, 1, 10000, v, 4), 1);
	assert_string_equal(v[0].request, "touch pg");
	/* Without --yes and without a terminal nothing is written. */
	struct wt_result a;
	wt_warden(NULL, &a, "approve", v[0].id, "--always", "--project", NULL);
	assert_int_not_equal(a.status, 0);
	wt_result_free(&a);
	assert_int_equal(desk_list(sid, v, 4), 1);
	wt_warden(NULL, &a, "approve", v[0].id, "--always", "--project", "--yes", NULL);
	assert_int_equal(a.status, 0);
	assert_non_null(strstr(a.out, "This persistent grant will be written"));
	assert_non_null(strstr(a.out, "touch"));
	wt_result_free(&a);

	struct wt_result r;
	finish_run(&bg, &r);
	assert_non_null(strstr(r.out, "rc=0"));
	wt_result_free(&r);
	assert_int_equal(wt_audit_count(f->db, "allow", "user", "=touch pg", "rest of the project"),
			 1);

	char *perm = wd_asprintf("%s/.warden/permissions.json", f->proj);
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(wd_read_file(perm, 1 << 20, &text, &len), 0);
	print_message("permissions.json: %s\n", text);
	assert_non_null(strstr(text, "touch"));
	assert_non_null(strstr(text, "pg"));
	assert_non_null(strstr(text, "\"by\""));
	assert_non_null(strstr(text, me()));
	free(text);

	/* A later run: granted, nobody asked. */
	char *pg = wd_asprintf("%s/pg", f->proj);
	unlink(pg);
	char *sid2 = start_run(f->proj, argv, &bg);
	finish_run(&bg, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "rc=0"));
	assert_null(strstr(r.err, "waiting for a person"));
	assert_int_equal(access(pg, F_OK), 0);
	struct wt_audit_q q = {.decision = "allow",
			       .source = "grant",
			       .summary_sub = "=touch pg",
			       .session = sid2};
	assert_int_equal(wt_audit_match(f->db, &q), 1);
	wt_result_free(&r);
	free(pg);
	free(perm);
	free(sid2);
	free(sid);
}

static void test_desk_always_project_grant(void **state)
{
	project_grant_flow(*state, true);
}

/* BUG: in a project without .warden/permissions.json (every project before
 * its first project grant), write_project_grant() in supervisor/pending.c
 * keeps rc == -ENOENT from wd_read_file() after falling back to the default
 * config and returns it: nothing is written, the approval silently becomes
 * a session grant ("the project grant could not be written: No such file or
 * directory; approved for this session only"), `warden approve` still
 * exits 0, and the next run asks again. */
static void test_desk_always_project_grant_new_file(void **state)
{
	project_grant_flow(*state, false);
}

/* ---- who may answer --------------------------------------------------- */

/* In a child that becomes uid/gid 65534 (nobody), optionally keeping
 * CAP_DAC_OVERRIDE (so that file permissions do not stop it and only the
 * desk's own SO_PEERCRED check is left), connects to |path| and sends
 * |req|. Returns "E<errno>" when the connection fails, else "C" and the
 * answer. Caller frees. */
static char *as_nobody(const char *path, bool keep_dac, const char *req)
{
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		if (keep_dac && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
			_exit(2);
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(3);
		if (keep_dac) {
			struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
			struct __user_cap_data_struct d[2];
			memset(d, 0, sizeof(d));
			if (syscall(SYS_capget, &h, d) < 0)
				_exit(4);
			d[0].effective = 1u << CAP_DAC_OVERRIDE;
			d[1].effective = 0;
			if (syscall(SYS_capset, &h, d) < 0)
				_exit(5);
		}
		if (geteuid() != 65534)
			_exit(6);
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			dprintf(pfd[1], "E%d", errno);
			_exit(0);
		}
		/* The desk may have closed already: no SIGPIPE, read what it
		 * said. */
		(void)!send(fd, req, strlen(req), MSG_NOSIGNAL);
		char buf[4096];
		ssize_t n;
		dprintf(pfd[1], "C");
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			(void)!write(pfd[1], buf, (size_t)n);
		_exit(0);
	}
	close(pfd[1]);
	struct wd_sb sb = {0};
	char buf[4096];
	ssize_t n;
	while ((n = read(pfd[0], buf, sizeof(buf))) > 0)
		wd_sb_add(&sb, buf, (size_t)n);
	close(pfd[0]);
	int status;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		print_message("the nobody child failed: status %d\n", status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return wd_sb_steal(&sb);
}

static void test_desk_refuses_other_uid(void **state)
{
	struct wt_fx *f = *state;
	if (geteuid() != 0) {
		print_message("SKIP part: becoming another user needs root\n");
		skip();
	}
	char *argv[] = {"run", "--tier", "standard", "--", "/bin/sh", "-c", "touch u; echo rc=$?",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv, &bg);
	struct pend v[4];
	assert_int_equal(desk_wait(sid, 1, 10000, v, 4), 1);
	char *dir = desk_dir();
	char *sock = wd_asprintf("%s/%s.sock", dir, sid);
	struct stat st;
	assert_int_equal(lstat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(lstat(sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));

	/* (a) Plain nobody: the 0700 runtime directory stops it. */
	char *got = as_nobody(sock, false, "list\tjson\n");
	assert_string_equal(got, "E13"); /* EACCES */
	free(got);

	/* (b) Nobody past the file permissions (CAP_DAC_OVERRIDE): the desk
	 * itself refuses the peer by its SO_PEERCRED uid, for listing and
	 * for answering alike. */
	got = as_nobody(sock, true, "list\tjson\n");
	print_message("nobody listing: %s\n", got);
	assert_true(got[0] == 'C');
	assert_non_null(strstr(got, "error\tpermission denied"));
	assert_null(strstr(got, "touch u"));
	free(got);
	char *req = wd_asprintf("answer\t%s\tonce\t\n", v[0].id);
	got = as_nobody(sock, true, req);
	assert_true(got[0] == 'C');
	assert_non_null(strstr(got, "error\tpermission denied"));
	free(got);
	free(req);
	/* Still pending, still not run. */
	assert_int_equal(desk_list(sid, v, 4), 1);
	assert_string_equal(v[0].request, "touch u");

	struct wt_result a;
	wt_warden(NULL, &a, "deny", v[0].id, "--note", "only the owner answers", NULL);
	assert_int_equal(a.status, 0);
	wt_result_free(&a);
	struct wt_result r;
	finish_run(&bg, &r);
	assert_non_null(strstr(r.out, "rc=126"));
	assert_int_equal(wt_audit_count(f->db, "allow", NULL, "=touch u", NULL), 0);
	assert_int_equal(wt_audit_count(f->db, "deny", "user", "=touch u", NULL), 1);
	wt_result_free(&r);
	free(sock);
	free(dir);
	free(sid);
}

/* The agent lists the runtime directory and tries to connect to a socket
 * in it: ARGV1 is the directory, ARGV2 a session id (else its own). */
#define PEEK_SCRIPT                                                                                \
	"ls -la \"$1\"; echo ls-rc=$?; "                                                           \
	"/usr/bin/python3 -c '\n"                                                                  \
	"import os, socket, sys\n"                                                                 \
	"sid = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else "                             \
	"os.environ[\"WARDEN_SESSION\"]\n"                                                         \
	"p = sys.argv[1] + \"/\" + sid + \".sock\"\n"                                              \
	"s = socket.socket(socket.AF_UNIX)\n"                                                      \
	"try:\n"                                                                                   \
	"    s.connect(p)\n"                                                                       \
	"    s.sendall(b\"list\\tjson\\n\")\n"                                                     \
	"    print(\"CONNECTED\", s.recv(4096))\n"                                                 \
	"except OSError as e:\n"                                                                   \
	"    print(\"connect-failed errno\", e.errno)\n"                                           \
	"' \"$1\" \"$2\"; echo py-rc=$?"

static void assert_nothing_seen(const char *out, const char *sid)
{
	assert_non_null(strstr(out, "connect-failed errno"));
	assert_null(strstr(out, "CONNECTED"));
	assert_null(strstr(out, ".sock"));
	/* ENOENT (nothing there) or EACCES: either way unreachable. */
	assert_true(strstr(out, "connect-failed errno 2\n") ||
		    strstr(out, "connect-failed errno 13\n"));
	assert_non_null(strstr(out, "ls-rc=0"));
	/* The listing shows no socket: only "total", "." and "..". */
	const char *ls = strstr(out, "ls-rc=");
	assert_non_null(ls);
	for (const char *l = out; l < ls; l = strchr(l, '\n') + 1) {
		if (strncmp(l, "total", 5) == 0)
			continue;
		const char *nl = strchr(l, '\n');
		assert_true(nl - l >= 2);
		bool dot = (nl[-1] == '.' && nl[-2] == ' ') ||
			   (nl[-1] == '.' && nl[-2] == '.' && nl[-3] == ' ');
		if (!dot)
			print_message("unexpected entry: %.*s\n", (int)(nl - l), l);
		assert_true(dot);
	}
	assert_null(strstr(out, sid));
}

static void test_desk_invisible_inside_sandbox(void **state)
{
	struct wt_fx *f = *state;
	char *dir = desk_dir();
	/* Session A waits for a person on the agent's own attempt: its
	 * socket exists outside while the agent looks for it. */
	char *argv_a[] = {"run",       "--tier", "standard", "--", "/bin/sh", "-c",
			  PEEK_SCRIPT, "peek",	 dir,	     "",   NULL};
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv_a, &bg);
	struct pend v[4];
	assert_int_equal(desk_wait(sid, 1, 10000, v, 4), 1);
	assert_non_null(strstr(v[0].request, "python3"));
	char *sock = wd_asprintf("%s/%s.sock", dir, sid);
	struct stat st;
	assert_int_equal(lstat(sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));

	/* Session B (aggressive: the helper runs without asking) looks for
	 * A's socket by name. */
	struct wt_result b;
	wt_warden(f->proj, &b, "run", "--tier", "aggressive", "--", "/bin/sh", "-c", PEEK_SCRIPT,
		  "peek", dir, sid, NULL);
	print_message("aggressive agent saw:\n%s%s", b.out, b.err);
	assert_int_equal(b.status, 0);
	assert_nothing_seen(b.out, sid);
	assert_non_null(strstr(b.out, "py-rc=0"));
	wt_result_free(&b);
	if (getenv("XDG_RUNTIME_DIR"))
		print_message("note: $XDG_RUNTIME_DIR is set; the desk is %s\n", dir);

	/* A's request is untouched; let its helper try its own socket. */
	assert_int_equal(desk_list(sid, v, 4), 1);
	struct wt_result a;
	wt_warden(NULL, &a, "approve", v[0].id, NULL);
	assert_int_equal(a.status, 0);
	wt_result_free(&a);
	struct wt_result r;
	finish_run(&bg, &r);
	print_message("standard agent saw:\n%s", r.out);
	assert_nothing_seen(r.out, sid);
	assert_non_null(strstr(r.out, "py-rc=0"));
	wt_result_free(&r);
	free(sock);
	free(sid);
	free(dir);
}

/* ---- deadlines, tiers, review runs ----------------------------------- */

static void test_desk_deadline_expiry(void **state)
{
	struct wt_fx *f = *state;
	char *argv[] = {"run", "--tier",  "standard", "--approval-timeout",	"2s",
			"--",  "/bin/sh", "-c",	      "touch late; echo rc=$?", NULL};
	int64_t t0 = wd_now_mono_ns();
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv, &bg);
	struct pend v[4];
	assert_int_equal(desk_wait(sid, 1, 10000, v, 4), 1);
	int64_t seen = wd_now_mono_ns();
	assert_string_equal(v[0].request, "touch late");
	struct wt_result r;
	finish_run(&bg, &r);
	int64_t t1 = wd_now_mono_ns();
	print_message("pending seen after %lld ms, refused after %lld ms\n",
		      (long long)((seen - t0) / 1000000), (long long)((t1 - t0) / 1000000));
	assert_true(t1 - t0 >= 1900000000LL);
	assert_true(t1 - t0 < 8000000000LL);
	assert_non_null(strstr(r.out, "rc=126"));
	assert_non_null(strstr(r.err, NOTE_DEADLINE));
	struct wt_audit_q q = {.decision = "deny",
			       .source = "timeout",
			       .summary_sub = "=touch late",
			       .reason_sub = NOTE_DEADLINE,
			       .decided_by = "warden"};
	assert_int_equal(wt_audit_match(f->db, &q), 1);
	assert_int_equal(wt_audit_count(f->db, NULL, "user", NULL, NULL), 0);
	char *late = wd_asprintf("%s/late", f->proj);
	assert_int_not_equal(access(late, F_OK), 0);
	free(late);
	wt_result_free(&r);
	free(sid);
}

/*
 * Opens waiting for a person are capped (the view's workers must not all
 * wait): 56 processes open 56 sensitive files at once; 48 wait on the
 * desk, the other 8 are refused at once, and each of those refusals is
 * audited (source "limit") before it is answered. Meanwhile an ordinary
 * read still works. Then the 48 reach their deadline.
 */
static void test_desk_waiting_opens_capped(void **state)
{
	struct wt_fx *f = *state;
	for (int i = 1; i <= 56; i++) {
		char name[32];
		snprintf(name, sizeof(name), ".env.%d", i);
		wt_write(f->proj, name, "K=V\n");
	}
	char *argv[] = {"run",
			"--tier",
			"standard",
			"--approval-timeout",
			"4s",
			"--",
			"/bin/sh",
			"-c",
			"i=0; while [ $i -lt 56 ]; do i=$((i+1)); (read x < .env.$i) 2>/dev/null & "
			"done; sleep 1; cat README.md; wait; echo all-done",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv, &bg);
	struct pend v[64];
	assert_int_equal(desk_wait(sid, 48, 10000, v, 64), 48);
	struct wt_result r;
	finish_run(&bg, &r);
	assert_non_null(strstr(r.out, "# a project"));
	assert_non_null(strstr(r.out, "all-done"));
	struct wt_audit_q lim = {.decision = "deny", .source = "limit", .decided_by = "warden"};
	assert_int_equal(wt_audit_match(f->db, &lim), 8);
	assert_int_equal(wt_audit_count(f->db, "deny", "timeout", "read .env.", NULL), 48);
	wt_result_free(&r);
	free(sid);
}

static void test_desk_tier_fixed_notes(void **state)
{
	struct wt_fx *f = *state;
	struct wt_result r;
	wt_warden(f->proj, &r, "run", "--tier", "aggressive", "--", "/bin/sh", "-c",
		  "touch agg; echo rc=$?", NULL);
	assert_non_null(strstr(r.out, "rc=0"));
	assert_null(strstr(r.err, "waiting for a person"));
	assert_int_equal(wt_audit_count(f->db, "allow", "tier", "=touch agg", NOTE_AGGRESSIVE), 1);
	wt_result_free(&r);
	wt_warden(f->proj, &r, "run", "--tier", "passive", "--", "/bin/sh", "-c",
		  "touch pas; echo rc=$?", NULL);
	assert_non_null(strstr(r.out, "rc=126"));
	assert_non_null(strstr(r.err, NOTE_PASSIVE));
	assert_int_equal(wt_audit_count(f->db, "deny", "tier", "=touch pas", NOTE_PASSIVE), 1);
	wt_result_free(&r);
}

static void test_desk_review_run_never_prompts(void **state)
{
	struct wt_fx *f = *state;
	wt_write(f->proj, ".env", "API_TOKEN=hunter2-review\n");
	char *argv[] = {"run",
			"--role",
			"review",
			"--tier",
			"standard",
			"--",
			"/bin/sh",
			"-c",
			"read l < .env; echo \"read=$l\"; cat .env; echo cat=$?; touch y; "
			"echo touch=$?; echo x > z; echo write=$?",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv, &bg);
	struct wt_result r;
	finish_run(&bg, &r); /* never stalls: no one answers here */
	print_message("review run: %s%s", r.out, r.err);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.err, "waiting for a person"));
	/* The escalation: refused by the tier with the review note. */
	assert_non_null(strstr(r.out, "touch=126"));
	assert_non_null(strstr(r.err, "review run"));
	struct wt_audit_q q = {.decision = "deny",
			       .source = "tier",
			       .summary_sub = "=touch y",
			       .reason_sub = "review run",
			       .session = sid};
	assert_int_equal(wt_audit_match(f->db, &q), 1);
	assert_int_equal(wt_audit_count(f->db, NULL, "user", NULL, NULL), 0);
	/* The view is read-only. */
	assert_non_null(strstr(r.out, "write="));
	assert_null(strstr(r.out, "write=0"));
	assert_non_null(strstr(r.err, "Read-only file system"));
	char *y = wd_asprintf("%s/y", f->proj), *z = wd_asprintf("%s/z", f->proj);
	assert_int_not_equal(access(y, F_OK), 0);
	assert_int_not_equal(access(z, F_OK), 0);
	free(y);
	free(z);
	/* BUG: reading .env in a review run is refused, both through the
	 * view (the shell's own open: warden: refused "read .env": review
	 * run: escalations are never asked...) and as `cat .env` (refused
	 * exec of "cat .env": ...), although review runs read sensitive
	 * resources without asking (README: "sensitive files
	 * are read without asking"). The open: policy/decide.c decide_open()
	 * clears |sensitive| for review reads, but supervisor/pipeline.c runs
	 * every open with no_fast_path, so the read falls through to
	 * POL_UNDECIDED ("a change to .env needs a decision") and the review
	 * tier refuses it. The exec: decide_exec() ignores ctx->review, so a
	 * read-only command with a sensitive argument escalates. */
	assert_non_null(strstr(r.out, "read=API_TOKEN=hunter2-review"));
	assert_non_null(strstr(r.out, "cat=0"));
	assert_int_equal(count_of(r.out, "API_TOKEN=hunter2-review"), 2);
	wt_result_free(&r);
	free(sid);
}

/* ---- many at once, and a caller that stops waiting -------------------- */

static void test_desk_ten_pending_out_of_order(void **state)
{
	struct wt_fx *f = *state;
	char *argv[] = {"run",
			"--tier",
			"standard",
			"--",
			"/bin/sh",
			"-c",
			"for i in 0 1 2 3 4 5 6 7 8 9; do (touch f$i && echo ok$i) & done; wait",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv, &bg);
	struct pend v[16];
	size_t n = desk_wait(sid, 10, 15000, v, 16);
	assert_int_equal(n, 10);
	long pids[10];
	for (int i = 0; i < 10; i++) {
		char want[32];
		snprintf(want, sizeof(want), "touch f%d", i);
		int k = find_req(v, n, want);
		assert_true(k >= 0);
		pids[i] = v[k].pid;
		for (int j = 0; j < i; j++)
			assert_true(pids[j] != pids[i]); /* ten processes */
	}
	static const int order[10] = {7, 2, 9, 0, 5, 4, 1, 8, 3, 6};
	for (int o = 0; o < 10; o++) {
		int i = order[o];
		char want[32], note[32];
		snprintf(want, sizeof(want), "touch f%d", i);
		snprintf(note, sizeof(note), "%s %d", i % 2 ? "odd" : "even", i);
		int k = find_req(v, n, want);
		struct wt_result a;
		wt_warden(NULL, &a, i % 2 ? "deny" : "approve", v[k].id, "--note", note, NULL);
		if (a.status != 0)
			print_message("answering %s: %s%s\n", v[k].id, a.out, a.err);
		assert_int_equal(a.status, 0);
		wt_result_free(&a);
		/* Exactly the others still wait. */
		struct pend rest[16];
		assert_int_equal(desk_list(sid, rest, 16), 9 - o);
		assert_int_equal(find_req(rest, (size_t)(9 - o), want), -1);
	}
	struct wt_result r;
	finish_run(&bg, &r);
	assert_int_equal(r.status, 0);
	for (int i = 0; i < 10; i++) {
		char ok[24], file[32], note[96];
		snprintf(ok, sizeof(ok), "ok%d", i);
		snprintf(file, sizeof(file), "=touch f%d", i);
		char *path = wd_asprintf("%s/f%d", f->proj, i);
		struct wt_audit_q q = {.decision = i % 2 ? "deny" : "allow",
				       .source = "user",
				       .summary_sub = file,
				       .note_sub = i % 2 ? "odd" : "even",
				       .decided_by = me()};
		assert_int_equal(wt_audit_match(f->db, &q), 1);
		if (i % 2) {
			assert_null(strstr(r.out, ok));
			assert_int_not_equal(access(path, F_OK), 0);
			snprintf(note, sizeof(note), "refused by %s: odd %d", me(), i);
		} else {
			assert_non_null(strstr(r.out, ok));
			assert_int_equal(access(path, F_OK), 0);
			snprintf(note, sizeof(note), "approved by %s with note: even %d", me(), i);
		}
		assert_non_null(strstr(r.err, note));
		free(path);
	}
	assert_int_equal(wt_audit_count(f->db, "allow", "user", "touch f", NULL), 5);
	assert_int_equal(wt_audit_count(f->db, "deny", "user", "touch f", NULL), 5);
	wt_result_free(&r);
	free(sid);
}

static void test_desk_killed_caller_stopped(void **state)
{
	struct wt_fx *f = *state;
	char *argv[] = {"run",
			"--tier",
			"standard",
			"--",
			"/bin/sh",
			"-c",
			"touch k & sleep 2; kill -9 $!; sleep 3; echo end",
			NULL};
	struct wt_bg bg;
	char *sid = start_run(f->proj, argv, &bg);
	struct pend v[4];
	assert_int_equal(desk_wait(sid, 1, 10000, v, 4), 1);
	assert_string_equal(v[0].request, "touch k");
	/* Killed at 2 s: the entry goes while the agent still runs. */
	assert_int_equal(desk_wait(sid, 0, 4500, v, 4), 0);
	char *out = wt_bg_out(&bg);
	assert_null(strstr(out, "end"));
	free(out);
	struct wt_result r;
	finish_run(&bg, &r);
	assert_non_null(strstr(r.out, "end"));
	struct wt_audit_q q = {.decision = "deny",
			       .source = "stopped",
			       .summary_sub = "=touch k",
			       .reason_sub = "killed",
			       .decided_by = "warden"};
	assert_int_equal(wt_audit_match(f->db, &q), 1);
	assert_int_equal(wt_audit_count(f->db, NULL, NULL, "=touch k", NULL), 1);
	assert_int_equal(wt_audit_count(f->db, NULL, "user", NULL, NULL), 0);
	char *k = wd_asprintf("%s/k", f->proj);
	assert_int_not_equal(access(k, F_OK), 0);
	free(k);
	wt_result_free(&r);
	free(sid);
}

int main(void)
{
	wt_require_sandbox();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_desk_approve_with_note, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_same_request_joins, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_deny_with_note, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_always_session, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_always_project_grant, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_always_project_grant_new_file,
						wt_fx_setup, wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_refuses_other_uid, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_invisible_inside_sandbox, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_deadline_expiry, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_tier_fixed_notes, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_review_run_never_prompts, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_ten_pending_out_of_order, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_killed_caller_stopped, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_desk_waiting_opens_capped, wt_fx_setup,
						wt_fx_teardown),
	};
	return cmocka_run_group_tests_name("desk", tests, NULL, NULL);
}
