wd_test(test_cli SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_cli.c LIBS wt LABELS integration TIMEOUT 300)
add_dependencies(test_cli warden)
