/*
 * sockets.c: the supervisor's side of the socket calls the filter stops
 * (connect, sendto with an address, sendmsg, sendmmsg; sandbox/sock.c
 * decodes them and says why the decision cannot be raced).
 *
 * A pathname Unix socket in the project's view or a private directory is
 * inside the boundary; any other is reachable only when the config's
 * "sockets": {"allow": [...]} lists it. An abstract name is refused. A
 * refusal fails with EACCES (EPERM for an abstract name), is told on the
 * caller's stderr and audited with kind "connect"; an allowed call is done
 * on the caller's behalf on a thread of its own. docs/design.md, section
 * "Socket calls". An IP destination is a request of the pipeline:
 * connect.c.
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#define WORKERS_MAX 64

#define REASON_OUTSIDE                                                                             \
	"a Unix socket outside the sandbox (list it in \"sockets\": {\"allow\": [...]} of "        \
	".warden/permissions.json to allow it)"
#define REASON_ABSTRACT                                                                            \
	"an abstract Unix socket name cannot be checked without a race under warden; use a "       \
	"socket path in the project"

static atomic_uint workers;

const char *sup_sock_op_name(enum sbx_sock_op op)
{
	switch (op) {
	case SBX_SOCK_CONNECT:
		return "connect";
	case SBX_SOCK_SENDTO:
		return "sendto";
	case SBX_SOCK_SENDMSG:
		return "sendmsg";
	case SBX_SOCK_SENDMMSG:
	default:
		return "sendmmsg";
	}
}

static const char *type_name(int type)
{
	switch (type) {
	case SOCK_STREAM:
		return "stream";
	case SOCK_DGRAM:
		return "dgram";
	case SOCK_SEQPACKET:
		return "seqpacket";
	default:
		return "other";
	}
}

/* The mount |fd| is on (statx's mount id), or 0. */
static uint64_t mount_of(int fd)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
		return 0;
	return sx.stx_mnt_id;
}

/* Whether the socket file |fd| (named |canon| by the kernel) lies under
 * |anchor| (a path in the sandbox) on the mount the sandbox has there. */
static bool under(const struct sup_run *r, int fd, const char *canon, const char *anchor)
{
	if (!wd_path_within(canon, anchor))
		return false;
	struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_DIRECTORY,
			       .resolve = RESOLVE_IN_ROOT};
	wd_autoclose int afd =
		(int)syscall(SYS_openat2, r->child.root_fd, anchor, &how, sizeof(how));
	if (afd < 0)
		return false;
	uint64_t m = mount_of(fd);
	return m != 0 && m == mount_of(afd);
}

/* Inside the boundary: the project's view (with --no-view the project is
 * the real directory, where a socket of the host can be renamed or linked
 * in, so nothing there counts), and the session's private directories. */
static bool inside(const struct sup_run *r, int fd, const char *canon)
{
	if (!r->opts.no_view && under(r, fd, canon, r->opts.project))
		return true;
	for (size_t i = 0; r->private_dirs && r->private_dirs[i]; i++)
		if (under(r, fd, canon, r->private_dirs[i]))
			return true;
	return false;
}

