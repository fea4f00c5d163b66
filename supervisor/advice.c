/*
 * advice.c: approval memory: the people's decisions read from the audit
 * (for warden rules), and the advice shown with a pending request.
 * Memory never allows anything by itself.
 */
#include "sup.h"

#include <errno.h>
#include <string.h>

int sup_records_take(const struct sto_row *row, void *arg)
{
	struct sup_records *rs = arg;
	rs->v = wd_realloc(rs->v, (rs->n + 1) * sizeof(*rs->v));
	struct pol_mem_record *m = &rs->v[rs->n++];
	memset(m, 0, sizeof(*m));
	m->request = wd_strdup(row->request ? row->request : "{}");
	m->source = wd_strdup(row->source);
	m->approved = row->decision && strcmp(row->decision, "allow") == 0;
	m->edited = false; /* warden cannot change a request's arguments */
	m->decided_by = wd_strdup(row->decided_by ? row->decided_by : "someone");
	m->ts_us = row->ts_us;
	return 0;
}

void sup_records_free(struct sup_records *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		free((char *)rs->v[i].request);
		free((char *)rs->v[i].source);
		free((char *)rs->v[i].decided_by);
	}
	free(rs->v);
}

/* The newest people's decisions memory compares a pending request with: a
 * bound on the time a prompt waits for its "Seen before" line. */
#define ADVICE_MAX_RECORDS 2000

int sup_memory_advice(struct sto_db *db, const struct pol_request *req, char **summary, char **json)
{
	*summary = NULL;
	*json = NULL;
	if (!db || !req)
		return -EINVAL;
	struct sup_records rs = {0};
	const char *kind = pol_kind_name(pol_request_kind(req));
	int rc = sto_people_decisions(db, kind, ADVICE_MAX_RECORDS, sup_records_take, &rs, NULL);
	if (rc == 0)
		rc = pol_mem_advice(req, rs.v, rs.n, summary, json);
	sup_records_free(&rs);
	return rc;
}
