#pragma once
// A fresh directory for key files, removed with everything in it at the end.

#include <unistd.h>

#include <filesystem>
#include <string>

namespace cascade::testing {

class TempKeyDir {
 public:
  TempKeyDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "cascade-keys-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempKeyDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempKeyDir(const TempKeyDir&) = delete;
  TempKeyDir& operator=(const TempKeyDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace cascade::testing
