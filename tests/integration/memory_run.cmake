# Memory never decides (issue 7): a long unanimous history of people's
# approvals still leaves the real `warden run` refusing the command.
wd_test(test_memory_run SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_memory_run.c LIBS wt LABELS integration)
add_dependencies(test_memory_run warden)
