# The store's reading around a damaged file, its quick check, the session
# listing and the latest-N limit: real SQLite files, one page overwritten.
wd_test(test_store_salvage
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_store_salvage.c ${CMAKE_SOURCE_DIR}/tests/unit/store_fx.c
	${CMAKE_SOURCE_DIR}/tests/helpers/damage.c
	LIBS wd_store PkgConfig::SQLITE LABELS unit)
