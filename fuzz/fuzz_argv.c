/*
 * fuzz_argv: the exec decoder's argv/envp reader and its "#!" parser
 * (sandbox/notify.c), on arbitrary bytes. Every pointer, string, page
 * boundary and address the reader sees is chosen by the process being
 * decided on, and so is every byte of a script's first line.
 *
 * The input builds a made-up address space that the reader reads through
 * its page cache; the answer is then checked against a plain model of the
 * same rules (every byte read on its own, straight from the map, no cache,
 * no pages) and against the invariants the supervisor relies on. The input
 * is also handed whole to the "#!" parser, whose answer is checked against
 * the rules of the kernel's binfmt_script. A broken invariant aborts.
 *
 * Input (bytes past the end read as zero):
 *   0      mode: bits 0-1 where the vector is (0: a page of the map plus an
 *          offset, 1: the raw address, 2: NULL, 3: just under the top of the
 *          address space); bits 2-3 what the unwritten bytes of a mapped
 *          page hold (0: zero, 1: the fill byte, 2: the fill word, 3: the
 *          fill word plus the index of its 8-byte slot); bit 4 a budget
 *          under 1 KiB; bit 5 no budget at all
 *   1-8    the raw address (little-endian); for mode 0, byte 1 is a page
 *          index and bytes 2-3 the offset
 *   9-12   the budget
 *   13-20  the fill word; its first byte is the fill byte
 *   21-36  which of the 128 low pages are mapped (a bitmap)
 *   37     which of the 4 special pages are mapped (a bitmap)
 *   38-    segments: a page index, an offset (2 bytes), a length, then that
 *          many bytes written into the page, which maps it
 * Pages 0-127 are consecutive from 0x10000; then page zero, the top page
 * of user space, and the two last pages of the 64-bit address space.
 */
#include "notify_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
const char *__asan_default_options(void);

/* The decoder allocates a 32 KiB page cache per call: with ASan's default
 * 256 MiB quarantine nearly every run faults in fresh pages, at half the
 * speed. */
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=16";
}

#define HDR	  38
#define NLOW	  128
#define NPAGES	  (NLOW + 4)
#define LOW_BASE  0x10000ULL
#define PAGE_MASK ((uint64_t)SBX_PAGE_SIZE - 1)

static const uint64_t special_base[4] = {
	0x0ULL,
	0x7ffffffff000ULL,
	0xffffffffffffe000ULL,
	0xfffffffffffff000ULL,
};

struct space {
	const unsigned char *in; /* the input */
	size_t size;
	unsigned mode;
	uint64_t fill;
	bool mapped[NPAGES];
	bool built[NPAGES];
	char page[NPAGES][SBX_PAGE_SIZE];
};

static struct space space; /* 540 KiB: not on the stack */

static void check(bool ok, const char *what)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz_argv: invariant broken: %s\n", what);
	abort();
}

static unsigned in_byte(const struct space *sp, size_t i)
{
	return i < sp->size ? sp->in[i] : 0;
}

static uint64_t in_le(const struct space *sp, size_t i, unsigned n)
{
	uint64_t v = 0;
	for (unsigned k = 0; k < n; k++)
		v |= (uint64_t)in_byte(sp, i + k) << (8 * k);
	return v;
}

static uint64_t page_base(unsigned idx)
{
	return idx < NLOW ? LOW_BASE + (uint64_t)idx * SBX_PAGE_SIZE : special_base[idx - NLOW];
}

static int page_index(uint64_t base)
{
	if (base >= LOW_BASE && base < LOW_BASE + (uint64_t)NLOW * SBX_PAGE_SIZE)
		return (int)((base - LOW_BASE) / SBX_PAGE_SIZE);
	for (int i = 0; i < 4; i++)
		if (base == special_base[i])
			return NLOW + i;
	return -1;
}

struct segment {
	unsigned idx; /* the page */
	size_t off;
	const unsigned char *bytes;
	size_t len;
};

