/*
 * audit_open.c: opens an existing audit for the commands that read it,
 * saying what to do when there is none.
 */
#include "sup.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int sup_open_audit(const char *dir, const char *audit, struct sto_db **db)
{
	wd_autofree char *def = wd_asprintf("%s/.warden/audit.db", dir);
	if (!audit)
		audit = def;
	*db = NULL;
	if (access(audit, R_OK) < 0) {
		wd_err("%s: no audit here (%s); run warden run first, or pass --audit PATH", audit,
		       strerror(errno));
		return -errno;
	}
	char *err = NULL;
	int rc = sto_open(audit, db, &err);
	if (rc < 0) {
		wd_err("%s", err ? err : strerror(-rc));
		free(err);
	}
	return rc;
}
