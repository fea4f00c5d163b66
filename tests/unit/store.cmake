# The store's unit tests: real SQLite files in a temporary directory. The test
# links SQLite itself to write a newer schema version and a foreign database
# by hand.
wd_test(test_store SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_store.c LIBS wd_store PkgConfig::SQLITE LABELS unit)