/* Reads the segment at *pos and moves past it; false at the end. */
static bool next_segment(const struct space *sp, size_t *pos, struct segment *sg)
{
	size_t i = *pos;
	if (i + 4 > sp->size)
		return false;
	sg->idx = sp->in[i] % NPAGES;
	sg->off = (sp->in[i + 1] | (size_t)sp->in[i + 2] << 8) & PAGE_MASK;
	sg->len = sp->in[i + 3];
	sg->bytes = sp->in + i + 4;
	if (sg->len > sp->size - (i + 4))
		sg->len = sp->size - (i + 4);
	*pos = i + 4 + sg->len;
	if (sg->len > SBX_PAGE_SIZE - sg->off)
		sg->len = SBX_PAGE_SIZE - sg->off;
	return true;
}

static void space_init(struct space *sp, const unsigned char *data, size_t size)
{
	sp->in = data;
	sp->size = size;
	sp->mode = in_byte(sp, 0);
	sp->fill = in_le(sp, 13, 8);
	for (unsigned i = 0; i < NPAGES; i++) {
		unsigned bit = i < NLOW ? in_byte(sp, 21 + i / 8) >> (i % 8)
					: in_byte(sp, 37) >> (i - NLOW);
		sp->mapped[i] = bit & 1;
		sp->built[i] = false;
	}
	struct segment sg;
	for (size_t pos = HDR; next_segment(sp, &pos, &sg);)
		sp->mapped[sg.idx] = true;
}

/* The contents of the page at |base|, built on first use, or NULL. */
static const char *space_page(struct space *sp, uint64_t base)
{
	int idx = page_index(base);
	if (idx < 0 || !sp->mapped[idx])
		return NULL;
	char *pg = sp->page[idx];
	if (sp->built[idx])
		return pg;
	unsigned kind = (sp->mode >> 2) & 3;
	if (kind == 0 || kind == 1) {
		memset(pg, kind ? (int)(sp->fill & 0xff) : 0, SBX_PAGE_SIZE);
	} else {
		for (size_t s = 0; s < SBX_PAGE_SIZE / 8; s++) {
			uint64_t w = sp->fill + (kind == 3 ? s : 0);
			for (unsigned k = 0; k < 8; k++)
				pg[s * 8 + k] = (char)(w >> (8 * k));
		}
	}
	struct segment sg;
	for (size_t pos = HDR; next_segment(sp, &pos, &sg);)
		if (sg.idx == (unsigned)idx)
			memcpy(pg + sg.off, sg.bytes, sg.len);
	sp->built[idx] = true;
	return pg;
}

static int fake_read(void *ctx, uint64_t base, char *page)
{
	check((base & PAGE_MASK) == 0, "the reader was asked for an unaligned page");
	const char *pg = space_page(ctx, base);
	if (!pg)
		return -EFAULT;
	memcpy(page, pg, SBX_PAGE_SIZE);
	return 0;
}

/* The byte at |addr| + |off|, or -1 when that address is past the top of
 * the address space or not mapped. */
static int byte_at(struct space *sp, uint64_t addr, uint64_t off)
{
	if (off > UINT64_MAX - addr)
		return -1;
	const char *pg = space_page(sp, (addr + off) & ~PAGE_MASK);
	return pg ? (unsigned char)pg[(addr + off) & PAGE_MASK] : -1;
}

/*
 * The decoder's rules, written plainly: pointers one by one until NULL, each
 * string byte by byte until its NUL, each costing its bytes against the
 * budget (a string its length plus the NUL, a pointer 8, the NULL included),
 * a byte that cannot be read or would not fit failing the whole vector.
 * With |want| (the decoder's answer, when it succeeded) every string and the
 * terminating NULL are compared as they are met. Returns what the decoder
 * must return, and the bytes it must count.
 */
