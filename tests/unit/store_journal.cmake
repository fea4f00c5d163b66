# The audit's journal: two writers' ids, a crash between commit and
# truncation, a torn tail, a write that fails.
wd_test(test_store_journal SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_store_journal.c
	${CMAKE_SOURCE_DIR}/tests/unit/store_fx.c
	LIBS wd_store PkgConfig::SQLITE LABELS unit)
