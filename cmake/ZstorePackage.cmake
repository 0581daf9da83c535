# Debian packages with CPack (cpack -G DEB in the build directory):
#   zstore         zstored, zstore-cli, zstore-dump, their man pages, the
#                  systemd unit zstored.service and /etc/zstore/zstored.conf
#                  (a conffile); the postinst creates the zstore user.
#   libzstore-dev  the client libraries, headers, CMake package and .pc files
#                  (cmake/ZstoreInstall.cmake).
# tests/package/package_test.sh builds both and checks them with dpkg-deb,
# lintian and systemd-analyze. Install components: "server" (the programs,
# their man pages), "system" (unit, config: only in the package, never in a
# plain `cmake --install`), "development".

# Man pages from each program's --help (Debian help2man), gzipped as Debian
# wants them; built with the programs when help2man is installed
# (tools/test installs it).
find_program(ZSTORE_HELP2MAN help2man)
set(ZSTORE_MAN_PAGES)
if(ZSTORE_HELP2MAN)
  set(zstored_summary "durable CHP (clone) and Dafka store server on RocksDB")
  set(zstore-cli_summary "command-line client of zstored: CHP keys, Dafka records, admin")
  set(zstore-dump_summary "print a zstore data directory without modifying it")
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/man)
  foreach(program zstored zstore-cli zstore-dump)
    set(page ${CMAKE_BINARY_DIR}/man/${program}.1)
    add_custom_command(OUTPUT ${page}.gz
      COMMAND ${ZSTORE_HELP2MAN} --no-info --no-discard-stderr --section=1
              --version-string=${PROJECT_VERSION} "--name=${${program}_summary}"
              --output=${page} $<TARGET_FILE:${program}>
      COMMAND gzip -9nf ${page}
      DEPENDS ${program}
      COMMENT "help2man ${program}"
      VERBATIM)
    list(APPEND ZSTORE_MAN_PAGES ${page}.gz)
  endforeach()
  add_custom_target(zstore_man_pages ALL DEPENDS ${ZSTORE_MAN_PAGES})
  install(FILES ${ZSTORE_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT server)
else()
  message(STATUS "help2man not found (apt-get install help2man): no man pages in the package")
endif()

# The service: unit, default config, Debian docs. Absolute destinations,
# installed only when the component is asked for (CPack does).
# /usr/lib/systemd/system: the merged-/usr path (Debian 13's lintian rejects
# /lib as an aliased location; Debian 12's systemd reads both).
install(FILES packaging/zstored.service DESTINATION /usr/lib/systemd/system COMPONENT system EXCLUDE_FROM_ALL)
install(FILES packaging/zstored.conf DESTINATION /etc/zstore COMPONENT system EXCLUDE_FROM_ALL)
set(ZSTORE_DEB_CHANGELOG ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz)
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/packaging)
add_custom_command(OUTPUT ${ZSTORE_DEB_CHANGELOG}
  COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/packaging/debian/changelog > ${ZSTORE_DEB_CHANGELOG}
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/debian/changelog)
add_custom_target(zstore_deb_changelog ALL DEPENDS ${ZSTORE_DEB_CHANGELOG})
foreach(component system development)
  set(package zstore)
  if(component STREQUAL development)
    set(package libzstore-dev)
  endif()
  install(FILES packaging/debian/copyright ${ZSTORE_DEB_CHANGELOG}
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component} EXCLUDE_FROM_ALL)
endforeach()

set(CPACK_PACKAGE_NAME zstore)
set(CPACK_PACKAGE_VENDOR "zstore")
set(CPACK_PACKAGE_CONTACT "zstore developers <zstore@example.org>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL server system development)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_DEB_COMPONENT_INSTALL ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)

set(CPACK_DEBIAN_DAEMON_PACKAGE_NAME zstore)
set(CPACK_DEBIAN_DAEMON_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_DAEMON_DESCRIPTION "durable ZeroMQ CHP (clone) and Dafka store server
zstored serves two ZeroMQ protocols from one RocksDB database: the
Clustered Hashmap Protocol (a key-value map shared by many clients, with
snapshots, sequenced updates, deletes and TTLs, optionally as a Binary Star
pair) and the Dafka store (durable partition logs with an embedded tower).

The package runs zstored as the zstore user under a hardened systemd unit,
with its database in /var/lib/zstore and its settings in
/etc/zstore/zstored.conf; it also ships zstore-cli and zstore-dump.")
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
  ${PROJECT_SOURCE_DIR}/packaging/debian/prerm
  ${PROJECT_SOURCE_DIR}/packaging/debian/postrm
  ${PROJECT_SOURCE_DIR}/packaging/debian/conffiles)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libzstore-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_SHLIBDEPS OFF)
# The pkg-config implementation is named by release: tools/setup.sh passes
# its ZSTORE_PKG_CONFIG_PACKAGE (Debian 12: pkg-config; 13: pkgconf, whose
# lintian calls pkg-config obsolete); either alternative without it.
set(ZSTORE_DEB_PKG_CONFIG "pkgconf | pkg-config" CACHE STRING
    "the libzstore-dev package's dependency that provides pkg-config")
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libzmq3-dev, uuid-dev, ${ZSTORE_DEB_PKG_CONFIG}")
set(CPACK_DEBIAN_DEV_DESCRIPTION "zstore client libraries (CHP clone client, Dafka producer and consumer)
Static libraries and headers to talk to zstored from C++20 programs:
a CHP clone client (zstore::client, pkg-config zstore-client) and a Dafka
producer and consumer (zstore::dafka_client, pkg-config
zstore-dafka-client), with a CMake package: find_package(zstore).")

include(CPack)
cpack_add_component_group(daemon)
cpack_add_component_group(dev)
cpack_add_component(server GROUP daemon)
cpack_add_component(system GROUP daemon)
cpack_add_component(development GROUP dev)
