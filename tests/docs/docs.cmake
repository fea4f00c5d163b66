# The house rules of docs/style.md that a script can check: citations of
# docs/ sections resolve, no source file is over 1,000 lines, and comments
# carry no history.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME check_tree COMMAND ${Python3_EXECUTABLE}
	${CMAKE_SOURCE_DIR}/tests/docs/check_tree.py ${CMAKE_SOURCE_DIR})
set_tests_properties(check_tree PROPERTIES LABELS "unit" TIMEOUT 60)
