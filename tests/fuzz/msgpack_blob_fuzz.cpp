// Fuzz target: unpack_blob (common/msgpack_blob.hpp), which reads MessagePack
// blobs from SQLite files that may be damaged or foreign, as each of the
// types the stores keep in a blob.
// Properties: unpacking never throws and never asks for more memory than the
// blob can describe (ASan's allocation limit watches); a value that unpacks
// packs again and unpacks to an equal value. Seeds: schemas/golden/*.msgpack
// and tests/fuzz/corpus/msgpack_blob/.

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cascade/common/msgpack_blob.hpp"
#include "cascade/tests/fuzz/fuzz_support.hpp"

namespace cascade::fuzz {
namespace {

// As stored: the hub's instances.metadata (hub/sqlite_store.cpp) and the
// agent snapshot's instances and routes (agent/sqlite_snapshot_store.cpp).
using Metadata = std::map<std::string, std::string>;
using StoredInstance = std::tuple<std::string, std::string, std::uint32_t, std::string,
                                  std::uint8_t, std::map<std::string, std::string>>;
using StoredRoute = std::tuple<std::string, std::int32_t, bool, bool>;

template <typename T>
void check_blob(std::string_view bytes) {
  const auto value = unpack_blob<T>(bytes);
  if (!value) return;
  const auto again = unpack_blob<T>(pack_blob(*value));
  CASCADE_FUZZ_CHECK(again.has_value() && *again == *value);
}

}  // namespace
}  // namespace cascade::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cascade::fuzz;
  const auto bytes = as_text(data, size);
  check_blob<Metadata>(bytes);
  check_blob<std::vector<StoredInstance>>(bytes);
  check_blob<std::vector<StoredRoute>>(bytes);
  return 0;
}
