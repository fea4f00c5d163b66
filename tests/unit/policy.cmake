# policy/: the pure decision library's unit tests (cmocka, table-driven).
wd_test(test_policy
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_policy.c
		${CMAKE_SOURCE_DIR}/tests/unit/test_policy_classify.c
		${CMAKE_SOURCE_DIR}/tests/unit/test_policy_config.c
		${CMAKE_SOURCE_DIR}/tests/unit/test_policy_harness.c
		${CMAKE_SOURCE_DIR}/tests/unit/test_policy_codex.c
	LIBS wd_policy
	LABELS unit)

# The fast path's grammars: option tables, shells, wrappers, names,
# environment, secret printers; some rows run the real programs.
# test_policy_grammar: the tables; test_policy_names: the names a program
# answers to; test_policy_programs: the tables against the installed
# programs. All share grammar_fx.c.
foreach(t test_policy_grammar test_policy_names test_policy_programs)
	wd_test(${t}
		SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/${t}.c
			${CMAKE_SOURCE_DIR}/tests/unit/grammar_fx.c
		LIBS wd_policy
		LABELS unit)
endforeach()

# The harness profile table and the enum name tables.
wd_test(test_policy_profiles
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_policy_profiles.c
	LIBS wd_policy
	LABELS unit)

# The table of request kinds: every kind's entry complete, names round-trip.
wd_test(test_policy_kinds
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_policy_kinds.c
	LIBS wd_policy
	LABELS unit)
