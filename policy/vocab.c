/*
 * vocab.c: the words every classifier shares: raising a result, a
 * program's name and identity, the shells, the multi-call programs.
 *
 * A leaf of policy/: it needs no other file of the module. See
 * docs/design.md, section "Classification".
 */
#include "policy_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void pol_cls_raise(struct pol_cls_result *r, enum pol_class cls, const char *matched,
		   const char *fmt, ...)
{
	if (cls <= r->cls && !(cls == POL_CLASS_READ_ONLY && !r->reason[0]))
		return;
	r->cls = cls;
	va_list ap;
	va_start(ap, fmt);
	pol_reason_vset(r->reason, sizeof(r->reason), r->matched, sizeof(r->matched), matched, fmt,
			ap);
	va_end(ap);
}

void pol_reason_vset(char *reason, size_t rn, char *matched, size_t mn, const char *m,
		     const char *fmt, va_list ap)
{
	vsnprintf(reason, rn, fmt, ap);
	snprintf(matched, mn, "%s", m ? m : "");
}

const char *pol_cls_prog_name(const char *arg0)
{
	const char *slash = strrchr(arg0, '/');
	const char *n = slash ? slash + 1 : arg0;
	while (*n == '\\')
		n++;
	return n;
}

const char *pol_cls_identity(const char *path, const char *arg0, char *buf, size_t n)
{
	const char *a = pol_cls_prog_name(arg0);
	const char *p = path ? pol_cls_prog_name(path) : a;
	size_t al = strlen(a);
	/* python3 -> python3.11, gcc -> gcc-12: the same program. */
	bool same = strcmp(a, p) == 0;
	if (!same && al && strncmp(a, p, al) == 0) {
		same = true;
		for (const char *q = p + al; *q; q++)
			if (!strchr("0123456789.-", *q))
				same = false;
	}
	snprintf(buf, n, "%s", same ? a : p);
	return buf;
}

static const char *const shells[] = {"sh",  "bash", "dash", "zsh",   "ksh",  "mksh", "fish",
				     "ash", "yash", "posh", "rbash", "tcsh", "csh"};

bool pol_cls_is_shell(const char *name)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(shells); i++)
		if (strcmp(name, shells[i]) == 0)
			return true;
	return false;
}

bool pol_cls_in_list(const char *const *list, const char *s, size_t n)
{
	for (size_t i = 0; list[i]; i++)
		if (strlen(list[i]) == n && strncmp(list[i], s, n) == 0)
			return true;
	return false;
}

/* ---- the names a program answers to ------------------------------------------- */

static const char *const systemctl_names[] = {"halt",	  "poweroff", "reboot",
					      "shutdown", "telinit",  "runlevel"};

const char *pol_cls_multicall_applet(const char *prog, const char *arg0)
{
	const char *called = pol_cls_prog_name(arg0);
	if (!called[0] || strcmp(called, prog) == 0)
		return NULL;
	/* git runs git-<cmd> as "git <cmd>" whatever file it was started as. */
	if (strcmp(prog, "git") == 0)
		return strncmp(called, "git-", 4) == 0 && called[4] ? called : NULL;
	/* busybox, toybox and a single-binary coreutils are the applet argv[0]
	 * names (or say it is not one of theirs). */
	if (strcmp(prog, "busybox") == 0 || strcmp(prog, "toybox") == 0 ||
	    strcmp(prog, "coreutils") == 0)
		return called;
	/* systemctl plays its SysV names, systemd (not as pid 1) plays init. */
	if (strcmp(prog, "systemctl") == 0) {
		for (size_t i = 0; i < WD_ARRAY_SIZE(systemctl_names); i++)
			if (strcmp(called, systemctl_names[i]) == 0)
				return called;
		return NULL;
	}
	if (strcmp(prog, "systemd") == 0)
		return strcmp(called, "init") == 0 ? called : NULL;
	return NULL;
}
