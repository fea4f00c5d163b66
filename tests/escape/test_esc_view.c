/*
 * test_esc_view: escapes through the project view, under the real `warden
 * run --tier passive --prompt none`: the view lending root's privileges
 * (chown, chmod, mode-000 files, truncate, utimes, xattrs), sensitive files
 * changed or destroyed without a decision, renames that make secrets
 * ordinary, and code planted for the host to run later (git config and
 * hooks, .envrc, editor tasks). Each test asserts that the attack failed,
 * on the real files, and the audit row where it was decided; the agent is
 * tests/escape/esc_view.c, which makes its syscalls directly (no exec to
 * decide), as root without capabilities.
 *
 * A test that finds a real escape fails with "ESCAPE FOUND: ...".
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
#include <grp.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define SECRET "WARDEN_VIEW_SECRET_41c9e2"
#define NOBODY 65534

struct fx {
	char *proj;
	char *db;
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# view escapes\n");
	wt_write(f->proj, ".env", "TOKEN=" SECRET "\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	wt_rmtree(f->proj);
	free(f->proj);
	free(f->db);
	free(f);
	return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static char *in_proj(const struct fx *f, const char *name)
{
	return wd_asprintf("%s/%s", f->proj, name);
}

static bool exists(const struct fx *f, const char *name)
{
	wd_autofree char *p = in_proj(f, name);
	struct stat st;
	return lstat(p, &st) == 0;
}

static struct stat stat_of(const struct fx *f, const char *name)
{
	wd_autofree char *p = in_proj(f, name);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	return st;
}

static char *content(const struct fx *f, const char *name)
{
	wd_autofree char *p = in_proj(f, name);
	char *text = NULL;
	size_t len;
	if (wd_read_file(p, 1 << 20, &text, &len) < 0)
		return NULL;
	return text;
}

static void own(const struct fx *f, const char *name, uid_t uid, gid_t gid, mode_t mode)
{
	wd_autofree char *p = in_proj(f, name);
	assert_int_equal(lchown(p, uid, gid), 0);
	if (mode != (mode_t)-1)
		assert_int_equal(chmod(p, mode), 0);
}

/* Runs `warden run --tier passive --prompt none -- esc_view ARGS...`. */
static void view_ops(const struct fx *f, struct wt_result *r, ...)
{
	const char *b = getenv("WARDEN_BUILD_DIR");
	wd_autofree char *prog = wd_asprintf("%s/tests/escape/esc_view", b ? b : ".");
	char *argv[96] = {"run", "--tier", "passive", "--prompt", "none", "--", prog};
	size_t n = 7;
	va_list ap;
	va_start(ap, r);
	while (n < 95 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	wt_wardenv(f->proj, argv, r);
	print_message("status %d\nout: %.3000s\nerr: %.1500s\n", r->status, r->out, r->err);
}

static bool said(const struct wt_result *r, const char *s)
{
	return (r->out && strstr(r->out, s)) || (r->err && strstr(r->err, s));
}

/* The line esc_view printed for |op| on |arg| says rc |rc| and |err|. */
static void assert_op(const struct wt_result *r, const char *op, const char *arg, int rc,
		      const char *err)
{
	wd_autofree char *line = wd_asprintf("%s %s rc=%d errno=%s\n", op, arg, rc, err);
	if (!said(r, line))
		fail_msg("expected \"%s %s rc=%d errno=%s\"", op, arg, rc, err);
}

struct rowq {
	const char *kind, *decision, *summary;
	int n;
};

static int rowq_cb(const struct sto_row *row, void *arg)
{
	struct rowq *q = arg;
	if (q->kind && strcmp(q->kind, row->kind ? row->kind : "") != 0)
		return 0;
	if (q->decision && strcmp(q->decision, row->decision ? row->decision : "") != 0)
		return 0;
	if (q->summary && strcmp(q->summary, row->summary ? row->summary : "") != 0)
		return 0;
	q->n++;
	return 0;
}

/* Audit rows of |kind| with |decision| and exactly |summary| (NULL: any). */
static int rows(const struct fx *f, const char *kind, const char *decision, const char *summary)
{
	struct sto_db *d = NULL;
	char *err = NULL;
	if (sto_open(f->db, &d, &err) < 0) {
		print_message("audit %s: %s\n", f->db, err ? err : "?");
		free(err);
		return -1;
	}
	struct rowq q = {kind, decision, summary, 0};
	struct sto_filter flt = {0};
	sto_query(d, &flt, rowq_cb, &q, NULL);
	sto_close(d);
	return q.n;
}

/* Exactly one refused open row with this summary. */
static void assert_refused(const struct fx *f, const char *summary)
{
	int n = rows(f, "open", "deny", summary);
	if (n != 1)
		fail_msg("expected one refused row \"%s\", found %d", summary, n);
}

/* The agent's create of |name| in a directory it made during the session
 * was refused. In the split view the binder makes such a directory a fast
 * subtree as soon as it can (sandbox/emul_bind.c), so which part answers
 * depends on how quickly the agent's next call comes: the FUSE view
 * refuses the create itself (EACCES, no file, "write+create"), a fast
 * subtree refuses the open that follows the create (EPERM, an empty file,
 * "write"). Either way nothing is written and the refusal is audited. */
static void assert_create_refused(const struct fx *f, const struct wt_result *r, const char *name)
{
	wd_autofree char *fuse = wd_asprintf("write %s rc=-1 errno=EACCES\n", name);
	wd_autofree char *fast = wd_asprintf("write %s rc=-1 errno=EPERM\n", name);
	if (said(r, fuse)) {
		if (exists(f, name))
			fail_msg("ESCAPE FOUND: the refused create left %s", name);
		wd_autofree char *row = wd_asprintf("write+create %s", name);
		assert_refused(f, row);
	} else if (said(r, fast)) {
		wd_autofree char *text = content(f, name);
		if (text && text[0])
			fail_msg("ESCAPE FOUND: %s was written: %s", name, text);
		wd_autofree char *row = wd_asprintf("write %s", name);
		assert_refused(f, row);
	} else {
		fail_msg("expected the write of %s refused (EACCES or EPERM)", name);
	}
}

/* ---- item 5: the view lends its privileges -------------------------------- */

/* A copy of cat made root:shadow and set-group-ID (or set-user-ID root),
 * which another local user would run after the session. */
static void test_esc_view_setgid_copy_of_cat(void **state)
{
	struct fx *f = *state;
	struct group *g = getgrnam("shadow");
	gid_t shadow = g ? g->gr_gid : NOBODY;
	char gid[16];
	snprintf(gid, sizeof(gid), "%u", (unsigned)shadow);
	struct wt_result r;
	view_ops(f, &r, "copy", "/bin/cat", "mycat", "chown", "mycat", "0", gid, "chown", "mycat",
		 "65534", "0", "chmod", "mycat", "2755", "chmod", "mycat", "4755", "chmod", "mycat",
		 "6755", "mkdir", "d", "chmod", "d", "2755", NULL);
	assert_op(&r, "copy", "mycat", 0, "0");
	assert_op(&r, "chown", "mycat", -1, "EPERM");
	struct stat st = stat_of(f, "mycat");
	if (st.st_gid == shadow || st.st_uid != 0 || (st.st_mode & (S_ISUID | S_ISGID)))
		fail_msg("ESCAPE FOUND: the copy of cat is %u:%u mode %o", (unsigned)st.st_uid,
			 (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777));
	if (said(&r, "chmod mycat rc=-1 errno=EPERM\n")) {
		/* The split view's filter (fs_trap) refuses every set-id
		 * mode by its register, whatever the file: a fast subtree
		 * has no view to strip the bits. It cannot tell a directory,
		 * so chmod g+s of one is refused too. */
		assert_false(said(&r, "chmod mycat rc=0"));
		assert_op(&r, "chmod", "d", -1, "EPERM");
		assert_int_equal(st.st_mode & 07777, 0755);
		assert_int_equal(stat_of(f, "d").st_mode & 07777, 0755);
		wt_result_free(&r);
		return;
	}
	/* chmod itself is the owner's right: it succeeds, without the bits. */
	assert_op(&r, "chmod", "mycat", 0, "0");
	assert_int_equal(st.st_mode & 07777, 0755);
	/* A directory keeps set-group-ID: it only picks new files' group. */
	assert_int_equal(stat_of(f, "d").st_mode & 07777, 02755);
	wt_result_free(&r);
}

/* Files of another user, and root's own mode-000 file: the agent is root
 * without CAP_DAC_OVERRIDE, CAP_FOWNER or CAP_CHOWN, so DAC applies. */
static void test_esc_view_other_users_files(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "locked", SECRET "\n");
	own(f, "locked", NOBODY, NOBODY, 0600);
	wt_write(f->proj, "zero", SECRET "\n");
	own(f, "zero", 0, 0, 0);
	wt_write(f->proj, "theirs", "theirs\n");
	own(f, "theirs", NOBODY, NOBODY, 0644);
	wt_write(f->proj, "ro/keep", "keep\n");
	own(f, "ro", NOBODY, NOBODY, 0755);
	wt_write(f->proj, "sticky/f", "f\n");
	own(f, "sticky", NOBODY, NOBODY, 01777);
	own(f, "sticky/f", NOBODY, NOBODY, 0666);
	struct stat before = stat_of(f, "theirs");
	wd_autofree char *theirs = in_proj(f, "theirs");
	assert_int_equal(setxattr(theirs, "trusted.hidden", "1", 1, 0), 0);
	assert_int_equal(setxattr(theirs, "user.shown", "1", 1, 0), 0);
	struct wt_result r;
	view_ops(f, &r, "read", "locked", "read", "zero", "open", "theirs", "w", "truncate",
		 "theirs", "0", "utimes", "theirs", "1000", "touch", "theirs", "chmod", "theirs",
		 "0666", "setxattr", "theirs", "user.x", "1", "write", "ro/new", "x", "mkdir",
		 "ro/d", "unlink", "ro/keep", "unlink", "sticky/f", "rename", "sticky/f",
		 "sticky/g", "setxattr", "README.md", "trusted.x", "1", "setxattr", "README.md",
		 "security.x", "1", "setxattr", "README.md", "user.ok", "1", "listxattr", "theirs",
		 NULL);
	if (said(&r, SECRET))
		fail_msg("ESCAPE FOUND: a file the agent may not read was read through the view");
	assert_op(&r, "read", "locked", -1, "EACCES");
	assert_op(&r, "read", "zero", -1, "EACCES");
	assert_op(&r, "open", "theirs", -1, "EACCES");
	assert_op(&r, "truncate", "theirs", -1, "EACCES");
	assert_op(&r, "utimes", "theirs", -1, "EPERM");
	assert_op(&r, "touch", "theirs", -1, "EACCES");
	assert_op(&r, "chmod", "theirs", -1, "EPERM");
	assert_op(&r, "setxattr", "theirs", -1, "EACCES");
	assert_op(&r, "write", "ro/new", -1, "EACCES");
	assert_op(&r, "mkdir", "ro/d", -1, "EACCES");
	assert_op(&r, "unlink", "ro/keep", -1, "EACCES");
	assert_op(&r, "unlink", "sticky/f", -1, "EPERM");
	assert_op(&r, "rename", "sticky/g", -1, "EPERM");
	assert_op(&r, "setxattr", "README.md", -1, "EPERM"); /* trusted.x, security.x */
	assert_op(&r, "setxattr", "README.md", 0, "0");	     /* user.ok on its own file */
	/* trusted.* names are not listed to a caller without CAP_SYS_ADMIN. */
	assert_true(said(&r, "user.shown,"));
	assert_false(said(&r, "trusted.hidden"));
	struct stat after = stat_of(f, "theirs");
	assert_int_equal(after.st_size, before.st_size);
	assert_int_equal(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	assert_int_equal(after.st_mode & 07777, 0644);
	assert_false(exists(f, "ro/new"));
	assert_false(exists(f, "ro/d"));
	assert_true(exists(f, "ro/keep"));
	assert_true(exists(f, "sticky/f"));
	wd_autofree char *readme = in_proj(f, "README.md");
	char v[8];
	assert_int_equal(getxattr(readme, "trusted.x", v, sizeof(v)), -1);
	assert_int_equal(getxattr(readme, "security.x", v, sizeof(v)), -1);
	assert_int_equal(getxattr(readme, "user.ok", v, sizeof(v)), 1);
	wt_result_free(&r);
}

/* ---- item 6: sensitive files changed or destroyed without a decision ------- */

static void test_esc_view_sensitive_changes(void **state)
{
	struct fx *f = *state;
	wd_autofree char *env = in_proj(f, ".env");
	wd_autofree char *alias = in_proj(f, "alias");
	/* A second name made before the run. */
	assert_int_equal(link(env, alias), 0);
	struct stat before = stat_of(f, ".env");
	struct wt_result r;
	view_ops(f, &r, "unlink", ".env", "rename", ".env", "x", "chmod", ".env", "0666", "chown",
		 ".env", "0", "0", "utimes", ".env", "1000", "setxattr", ".env", "user.x", "1",
		 "removexattr", ".env", "user.y", "truncate", ".env", "0", "chmod", "alias", "0666",
		 NULL);
	assert_op(&r, "unlink", ".env", -1, "EACCES");
	assert_op(&r, "rename", "x", -1, "EACCES");
	assert_op(&r, "chmod", ".env", -1, "EACCES");
	assert_op(&r, "chown", ".env", -1, "EACCES");
	assert_op(&r, "utimes", ".env", -1, "EACCES");
	assert_op(&r, "setxattr", ".env", -1, "EACCES");
	assert_op(&r, "removexattr", ".env", -1, "EACCES");
	assert_op(&r, "truncate", ".env", -1, "EACCES");
	assert_op(&r, "chmod", "alias", -1, "EACCES");
	assert_refused(f, "delete .env");
	assert_refused(f, "rename .env -> x");
	assert_refused(f, "chmod .env");
	assert_refused(f, "chown .env");
	assert_refused(f, "utimes .env");
	assert_int_equal(rows(f, "open", "deny", "setxattr .env"), 2);
	assert_refused(f, "truncate .env");
	assert_refused(f, "chmod alias");
	wd_autofree char *text = content(f, ".env");
	assert_non_null(text);
	assert_string_equal(text, "TOKEN=" SECRET "\n");
	struct stat after = stat_of(f, ".env");
	assert_int_equal(after.st_mode, before.st_mode);
	assert_int_equal(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	assert_false(exists(f, "x"));
	wt_result_free(&r);
}

/* ---- item 7: renames that make secrets ordinary ----------------------------- */

static void test_esc_view_rename_exempts_nothing(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, "pre.env.example/.env", "TOKEN=" SECRET "\n");
	wt_write(f->proj, "pre.env.example/secrets.yaml", "key: " SECRET "\n");
	wt_write(f->proj, ".env.example", "TOKEN=\n");
	wt_write(f->proj, "secrets/db.txt", "db: " SECRET "\n");
	wt_write(f->proj, "conf/prod.yaml", "key: " SECRET "\n");
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"sensitive_resources\": [\"conf/prod\"]}\n");
	struct wt_result r;
	view_ops(f, &r, "mkdir", "d", "rename", "d", "deploy.env.example", "mkdir", "x.env.example",
		 "write", "x.env.example/.env", "x", "read", "pre.env.example/.env", "read",
		 "pre.env.example/secrets.yaml", "rename", "secrets", "stuff", "rename", "conf",
		 "other", "read", ".env.example", NULL);
	if (said(&r, SECRET))
		fail_msg("ESCAPE FOUND: a secret below a *.env.example directory was read");
	assert_op(&r, "rename", "deploy.env.example", -1, "EACCES");
	assert_create_refused(f, &r, "x.env.example/.env");
	assert_op(&r, "read", "pre.env.example/.env", -1, "EACCES");
	assert_op(&r, "read", "pre.env.example/secrets.yaml", -1, "EACCES");
	assert_op(&r, "rename", "stuff", -1, "EACCES");
	assert_op(&r, "rename", "other", -1, "EACCES");
	/* The example file itself stays free to read. */
	assert_op(&r, "read", ".env.example", 0, "0");
	assert_refused(f, "rename d -> deploy.env.example");
	assert_refused(f, "read pre.env.example/.env");
	assert_refused(f, "read pre.env.example/secrets.yaml");
	assert_refused(f, "rename secrets -> stuff");
	assert_refused(f, "rename conf -> other");
	assert_int_equal(rows(f, "open", NULL, "read .env.example"), 0);
	assert_true(exists(f, "d"));
	assert_true(exists(f, "secrets/db.txt"));
	assert_true(exists(f, "conf/prod.yaml"));
	wt_result_free(&r);
}

