#pragma once
// libldns for C++: include this, never <ldns/ldns.h> directly. Without
// stdbool.h's marker, ldns/common.h defines the macros `bool`, `true` and
// `false` (as _Bool, 1 and 0), which break the standard library's headers
// included after it (`bool(x) <=> false` in <optional> no longer compiles).
// GCC's <stdbool.h> sets the marker in C++ and defines nothing else there.

// The order matters: clang-format must not sort these two.
// clang-format off
#include <stdbool.h>  // NOLINT(modernize-deprecated-headers): the marker, see above
#include <ldns/ldns.h>
// clang-format on
