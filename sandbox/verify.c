/*
 * verify.c: the check, at the exec event, that the new image is the one
 * decided.
 */
#include "notify_int.h"

#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>

/* Reads a NUL-separated /proc file and compares it with |want|: one read
 * of exactly what |want| holds plus a byte (the kernel fills the count in
 * one call; more than |want| is a mismatch either way). */
static bool proc_vector_equals(pid_t pid, const char *what, char *const *want)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	char *buf = NULL;
	size_t len = 0, need = 0;
	for (size_t k = 0; want && want[k]; k++)
		need += strlen(want[k]) + 1;
	if (wd_read_proc(p, need, &buf, &len) < 0)
		return false;
	size_t off = 0, i = 0;
	bool ok = true;
	for (; want && want[i]; i++) {
		size_t l = strlen(want[i]);
		if (off + l + 1 > len || memcmp(buf + off, want[i], l + 1) != 0) {
			ok = false;
			break;
		}
		off += l + 1;
	}
	if (ok && off != len)
		ok = false;
	free(buf);
	return ok;
}

#if defined(__x86_64__)
/* The string at |addr| in |buf| (the |got| bytes read from |start|), when it
 * lies whole in it. */
static const char *stack_string(const char *buf, uint64_t start, size_t got, uint64_t addr)
{
	if (addr < start || addr - start >= got)
		return NULL;
	size_t off = addr - start;
	return memchr(buf + off, '\0', got - off) ? buf + off : NULL;
}

/* Whether the NULL-terminated pointer array at |off| in |buf| names exactly
 * the strings of |want|. */
static bool stack_vector_equals(const char *buf, uint64_t start, size_t got, size_t off,
				char *const *want)
{
	size_t i = 0;
	for (;; i++) {
		uint64_t ptr;
		if (off + (i + 1) * sizeof(ptr) > got)
			return false;
		memcpy(&ptr, buf + off + i * sizeof(ptr), sizeof(ptr));
		if (!want || !want[i])
			return ptr == 0;
		const char *s = stack_string(buf, start, got, ptr);
		if (!s || strcmp(s, want[i]) != 0)
			return false;
	}
}

/*
 * At the exec event the new image has not run an instruction: from its
 * stack pointer up lie argc, the argv pointers and a NULL, the envp pointers
 * and a NULL, the auxiliary vector, and above them the strings those
 * pointers name (fs/binfmt_elf.c, create_elf_tables). One read of that span
 * shows exactly the argv and envp the program will see, where the /proc
 * files cost two opens. Returns true only when everything is there and
 * equal; anything else (a smaller read, a 32-bit image, a difference) sends
 * the caller to the /proc check, which decides.
 */
/* Where the strings of the argv at |off| in |buf| start, when they lie end
 * to end as the kernel copies them (so that they are exactly the bytes
 * from arg_start to arg_end): fills |args| and returns true. */
static bool stack_args(const char *buf, size_t got, size_t off, char *const *argv,
		       struct sbx_args *args)
{
	uint64_t first = 0;
	size_t len = 0;
	for (size_t i = 0; argv && argv[i]; i++) {
		uint64_t ptr;
		if (off + (i + 1) * sizeof(ptr) > got)
			return false;
		memcpy(&ptr, buf + off + i * sizeof(ptr), sizeof(ptr));
		if (i == 0)
			first = ptr;
		if (ptr != first + len)
			return false;
		len += strlen(argv[i]) + 1;
	}
	if (len == 0 || len > SBX_CMDLINE_MAX)
		return false;
	args->at = first;
	args->len = len;
	args->bytes = wd_malloc(len);
	for (size_t i = 0, o = 0; argv[i]; i++) {
		size_t n = strlen(argv[i]) + 1;
		memcpy(args->bytes + o, argv[i], n);
		o += n;
	}
	return true;
}

