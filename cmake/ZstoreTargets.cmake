# Helpers that give every zstore target the same warnings, sanitizers and
# include root (the repository root: #include "protocol/chp_codec.h").

add_library(zstore_options INTERFACE)
target_compile_options(zstore_options INTERFACE -Wall -Wextra -Werror)
# GCC 12's libstdc++ raises false -Wrestrict errors on `"literal" + std::string`
# at -O2 (GCC bug 105329); the warning has no true positives in our code base.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(zstore_options INTERFACE -Wno-restrict)
endif()
target_include_directories(zstore_options INTERFACE ${PROJECT_SOURCE_DIR})

if(ZSTORE_SANITIZE STREQUAL "address")
  target_compile_options(zstore_options INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(zstore_options INTERFACE -fsanitize=address,undefined)
elseif(ZSTORE_SANITIZE STREQUAL "thread")
  target_compile_options(zstore_options INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(zstore_options INTERFACE -fsanitize=thread)
elseif(NOT ZSTORE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "ZSTORE_SANITIZE must be address, thread or empty, not '${ZSTORE_SANITIZE}'")
endif()
# Sanitizer instrumentation makes GCC's -Wmaybe-uninitialized fire inside
# libstdc++ (std::regex, std::function) where nothing is uninitialized; the
# plain build keeps the warning as an error.
if(NOT ZSTORE_SANITIZE STREQUAL "" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(zstore_options INTERFACE -Wno-maybe-uninitialized)
endif()

# zstore_add_library(name SOURCES ... LIBS ...). zstore_options (warnings,
# the source-tree include root) is a build-tree-only dependency, so the
# installed client libraries (cmake/ZstoreInstall.cmake) do not carry it.
function(zstore_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_link_libraries(${name} PUBLIC $<BUILD_INTERFACE:zstore_options> ${ARG_LIBS})
endfunction()

# zstore_add_executable(name SOURCES ... LIBS ... [COMPONENT c]): lands in
# build/bin/ and installs into bin/ as part of install component c (default
# "tools"; the Debian package ships the "server" component, see
# cmake/ZstorePackage.cmake).
function(zstore_add_executable name)
  cmake_parse_arguments(ARG "" "COMPONENT" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_COMPONENT)
    set(ARG_COMPONENT tools)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE zstore_options ${ARG_LIBS})
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${ARG_COMPONENT})
endfunction()

# zstore_test_env(test): what every test and every child it starts (they
# inherit the environment) runs with. ZSTORE_MIN_FREE_BYTES: each zstored a
# test starts refuses writes only below 1 MiB free, not below the 1 GiB
# default, so a nearly full CI disk does not fail tests that are not about
# the disk (tests/ops/disk_test.cpp passes its own --min-free-bytes, which
# wins). In a thread build, TSAN_OPTIONS reads tests/tsan.supp, the
# suppressions for uninstrumented Debian libraries. Every add_test calls it.
function(zstore_test_env name)
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT "ZSTORE_MIN_FREE_BYTES=1048576")
  if(ZSTORE_SANITIZE STREQUAL "thread")
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
      "TSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/tsan.supp second_deadlock_stack=1")
  endif()
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/ZstoreTestTiers.cmake)

# zstore_add_test(name SOURCES ... LIBS ... [LABELS ...] [TIMEOUT s] [TIER system]
# [ARGS ...]): one Boost.Test executable registered with ctest under its own
# name (run with ARGS, e.g. a --run_test filter),
# labelled by its folder and its tier (cmake/ZstoreTestTiers.cmake). The tier
# follows from the directory's add_dependencies, known at its end: unit when
# the test depends on no executable (it starts no program of ours),
# integration otherwise; TIER system overrides both.
function(zstore_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;TIER" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  if(ARG_TIER AND NOT ARG_TIER STREQUAL "system")
    message(FATAL_ERROR "zstore_add_test(${name}): TIER is only 'system' (unit and integration follow from its dependencies)")
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE zstore_options ${ARG_LIBS} Boost::unit_test_framework)
  target_compile_definitions(${name} PRIVATE BOOST_TEST_DYN_LINK BOOST_TEST_MODULE=${name})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name} --log_level=test_suite ${ARG_ARGS})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "ZSTORE_BIN_DIR=${CMAKE_BINARY_DIR}/bin")
  zstore_test_env(${name})
  if(ARG_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
  if(ARG_TIER)
    zstore_label_test(${name} ${ARG_TIER})
  else()
    # (EVAL: a deferred call reads its arguments when it runs, not now.)
    cmake_language(EVAL CODE "cmake_language(DEFER CALL zstore_label_tier [[${name}]])")
  endif()
endfunction()

# Labels a zstore_add_test test "unit" when its target depends on no
# executable (it runs in process, in seconds), "integration" otherwise.
function(zstore_label_tier name)
  get_property(deps TARGET ${name} PROPERTY MANUALLY_ADDED_DEPENDENCIES)
  set(tier unit)
  foreach(dep ${deps})
    if(NOT TARGET ${dep})
      set(tier integration)
    else()
      get_target_property(type ${dep} TYPE)
      if(type STREQUAL "EXECUTABLE" OR type STREQUAL "UTILITY")
        set(tier integration)
      endif()
    endif()
  endforeach()
  zstore_label_test(${name} ${tier})
endfunction()
