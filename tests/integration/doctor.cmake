# `warden doctor` probes what `warden run` needs the way run does; as an
# unprivileged user (needs root to drop to nobody).
wd_test(test_doctor SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_doctor.c
	LIBS wt LABELS integration TIMEOUT 300)
add_dependencies(test_doctor warden)
