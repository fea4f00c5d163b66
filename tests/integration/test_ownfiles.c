/*
 * test_ownfiles: warden refuses to start (125, naming the file, why and
 * the fix) when what it runs or trusts at its next start could be changed
 * from inside the sandbox: its executable, the project's config, or the
 * audit's directory, through the file itself or any directory above it
 * (a place the agent may write: the project, the config's "writable"; or,
 * by file permissions, a directory any user may write). And it starts when they are safe:
 * a copy in a root-owned directory under the host's /tmp (private to
 * the session now), or in the project's .warden/ (read-only inside).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static char *g_orig_bin;

struct fx {
	char *proj;
	char *place; /* a directory under /tmp of the test's own */
};

static int setup(void **state)
{
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	char t[] = "/tmp/warden-own-XXXXXX";
	f->place = wd_strdup(mkdtemp(t));
	chmod(f->place, 0755);
	setenv("WARDEN_BIN", g_orig_bin, 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	setenv("WARDEN_BIN", g_orig_bin, 1);
	wt_rmtree(f->proj);
	wt_rmtree(f->place);
	free(f->proj);
	free(f->place);
	free(f);
	return 0;
}

/* A copy of warden at |dir|/warden (|dir| made when missing), mode |mode|,
 * which the next runs use. Caller frees. */
static char *copy_warden(const char *dir, mode_t mode)
{
	mkdir(dir, 0755);
	char *to = wd_asprintf("%s/warden", dir);
	char *data = NULL;
	size_t len = 0;
	assert_int_equal(wd_read_file(g_orig_bin, 512u << 20, &data, &len), 0);
	int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	assert_int_equal(chmod(to, mode), 0);
	free(data);
	setenv("WARDEN_BIN", to, 1);
	return to;
}

/* `warden run [--audit AUDIT] --tier passive --prompt none -- /bin/sh -c
 * 'echo AGENT-RAN'` in the project. */
static void run(const struct fx *f, const char *audit, struct wt_result *r)
{
	char *argv[16] = {"run", "--tier", "passive", "--prompt", "none"};
	size_t n = 5;
	if (audit) {
		argv[n++] = "--audit";
		argv[n++] = (char *)audit;
	}
	argv[n++] = "--";
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = "echo AGENT-RAN";
	argv[n] = NULL;
	wt_wardenv(f->proj, argv, r);
	print_message("status %d\nout: %s\nerr: %s\n", r->status, r->out, r->err);
}

/* Refused: 125, nothing ran, and stderr names |a| and |b| and |c|. */
static void assert_refused(const struct wt_result *r, const char *a, const char *b, const char *c)
{
	assert_int_equal(r->status, 125);
	assert_null(strstr(r->out, "AGENT-RAN"));
	assert_non_null(strstr(r->err, "refusing to start"));
	const char *want[3] = {a, b, c};
	for (int i = 0; i < 3; i++)
		if (want[i] && !strstr(r->err, want[i]))
			fail_msg("stderr does not say \"%s\":\n%s", want[i], r->err);
}

static void assert_started(const struct wt_result *r)
{
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "AGENT-RAN"));
}

/* warden built or copied into the project: the agent could replace it for
 * the next run (as root, perhaps). */
static void test_ownfiles_binary_in_project(void **state)
{
	struct fx *f = *state;
	char *dir = wd_asprintf("%s/build", f->proj);
	char *bin = copy_warden(dir, 0755);
	struct wt_result r = {0};
	run(f, NULL, &r);
	char *where = wd_asprintf("lies in %s, where the agent may write", f->proj);
	assert_refused(&r, bin, where, "make install");
	assert_non_null(strstr(r.err, "warden's executable"));
	free(where);
	free(bin);
	free(dir);
	wt_result_free(&r);
}

/* In a directory the config lists as writable. */
static void test_ownfiles_binary_in_writable_place(void **state)
{
	struct fx *f = *state;
	char *cfg = wd_asprintf("{\"writable\": [\"%s\"]}\n", f->place);
	wt_write(f->proj, ".warden/permissions.json", cfg);
	char *bin = copy_warden(f->place, 0755);
	struct wt_result r = {0};
	run(f, NULL, &r);
	char *where = wd_asprintf("lies in %s", f->place);
	assert_refused(&r, bin, where, "warden's executable");
	free(where);
	free(bin);
	free(cfg);
	wt_result_free(&r);
}