/* Writes the audit row of a decided destination. 0 or -errno. */
static int audit(struct sup_run *r, const struct sbx_sock_event *ev, const char *given,
		 const char *canon, bool allow, enum pol_source source, const char *reason,
		 int64_t t0)
{
	struct sup_proc *p = sup_proc_get(r, ev->pid);
	bool adopted = false;
	if (!p) {
		p = sup_proc_adopt(r, ev->pid, 0, 0);
		adopted = true;
	}
	struct wd_sb req = {0}, sum = {0};
	wd_sb_puts(&req, "{\"syscall\":");
	wd_sb_json_str(&req, sup_sock_op_name(ev->op));
	wd_sb_puts(&req, ",\"path\":");
	wd_sb_json_str(&req, given);
	wd_sb_puts(&req, ",\"resolved\":");
	wd_sb_json_str(&req, canon);
	wd_sb_puts(&req, ",\"socket\":");
	wd_sb_json_str(&req, type_name(ev->type));
	wd_sb_puts(&req, "}");
	wd_sb_printf(&sum, "%s %s", sup_sock_op_name(ev->op), canon);
	if (strcmp(given, canon) != 0)
		wd_sb_printf(&sum, " (as %s)", given);
	struct sto_row row = {
		.ts_us = wd_now_real_us(),
		.session = r->session_id,
		.pid = ev->pid,
		.ppid = p ? p->ppid : 0,
		.kind = pol_kind_name(POL_CONNECT),
		.request = req.buf,
		.summary = sum.buf,
		.decision = allow ? "allow" : "deny",
		.source = pol_source_name(source),
		.reason = reason,
		.decided_by = "warden",
		.tool_call = p ? p->tool_call : 0,
		.latency_us = (wd_now_mono_ns() - t0) / 1000,
	};
	int rc = sto_append(r->db, &row, NULL);
	r->stats.rows++;
	if (rc < 0) {
		r->audit_failures++;
		wd_err("the audit row for \"%s\" could not be written (%s): refused", sum.buf,
		       strerror(-rc));
	}
	wd_debug("%s %s (%s: %s)", allow ? "allowed" : "refused", sum.buf, pol_source_name(source),
		 reason);
	if (!allow)
		sup_tell(r, ev->tgid, "refused %s to %s: %s", sup_sock_op_name(ev->op), canon,
			 reason);
	if (adopted && p)
		sup_proc_keep_untraced(r, p);
	wd_sb_free(&req);
	wd_sb_free(&sum);
	return rc;
}

/* Decides the pathname destination |m|: 0 to go on, or the errno the call
 * fails with. */
static int decide_path(struct sup_run *r, struct sbx_sock_event *ev, struct sbx_sock_msg *m,
		       int64_t t0)
{
	int fd = sbx_sock_resolve(ev, r->child.root_fd, m->path);
	if (fd < 0)
		return -fd; /* nothing there: the kernel would say the same */
	m->target_fd = fd;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		return ECONNREFUSED; /* unix_find_bsd() on a file that is no socket */
	char link[64], canon[4096];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, canon, sizeof(canon) - 1);
	if (n <= 0)
		return EACCES;
	canon[n] = '\0';
	if (inside(r, fd, canon))
		return 0;
	/* The same socket twice in one sendmmsg is decided once. */
	for (struct sbx_sock_msg *o = ev->msgs; o < m; o++)
		if (o->kind == SBX_ADDR_PATH && o->target_fd >= 0) {
			struct stat os;
			if (fstat(o->target_fd, &os) == 0 && os.st_dev == st.st_dev &&
			    os.st_ino == st.st_ino)
				return 0;
		}
	const char *entry = pol_socket_allowed(r->config, canon);
	if (entry) {
		char reason[512];
		snprintf(reason, sizeof(reason), "the config's sockets.allow lists it (%.400s)",
			 entry);
		return audit(r, ev, m->path, canon, true, POL_SRC_RULE, reason, t0) < 0 ? EACCES
											: 0;
	}
	(void)audit(r, ev, m->path, canon, false, POL_SRC_BOUNDARY, REASON_OUTSIDE, t0);
	return EACCES;
}

/* The abstract name of |m| as text ("@name"; a NUL shows as "@", any other
 * byte that is not printable ASCII as "?"). */
static char *abstract_name(const struct sbx_sock_msg *m)
{
	size_t off = offsetof(struct sockaddr_un, sun_path);
	size_t n = m->rawlen > off ? m->rawlen - off : 0;
	char *s = wd_malloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)m->raw[off + i];
		s[i] = c == 0 ? '@' : (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	s[n] = '\0';
	return s;
}

