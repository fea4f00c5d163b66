/*
 * redact.c: which names hold secrets, and the redacted copies of arguments
 * and command lines that everything a request shows is made of.
 *
 * It errs towards hiding: a redacted harmless value costs a judge a
 * detail, a leaked token costs the user the token. A leaf of policy/. See
 * docs/design.md, section "Redaction".
 */
#include "policy_int.h"

#include <ctype.h>
#include <string.h>

static const char *const secret_words[] = {
	"password",    "passwd",	"passphrase", "secret",	   "token",	    "apikey",
	"api_key",     "api-key",	"access_key", "accesskey", "private_key",   "privatekey",
	"private-key", "authorization", "credential", "cookie",	   "client_secret",
};

bool pol_name_is_secret(const char *name, size_t len)
{
	while (len && *name == '-') {
		name++;
		len--;
	}
	char low[96];
	if (len == 0 || len >= sizeof(low))
		return false;
	for (size_t i = 0; i < len; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[len] = '\0';
	for (size_t i = 0; i < WD_ARRAY_SIZE(secret_words); i++)
		if (strstr(low, secret_words[i]))
			return true;
	static const char *const exact[] = {"key", "pass", "pw", "auth"};
	for (size_t i = 0; i < WD_ARRAY_SIZE(exact); i++)
		if (strcmp(low, exact[i]) == 0)
			return true;
	return wd_str_has_suffix(low, "_key") || wd_str_has_suffix(low, "-key");
}

/* ---- redaction -------------------------------------------------------------- */

static bool is_name_char(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.';
}

static bool is_token_char(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '+' || c == '/';
}

static const char *const token_prefixes[] = {
	"ghp_",	    "gho_",  "ghs_",  "ghu_",  "github_pat_", "glpat-", "sk-",	"sk_live_",
	"rk_live_", "xoxb-", "xoxp-", "xoxa-", "AKIA",	      "ASIA",	"AIza", "npm_",
};

/* A long run mixing upper case, lower case and digits, or a run with a
 * well-known token prefix, looks like a credential. */
static bool looks_like_token(const char *s, size_t n)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(token_prefixes); i++) {
		size_t pl = strlen(token_prefixes[i]);
		if (n >= pl + 12 && memcmp(s, token_prefixes[i], pl) == 0)
			return true;
	}
	if (n < 24)
		return false;
	bool up = false, lo = false, dig = false;
	size_t slashes = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		up |= isupper(c) != 0;
		lo |= islower(c) != 0;
		dig |= isdigit(c) != 0;
		slashes += c == '/';
	}
	return up && lo && dig && slashes <= 2;
}

/* Skips a value that ends at white space, a quote or a separator. */
static size_t value_len(const char *s)
{
	size_t n = 0;
	while (s[n] && !isspace((unsigned char)s[n]) && !strchr("&;,'\"`", s[n]))
		n++;
	return n;
}

/* "://user:pw@host": returns the length of the userinfo with its '@', or 0. */
static size_t url_userinfo(const char *s)
{
	size_t at = 0;
	for (size_t i = 0; s[i] && !isspace((unsigned char)s[i]) && !strchr("/'\"?#", s[i]); i++)
		if (s[i] == '@')
			at = i + 1;
	return at;
}

/* NAME=value, NAME: value (a header) or "NAME": "value" at |s|, where NAME
 * is secret: appends the redacted form and returns the bytes consumed, or 0. */
static size_t redact_named(struct wd_sb *sb, const char *s, size_t name_len, bool quoted_name)
{
	const char *p = s + name_len + (quoted_name ? 1 : 0);
	/* Most words are followed by neither: the name is looked at only when
	 * one of them could make it a NAME=value or a header. */
	if (*p != '=' && *p != ':')
		return 0;
	if (!pol_name_is_secret(quoted_name ? s + 1 : s, quoted_name ? name_len - 1 : name_len))
		return 0;
	if (*p == '=') {
		wd_sb_add(sb, s, (size_t)(p - s) + 1);
		wd_sb_puts(sb, POL_REDACTED);
		p++;
		return (size_t)(p - s) + value_len(p);
	}
	if (*p != ':')
		return 0;
	const char *v = p + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	if (quoted_name) {
		if (*v != '"')
			return 0;
		const char *e = v + 1;
		while (*e && *e != '"') {
			if (*e == '\\' && e[1])
				e++;
			e++;
		}
		wd_sb_add(sb, s, (size_t)(v - s));
		wd_sb_puts(sb, "\"" POL_REDACTED "\"");
		return (size_t)(e - s) + (*e ? 1 : 0);
	}
	if (v == p + 1 || !*v)
		return 0; /* "name:value" without a space is not a header */
	/* A header value runs to the end of the line or a closing quote. */
	const char *e = v;
	while (*e && *e != '\n' && *e != '\'' && *e != '"')
		e++;
	wd_sb_add(sb, s, (size_t)(v - s));
	wd_sb_puts(sb, POL_REDACTED);
	return (size_t)(e - s);
}

static void redact_into(struct wd_sb *sb, const char *s)
{
	size_t i = 0;
	while (s[i]) {
		if (s[i] == ':' && s[i + 1] == '/' && s[i + 2] == '/') {
			size_t u = url_userinfo(s + i + 3);
			wd_sb_puts(sb, "://");
			i += 3;
			if (u) {
				wd_sb_puts(sb, POL_REDACTED "@");
				i += u;
			}
			continue;
		}
		if (s[i] == '"' && is_name_char((unsigned char)s[i + 1])) {
			size_t n = 1;
			while (is_name_char((unsigned char)s[i + n]))
				n++;
			size_t used = s[i + n] == '"' ? redact_named(sb, s + i, n, true) : 0;
			if (used) {
				i += used;
				continue;
			}
			wd_sb_putc(sb, '"');
			i++;
			continue;
		}
		if (is_name_char((unsigned char)s[i])) {
			size_t n = 0;
			while (is_name_char((unsigned char)s[i + n]))
				n++;
			size_t used = redact_named(sb, s + i, n, false);
			if (used) {
				i += used;
				continue;
			}
		}
		if (is_token_char((unsigned char)s[i])) {
			size_t n = 0;
			while (is_token_char((unsigned char)s[i + n]))
				n++;
			if (looks_like_token(s + i, n))
				wd_sb_puts(sb, POL_REDACTED);
			else
				wd_sb_add(sb, s + i, n);
			i += n;
			continue;
		}
		wd_sb_putc(sb, s[i]);
		i++;
	}
}

char *pol_redact_text(const char *s)
{
	struct wd_sb sb = {0};
	redact_into(&sb, s ? s : "");
	return wd_sb_steal(&sb);
}

char *pol_redact_arg(const char *prev, const char *arg)
{
	if (prev && prev[0] == '-' && !strchr(prev, '=') && pol_name_is_secret(prev, strlen(prev)))
		return wd_strdup(POL_REDACTED);
	if (prev && (strcmp(prev, "-u") == 0 || strcmp(prev, "--user") == 0 ||
		     strcmp(prev, "--proxy-user") == 0)) {
		const char *colon = strchr(arg, ':');
		if (colon)
			return wd_asprintf("%.*s:" POL_REDACTED, (int)(colon - arg), arg);
	}
	return pol_redact_text(arg);
}
