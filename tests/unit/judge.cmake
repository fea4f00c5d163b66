# judge/: prompt bytes, verdict parsing, envelopes and request bodies (pure).
wd_test(test_judge
	SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_judge.c
	LIBS wd_judge wd_policy PkgConfig::CJSON
	LABELS unit)
