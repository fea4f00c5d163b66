/*
 * store_rate: audit rows per second with the store's real settings (WAL,
 * synchronous=NORMAL, one transaction per row as the supervisor writes
 * before each reply), and with group commits of 100 rows. Prints the median
 * and p99 of one sto_append() so that the decision-latency budget can count
 * the audit's share.
 *
 * Usage: store_rate [-n ROWS] DIR   (the database is DIR/audit.db, removed
 * at the end)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "store.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static struct sto_row row_at(int i)
{
	struct sto_row r = {
		.ts_us = wd_now_real_us(),
		.session = "bench",
		.pid = 1000 + i % 50,
		.ppid = 999,
		.kind = "exec",
		.request = "{\"kind\":\"exec\",\"path\":\"/usr/bin/cc\",\"argv\":[\"cc\",\"-c\","
			   "\"src/f.c\",\"-o\",\"build/f.o\"],\"cwd\":\".\"}",
		.summary = "cc -c src/f.c -o build/f.o",
		.decision = "allow",
		.source = "covered",
		.reason = "inside the tree of an allowed command",
		.decided_by = "warden",
		.latency_us = 20,
	};
	return r;
}

int main(int argc, char **argv)
{
	int n = 5000, opt;
	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt == 'n' && atoi(optarg) > 0) {
			n = atoi(optarg);
		} else {
			fprintf(stderr, "usage: store_rate [-n ROWS] DIR\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: store_rate [-n ROWS] DIR\n");
		return 2;
	}
	wd_autofree char *path = wd_asprintf("%s/audit.db", argv[optind]);
	struct sto_db *db = NULL;
	char *err = NULL;
	if (sto_open(path, &db, &err) != 0) {
		fprintf(stderr, "store_rate: %s\n", err);
		free(err);
		return 1;
	}
	int64_t *lat = wd_calloc((size_t)n, sizeof(*lat));
	int64_t t0 = wd_now_mono_ns();
	for (int i = 0; i < n; i++) {
		struct sto_row r = row_at(i);
		int64_t a = wd_now_mono_ns();
		int rc = sto_append(db, &r, &err);
		lat[i] = wd_now_mono_ns() - a;
		if (rc != 0) {
			fprintf(stderr, "store_rate: %s\n", err ? err : strerror(-rc));
			return 1;
		}
	}
	double single_s = (double)(wd_now_mono_ns() - t0) / 1e9;
	qsort(lat, (size_t)n, sizeof(*lat), cmp_i64);

	enum { BATCH = 100 };
	struct sto_row rows[BATCH];
	int batches = n / BATCH > 0 ? n / BATCH : 1;
	t0 = wd_now_mono_ns();
	for (int b = 0; b < batches; b++) {
		for (int i = 0; i < BATCH; i++)
			rows[i] = row_at(i);
		int rc = sto_append_batch(db, rows, BATCH, &err);
		if (rc != 0) {
			fprintf(stderr, "store_rate: %s\n", err ? err : strerror(-rc));
			return 1;
		}
	}
	double batch_s = (double)(wd_now_mono_ns() - t0) / 1e9;
	sto_close(db);
	printf("own-transaction rows=%d rows/s=%.0f median_us=%.1f p99_us=%.1f\n", n, n / single_s,
	       (double)lat[n / 2] / 1e3, (double)lat[(size_t)n * 99 / 100] / 1e3);
	printf("batch-%d rows=%d rows/s=%.0f\n", BATCH, batches * BATCH, batches * BATCH / batch_s);
	free(lat);
	static const char *const suffix[] = {"", "-wal", "-shm"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(suffix); i++) {
		wd_autofree char *p = wd_asprintf("%s%s", path, suffix[i]);
		unlink(p);
	}
	return 0;
}
