# Manual pages made from each program's --help by help2man (Debian wants one
# for every program in /usr/bin, and the units name them in Documentation=),
# installed gzipped with the program's component.
find_program(CASCADE_TOOL_HELP2MAN help2man REQUIRED)

function(cascade_man_page target component summary)
  set(page ${PROJECT_BINARY_DIR}/man/${target}.1)
  add_custom_command(
    OUTPUT ${page}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
    COMMAND ${CASCADE_TOOL_HELP2MAN} --no-info --section=1 --version-string=${PROJECT_VERSION}
            --name=${summary} --output=${page} $<TARGET_FILE:${target}>
    COMMAND gzip -9nf ${page}
    DEPENDS ${target}
    COMMENT "Manual page of ${target}"
    VERBATIM)
  add_custom_target(${target}-man ALL DEPENDS ${page}.gz)
  install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${component})
endfunction()

cascade_man_page(cascade-hub hub "hub of the cascade service registry")
cascade_man_page(cascadectl hub "operator CLI of the cascade service registry")
cascade_man_page(cascade-agent agent "sidecar agent of the cascade service registry")
