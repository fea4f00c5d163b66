# The escape suite (issue 8): small programs that try to get out of warden,
# each run under the real `warden run` by the cmocka driver test_escape.
set(esc_targets)
foreach(n race sys exec open flood identity)
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
# One driver per topic (test_escape: races, exec side doors, hard deny,
# prompt injection, pressure; test_esc_sys: the static filter;
# test_esc_files: sensitive files by every name), sharing escape_fx.c.
foreach(t test_escape test_esc_sys test_esc_files)
	wd_test(${t} SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/${t}.c
		${CMAKE_SOURCE_DIR}/tests/escape/escape_fx.c
		LIBS ${esc_libs} LABELS escape TIMEOUT 900)
	if(TARGET wd_judge)
		target_compile_definitions(${t} PRIVATE WARDEN_ESC_HAVE_JUDGE=1)
	endif()
	add_dependencies(${t} warden ${esc_targets})
endforeach()

# The identity escapes (a program is where it lives, paths are the
# caller's, start-up ends).
wd_test(test_esc_identity SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_identity.c
	LIBS wt wd_policy LABELS escape TIMEOUT 600)
add_dependencies(test_esc_identity warden esc_identity)

# The driver keeps small path strings until it exits (many cases, one
# process): LeakSanitizer is off for the driver and the wardens it starts
# here only. Every other suite runs warden with leak detection on.
# AddressSanitizer keeps freed memory in a quarantine (256 MiB by default),
# resident once written: the flood case, which bounds warden's memory over
# 10,000 decisions, would measure the quarantine. 32 MiB keeps the bound
# about warden.
set_property(TEST test_escape test_esc_sys test_esc_files APPEND PROPERTY ENVIRONMENT
	"ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:quarantine_size_mb=32")

# Secrets outside the project: the home's markers view, the hidden token
# files, the passwd home, the system's secrets.
wd_test(test_esc_outside SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_outside.c
	LIBS wt LABELS escape TIMEOUT 300)
add_dependencies(test_esc_outside warden)

# Codex's launcher child and per-call wrapper with an adversarial agent.
wd_test(test_esc_codex SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_codex.c
	LIBS wt LABELS escape TIMEOUT 300)
add_dependencies(test_esc_codex warden)

