/*
 * test_policy_kinds.c: policy's table of request kinds (policy/kinds.c):
 * every enum pol_kind has a complete entry, so that a kind cannot be half
 * added, and its name round-trips through pol_kind_name()/pol_kind_parse().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"

#include "kinds_fx.h"

/* The entry's functions, in the struct's order. */
static void fill(enum pol_kind k, struct kinds_fx_entry *e)
{
	const struct pol_kind_ops *o = pol_kind_ops(k);
	assert_non_null(o);
	assert_non_null(o->name);
	assert_true(o->name[0] != '\0');
	e->why_not = o->no_request;
	KINDS_FX_OP(e, o, json);
	KINDS_FX_OP(e, o, summary);
	KINDS_FX_OP(e, o, same);
	KINDS_FX_OP(e, o, grant_matches);
	KINDS_FX_OP(e, o, rule_matches);
	KINDS_FX_OP(e, o, decide);
	KINDS_FX_OP(e, o, to_grant);
	KINDS_FX_OP(e, o, mem_args);
}

static void test_pol_kind_ops_complete(void **state)
{
	(void)state;
	/* exec, open and connect build requests */
	assert_int_equal(kinds_fx_check_all(fill), 3);
	assert_null(pol_kind_ops(POL_KIND_COUNT));
	assert_null(pol_kind_ops((enum pol_kind)99));
}

static void test_pol_kind_name_round_trip(void **state)
{
	(void)state;
	for (unsigned k = 0; k < POL_KIND_COUNT; k++) {
		const char *name = pol_kind_name((enum pol_kind)k);
		assert_string_equal(name, pol_kind_ops((enum pol_kind)k)->name);
		enum pol_kind back = POL_KIND_COUNT;
		assert_int_equal(pol_kind_parse(name, &back), 0);
		assert_int_equal(back, k);
		for (unsigned j = 0; j < k; j++)
			assert_string_not_equal(name, pol_kind_name((enum pol_kind)j));
	}
	/* The audit's words are fixed: rows already written use them. */
	assert_string_equal(pol_kind_name(POL_EXEC), "exec");
	assert_string_equal(pol_kind_name(POL_OPEN), "open");
	assert_string_equal(pol_kind_name(POL_CONNECT), "connect");
	enum pol_kind out = POL_OPEN;
	assert_int_equal(pol_kind_parse("Exec", &out), -EINVAL);
	assert_int_equal(pol_kind_parse("", &out), -EINVAL);
	assert_int_equal(pol_kind_parse(NULL, &out), -EINVAL);
	assert_int_equal(out, POL_OPEN);
}

/* A request's JSON names its kind with the table's word. */
static void test_pol_kind_json_names_kind(void **state)
{
	(void)state;
	char *const argv[] = {"ls", "-l", NULL};
	struct pol_exec_desc d = {.path = "/usr/bin/ls", .argv = argv, .cwd = "/p"};
	struct pol_request *reqs[] = {pol_request_exec(&d, "/p"),
				      pol_request_open(".env", NULL, POL_ACC_READ, "cat .env")};
	for (size_t i = 0; i < 2; i++) {
		assert_non_null(reqs[i]);
		char *json = pol_request_json(reqs[i]);
		char want[64];
		snprintf(want, sizeof(want), "{\"kind\":\"%s\",",
			 pol_kind_name(pol_request_kind(reqs[i])));
		assert_true(strncmp(json, want, strlen(want)) == 0);
		free(json);
		pol_request_free(reqs[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pol_kind_ops_complete),
		cmocka_unit_test(test_pol_kind_name_round_trip),
		cmocka_unit_test(test_pol_kind_json_names_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
