/*
 * test_sup_names.c: the session's table of names by address
 * (supervisor/names.c): newest first, no name lost to a later answer
 * elsewhere, cleaned, bounded, and safe to read while another thread adds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "sup.h"

static void v4(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	assert_int_equal(inet_pton(AF_INET, s, out), 1);
}

static void test_newest_first(void **state)
{
	(void)state;
	struct sup_names *t = sup_names_new();
	uint8_t a[16];
	v4("140.82.112.3", a);
	assert_null(sup_names_of(t, AF_INET, a));
	sup_names_add(t, "GitHub.com.", AF_INET, a);
	sup_names_add(t, "www.github.com", AF_INET, a);
	char **n = sup_names_of(t, AF_INET, a);
	assert_non_null(n);
	assert_string_equal(n[0], "www.github.com");
	assert_string_equal(n[1], "github.com");
	assert_null(n[2]);
	wd_strv_free(n);
	/* Seen again: it moves to the front, and is not doubled. */
	sup_names_add(t, "github.com", AF_INET, a);
	n = sup_names_of(t, AF_INET, a);
	assert_string_equal(n[0], "github.com");
	assert_string_equal(n[1], "www.github.com");
	assert_null(n[2]);
	wd_strv_free(n);
	sup_names_free(t);
}

static void test_rebinding_keeps_old_names(void **state)
{
	(void)state;
	struct sup_names *t = sup_names_new();
	uint8_t a[16], b[16];
	v4("192.0.2.10", a);
	v4("192.0.2.20", b);
	sup_names_add(t, "rebind.test", AF_INET, a);
	sup_names_add(t, "rebind.test", AF_INET, b);
	char **na = sup_names_of(t, AF_INET, a), **nb = sup_names_of(t, AF_INET, b);
	assert_string_equal(na[0], "rebind.test");
	assert_string_equal(nb[0], "rebind.test");
	wd_strv_free(na);
	wd_strv_free(nb);
	/* The same bytes as another family are another address. */
	assert_null(sup_names_of(t, AF_INET6, a));
	sup_names_free(t);
}

static void test_bad_names_ignored(void **state)
{
	(void)state;
	struct sup_names *t = sup_names_new();
	uint8_t a[16];
	v4("10.0.0.1", a);
	sup_names_add(t, "", AF_INET, a);
	sup_names_add(t, ".", AF_INET, a);
	sup_names_add(t, "evil\x1b[2Jname", AF_INET, a);
	sup_names_add(t, "a b", AF_INET, a);
	char big[300];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	sup_names_add(t, big, AF_INET, a);
	sup_names_add(t, "ok.test", AF_UNIX, a);
	assert_null(sup_names_of(t, AF_INET, a));
	assert_int_equal(sup_names_count(t), 0);
	sup_names_free(t);
}

static void test_bounded_per_address(void **state)
{
	(void)state;
	struct sup_names *t = sup_names_new();
	uint8_t a[16];
	v4("10.0.0.2", a);
	char name[32];
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		sup_names_add(t, name, AF_INET, a);
	}
	char **n = sup_names_of(t, AF_INET, a);
	size_t k = 0;
	while (n[k])
		k++;
	assert_true(k >= 1 && k < 20);
	assert_string_equal(n[0], "n19.test");
	wd_strv_free(n);
	sup_names_free(t);
}

static void test_bounded_addresses(void **state)
{
	(void)state;
	struct sup_names *t = sup_names_new();
	uint8_t a[16] = {0};
	a[0] = 10;
	for (uint32_t i = 0; i < 70000; i++) {
		a[1] = (uint8_t)(i >> 16);
		a[2] = (uint8_t)(i >> 8);
		a[3] = (uint8_t)i;
		sup_names_add(t, "many.test", AF_INET, a);
	}
	assert_true(sup_names_count(t) <= 65536);
	/* The newest is kept, the oldest forgotten. */
	char **n = sup_names_of(t, AF_INET, a);
	assert_non_null(n);
	wd_strv_free(n);
	uint8_t first[16] = {10, 0, 0, 0};
	assert_null(sup_names_of(t, AF_INET, first));
	sup_names_free(t);
}

struct race {
	struct sup_names *t;
	int stop;
};

static void *adder(void *arg)
{
	struct race *r = arg;
	uint8_t a[16] = {0};
	char name[32];
	for (int i = 0; i < 20000; i++) {
		a[15] = (uint8_t)i;
		snprintf(name, sizeof(name), "h%d.test", i % 50);
		sup_names_add(r->t, name, AF_INET6, a);
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	struct race r = {.t = sup_names_new()};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, adder, &r), 0);
	uint8_t a[16] = {0};
	while (!__atomic_load_n(&r.stop, __ATOMIC_ACQUIRE)) {
		char **n = sup_names_of(r.t, AF_INET6, a);
		if (n)
			assert_non_null(strstr(n[0], ".test"));
		wd_strv_free(n);
	}
	pthread_join(th, NULL);
	assert_int_equal(sup_names_count(r.t), 256);
	sup_names_free(r.t);
}

