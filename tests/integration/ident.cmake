# The caller-context path walk and the agent-writable check of the exec
# decoder (sandbox/ident.c) on a real file system.
wd_test(test_ident SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_ident.c
	LIBS wt wd_sandbox LABELS integration)