# The temporary directories and warden's own files (test_esc_tmp), with
# its agent esc_tmp.
add_executable(esc_tmp ${CMAKE_SOURCE_DIR}/tests/escape/esc_tmp.c)
set_target_properties(esc_tmp PROPERTIES
	RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
wd_agent_program(esc_tmp)
wd_test(test_esc_tmp SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_tmp.c
	LIBS wt LABELS escape TIMEOUT 300)
add_dependencies(test_esc_tmp warden esc_tmp)

# The fast path's grammars under the real warden run (option prefixes,
# option values, argv[0] dispatch, shell flags, wrappers, environment).
wd_test(test_esc_grammar SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_grammar.c
	LIBS wt wd_policy LABELS escape TIMEOUT 300)
add_dependencies(test_esc_grammar warden)

# The project view's escapes: privileges lent, sensitive and control files
# changed without a decision, renames that make secrets ordinary.
add_executable(esc_view ${CMAKE_SOURCE_DIR}/tests/escape/esc_view.c)
set_target_properties(esc_view PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
wd_agent_program(esc_view)
wd_test(test_esc_view SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_view.c
	LIBS wt LABELS escape TIMEOUT 300)
add_dependencies(test_esc_view warden esc_view)

# Local control channels: Unix sockets outside the project.
add_executable(esc_sock ${CMAKE_SOURCE_DIR}/tests/escape/esc_sock.c)
set_target_properties(esc_sock PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
target_link_libraries(esc_sock PRIVATE Threads::Threads)
wd_agent_program(esc_sock)
wd_test(test_esc_sockets SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_sockets.c
	LIBS wt wd_store LABELS escape TIMEOUT 600)
add_dependencies(test_esc_sockets warden esc_sock)

# Escapes found by the adversarial review.
wd_test(test_esc_review SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_review.c
	LIBS wt wd_policy LABELS escape TIMEOUT 300)
add_dependencies(test_esc_review warden)

# The agent's terminal under the sandbox's /dev/pts (test_esc_tty), with
# its agent esc_tty.
add_executable(esc_tty ${CMAKE_SOURCE_DIR}/tests/escape/esc_tty.c)
set_target_properties(esc_tty PROPERTIES
	RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
wd_agent_program(esc_tty)
wd_test(test_esc_tty SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_tty.c
	LIBS wt LABELS escape TIMEOUT 300)
add_dependencies(test_esc_tty warden esc_tty)

# The refusal line on the agent's stderr raced into a file the agent may
# only read (test_esc_tell), with its agent esc_tell.
add_executable(esc_tell ${CMAKE_SOURCE_DIR}/tests/escape/esc_tell.c)
set_target_properties(esc_tell PROPERTIES
	RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
target_link_libraries(esc_tell PRIVATE Threads::Threads)
wd_agent_program(esc_tell)
wd_test(test_esc_tell SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_tell.c
	LIBS wt LABELS escape TIMEOUT 300)
add_dependencies(test_esc_tell warden esc_tell)
# The audit's journal: hidden from the agent like audit.db, with and
# without the project view.
wd_test(test_esc_journal SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_journal.c
	LIBS wt LABELS escape TIMEOUT 300)
add_dependencies(test_esc_journal warden)

# What the exec decoder remembers between execs never answers for a file
# system that changed (a directory made writable, moved into the project,
# a symlink on the way flipped).
wd_test(test_esc_decode SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_decode.c
	LIBS wt LABELS escape TIMEOUT 300)
add_dependencies(test_esc_decode warden)

# The working directory a command was decided in is the one it runs in: a
# thread's chdir is caught at the exec event, a CLONE_FS sibling refused.
add_executable(esc_cwd ${CMAKE_SOURCE_DIR}/tests/escape/esc_cwd.c)
set_target_properties(esc_cwd PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
target_link_libraries(esc_cwd PRIVATE Threads::Threads)
wd_agent_program(esc_cwd)
wd_test(test_esc_cwd SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_cwd.c
	${CMAKE_SOURCE_DIR}/tests/escape/escape_fx.c
	LIBS ${esc_libs} LABELS escape TIMEOUT 600)
add_dependencies(test_esc_cwd warden esc_cwd)

# Names for the network decisions: the session's resolver and the names it
# records, in a network namespace of the test's own (tests/helpers/netns.c).
wd_test(test_esc_names SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_names.c
	LIBS wt judge_server LABELS escape TIMEOUT 600)
add_dependencies(test_esc_names warden)
# The query flood bounds warden's memory: AddressSanitizer's quarantine of
# freed memory (256 MiB by default, resident once written) would be
# measured instead of warden. Leak detection stays on.
set_property(TEST test_esc_names APPEND PROPERTY ENVIRONMENT
	"ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:quarantine_size_mb=8")

# The session's resolver decides each queried name (test_esc_lookup).
wd_test(test_esc_lookup SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_lookup.c
	LIBS wt LABELS escape TIMEOUT 600)
add_dependencies(test_esc_lookup warden)
set_property(TEST test_esc_lookup APPEND PROPERTY ENVIRONMENT
	"ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:quarantine_size_mb=8")

# IP destinations: loopback, the host's own address, metadata, every
# spelling of them, races, datagrams, inherited sockets and the sockets
# that bypass connect (test_esc_net), with its agent esc_net.
add_executable(esc_net ${CMAKE_SOURCE_DIR}/tests/escape/esc_net.c)
set_target_properties(esc_net PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
target_link_libraries(esc_net PRIVATE Threads::Threads)
wd_agent_program(esc_net)
wd_test(test_esc_net SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_net.c
	LIBS wt LABELS escape TIMEOUT 600)
add_dependencies(test_esc_net warden esc_net)

# The split view's open invariants (fast subtrees watched by fanotify):
# names the user makes, renames and changes outside during the run,
# symlinks across the two parts, hard links made before, review runs.
wd_test(test_esc_split SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_split.c
	LIBS wt wd_policy LABELS escape TIMEOUT 600)
add_dependencies(test_esc_split warden)
# The name-changing calls the supervisor performs for the agent with the
# split view (test_esc_emul), with its agent esc_emul.
add_executable(esc_emul ${CMAKE_SOURCE_DIR}/tests/escape/esc_emul.c)
set_target_properties(esc_emul PROPERTIES
	RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
target_link_libraries(esc_emul PRIVATE Threads::Threads)
wd_agent_program(esc_emul)
wd_test(test_esc_emul SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_emul.c
	LIBS wt LABELS escape TIMEOUT 300)
add_dependencies(test_esc_emul warden esc_emul)
# The emulation's decisions in fast subtrees (test_esc_split_emul): control
# names planted, a sensitive file the user makes changed, a name flipped
# after the notification, fast roots removed and renamed; agent esc_emul.
wd_test(test_esc_split_emul SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_split_emul.c
	LIBS wt LABELS escape TIMEOUT 600)
add_dependencies(test_esc_split_emul warden esc_emul)
# Directories made during the session become fast subtrees
# (test_esc_split_bind), with its agent esc_bind.
add_executable(esc_bind ${CMAKE_SOURCE_DIR}/tests/escape/esc_bind.c)
set_target_properties(esc_bind PROPERTIES
	RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
target_link_libraries(esc_bind PRIVATE Threads::Threads)
wd_agent_program(esc_bind)
wd_test(test_esc_split_bind SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_split_bind.c
	LIBS wt LABELS escape TIMEOUT 600)
add_dependencies(test_esc_split_bind warden esc_bind)
# The adversarial review of the split view's emulation
# (test_esc_review_split), with its agent esc_review_split.
add_executable(esc_review_split ${CMAKE_SOURCE_DIR}/tests/escape/esc_review_split.c)
set_target_properties(esc_review_split PROPERTIES
	RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
target_link_libraries(esc_review_split PRIVATE Threads::Threads)
wd_agent_program(esc_review_split)
wd_test(test_esc_review_split SOURCES ${CMAKE_SOURCE_DIR}/tests/escape/test_esc_review_split.c
	LIBS wt LABELS escape TIMEOUT 300)
add_dependencies(test_esc_review_split warden esc_review_split)

# Every escape suite also runs in the all-FUSE view (name_fuse), as the
# default entries run what `auto` picks: the escapes must fail in every
# mechanism warden can choose. test_esc_split, test_esc_emul and
# test_esc_split_emul test the split view itself.
foreach(t test_escape test_esc_sys test_esc_files test_esc_identity test_esc_outside
		test_esc_codex test_esc_tmp test_esc_grammar test_esc_view test_esc_sockets
		test_esc_review test_esc_tty test_esc_tell test_esc_journal test_esc_decode
		test_esc_cwd test_esc_names test_esc_lookup test_esc_net)
	wd_test_fuse_twin(${t})
endforeach()
# The split view fails closed: the supervisor SIGKILLed while opens of a
# .env in a fast subtree wait for a person (test_esc_split_failclosed),
# with its agent esc_splitfc (untraced children forked without exec).
add_executable(esc_splitfc ${CMAKE_SOURCE_DIR}/tests/escape/esc_splitfc.c)
set_target_properties(esc_splitfc PROPERTIES
	RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/escape)
wd_agent_program(esc_splitfc)
wd_test(test_esc_split_failclosed SOURCES
	${CMAKE_SOURCE_DIR}/tests/escape/test_esc_split_failclosed.c
	LIBS wt LABELS escape TIMEOUT 300)
add_dependencies(test_esc_split_failclosed warden esc_splitfc)
