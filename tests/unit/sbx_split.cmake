# sandbox/view_split.c (the split view's start walk) and the decoding of an
# open's access from /proc/TID/syscall (sandbox/proc.c).
wd_test(test_sbx_split
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_sbx_split.c
	LIBS wd_sandbox
	LABELS unit)
