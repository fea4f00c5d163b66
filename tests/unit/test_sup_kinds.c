/*
 * test_sup_kinds.c: the supervisor's table of request kinds
 * (supervisor/kinds.c): every enum pol_kind has a complete entry, so that
 * a kind cannot be half added, and agrees with policy's table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <string.h>

#include "judge.h"
#include "sup.h"

#include "kinds_fx.h"

/* The entry's functions, in the struct's order. */
static void fill(enum pol_kind k, struct kinds_fx_entry *e)
{
	const struct sup_kind_ops *o = sup_kind_ops(k);
	assert_non_null(o);
	/* Nothing outside the pipeline is followed as a traced caller. */
	assert_false(o->no_pipeline && o->traced);
	e->why_not = o->no_pipeline;
	KINDS_FX_OP(e, o, told_as);
	KINDS_FX_OP(e, o, verb);
	KINDS_FX_OP(e, o, machinery);
	KINDS_FX_OP(e, o, waits);
	KINDS_FX_OP(e, o, allow);
	KINDS_FX_OP(e, o, refuse);
	KINDS_FX_OP(e, o, cwd);
	KINDS_FX_OP(e, o, command);
	KINDS_FX_OP(e, o, prompt);
}

static void test_sup_kind_ops_complete(void **state)
{
	(void)state;
	assert_int_equal(kinds_fx_check_all(fill), 3); /* exec, open and connect are decided */
	assert_null(sup_kind_ops(POL_KIND_COUNT));
	assert_null(sup_kind_ops((enum pol_kind)99));
}

/* What the caller is told names an exec as one and an open by its verb:
 * "refused exec of \"rm -rf /\": ...", "refused \"read .env\": ...". */
static void test_sup_kind_ops_told_as(void **state)
{
	(void)state;
	assert_string_equal(sup_kind_ops(POL_EXEC)->told_as, "exec of ");
	assert_string_equal(sup_kind_ops(POL_OPEN)->told_as, "");
	assert_true(sup_kind_ops(POL_EXEC)->traced);
	assert_false(sup_kind_ops(POL_OPEN)->traced);
	assert_false(sup_kind_ops(POL_EXEC)->no_fast_path);
	assert_true(sup_kind_ops(POL_OPEN)->no_fast_path);
	struct sup_view_wait read = {.access = POL_ACC_READ};
	struct sup_view_wait write = {.access = POL_ACC_READ | POL_ACC_WRITE};
	struct sup_request rq = {.kind = POL_OPEN, .vw = &read};
	assert_string_equal(sup_kind_ops(POL_OPEN)->verb(&rq), "read");
	rq.vw = &write;
	assert_string_equal(sup_kind_ops(POL_OPEN)->verb(&rq), "change");
	rq.kind = POL_EXEC;
	rq.vw = NULL;
	assert_string_equal(sup_kind_ops(POL_EXEC)->verb(&rq), "exec");
}

/* Every kind the pipeline decides is one policy builds requests of and
 * the judge has words for. */
static void test_sup_kind_ops_match_policy(void **state)
{
	(void)state;
	char *const argv[] = {"true", NULL};
	struct pol_exec_desc d = {.path = "/usr/bin/true", .argv = argv, .cwd = "/p"};
	struct pol_request *exec = pol_request_exec(&d, "/p");
	struct pol_request *open = pol_request_open(".env", NULL, POL_ACC_READ, NULL);
	assert_null(sup_kind_ops(pol_request_kind(exec))->no_pipeline);
	assert_null(sup_kind_ops(pol_request_kind(open))->no_pipeline);
	assert_null(sup_kind_ops(POL_CONNECT)->no_pipeline);
	pol_request_free(exec);
	pol_request_free(open);
	/* The judge may see every kind the pipeline decides, and no other. */
	for (unsigned k = 0; k < POL_KIND_COUNT; k++)
		assert_true((sup_kind_ops((enum pol_kind)k)->no_pipeline == NULL) ==
			    (jdg_kind_ops((enum pol_kind)k)->stops != NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sup_kind_ops_complete),
		cmocka_unit_test(test_sup_kind_ops_told_as),
		cmocka_unit_test(test_sup_kind_ops_match_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
