wd_test(test_run SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_run.c LIBS wt LABELS integration TIMEOUT 600)
add_dependencies(test_run warden race_exec)
