/*
 * shell.c: the conservative splitter for the scripts of sh -c.
 *
 * It understands exactly one shape: plain words (with quotes and backslash
 * escapes) joined by &&, ||, ; and |. Anything else (a redirect, $(..),
 * backticks, $VAR, a glob, a heredoc, a subshell, a background &, a
 * keyword, an assignment) marks the script not plain, which keeps it off the
 * fast path. The tokens are still produced as well as possible, with the
 * bodies of substitutions and heredocs set aside, so that hard deny can look
 * inside a script that is not plain. It never executes or expands anything.
 *
 * See docs/design.md, section "Classification".
 */
#include "policy_int.h"

#include <ctype.h>
#include <string.h>

struct lexer {
	const char *s;
	size_t i;
	struct pol_sh_script *out;
	size_t cap;
	char *pending_heredoc; /* delimiter waiting for the next newline */
	bool heredoc_strip_tabs;
	bool notplain;
};

static void push_tok(struct lexer *lx, enum pol_sh_tok_kind kind, char *text, unsigned flags)
{
	struct pol_sh_script *o = lx->out;
	if (o->ntoks == lx->cap) {
		lx->cap = lx->cap ? lx->cap * 2 : 16;
		o->toks = wd_realloc(o->toks, lx->cap * sizeof(*o->toks));
	}
	o->toks[o->ntoks++] = (struct pol_sh_tok){.kind = kind, .text = text, .flags = flags};
}

static void push_nested(struct pol_sh_script *o, const char *s, size_t n)
{
	o->nested = wd_realloc(o->nested, (o->nnested + 1) * sizeof(char *));
	o->nested[o->nnested++] = wd_strndup(s, n);
}

static void push_heredoc(struct pol_sh_script *o, const char *s, size_t n)
{
	o->heredocs = wd_realloc(o->heredocs, (o->nheredocs + 1) * sizeof(char *));
	o->heredocs[o->nheredocs++] = wd_strndup(s, n);
}

/* Index just past the ')' closing the '(' at |i|, skipping quotes; 0 when
 * there is none. */
static size_t skip_parens(const char *s, size_t i)
{
	int depth = 0;
	for (; s[i]; i++) {
		char c = s[i];
		if (c == '\\' && s[i + 1]) {
			i++;
		} else if (c == '\'') {
			const char *q = strchr(s + i + 1, '\'');
			if (!q)
				return 0;
			i = (size_t)(q - s);
		} else if (c == '"') {
			i++;
			while (s[i] && s[i] != '"') {
				if (s[i] == '\\' && s[i + 1])
					i++;
				i++;
			}
			if (!s[i])
				return 0;
		} else if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (--depth == 0)
				return i + 1;
		}
	}
	return 0;
}

/* $... at lx->i (inside or outside double quotes): appends its raw text to
 * |w| and sets the flags; bodies of command substitutions become nested. */
static void lex_dollar(struct lexer *lx, struct wd_sb *w, unsigned *flags)
{
	const char *s = lx->s;
	size_t i = lx->i;
	size_t start = i;
	if (s[i + 1] == '(') {
		size_t end = skip_parens(s, i + 1);
		if (!end) {
			lx->out->unterminated = true;
			end = strlen(s);
		} else {
			push_nested(lx->out, s + i + 2, end - i - 3);
		}
		i = end;
	} else if (s[i + 1] == '{') {
		const char *q = strchr(s + i, '}');
		if (!q) {
			lx->out->unterminated = true;
			i = strlen(s);
		} else {
			i = (size_t)(q - s) + 1;
		}
	} else if (s[i + 1] == '\'' || s[i + 1] == '"') {
		/* $'..' and $"..": ANSI-C and locale quoting. */
		char qc = s[i + 1];
		i += 2;
		while (s[i] && s[i] != qc) {
			if (s[i] == '\\' && s[i + 1])
				i++;
			i++;
		}
		if (!s[i])
			lx->out->unterminated = true;
		else
			i++;
	} else if (isalpha((unsigned char)s[i + 1]) || s[i + 1] == '_') {
		i++;
		while (isalnum((unsigned char)s[i]) || s[i] == '_')
			i++;
	} else if (s[i + 1] && strchr("0123456789@*#?$!-", s[i + 1])) {
		i += 2;
	} else {
		/* A lone '$' is literal. */
		wd_sb_putc(w, '$');
		lx->i = i + 1;
		return;
	}
	wd_sb_add(w, s + start, i - start);
	*flags |= SHW_EXPANSION;
	lx->i = i;
}

