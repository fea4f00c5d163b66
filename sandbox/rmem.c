/*
 * rmem.c: reading the stopped caller's memory, page by page through a
 * small cache, and decoding the strings and string vectors found there.
 */
#include "notify_int.h"

#include "common.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

/* process_vm_readv of one aligned page either succeeds whole or fails: a
 * page is mapped or not. |ctx| points to the pid. */
int sbx_read_pid_page(void *ctx, uint64_t base, char *page)
{
	pid_t pid = *(const pid_t *)ctx;
	struct iovec l = {.iov_base = page, .iov_len = SBX_PAGE_SIZE};
	struct iovec r = {.iov_base = (void *)(uintptr_t)base, .iov_len = SBX_PAGE_SIZE};
	return process_vm_readv(pid, &l, 1, &r, 1, 0) == SBX_PAGE_SIZE ? 0 : -EFAULT;
}

void sbx_rmem_init(struct sbx_rmem *m, sbx_page_reader read, void *ctx)
{
	m->read = read;
	m->ctx = ctx;
	m->batch_pid = 0;
	m->next = 0;
	for (unsigned i = 0; i < SBX_RMEM_PAGES; i++)
		m->page[i].base = 1;
}

/* The cached page holding |addr|, or NULL when it is not mapped. */
static const char *rmem_page(struct sbx_rmem *m, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(SBX_PAGE_SIZE - 1);
	for (unsigned i = 0; i < SBX_RMEM_PAGES; i++)
		if (m->page[i].base == base)
			return m->page[i].data;
	unsigned slot = m->next++ % SBX_RMEM_PAGES;
	if (m->read(m->ctx, base, m->page[slot].data) < 0) {
		m->page[slot].base = 1;
		return NULL;
	}
	m->page[slot].base = base;
	return m->page[slot].data;
}

/* The cached page holding |addr|, or NULL when it is not cached (no read). */
static const char *rmem_cached(const struct sbx_rmem *m, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(SBX_PAGE_SIZE - 1);
	for (unsigned i = 0; i < SBX_RMEM_PAGES; i++)
		if (m->page[i].base == base)
			return m->page[i].data;
	return NULL;
}

/*
 * Reads the pages holding |addrs| that are not cached yet, in one
 * process_vm_readv (one iovec per page), into the cache. It only warms the
 * cache: a page it could not read is read (and fails) again on demand, so
 * the decode reads the same bytes with or without it. The kernel stops at
 * the first page that fails, so the count it returns says which succeeded.
 */
void sbx_rmem_prefetch(struct sbx_rmem *m, const uint64_t *addrs, size_t n)
{
	if (m->batch_pid <= 0)
		return;
	struct iovec l[SBX_PREFETCH_MAX], rv[SBX_PREFETCH_MAX];
	unsigned slot[SBX_PREFETCH_MAX];
	size_t k = 0;
	for (size_t i = 0; i < n && k < SBX_PREFETCH_MAX; i++) {
		uint64_t base = addrs[i] & ~(uint64_t)(SBX_PAGE_SIZE - 1);
		bool dup = addrs[i] == 0 || rmem_cached(m, base);
		for (size_t j = 0; j < k && !dup; j++)
			dup = (uint64_t)(uintptr_t)rv[j].iov_base == base;
		if (dup)
			continue;
		slot[k] = m->next++ % SBX_RMEM_PAGES;
		m->page[slot[k]].base = 1;
		l[k] = (struct iovec){.iov_base = m->page[slot[k]].data, .iov_len = SBX_PAGE_SIZE};
		rv[k] = (struct iovec){.iov_base = (void *)(uintptr_t)base,
				       .iov_len = SBX_PAGE_SIZE};
		k++;
	}
	if (k == 0)
		return;
	ssize_t got = process_vm_readv(m->batch_pid, l, k, rv, k, 0);
	for (size_t j = 0; got > 0 && j < k && (ssize_t)((j + 1) * SBX_PAGE_SIZE) <= got; j++)
		m->page[slot[j]].base = (uint64_t)(uintptr_t)rv[j].iov_base;
}

/* Whether the |n| bytes from |addr| run past the top of the address space.
 * A process never has those pages (they are the kernel's), so on the real
 * path the read fails anyway; the check keeps the sum from wrapping round to
 * page zero whatever the page reader answers. */
static bool past_top(uint64_t addr, uint64_t n)
{
	return n > 0 && n - 1 > UINT64_MAX - addr;
}

