// Property: every message whose fields are within the protocol's bounds
// survives encode then decode unchanged, for every message type. The messages
// are random, drawn from the same field declarations the codec uses
// (common/message_fields.hpp), with a bias towards the edges of each bound
// (empty, one byte, the maximum). Whatever a hub or an agent encodes from
// valid state therefore decodes at its peer; what exceeds a bound is the
// sender's bug, and the decoder's refusal of it is tested in codec_test.cpp.
// Revision 6's lists of thousands (config uses, edits, entries) are filled to
// their bound too, one such list per message and with short strings and
// values inside, so that the message still fits a frame; elsewhere a config
// value is up to its 64 KiB and holds any byte.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cascade/common/codec.hpp"
#include "cascade/common/message_fields.hpp"
#include "cascade/tests/codec/golden_messages.hpp"

namespace cascade::proto {
namespace {

using wire::Bytes;
using wire::MaxItems;
using wire::Record;
using wire::Text;
using wire::Token;

// Fills every declared field with a random value inside its bounds.
class RandomFields {
 public:
  explicit RandomFields(std::mt19937_64& rng) : rng_(rng) {}

  void optional_from_here() {}

  template <typename T, typename... Bound>
  void field(const char* /*name*/, T& value, Bound... bound) {
    fill(value, bound...);
  }

  template <typename T>
  void fill_record(T& value) {
    wire::describe(*this, value);
  }

  // A whole message: each message may fill one large list to its bound.
  template <typename T>
  void fill_message(T& value) {
    large_list_filled_ = false;
    fill_record(value);
  }

