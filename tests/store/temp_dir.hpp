#pragma once
// A fresh directory per test, removed afterwards, so tests can run in parallel
// (ctest -j) and leave nothing behind.

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace cascade::store_test {

class TempDir {
 public:
  TempDir() {
    // Uniqueness only: the name does not influence what the test does.
    std::random_device seed;
    std::mt19937_64 rng(seed());
    path_ =
        std::filesystem::temp_directory_path() / ("cascade-store-test-" + std::to_string(rng()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // A path no one can create a directory at, even root: its parent is a file.
  std::filesystem::path unwritable_dir() const {
    const auto file = path_ / "file.txt";
    std::ofstream(file) << "not a directory\n";
    return file / "sub";
  }

 private:
  std::filesystem::path path_;
};

}  // namespace cascade::store_test
