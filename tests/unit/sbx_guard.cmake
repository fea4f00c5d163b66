# sandbox/guard.c: the guardian keeps the fanotify group alive until the
# sandbox is gone when the supervisor dies (root; skips otherwise).
wd_test(test_sbx_guard
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_sbx_guard.c
	LIBS wd_sandbox
	LABELS unit)
