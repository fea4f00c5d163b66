/*
 * wrap.c: text wrapped to a terminal's width for the desk's table: breaks
 * between words; a word longer than a whole line is cut, and every cut
 * ends its line with "…", so that no cut goes unseen.
 */
#include "sup.h"

#include <string.h>
#include <sys/ioctl.h>

/* Columns |s|'s first |n| bytes take (UTF-8: one per character). */
static size_t cols(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

/* How many bytes of |s| (|n| bytes) fit in |c| columns, whole characters. */
static size_t bytes_for(const char *s, size_t n, size_t c)
{
	size_t i = 0, used = 0;
	while (i < n) {
		size_t k = 1;
		while (i + k < n && ((unsigned char)s[i + k] & 0xc0) == 0x80)
			k++;
		if (used + 1 > c)
			break;
		used++;
		i += k;
	}
	return i;
}

void sup_wrap(FILE *out, const char *text, int indent, int width)
{
	size_t w = width < 10 ? 10 : (size_t)width;
	size_t cur = 0; /* columns used on the current line */
	const char *p = text;
	for (;;) {
		const char *sp = strchr(p, ' ');
		size_t n = sp ? (size_t)(sp - p) : strlen(p);
		size_t c = cols(p, n);
		if (cur > 0 && cur + 1 + c <= w) {
			fputc(' ', out);
			fwrite(p, 1, n, out);
			cur += 1 + c;
		} else {
			if (cur > 0)
				fprintf(out, "\n%*s", indent, "");
			/* Longer than a line: cut, and say so. */
			while (c > w) {
				size_t b = bytes_for(p, n, w - 1);
				fwrite(p, 1, b, out);
				fprintf(out, "\xe2\x80\xa6\n%*s", indent, "");
				p += b;
				n -= b;
				c = cols(p, n);
			}
			fwrite(p, 1, n, out);
			cur = c;
		}
		if (!sp)
			break;
		p = sp + 1;
	}
	fputc('\n', out);
}

int sup_term_width(int fd)
{
	struct winsize ws;
	if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *c = getenv("COLUMNS");
	int n = c ? atoi(c) : 0;
	return n > 0 ? n : 80;
}
