wd_test(test_exitcodes SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_exitcodes.c LIBS wt LABELS integration TIMEOUT 300)
add_dependencies(test_exitcodes warden)