static bool stack_matches(pid_t pid, char *const *argv, char *const *envp, struct sbx_args *args)
{
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
		return false;
	size_t argc = 0, envc = 0, bytes = 0;
	for (; argv && argv[argc]; argc++)
		bytes += strlen(argv[argc]) + 1;
	for (; envp && envp[envc]; envc++)
		bytes += strlen(envp[envc]) + 1;
	uint64_t sp = regs.rsp, start = sp & ~(uint64_t)(SBX_PAGE_SIZE - 1);
	/* Pointers, then room for the auxiliary vector and the random bytes
	 * and platform string the kernel puts below the strings. */
	size_t span =
		(sp - start) + (argc + envc + 3) * sizeof(uint64_t) + 2 * SBX_PAGE_SIZE + bytes;
	size_t npages = (span + SBX_PAGE_SIZE - 1) / SBX_PAGE_SIZE;
	if (npages > 1024) /* IOV_MAX */
		return false;
	/* Usually two or three pages: on the stack, not the heap. */
	char small[4 * SBX_PAGE_SIZE];
	struct iovec small_l[4], small_rv[4];
	bool heap = npages > 4;
	char *buf = heap ? wd_malloc(npages * SBX_PAGE_SIZE) : small;
	struct iovec *l = heap ? wd_calloc(npages, sizeof(*l)) : small_l;
	struct iovec *rv = heap ? wd_calloc(npages, sizeof(*rv)) : small_rv;
	for (size_t i = 0; i < npages; i++) {
		l[i] = (struct iovec){.iov_base = buf + i * SBX_PAGE_SIZE,
				      .iov_len = SBX_PAGE_SIZE};
		rv[i] = (struct iovec){.iov_base = (void *)(uintptr_t)(start + i * SBX_PAGE_SIZE),
				       .iov_len = SBX_PAGE_SIZE};
	}
	/* Page by page: the read stops at the top of the stack. */
	ssize_t got = process_vm_readv(pid, l, npages, rv, npages, 0);
	if (heap) {
		free(l);
		free(rv);
	}
	bool ok = false;
	size_t off = sp - start;
	uint64_t n;
	if (got > 0 && off + sizeof(n) <= (size_t)got) {
		memcpy(&n, buf + off, sizeof(n));
		ok = n == argc &&
		     stack_vector_equals(buf, start, (size_t)got, off + sizeof(n), argv) &&
		     stack_vector_equals(buf, start, (size_t)got,
					 off + sizeof(n) + (argc + 1) * sizeof(uint64_t), envp);
		if (ok && args)
			stack_args(buf, (size_t)got, off + sizeof(n), argv, args);
	}
	if (heap)
		free(buf);
	return ok;
}
#else
static bool stack_matches(pid_t pid, char *const *argv, char *const *envp, struct sbx_args *args)
{
	(void)pid;
	(void)argv;
	(void)envp;
	(void)args;
	return false;
}
#endif

int sbx_verify_exec(pid_t pid, const struct sbx_exec_event *ev, struct sbx_args *args, char **err)
{
	char p[64];
	struct stat st;
	if (args)
		*args = (struct sbx_args){0};
	snprintf(p, sizeof(p), "/proc/%d/exe", pid);
	if (stat(p, &st) < 0) {
		if (err)
			*err = wd_asprintf("the new image of pid %d cannot be checked: %s", pid,
					   strerror(errno));
		return -EPERM;
	}
	if (!ev->found || st.st_dev != ev->exe_dev || st.st_ino != ev->exe_ino) {
		char *exe = sbx_proc_link(pid, "exe");
		if (err)
			*err = wd_asprintf(
				"the program that started (%s) is not the one decided (%s)",
				exe ? exe : "?", ev->resolved ? ev->resolved : ev->path);
		free(exe);
		return -EPERM;
	}
	/* The working directory the decision was shown, read the same way: a
	 * thread of the caller (the only task that may share it: the filter
	 * refuses CLONE_FS without CLONE_THREAD) could have changed it after
	 * the read. The other threads are gone now, so it stays as it is. One
	 * without a name was refused at the decision; here it is a change. */
	char *cwd = sbx_proc_link(pid, "cwd");
	bool same_cwd = cwd && ev->cwd && strcmp(cwd, ev->cwd) == 0;
	if (!same_cwd) {
		if (err)
			*err = wd_asprintf("its working directory changed between the decision "
					   "(%s) and the exec (%s)",
					   ev->cwd ? ev->cwd : "unknown", cwd ? cwd : "unknown");
		free(cwd);
		return -EPERM;
	}
	free(cwd);
	if (stack_matches(pid, ev->expect_argv, ev->envp, args))
		return 0;
	if (!proc_vector_equals(pid, "cmdline", ev->expect_argv)) {
		if (err)
			*err = wd_strdup("its argv changed between the decision and the exec");
		return -EPERM;
	}
	if (!proc_vector_equals(pid, "environ", ev->envp)) {
		if (err)
			*err = wd_strdup(
				"its environment changed between the decision and the exec");
		return -EPERM;
	}
	return 0;
}
