/*
 * test_esc_journal: the audit's journal (.warden/audit.db-wdj) holds rows
 * that are not in SQLite yet, so it is as private as audit.db: under the
 * real `warden run`, with the project view and with --no-view, the agent
 * can neither open it to read (the rows of its session) nor open it to
 * write (rows forged into the audit at the next replay). The view does not
 * show it at all; without the view it is covered like audit.db, whose
 * name stays visible there too.
 * The agent is sh: its tests and redirections are builtins, so they are
 * its own system calls, not execs to decide.
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

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FORGED "WARDEN_FORGED_ROW_5c7e"

static const char agent[] =
	"j=.warden/audit.db" STO_JOURNAL_SUFFIX "\n"
	"ls -a .warden; echo ls=$?\n"
	"[ -e $j ] && echo journal-seen || echo journal-not-seen\n"
	"[ -e .warden/audit.db ] && echo audit-seen || echo audit-not-seen\n"
	"( exec 3< $j ) 2>/dev/null && echo ESCAPE-READ || echo read-refused\n"
	"( exec 3<> $j ) 2>/dev/null && echo ESCAPE-OPEN-RW || echo rw-refused\n"
	"( echo " FORGED " >> $j ) 2>/dev/null && echo ESCAPE-WRITE || echo write-refused\n"
	"( : > $j ) 2>/dev/null && echo ESCAPE-TRUNCATE || echo truncate-refused\n"
	"exit 0\n";

static void run_agent(struct wt_fx *f, bool no_view)
{
	wt_require_sandbox();
	wt_write(f->proj, "agent.sh", agent);
	char *with_view[] = {"run", "--tier", "aggressive", "--", "/bin/sh", "agent.sh", NULL};
	char *without[] = {"run", "--tier",  "aggressive", "--no-view",
			   "--",  "/bin/sh", "agent.sh",   NULL};
	struct wt_result r;
	wt_wardenv(f->proj, no_view ? without : with_view, &r);
	print_message("status %d\nout: %.1500s\nerr: %.1500s\n", r.status, r.out, r.err);
	assert_int_equal(r.status, 0);
	/* The script ran to its end. */
	assert_non_null(strstr(r.out, "ls=0\n"));
	if (!no_view && strstr(r.out, "audit.db" STO_JOURNAL_SUFFIX))
		fail_msg("ESCAPE FOUND: the agent lists the audit's journal in the view");
	if (!no_view && strstr(r.out, "journal-seen\n"))
		fail_msg("ESCAPE FOUND: the audit's journal exists in the view");
	/* Treated like audit.db: seen by name exactly when it is. */
	assert_true((strstr(r.out, "journal-seen\naudit-seen\n") != NULL) ||
		    (strstr(r.out, "journal-not-seen\naudit-not-seen\n") != NULL));
	if (strstr(r.out, "ESCAPE-"))
		fail_msg("ESCAPE FOUND: %s", strstr(r.out, "ESCAPE-"));
	assert_non_null(strstr(r.out, "seen\nread-refused\nrw-refused\nwrite-refused\n"
				      "truncate-refused\n"));
	/* The host's journal is warden's alone, and nothing was forged. */
	wd_autofree char *journal = wd_asprintf("%s%s", f->db, STO_JOURNAL_SUFFIX);
	struct stat st;
	assert_int_equal(lstat(journal, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	char buf[4096] = {0};
	int fd = open(journal, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	assert_null(memmem(buf, (size_t)n, FORGED, strlen(FORGED)));
	struct wt_audit_q q = {.summary_sub = FORGED};
	assert_int_equal(wt_audit_match(f->db, &q), 0);
	q = (struct wt_audit_q){.summary_sub = "ls -a .warden"};
	assert_int_equal(wt_audit_match(f->db, &q), 1);
	wt_result_free(&r);
}

static void test_esc_journal_hidden_in_view(void **state)
{
	run_agent(*state, false);
}

static void test_esc_journal_hidden_without_view(void **state)
{
	run_agent(*state, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_esc_journal_hidden_in_view, wt_fx_setup,
						wt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_esc_journal_hidden_without_view, wt_fx_setup,
						wt_fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