/* The project's .warden is a symlink to a writable directory: the config
 * read through it is the agent's to write. */
static void test_ownfiles_config_through_symlinked_dir(void **state)
{
	struct fx *f = *state;
	char *cfg = wd_asprintf("{\"writable\": [\"%s\"]}\n", f->place);
	wt_write(f->place, "permissions.json", cfg);
	char *link = wd_asprintf("%s/.warden", f->proj);
	assert_int_equal(symlink(f->place, link), 0);
	struct wt_result r = {0};
	run(f, NULL, &r);
	/* Refused for being a symlink at all, before the config is read
	 * (test_ownfiles_warden_dir_symlink): the place it leads to does
	 * not matter any more. */
	char *where = wd_asprintf("%s is a symlink to %s", link, f->place);
	assert_refused(&r, where, ".warden/ a real directory", NULL);
	free(where);
	free(link);
	free(cfg);
	wt_result_free(&r);
}

/* The audit in the project (outside .warden/) or in a writable place. */
static void test_ownfiles_audit_in_writable_place(void **state)
{
	struct fx *f = *state;
	char *audit = wd_asprintf("%s/logs/audit.db", f->proj);
	wt_write(f->proj, "logs/keep", "");
	struct wt_result r = {0};
	run(f, audit, &r);
	char *where = wd_asprintf("%s/logs lies in %s", f->proj, f->proj);
	assert_refused(&r, "the audit's directory", where, "--audit");
	wt_result_free(&r);
	free(where);
	free(audit);

	char *cfg = wd_asprintf("{\"writable\": [\"%s\"]}\n", f->place);
	wt_write(f->proj, ".warden/permissions.json", cfg);
	audit = wd_asprintf("%s/audit.db", f->place);
	run(f, audit, &r);
	where = wd_asprintf("%s lies in %s", f->place, f->place);
	assert_refused(&r, "the audit's directory", where, NULL);
	assert_int_not_equal(access(audit, F_OK), 0); /* refused before opening it */
	wt_result_free(&r);
	free(where);
	free(audit);
	free(cfg);
}

/* By file permissions: a directory any user may write (no sticky bit), a
 * group-writable executable; a directory of another user's is not refused. */
static void test_ownfiles_other_users_can_change_it(void **state)
{
	struct fx *f = *state;
	char *dir = wd_asprintf("%s/theirs", f->place);
	char *bin = copy_warden(dir, 0755);
	struct wt_result r = {0};
	/* Another user's directory is not the agent's: it starts. */
	assert_int_equal(chown(dir, 4242, 4242), 0);
	run(f, NULL, &r);
	assert_started(&r);
	wt_result_free(&r);
	assert_int_equal(chown(dir, 0, 0), 0);

	assert_int_equal(chmod(dir, 0777), 0);
	run(f, NULL, &r);
	char *why = wd_asprintf("%s is writable by every user", dir);
	assert_refused(&r, bin, why, NULL);
	wt_result_free(&r);
	free(why);
	assert_int_equal(chmod(dir, 0755), 0);

	assert_int_equal(chmod(bin, 0775), 0);
	run(f, NULL, &r);
	why = wd_asprintf("%s is writable by its group", bin);
	assert_refused(&r, bin, why, NULL);
	wt_result_free(&r);
	free(why);
	free(bin);
	free(dir);
}

/* Safe places start: a root-owned directory under the host's /tmp (the
 * agent's /tmp is its own now), the sticky /tmp above it; and the
 * project's .warden/, which the sandbox keeps read-only (with the view,
 * and with --no-view through a read-only bind). */
static void test_ownfiles_safe_places_start(void **state)
{
	struct fx *f = *state;
	char *dir = wd_asprintf("%s/bin", f->place);
	char *bin = copy_warden(dir, 0755);
	struct wt_result r = {0};
	run(f, NULL, &r);
	assert_started(&r);
	wt_result_free(&r);
	free(bin);
	free(dir);
	dir = wd_asprintf("%s/.warden", f->proj);
	bin = copy_warden(dir, 0755);
	run(f, NULL, &r);
	assert_started(&r);
	wt_result_free(&r);
	free(bin);
	free(dir);
}

