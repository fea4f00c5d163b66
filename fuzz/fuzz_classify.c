/*
 * fuzz_classify: the command classifier and the shell splitter on any
 * bytes: the input is split at NUL bytes into an argv, and also given
 * whole to sh -c. Then the same argv goes through a request, its JSON and
 * summary, and pol_decide().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	char *argv[MAX_ARGS + 1];
	size_t n = 0;
	for (size_t i = 0; i <= size && n < MAX_ARGS;) {
		argv[n++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[n] = NULL;
	static struct pol_config *c;
	if (!c) {
		c = pol_config_default();
		pol_config_set_paths(c, "/work/proj", "/home/u");
	}
	struct pol_classification r;
	pol_classify_argv(argv, NULL, c, &r);
	char *sh[] = {"sh", "-c", buf, NULL};
	pol_classify_argv(sh, argv, c, &r);

	struct pol_exec_desc d = {.path = "/usr/bin/x",
				  .argv = argv,
				  .envp = argv,
				  .cwd = "/work/proj/src",
				  .parent_cmdline = buf,
				  .resolved = size & 2 ? argv[0] : NULL,
				  .agent_writable = size & 4};
	struct pol_request *req = pol_request_exec(&d, "/work/proj");
	if (req) {
		char *j = pol_request_json(req);
		char *s = pol_request_summary(req);
		struct pol_decision dec;
		struct pol_context ctx = {.covered = size & 1};
		pol_decide(req, c, NULL, &ctx, 0, &dec);
		(void)pol_exec_covers(req);
		free(pol_explain_grammar(req, c));
		free(j);
		free(s);
		pol_request_free(req);
	}
	struct pol_request *o = pol_request_open(buf, NULL, (unsigned)size & 0xff, buf);
	if (o) {
		struct pol_decision dec;
		pol_decide(o, c, NULL, NULL, 0, &dec);
		char *j = pol_request_json(o);
		free(j);
		pol_request_free(o);
	}
	free(buf);
	return 0;
}
