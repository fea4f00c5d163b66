/*
 * config_load.c: reads a project's .warden/permissions.json for the
 * running supervisor and the commands, printing every problem in it.
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file of mode |m| is, for a person. */
static const char *file_type(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
			     : "not a regular file";
}

/* Reads the config at |path|: a regular file of at most 1 MiB. The open
 * neither blocks (a FIFO would wait for a writer forever) nor follows a
 * final symlink, and the type is checked on the descriptor that is then
 * read, so that what is checked is what is read. 0 or -errno, after
 * saying why on stderr except for -ENOENT. */
int sup_config_read(const char *path, char **text, size_t *len)
{
	wd_autoclose int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			wd_err("%s: a symbolic link: the config must be a regular file", path);
		else if (e != ENOENT)
			wd_err("%s: cannot read: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		wd_err("%s: cannot read: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		wd_err("%s: %s: the config must be a regular file", path, file_type(st.st_mode));
		return -EINVAL;
	}
	size_t max = 1 << 20;
	char *buf = wd_malloc(max + 1);
	ssize_t n = wd_read_all(fd, buf, max + 1);
	if (n < 0 || (size_t)n > max) {
		int e = n < 0 ? (int)-n : EFBIG;
		wd_err("%s: cannot read: %s", path, strerror(e));
		free(buf);
		return -e;
	}
	buf[n] = '\0';
	*text = buf;
	*len = (size_t)n;
	return 0;
}

int sup_config_load(const char *path, bool missing_ok, struct pol_config **out)
{
	char *text = NULL;
	size_t len = 0;
	int rc = sup_config_read(path, &text, &len);
	if (rc == -ENOENT && missing_ok) {
		*out = pol_config_default();
		return 0;
	}
	if (rc == -ENOENT)
		wd_err("%s: cannot read: %s", path, strerror(-rc));
	if (rc < 0)
		return rc;
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