/* ---- item 3: planted code the host runs later ------------------------------- */

#define GITCONFIG "[core]\n\trepositoryformatversion = 0\n"

static void test_esc_view_control_files(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, ".git/config", GITCONFIG);
	wt_write(f->proj, ".git/HEAD", "ref: refs/heads/main\n");
	wd_autofree char *cfg = in_proj(f, ".git/config");
	wd_autofree char *alias = in_proj(f, "cfg-alias");
	assert_int_equal(link(cfg, alias), 0);
	struct wt_result r;
	view_ops(f, &r, "read", ".git/config", "write", ".git/config",
		 "[core]\n\tfsmonitor = touch /tmp/pwned\n", "mkdir", ".git/hooks", "write",
		 ".git/hooks/pre-commit", "#!/bin/sh\n", "mkdir", "x", "write", "x/post-checkout",
		 "#!/bin/sh\n", "rename", "x", ".git/hooks", "symlink", "/tmp/evil.sh",
		 ".git/hooks/post-merge", "write", ".git/config.lock", "[alias]\n", "rename",
		 ".git/config.lock", ".git/config", "write", ".envrc", "echo hi\n", "mkdir",
		 ".vscode", "write", ".vscode/tasks.json", "{}\n", "write", "cfg-alias", "[core]\n",
		 "mkdir", "sub", "mkdir", "sub/.git", "write", "sub/.git/config", "[core]\n",
		 "unlink", ".git/config", "write", "src.c", "int x;\n", NULL);
	assert_op(&r, "read", ".git/config", 0, "0");
	assert_op(&r, "write", ".git/config", -1, "EACCES");
	assert_op(&r, "write", ".git/hooks/pre-commit", -1, "EACCES");
	assert_op(&r, "rename", ".git/hooks", -1, "EACCES");
	assert_op(&r, "write", ".git/config.lock", 0, "0");
	assert_op(&r, "rename", ".git/config", -1, "EACCES");
	assert_op(&r, "write", ".envrc", -1, "EACCES");
	assert_op(&r, "write", ".vscode/tasks.json", -1, "EACCES");
	assert_op(&r, "write", "cfg-alias", -1, "EACCES");
	assert_create_refused(f, &r, "sub/.git/config");
	assert_op(&r, "unlink", ".git/config", -1, "EACCES");
	assert_op(&r, "write", "src.c", 0, "0");
	wd_autofree char *text = content(f, ".git/config");
	assert_non_null(text);
	if (strcmp(text, GITCONFIG) != 0)
		fail_msg("ESCAPE FOUND: .git/config was changed: %s", text);
	assert_false(exists(f, ".git/hooks/pre-commit"));
	assert_false(exists(f, ".git/hooks/post-checkout"));
	assert_false(exists(f, ".git/hooks/post-merge"));
	assert_true(exists(f, "x/post-checkout"));
	assert_false(exists(f, ".envrc"));
	assert_false(exists(f, ".vscode/tasks.json"));
	assert_refused(f, "write .git/config");
	assert_refused(f, "write+create .git/hooks/pre-commit");
	assert_refused(f, "rename x -> .git/hooks");
	assert_op(&r, "symlink", ".git/hooks/post-merge", -1, "EACCES");
	assert_refused(f, "symlink .git/hooks/post-merge -> /tmp/evil.sh");
	assert_refused(f, "rename .git/config.lock -> .git/config");
	assert_refused(f, "write+create .envrc");
	assert_refused(f, "write+create .vscode/tasks.json");
	assert_refused(f, "write cfg-alias");
	assert_refused(f, "delete .git/config");
	/* Reads and ordinary files: no request at all. */
	assert_int_equal(rows(f, "open", NULL, "read .git/config"), 0);
	assert_int_equal(rows(f, "open", NULL, "write+create src.c"), 0);
	assert_int_equal(rows(f, "open", NULL, "write+create .git/config.lock"), 0);
	wt_result_free(&r);
}