struct job {
	int nfd;
	struct sbx_sock_event *ev;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	(void)sbx_sock_perform(j->nfd, j->ev);
	sbx_sock_event_free(j->ev);
	close(j->nfd);
	free(j);
	atomic_fetch_sub(&workers, 1);
	return NULL;
}

/* Hands |ev| (taken) to a thread that does the call and answers it. */
void sup_sock_do(struct sup_run *r, struct sbx_sock_event *ev)
{
	struct job *j = wd_calloc(1, sizeof(*j));
	j->ev = ev;
	/* A descriptor of its own: the listener's number may be closed and
	 * reused at the end of the session while the call still blocks. */
	j->nfd = fcntl(r->child.notify_fd, F_DUPFD_CLOEXEC, 3);
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	bool room = atomic_fetch_add(&workers, 1) < WORKERS_MAX;
	if (!room || j->nfd < 0 || pthread_create(&t, &at, worker, j) != 0) {
		/* Too many calls blocked at once: the answer a full queue gives. */
		atomic_fetch_sub(&workers, 1);
		sbx_notify_answer(r->child.notify_fd, ev->id, -EAGAIN);
		if (j->nfd >= 0)
			close(j->nfd);
		sbx_sock_event_free(ev);
		free(j);
	}
	pthread_attr_destroy(&at);
}

void sup_sock_on_notify(struct sup_run *r, struct sbx_sock_event *ev, int64_t t0)
{
	int fd = r->child.notify_fd;
	if (ev->err) {
		sbx_notify_answer(fd, ev->id, -ev->err);
		sbx_sock_event_free(ev);
		return;
	}
	if (ev->pass) {
		sbx_notify_allow(fd, ev->id);
		sbx_sock_event_free(ev);
		return;
	}
	int err = 0;
	for (size_t i = 0; i < ev->nmsgs && !err; i++) {
		struct sbx_sock_msg *m = &ev->msgs[i];
		if (m->kind == SBX_ADDR_PATH) {
			err = decide_path(r, ev, m, t0);
		} else if (m->kind == SBX_ADDR_ABSTRACT) {
			wd_autofree char *name = abstract_name(m);
			(void)audit(r, ev, name, name, false, POL_SRC_BOUNDARY, REASON_ABSTRACT,
				    t0);
			err = EPERM;
		}
	}
	if (err) {
		sbx_notify_answer(fd, ev->id, -err);
		sbx_sock_event_free(ev);
		return;
	}
	if (ev->family == AF_INET || ev->family == AF_INET6) {
		/* IP destinations are requests (connect.c). */
		sup_connect_on_notify(r, ev, t0);
		return;
	}
	sup_sock_do(r, ev);
}

void sup_sockets_describe(const struct pol_config *c, FILE *out)
{
	size_t n = pol_config_socket_allow_count(c);
	fprintf(out, "Unix sockets outside the project the agent may connect to:%s\n",
		n ? "" : " none (\"sockets\": {\"allow\": [...]} in .warden/permissions.json)");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "      %s\n", pol_config_socket_allow(c, i));
	size_t na = pol_config_net_allow_count(c), nd = pol_config_net_deny_count(c);
	fprintf(out, "Network destinations reached without asking:%s\n",
		na ? "" : " none (\"network\": {\"allow\": [...]} in .warden/permissions.json)");
	for (size_t i = 0; i < na; i++)
		fprintf(out, "      %s\n", pol_config_net_allow(c, i));
	if (nd) {
		fprintf(out, "Network destinations never reached (\"network\": {\"deny\"}):\n");
		for (size_t i = 0; i < nd; i++)
			fprintf(out, "      %s\n", pol_config_net_deny(c, i));
	}
	size_t k = pol_config_env_keep_count(c);
	if (k) {
		fprintf(out, "Secret-looking variables the agent keeps (\"env\": {\"keep\"}):\n");
		for (size_t i = 0; i < k; i++)
			fprintf(out, "      %s\n", pol_config_env_keep(c, i));
	}
}