/* ---- kept names ------------------------------------------------------------------ */

static bool keep_evil(void *arg, const char *name)
{
	(void)arg;
	size_t l = strlen(name);
	return strcmp(name, "evil.test") == 0 || (l > 9 && strcmp(name + l - 9, ".bad.test") == 0);
}

static bool has_name(char **n, const char *want)
{
	for (size_t i = 0; n && n[i]; i++)
		if (strcmp(n[i], want) == 0)
			return true;
	return false;
}

static size_t count_names(char **n)
{
	size_t k = 0;
	while (n && n[k])
		k++;
	return k;
}

static void test_kept_names_stay(void **state)
{
	(void)state;
	struct sup_names *t = sup_names_new();
	sup_names_set_keep(t, keep_evil, NULL);
	uint8_t a[16];
	v4("10.77.0.3", a);
	sup_names_add(t, "EVIL.test.", AF_INET, a);
	char name[32];
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		sup_names_add(t, name, AF_INET, a);
	}
	char **n = sup_names_of(t, AF_INET, a);
	assert_true(has_name(n, "evil.test"));
	assert_string_equal(n[0], "n39.test"); /* shown by its newest name */
	assert_false(has_name(n, "n0.test"));  /* others still go, oldest first */
	assert_true(count_names(n) <= 8);
	wd_strv_free(n);
	/* An address full of kept names takes no new name, and loses none. */
	uint8_t b[16];
	v4("10.77.0.4", b);
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "k%d.bad.test", i);
		sup_names_add(t, name, AF_INET, b);
	}
	sup_names_add(t, "fresh.test", AF_INET, b);
	sup_names_add(t, "k9.bad.test", AF_INET, b);
	n = sup_names_of(t, AF_INET, b);
	assert_int_equal(count_names(n), 8);
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "k%d.bad.test", i);
		assert_true(has_name(n, name));
	}
	assert_false(has_name(n, "fresh.test"));
	wd_strv_free(n);
	/* Without the predicate, the old behaviour: the oldest goes. */
	struct sup_names *u = sup_names_new();
	sup_names_add(u, "evil.test", AF_INET, a);
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		sup_names_add(u, name, AF_INET, a);
	}
	n = sup_names_of(u, AF_INET, a);
	assert_false(has_name(n, "evil.test"));
	wd_strv_free(n);
	sup_names_free(u);
	sup_names_free(t);
}

static void test_kept_address_not_forgotten(void **state)
{
	(void)state;
	struct sup_names *t = sup_names_new();
	sup_names_set_keep(t, keep_evil, NULL);
	uint8_t first[16];
	v4("10.0.0.0", first);
	sup_names_add(t, "evil.test", AF_INET, first);
	uint8_t a[16] = {10, 1, 0, 0};
	for (uint32_t i = 0; i < 70000; i++) {
		a[1] = (uint8_t)(1 + (i >> 16));
		a[2] = (uint8_t)(i >> 8);
		a[3] = (uint8_t)i;
		sup_names_add(t, "many.test", AF_INET, a);
	}
	assert_true(sup_names_count(t) <= 65536);
	char **n = sup_names_of(t, AF_INET, first);
	assert_true(has_name(n, "evil.test"));
	wd_strv_free(n);
	/* The other oldest addresses went instead. */
	uint8_t second[16] = {10, 1, 0, 0};
	assert_null(sup_names_of(t, AF_INET, second));
	sup_names_free(t);
	/* A table full of kept addresses leaves a new address unnamed. */
	t = sup_names_new();
	sup_names_set_keep(t, keep_evil, NULL);
	for (uint32_t i = 0; i < 65536; i++) {
		a[1] = (uint8_t)(i >> 16);
		a[2] = (uint8_t)(i >> 8);
		a[3] = (uint8_t)i;
		sup_names_add(t, "evil.test", AF_INET, a);
	}
	uint8_t fresh[16];
	v4("192.0.2.1", fresh);
	sup_names_add(t, "fine.test", AF_INET, fresh);
	assert_null(sup_names_of(t, AF_INET, fresh));
	assert_int_equal(sup_names_count(t), 65536);
	n = sup_names_of(t, AF_INET, first);
	assert_true(has_name(n, "evil.test"));
	wd_strv_free(n);
	sup_names_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_newest_first),
		cmocka_unit_test(test_rebinding_keeps_old_names),
		cmocka_unit_test(test_bad_names_ignored),
		cmocka_unit_test(test_bounded_per_address),
		cmocka_unit_test(test_bounded_addresses),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_kept_names_stay),
		cmocka_unit_test(test_kept_address_not_forgotten),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
