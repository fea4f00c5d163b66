# The store's unit tests: real SQLite files in a temporary directory. The test
# links SQLite itself to write a newer schema version and a foreign database
# by hand.
# test_store: open, schema, sessions, append and query; test_store_crash:
# concurrency and crashes; test_store_print: the print formats and the
# integrity check. All share the fixture in store_fx.c.
foreach(t test_store test_store_crash test_store_print)
	wd_test(${t} SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/${t}.c
		${CMAKE_SOURCE_DIR}/tests/unit/store_fx.c
		LIBS wd_store PkgConfig::SQLITE LABELS unit)
endforeach()
