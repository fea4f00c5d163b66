# The integration tests' helper library and the small programs they run
# under warden (each a real process doing one thing an agent might do).
add_library(wt STATIC ${CMAKE_SOURCE_DIR}/tests/helpers/wt.c
	${CMAKE_SOURCE_DIR}/tests/helpers/netns.c)
target_include_directories(wt PUBLIC ${CMAKE_SOURCE_DIR}/tests/helpers)
target_link_libraries(wt PUBLIC wd_store wd_common)

file(GLOB wt_progs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/helpers/prog_*.c)
foreach(src ${wt_progs})
	get_filename_component(n ${src} NAME_WE)
	string(REPLACE "prog_" "" n ${n})
	add_executable(${n} ${src})
	wd_agent_program(${n})
	set_target_properties(${n} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
	target_link_libraries(${n} PRIVATE Threads::Threads)
endforeach()