 private:
  std::size_t below(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  bool coin() { return below(2) == 0; }

  // An edge of [0, max] or anything in between.
  std::uint64_t up_to(std::uint64_t max) {
    switch (below(4)) {
      case 0:
        return 0;
      case 1:
        return max;
      case 2:
        return std::min<std::uint64_t>(1, max);
      default:
        return std::uniform_int_distribution<std::uint64_t>(0, max)(rng_);
    }
  }
  std::size_t length(std::size_t min, std::size_t max) {
    if (compact_) max = std::min(max, std::max(min, kCompactBytes));
    return min + up_to(max - min);
  }
  // Lists stay short so that a message with nested lists fits a frame.
  std::size_t items(std::size_t max = 3) { return std::min<std::size_t>(max, below(4)); }

  void fill(std::uint64_t& v) { v = up_to(std::numeric_limits<std::uint64_t>::max()); }
  void fill(std::uint32_t& v) {
    v = static_cast<std::uint32_t>(up_to(std::numeric_limits<std::uint32_t>::max()));
  }
  void fill(std::int64_t& v) {
    v = static_cast<std::int64_t>(up_to(std::numeric_limits<std::uint64_t>::max()));
  }
  void fill(std::int32_t& v) {
    v = static_cast<std::int32_t>(up_to(std::numeric_limits<std::uint32_t>::max()));
  }
  void fill(bool& b) { b = coin(); }
  template <typename E>
  requires std::is_enum_v<E>
  void fill(E& e) {
    using Range = wire::EnumRange<E>;
    e = static_cast<E>(Range::min + up_to(Range::max - Range::min));
  }
  void fill(std::string& s, Text bound) {
    s.resize(length(0, bound.max));
    for (auto& c : s)
      c = static_cast<char>(below(256));
  }
  void fill(std::string& s, Token bound) {
    s.resize(length(1, bound.max));
    for (auto& c : s)
      c = static_cast<char>(0x20 + below(0x7f - 0x20));
  }
  // Any bytes: random, or every byte value in turn (0x00 and 0xff included).
  void fill(std::string& s, Bytes bound) {
    s.resize(length(0, bound.max));
    const bool every_value = coin();
    for (std::size_t i = 0; i < s.size(); ++i)
      s[i] = static_cast<char>(every_value ? 255 - i % 256 : below(256));
  }
  void fill(std::map<std::string, std::string>& metadata) {
    metadata.clear();
    const auto n = coin() ? kMaxMetadataEntries : items();
    for (std::size_t i = 0; i < n; ++i) {
      std::string value;
      fill(value, Text{kMaxMetadataValueBytes});
      metadata.emplace("k" + std::to_string(i) + std::string(below(kMaxMetadataKeyBytes - 3), 'x'),
                       std::move(value));
    }
  }
  void fill(std::vector<std::pair<std::string, std::uint64_t>>& counters) {
    counters.resize(items());
    for (auto& [name, value] : counters) {
      fill(name, Text{kMaxIdBytes});
      fill(value);
    }
  }
  template <Record T>
  void fill(T& value) {
    fill_record(value);
  }
  template <typename T, typename... Bound>
  void fill(std::vector<T>& list, Bound... bound) {
    list.resize(items());
    for (auto& item : list)
      fill(item, bound...);
  }
  template <typename T>
  void fill(std::vector<T>& list, MaxItems bound) {
    if (bound.max <= kMaxRouteRules) {
      list.resize(coin() ? bound.max : items());
      for (auto& item : list)
        fill(item);
      return;
    }
    // A large list: at its bound at most once per message, compact inside.
    const bool full = !compact_ && !large_list_filled_ && coin();
    list.resize(full ? bound.max : items());
    large_list_filled_ = large_list_filled_ || full;
    const bool outer_compact = compact_;
    compact_ = compact_ || full;
    for (auto& item : list)
      fill(item);
    compact_ = outer_compact;
  }
  template <typename T, typename... Bound>
  void fill(std::optional<T>& value, Bound... bound) {
    if (coin())
      value.reset();
    else
      fill(value.emplace(), bound...);
  }

  // Strings and values inside a large list filled to its bound stay this short.
  static constexpr std::size_t kCompactBytes = 8;

  std::mt19937_64& rng_;
  bool large_list_filled_ = false;
  bool compact_ = false;
};

class CodecProperty : public ::testing::TestWithParam<golden::Sample> {};

TEST_P(CodecProperty, EveryMessageWithinItsBoundsSurvivesEncodeThenDecode) {
  std::mt19937_64 rng(20261201);
  RandomFields random(rng);
  for (int round = 0; round < 200; ++round) {
    auto message = GetParam().message;
    std::visit([&](auto& m) { random.fill_message(m); }, message);
    const auto bytes = encode(message);
    const auto frame = decode_frame(bytes);
    ASSERT_EQ(frame.items.size(), 1u);
    const auto* decoded = std::get_if<Message>(&frame.items.front());
    ASSERT_NE(decoded, nullptr) << "round " << round << ": "
                                << std::get<DecodeFailure>(frame.items.front()).what;
    ASSERT_EQ(*decoded, message) << "round " << round << ", " << bytes.size() << " bytes";
  }
}

template <std::size_t... Alternative>
std::vector<Message> one_of_each_type(std::index_sequence<Alternative...>) {
  return {Message(std::in_place_index<Alternative>)...};
}

// Every golden sample, so every message type and every record in it, and a
// blank message of any type without a sample yet (named after its type).
std::vector<golden::Sample> all_samples() {
  auto samples = golden::single_samples();
  for (auto& variant : golden::variant_samples())
    samples.push_back(std::move(variant));
  for (auto& blank : one_of_each_type(std::make_index_sequence<std::variant_size_v<Message>>{})) {
    const auto type = type_of(blank);
    if (std::none_of(samples.begin(), samples.end(),
                     [&](const auto& s) { return type_of(s.message) == type; }))
      samples.push_back({to_string(type), "", std::move(blank)});
  }
  return samples;
}

INSTANTIATE_TEST_SUITE_P(EveryType, CodecProperty, ::testing::ValuesIn(all_samples()),
                         [](const auto& sample) {
                           auto name = std::string(sample.param.stem);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace cascade::proto
