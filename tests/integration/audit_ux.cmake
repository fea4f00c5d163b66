# The audit for people (paging on a pty, the terminal's width, the options
# of warden audit and warden sessions, a damaged audit) and the install
# (make install's files, the man page, the bash completion).
wd_test(test_audit_ux
	SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_audit_ux.c ${CMAKE_SOURCE_DIR}/tests/helpers/damage.c
	LIBS wt PkgConfig::SQLITE LABELS integration TIMEOUT 300)
add_dependencies(test_audit_ux warden)
wd_test(test_install SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_install.c
	LIBS wt LABELS integration TIMEOUT 300)
add_dependencies(test_install warden)
