/*
 * notify_int.h: the parts of the exec decoder (notify.c) that read
 * agent-controlled bytes without needing a stopped process, for the fuzz
 * targets. Not part of the sandbox's interface: the supervisor uses
 * sandbox.h.
 */
#ifndef WARDEN_NOTIFY_INT_H
#define WARDEN_NOTIFY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox.h"

#define SBX_PAGE_SIZE 4096
/* At most this many pointers in an argv or envp, the NULL included. */
#define SBX_VECTOR_MAX_PTRS (SBX_ARGV_MAX / 8)

/* Copies the page at |base| (a multiple of SBX_PAGE_SIZE) of the address
 * space behind |ctx| into |page| (SBX_PAGE_SIZE bytes). Returns 0, or
 * -EFAULT when the page is not mapped: a page reads whole or not at all. */
typedef int (*sbx_page_reader)(void *ctx, uint64_t base, char *page);

/* Reads the NULL-terminated array of string pointers at |addr| (an argv or
 * envp) through |read|, within |budget| bytes in all: each string with its
 * NUL plus each pointer with the NULL, as the kernel counts. A NULL |addr| is
 * an empty array. Returns 0 with *out (NULL-terminated; the caller frees each
 * string and the array) and *bytes (what was counted against |budget|), or
 * -EFAULT (a pointer or string is not readable) or -E2BIG, with *out NULL. */
int sbx_decode_vector(sbx_page_reader read, void *ctx, uint64_t addr, size_t budget, char ***out,
		      size_t *bytes);

/* Parses |buf|, the first |n| bytes of a file, as the kernel's binfmt_script
 * does. Returns true when the file is a script the kernel would hand to an
 * interpreter, with *interp (never empty) and *arg (NULL when there is
 * none; may be empty); the caller frees both. Returns false, with both
 * NULL, otherwise. */
bool sbx_parse_shebang(const char *buf, size_t n, char **interp, char **arg);

#endif
