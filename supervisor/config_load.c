/*
 * config_load.c: reads a project's .warden/permissions.json for the
 * running supervisor and the commands, printing every problem in it.
 */
#include "sup.h"

#include <errno.h>
#include <string.h>

int sup_config_load(const char *path, bool missing_ok, struct pol_config **out)
{
	char *text = NULL;
	size_t len = 0;
	int rc = wd_read_file(path, 1 << 20, &text, &len);
	if (rc == -ENOENT && missing_ok) {
		*out = pol_config_default();
		return 0;
	}
	if (rc < 0) {
		wd_err("%s: cannot read: %s", path, strerror(-rc));
		return rc;
	}
	struct pol_config_errors errs = {0};
	rc = pol_config_parse(text, len, path, out, &errs);
	free(text);
	if (rc < 0) {
		for (size_t i = 0; i < errs.count; i++)
			fprintf(stderr, "%s\n", errs.items[i].message);
		fprintf(stderr, "%s: %zu problem%s\n", path, errs.count,
			errs.count == 1 ? "" : "s");
		pol_config_errors_free(&errs);
		return -EINVAL;
	}
	return 0;
}
