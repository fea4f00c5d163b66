/*
 * proc_int.h: small readers of /proc (proc.c) shared inside the sandbox
 * module. Not part of its interface.
 */
#ifndef WARDEN_PROC_INT_H
#define WARDEN_PROC_INT_H

#include <stddef.h>
#include <sys/types.h>

/* The target of /proc/PID/|what| (a magic link: exe, cwd, fd/N), or NULL. */
char *sbx_proc_link(pid_t pid, const char *what);
/* An O_PATH (O_CLOEXEC) fd of /proc/PID/|what|, or -1 with errno set. */
int sbx_proc_open(pid_t pid, const char *what);
/* The path the kernel gives the object behind |fd| (as the supervisor sees
 * it), or NULL. */
char *sbx_fd_path(int fd);
/* |len| bytes of NUL-separated arguments (buf[len] is a NUL), shell-quoted
 * and joined by spaces, as a command line is shown. */
char *sbx_quote_args(const char *buf, size_t len);

#endif
