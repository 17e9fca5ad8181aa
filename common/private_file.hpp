#pragma once
// Files that hold secrets (Curve secret keys, bearer tokens) must be readable
// by their owner only: a secret other local users can read is no secret.

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>

namespace cascade {

// "" when `file` exists and neither group nor others may access it; else
// what is wrong, naming `what` and the file, with the command that fixes it.
inline std::string check_private_file(const std::filesystem::path& file, std::string_view what) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0)
    return "cannot read " + std::string(what) + " '" + file.string() + "': " + std::strerror(errno);
  constexpr auto kNotOwnerBits = S_IRWXG | S_IRWXO;
  if ((info.st_mode & kNotOwnerBits) == 0) return {};
  std::ostringstream mode;
  mode << std::oct << (info.st_mode & 0777);
  return std::string(what) + " '" + file.string() + "' is accessible by group or others (mode 0" +
         mode.str() + "); refusing to use it. Run: chmod 600 " + file.string();
}

}  // namespace cascade
