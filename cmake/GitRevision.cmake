# Writes OUT (ridgeline/git_revision.hpp) with the checkout's revision at build time, not at configure time: a build
# after a commit reports the commit it was built from. Rewrites the file only when the revision changed, so an
# unchanged checkout recompiles nothing. Run by the ridgeline_git_revision target: cmake -DSRC=... -DOUT=... -P this.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SRC}"
                OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed)
  set(revision "")  # outside a checkout (a source archive): reports leave it empty
endif()
set(content "#pragma once\n// Generated at build time by cmake/GitRevision.cmake: the revision this build was made from (\"\" outside a\n// git checkout).\n#define RIDGELINE_GIT_REVISION \"${revision}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