static void lex_backtick(struct lexer *lx, struct wd_sb *w, unsigned *flags)
{
	const char *s = lx->s;
	size_t i = lx->i + 1;
	while (s[i] && s[i] != '`') {
		if (s[i] == '\\' && s[i + 1])
			i++;
		i++;
	}
	if (!s[i]) {
		lx->out->unterminated = true;
		push_nested(lx->out, s + lx->i + 1, i - lx->i - 1);
	} else {
		push_nested(lx->out, s + lx->i + 1, i - lx->i - 1);
		i++;
	}
	wd_sb_add(w, s + lx->i, i - lx->i);
	*flags |= SHW_EXPANSION;
	lx->i = i;
}

static bool is_word_end(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\n' || strchr(";&|()<>", c);
}

static void lex_dquote(struct lexer *lx, struct wd_sb *w, unsigned *flags)
{
	const char *s = lx->s;
	lx->i++;
	while (s[lx->i] && s[lx->i] != '"') {
		char c = s[lx->i];
		if (c == '\\' && s[lx->i + 1]) {
			char n = s[lx->i + 1];
			if (n == '\n') {
				lx->i += 2;
				continue;
			}
			if (!strchr("$`\"\\", n))
				wd_sb_putc(w, '\\');
			wd_sb_putc(w, n);
			lx->i += 2;
		} else if (c == '$') {
			lex_dollar(lx, w, flags);
		} else if (c == '`') {
			lex_backtick(lx, w, flags);
		} else {
			wd_sb_putc(w, c);
			lx->i++;
		}
	}
	if (!s[lx->i])
		lx->out->unterminated = true;
	else
		lx->i++;
}

/* One word starting at lx->i. */
static void lex_word(struct lexer *lx)
{
	const char *s = lx->s;
	struct wd_sb w = {0};
	unsigned flags = 0;
	bool at_start = true;
	if (s[lx->i] == '~')
		flags |= SHW_TILDE;
	if (s[lx->i] == '#') {
		/* A comment runs to the end of the line. */
		while (s[lx->i] && s[lx->i] != '\n')
			lx->i++;
		lx->notplain = true;
		return;
	}
	while (!is_word_end(s[lx->i])) {
		char c = s[lx->i];
		if (c == '\\') {
			if (s[lx->i + 1] == '\n') {
				lx->i += 2;
				continue;
			}
			if (s[lx->i + 1])
				wd_sb_putc(&w, s[lx->i + 1]);
			lx->i += s[lx->i + 1] ? 2 : 1;
		} else if (c == '\'') {
			const char *q = strchr(s + lx->i + 1, '\'');
			size_t end = q ? (size_t)(q - s) : strlen(s);
			wd_sb_add(&w, s + lx->i + 1, end - lx->i - 1);
			if (!q)
				lx->out->unterminated = true;
			lx->i = q ? end + 1 : end;
		} else if (c == '"') {
			lex_dquote(lx, &w, &flags);
		} else if (c == '$') {
			lex_dollar(lx, &w, &flags);
		} else if (c == '`') {
			lex_backtick(lx, &w, &flags);
		} else {
			if (strchr("*?[", c))
				flags |= SHW_GLOB;
			if (strchr("{}", c) || (at_start && c == '!'))
				flags |= SHW_SPECIAL;
			wd_sb_putc(&w, c);
			lx->i++;
		}
		at_start = false;
	}
	push_tok(lx, SH_WORD, wd_sb_steal(&w), flags);
}

/* Reads the body of a pending heredoc after a newline at lx->i. */
static void lex_heredoc_body(struct lexer *lx)
{
	const char *s = lx->s;
	size_t start = lx->i;
	size_t dl = strlen(lx->pending_heredoc);
	while (s[lx->i]) {
		size_t ls = lx->i;
		while (lx->heredoc_strip_tabs && s[ls] == '\t')
			ls++;
		const char *nl = strchr(s + lx->i, '\n');
		size_t le = nl ? (size_t)(nl - s) : strlen(s);
		if (le - ls == dl && memcmp(s + ls, lx->pending_heredoc, dl) == 0) {
			push_heredoc(lx->out, s + start, lx->i - start);
			lx->i = nl ? le + 1 : le;
			goto done;
		}
		lx->i = nl ? le + 1 : le;
	}
	lx->out->unterminated = true;
	push_heredoc(lx->out, s + start, lx->i - start);
done:
	free(lx->pending_heredoc);
	lx->pending_heredoc = NULL;
}

