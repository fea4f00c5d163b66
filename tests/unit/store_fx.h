/*
 * store_fx.h: the store tests' shared fixture (a temporary directory with
 * the audit's path in it) and helpers. store_fx.c holds them.
 */
#ifndef WARDEN_STORE_FX_H
#define WARDEN_STORE_FX_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct fx {
	char dir[64];
	char path[128];
};

/* cmocka's setup and teardown: a fresh temporary directory per case. */
int setup(void **state);
int teardown(void **state);

/* sto_open() that must succeed. */
struct sto_db *open_ok(const char *path);
/* A row with every column set; |i| varies it. */
struct sto_row sample(int i, const char *session, const char *source, const char *kind,
		      int64_t ts_us);
/* A sto_query() callback counting rows into the int at |arg|. */
int count_cb(const struct sto_row *row, void *arg);
/* The number of rows |f| matches. */
int count(struct sto_db *db, const struct sto_filter *f);

/* Collects row ids (and pids, to check the order of a filter). */
struct ids {
	int64_t id[4096];
	int pid[4096];
	size_t n;
};

/* A sto_query() callback filling the struct ids at |arg|. */
int ids_cb(const struct sto_row *row, void *arg);

/* Runs |sql| on |path| with a plain connection (what a hand edit would do). */
void exec_sql(const char *path, const char *sql);
/* The first column of the first row of |sql| on |path|. */
int64_t query_int(const char *path, const char *sql);

#endif
