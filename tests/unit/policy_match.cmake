# policy/: the control and sensitive predicates against a straightforward
# reference on generated paths and patterns (its own executable).
wd_test(test_policy_match
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_policy_match.c
	LIBS wd_policy
	LABELS unit)