/* A redirect operator at lx->i (an fd number already consumed, if any). */
static void lex_redirect(struct lexer *lx, const char *fd)
{
	const char *s = lx->s;
	static const char *const ops[] = {"&>>", "<<<", "<<-", "&>", ">>", ">|",
					  ">&",	 "<<",	"<>",  "<&", ">",  "<"};
	const char *op = "<";
	for (size_t k = 0; k < WD_ARRAY_SIZE(ops); k++) {
		if (strncmp(s + lx->i, ops[k], strlen(ops[k])) == 0) {
			op = ops[k];
			break;
		}
	}
	lx->i += strlen(op);
	push_tok(lx, SH_REDIR, wd_asprintf("%s%s", fd ? fd : "", op), 0);
	struct pol_sh_tok *t = &lx->out->toks[lx->out->ntoks - 1];
	t->write_redir = op[0] == '>' || op[0] == '&' || strcmp(op, "<>") == 0;
	t->heredoc = strcmp(op, "<<") == 0 || strcmp(op, "<<-") == 0;
	if (!t->heredoc)
		return;
	bool strip = strcmp(op, "<<-") == 0;
	while (s[lx->i] == ' ' || s[lx->i] == '\t')
		lx->i++;
	size_t before = lx->out->ntoks;
	if (!is_word_end(s[lx->i]))
		lex_word(lx);
	if (lx->out->ntoks > before) {
		free(lx->pending_heredoc);
		lx->pending_heredoc = wd_strdup(lx->out->toks[lx->out->ntoks - 1].text);
		lx->heredoc_strip_tabs = strip;
	}
}

static bool lex_operator(struct lexer *lx)
{
	const char *s = lx->s;
	char c = s[lx->i], n = s[lx->i + 1];
	if (c == '&' && n == '&') {
		push_tok(lx, SH_OP_AND, wd_strdup("&&"), 0);
		lx->i += 2;
	} else if (c == '|' && n == '|') {
		push_tok(lx, SH_OP_OR, wd_strdup("||"), 0);
		lx->i += 2;
	} else if (c == '|' && n == '&') {
		push_tok(lx, SH_OP_OTHER, wd_strdup("|&"), 0);
		lx->i += 2;
	} else if (c == '|') {
		push_tok(lx, SH_OP_PIPE, wd_strdup("|"), 0);
		lx->i++;
	} else if (c == ';' && n == ';') {
		push_tok(lx, SH_OP_OTHER, wd_strdup(";;"), 0);
		lx->i += 2;
	} else if (c == ';') {
		push_tok(lx, SH_OP_SEMI, wd_strdup(";"), 0);
		lx->i++;
	} else if (c == '&' && n == '>') {
		lex_redirect(lx, NULL);
	} else if (c == '&') {
		push_tok(lx, SH_OP_OTHER, wd_strdup("&"), 0);
		lx->i++;
	} else if ((c == '<' || c == '>') && n == '(') {
		/* Process substitution: a word whose body is a nested script. */
		size_t end = skip_parens(s, lx->i + 1);
		if (!end) {
			lx->out->unterminated = true;
			end = strlen(s);
		} else {
			push_nested(lx->out, s + lx->i + 2, end - lx->i - 3);
		}
		push_tok(lx, SH_WORD, wd_strndup(s + lx->i, end - lx->i), SHW_EXPANSION);
		lx->i = end;
	} else if (c == '<' || c == '>') {
		lex_redirect(lx, NULL);
	} else if (c == '(' || c == ')') {
		push_tok(lx, SH_OP_OTHER, wd_strndup(&c, 1), 0);
		lx->i++;
	} else {
		return false;
	}
	return true;
}

static const char *const keywords[] = {
	"if", "then", "else", "elif", "fi", "for",	"while",  "until",
	"do", "done", "case", "esac", "in", "function", "select", "time",
	"[[", "]]",   "!",    "{",    "}",  "coproc",
};