/* Nothing at all in |dir| (the test's own directory, no subdirectory). */
static void assert_empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			fail_msg("warden created %s/%s", dir, e->d_name);
	closedir(d);
}

/* A cloned repository ships .warden as a symlink to a directory of the
 * host's that is no place of the agent's (root's, 0755): warden, as root,
 * would read its config there and create its audit there. It refuses to
 * start (125, naming the link and the fix), with the view, with
 * --no-view and with --force, and creates nothing in the target. */
static void test_ownfiles_warden_dir_symlink(void **state)
{
	struct fx *f = *state;
	char *target = wd_asprintf("%s/elsewhere", f->place);
	assert_int_equal(mkdir(target, 0755), 0);
	char *link = wd_asprintf("%s/.warden", f->proj);
	assert_int_equal(symlink(target, link), 0);
	char *where = wd_asprintf("%s is a symlink to %s", link, target);
	const char *extra[] = {NULL, "--no-view", "--force"};
	for (size_t i = 0; i < 3; i++) {
		char *argv[16] = {"run", "--tier", "passive", "--prompt", "none"};
		size_t n = 5;
		if (extra[i])
			argv[n++] = (char *)extra[i];
		argv[n++] = "--";
		argv[n++] = "/bin/sh";
		argv[n++] = "-c";
		argv[n++] = "echo AGENT-RAN";
		argv[n] = NULL;
		struct wt_result r = {0};
		wt_wardenv(f->proj, argv, &r);
		print_message("%s: status %d\nerr: %s\n", extra[i] ? extra[i] : "view", r.status,
			      r.err);
		assert_refused(&r, where, "remove or rename", NULL);
		assert_empty_dir(target);
		wt_result_free(&r);
	}
	/* A .warden that is a file is no directory either. */
	assert_int_equal(unlink(link), 0);
	wt_write(f->proj, ".warden", "not a directory\n");
	struct wt_result r = {0};
	run(f, NULL, &r);
	char *file = wd_asprintf("%s is not a directory", link);
	assert_refused(&r, file, NULL, NULL);
	wt_result_free(&r);
	free(file);
	free(where);
	free(link);
	free(target);
}

/* The same through the files inside a real .warden/: an audit.db that is
 * a symlink (dangling: root would create the file it names, then write a
 * database into it), SQLite's -wal beside it, a permissions.json that is a
 * symlink. Refused, and nothing is created at the link's target. */
static void test_ownfiles_warden_files_symlink(void **state)
{
	struct fx *f = *state;
	const char *names[] = {"audit.db", "audit.db-wal", "permissions.json"};
	for (size_t i = 0; i < 3; i++) {
		wt_write(f->proj, ".warden/.keep", "");
		char *link = wd_asprintf("%s/.warden/%s", f->proj, names[i]);
		char *target = wd_asprintf("%s/victim-%zu", f->place, i);
		assert_int_equal(symlink(target, link), 0);
		struct wt_result r = {0};
		run(f, NULL, &r);
		char *where = wd_asprintf("%s is a symlink", link);
		assert_refused(&r, where, NULL, NULL);
		assert_int_not_equal(access(target, F_OK), 0);
		wt_result_free(&r);
		assert_int_equal(unlink(link), 0);
		free(where);
		free(target);
		free(link);
	}
}

int main(void)
{
	wt_require_sandbox();
	if (geteuid() != 0) {
		printf("SKIP: needs root (chown to another user)\n");
		return 77;
	}
	g_orig_bin = wd_strdup(wt_bin());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ownfiles_binary_in_project, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ownfiles_binary_in_writable_place, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ownfiles_config_through_symlinked_dir, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ownfiles_audit_in_writable_place, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ownfiles_other_users_can_change_it, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ownfiles_safe_places_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ownfiles_warden_dir_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ownfiles_warden_files_symlink, setup,
						teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(g_orig_bin);
	return rc;
}
