// cascade_golden_gen OUTDIR: writes the golden wire samples of protocol v1
// (one .msgpack per message type plus one batch frame, each with a .json
// description) from tests/codec/golden_messages.hpp. The output is committed
// in schemas/golden/; codec_test checks the committed files against the same
// messages, so run this only for an intended wire change (schemas/README.md).

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "cascade/common/codec.hpp"
#include "cascade/tests/codec/golden_json.hpp"
#include "cascade/tests/codec/golden_messages.hpp"

namespace {

namespace fs = std::filesystem;
using cascade::proto::Bytes;

bool write_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) {
    std::cerr << "cannot write " << path << "\n";
    return false;
  }
  std::cout << "wrote " << path.string() << " (" << content.size() << " bytes)\n";
  return true;
}

bool write_pair(const fs::path& dir, std::string_view stem, const Bytes& bytes,
                const std::string& json) {
  const std::string base(stem);
  return write_file(dir / (base + ".msgpack"), bytes) && write_file(dir / (base + ".json"), json);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cascade;
  if (argc != 2) {
    std::cerr << "usage: cascade_golden_gen OUTDIR\n";
    return 2;
  }
  const fs::path dir = argv[1];
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::cerr << "cannot create " << dir << ": " << ec.message() << "\n";
    return 1;
  }
  auto samples = golden::single_samples();
  for (auto& s : golden::variant_samples())
    samples.push_back(std::move(s));
  for (const auto& s : samples) {
    const auto bytes = proto::encode(s.message);
    if (!write_pair(dir, s.stem, bytes,
                    golden::sample_json(s.stem, s.note, s.message, bytes.size())))
      return 1;
  }
  const auto batch = golden::reply_batch();
  const auto bytes = proto::encode_batch(batch);
  const auto json = golden::batch_json(golden::kBatchStem, golden::kBatchNote, batch, bytes.size());
  return write_pair(dir, golden::kBatchStem, bytes, json) ? 0 : 1;
}
