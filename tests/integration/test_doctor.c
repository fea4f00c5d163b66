/*
 * test_doctor.c: `warden doctor` as a user without root tells the truth
 * that `warden run` then meets.
 *
 * The test runs as root and drops to nobody for each command, in a private
 * mount namespace of its own where /dev/fuse is covered by a node of the
 * test's (a tmpfs of that namespace only: the real device is never changed,
 * other tests use it at the same time). With the node at 0600 (as some
 * containers make it) a plain `warden run` fails: doctor must say so (exit
 * 1), name the device's mode and --no-view, and not advise installing FUSE;
 * with the node at 0666 both work.
 */
#include "common.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <cmocka.h>

#define NOBODY 65534

/* The test's directory (nobody can enter it) and a copy of warden there:
 * the build tree may sit where only root can enter. */
static char *g_dir;

/* In warden's process before exec: a private mount namespace whose
 * /dev/fuse is a node of mode *arg, then nobody's credentials. */
static int become_nobody(const void *arg)
{
	mode_t mode = *(const mode_t *)arg;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	char *dev = wd_asprintf("%s/dev", g_dir);
	mkdir(dev, 0755);
	char *node = wd_asprintf("%s/fuse", dev);
	if (mount("wt-dev", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=16k,mode=0755") < 0 ||
	    mknod(node, S_IFCHR | mode, makedev(10, 229)) < 0 || chmod(node, mode) < 0 ||
	    mount(node, "/dev/fuse", NULL, MS_BIND, NULL) < 0)
		return -errno;
	setenv("HOME", g_dir, 1);
	unsetenv("WARDEN_JUDGE_URL");
	unsetenv("WARDEN_JUDGE_MODEL");
	if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) < 0)
		return -errno;
	return 0;
}

static void as_nobody(const char *project, mode_t fuse_mode, struct wt_result *res, ...)
{
	char *argv[16];
	int n = 0;
	va_list ap;
	va_start(ap, res);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 15;)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	wt_wardenv_prep(project, argv, become_nobody, &fuse_mode, 60000, res);
	if (res->status == 99)
		fail_msg("could not start warden as nobody: %s", res->err);
}

static char *new_project(void)
{
	char *p = wt_project();
	assert_int_equal(chown(p, NOBODY, NOBODY), 0);
	return p;
}

/* /dev/fuse at 0600: run fails, and doctor says so and why. */
static void test_doctor_fuse_0600_fails_like_run(void **state)
{
	(void)state;
	char *proj = new_project();
	struct wt_result doc = {0}, run = {0}, noview = {0};
	as_nobody(proj, 0600, &doc, "doctor", NULL);
	as_nobody(proj, 0600, &run, "run", "--", "/bin/true", NULL);
	as_nobody(proj, 0600, &noview, "run", "--no-view", "--", "/bin/true", NULL);
	fprintf(stderr, "doctor said:\n%s", doc.out);
	assert_int_equal(run.status, 125);
	assert_int_equal(doc.status, 1);
	assert_null(strstr(doc.out, "can work here."));
	assert_non_null(strstr(doc.out, "FAIL  /dev/fuse"));
	assert_non_null(strstr(doc.out, "mode 0600"));
	assert_non_null(strstr(doc.out, "--no-view"));
	assert_null(strstr(doc.out, "apt-get"));
	assert_null(strstr(doc.out, "modprobe"));
	/* The namespaces the run makes work here: doctor says so once,
	 * without a warning that contradicts it. */
	assert_non_null(strstr(doc.out, "ok    namespaces (user, mount, pid)"));
	assert_null(strstr(doc.out, "warn  mount namespaces"));
	/* What it advises works. */
	assert_int_equal(noview.status, 0);
	wt_result_free(&doc);
	wt_result_free(&run);
	wt_result_free(&noview);
	wt_rmtree(proj);
	free(proj);
}

/* /dev/fuse at 0666: both work. */
static void test_doctor_fuse_0666_works_like_run(void **state)
{
	(void)state;
	char *proj = new_project();
	struct wt_result doc = {0}, run = {0};
	as_nobody(proj, 0666, &doc, "doctor", NULL);
	as_nobody(proj, 0666, &run, "run", "--", "/bin/true", NULL);
	assert_int_equal(run.status, 0);
	assert_int_equal(doc.status, 0);
	assert_non_null(strstr(doc.out, "ok    /dev/fuse"));
	assert_non_null(strstr(doc.out, "ok    namespaces (user, mount, pid)"));
	assert_non_null(strstr(doc.out, "warden run can work here."));
	wt_result_free(&doc);
	wt_result_free(&run);
	wt_rmtree(proj);
	free(proj);
}

