# Debian packages with CPack (`cpack -G DEB` in the build tree, or tools/package.sh):
#   cascade-hub      cascade-hub, cascadectl, cascade-hub.service, cascade-hub@.service,
#                    /etc/cascade/hub.toml
#   cascade-agent    cascade-agent, cascade-agent@.service, /etc/cascade/agent-example.toml
#   libcascade-dev   the agent library, headers and CMake package
# Both daemon packages create the cascade system user and /var/lib/cascade
# (deploy/debian/postinst.in); Depends: comes from the binaries' shared libraries.
set(_debian_dir ${PROJECT_SOURCE_DIR}/deploy/debian)
set(_package_stage ${PROJECT_BINARY_DIR}/debian)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cascade)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "cascade developers <cascade-dev@example.org>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Install with DESTDIR: the install-time scripts then see the real prefix (/usr)
# and put configs in /etc and units in /lib/systemd/system (ServiceFiles.cmake).
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL hub agent dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# The changelog's newest entry must be the version being packaged.
file(STRINGS ${_debian_dir}/changelog _changelog_head LIMIT_COUNT 1)
set(_package_version ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE})
if(NOT _changelog_head MATCHES "^cascade \\(${_package_version}\\) ")
  message(FATAL_ERROR "deploy/debian/changelog: the newest entry is not ${_package_version} "
                      "(project version ${PROJECT_VERSION}, release ${CPACK_DEBIAN_PACKAGE_RELEASE})")
endif()

# copyright: cascade's notice, then the notices of the header-only libraries
# compiled into the binaries, as Debian's packages of them state them.
file(READ ${_debian_dir}/copyright _copyright)
foreach(library libmsgpack-cxx-dev libcli11-dev libtoml11-dev nlohmann-json3-dev)
  file(READ /usr/share/doc/${library}/copyright _notice)
  string(APPEND _copyright "\n--- ${library} ---\n\n${_notice}")
endforeach()
file(WRITE ${_package_stage}/copyright "${_copyright}")
# Debian wants the changelog compressed with gzip -9n (no name, no timestamp).
execute_process(COMMAND gzip -9nc ${_debian_dir}/changelog
                OUTPUT_FILE ${_package_stage}/changelog.Debian.gz COMMAND_ERROR_IS_FATAL ANY)

# cascade_debian_package(COMPONENT NAME SUMMARY DESCRIPTION UNITS STATE_DIRS)
#   UNITS: the unit names the maintainer scripts stop and restart (globs allowed).
#   STATE_DIRS: what purging the package removes under /var/lib/cascade.
function(cascade_debian_package component name summary description)
  cmake_parse_arguments(P "" "" "UNITS;STATE_DIRS;CONFFILES;DEPENDS" ${ARGN})
  string(TOUPPER ${component} C)
  set(CPACK_DEBIAN_${C}_PACKAGE_NAME ${name} PARENT_SCOPE)
  set(CPACK_COMPONENT_${C}_DESCRIPTION "${summary}\n${description}" PARENT_SCOPE)
  set(CPACK_DEBIAN_${C}_PACKAGE_DEPENDS "${P_DEPENDS}" PARENT_SCOPE)
  install(FILES ${_package_stage}/copyright ${_package_stage}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${name} COMPONENT ${component}
          EXCLUDE_FROM_ALL)
  if(NOT P_UNITS)
    return()
  endif()
  set(PACKAGE ${name})
  list(JOIN P_STATE_DIRS " " STATE_DIRS)
  set(UNITS "")
  set(ENABLEMENT_LINKS "")
  foreach(unit ${P_UNITS})
    string(APPEND UNITS " '${unit}'")
    string(APPEND ENABLEMENT_LINKS " /etc/systemd/system/*.wants/${unit}")
  endforeach()
  string(STRIP "${UNITS}" UNITS)
  string(STRIP "${ENABLEMENT_LINKS}" ENABLEMENT_LINKS)
  set(control ${_package_stage}/${component})
  foreach(script postinst prerm postrm)
    configure_file(${_debian_dir}/${script}.in ${control}/${script} @ONLY)
  endforeach()
  list(JOIN P_CONFFILES "\n" conffiles)
  file(WRITE ${control}/conffiles "${conffiles}\n")
  set(CPACK_DEBIAN_${C}_PACKAGE_CONTROL_EXTRA
      "${control}/postinst;${control}/prerm;${control}/postrm;${control}/conffiles" PARENT_SCOPE)
endfunction()

cascade_debian_package(hub cascade-hub
  "cascade service registry: the hub and its operator CLI"
  "A hub of cascade, a service registry and discovery system built as a\n\
cascading network of heartbeat hubs: it holds the leases of the agents that\n\
beat to it, answers their lookups, isolates failing addresses and forwards\n\
what its tier lacks to the tier above. Includes cascadectl, the operator CLI,\n\
and the units cascade-hub.service and cascade-hub@.service (several hubs on\n\
one host)."
  UNITS cascade-hub.service cascade-hub@*.service
  STATE_DIRS /var/lib/cascade/hub /var/lib/cascade/hub-*
  CONFFILES /etc/cascade/hub.toml
  DEPENDS adduser)
cascade_debian_package(agent cascade-agent
  "cascade service registry: the sidecar agent"
  "The agent of cascade, a service registry and discovery system built as a\n\
cascading network of heartbeat hubs, as a daemon beside an application in any\n\
language: it registers the application's instances with its datacenter's\n\
hub by heartbeat and keeps the services the application uses fresh. One\n\
instance per application: cascade-agent@NAME.service reads\n\
/etc/cascade/agent-NAME.toml."
  UNITS cascade-agent@*.service
  STATE_DIRS /var/lib/cascade/agent-*
  CONFFILES /etc/cascade/agent-example.toml
  DEPENDS adduser)
cascade_debian_package(dev libcascade-dev
  "cascade service registry: the C++ agent library"
  "The in-process agent of cascade, a service registry and discovery system\n\
built as a cascading network of heartbeat hubs, for C++ applications:\n\
register, resolve, pick (eight load-balancing policies, routing rules),\n\
report failures and make resilient calls. Static archives, headers under\n\
/usr/include/cascade and a CMake package: find_package(cascade CONFIG)\n\
and link cascade::agent."
  DEPENDS "cppzmq-dev, libzmq3-dev, libsqlite3-dev, libspdlog-dev, pkg-config")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)

include(CPack)
