# What `cmake --install` puts where, by component:
#   hub   cascade-hub and cascadectl, units and default config (cmake/ServiceFiles.cmake)
#   agent cascade-agent, its unit and default config
#   dev   the agent library (static archives), its headers under include/cascade/,
#         and the CMake package: find_package(cascade CONFIG) -> cascade::agent
include(CMakePackageConfigHelpers)

install(TARGETS cascade-hub cascadectl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT hub)
install(TARGETS cascade-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT agent)

# The library is a set of static archives: cascade::agent and what it is built
# on. Static, so an application carries the exact version it was tested with
# and the package has no ABI to keep; position-independent, so it also links
# into shared objects (language bindings, plugins).
set(_cascade_library_targets cascade_common cascade_sqlite cascade_agent_core cascade_agent_store
                             cascade_agent)
foreach(target ${_cascade_library_targets})
  string(REGEX REPLACE "^cascade_" "" export_name ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name}
                                             POSITION_INDEPENDENT_CODE ON)
endforeach()
install(TARGETS ${_cascade_library_targets} EXPORT cascadeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)

foreach(header ${CASCADE_AGENT_PUBLIC_HEADERS})
  get_filename_component(subdir ${header} DIRECTORY)
  install(FILES agent/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cascade/agent/${subdir}
          COMPONENT dev)
endforeach()
foreach(header ${CASCADE_COMMON_PUBLIC_HEADERS})
  install(FILES common/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cascade/common
          COMPONENT dev)
endforeach()

set(_cascade_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cascade)
install(EXPORT cascadeTargets NAMESPACE cascade:: DESTINATION ${_cascade_cmake_dir} COMPONENT dev)
configure_package_config_file(cmake/cascadeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cascadeConfig.cmake
                              INSTALL_DESTINATION ${_cascade_cmake_dir})
# 0.x: a minor version may change the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cascadeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cascadeConfig.cmake
              ${PROJECT_BINARY_DIR}/cascadeConfigVersion.cmake
        DESTINATION ${_cascade_cmake_dir} COMPONENT dev)

# Units and default configs, placed at install time (cmake/ServiceFiles.cmake).
function(cascade_install_service_files component units configs)
  install(CODE "
    set(CASCADE_DEPLOY_DIR \"${PROJECT_SOURCE_DIR}/deploy\")
    set(CASCADE_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
    set(CASCADE_UNITS \"${units}\")
    set(CASCADE_CONFIGS \"${configs}\")
    set(CASCADE_STAGE_DIR \"${PROJECT_BINARY_DIR}/service-files/${component}\")
    include(\"${PROJECT_SOURCE_DIR}/cmake/ServiceFiles.cmake\")"
    COMPONENT ${component})
endfunction()
cascade_install_service_files(hub "cascade-hub.service;cascade-hub@.service" hub.toml)
cascade_install_service_files(agent "cascade-agent@.service" agent-example.toml)