static int model_vector(struct space *sp, uint64_t addr, size_t budget, char **want, size_t *bytes)
{
	size_t start = budget;
	*bytes = 0;
	if (addr == 0) {
		check(!want || !want[0], "a NULL vector decoded to strings");
		return 0;
	}
	for (size_t n = 0;; n++) {
		if (n >= SBX_VECTOR_MAX_PTRS || budget < 8)
			return -E2BIG;
		uint64_t p = 0;
		for (unsigned k = 0; k < 8; k++) {
			int c = byte_at(sp, addr, n * 8 + k);
			if (c < 0)
				return -EFAULT;
			p |= (uint64_t)c << (8 * k);
		}
		budget -= 8;
		if (p == 0) {
			check(!want || !want[n],
			      "the vector decoded to more strings than it holds");
			break;
		}
		check(!want || want[n], "the vector decoded to fewer strings than it holds");
		for (size_t k = 0;; k++) {
			int c = byte_at(sp, p, k);
			if (c < 0)
				return -EFAULT;
			if (k + (c ? 2 : 1) > budget)
				return -E2BIG;
			/* Stops at the first difference: never reads past
			 * want[n]'s NUL. */
			check(!want || (unsigned char)want[n][k] == c,
			      "a string decoded to other bytes than the process holds");
			if (c == 0) {
				budget -= k + 1;
				break;
			}
		}
	}
	*bytes = start - budget;
	return 0;
}

/* Where the vector is, from the mode's bits 0-1 and bytes 1-8. */
static uint64_t vector_addr(const struct space *sp)
{
	uint64_t raw = in_le(sp, 1, 8);
	switch (sp->mode & 3) {
	case 0:
		return page_base(in_byte(sp, 1) % NPAGES) + (in_le(sp, 2, 2) & PAGE_MASK);
	case 1:
		return raw;
	case 2:
		return 0;
	default:
		return UINT64_MAX - (raw & 0xfff);
	}
}

static size_t vector_budget(const struct space *sp)
{
	size_t budget = (size_t)in_le(sp, 9, 4);
	if (sp->mode & 0x20)
		return SIZE_MAX;
	return sp->mode & 0x10 ? budget % 1024 : budget;
}

/* What the supervisor relies on in a decoded vector, whatever the model
 * says: NUL-terminated strings within the budget, a NULL at the end, and a
 * byte count that is the strings with their NULs plus the pointers. */
static void check_decoded(char **v, uint64_t addr, size_t budget, size_t bytes)
{
	check(v != NULL, "a decode succeeded without a vector");
	size_t n = 0, sum = 0;
	for (; v[n]; n++) {
		size_t l = strnlen(v[n], budget);
		check(l < budget, "a string is longer than the budget");
		sum += l + 1 + sizeof(uint64_t);
	}
	check(n < SBX_VECTOR_MAX_PTRS, "more strings than the pointer cap");
	if (addr)
		sum += sizeof(uint64_t); /* the NULL */
	check(bytes == sum, "the byte count is not the strings plus the pointers");
	check(bytes <= budget, "the byte count is over the budget");
}

static void fuzz_vector(struct space *sp)
{
	uint64_t addr = vector_addr(sp);
	size_t budget = vector_budget(sp);
	char **v = (char **)1;
	size_t bytes = 12345;
	int rc = sbx_decode_vector(fake_read, sp, addr, budget, &v, &bytes);
	check(rc == 0 || rc == -EFAULT || rc == -E2BIG, "an unexpected error");
	if (rc < 0)
		check(v == NULL, "a failed decode left a vector");
	else
		check_decoded(v, addr, budget, bytes);

	size_t mbytes;
	int mrc = model_vector(sp, addr, budget, rc == 0 ? v : NULL, &mbytes);
	check(mrc == rc, "the decoder and the model disagree on the outcome");
	check(rc < 0 || mbytes == bytes, "the decoder and the model disagree on the byte count");
	for (size_t i = 0; rc == 0 && v[i]; i++)
		free(v[i]);
	if (rc == 0)
		free(v);
}

