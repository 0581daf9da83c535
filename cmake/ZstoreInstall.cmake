# cmake --install: the client libraries (CHP clone client, Dafka producer and
# consumer) with their public headers, a CMake package config and pkg-config
# files, all in install component "development":
#
#   find_package(zstore 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE zstore::client zstore::dafka_client)
#
#   c++ app.cc $(pkg-config --cflags --libs zstore-client zstore-dafka-client)
#
# Headers land in include/zstore/client/ (#include <zstore/client/clone_client.h>;
# include/zstore is on the include path as well, for the headers' own
# "client/..." includes). The libraries are static and position independent
# (they may go into a consumer's shared library); they link libzmq and
# libuuid, which the package config and the .pc files name.
include(CMakePackageConfigHelpers)

set(ZSTORE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/zstore)
set(ZSTORE_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set_target_properties(zstore_client PROPERTIES EXPORT_NAME client POSITION_INDEPENDENT_CODE ON)
set_target_properties(zstore_dafka_client PROPERTIES EXPORT_NAME dafka_client POSITION_INDEPENDENT_CODE ON)
set_target_properties(zstore_protocol PROPERTIES EXPORT_NAME protocol POSITION_INDEPENDENT_CODE ON)
set_target_properties(zstore_security PROPERTIES EXPORT_NAME security POSITION_INDEPENDENT_CODE ON)
set_target_properties(zstore_zmq PROPERTIES EXPORT_NAME zmq)
foreach(lib zstore_client zstore_dafka_client zstore_protocol zstore_security)
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/zstore>)
endforeach()

install(TARGETS zstore_client zstore_dafka_client zstore_protocol zstore_security zstore_zmq EXPORT zstoreTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)

# The public headers: what clone_client.h, key_lookup.h, dafka_producer.h and
# dafka_consumer.h include (none of them includes ZeroMQ or protocol/;
# options.h includes the CURVE settings of security/).
install(FILES
    client/change.h
    client/client_stats.h
    client/clone_client.h
    client/dafka_consumer.h
    client/dafka_options.h
    client/dafka_producer.h
    client/key_lookup.h
    client/options.h
    client/pending_write.h
    client/CLONE-CLIENT.md
    client/DAFKA-CLIENT.md
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/zstore/client COMPONENT development)
install(FILES security/curve_cert.h security/curve_socket.h security/handshake_monitor.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/zstore/security COMPONENT development)

install(EXPORT zstoreTargets NAMESPACE zstore:: DESTINATION ${ZSTORE_CMAKE_DIR} COMPONENT development)
configure_package_config_file(cmake/zstoreConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/zstoreConfig.cmake
  INSTALL_DESTINATION ${ZSTORE_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/zstoreConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/zstoreConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/zstoreConfigVersion.cmake
  DESTINATION ${ZSTORE_CMAKE_DIR} COMPONENT development)

# pkg-config: prefix relative to the .pc file, so the files stay right under
# any install prefix (cmake --install --prefix DIR, DESTDIR, the .deb).
file(RELATIVE_PATH ZSTORE_PC_TO_PREFIX /prefix/${ZSTORE_PKGCONFIG_DIR} /prefix)
foreach(pc zstore-client zstore-dafka-client)
  configure_file(cmake/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc DESTINATION ${ZSTORE_PKGCONFIG_DIR} COMPONENT development)
endforeach()
