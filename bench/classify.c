/*
 * classify: times the policy's command classification (pol_classify_argv),
 * the work the fast path and hard deny do for every exec, over a file of
 * recorded agent command lines (bench/commands.txt).
 *
 * Each line is classified twice over: as the words a simple shell splitter
 * finds in it (what an execve of the program would carry), and as
 * {"sh", "-c", line} (what an agent's shell tool runs, which the classifier
 * unwraps). Lines are split before timing; only classification is timed.
 * Prints decisions per second over all rounds and the median and p99 of a
 * single call (clock overhead included, and printed), per form, and how many
 * lines fell in each class.
 *
 * Usage: classify [-r ROUNDS] FILE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "policy.h"

struct cmd {
	char **argv;
};

/* Splits |line| into words: blanks separate; '…' is literal; "…" keeps
 * spaces and honours \" \\ \$ \`; a backslash outside quotes escapes the next
 * byte. Operators (&&, |, ;) stay words of their own when spaced, as agents
 * write them. Returns a NULL-terminated argv (caller frees each word and the
 * array), or NULL for a blank line. */
static char **split(const char *line)
{
	size_t cap = 8, n = 0;
	char **argv = wd_calloc(cap, sizeof(*argv));
	const char *p = line;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		struct wd_sb w = {0};
		wd_sb_puts(&w, "");
		while (*p && *p != ' ' && *p != '\t') {
			if (*p == '\'') {
				const char *q = strchr(p + 1, '\'');
				size_t len = q ? (size_t)(q - p - 1) : strlen(p + 1);
				wd_sb_add(&w, p + 1, len);
				p += len + 1 + (q ? 1 : 0);
			} else if (*p == '"') {
				for (p++; *p && *p != '"'; p++) {
					if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
						p++;
					wd_sb_putc(&w, *p);
				}
				if (*p)
					p++;
			} else if (*p == '\\' && p[1]) {
				wd_sb_putc(&w, p[1]);
				p += 2;
			} else {
				wd_sb_putc(&w, *p++);
			}
		}
		if (n + 2 > cap) {
			cap *= 2;
			argv = wd_realloc(argv, cap * sizeof(*argv));
		}
		argv[n++] = wd_sb_steal(&w);
	}
	argv[n] = NULL;
	if (n == 0) {
		free(argv);
		return NULL;
	}
	return argv;
}

static char **sh_c(const char *line)
{
	char **argv = wd_calloc(4, sizeof(*argv));
	argv[0] = wd_strdup("sh");
	argv[1] = wd_strdup("-c");
	argv[2] = wd_strdup(line);
	return argv;
}

static void argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The median cost of reading the clock twice, which every per-call sample
 * below includes. */
static int64_t clock_overhead(void)
{
	enum { K = 10001 };
	static int64_t d[K];
	for (int i = 0; i < K; i++) {
		int64_t a = wd_now_mono_ns();
		d[i] = wd_now_mono_ns() - a;
	}
	qsort(d, K, sizeof(d[0]), cmp_i64);
	return d[K / 2];
}

/* Times |n| commands: |rounds| untimed-per-call passes for the throughput,
 * then one pass timing each call for the median and p99. Prints one line for
 * |form|. */
static void run(const char *form, struct cmd *cmds, size_t n, int rounds)
{
	int64_t *lat = wd_calloc(n, sizeof(*lat));
	size_t classes[3] = {0};
	struct pol_classification out;
	int64_t t0 = wd_now_mono_ns();
	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < n; i++)
			pol_classify_argv(cmds[i].argv, NULL, NULL, &out);
	}
	int64_t total = wd_now_mono_ns() - t0;
	for (size_t i = 0; i < n; i++) {
		int64_t a = wd_now_mono_ns();
		pol_classify_argv(cmds[i].argv, NULL, NULL, &out);
		lat[i] = wd_now_mono_ns() - a;
		if (out.cls <= POL_CLASS_CRITICAL)
			classes[out.cls]++;
	}
	qsort(lat, n, sizeof(*lat), cmp_i64);
	printf("%-6s commands=%zu rounds=%d decisions/s=%.0f median_ns=%lld p99_ns=%lld "
	       "read_only=%zu other=%zu critical=%zu\n",
	       form, n, rounds, (double)n * rounds / ((double)total / 1e9), (long long)lat[n / 2],
	       (long long)lat[n * 99 / 100], classes[POL_CLASS_READ_ONLY], classes[POL_CLASS_OTHER],
	       classes[POL_CLASS_CRITICAL]);
	free(lat);
}

int main(int argc, char **argv)
{
	int rounds = 5, opt;
	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt == 'r' && atoi(optarg) > 0) {
			rounds = atoi(optarg);
		} else {
			fprintf(stderr, "usage: classify [-r ROUNDS] FILE\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: classify [-r ROUNDS] FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[optind], "re");
	if (!f) {
		fprintf(stderr, "classify: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	size_t n = 0, cap = 1024;
	struct cmd *words = wd_calloc(cap, sizeof(*words));
	struct cmd *shell = wd_calloc(cap, sizeof(*shell));
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	while ((len = getline(&line, &lcap, f)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (line[0] == '#' || !line[0])
			continue;
		char **w = split(line);
		if (!w)
			continue;
		if (n == cap) {
			cap *= 2;
			words = wd_realloc(words, cap * sizeof(*words));
			shell = wd_realloc(shell, cap * sizeof(*shell));
		}
		words[n].argv = w;
		shell[n].argv = sh_c(line);
		n++;
	}
	free(line);
	fclose(f);
	if (n == 0) {
		fprintf(stderr, "classify: %s has no commands\n", argv[optind]);
		return 1;
	}
	printf("clock overhead per sample: %lld ns (included in median_ns and p99_ns)\n",
	       (long long)clock_overhead());
	run("words", words, n, rounds);
	run("sh-c", shell, n, rounds);
	for (size_t i = 0; i < n; i++) {
		argv_free(words[i].argv);
		argv_free(shell[i].argv);
	}
	free(words);
	free(shell);
	return 0;
}
