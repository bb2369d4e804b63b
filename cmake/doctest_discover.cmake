# Registers each doctest case of a test binary as its own CTest test, so `ctest` reports cases
# by name. Uses doctest's own CMake helper when installed, else one CTest entry per binary.
find_file(EIT_DOCTEST_CMAKE doctest.cmake PATHS /usr/lib/cmake/doctest /usr/share/doctest/cmake
          /usr/lib/x86_64-linux-gnu/cmake/doctest NO_DEFAULT_PATH)
if(EIT_DOCTEST_CMAKE)
  include(${EIT_DOCTEST_CMAKE})
endif()
# Extra arguments are CTest properties for every case of the binary (e.g. RESOURCE_LOCK name).
function(eit_discover_tests target)
  if(COMMAND doctest_discover_tests)
    doctest_discover_tests(${target} TEST_PREFIX "${target}:" ADD_LABELS 0
                           PROPERTIES TIMEOUT 600 ${ARGN})
  else()
    add_test(NAME ${target} COMMAND ${target})
  endif()
endfunction()