static bool spacetab(char c)
{
	return c == ' ' || c == '\t';
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/*
 * The kernel's rules for a "#!" line, as checks on the parser's answer. It
 * looks at the file's first 256 bytes, NUL-padded (w). The line ends at the
 * first newline; without one, at byte 255, and only if the interpreter's
 * name visibly ends (a space, tab or NUL) by then. Spaces and tabs at the
 * end of the line are dropped. The interpreter is the first word after
 * "#!" and its spaces and tabs; the argument, when a space or tab follows
 * the name, is the rest of the line after them, up to a NUL.
 */
static void check_script(const char *w, const char *interp, const char *arg)
{
	check(w[0] == '#' && w[1] == '!', "a script without #!");
	size_t li = strlen(interp);
	check(li > 0, "an empty interpreter");
	check(strcspn(interp, " \t\n") == li, "an interpreter with a space, tab or newline");
	size_t p = 2;
	while (p < 256 && spacetab(w[p]))
		p++;
	check(p + li <= 255 && memcmp(w + p, interp, li) == 0,
	      "the interpreter is not the first word of the line");
	size_t q = p + li;
	check(spacetab(w[q]) || w[q] == '\0' || w[q] == '\n',
	      "the interpreter's name runs on past what the kernel reads");
	if (arg) {
		size_t la = strlen(arg);
		check(spacetab(w[q]), "an argument not after a space or tab");
		size_t a = q;
		while (a < 256 && spacetab(w[a]))
			a++;
		check(a + la <= 255 && memcmp(w + a, arg, la) == 0,
		      "the argument is not the rest of the line");
		check(!memchr(arg, '\n', la), "an argument holding a newline");
		q = a + la;
		if (la == 0 || spacetab(arg[la - 1]))
			check(w[q] == '\0', "an empty or space-ended argument not ended by a NUL");
		if (w[q] == '\0')
			return;
	} else if (w[q] == '\0') {
		return;
	}
	while (q < 255 && spacetab(w[q]))
		q++;
	check(q == 255 || w[q] == '\n', "text of the line was dropped");
}

/* When the kernel runs the file as a script, the parser must say so. */
static void check_not_script(const char *w)
{
	if (w[0] != '#' || w[1] != '!')
		return;
	size_t s = 2;
	while (s < 256 && spacetab(w[s]))
		s++;
	const char *nl = memchr(w, '\n', 256);
	if (nl) {
		check(s >= (size_t)(nl - w) || w[s] == '\0',
		      "a #! line naming an interpreter was not taken for a script");
		return;
	}
	if (s >= 255 || w[s] == '\0')
		return;
	bool ends = false;
	for (size_t i = s; i < 256; i++)
		ends = ends || spacetab(w[i]) || w[i] == '\0';
	check(!ends, "a #! line naming an interpreter was not taken for a script");
}

static void fuzz_shebang(const unsigned char *data, size_t size)
{
	char *interp = (char *)1, *arg = (char *)1;
	bool ok = sbx_parse_shebang((const char *)data, size, &interp, &arg);
	/* The kernel sees 256 bytes, padded with NULs: so must the parser. */
	char w[256] = {0};
	memcpy(w, data, size < sizeof(w) ? size : sizeof(w));
	char *interp2, *arg2;
	bool ok2 = sbx_parse_shebang(w, sizeof(w), &interp2, &arg2);
	check(ok == ok2 && same(interp, interp2) && same(arg, arg2),
	      "the parse depends on bytes past 256 or on NUL padding");
	free(interp2);
	free(arg2);
	if (ok) {
		check(interp != NULL, "a script without an interpreter");
		check_script(w, interp, arg);
	} else {
		check(!interp && !arg, "not a script, yet an interpreter or argument");
		check_not_script(w);
	}
	free(interp);
	free(arg);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	space_init(&space, data, size);
	fuzz_vector(&space);
	fuzz_shebang(data, size);
	return 0;
}
