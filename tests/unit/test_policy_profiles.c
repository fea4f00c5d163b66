/*
 * test_policy_profiles.c: the harness profile table (policy/profiles.c)
 * and the enum name tables (policy/names.c) against the values the
 * supervisor, the config and the audit spell.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <string.h>

#include "policy.h"

static bool in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

static void test_pol_harness_profile_rows(void **state)
{
	(void)state;
	static const enum pol_harness all[] = {POL_HARNESS_NONE, POL_HARNESS_CLAUDE_CODE,
					       POL_HARNESS_CODEX, POL_HARNESS_AIDER};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		const struct pol_harness_profile *p = pol_harness_profile(all[i]);
		assert_non_null(p);
		assert_int_equal(p->harness, all[i]);
		assert_string_equal(p->name, pol_harness_name(all[i]));
		assert_non_null(p->env_keep);
		assert_non_null(p->home_writable);
	}
	const struct pol_harness_profile *claude = pol_harness_profile(POL_HARNESS_CLAUDE_CODE);
	assert_true(in_list(claude->env_keep, "ANTHROPIC_API_KEY"));
	assert_false(in_list(claude->env_keep, "OPENAI_API_KEY"));
	assert_true(in_list(claude->home_writable, ".claude"));
	assert_false(claude->call_machinery);
	assert_null(claude->launcher);
	const struct pol_harness_profile *codex = pol_harness_profile(POL_HARNESS_CODEX);
	assert_true(in_list(codex->env_keep, "OPENAI_API_KEY"));
	assert_true(in_list(codex->home_writable, ".codex"));
	assert_true(codex->call_machinery);
	assert_string_equal(codex->launcher, "/@openai/codex/bin/codex.js");
	const struct pol_harness_profile *aider = pol_harness_profile(POL_HARNESS_AIDER);
	assert_true(in_list(aider->env_keep, "GEMINI_API_KEY"));
	assert_true(in_list(aider->home_writable, ".aider"));
	const struct pol_harness_profile *none = pol_harness_profile(POL_HARNESS_NONE);
	assert_null(none->env_keep[0]);
	assert_null(none->home_writable[0]);
	assert_false(none->call_machinery);
	/* A value out of range gets nothing: no key kept, nothing writable. */
	const struct pol_harness_profile *bad = pol_harness_profile((enum pol_harness)99);
	assert_ptr_equal(bad, none);
	assert_string_equal(pol_harness_name((enum pol_harness)99), "unknown");
}

static void test_pol_env_keeps_by_profile(void **state)
{
	(void)state;
	assert_true(pol_env_keeps(NULL, POL_HARNESS_CLAUDE_CODE, "ANTHROPIC_API_KEY", 17));
	assert_false(pol_env_keeps(NULL, POL_HARNESS_CODEX, "ANTHROPIC_API_KEY", 17));
	assert_false(pol_env_keeps(NULL, POL_HARNESS_NONE, "OPENAI_API_KEY", 14));
	assert_true(pol_env_keeps(NULL, POL_HARNESS_AIDER, "OPENAI_API_KEY", 14));
}

static void test_pol_names_round_trip(void **state)
{
	(void)state;
	assert_string_equal(pol_tier_name(POL_TIER_UNSET), "standard");
	assert_string_equal(pol_tier_name((enum pol_tier)42), "standard");
	static const enum pol_tier tiers[] = {POL_TIER_AGGRESSIVE, POL_TIER_STANDARD,
					      POL_TIER_PASSIVE};
	for (size_t i = 0; i < sizeof(tiers) / sizeof(tiers[0]); i++) {
		enum pol_tier t = POL_TIER_UNSET;
		assert_int_equal(pol_tier_parse(pol_tier_name(tiers[i]), &t), 0);
		assert_int_equal(t, tiers[i]);
	}
	enum pol_tier t = POL_TIER_PASSIVE;
	assert_int_equal(pol_tier_parse("unset", &t), -22);
	assert_int_equal(pol_tier_parse(NULL, &t), -22);
	assert_int_equal(t, POL_TIER_PASSIVE);
	assert_string_equal(pol_verdict_name(POL_DENY_CRITICAL), "deny_critical");
	assert_string_equal(pol_verdict_name(POL_UNDECIDED), "undecided");
	assert_string_equal(pol_verdict_name((enum pol_verdict)42), "unknown");
	assert_string_equal(pol_outside_mode_name(POL_OUTSIDE_MARKERS), "markers");
	assert_string_equal(pol_outside_mode_name((enum pol_outside_mode)42), "hide");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pol_harness_profile_rows),
		cmocka_unit_test(test_pol_env_keeps_by_profile),
		cmocka_unit_test(test_pol_names_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
