# ctest's install.consumer_example: installs this build into a fresh prefix (`cmake --install`), then
# configures, builds and runs examples/profile_linear against it as an outside project would
# (find_package(ridgeline CONFIG REQUIRED)), and checks what it prints. Leaves nothing behind.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX=... -DCXX_FLAGS=...
#         -DLINKER_FLAGS=... [-DPYTHON=... -DPYTHON_DIR=...] -P consumer_test.cmake
# With PYTHON (the interpreter the module was built for) and PYTHON_DIR (its install folder under the prefix), the
# installed `ridgeline` package is imported from the prefix alone and summarises a layer.
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "consumer_test.cmake: -D${v}= is missing")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    file(REMOVE_RECURSE "${WORK_DIR}")
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")

# the installed package must stand alone: no path into the source or build tree
file(GLOB_RECURSE cmake_files "${prefix}/lib/cmake/ridgeline/*.cmake")
foreach(f IN LISTS cmake_files)
  file(READ "${f}" text)
  foreach(tree "${SOURCE_DIR}" "${BUILD_DIR}")
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      file(REMOVE_RECURSE "${WORK_DIR}")
      message(FATAL_ERROR "${f} refers to ${tree}: the installed package depends on the tree it was built in")
    endif()
  endforeach()
endforeach()
foreach(f include/ridgeline/api.hpp include/ridgeline/config.hpp include/ridgeline/core/cost.hpp
          lib/cmake/ridgeline/ridgelineConfig.cmake lib/cmake/ridgeline/ridgelineConfigVersion.cmake bin/ridgeline)
  if(NOT EXISTS "${prefix}/${f}")
    file(REMOVE_RECURSE "${WORK_DIR}")
    message(FATAL_ERROR "the install has no ${f}")
  endif()
endforeach()

run("configuring examples/profile_linear against the install"
    ${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples/profile_linear" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
run("building examples/profile_linear" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("running profile_linear" "${WORK_DIR}/build/profile_linear" cpu 1)
message(STATUS "profile_linear printed:\n${run_output}")

# 64 x 1024 input, 512 outputs: 64*1024*512 = 33,554,432 MACs; the oneDNN backend ("cpu") ran it, its output
# agreed with the reference, and it has a time and a roofline verdict (any bound but "none"; "disturbed" when other
# work on a busy machine took its samples)
foreach(pattern "backend cpu\n" "macs 33554432\n" "verification passed\n" "median [0-9]+\\.[0-9]+ ms\n"
                "bound (compute|memory|overhead|ambiguous|mistrusted|disturbed)\n")
  if(NOT run_output MATCHES "${pattern}")
    file(REMOVE_RECURSE "${WORK_DIR}")
    message(FATAL_ERROR "profile_linear's output does not match '${pattern}'")
  endif()
endforeach()

if(DEFINED PYTHON AND DEFINED PYTHON_DIR)
  # linear 64 -> 32 at 8 x 64: params 64 * 32 + 32 = 2,080 (no ';' in the code: CMake would split the argument)
  run("importing the installed ridgeline package" ${CMAKE_COMMAND} -E env "PYTHONPATH=${prefix}/${PYTHON_DIR}"
      ${PYTHON} -c "print('params', (r := __import__('ridgeline')).summary(layer='linear:in_features=64,out_features=32', input=(8, 64))['totals']['params'], r.__file__)")
  if(NOT run_output MATCHES "^params 2080 ${prefix}/")
    file(REMOVE_RECURSE "${WORK_DIR}")
    message(FATAL_ERROR "the installed ridgeline package printed '${run_output}', not 'params 2080' from ${prefix}")
  endif()
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
