#pragma once
// The web console's files (hub/console/), built into cascade-hub: their
// bytes are generated into a source file at build time (cmake/EmbedFiles.cmake),
// so the console is installed with the binary and read from nowhere else.

#include <span>
#include <string_view>

namespace cascade::hub::admin_api {

struct EmbeddedFile {
  std::string_view name;   // the file's base name: "index.html"
  std::string_view bytes;  // its content, exactly as in the source tree
};

// Every console file, index.html among them. Static storage; any thread.
std::span<const EmbeddedFile> console_files();

}  // namespace cascade::hub::admin_api