/* A hook symlinked to a script, and the rule that lets a person allow a
 * change to a control file. */
static void test_esc_view_control_rule_allows(void **state)
{
	struct fx *f = *state;
	wt_write(f->proj, ".git/config", GITCONFIG);
	wt_write(f->proj, ".git/hooks/pre-commit.sample", "#!/bin/sh\n");
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"rules\": [{\"action\": \"allow\", \"path\": \".git/config\", "
		 "\"access\": \"write\"}]}\n");
	struct wt_result r;
	view_ops(f, &r, "symlink", "../../evil.sh", ".git/hooks/post-checkout", "write",
		 ".git/hooks/pre-commit.sample", "#!/bin/sh\n", "rename",
		 ".git/hooks/pre-commit.sample", ".git/hooks/pre-commit", "write", ".git/config",
		 "[user]\n", NULL);
	assert_op(&r, "symlink", ".git/hooks/post-checkout", -1, "EACCES");
	/* Samples never run; renaming one to a hook's name is decided. */
	assert_op(&r, "write", ".git/hooks/pre-commit.sample", 0, "0");
	assert_op(&r, "rename", ".git/hooks/pre-commit", -1, "EACCES");
	assert_op(&r, "write", ".git/config", 0, "0");
	assert_false(exists(f, ".git/hooks/post-checkout"));
	assert_false(exists(f, ".git/hooks/pre-commit"));
	assert_refused(f, "symlink .git/hooks/post-checkout -> ../../evil.sh");
	assert_refused(f, "rename .git/hooks/pre-commit.sample -> .git/hooks/pre-commit");
	assert_int_equal(rows(f, "open", "allow", "write .git/config"), 1);
	wd_autofree char *text = content(f, ".git/config");
	assert_string_equal(text, "[user]\n");
	wt_result_free(&r);
}