/* Marks keywords and assignments in command position. */
static void mark_command_words(struct pol_sh_script *o)
{
	bool cmdpos = true;
	for (size_t i = 0; i < o->ntoks; i++) {
		struct pol_sh_tok *t = &o->toks[i];
		if (t->kind != SH_WORD) {
			cmdpos = t->kind != SH_REDIR;
			if (t->kind == SH_REDIR)
				i++; /* its target */
			continue;
		}
		if (!cmdpos)
			continue;
		for (size_t k = 0; k < WD_ARRAY_SIZE(keywords); k++)
			if (strcmp(t->text, keywords[k]) == 0)
				t->flags |= SHW_SPECIAL;
		const char *eq = strchr(t->text, '=');
		bool assign = eq && eq != t->text;
		for (const char *p = t->text; assign && p < eq; p++)
			if (!(isalnum((unsigned char)*p) || *p == '_') ||
			    (p == t->text && isdigit((unsigned char)*p)))
				assign = false;
		if (assign) {
			t->flags |= SHW_ASSIGN;
			continue; /* the next word is still in command position */
		}
		cmdpos = false;
	}
}

static bool compute_plain(const struct pol_sh_script *o)
{
	if (o->unterminated || o->nnested)
		return false;
	bool empty_segment = true;
	for (size_t i = 0; i < o->ntoks; i++) {
		const struct pol_sh_tok *t = &o->toks[i];
		switch (t->kind) {
		case SH_WORD:
			if (t->flags)
				return false;
			empty_segment = false;
			break;
		case SH_OP_AND:
		case SH_OP_OR:
		case SH_OP_PIPE:
			if (empty_segment)
				return false;
			empty_segment = true;
			break;
		case SH_OP_SEMI:
			empty_segment = true;
			break;
		case SH_OP_OTHER:
		case SH_REDIR:
			return false;
		}
	}
	/* "ls &&" at the end leaves a command missing. */
	if (o->ntoks && empty_segment) {
		enum pol_sh_tok_kind k = o->toks[o->ntoks - 1].kind;
		if (k == SH_OP_AND || k == SH_OP_OR || k == SH_OP_PIPE)
			return false;
	}
	return true;
}

void pol_sh_split(const char *s, struct pol_sh_script *out)
{
	memset(out, 0, sizeof(*out));
	struct lexer lx = {.s = s ? s : "", .out = out};
	while (lx.s[lx.i]) {
		char c = lx.s[lx.i];
		if (c == ' ' || c == '\t' || c == '\r') {
			lx.i++;
		} else if (c == '\n') {
			lx.i++;
			push_tok(&lx, SH_OP_SEMI, wd_strdup("\n"), 0);
			if (lx.pending_heredoc)
				lex_heredoc_body(&lx);
		} else if (c == '\\' && lx.s[lx.i + 1] == '\n') {
			lx.i += 2;
		} else if (isdigit((unsigned char)c)) {
			/* "2>file": an fd number glued to a redirect. */
			size_t j = lx.i;
			while (isdigit((unsigned char)lx.s[j]))
				j++;
			if ((lx.s[j] == '<' || lx.s[j] == '>') && lx.s[j + 1] != '(') {
				char *fd = wd_strndup(lx.s + lx.i, j - lx.i);
				lx.i = j;
				lex_redirect(&lx, fd);
				free(fd);
			} else {
				lex_word(&lx);
			}
		} else if (!lex_operator(&lx)) {
			lex_word(&lx);
		}
	}
	if (lx.pending_heredoc) {
		out->unterminated = true;
		free(lx.pending_heredoc);
	}
	mark_command_words(out);
	out->plain = !lx.notplain && compute_plain(out);
}

void pol_sh_script_free(struct pol_sh_script *sc)
{
	for (size_t i = 0; i < sc->ntoks; i++)
		free(sc->toks[i].text);
	free(sc->toks);
	for (size_t i = 0; i < sc->nnested; i++)
		free(sc->nested[i]);
	free(sc->nested);
	for (size_t i = 0; i < sc->nheredocs; i++)
		free(sc->heredocs[i]);
	free(sc->heredocs);
	memset(sc, 0, sizeof(*sc));
}
