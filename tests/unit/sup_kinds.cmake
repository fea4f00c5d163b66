# supervisor/: the table of request kinds, linked from the supervisor's
# library: every kind's entry complete and in step with policy's.
wd_test(test_sup_kinds
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_sup_kinds.c
	LIBS wd_supervisor
	LABELS unit)

# supervisor/names.c: the names the session saw resolve to each address.
wd_test(test_sup_names
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_sup_names.c
	LIBS wd_supervisor
	LABELS unit)

# supervisor/netaddr.c: whether an address is this host's own, in a
# network namespace of the test's own.
wd_test(test_sup_netaddr
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_sup_netaddr.c
	LIBS wd_supervisor
	LABELS unit)
