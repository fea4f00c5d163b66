/*
 * damage.c: see damage.h. The page is found from the file format itself
 * (sqlite_schema's rootpage, the root's cell pointers), so that the test
 * needs no dbstat virtual table.
 */
#include "damage.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what, const char *path)
{
	fprintf(stderr, "damage: %s: %s\n", path, what);
	exit(1);
}

static int64_t one_int(sqlite3 *h, const char *sql, const char *path)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		die(sqlite3_errmsg(h), path);
	int64_t v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static unsigned be16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static unsigned be32(const unsigned char *p)
{
	return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

/* Reads the first varint at |p| (the row id of a table leaf's first cell
 * comes after the payload size varint). */
static const unsigned char *varint(const unsigned char *p, int64_t *v)
{
	*v = 0;
	for (int i = 0; i < 9; i++) {
		if (i == 8) {
			*v = (*v << 8) | p[i];
			return p + 9;
		}
		*v = (*v << 7) | (p[i] & 0x7f);
		if (!(p[i] & 0x80))
			return p + i + 1;
	}
	return p + 9;
}

int dmg_decisions_leaf(const char *path, int64_t *first_id)
{
	sqlite3 *h = NULL;
	if (sqlite3_open(path, &h) != SQLITE_OK)
		die("cannot open", path);
	sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	int64_t root =
		one_int(h, "SELECT rootpage FROM sqlite_schema WHERE name = 'decisions'", path);
	int64_t psize = one_int(h, "PRAGMA page_size", path);
	sqlite3_close(h);

	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("cannot open for writing", path);
	unsigned char *page = malloc((size_t)psize);
	if (pread(fd, page, (size_t)psize, (root - 1) * psize) != psize)
		die("cannot read the root page", path);
	if (page[0] != 0x05)
		die("the decisions table's root is not an interior page: too few rows", path);
	/* Down the middle of the tree to a leaf: the right-most pointer (at
	 * offset 8) when a page has a single cell. */
	int64_t child = root;
	while (page[0] == 0x05) {
		unsigned cells = be16(page + 3);
		child = cells >= 2 ? be32(page + be16(page + 12 + 2 * (cells / 2)))
				   : be32(page + 8);
		if (pread(fd, page, (size_t)psize, (child - 1) * psize) != psize)
			die("cannot read a page", path);
	}
	if (page[0] != 0x0d)
		die("the middle of the tree is not a table leaf", path);
	int rows = (int)be16(page + 3);
	int64_t size;
	varint(varint(page + be16(page + 8), &size), first_id);
	memset(page, 0x5a, (size_t)psize);
	if (pwrite(fd, page, (size_t)psize, (child - 1) * psize) != psize)
		die("cannot write the leaf", path);
	fsync(fd);
	close(fd);
	free(page);
	return rows;
}

int64_t dmg_table_root(const char *path, const char *table)
{
	sqlite3 *h = NULL;
	if (sqlite3_open(path, &h) != SQLITE_OK)
		die("cannot open", path);
	sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	char *sql = sqlite3_mprintf("SELECT rootpage FROM sqlite_schema WHERE type = 'table'"
				    " AND name = %Q",
				    table);
	int64_t root = one_int(h, sql, path);
	sqlite3_free(sql);
	int64_t psize = one_int(h, "PRAGMA page_size", path);
	sqlite3_close(h);
	if (root < 2)
		die("the table has no root page of its own", path);

	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("cannot open for writing", path);
	unsigned char *page = malloc((size_t)psize);
	memset(page, 0x5a, (size_t)psize);
	if (pwrite(fd, page, (size_t)psize, (root - 1) * psize) != psize)
		die("cannot write the root page", path);
	fsync(fd);
	close(fd);
	free(page);
	return root;
}
