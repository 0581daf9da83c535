# Test tiers: every ctest test carries exactly one of these labels, so
# `ctest -L unit` (seconds, before every commit), `ctest -L integration` and
# `ctest -L system` split the suite by what a test needs and how long it runs.
#   unit         in process: no program of ours is started.
#   integration  starts our programs (zstored, zstore-cli, ...) on loopback.
#   system       the installed or packaged whole (install, package, image)
#                or a long or time-boxed run (torture, fuzzing, bench smoke).
# test_tiers_test (tests/support/tiers_test.py) fails when a test has no tier
# or two.
set(ZSTORE_TEST_TIERS unit integration system)

# zstore_label_test(name tier): labels a test by its folder under tests/
# (protocol, storage/chp, server/ha, ...: `ctest -L storage` matches every
# storage folder) and by its tier.
function(zstore_label_test name tier)
  if(NOT tier IN_LIST ZSTORE_TEST_TIERS)
    message(FATAL_ERROR "test ${name}: tier '${tier}' is not one of ${ZSTORE_TEST_TIERS}")
  endif()
  file(RELATIVE_PATH area ${PROJECT_SOURCE_DIR}/tests ${CMAKE_CURRENT_SOURCE_DIR})
  get_property(labels TEST ${name} PROPERTY LABELS)
  if(NOT area STREQUAL "" AND NOT area IN_LIST labels)
    list(APPEND labels ${area})
  endif()
  list(APPEND labels ${tier})
  set_property(TEST ${name} PROPERTY LABELS ${labels})
endfunction()
