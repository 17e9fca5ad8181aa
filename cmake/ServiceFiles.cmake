# Installs a component's systemd units and default configs. Runs at install
# time (Install.cmake includes it from install(CODE)), when CMAKE_INSTALL_PREFIX
# is the prefix really installed to (/usr inside a Debian package), so the
# units name the binaries where they are and the configs land where the units
# read them: /etc/cascade and /lib/systemd/system for /usr (Debian 12's places),
# PREFIX/etc/cascade and PREFIX/lib/systemd/system for any other prefix.
#
# Inputs: CASCADE_DEPLOY_DIR (deploy/), CASCADE_BINDIR (relative to the prefix),
# CASCADE_UNITS (unit names; deploy/systemd/NAME.in), CASCADE_CONFIGS (deploy/config/ files),
# CASCADE_STAGE_DIR (where the units are generated before they are installed:
# one folder per destination, so concurrent installs to different prefixes, as
# the tests make, never read each other's units).
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(CASCADE_CONFDIR /etc/cascade)
  set(_unit_dir /lib/systemd/system)
else()
  set(CASCADE_CONFDIR ${CMAKE_INSTALL_PREFIX}/etc/cascade)
  set(_unit_dir ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
endif()
set(CASCADE_BINDIR ${CMAKE_INSTALL_PREFIX}/${CASCADE_BINDIR})
file(READ ${CASCADE_DEPLOY_DIR}/systemd/hardening.inc CASCADE_HARDENING)
string(STRIP "${CASCADE_HARDENING}" CASCADE_HARDENING)

string(MD5 _destination "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(_stage ${CASCADE_STAGE_DIR}/${_destination})
foreach(unit ${CASCADE_UNITS})
  configure_file(${CASCADE_DEPLOY_DIR}/systemd/${unit}.in ${_stage}/${unit} @ONLY)
  file(INSTALL ${_stage}/${unit} DESTINATION ${_unit_dir}
       PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
endforeach()
foreach(config ${CASCADE_CONFIGS})
  file(INSTALL ${CASCADE_DEPLOY_DIR}/config/${config} DESTINATION ${CASCADE_CONFDIR}
       PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
endforeach()
