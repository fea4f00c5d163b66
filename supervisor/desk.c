/*
 * desk.c: the approvals desk. Each `warden run` listens on a Unix socket in
 * a private runtime directory ($XDG_RUNTIME_DIR/warden or /run/warden,
 * 0700; hidden from the sandbox); people answer from another terminal with
 * `warden approvals`, `warden approve` and `warden deny`. Only the user who
 * started the run, or root (the peer's SO_PEERCRED uid), may see or answer.
 * One request line and one answer per connection ("list json|table",
 * "preview ID" (answers "ok\tFILE\t...": the grant and the file it goes
 * to), "answer ID once|always|project|reject HEXNOTE"), served
 * non-blocking in the event loop. docs/design.md, section "The approvals
 * desk".
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define LINE_MAX_BYTES 8192

struct conn {
	struct sup_run *r;
	int fd;
	uid_t uid;
	char buf[LINE_MAX_BYTES];
	size_t len;
};

char *sup_desk_dir(bool create)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *dir;
	if (xdg && xdg[0] == '/')
		dir = wd_asprintf("%s/warden", xdg);
	else if (geteuid() == 0)
		dir = wd_strdup("/run/warden");
	else
		dir = wd_asprintf("/tmp/warden-%u", (unsigned)getuid());
	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int e = errno;
		free(dir);
		errno = e;
		return NULL;
	}
	struct stat st;
	if (lstat(dir, &st) < 0) {
		int e = errno;
		free(dir);
		errno = e;
		return NULL;
	}
	/* Never trust a directory someone else made or opened up. */
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		free(dir);
		errno = EPERM;
		return NULL;
	}
	return dir;
}

static const char *short_id(const struct sup_run *r)
{
	size_t n = strlen(r->session_id);
	return n > 4 ? r->session_id + n - 4 : r->session_id;
}

/* The requesting process's working directory from /proc (as the sandbox
 * names it). Caller frees. */
