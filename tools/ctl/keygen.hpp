#pragma once
// `cascadectl keygen NAME [--dir DIR]`: a new CurveZMQ key pair in
// DIR/NAME.key (secret, mode 0600) and DIR/NAME.pub. No hub is involved.

#include <filesystem>
#include <string_view>

#include "cascade/tools/ctl/commands.hpp"

namespace cascade::ctl {

// Writes the pair and says where, with the public key (for an authorised-keys
// line). Exit code 1 when a file of that name exists (keys are never
// overwritten) or cannot be written; 2 for a NAME that is not a plain file name.
CommandResult run_keygen(const std::filesystem::path& dir, std::string_view name);

}  // namespace cascade::ctl
