/*
 * store_check: the cost of the audit's quick check at session start, on an
 * audit of N rows (default 100,000) written with the store's own code: the
 * time of a whole PRAGMA quick_check, and how far a bounded one gets.
 *
 * Usage: store_check [-n ROWS] [-b BUDGET_MS] DIR   (the database is
 * DIR/audit.db, removed at the end)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "store.h"

static struct sto_row row_at(int i)
{
	struct sto_row r = {
		.ts_us = 1700000000000000 + i,
		.session = i % 2 ? "20261202-120643-4f2a" : "20261202-130000-beef",
		.pid = 1000 + i % 50,
		.ppid = 999,
		.kind = i % 3 ? "exec" : "open",
		.request = "{\"kind\":\"exec\",\"path\":\"/usr/bin/cc\",\"argv\":[\"cc\",\"-c\","
			   "\"src/f.c\",\"-o\",\"build/f.o\"],\"cwd\":\".\"}",
		.summary = "cc -c src/f.c -o build/f.o",
		.decision = i % 7 ? "allow" : "deny",
		.source = "covered",
		.reason = "inside the tree of an allowed command",
		.decided_by = "warden",
	};
	return r;
}

int main(int argc, char **argv)
{
	int n = 100000, opt;
	int64_t budget = 100;
	while ((opt = getopt(argc, argv, "n:b:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'b')
			budget = atoll(optarg);
		else
			return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: store_check [-n ROWS] [-b BUDGET_MS] DIR\n");
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/audit.db", argv[optind]);
	struct sto_db *db = NULL;
	char *err = NULL;
	if (sto_open(path, &db, &err) < 0) {
		fprintf(stderr, "store_check: %s\n", err ? err : "cannot open");
		return 1;
	}
	struct sto_row batch[1000];
	for (int i = 0; i < n; i += 1000) {
		int k = n - i < 1000 ? n - i : 1000;
		for (int j = 0; j < k; j++)
			batch[j] = row_at(i + j);
		int rc = sto_append_batch(db, batch, (size_t)k, &err);
		if (rc < 0) {
			fprintf(stderr, "store_check: %s\n", err ? err : strerror(-rc));
			return 1;
		}
	}
	sto_close(db);
	struct stat sb;
	stat(path, &sb);
	for (int pass = 0; pass < 2; pass++) {
		if (sto_open(path, &db, &err) < 0)
			return 1;
		bool complete;
		int64_t t0 = wd_now_mono_ns();
		int r = sto_quick_check(db, pass ? budget : 0, &complete, &err);
		int64_t t1 = wd_now_mono_ns();
		printf("%d rows (%lld bytes): quick_check %s %lld ms: %.1f ms, %s\n", n,
		       (long long)sb.st_size, pass ? "bounded at" : "unbounded,",
		       pass ? (long long)budget : 0LL, (t1 - t0) / 1e6,
		       r < 0	  ? "damaged"
		       : complete ? "complete"
				  : "stopped at the bound");
		sto_close(db);
	}
	unlink(path);
	char side[4200];
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	return 0;
}
