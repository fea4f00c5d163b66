# sandbox/sock.c's reading of IP destinations, and supervisor/connect.c's
# datagram cache, local-address test and --stats line.
wd_test(test_sbx_inet
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_sbx_inet.c
	LIBS wd_sandbox
	LABELS unit)
wd_test(test_sup_connect
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_sup_connect.c
	LIBS wd_supervisor
	LABELS unit)
