/*
 * summary.c: the line `warden run` prints at exit: what was allowed,
 * refused and put to a person in this session, and how to read it.
 */
#include "sup.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

struct counts {
	unsigned long long allowed, refused;
};

static int count_row(const struct sto_row *row, void *arg)
{
	struct counts *n = arg;
	if (row->decision && strcmp(row->decision, "allow") == 0)
		n->allowed++;
	else
		n->refused++; /* a row that allows nothing refused */
	return 0;
}

void sup_print_summary(struct sup_run *r)
{
	struct counts n = {0};
	struct sto_filter f = {.session = r->session_id};
	if (!r->db || sto_query(r->db, &f, count_row, &n, NULL) < 0)
		return; /* the audit said why when it failed */
	/* The command that reads this session from where the person is
	 * (warden audit reads the audit of the current directory). */
	char cwd[PATH_MAX];
	wd_autofree char *def = wd_asprintf("%s/.warden/audit.db", r->opts.project);
	/* Paths quoted for a shell: the line is a command to copy. */
	struct wd_sb where = {0};
	if (strcmp(r->opts.audit_path, def) != 0) {
		wd_sb_puts(&where, " --audit ");
		wd_sb_shell_quote(&where, r->opts.audit_path);
	} else if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, r->opts.project) != 0) {
		wd_sb_puts(&where, " --project ");
		wd_sb_shell_quote(&where, r->opts.project);
	}
	/* Every request put to a person (desk or terminal) got an id. */
	wd_info("%llu allowed, %llu refused, %u asked; warden audit%s --session %s", n.allowed,
		n.refused, r->next_pending_id, where.buf ? where.buf : "", r->session_id);
	wd_sb_free(&where);
}
