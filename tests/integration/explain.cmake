# `warden explain --open` against a real `warden run` of the same open.
wd_test(test_explain SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_explain.c
	LIBS wt LABELS integration TIMEOUT 300)
add_dependencies(test_explain warden)

# `warden explain --connect` in the test's own network namespace.
wd_test(test_explain_net SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_explain_net.c
	LIBS wt LABELS integration TIMEOUT 120)
add_dependencies(test_explain_net warden)
