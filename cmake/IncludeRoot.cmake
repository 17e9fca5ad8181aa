# Makes ${CASCADE_INCLUDE_ROOT}/cascade a link to the source root, so that the
# build compiles "#include "cascade/agent/client.hpp"" from the same files an
# installed tree holds under include/cascade/ (cmake/Install.cmake).
set(CASCADE_INCLUDE_ROOT ${PROJECT_BINARY_DIR}/include)
file(MAKE_DIRECTORY ${CASCADE_INCLUDE_ROOT})
file(CREATE_LINK ${PROJECT_SOURCE_DIR} ${CASCADE_INCLUDE_ROOT}/cascade SYMBOLIC)
