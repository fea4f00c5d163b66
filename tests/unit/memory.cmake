# Approval memory (issue 7): policy's similarity, proposals and accepted
# rules, and the store's query of people's decisions on a real SQLite file.
wd_test(test_memory SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_memory.c LIBS wd_policy wd_store LABELS unit)
