# The project view on a real FUSE mount (needs root and /dev/fuse; skips
# otherwise).
wd_test(test_view SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_view.c
	LIBS wd_sandbox wd_policy LABELS integration)
