/*
 * proc.c: small readers of /proc shared by the decoders.
 */
#include "proc_int.h"
#include "sandbox.h"

#include "common.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The target of the symlink |path|, or NULL when it is none or shorter
 * than |min| bytes. */
static char *read_link(const char *path, ssize_t min)
{
	char buf[4096];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);
	if (n < min)
		return NULL;
	buf[n] = '\0';
	return wd_strdup(buf);
}

char *sbx_proc_link(pid_t pid, const char *what)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	return read_link(p, 0);
}

int sbx_proc_open(pid_t pid, const char *what)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	return open(p, O_PATH | O_CLOEXEC);
}

char *sbx_fd_path(int fd)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	return read_link(link, 1);
}

char *sbx_quote_args(const char *buf, size_t len)
{
	struct wd_sb sb = {0};
	size_t i = 0;
	while (i < len) {
		const char *s = buf + i;
		if (sb.len)
			wd_sb_putc(&sb, ' ');
		wd_sb_shell_quote(&sb, s);
		i += strlen(s) + 1;
	}
	return wd_sb_steal(&sb);
}

char *sbx_proc_cmdline(pid_t pid, size_t max)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/cmdline", pid);
	/* On the stack, like the decoder's pages: no heap block taken and
	 * given back for every exec. */
	char buf[SBX_CMDLINE_MAX + 1];
	ssize_t n = wd_read_proc_into(p, buf, max < SBX_CMDLINE_MAX ? max : SBX_CMDLINE_MAX);
	return n < 0 ? NULL : sbx_quote_args(buf, (size_t)n);
}
