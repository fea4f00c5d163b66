# warden killed with SIGKILL at random moments of an exec loop: every exec
# that ran has its audit row once, and the audit stays sound.
wd_test(test_audit_crash SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_audit_crash.c
	LIBS wt PkgConfig::SQLITE LABELS integration TIMEOUT 300)
add_dependencies(test_audit_crash warden)
