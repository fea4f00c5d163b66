# supervisor/dns_msg.c: the DNS messages the session's resolver reads.
wd_test(test_sup_dns
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_sup_dns.c
	LIBS wd_supervisor
	LABELS unit)
target_include_directories(test_sup_dns PRIVATE ${CMAKE_SOURCE_DIR}/supervisor)
