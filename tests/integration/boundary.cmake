wd_test(test_boundary SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_boundary.c LIBS wt LABELS integration TIMEOUT 300)
add_dependencies(test_boundary warden)
