# common/: the shared helpers, above all the ones that make the agent's text
# safe for a terminal, a JSON reader or a CSV reader.
wd_test(test_common
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_common.c
	LIBS wd_common
	LABELS unit)
