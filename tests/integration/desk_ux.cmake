# What a person at the approvals desk sees: the table, the confirmations,
# the project grant's minimal edit and the --watch bell.
wd_test(test_desk_ux SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_desk_ux.c
	LIBS wt LABELS integration TIMEOUT 300)
add_dependencies(test_desk_ux warden)
