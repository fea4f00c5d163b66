/*
 * creds.c: a caller's credentials, read from /proc/PID/status, and taking
 * them on for the calling thread.
 */
#include "ident_int.h"

#include "common.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int parse_ids(const char *text, const char *key, unsigned long *v, size_t max, size_t *n)
{
	const char *s = strstr(text, key);
	*n = 0;
	if (!s)
		return -EINVAL;
	s += strlen(key);
	while (*s && *s != '\n' && *n < max) {
		char *end;
		unsigned long x = strtoul(s, &end, 10);
		if (end == s)
			break;
		v[(*n)++] = x;
		s = end;
	}
	return 0;
}

int sbx_creds_of(pid_t pid, struct sbx_creds *c)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	char *text = NULL;
	int rc = wd_read_proc(p, 1 << 16, &text, NULL);
	if (rc < 0)
		return rc;
	unsigned long ids[256];
	size_t n;
	memset(c, 0, sizeof(*c));
	rc = parse_ids(text, "\nUid:", ids, 4, &n);
	if (rc == 0 && n == 4)
		c->fsuid = (uid_t)ids[3];
	else
		rc = -EINVAL;
	if (rc == 0 && parse_ids(text, "\nGid:", ids, 4, &n) == 0 && n == 4)
		c->fsgid = (gid_t)ids[3];
	else
		rc = -EINVAL;
	if (rc == 0 && parse_ids(text, "\nGroups:", ids, 256, &n) == 0) {
		c->ngroups = n;
		for (size_t i = 0; i < n; i++)
			c->groups[i] = (gid_t)ids[i];
	}
	const char *ce = strstr(text, "\nCapEff:");
	if (rc == 0 && ce)
		c->capeff = strtoull(ce + 8, NULL, 16);
	else
		rc = -EINVAL;
	free(text);
	return rc;
}

static int own_creds(struct sbx_creds *c, uint32_t eff[2])
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	eff[0] = d[0].effective;
	eff[1] = d[1].effective;
	c->capeff = (uint64_t)d[1].effective << 32 | d[0].effective;
	/* setfsuid(-1) changes nothing and returns the current one. */
	c->fsuid = (uid_t)syscall(SYS_setfsuid, -1);
	c->fsgid = (gid_t)syscall(SYS_setfsgid, -1);
	int n = (int)syscall(SYS_getgroups, (int)WD_ARRAY_SIZE(c->groups), c->groups);
	if (n < 0)
		return -errno;
	c->ngroups = (size_t)n;
	return 0;
}

static bool same_groups(const struct sbx_creds *a, const struct sbx_creds *b)
{
	return a->ngroups == b->ngroups &&
	       memcmp(a->groups, b->groups, a->ngroups * sizeof(gid_t)) == 0;
}

static int set_caps(uint32_t lo, uint32_t hi)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	d[0].effective = lo;
	d[1].effective = hi;
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/*
 * Only this thread changes: fsuid, fsgid and groups by the raw system calls
 * (the C library's setgroups would change every thread of the supervisor),
 * and the effective capability set, which is per thread too. The other
 * threads (the view's workers) keep theirs. The permitted set stays, so
 * sbx_creds_leave() can always raise the effective set back.
 */
int sbx_creds_enter(const struct sbx_creds *c, struct sbx_creds_saved *s)
{
	memset(s, 0, sizeof(*s));
	if (own_creds(&s->own, s->cap_eff) < 0)
		return -EPERM;
	bool ids = s->own.fsuid == c->fsuid && s->own.fsgid == c->fsgid && same_groups(&s->own, c);
	if (ids && (s->own.capeff & ~c->capeff) == 0)
		return 0; /* already the caller, in every way that counts */
	s->changed = true;
	bool ok = true;
	if (!same_groups(&s->own, c)) {
		ok = syscall(SYS_setgroups, c->ngroups, c->groups) == 0;
		s->groups = ok;
	}
	if (ok && s->own.fsgid != c->fsgid) {
		syscall(SYS_setfsgid, c->fsgid);
		s->gid = true;
		ok = (gid_t)syscall(SYS_setfsgid, -1) == c->fsgid;
	}
	if (ok && s->own.fsuid != c->fsuid) {
		syscall(SYS_setfsuid, c->fsuid);
		s->uid = true;
		ok = (uid_t)syscall(SYS_setfsuid, -1) == c->fsuid;
	}
	uint64_t eff = s->own.capeff & c->capeff;
	if (ok) {
		s->caps = true;
		ok = set_caps((uint32_t)eff, (uint32_t)(eff >> 32)) == 0;
	}
	if (!ok) {
		sbx_creds_leave(s);
		return -EPERM;
	}
	return 0;
}

void sbx_creds_leave(struct sbx_creds_saved *s)
{
	if (!s->changed)
		return;
	s->changed = false;
	/* Capabilities first: putting the ids back needs them. */
	bool ok = !s->caps || set_caps(s->cap_eff[0], s->cap_eff[1]) == 0;
	if (s->uid) {
		syscall(SYS_setfsuid, s->own.fsuid);
		ok = ok && (uid_t)syscall(SYS_setfsuid, -1) == s->own.fsuid;
	}
	if (s->gid) {
		syscall(SYS_setfsgid, s->own.fsgid);
		ok = ok && (gid_t)syscall(SYS_setfsgid, -1) == s->own.fsgid;
	}
	if (s->groups)
		ok = ok && syscall(SYS_setgroups, s->own.ngroups, s->own.groups) == 0;
	if (!ok) {
		/* A supervisor that cannot be itself again cannot go on
		 * safely; its death ends the sandbox (PDEATHSIG, EXITKILL). */
		fprintf(stderr, "warden: cannot restore its own credentials\n");
		abort();
	}
}
