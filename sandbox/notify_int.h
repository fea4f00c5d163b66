/*
 * notify_int.h: what the files of the exec decoder share (notify.c,
 * rmem.c, shebang.c, program.c, verify.c), and the parts that read
 * agent-controlled bytes without needing a stopped process
 * (sbx_decode_vector, sbx_parse_shebang), for the fuzz targets. Not part
 * of the sandbox's interface: the supervisor uses sandbox.h.
 */
#ifndef WARDEN_NOTIFY_INT_H
#define WARDEN_NOTIFY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proc_int.h"
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

/*
 * Reading the caller's memory. argv, envp and their strings sit in a few
 * pages of the caller's stack, so whole pages are read once and kept in a
 * small cache for the rest of this decode. The cache lives only for one
 * notification. Pages come from a sbx_page_reader: the caller's memory
 * (sbx_read_pid_page) here, a made-up address space in the fuzz target.
 */
#define SBX_RMEM_PAGES 12

struct sbx_rmem {
	sbx_page_reader read;
	void *ctx;
	pid_t batch_pid; /* > 0: sbx_rmem_prefetch() may read this pid's pages */
	unsigned next;
	struct {
		uint64_t base; /* page address, or 1 when empty */
		char data[SBX_PAGE_SIZE];
	} page[SBX_RMEM_PAGES];
};

/* How many pages sbx_rmem_prefetch() reads at the most in one call. */
#define SBX_PREFETCH_MAX 6

/* rmem.c */
int sbx_read_pid_page(void *ctx, uint64_t base, char *page);
void sbx_rmem_init(struct sbx_rmem *m, sbx_page_reader read, void *ctx);
void sbx_rmem_prefetch(struct sbx_rmem *m, const uint64_t *addrs, size_t n);
int sbx_rmem_read(struct sbx_rmem *m, uint64_t addr, void *out, size_t n);
int sbx_rmem_string(struct sbx_rmem *m, uint64_t addr, size_t max, size_t *budget, char **out);
size_t sbx_rmem_string_pages(const struct sbx_rmem *m, uint64_t addr, uint64_t *want, size_t max);
int sbx_rmem_vector(struct sbx_rmem *m, uint64_t addr, size_t budget, char ***out, size_t *bytes);

/* emul.c: decodes a trapped name-changing call (sbx_emul_call). 0 and
 * *out, or -ENOENT when the caller is gone. */
struct seccomp_notif;
int sbx_emul_decode(int fd, const struct seccomp_notif *req, struct sbx_fs_event **out);

/* shebang.c */
bool sbx_shebang_of(int fd, const struct stat *st, char **interp, char **arg);

/* program.c */
void sbx_exec_refuse(struct sbx_exec_event *ev, int err, const char *why);
void sbx_exec_resolve(struct sbx_exec_event *ev, int root, int dirfd, int flags,
		      const uint32_t *ids);

#endif
