# Connections in `warden audit`: --kind connect and --tool-calls, over an
# audit the store writes.
wd_test(test_audit_net SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_audit_net.c
	LIBS wt LABELS integration TIMEOUT 120)
add_dependencies(test_audit_net warden)
