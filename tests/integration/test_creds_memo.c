/*
 * test_creds_memo: taking on a caller's credentials for a lookup
 * (sandbox/creds.c, SBX_CREDS_LOOKUP) with the thread's own credentials
 * read once per thread: every lookup has exactly the caller's fsuid,
 * fsgid, groups and no capability the caller lacks, whatever the caller
 * before it was, and every leave puts back exactly the thread's own, on
 * each thread (a thread whose credentials differ from the first one's
 * gets its own back, not the first one's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "creds_int.h"
#include "wt.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct own {
	struct __user_cap_data_struct caps[2];
	uid_t fsuid;
	gid_t fsgid;
	int ngroups;
	gid_t groups[64];
};

static void read_own(struct own *o)
{
	memset(o, 0, sizeof(*o));
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	assert_int_equal(syscall(SYS_capget, &h, o->caps), 0);
	o->fsuid = (uid_t)syscall(SYS_setfsuid, -1);
	o->fsgid = (gid_t)syscall(SYS_setfsgid, -1);
	o->ngroups = (int)syscall(SYS_getgroups, 64, o->groups);
	assert_true(o->ngroups >= 0);
}

static bool same_own(const struct own *a, const struct own *b)
{
	return memcmp(a->caps, b->caps, sizeof(a->caps)) == 0 && a->fsuid == b->fsuid &&
	       a->fsgid == b->fsgid && a->ngroups == b->ngroups &&
	       memcmp(a->groups, b->groups, (size_t)a->ngroups * sizeof(gid_t)) == 0;
}

static gid_t g1000[] = {5, 1000}; /* as the kernel keeps them: sorted */

static struct sbx_creds caller(uid_t uid, gid_t gid, gid_t *groups, size_t n, uint64_t capeff)
{
	struct sbx_creds c = {.groups = groups, .ngroups = n, .capeff = capeff};
	for (int i = 0; i < 4; i++) {
		c.uid[i] = uid;
		c.gid[i] = gid;
	}
	return c;
}

/* A 0700 directory of root's with a file in it: only root (by owner)
 * finds the file; uid 1000 without capabilities does not. */
static char *private_dir(void)
{
	char tmpl[] = "/var/tmp/warden-creds-XXXXXX";
	char *d = wd_strdup(mkdtemp(tmpl));
	wt_write(d, "x", "x");
	chmod(d, 0700);
	return d;
}

static int find_as(const struct sbx_creds *c, int dirfd)
{
	struct sbx_creds_saved s;
	assert_int_equal(sbx_creds_enter(c, SBX_CREDS_LOOKUP, &s), 0);
	/* While entered: exactly the caller's ids and groups, and no
	 * capability it lacks. */
	assert_int_equal((uid_t)syscall(SYS_setfsuid, -1), c->uid[3]);
	assert_int_equal((gid_t)syscall(SYS_setfsgid, -1), c->gid[3]);
	gid_t g[64];
	int n = (int)syscall(SYS_getgroups, 64, g);
	assert_int_equal(n, (int)c->ngroups);
	assert_memory_equal(g, c->groups ? c->groups : g, c->ngroups * sizeof(gid_t));
	struct own o;
	read_own(&o);
	uint64_t eff = (uint64_t)o.caps[1].effective << 32 | o.caps[0].effective;
	assert_int_equal(eff & ~c->capeff, 0);
	int fd = openat(dirfd, "x", O_PATH | O_CLOEXEC);
	int rc = fd < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	sbx_creds_leave(&s);
	return rc;
}

/* Callers one after another, each different from the last and from the
 * thread: each lookup is the caller's, each leave the thread's own. A
 * memo that skipped a change because the previous caller had it would
 * let uid 1000 in the second time. */
static void test_creds_lookup_each_caller(void **state)
{
	(void)state;
	char *d = private_dir();
	int dfd = open(d, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	struct own before, after;
	read_own(&before);
	struct sbx_creds u1000 = caller(1000, 1000, g1000, 2, 0);
	struct sbx_creds root_nocap = caller(0, 0, NULL, 0, 0);
	for (int round = 0; round < 3; round++) {
		assert_int_equal(find_as(&u1000, dfd), -EACCES);
		read_own(&after);
		assert_true(same_own(&before, &after));
		assert_int_equal(find_as(&root_nocap, dfd), 0);
		read_own(&after);
		assert_true(same_own(&before, &after));
	}
	close(dfd);
	wt_rmtree(d);
	free(d);
}

/* A thread whose own credentials differ from the first thread's (it
 * dropped CAP_NET_RAW from every set) gets its own back after a lookup. A
 * memo shared by the threads would put the first thread's sets back: the
 * capset fails (CAP_NET_RAW is no longer permitted) and the supervisor
 * aborts, or the thread gains a capability. */
static void *other_thread(void *arg)
{
	(void)arg;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return (void *)1;
	d[0].effective &= ~(1U << CAP_NET_RAW);
	d[0].permitted &= ~(1U << CAP_NET_RAW);
	d[0].inheritable &= ~(1U << CAP_NET_RAW);
	if (syscall(SYS_capset, &h, d) < 0)
		return (void *)2;
	struct own before, after;
	read_own(&before);
	struct sbx_creds root_nocap = caller(0, 0, NULL, 0, 0);
	for (int i = 0; i < 2; i++) {
		struct sbx_creds_saved s;
		if (sbx_creds_enter(&root_nocap, SBX_CREDS_LOOKUP, &s) != 0)
			return (void *)3;
		sbx_creds_leave(&s);
		read_own(&after);
		if (!same_own(&before, &after))
			return (void *)4;
	}
	return NULL;
}

static void test_creds_memo_per_thread(void **state)
{
	(void)state;
	struct sbx_creds root_nocap = caller(0, 0, NULL, 0, 0);
	struct sbx_creds_saved s;
	assert_int_equal(sbx_creds_enter(&root_nocap, SBX_CREDS_LOOKUP, &s), 0);
	sbx_creds_leave(&s);
	pthread_t t;
	void *res = (void *)-1;
	assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
	assert_int_equal(pthread_join(t, &res), 0);
	assert_int_equal((intptr_t)res, 0);
	struct own a, b;
	read_own(&a);
	assert_int_equal(sbx_creds_enter(&root_nocap, SBX_CREDS_LOOKUP, &s), 0);
	sbx_creds_leave(&s);
	read_own(&b);
	assert_true(same_own(&a, &b));
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_creds_memo needs root\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_creds_lookup_each_caller),
		cmocka_unit_test(test_creds_memo_per_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
