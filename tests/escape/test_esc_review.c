/*
 * test_esc_review: escapes found by reviewing the boundary as the agent,
 * each under the real `warden run` in the passive tier.
 *
 * A bare repository planted in the project: git run in a directory that
 * holds HEAD, objects/ and refs/ takes it for a git directory (git's
 * safe.bareRepository defaults to "all") and reads its plain "config",
 * whose core.worktree and core.fsmonitor run a command at the next
 * `git status` there (a git-aware prompt runs one on `cd`). The test runs
 * that `git status` on the host after the session: the marker is the
 * command having run outside the sandbox.
 *
 * Safety: the planted command only creates a marker file in the
 * temporary project.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "wt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx {
	char *proj;
	char *db;
};

static int sh(const char *cwd, const char *cmd)
{
	char *full = wd_asprintf("cd '%s' && %s >/dev/null 2>&1", cwd, cmd);
	int rc = system(full);
	free(full);
	return rc;
}

static int setup(void **state)
{
	wt_require_sandbox();
	struct fx *f = wd_calloc(1, sizeof(*f));
	f->proj = wt_project();
	f->db = wd_asprintf("%s/.warden/audit.db", f->proj);
	wt_write(f->proj, "README.md", "# review\n");
	if (sh(f->proj, "git init -q . && git -c user.email=t@t -c user.name=t add README.md && "
			"git -c user.email=t@t -c user.name=t commit -qm init") != 0)
		fail_msg("git init failed");
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

static bool exists(const struct fx *f, const char *name)
{
	char *p = wd_asprintf("%s/%s", f->proj, name);
	struct stat st;
	bool e = lstat(p, &st) == 0;
	free(p);
	return e;
}

static bool nonempty(const struct fx *f, const char *name)
{
	char *p = wd_asprintf("%s/%s", f->proj, name);
	struct stat st;
	bool e = lstat(p, &st) == 0 && st.st_size > 0;
	free(p);
	return e;
}

/* Perl (the agent itself, no exec to decide) makes a bare repository in
 * |dir| whose fsmonitor touches |marker|, then renames |dir| to |to| when
 * |to| is not NULL. */
static void plant(const struct fx *f, const char *dir, const char *to, const char *marker)
{
	char *prog = wd_asprintf(
		"use File::Path qw(make_path); my $d = '%s';"
		"make_path(\"$d/objects\", \"$d/refs/heads\");"
		"open(my $c, '>', \"$d/config\") or die; print $c "
		"\"[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n"
		"\\tworktree = %s\\n\\tfsmonitor = \\\"touch '%s/%s'; false\\\"\\n\"; close $c;"
		"if (open(my $h, '>', \"$d/HEAD\")) { print $h \"ref: refs/heads/main\\n\"; close "
		"$h }"
		"else { print STDERR \"HEAD: $!\\n\" }"
		"%s%s%s",
		dir, f->proj, f->proj, marker, to ? "rename($d, '" : "", to ? to : "",
		to ? "') or print STDERR \"rename: $!\\n\";" : "");
	char *argv[] = {"run", "--tier", "passive", "--", "perl", "-e", prog, NULL};
	struct wt_result r = {0};
	wt_wardenv(f->proj, argv, &r);
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", r.status, r.out, r.err);
	wt_result_free(&r);
	free(prog);
}

/* The person's next `git status` in |dir| (as a prompt would on `cd`). */
static void host_git_status(const struct fx *f, const char *dir)
{
	char *d = wd_asprintf("%s/%s", f->proj, dir);
	struct stat st;
	if (stat(d, &st) == 0)
		sh(d, "git status");
	free(d);
}

static void test_esc_review_bare_repo(void **state)
{
	struct fx *f = *state;
	plant(f, "sub", NULL, "bare-ran");
	host_git_status(f, "sub");
	if (exists(f, "bare-ran"))
		fail_msg("ESCAPE FOUND: a bare repository the agent planted ran its fsmonitor "
			 "at the host's git status");
	/* The FUSE view refuses the create before the file exists; in a
	 * fast subtree (sub/ becomes one once made, with the split view) the
	 * refusal comes at the open, after the kernel made the empty file:
	 * nothing is written, and git takes no empty HEAD for a repository
	 * (the marker above). */
	if (nonempty(f, "sub/HEAD"))
		fail_msg("ESCAPE FOUND: the agent made sub/HEAD without a decision");
	if (wt_audit_count(f->db, "deny", NULL, "sub/HEAD", NULL) < 1)
		fail_msg("ESCAPE FOUND: sub/HEAD was not decided");
}

/* The same made inside .git (where git's own HEADs are ordinary writes),
 * then moved out. */
static void test_esc_review_bare_repo_moved_out(void **state)
{
	struct fx *f = *state;
	plant(f, ".git/zz", "moved", "moved-ran");
	host_git_status(f, "moved");
	if (exists(f, "moved-ran"))
		fail_msg("ESCAPE FOUND: a bare repository moved out of .git ran its fsmonitor "
			 "at the host's git status");
	if (exists(f, "moved/HEAD"))
		fail_msg("ESCAPE FOUND: .git/zz became moved/ without a decision");
}

/* The same made inside .git and left there: git run in .git/zz. */
static void test_esc_review_bare_repo_in_git_dir(void **state)
{
	struct fx *f = *state;
	plant(f, ".git/zz", NULL, "in-git-ran");
	host_git_status(f, ".git/zz");
	if (exists(f, "in-git-ran"))
		fail_msg("ESCAPE FOUND: a bare repository inside .git ran its fsmonitor at the "
			 "host's git status");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_esc_review_bare_repo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_esc_review_bare_repo_moved_out, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_esc_review_bare_repo_in_git_dir, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