/* The agent's ordinary git work (add, commit) and edits make no request. */
static void test_esc_view_git_ordinary_work_is_free(void **state)
{
	struct fx *f = *state;
	if (system("command -v git >/dev/null") != 0)
		skip();
	wd_autofree char *init = wd_asprintf(
		"cd '%s' && git init -q && git config user.name t && "
		"git config user.email t@example.com && git add README.md && git commit -q -m init",
		f->proj);
	assert_int_equal(system(init), 0);
	wt_write(f->proj, ".warden/permissions.json",
		 "{\"rules\": [{\"action\": \"allow\", \"command\": [\"git\", \"add\"]}, "
		 "{\"action\": \"allow\", \"command\": [\"git\", \"commit\"]}]}\n");
	wt_write(f->proj, "agent.sh",
		 "echo 'int main(void) { return 0; }' > main.c\n"
		 "echo more >> README.md\n"
		 "git add main.c README.md && git commit -q -m work && echo COMMITTED\n");
	char *argv[] = {"run", "--tier",  "passive",  "--prompt", "none",
			"--",  "/bin/sh", "agent.sh", NULL};
	struct wt_result r;
	wt_wardenv(f->proj, argv, &r);
	print_message("status %d\nout: %.3000s\nerr: %.1500s\n", r.status, r.out, r.err);
	assert_true(said(&r, "COMMITTED"));
	assert_int_equal(rows(f, "open", NULL, NULL), 0);
	assert_int_equal(rows(f, "exec", "allow", "git add main.c README.md"), 1);
	wt_result_free(&r);
}

int main(void)
{
	wt_require_sandbox();
	if (geteuid() != 0) {
		printf("SKIP: the escape suite runs as root (it tests what root inside loses)\n");
		return 77;
	}
#define T(name) cmocka_unit_test_setup_teardown(test_esc_view_##name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(setgid_copy_of_cat),	      T(other_users_files), T(sensitive_changes),
		T(rename_exempts_nothing),    T(control_files),	    T(control_rule_allows),
		T(git_ordinary_work_is_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
