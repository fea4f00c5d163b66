# policy/boundary.c and the config's "sockets" and "env" keys.
wd_test(test_policy_boundary
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_policy_boundary.c
	LIBS wd_policy
	LABELS unit)
