# judge/: the HTTP clients against a real server on 127.0.0.1 that speaks
# both APIs (tests/helpers/judge_server.c, built here as its own library).
add_library(judge_server STATIC ${CMAKE_SOURCE_DIR}/tests/helpers/judge_server.c)
target_include_directories(judge_server PUBLIC ${CMAKE_SOURCE_DIR}/tests/helpers)
target_link_libraries(judge_server PUBLIC Threads::Threads PRIVATE PkgConfig::CJSON)

wd_test(test_judge_http
	SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_judge_http.c
	LIBS wd_judge judge_server PkgConfig::CJSON
	LABELS integration
	TIMEOUT 120)

# The judge inside the real pipeline: warden run against the same server.
wd_test(test_judge_run
	SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_judge_run.c
	LIBS wt judge_server
	LABELS integration
	TIMEOUT 300)
add_dependencies(test_judge_run warden)
