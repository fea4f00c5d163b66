/*
 * kinds_fx.h: the check the tables of request kinds share (policy's and
 * the supervisor's): each kind's entry has every function, or none and
 * says why. Include after <cmocka.h> and policy.h.
 */
#ifndef WARDEN_TESTS_KINDS_FX_H
#define WARDEN_TESTS_KINDS_FX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One entry's functions as the test lists them, with their names. */
struct kinds_fx_entry {
	const void *ops[16];
	const char *names[16];
	size_t n;
	const char *why_not; /* NULL, or why the kind has no function */
};

/* Adds the function |f| of the entry |o| to |e|. */
#define KINDS_FX_OP(e, o, f)                                                                       \
	((e)->ops[(e)->n] = (const void *)(uintptr_t)(o)->f, (e)->names[(e)->n++] = #f)

/* Checks every kind's entry, as |fill| lists it: all functions set when
 * its |why_not| is NULL, all NULL when it says why. Returns how many kinds
 * have their functions. */
static inline size_t kinds_fx_check_all(void (*fill)(enum pol_kind k, struct kinds_fx_entry *e))
{
	size_t complete = 0;
	for (unsigned k = 0; k < POL_KIND_COUNT; k++) {
		struct kinds_fx_entry e = {0};
		fill((enum pol_kind)k, &e);
		assert_true(e.n > 0);
		for (size_t i = 0; i < e.n; i++)
			if ((e.ops[i] != NULL) == (e.why_not != NULL))
				fail_msg("kind %s: %s is %s", pol_kind_name((enum pol_kind)k),
					 e.names[i],
					 e.ops[i] ? "set on a kind that says it has none"
						  : "missing");
		if (e.why_not)
			assert_true(strlen(e.why_not) > 20);
		else
			complete++;
	}
	return complete;
}

#endif
