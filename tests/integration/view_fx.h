/*
 * view_fx.h: the fixture of the project view's tests (test_view.c,
 * test_view_access.c): a temporary project with the view mounted over it
 * and served in-process, a decide callback that records every request,
 * and helpers to run commands and read and write through the view.
 * view_fx.c holds them.
 */
#ifndef WARDEN_VIEW_FX_H
#define WARDEN_VIEW_FX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox.h"

#define MAX_RECORDS 64

struct record {
	char path[256];
	char path2[256];
	unsigned access;
	pid_t pid;
};

struct view_decisions {
	pthread_mutex_t lock;
	struct record rec[MAX_RECORDS];
	int n;
	int verdict;	 /* what decide answers */
	int slow_ms;	 /* decide sleeps this long for ".env" */
	int in_progress; /* decide calls not returned yet */
};

/* What the view asked the decide callback; reset by every setup. */
extern struct view_decisions g_dec;

/* The number of requests recorded. */
int records(void);
/* The index of the first record for |path|, or -1. */
int find_record(const char *path);

struct fx {
	char dir[64]; /* the project: the real dir, with the view mounted over it */
	int real;     /* O_PATH fd of the real dir (the user's side) */
	struct sbx_view *view;
};

/* Writes |text| to |name| in the real directory (the user's side). */
void put_real(struct fx *f, const char *name, const char *text);
/* cmocka's setups: the view read-write, with a budget of 200 descriptors,
 * or read-only; and the teardown that unmounts and removes the project. */
int setup(void **state);
int setup_small_budget(void **state);
int setup_ro(void **state);
/* The same with kernel passthrough asked for (read-write, read-only). */
int setup_pt(void **state);
int setup_pt_ro(void **state);
int teardown(void **state);

/* Starts `sh -c |cmd|` in |dir|; its pid. */
pid_t spawn_sh(const char *dir, const char *cmd);
/* Waits for |pid|: its exit status, or 128 + the signal. */
int wait_status(pid_t pid);
/* Runs |fmt| with sh -c in the project (through the view); its status. */
int __attribute__((format(printf, 2, 3))) sh(struct fx *f, const char *fmt, ...);
/* |name| in the view. Caller frees. */
char *vpath(struct fx *f, const char *name);
/* The contents of |name| read through the view, or NULL. Caller frees. */
char *read_view(struct fx *f, const char *name);
void write_view(struct fx *f, const char *name, const char *text);
int64_t ms_since(int64_t t0);

/* 0 when the tests can run here (root, /dev/fuse, a private mount
 * namespace, which it makes), else 77 with the reason on stderr. */
int can_run(void);

#endif
