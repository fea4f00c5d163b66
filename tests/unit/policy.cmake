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
wd_test(test_policy_grammar
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_policy_grammar.c
	LIBS wd_policy
	LABELS unit)

# The harness profile table and the enum name tables.
wd_test(test_policy_profiles
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_policy_profiles.c
	LIBS wd_policy
	LABELS unit)
