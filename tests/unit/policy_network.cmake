# The network's policy (policy/network.c): the connect request, the
# entries' grammar and matching, the decision order, the config key
# "network" and connect grants.
wd_test(test_policy_network
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_policy_network.c
	LIBS wd_policy
	LABELS unit)