/* As root the namespaces are made without a user namespace and doctor
 * says which it probed. */
static void test_doctor_root_probes_what_run_makes(void **state)
{
	(void)state;
	char *proj = wt_project();
	struct wt_result doc = {0};
	wt_warden(proj, &doc, "doctor", NULL);
	assert_int_equal(doc.status, 0);
	assert_non_null(strstr(doc.out, "ok    namespaces (mount, pid)"));
	assert_non_null(strstr(doc.out, "ok    /dev/fuse"));
	wt_result_free(&doc);
	wt_rmtree(proj);
	free(proj);
}

/* doctor names the network entries the project's config lets through and
 * those it never lets through. */
static void test_doctor_lists_network_entries(void **state)
{
	(void)state;
	char *proj = wt_project();
	wt_write(proj, ".warden/permissions.json",
		 "{\"network\": {\"allow\": [\"github.com\", \"127.0.0.1:8080\"],"
		 " \"deny\": [\"*.pastebin.com\"]}}\n");
	struct wt_result doc = {0};
	wt_warden(proj, &doc, "doctor", "--project", proj, NULL);
	assert_int_equal(doc.status, 0);
	const char *a = strstr(doc.out, "Network destinations reached without asking:\n");
	assert_non_null(a);
	assert_non_null(strstr(a, "      github.com\n      127.0.0.1:8080\n"));
	const char *d = strstr(doc.out, "Network destinations never reached");
	assert_non_null(d);
	assert_non_null(strstr(d, "      *.pastebin.com\n"));
	wt_result_free(&doc);
	wt_rmtree(proj);
	free(proj);
}

/* doctor says which project view a run gets and why: split as root, FUSE
 * when asked (WARDEN_VIEW=fuse) and without root, with the way to the
 * fast view. */
static void test_doctor_names_the_view_mechanism(void **state)
{
	(void)state;
	char *proj = new_project();
	struct wt_result doc = {0}, fuse = {0}, user = {0};
	wt_warden(proj, &doc, "doctor", NULL);
	assert_non_null(
		strstr(doc.out, "ok    project view                       split: fanotify on "));
	setenv("WARDEN_VIEW", "fuse", 1);
	wt_warden(proj, &fuse, "doctor", NULL);
	unsetenv("WARDEN_VIEW");
	assert_non_null(
		strstr(fuse.out, "project view                       FUSE (WARDEN_VIEW=fuse)"));
	as_nobody(proj, 0666, &user, "doctor", NULL);
	assert_non_null(strstr(user.out, "FUSE (fanotify permission events need root)"));
	assert_non_null(strstr(user.out, "run as root (sudo warden) for the fast view"));
	wt_result_free(&doc);
	wt_result_free(&fuse);
	wt_result_free(&user);
	wt_rmtree(proj);
	free(proj);
}

/* doctor says whether the view's reads pass through the kernel: on as
 * root where the kernel offers it (else why not), off without root. */
static void test_doctor_says_whether_reads_pass_through(void **state)
{
	(void)state;
	char *proj = new_project();
	struct wt_result doc = {0}, user = {0};
	wt_warden(proj, &doc, "doctor", NULL);
	const char *line = strstr(doc.out, "view reads (FUSE passthrough)      ");
	assert_non_null(line);
	if (!strstr(line, "the kernel does not offer FUSE passthrough"))
		assert_non_null(strstr(doc.out, "ok    view reads (FUSE passthrough)      on: "));
	as_nobody(proj, 0666, &user, "doctor", NULL);
	assert_non_null(strstr(user.out, "warn  view reads (FUSE passthrough)      off: not a "
					 "root run"));
	wt_result_free(&doc);
	wt_result_free(&user);
	wt_rmtree(proj);
	free(proj);
}

int main(void)
{
	wt_require_sandbox();
	g_dir = wt_userns_warden("doctor");

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doctor_fuse_0600_fails_like_run),
		cmocka_unit_test(test_doctor_fuse_0666_works_like_run),
		cmocka_unit_test(test_doctor_root_probes_what_run_makes),
		cmocka_unit_test(test_doctor_lists_network_entries),
		cmocka_unit_test(test_doctor_names_the_view_mechanism),
		cmocka_unit_test(test_doctor_says_whether_reads_pass_through),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	wt_rmtree(g_dir);
	return rc;
}
