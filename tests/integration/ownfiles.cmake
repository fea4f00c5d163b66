# warden refuses to start when its executable, the config or the audit's
# directory could be changed from inside the sandbox.
wd_test(test_ownfiles SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_ownfiles.c
	LIBS wt LABELS integration TIMEOUT 300)
add_dependencies(test_ownfiles warden)
