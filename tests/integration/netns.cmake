# The network namespaces the network tests run in (tests/helpers/netns.c):
# a remote host behind a veth pair, its listeners and DNS server.
wd_test(test_netns SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_netns.c
	LIBS wt LABELS integration TIMEOUT 120)
