wd_test(test_run SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_run.c LIBS wt LABELS integration TIMEOUT 600)
add_dependencies(test_run warden race_exec)
# Also in the all-FUSE project view (WARDEN_VIEW=fuse).
wd_test_fuse_twin(test_run)
