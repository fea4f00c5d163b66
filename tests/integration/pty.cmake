# warden on a real terminal: --prompt tty and job control, a raw (TUI)
# agent, Ctrl-C and signals while a request waits.
wd_test(test_pty SOURCES ${CMAKE_SOURCE_DIR}/tests/integration/test_pty.c LIBS wt LABELS integration TIMEOUT 300)
add_dependencies(test_pty warden)