static char *proc_cwd(const struct sup_request *rq)
{
	char link[64], buf[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/%d/cwd", rq->pid);
	ssize_t n = rq->pid > 0 ? readlink(link, buf, sizeof(buf) - 1) : -1;
	if (n <= 0)
		return wd_strdup("?");
	buf[n] = '\0';
	return wd_strdup(buf);
}

/* An exec's working directory as decoded. */
char *sup_exec_cwd(const struct sup_request *rq)
{
	if (rq->ev && rq->ev->cwd)
		return wd_strdup(rq->ev->cwd);
	return proc_cwd(rq);
}

char *sup_open_cwd(const struct sup_request *rq)
{
	return proc_cwd(rq);
}

/* The process's command line. Caller frees. */
static char *proc_command(const struct sup_request *rq)
{
	char *cmd = rq->pid > 0 ? sbx_proc_cmdline(rq->pid, SBX_CMDLINE_MAX) : NULL;
	return cmd ? cmd : wd_strdup("?");
}

/* An exec's argv as it will run. */
char *sup_exec_command(const struct sup_request *rq)
{
	if (rq->ev && rq->ev->argv && rq->ev->argv[0])
		return wd_argv_join(rq->ev->argv);
	return proc_command(rq);
}

char *sup_open_command(const struct sup_request *rq)
{
	return proc_command(rq);
}

/* The requesting process's working directory and full command, as its
 * kind knows them. Caller frees. */
static char *request_cwd(const struct sup_request *rq)
{
	return sup_kind_ops(rq->kind)->cwd(rq);
}

static char *request_command(const struct sup_request *rq)
{
	return sup_kind_ops(rq->kind)->command(rq);
}

static void list_json(struct sup_run *r, struct wd_sb *sb)
{
	int64_t now = wd_now_real_us();
	wd_sb_putc(sb, '[');
	bool first = true;
	for (struct sup_pending *p = r->pending; p; p = p->next) {
		const struct sup_request *rq = p->rq;
		char id[96], deadline[40];
		snprintf(id, sizeof(id), "%s-%u", short_id(r), p->id);
		wd_format_time(p->deadline_us, deadline, sizeof(deadline));
		char *cmd = sbx_proc_cmdline(rq->pid, 2048);
		wd_sb_puts(sb, first ? "{" : ",{");
		first = false;
		wd_sb_puts(sb, "\"id\":");
		wd_sb_json_str(sb, id);
		wd_sb_puts(sb, ",\"session\":");
		wd_sb_json_str(sb, r->session_id);
		wd_sb_printf(sb, ",\"age_s\":%lld", (long long)((now - p->since_us) / 1000000));
		wd_sb_puts(sb, ",\"kind\":");
		wd_sb_json_str(sb, pol_kind_name(rq->kind));
		wd_sb_puts(sb, ",\"request\":");
		wd_sb_json_str(sb, rq->summary);
		wd_sb_printf(sb, ",\"pid\":%d,\"process\":", rq->pid);
		wd_sb_json_str(sb, cmd ? cmd : "");
		char *cwd = request_cwd(rq), *full = request_command(rq);
		wd_sb_puts(sb, ",\"cwd\":");
		wd_sb_json_str(sb, cwd);
		wd_sb_puts(sb, ",\"command\":");
		wd_sb_json_str(sb, full);
		free(cwd);
		free(full);
		wd_sb_puts(sb, ",\"why\":");
		wd_sb_json_str(sb, rq->pol.reason);
		wd_sb_puts(sb, ",\"judge\":");
		if (rq->judge_reason)
			wd_sb_json_str(sb, rq->judge_reason);
		else
			wd_sb_puts(sb, "null");
		wd_sb_puts(sb, ",\"deadline\":");
		wd_sb_json_str(sb, deadline);
		wd_sb_printf(sb, ",\"deadline_in_s\":%lld",
			     (long long)((p->deadline_us - now) / 1000000));
		/* Approval memory: advice for the person, never a decision. */
		char *seen = NULL, *ctx = NULL;
		if (rq->req && sup_memory_advice(r->db, rq->req, &seen, &ctx) == 0) {
			wd_sb_puts(sb, ",\"seen_before\":");
			wd_sb_json_str(sb, seen);
			wd_sb_printf(sb, ",\"memory\":%s", ctx);
		}
		free(seen);
		free(ctx);
		wd_sb_putc(sb, '}');
		free(cmd);
	}
	wd_sb_puts(sb, "]\n");
}

static void list_table(struct sup_run *r, struct wd_sb *sb)
{
	int64_t now = wd_now_real_us();
	for (struct sup_pending *p = r->pending; p; p = p->next) {
		const struct sup_request *rq = p->rq;
		char *cmd = request_command(rq), *cwd = request_cwd(rq);
		char *seen = NULL, *ctx = NULL;
		if (!rq->req || sup_memory_advice(r->db, rq->req, &seen, &ctx) < 0)
			seen = wd_strdup("no similar decisions");
		/* The table is tab- and newline-separated and ends on a person's
		 * terminal: every field from the agent or a model is sanitised
		 * (a tab or newline in it becomes visible text). */
		char *f_sum = wd_sanitize(rq->summary), *f_cmd = wd_sanitize(cmd ? cmd : "?");
		char *f_why = wd_sanitize(rq->judge_reason ? rq->judge_reason : rq->pol.reason);
		char *f_seen = wd_sanitize(seen), *f_cwd = wd_sanitize(cwd);
		wd_sb_printf(sb, "%s-%u\t%s\t%llds\t%s\t%s\tpid %d (%s)\t%s\t%llds left\t%s\t%s\n",
			     short_id(r), p->id, r->session_id,
			     (long long)((now - p->since_us) / 1000000), pol_kind_name(rq->kind),
			     f_sum, rq->pid, f_cmd, f_why,
			     (long long)((p->deadline_us - now) / 1000000), f_seen, f_cwd);
		free(f_cwd);
		free(cwd);
		free(f_sum);
		free(f_cmd);
		free(f_why);
		free(f_seen);
		free(seen);
		free(ctx);
		free(cmd);
	}
}

static char *user_name(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);
	return pw ? wd_strdup(pw->pw_name) : wd_asprintf("uid %u", (unsigned)uid);
}

static struct sup_pending *find_id(struct sup_run *r, const char *id)
{
	const char *dash = strrchr(id, '-');
	/* The whole short session id, then the number: nothing looser. */
	if (!dash || (size_t)(dash - id) != strlen(short_id(r)) ||
	    strncmp(id, short_id(r), (size_t)(dash - id)) != 0)
		return NULL;
	const char *num = dash + 1;
	char *end = NULL;
	unsigned long n = strtoul(num, &end, 10);
	if (!*num || *end)
		return NULL;
	return sup_pending_find(r, (unsigned)n);
}

