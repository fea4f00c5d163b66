# The escape suite (issue 8): small programs that try to get out of warden,
# each run under the real `warden run` by the cmocka driver test_escape.
set(esc_targets)
foreach(n race sys exec open flood)
	add_executable(esc_${n} ${CMAKE_SOURCE_DIR}/tests/escape/esc_${n}.c)
	set_target_properties(esc_${n} PROPERTIES
		RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
	target_link_libraries(esc_${n} PRIVATE Threads::Threads)
	wd_agent_program(esc_${n})
	list(APPEND esc_targets esc_${n})
endforeach()

set(esc_libs wt wd_policy)
if(TARGET wd_judge)
	# The judge's prompt builder is checked for escaping when it exists.
	list(APPEND esc_libs wd_judge)
endif()
wd_test(test_escape SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_escape.c
	LIBS ${esc_libs} LABELS escape TIMEOUT 900)
if(TARGET wd_judge)
	target_compile_definitions(test_escape PRIVATE WARDEN_ESC_HAVE_JUDGE=1)
endif()
add_dependencies(test_escape warden ${esc_targets})

# The driver keeps small path strings until it exits (many cases, one
# process): LeakSanitizer is off for the driver and the wardens it starts
# here only. Every other suite runs warden with leak detection on.
# AddressSanitizer keeps freed memory in a quarantine (256 MiB by default),
# resident once written: the flood case, which bounds warden's memory over
# 10,000 decisions, would measure the quarantine. 32 MiB keeps the bound
# about warden.
set_property(TEST test_escape APPEND PROPERTY ENVIRONMENT
	"ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:quarantine_size_mb=32")

# Local control channels: Unix sockets outside the project.
add_executable(esc_sock ${CMAKE_SOURCE_DIR}/tests/escape/esc_sock.c)
set_target_properties(esc_sock PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
target_link_libraries(esc_sock PRIVATE Threads::Threads)
wd_agent_program(esc_sock)
wd_test(test_esc_sockets SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_sockets.c
	LIBS wt wd_store LABELS escape TIMEOUT 600)
add_dependencies(test_esc_sockets warden esc_sock)
