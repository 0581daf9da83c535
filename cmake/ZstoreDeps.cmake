# Finds every third-party dependency. Each comes from a Debian package; a
# missing one stops configuration with the name of the package to install.
find_package(PkgConfig)
if(NOT PkgConfig_FOUND)
  message(FATAL_ERROR "pkg-config not found: apt-get install pkg-config")
endif()

macro(zstore_require_pkg target module debian_package)
  pkg_check_modules(${target} IMPORTED_TARGET ${module})
  if(NOT ${target}_FOUND)
    message(FATAL_ERROR "${module} not found: apt-get install ${debian_package}")
  endif()
endmacro()

zstore_require_pkg(ZMQ libzmq libzmq3-dev)
zstore_require_pkg(ROCKSDB rocksdb librocksdb-dev)
zstore_require_pkg(UUID uuid uuid-dev)
# libsodium: the keyed hash (SipHash) of the CHP key index (storage/chp/chp_key_index.h).
zstore_require_pkg(SODIUM libsodium libsodium-dev)

find_path(CPPZMQ_INCLUDE_DIR zmq.hpp)
if(NOT CPPZMQ_INCLUDE_DIR)
  message(FATAL_ERROR "zmq.hpp not found: apt-get install cppzmq-dev")
endif()

# CONFIG: the BoostConfig.cmake Debian ships (cmake 3.30 removed FindBoost, CMP0167).
find_package(Boost 1.74 CONFIG COMPONENTS program_options unit_test_framework)
if(NOT Boost_FOUND)
  message(FATAL_ERROR "Boost not found: apt-get install libboost-dev libboost-program-options-dev libboost-test-dev")
endif()

# spdlog: leveled logging (Debian libspdlog-dev) rather than a hand-written logger.
find_package(spdlog CONFIG)
if(NOT spdlog_FOUND)
  message(FATAL_ERROR "spdlog not found: apt-get install libspdlog-dev")
endif()

# nlohmann/json: JSON output of the tools (Debian nlohmann-json3-dev).
find_package(nlohmann_json CONFIG)
if(NOT nlohmann_json_FOUND)
  message(FATAL_ERROR "nlohmann_json not found: apt-get install nlohmann-json3-dev")
endif()

find_package(Threads REQUIRED)

# RocksDB is linked from librocksdb.a (same package, librocksdb-dev), not
# librocksdb.so: inside the executable its thread-local counters (read on
# every iterator step) cost no __tls_get_addr call and its calls no PLT
# stub. A snapshot's RocksDB cursor costs about 10% less per key
# (docs/benchmarks.md, twenty-sixth pass). The compression libraries it
# calls are librocksdb-dev's own dependencies.
option(ZSTORE_ROCKSDB_STATIC "link RocksDB from librocksdb.a rather than librocksdb.so" ON)
if(ZSTORE_SANITIZE STREQUAL "thread" AND ZSTORE_ROCKSDB_STATIC)
  # tests/tsan.supp recognises RocksDB's frames by their library name.
  message(STATUS "TSan build: RocksDB from librocksdb.so (tests/tsan.supp names it)")
  set(ZSTORE_ROCKSDB_STATIC OFF)
endif()
add_library(zstore_rocksdb INTERFACE)
if(ZSTORE_ROCKSDB_STATIC)
  find_library(ZSTORE_ROCKSDB_ARCHIVE librocksdb.a HINTS ${ROCKSDB_LIBRARY_DIRS})
  if(NOT ZSTORE_ROCKSDB_ARCHIVE)
    message(FATAL_ERROR "librocksdb.a not found: apt-get install librocksdb-dev, or -DZSTORE_ROCKSDB_STATIC=OFF")
  endif()
  target_include_directories(zstore_rocksdb SYSTEM INTERFACE ${ROCKSDB_INCLUDE_DIRS})
  target_link_libraries(zstore_rocksdb INTERFACE ${ZSTORE_ROCKSDB_ARCHIVE} snappy lz4 zstd bz2 z Threads::Threads
                                                 ${CMAKE_DL_LIBS})
else()
  target_link_libraries(zstore_rocksdb INTERFACE PkgConfig::ROCKSDB)
endif()

add_library(zstore_zmq INTERFACE)
target_include_directories(zstore_zmq SYSTEM INTERFACE ${CPPZMQ_INCLUDE_DIR})
target_link_libraries(zstore_zmq INTERFACE PkgConfig::ZMQ)

# cpp-httplib: the HTTP client of zstore-cli admin, the ops tests and
# zstore-peer-load's etcd driver (zstored's server side is Boost.Beast,
# header-only in libboost-dev). Debian libcpp-httplib-dev ships httplib.h
# and a shared library built with OpenSSL/zlib/brotli; pkg-config gives the
# matching flags.
find_path(HTTPLIB_INCLUDE_DIR httplib.h)
pkg_check_modules(HTTPLIB IMPORTED_TARGET cpp-httplib)
if(NOT HTTPLIB_INCLUDE_DIR OR NOT HTTPLIB_FOUND)
  message(FATAL_ERROR "cpp-httplib (httplib.h) not found: apt-get install libcpp-httplib-dev")
endif()
add_library(zstore_httplib INTERFACE)
target_include_directories(zstore_httplib SYSTEM INTERFACE ${HTTPLIB_INCLUDE_DIR})
target_link_libraries(zstore_httplib INTERFACE PkgConfig::HTTPLIB)
# With CPPHTTPLIB_OPENSSL_SUPPORT (in the .pc's Cflags) httplib.h calls
# libcrypto inline (0.18: OPENSSL_thread_stop), but the .pc lists openssl
# only in Requires.private: whoever includes the header links libcrypto.
if(HTTPLIB_CFLAGS_OTHER MATCHES "CPPHTTPLIB_OPENSSL_SUPPORT")
  find_package(OpenSSL COMPONENTS Crypto)
  if(NOT OpenSSL_FOUND)
    message(FATAL_ERROR "OpenSSL (libcrypto) not found: apt-get install libssl-dev")
  endif()
  target_link_libraries(zstore_httplib INTERFACE OpenSSL::Crypto)
endif()
