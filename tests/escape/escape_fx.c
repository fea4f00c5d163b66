/*
 * escape_fx.c: the escape suite's shared fixture and helpers (escape_fx.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "policy.h"
#include "store.h"
#include "wt.h"
#ifdef WARDEN_ESC_HAVE_JUDGE
#include "judge.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "escape_fx.h"

int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# escape readme\n");
	wt_write(f->proj, ".env", "TOKEN=" SECRET "\n");
	/* wt_wardenv passes the environment on: warden and the agent see
	 * this HOME, so ~/.ssh is the fixture's. */
	f->home = wt_home("esc");
	wt_write(f->home, ".ssh/id_rsa", "-----BEGIN KEY-----\n" SSH_SECRET "\n");
	*state = f;
	return 0;
}

int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	wt_rmtree(f->home);
	free(f->proj);
	free(f->home);
	free(f->db);
	free(f);
	return 0;
}

/* ---- helpers ------------------------------------------------------------ */

char *esc(const char *name)
{
	const char *b = getenv("WARDEN_BUILD_DIR");
	return wd_asprintf("%s/tests/escape/esc_%s", b ? b : ".", name);
}

char *in_proj(const struct fx *f, const char *name)
{
	return wd_asprintf("%s/%s", f->proj, name);
}

bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* Runs `warden run --tier TIER -- ARGS...` in the project. */
void run(const struct fx *f, struct wt_result *r, const char *tier, ...)
{
	char *argv[64] = {"run", "--tier", (char *)tier, "--"};
	size_t n = 4;
	va_list ap;
	va_start(ap, tier);
	while (n < 63 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	wt_wardenv(f->proj, argv, r);
	/* Enough to see what happened, not the races' thousands of lines. */
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", r->status, r->out, r->err);
}

/* Runs |text| as the agent: `/bin/sh agent.sh` in the project. */
void script(const struct fx *f, struct wt_result *r, const char *tier, const char *text)
{
	wt_write(f->proj, "agent.sh", text);
	run(f, r, tier, "/bin/sh", "agent.sh", NULL);
}

bool said(const struct wt_result *r, const char *s)
{
	return (r->out && strstr(r->out, s)) || (r->err && strstr(r->err, s));
}

/* The secrets never reach anything the agent printed. */
void assert_no_secret(const struct wt_result *r)
{
	assert_false(said(r, SECRET));
	assert_false(said(r, SSH_SECRET));
}

struct rowq {
	const char *kind, *decision, *source, *summary_sub, *request_sub;
	int n;
};

static int rowq_cb(const struct sto_row *row, void *arg)
{
	struct rowq *q = arg;
#define NEQ(a, b)  ((a) && strcmp((b) ? (b) : "", (a)) != 0)
#define NSUB(a, b) ((a) && !strstr((b) ? (b) : "", (a)))
	const char *sum = q->summary_sub;
	if (NEQ(q->kind, row->kind) || NEQ(q->decision, row->decision) ||
	    NEQ(q->source, row->source) || (sum && sum[0] == '=' && NEQ(sum + 1, row->summary)) ||
	    (sum && sum[0] != '=' && NSUB(sum, row->summary)) || NSUB(q->request_sub, row->request))
		return 0;
#undef NEQ
#undef NSUB
	q->n++;
	return 0;
}

/* Audit rows by kind, decision and source (exact) and substrings of the
 * summary and of the request JSON; NULL matches anything; a summary
 * starting with '=' matches exactly. */
int rows(const struct fx *f, const char *kind, const char *decision, const char *source,
	 const char *summary_sub, const char *request_sub)
{
	struct sto_db *d = NULL;
	char *err = NULL;
	if (sto_open(f->db, &d, &err) < 0) {
		print_message("audit %s: %s\n", f->db, err ? err : "?");
		free(err);
		return -1;
	}
	struct rowq q = {kind, decision, source, summary_sub, request_sub, 0};
	struct sto_filter flt = {0};
	sto_query(d, &flt, rowq_cb, &q, NULL);
	sto_close(d);
	return q.n;
}

/* No exec that names |what| (summary or request) was ever allowed, other
 * than the agent's own start-up. */
void assert_never_allowed(const struct fx *f, const char *what)
{
	int a = rows(f, NULL, "allow", NULL, what, NULL) -
		rows(f, NULL, "allow", "startup", what, NULL);
	int b = rows(f, NULL, "allow", NULL, NULL, what) -
		rows(f, NULL, "allow", "startup", NULL, what);
	assert_int_equal(a, 0);
	assert_int_equal(b, 0);
}
