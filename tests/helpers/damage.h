/*
 * damage: overwrites one data page of an audit's decisions table with
 * garbage, with plain file writes on the test's own file, as a disk fault or
 * a stray writer would.
 */
#ifndef WARDEN_TEST_DAMAGE_H
#define WARDEN_TEST_DAMAGE_H

#include <stdint.h>

/* Folds the WAL of the SQLite file |path| into it, then overwrites a leaf
 * page of the decisions table from the middle of the table (its root must
 * be an interior page: a few thousand rows). Returns
 * how many rows that page held (> 0); *first_id is the smallest id on it.
 * Aborts the test (exit 1 with a message) when the file is not shaped so. */
int dmg_decisions_leaf(const char *path, int64_t *first_id);

/* Folds the WAL of |path| into it, then overwrites the root page of
 * |table| (not page 1) with garbage. Returns the page's number. Aborts the
 * test (exit 1 with a message) when there is no such table. */
int64_t dmg_table_root(const char *path, const char *table);

#endif
