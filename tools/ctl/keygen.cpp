#include "cascade/tools/ctl/keygen.hpp"

#include "cascade/common/curve_keys.hpp"

namespace cascade::ctl {

CommandResult run_keygen(const std::filesystem::path& dir, std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos || name == "." || name == "..")
    return {ExitCode::kUsage, "", "cascadectl: keygen: NAME must be a plain file name\n"};
  try {
    const auto keys = curve::generate_key_pair();
    const auto [secret_file, public_file] = curve::write_key_files(dir, name, keys);
    return {ExitCode::kOk,
            "secret key: " + secret_file.string() + " (mode 0600; keep it on this host)\n" +
                "public key: " + public_file.string() + "\n" +
                "authorised-keys line: " + keys.public_z85 + " " + std::string(name) + " ROLE\n",
            ""};
  } catch (const curve::KeyError& e) {
    return {ExitCode::kNotFound, "", std::string("cascadectl: keygen: ") + e.what() + "\n"};
  }
}

}  // namespace cascade::ctl
