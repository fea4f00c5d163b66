# The project view on a real FUSE mount (needs root and /dev/fuse; skips
# otherwise).
# test_view: behaviour with real tools; test_view_access: who may reach
# what; test_view_pt: the view's kernel passthrough. All share the fixture
# in view_fx.c.
foreach(t test_view test_view_access test_view_pt)
	wd_test(${t} SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/${t}.c
		${CMAKE_SOURCE_DIR}/tests/integration/view_fx.c
		LIBS wd_sandbox wd_policy LABELS integration)
endforeach()
