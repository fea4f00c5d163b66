# policy/: control files, the basename exemption, directory renames and the
# control_files key (its own executable, next to test_policy).
wd_test(test_policy_control
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_policy_control.c
	LIBS wd_policy
	LABELS unit)
