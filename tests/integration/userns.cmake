# warden started by an unprivileged user (a user namespace); needs root to
# drop to nobody, skips when unprivileged user namespaces are disabled.
wd_test(test_userns SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_userns.c
	LIBS wt PkgConfig::SQLITE LABELS integration TIMEOUT 300)
add_dependencies(test_userns warden)
