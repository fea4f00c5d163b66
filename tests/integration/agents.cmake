# Real agent harnesses' exec shapes (issue 10): a scripted stand-in for
# Claude Code (tests/helpers/prog_fake_claude.c) under `warden run`.
wd_test(test_agents SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_agents.c LIBS wt LABELS integration)
add_dependencies(test_agents warden fake_claude)
