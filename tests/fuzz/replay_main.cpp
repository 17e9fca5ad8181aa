// The replay driver: runs a fuzz target's LLVMFuzzerTestOneInput over files,
// without libFuzzer, so that an ordinary build (any compiler) replays every
// seed and every past finding under ctest (label "fuzz"; docs/fuzzing.md).
//
//   fuzz_TARGET_replay PATH...
// A PATH that is a directory stands for its files (sorted; names starting
// with '.' or "README" left out); a missing directory stands for none. Exit
// status: 0 when every input ran, 2 when none did or a file cannot be read. A
// broken property aborts with the name of the input printed just before.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

bool is_input(const fs::directory_entry& entry) {
  const auto name = entry.path().filename().string();
  return entry.is_regular_file() && !name.starts_with('.') && !name.starts_with("README");
}

std::vector<fs::path> inputs_of(const fs::path& path) {
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& entry : fs::directory_iterator(path))
      if (is_input(entry)) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
  } else if (fs::exists(path)) {
    files.push_back(path);
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    for (const auto& file : inputs_of(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      const std::string bytes{std::istreambuf_iterator<char>(in), {}};
      if (!in.good() && !in.eof()) {
        std::fprintf(stderr, "cannot read %s\n", file.c_str());
        return 2;
      }
      std::fprintf(stderr, "replaying %s (%zu bytes)\n", file.c_str(), bytes.size());
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++ran;
    }
  }
  std::printf("%zu inputs replayed\n", ran);
  return ran > 0 ? 0 : 2;
}