static void handle(struct conn *c, char *line, struct wd_sb *out)
{
	struct sup_run *r = c->r;
	char *save = NULL;
	char *verb = strtok_r(line, "\t", &save);
	if (!verb) {
		wd_sb_puts(out, "error\tempty request\n");
		return;
	}
	if (strcmp(verb, "list") == 0) {
		char *fmt = strtok_r(NULL, "\t", &save);
		if (fmt && strcmp(fmt, "table") == 0)
			list_table(r, out);
		else
			list_json(r, out);
		return;
	}
	char *id = strtok_r(NULL, "\t", &save);
	struct sup_pending *p = id ? find_id(r, id) : NULL;
	if (!p) {
		wd_sb_printf(out,
			     "error\tno pending request %s in session %s (decided already, or "
			     "past its deadline?)\n",
			     id ? id : "(none)", r->session_id);
		return;
	}
	if (strcmp(verb, "preview") == 0) {
		char *json = pol_request_json(p->rq->req);
		wd_sb_printf(out, "ok\t%s/.warden/permissions.json\tgrant for %s: %s\n",
			     r->opts.project, p->rq->summary, json);
		free(json);
		return;
	}
	if (strcmp(verb, "answer") != 0) {
		wd_sb_printf(out, "error\tunknown request \"%s\"\n", verb);
		return;
	}
	char *kind = strtok_r(NULL, "\t", &save);
	char *hexnote = strtok_r(NULL, "\t", &save);
	enum sup_answer a;
	if (kind && strcmp(kind, "once") == 0)
		a = SUP_ANSWER_ONCE;
	else if (kind && strcmp(kind, "always") == 0)
		a = SUP_ANSWER_ALWAYS;
	else if (kind && strcmp(kind, "project") == 0)
		a = SUP_ANSWER_ALWAYS_PROJECT;
	else if (kind && strcmp(kind, "reject") == 0)
		a = SUP_ANSWER_REJECT;
	else {
		wd_sb_puts(out, "error\tthe answer must be once, always, project or reject\n");
		return;
	}
	char *note = hexnote && *hexnote ? wd_hex_decode(hexnote) : NULL;
	if (hexnote && *hexnote && !note) {
		wd_sb_puts(out, "error\tthe note is not valid hex\n");
		return;
	}
	char *who = user_name(c->uid);
	char *summary = wd_strdup(p->rq->summary);
	char *written = NULL, *err = NULL;
	int rc = sup_pending_answer(r, p, a, note, who, &written, &err);
	char *msg = err	      ? wd_steal_pointer(&err)
		    : written ? wd_asprintf("wrote %s/.warden/permissions.json:\n%s",
					    r->opts.project, written)
			      : NULL;
	free(written);
	/* How long the approval holds, in the person's words. */
	const char *scope = a == SUP_ANSWER_ALWAYS ? " for the rest of this session"
			    : a == SUP_ANSWER_ALWAYS_PROJECT
				    ? (rc == 0 ? " in this project, from now on"
					       : " for the rest of this session")
				    : "";
	wd_sb_printf(out, "ok\t%s %s%s: %s%s%s\n", a == SUP_ANSWER_REJECT ? "refused" : "approved",
		     id, scope, summary, msg ? "\n" : "", msg ? msg : "");
	free(msg);
	free(summary);
	free(who);
	free(note);
}

static void conn_close(struct conn *c)
{
	sup_loop_del(c->r->loop, c->fd);
	close(c->fd);
	free(c);
}

static void on_conn(struct sup_loop *l, int fd, uint32_t events, void *arg)
{
	(void)l;
	(void)fd;
	struct conn *c = arg;
	if (events & (EPOLLHUP | EPOLLERR) && !(events & EPOLLIN)) {
		conn_close(c);
		return;
	}
	ssize_t n = read(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		conn_close(c);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	char *nl = strchr(c->buf, '\n');
	if (!nl) {
		if (c->len >= sizeof(c->buf) - 1)
			conn_close(c); /* an over-long request is dropped */
		return;
	}
	*nl = '\0';
	struct wd_sb out = {0};
	handle(c, c->buf, &out);
	/* Answers are small; a peer that does not read them loses them. */
	(void)!send(c->fd, out.buf, out.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	wd_sb_free(&out);
	conn_close(c);
}

static void on_accept(struct sup_loop *l, int fd, uint32_t events, void *arg)
{
	(void)events;
	struct sup_run *r = arg;
	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0)
			return;
		struct ucred cr;
		socklen_t len = sizeof(cr);
		if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
		    (cr.uid != getuid() && cr.uid != 0)) {
			char *me = getuid() == 0 ? NULL : user_name(getuid());
			char msg[256];
			int m = snprintf(
				msg, sizeof(msg),
				"error\tpermission denied: only %s%s may answer this session\n",
				me ? me : "root", me ? " or root" : "");
			(void)!send(cfd, msg, (size_t)m, MSG_DONTWAIT | MSG_NOSIGNAL);
			free(me);
			close(cfd);
			continue;
		}
		struct conn *c = wd_calloc(1, sizeof(*c));
		c->r = r;
		c->fd = cfd;
		c->uid = cr.uid;
		if (sup_loop_add(l, cfd, EPOLLIN, on_conn, c) < 0) {
			close(cfd);
			free(c);
		}
	}
}

int sup_desk_open(struct sup_run *r)
{
	wd_autofree char *dir = sup_desk_dir(true);
	if (!dir)
		return -errno;
	r->desk_path = wd_asprintf("%s/%s.sock", dir, r->session_id);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(r->desk_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, r->desk_path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(r->desk_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(r->desk_path, 0600) < 0 ||
	    listen(fd, 16) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	r->desk_fd = fd;
	return 0;
}

void sup_desk_close(struct sup_run *r)
{
	if (r->desk_fd >= 0) {
		if (r->loop)
			sup_loop_del(r->loop, r->desk_fd);
		close(r->desk_fd);
		r->desk_fd = -1;
	}
	if (r->desk_path) {
		unlink(r->desk_path);
		free(r->desk_path);
		r->desk_path = NULL;
	}
}

int sup_desk_watch(struct sup_run *r)
{
	return r->desk_fd >= 0 ? sup_loop_add(r->loop, r->desk_fd, EPOLLIN, on_accept, r) : 0;
}
