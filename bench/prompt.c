/*
 * prompt: the judge's prompt build time for a session with 50
 * user rules and 200 history entries: the turn's prefix (once per turn) and
 * the per-call message, median and p99 over many rounds.
 *
 *   prompt [-r ROUNDS]
 */
#include "common.h"
#include "judge.h"
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void report(const char *what, int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp);
	printf("%-8s median %.1f us, p99 %.1f us (%zu rounds)\n", what, (double)v[n / 2] / 1000.0,
	       (double)v[n * 99 / 100] / 1000.0, n);
}

int main(int argc, char **argv)
{
	size_t rounds = argc == 3 && strcmp(argv[1], "-r") == 0 ? (size_t)atoi(argv[2]) : 2000;
	if (rounds < 10)
		rounds = 10;
	struct jdg_rule rules[50];
	char *res[50], *notes[50];
	for (int i = 0; i < 50; i++) {
		res[i] = wd_asprintf("make -j%d test-%d", i % 8 + 1, i);
		notes[i] = wd_asprintf("ok for the test targets, note %d", i);
		rules[i] = (struct jdg_rule){.kind = i % 3 == 0	  ? JDG_RULE_ALWAYS
						     : i % 3 == 1 ? JDG_RULE_APPROVED_NOTE
								  : JDG_RULE_REJECTED_NOTE,
					     .action = "exec",
					     .resources = res[i],
					     .note = i % 3 ? notes[i] : NULL,
					     .ts_us = 1000 + i};
	}
	struct jdg_history_entry hist[200];
	char *sums[200];
	for (int i = 0; i < 200; i++) {
		sums[i] = wd_asprintf("cc -O2 -c -o src/file%d.o src/file%d.c", i, i);
		hist[i] = (struct jdg_history_entry){.summary = sums[i],
						     .allowed = i % 7 != 0,
						     .source = i % 7 ? "fast_path" : "tier",
						     .decided_by = "warden",
						     .note = i % 7 ? NULL : JDG_NOTE_PASSIVE};
	}
	char *av[] = {"curl", "-fsSL", "https://example.invalid/x", "-o", "x.tar.gz", NULL};
	struct pol_exec_desc d = {.path = "/usr/bin/curl", .argv = av, .cwd = "/work/proj"};
	struct pol_request *req = pol_request_exec(&d, "/work/proj");
	char *json = pol_request_json(req);
	struct jdg_session_info si = {"claude -p 'fix the build'", "/work/proj",
				      "fix the failing tests in src/"};
	int64_t *tp = wd_calloc(rounds, sizeof(int64_t)), *tm = wd_calloc(rounds, sizeof(int64_t));
	size_t bytes = 0;
	for (size_t i = 0; i < rounds; i++) {
		int64_t t0 = wd_now_mono_ns();
		char *prefix = jdg_prefix_build(&si, rules, 50);
		int64_t t1 = wd_now_mono_ns();
		char *msg = jdg_message_build(strlen(prefix), hist, 200, json, "/work/proj");
		int64_t t2 = wd_now_mono_ns();
		tp[i] = t1 - t0;
		tm[i] = t2 - t1;
		bytes = strlen(prefix) + strlen(msg);
		free(prefix);
		free(msg);
	}
	printf("prompt with 50 rules and 200 history entries: %zu bytes\n", bytes);
	report("prefix", tp, rounds);
	report("message", tm, rounds);
	free(tp);
	free(tm);
	free(json);
	pol_request_free(req);
	for (int i = 0; i < 50; i++) {
		free(res[i]);
		free(notes[i]);
	}
	for (int i = 0; i < 200; i++)
		free(sums[i]);
	return 0;
}
