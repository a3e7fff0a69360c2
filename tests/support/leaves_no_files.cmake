# The ctest fixture `scratch` (tests/CMakeLists.txt): every test runs with TMPDIR=${DIR}.
#   -DMODE=setup  suite.scratch_setup: an empty ${DIR}
#   -DMODE=check  suite.leaves_no_files: after the tests, ${DIR} must be empty: a test that leaves files behind
#                 fills a user's /tmp run after run
if(MODE STREQUAL "setup")
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
  return()
endif()
file(GLOB_RECURSE left LIST_DIRECTORIES true "${DIR}/*")
if(left)
  list(LENGTH left n)
  list(SUBLIST left 0 20 shown)
  string(REPLACE ";" "\n  " shown "${shown}")
  message(FATAL_ERROR "the tests left ${n} files and folders in ${DIR}:\n  ${shown}")
endif()
file(REMOVE_RECURSE "${DIR}")