/* Reads exactly |n| bytes at |addr|. 0 or -EFAULT. */
int sbx_rmem_read(struct sbx_rmem *m, uint64_t addr, void *out, size_t n)
{
	size_t got = 0;
	if (past_top(addr, n))
		return -EFAULT;
	while (got < n) {
		const char *pg = rmem_page(m, addr + got);
		if (!pg)
			return -EFAULT;
		size_t off = (addr + got) & (SBX_PAGE_SIZE - 1), take = SBX_PAGE_SIZE - off;
		if (take > n - got)
			take = n - got;
		memcpy((char *)out + got, pg + off, take);
		got += take;
	}
	return 0;
}

/* Reads a NUL-terminated string of at most |max| bytes. *budget is the
 * remaining byte budget of the whole argv or envp. */
int sbx_rmem_string(struct sbx_rmem *m, uint64_t addr, size_t max, size_t *budget, char **out)
{
	struct wd_sb sb = {0};
	for (;;) {
		const char *pg = past_top(addr, sb.len + 1) ? NULL : rmem_page(m, addr + sb.len);
		if (!pg) {
			wd_sb_free(&sb);
			return -EFAULT;
		}
		size_t off = (addr + sb.len) & (SBX_PAGE_SIZE - 1), room = SBX_PAGE_SIZE - off;
		const char *nul = memchr(pg + off, '\0', room);
		size_t take = nul ? (size_t)(nul - (pg + off)) : room;
		if (sb.len + take + 1 > max || sb.len + take + 1 > *budget) {
			wd_sb_free(&sb);
			return -E2BIG;
		}
		wd_sb_add(&sb, pg + off, take);
		if (nul)
			break;
	}
	*budget -= sb.len + 1;
	*out = wd_sb_steal(&sb);
	return 0;
}

/* Puts in |want| (room for |max|) the addresses of the first strings of
 * the vector at |addr| whose pointers are in the cache already, for
 * sbx_rmem_prefetch(): argv, envp and their strings usually sit in a few pages.
 * Returns how many. */
size_t sbx_rmem_string_pages(const struct sbx_rmem *m, uint64_t addr, uint64_t *want, size_t max)
{
	size_t n = 0;
	for (uint64_t a = addr; a && n < max && !past_top(a, sizeof(uint64_t));
	     a += sizeof(uint64_t)) {
		const char *pg = rmem_cached(m, a);
		uint64_t ptr;
		if (!pg || (a & (SBX_PAGE_SIZE - 1)) + sizeof(ptr) > SBX_PAGE_SIZE)
			break;
		memcpy(&ptr, pg + (a & (SBX_PAGE_SIZE - 1)), sizeof(ptr));
		if (ptr == 0)
			break;
		want[n++] = ptr;
	}
	return n;
}

/* Reads a NULL-terminated array of string pointers (argv or envp) within
 * |budget| bytes in all (strings plus pointers, as the kernel counts). */
int sbx_rmem_vector(struct sbx_rmem *m, uint64_t addr, size_t budget, char ***out, size_t *bytes)
{
	size_t cap = 16, n = 0, start = budget;
	char **v = wd_calloc(cap, sizeof(char *));
	*out = NULL;
	if (addr == 0) { /* a NULL argv or envp is an empty one */
		*out = v;
		*bytes = 0;
		return 0;
	}
	uint64_t want[SBX_PREFETCH_MAX * 4] = {0};
	sbx_rmem_prefetch(m, want, sbx_rmem_string_pages(m, addr, want, WD_ARRAY_SIZE(want)));
	for (;;) {
		uint64_t p;
		if (n >= SBX_VECTOR_MAX_PTRS || budget < sizeof(p)) {
			wd_strv_free(v);
			return -E2BIG;
		}
		if (past_top(addr, (n + 1) * sizeof(p)) ||
		    sbx_rmem_read(m, addr + n * sizeof(p), &p, sizeof(p)) < 0) {
			wd_strv_free(v);
			return -EFAULT;
		}
		budget -= sizeof(p);
		if (p == 0)
			break;
		if (n + 2 > cap) {
			cap *= 2;
			v = wd_realloc(v, cap * sizeof(char *));
		}
		v[n + 1] = NULL;
		int rc = sbx_rmem_string(m, p, budget, &budget, &v[n]);
		if (rc < 0) {
			v[n] = NULL;
			wd_strv_free(v);
			return rc;
		}
		n++;
		v[n] = NULL;
	}
	*out = v;
	*bytes = start - budget;
	return 0;
}

int sbx_decode_vector(sbx_page_reader read, void *ctx, uint64_t addr, size_t budget, char ***out,
		      size_t *bytes)
{
	struct sbx_rmem *m = wd_malloc(sizeof(*m));
	sbx_rmem_init(m, read, ctx);
	int rc = sbx_rmem_vector(m, addr, budget, out, bytes);
	free(m);
	return rc;
}
