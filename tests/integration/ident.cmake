# The caller-context path walk and the agent-writable check of the exec
# decoder (sandbox/ident.c) on a real file system.
wd_test(test_ident SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_ident.c
	LIBS wt wd_sandbox LABELS integration)

# The memo of walks up of the agent-writable check never answers stale.
wd_test(test_ident_memo SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_ident_memo.c
	LIBS wt wd_sandbox LABELS integration)

# Taking on a caller's credentials for a lookup, with the thread's own
# read once per thread.
wd_test(test_creds_memo SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_creds_memo.c
	LIBS wt wd_sandbox Threads::Threads LABELS integration)
