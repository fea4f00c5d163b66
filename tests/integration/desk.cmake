wd_test(test_desk SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_desk.c LIBS wt LABELS integration TIMEOUT 600)
add_dependencies(test_desk warden twin_open)
