# warden fails closed: a full audit disk mid-run, a sandbox that cannot be
# set up (seccomp, the FUSE view, mounts, ptrace), an audit that cannot be
# opened, a judge that cannot be reached. Links libseccomp to put a filter
# around warden itself.
wd_test(test_failclosed
	SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_failclosed.c
	LIBS wt PkgConfig::SECCOMP
	LABELS integration
	TIMEOUT 300)
add_dependencies(test_failclosed warden)
# Also in the all-FUSE project view (WARDEN_VIEW=fuse).
wd_test_fuse_twin(test_failclosed)
