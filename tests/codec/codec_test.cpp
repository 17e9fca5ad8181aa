// Tests of the protocol v1 codec (common/codec.hpp) against the normative
// description in schemas/protocol-v1.md and the golden samples in
// schemas/golden/. The expected messages come from golden_messages.hpp, the
// same source the generator used; malformed frames are made by editing a
// golden frame's MessagePack tree (wire_tree.hpp), so every malformed shape is
// one precise step away from a valid one.

#include "cascade/common/codec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "cascade/common/digest.hpp"
#include "cascade/tests/codec/golden_json.hpp"
#include "cascade/tests/codec/golden_messages.hpp"
#include "cascade/tests/codec/wire_tree.hpp"
#include "cascade/tests/common/vm_peak.hpp"

namespace cascade::proto {
namespace {

namespace fs = std::filesystem;
using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;
using wire::Array;
using wire::kEvery;
using wire::Map;
using wire::Nil;
using wire::Node;

constexpr std::uint64_t kU32Max = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

// ------------------------------------------------------------------ helpers

std::string json_of(const Message& m) {
  golden::JsonWriter w;
  golden::write_message(w, m);
  return w.take();
}

std::string describe(const DecodedMessage& item) {
  if (const auto* f = std::get_if<DecodeFailure>(&item))
    return std::string("failure ") + to_string(f->code) + ": " + f->what;
  return json_of(std::get<Message>(item));
}

AssertionResult IsMessage(const DecodedMessage& item, const Message& expected) {
  if (const auto* m = std::get_if<Message>(&item); m != nullptr && *m == expected)
    return AssertionSuccess();
  return AssertionFailure() << "decoded " << describe(item) << "\nexpected " << json_of(expected);
}

AssertionResult IsFailure(const DecodedMessage& item, ErrorCode code) {
  if (const auto* f = std::get_if<DecodeFailure>(&item); f != nullptr && f->code == code)
    return AssertionSuccess();
  return AssertionFailure() << "decoded " << describe(item) << "\nexpected failure "
                            << to_string(code);
}

// Decodes a frame that must yield exactly one, non-batched item.
DecodedMessage decode_single(std::string_view bytes, const DecodeLimits& limits = {}) {
  auto frame = decode_frame(bytes, limits);
  EXPECT_FALSE(frame.batched);
  if (frame.items.size() != 1) {
    ADD_FAILURE() << "expected one item, got " << frame.items.size();
    return DecodeFailure{ErrorCode::kMalformed, "test: not exactly one item", 0};
  }
  return std::move(frame.items.front());
}

AssertionResult RoundTrips(const Message& m) {
  return IsMessage(decode_single(encode(m)), m);
}

const DecodeFailure* failure_of(const DecodedMessage& item) {
  return std::get_if<DecodeFailure>(&item);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Node u64(std::uint64_t v) {
  return Node(v);
}

// ------------------------------------------------------- the golden samples

// One committed sample: a single message or a batch frame.
struct GoldenCase {
  std::string stem;
  std::string note;
  std::vector<Message> messages;
  bool batched = false;

  Bytes encoded() const { return batched ? encode_batch(messages) : encode(messages.front()); }
  std::string json(std::size_t size) const {
    return batched ? golden::batch_json(stem, note, messages, size)
                   : golden::sample_json(stem, note, messages.front(), size);
  }
  Bytes committed() const { return read_file(dir() / (stem + ".msgpack")); }
  std::string committed_json() const { return read_file(dir() / (stem + ".json")); }
  static fs::path dir() { return fs::path(CASCADE_SOURCE_DIR) / "schemas" / "golden"; }
};

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases;
  for (auto& s : golden::single_samples())
    cases.push_back({std::string(s.stem), std::string(s.note), {s.message}, false});
  for (auto& s : golden::variant_samples())
    cases.push_back({std::string(s.stem), std::string(s.note), {s.message}, false});
  cases.push_back({std::string(golden::kBatchStem), std::string(golden::kBatchNote),
                   golden::reply_batch(), true});
  return cases;
}

void PrintTo(const GoldenCase& c, std::ostream* os) {
  *os << c.stem;
}

std::string case_name(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string name = info.param.stem;
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

// The frame decodes to exactly the case's messages.
AssertionResult MatchesCase(const DecodedFrame& frame, const GoldenCase& c) {
  if (frame.batched != c.batched)
    return AssertionFailure() << "batched=" << frame.batched << ", expected " << c.batched;
  if (frame.items.size() != c.messages.size())
    return AssertionFailure() << frame.items.size() << " items, expected " << c.messages.size();
  for (std::size_t i = 0; i < c.messages.size(); ++i)
    if (auto r = IsMessage(frame.items[i], c.messages[i]); !r) return r << " (item " << i << ")";
  return AssertionSuccess();
}

// The frame is rejected: at least one failure, every failure has `code`, and
// items that still decode are the ones expected at their place.
AssertionResult RejectedWith(const DecodedFrame& frame, const GoldenCase& c, ErrorCode code) {
  std::size_t failures = 0;
  for (std::size_t i = 0; i < frame.items.size(); ++i) {
    const auto* f = failure_of(frame.items[i]);
    if (f != nullptr && f->code != code)
      return AssertionFailure() << "item " << i << ": " << describe(frame.items[i]) << ", expected "
                                << to_string(code);
    if (f == nullptr && (i >= c.messages.size() || !IsMessage(frame.items[i], c.messages[i])))
      return AssertionFailure() << "item " << i << " decoded to something unexpected";
    failures += f != nullptr ? 1 : 0;
  }
  if (failures == 0) return AssertionFailure() << "frame decoded without any failure";
  return AssertionSuccess();
}

// Array paths, inside one message, of every record that may grow trailing
// fields (see "Forward compatibility" in schemas/protocol-v1.md), with the
// number of elements the record must have (later ones are optional).
struct RecordPath {
  std::vector<std::size_t> path;
  std::size_t required;
};

std::vector<RecordPath> record_paths(MsgType t) {
  const std::size_t whole = required_field_count(t) + 2;
  switch (t) {
    case MsgType::kUpBeat:  // registrations, uses, delta, its upserts and removed keys, configs
      return {{{}, whole},         {{6, kEvery}, 8},    {{7, kEvery}, 3}, {{8}, 4},
              {{8, 2, kEvery}, 8}, {{8, 3, kEvery}, 3}, {{11, kEvery}, 2}};
    case MsgType::kDownBeat:  // updates, upserts, routing rules, stale lists, config updates
      return {{{}, whole},
              {{8, kEvery}, 7},
              {{8, kEvery, 5, kEvery}, 6},
              {{8, kEvery, 7, kEvery}, 4},
              {{10, kEvery}, 3},
              {{11, kEvery}, 6},
              {{11, kEvery, 4, kEvery}, 5}};
    case MsgType::kQueryReply:  // instances, routing rules
      return {{{}, whole}, {{9, kEvery}, 6}, {{14, kEvery}, 4}};
    case MsgType::kAdminRequest:  // routing rules, config edits
      return {{{}, whole}, {{11, kEvery}, 4}, {{13, kEvery}, 2}};
    case MsgType::kConfigReply:  // entries, group summaries, history
      return {{{}, whole}, {{7, kEvery}, 5}, {{8, kEvery}, 6}, {{9, kEvery}, 6}};
    case MsgType::kStatusReply:  // upstreams
      return {{{}, whole}, {{12, kEvery}, 6}};
    case MsgType::kServicesReply:  // summaries
      return {{{}, whole}, {{3, kEvery}, 5}};
    case MsgType::kFailureReport:  // signals
      return {{{}, whole}, {{3, kEvery}, 6}};
    default:
      return {{{}, whole}};
  }
}

// Record paths for a whole golden frame; a batch's messages sit at [2][i].
std::vector<RecordPath> record_paths(const GoldenCase& c) {
  if (!c.batched) return record_paths(type_of(c.messages.front()));
  std::vector<RecordPath> paths{{{}, 3}};
  for (std::size_t i = 0; i < c.messages.size(); ++i) {
    for (auto rec : record_paths(type_of(c.messages[i]))) {
      rec.path.insert(rec.path.begin(), {2, i});
      paths.push_back(std::move(rec));
    }
  }
  return paths;
}

// Two values of a MessagePack family other than the node's own, never nil
// (nil is a legal value of UpBeat.registrations). Bytes get a str: the same
// content as text is still the wrong type.
std::vector<Node> wrong_values_for(const Node& n) {
  if (std::holds_alternative<bool>(n.v)) return {u64(1), Node("true")};
  if (std::holds_alternative<std::string>(n.v)) return {u64(7), Node(true)};
  if (const auto* bin = std::get_if<wire::Bin>(&n.v)) return {u64(7), Node(bin->bytes)};
  if (std::holds_alternative<std::uint64_t>(n.v) || std::holds_alternative<std::int64_t>(n.v))
    return {Node("7"), Node(true)};
  return {u64(1), Node(true)};  // nil, array, map
}

class CodecGoldenSample : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(CodecGoldenSample, CommittedFileDecodesToTheMessageBuiltInTheTest) {
  const auto& c = GetParam();
  EXPECT_TRUE(MatchesCase(decode_frame(c.committed()), c));
}

TEST_P(CodecGoldenSample, ReencodingGivesTheCommittedBytes) {
  const auto& c = GetParam();
  const auto committed = c.committed();
  EXPECT_EQ(c.encoded(), committed) << "wire bytes changed: regenerate (schemas/README.md) only "
                                       "if this is an intended wire change";
  // And the tree view agrees byte for byte, so the edits below start from the real frame.
  EXPECT_EQ(wire::pack(wire::parse(committed)), committed);
}

TEST_P(CodecGoldenSample, CommittedJsonDescribesTheMessage) {
  const auto& c = GetParam();
  EXPECT_EQ(c.committed_json(), c.json(c.committed().size()));
}

INSTANTIATE_TEST_SUITE_P(Golden, CodecGoldenSample, ::testing::ValuesIn(golden_cases()), case_name);

TEST(CodecGolden, EveryMessageTypeHasASampleInTypeOrder) {
  const auto samples = golden::single_samples();
  ASSERT_EQ(samples.size(), static_cast<std::size_t>(MsgType::kBatch) - 1);
  for (std::size_t i = 0; i < samples.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(type_of(samples[i].message)), i + 1) << samples[i].stem;
}

TEST(CodecGolden, UpBeatDigestIsTheDigestOfItsCanonicalRegistrations) {
  const auto beat = golden::upbeat();
  auto regs = *beat.registrations;
  canonicalize(regs);
  EXPECT_EQ(regs, *beat.registrations) << "the sample carries its set in canonical order";
  EXPECT_EQ(beat.digest, digest_of(regs));
  EXPECT_NE(beat.digest, 0u) << "0 is reserved for the empty set";
}

// A hub applies a received set in canonical order without copying it: the
// pointers must come out in the order canonicalize() leaves the members,
// including members with one key but two contents (which of them the
// registry keeps depends on it) and exact duplicates (dropped).
TEST(CodecDigest, CanonicalOrderIsCanonicalizeWithoutACopy) {
  std::mt19937 rng(7);
  std::vector<Registration> set;
  for (int i = 0; i < 300; ++i) {
    Registration r;
    r.service.name = "svc-" + std::to_string(rng() % 5);
    r.instance.id = "i-" + std::to_string(rng() % 40);
    r.instance.address = "h:" + std::to_string(rng() % 3);
    set.push_back(r);
  }
  auto copy = set;
  canonicalize(copy);
  std::vector<Registration> ordered;
  for (const Registration* r : canonical_order(set))
    ordered.push_back(*r);
  ASSERT_LT(copy.size(), set.size()) << "the sample must hold exact duplicates";
  EXPECT_EQ(ordered, copy);
}

TEST(CodecGolden, ErrorSampleIsWhatTheDecoderAnswersToItsFault) {
  auto beat = golden::upbeat();
  beat.seq = golden::error_reply().ref;
  beat.registrations->front().instance.address = std::string(kMaxAddressBytes + 1, 'a');
  const auto item = decode_single(encode(beat));
  const auto* f = failure_of(item);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(to_error_reply(*f), golden::error_reply());
}

// ------------------------------------------------------ malformed variations

class CodecMalformedSample : public CodecGoldenSample {};

TEST_P(CodecMalformedSample, TruncatedAtEveryOffsetIsRejected) {
  const auto bytes = GetParam().committed();
  for (std::size_t len = 0; len < bytes.size(); ++len)
    EXPECT_TRUE(IsFailure(decode_single(bytes.substr(0, len)), ErrorCode::kMalformed))
        << "prefix of " << len << " bytes";
}

TEST_P(CodecMalformedSample, BytesAfterTheMessageAreRejected) {
  const auto bytes = GetParam().committed();
  EXPECT_TRUE(IsFailure(decode_single(bytes + '\xc0'), ErrorCode::kMalformed));
  EXPECT_TRUE(IsFailure(decode_single(bytes + bytes), ErrorCode::kMalformed));
}

TEST_P(CodecMalformedSample, FrameOneByteOverMaxFrameBytesIsTooLarge) {
  const auto& c = GetParam();
  const auto bytes = c.committed();
  EXPECT_TRUE(
      IsFailure(decode_single(bytes, DecodeLimits{bytes.size() - 1}), ErrorCode::kTooLarge));
  EXPECT_TRUE(MatchesCase(decode_frame(bytes, DecodeLimits{bytes.size()}), c));
}

TEST_P(CodecMalformedSample, EveryFieldWithAWrongTypeIsRejectedAsMalformed) {
  const auto& c = GetParam();
  const auto tree = wire::parse(c.committed());
  const auto nodes = wire::count_below(tree);
  for (std::size_t i = 0; i < nodes; ++i) {
    for (int variant = 0; variant < 2; ++variant) {
      const auto edited = wire::with_edited_node(
          tree, i, [&](const Node& n) { return wrong_values_for(n)[variant]; });
      EXPECT_TRUE(RejectedWith(decode_frame(wire::pack(edited)), c, ErrorCode::kMalformed))
          << "node " << i << " of " << nodes << ", wrong value " << variant;
    }
  }
}

TEST_P(CodecMalformedSample, RecordMissingItsLastRequiredFieldIsRejected) {
  const auto& c = GetParam();
  for (const auto& rec : record_paths(c)) {
    auto tree = wire::parse(c.committed());
    bool edited = false;
    wire::for_each_at(tree, rec.path, [&](Node& record) {
      record.array().resize(rec.required - 1);
      edited = true;
    });
    if (!edited) continue;  // an empty list: no record to shorten
    EXPECT_TRUE(RejectedWith(decode_frame(wire::pack(tree)), c, ErrorCode::kMalformed))
        << "record path of length " << rec.path.size();
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, CodecMalformedSample, ::testing::ValuesIn(golden_cases()),
                         case_name);

// ------------------------------------------------------ forward compatibility

class CodecForwardCompatSample : public CodecGoldenSample {};

// Trailing values of every MessagePack family v1 uses (bin since revision 6),
// containers included.
Array future_fields() {
  return {Nil{},
          Node(true),
          u64(42),
          Node(std::int64_t{-7}),
          Node(2.5),
          Node("future"),
          Node(wire::Bin{std::string("\x00\xff", 2)}),
          Array{u64(1), Node("x")},
          Map{{Node("k"), Node("v")}}};
}

TEST_P(CodecForwardCompatSample, TrailingFieldsAreIgnoredAtEveryLevel) {
  const auto& c = GetParam();
  auto tree = wire::parse(c.committed());
  for (const auto& rec : record_paths(c)) {
    wire::for_each_at(tree, rec.path, [](Node& record) {
      for (auto& extra : future_fields())
        record.array().push_back(extra);
    });
  }
  const auto bytes = wire::pack(tree);
  ASSERT_NE(bytes, c.committed());
  EXPECT_TRUE(MatchesCase(decode_frame(bytes), c));
}

// The messages of a frame that decoded, encoded again as the same shape of frame.
Bytes reencode(const DecodedFrame& frame) {
  std::vector<Message> messages;
  for (const auto& item : frame.items)
    messages.push_back(std::get<Message>(item));
  return frame.batched ? encode_batch(messages) : encode(messages.front());
}

// Each optional field may be absent on its own (schemas/protocol-v1.md,
// section 7), not only a whole group of them: a record cut anywhere after its
// required fields decodes, and keeps every field it still carries.
TEST_P(CodecForwardCompatSample, RecordCutAnywhereAmongItsOptionalFieldsDecodes) {
  const auto& c = GetParam();
  for (const auto& rec : record_paths(c)) {
    auto whole = wire::parse(c.committed());
    std::size_t fields = 0;
    wire::for_each_at(whole, rec.path, [&](Node& record) { fields = record.array().size(); });
    for (std::size_t kept = rec.required; kept < fields; ++kept) {
      auto cut = whole;
      wire::for_each_at(cut, rec.path, [&](Node& record) { record.array().resize(kept); });
      const auto frame = decode_frame(wire::pack(cut));
      const auto failed = std::find_if(frame.items.begin(), frame.items.end(),
                                       [](const auto& item) { return failure_of(item); });
      ASSERT_EQ(failed, frame.items.end()) << describe(*failed) << "; record path of length "
                                           << rec.path.size() << " cut to " << kept << " fields";
      auto again = wire::parse(reencode(frame));
      wire::for_each_at(again, rec.path, [&](Node& record) { record.array().resize(kept); });
      EXPECT_EQ(again, cut) << "a field that was present changed, cut to " << kept << " fields";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, CodecForwardCompatSample, ::testing::ValuesIn(golden_cases()),
                         case_name);

TEST(CodecForwardCompat, UnknownVersionIsRejectedWithUnknownVersion) {
  for (const std::uint64_t version :
       {std::uint64_t{0}, std::uint64_t{2}, std::uint64_t{255}, kU32Max + 1, kU64Max}) {
    auto tree = wire::parse(encode(golden::upbeat()));
    tree[0] = u64(version);
    const auto item = decode_single(wire::pack(tree));
    EXPECT_TRUE(IsFailure(item, ErrorCode::kUnknownVersion)) << "version " << version;
    if (const auto* f = failure_of(item)) {
      EXPECT_EQ(to_error_reply(*f).code, ErrorCode::kUnknownVersion);
    }
  }
}

TEST(CodecForwardCompat, BatchFrameOfUnknownVersionIsRejectedAsOneFailure) {
  auto tree = wire::parse(encode_batch(golden::reply_batch()));
  tree[0] = u64(2);
  EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kUnknownVersion));
}

TEST(CodecForwardCompat, VersionThatIsNotAnUnsignedIntegerIsMalformed) {
  for (const Node& version : {Node("1"), Node(std::int64_t{-1}), Node(1.0), Node(Nil{})}) {
    auto tree = wire::parse(encode(golden::status_request()));
    tree[0] = version;
    EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kMalformed));
  }
}

// ------------------------------------------------------------- round trips

TEST(CodecRoundTrip, EveryMessageTypeSurvivesEncodeThenDecode) {
  for (const auto& s : golden::single_samples())
    EXPECT_TRUE(RoundTrips(s.message)) << s.stem;
}

TEST(CodecRoundTrip, SteadyStateUpBeatKeepsRegistrationsAbsent) {
  auto beat = golden::upbeat();
  beat.registrations.reset();
  EXPECT_TRUE(RoundTrips(beat));
  auto empty_set = beat;
  empty_set.registrations.emplace();
  empty_set.digest = 0;
  EXPECT_TRUE(RoundTrips(empty_set));
  EXPECT_NE(encode(beat), encode(empty_set)) << "nil (unchanged) and [] (no instances) differ";
}

TEST(CodecRoundTrip, ExtremeNumbersSurvive) {
  auto up = golden::upbeat();
  up.epoch = up.seq = up.digest = kU64Max;
  up.uses.front().version = kU64Max;
  up.registrations->front().instance.weight = static_cast<std::uint32_t>(kU32Max);
  EXPECT_TRUE(RoundTrips(up));

  auto down = golden::downbeat();
  down.lease_ms = static_cast<std::uint32_t>(kU32Max);
  down.hub_epoch = down.ack_seq = kU64Max;
  down.updates.front().from_version = down.updates.front().version = kU64Max;
  EXPECT_TRUE(RoundTrips(down));

  for (const std::int64_t uptime : {std::numeric_limits<std::int64_t>::min(), std::int64_t{-1},
                                    std::int64_t{0}, std::numeric_limits<std::int64_t>::max()}) {
    auto status = golden::status_reply();
    status.uptime_ms = uptime;
    status.tier = static_cast<std::uint32_t>(kU32Max);
    status.counters.emplace_back("max", kU64Max);
    EXPECT_TRUE(RoundTrips(status)) << uptime;
  }
}

TEST(CodecRoundTrip, EmptyListsAndOptionalStringsSurvive) {
  auto down = golden::downbeat();
  down.updates.clear();
  EXPECT_TRUE(RoundTrips(down));
  auto tool_query = golden::query();
  tool_query.node_id.clear();  // tools may ask without a node id
  EXPECT_TRUE(RoundTrips(tool_query));
  auto reply = golden::query_reply();
  reply.instances.front().zone.clear();
  reply.instances.front().metadata = {{"", ""}};
  EXPECT_TRUE(RoundTrips(reply));
  EXPECT_TRUE(RoundTrips(ServicesReply{5, {}}));
  EXPECT_TRUE(RoundTrips(ErrorReply{ErrorCode::kStaleEpoch, "", 0}));
}

TEST(CodecRoundTrip, EncodeIntoAppendsAfterExistingBytes) {
  Bytes out = "prefix";
  encode_into(golden::query(), out);
  EXPECT_EQ(out, "prefix" + encode(golden::query()));
}

TEST(CodecRoundTrip, BatchOfEveryMessageTypeKeepsItsOrder) {
  std::vector<Message> all;
  for (auto& s : golden::single_samples())
    all.push_back(s.message);
  const auto frame = decode_frame(encode_batch(all));
  EXPECT_TRUE(MatchesCase(frame, GoldenCase{"all", "", all, true}));
}

// The parser reads strings where the frame holds them; what it decodes must
// own its bytes, so the frame's buffer can go (the next ZeroMQ message).
TEST(CodecRoundTrip, DecodedMessagesOutliveTheFrameTheyCameFrom) {
  std::vector<Message> all;
  for (auto& s : golden::single_samples())
    all.push_back(s.message);
  auto bytes = encode_batch(all);
  const auto frame = decode_frame(bytes);
  std::fill(bytes.begin(), bytes.end(), '\xa5');
  bytes = Bytes();
  EXPECT_TRUE(MatchesCase(frame, GoldenCase{"all", "", all, true}));
}

TEST(CodecRoundTrip, EmptyBatchDecodesToNoItems) {
  const auto frame = decode_frame(encode_batch({}));
  EXPECT_TRUE(frame.batched);
  EXPECT_TRUE(frame.items.empty());
}

TEST(CodecRoundTrip, BatchOfMaxBatchMessagesIsAcceptedAndOneMoreIsTooLarge) {
  std::vector<Message> many(kMaxBatchMessages, StatusRequest{1});
  EXPECT_EQ(decode_frame(encode_batch(many)).items.size(), kMaxBatchMessages);
  many.emplace_back(StatusRequest{2});
  EXPECT_TRUE(IsFailure(decode_single(encode_batch(many)), ErrorCode::kTooLarge));
}

// ------------------------------------------------------------------ batches

TEST(CodecBatch, OneMalformedItemFailsAloneAndTheOthersDecode) {
  const std::vector<Message> sent{golden::upbeat(), golden::deregister(), golden::query()};
  auto tree = wire::parse(encode_batch(sent));
  tree[2][1][2] = u64(12);  // Deregister.node_id must be a string
  const auto frame = decode_frame(wire::pack(tree));
  ASSERT_TRUE(frame.batched);
  ASSERT_EQ(frame.items.size(), 3u);
  EXPECT_TRUE(IsMessage(frame.items[0], sent[0]));
  EXPECT_TRUE(IsFailure(frame.items[1], ErrorCode::kMalformed));
  EXPECT_TRUE(IsMessage(frame.items[2], sent[2]));
}

TEST(CodecBatch, EachBadItemFailsWithItsOwnCode) {
  const std::vector<Message> sent{golden::query(), golden::query(), golden::query(),
                                  golden::query(), golden::query()};
  auto tree = wire::parse(encode_batch(sent));
  tree[2][0][0] = u64(2);   // unknown version
  tree[2][1][1] = u64(99);  // unknown type
  tree[2][2] = Node("not a message");
  tree[2][3][5] = Node(std::string(kMaxServiceNameBytes + 1, 'g'));  // group over its limit
  const auto frame = decode_frame(wire::pack(tree));
  ASSERT_EQ(frame.items.size(), 5u);
  EXPECT_TRUE(IsFailure(frame.items[0], ErrorCode::kUnknownVersion));
  EXPECT_TRUE(IsFailure(frame.items[1], ErrorCode::kUnknownType));
  EXPECT_TRUE(IsFailure(frame.items[2], ErrorCode::kMalformed));
  EXPECT_TRUE(IsFailure(frame.items[3], ErrorCode::kInvalid));
  EXPECT_TRUE(IsMessage(frame.items[4], sent[4]));
}

TEST(CodecBatch, NestedBatchIsRejectedAsMalformedItem) {
  auto tree = wire::parse(encode_batch(std::vector<Message>{golden::query(), golden::query()}));
  tree[2][0] = wire::parse(encode_batch(std::vector<Message>{golden::query()}));
  const auto frame = decode_frame(wire::pack(tree));
  ASSERT_EQ(frame.items.size(), 2u);
  EXPECT_TRUE(IsFailure(frame.items[0], ErrorCode::kMalformed));
  EXPECT_TRUE(IsMessage(frame.items[1], golden::query()));
}

TEST(CodecBatch, BatchWithoutAMessageListIsRejectedAsMalformed) {
  auto tree = wire::parse(encode_batch(std::vector<Message>{golden::query()}));
  auto no_list = tree;
  no_list.array().pop_back();
  EXPECT_TRUE(IsFailure(decode_single(wire::pack(no_list)), ErrorCode::kMalformed));
  tree[2] = Map{{Node("0"), wire::parse(encode(golden::query()))}};
  EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kMalformed));
}

TEST(CodecBatch, FailedItemCarriesTheSeqOrRequestIdItCouldRead) {
  struct Case {
    Message message;
    std::size_t bad_field;  // index, in the message array, of a field made invalid
    std::uint64_t ref;
  };
  const std::vector<Case> cases{
      {golden::upbeat(), 7, golden::upbeat().seq},                                // uses
      {golden::deregister(), 2, golden::deregister().seq},                        // node_id
      {golden::query(), 4, golden::query().request_id},                           // service
      {golden::admin_config_edit(), 13, golden::admin_config_edit().request_id},  // edits
      {golden::config_request(), 3, golden::config_request().request_id},         // view
      {golden::status_request(), 1, 0},  // type: read before any ref
      {golden::downbeat(), 2, 0},        // replies carry no ref
  };
  for (const auto& c : cases) {
    auto tree = wire::parse(encode_batch(std::vector<Message>{c.message}));
    tree[2][0][c.bad_field] = Node(Nil{});
    const auto frame = decode_frame(wire::pack(tree));
    ASSERT_EQ(frame.items.size(), 1u);
    const auto* f = failure_of(frame.items[0]);
    ASSERT_NE(f, nullptr) << json_of(c.message);
    EXPECT_EQ(f->ref, c.ref) << f->what;
    EXPECT_EQ(to_error_reply(*f), (ErrorReply{f->code, f->what, c.ref}));
  }
}

// ------------------------------------------------------------ bad frames

std::string bytes_of(std::initializer_list<unsigned char> raw) {
  return {raw.begin(), raw.end()};
}

TEST(CodecMalformed, EmptyFrameIsRejected) {
  EXPECT_TRUE(IsFailure(decode_single(""), ErrorCode::kMalformed));
}

TEST(CodecMalformed, FrameThatIsNotAnArrayIsRejected) {
  for (const Node& root : {Node(Nil{}), Node(true), u64(1), Node(std::int64_t{-1}), Node(1.5),
                           Node("UpBeat"), Node(Map{{u64(0), u64(1)}})})
    EXPECT_TRUE(IsFailure(decode_single(wire::pack(root)), ErrorCode::kMalformed));
}

TEST(CodecMalformed, ArrayTooShortForVersionAndTypeIsRejected) {
  EXPECT_TRUE(IsFailure(decode_single(wire::pack(Array{})), ErrorCode::kMalformed));
  EXPECT_TRUE(IsFailure(decode_single(wire::pack(Array{u64(1)})), ErrorCode::kMalformed));
}

TEST(CodecMalformed, MessageWithOnlyVersionAndTypeIsRejected) {
  for (std::uint64_t t = 1; t <= proto::kMaxMsgType; ++t)
    EXPECT_TRUE(IsFailure(decode_single(wire::pack(Array{u64(1), u64(t)})), ErrorCode::kMalformed))
        << "type " << t;
}

TEST(CodecMalformed, UnknownTypeIsRejectedWithUnknownType) {
  for (const std::uint64_t type : {std::uint64_t{0}, std::uint64_t{proto::kMaxMsgType + 1},
                                   std::uint64_t{255}, std::uint64_t{256}, kU64Max}) {
    auto tree = wire::parse(encode(golden::status_request()));
    tree[1] = u64(type);
    EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kUnknownType)) << type;
  }
}

TEST(CodecMalformed, FrameOverDefaultMaxFrameBytesIsTooLarge) {
  const std::string big(kDefaultMaxFrameBytes + 1, '\x90');
  EXPECT_TRUE(IsFailure(decode_single(big), ErrorCode::kTooLarge));
}

TEST(CodecMalformed, ByteThatIsNeverMessagePackIsRejected) {
  EXPECT_TRUE(IsFailure(decode_single(bytes_of({0xc1})), ErrorCode::kMalformed));
  EXPECT_TRUE(IsFailure(decode_single(bytes_of({0x93, 0x01, 0x07, 0xc1})), ErrorCode::kMalformed));
}

// A string field, the limit the decoder applies to it, and how to put a value
// there in an otherwise valid golden message.
struct StringField {
  const char* name;
  std::size_t max_bytes;
  bool name_rules;  // must also be non-empty and free of control characters
  std::function<Message(const std::string&)> with;
};

std::vector<StringField> string_fields() {
  using namespace golden;
  return {
      {"UpBeat.node_id", kMaxServiceNameBytes, true,
       [](const std::string& s) {
         auto m = upbeat();
         m.node_id = s;
         return Message(m);
       }},
      {"registration.service", kMaxServiceNameBytes, true,
       [](const std::string& s) {
         auto m = upbeat();
         m.registrations->front().service.name = s;
         return Message(m);
       }},
      {"registration.id", kMaxIdBytes, true,
       [](const std::string& s) {
         auto m = upbeat();
         m.registrations->front().instance.id = s;
         return Message(m);
       }},
      {"use.group", kMaxServiceNameBytes, true,
       [](const std::string& s) {
         auto m = upbeat();
         m.uses.front().service.group = s;
         return Message(m);
       }},
      {"DownBeat.hub_id", kMaxServiceNameBytes, true,
       [](const std::string& s) {
         auto m = downbeat();
         m.hub_id = s;
         return Message(m);
       }},
      {"DownBeat.node_id", kMaxServiceNameBytes, true,
       [](const std::string& s) {
         auto m = downbeat();
         m.node_id = s;
         return Message(m);
       }},
      {"upsert.address", kMaxAddressBytes, true,
       [](const std::string& s) {
         auto m = downbeat();
         m.updates.front().upserts.front().address = s;
         return Message(m);
       }},
      {"upsert.zone", kMaxServiceNameBytes, false,
       [](const std::string& s) {
         auto m = downbeat();
         m.updates.front().upserts.front().zone = s;
         return Message(m);
       }},
      {"update.removed", kMaxIdBytes, false,
       [](const std::string& s) {
         auto m = downbeat();
         m.updates.front().removed = {s};
         return Message(m);
       }},
      {"Query.node_id", kMaxIdBytes, false,
       [](const std::string& s) {
         auto m = query();
         m.node_id = s;
         return Message(m);
       }},
      {"Query.service", kMaxServiceNameBytes, true,
       [](const std::string& s) {
         auto m = query();
         m.service.name = s;
         return Message(m);
       }},
      {"QueryReply.hub_id", kMaxServiceNameBytes, true,
       [](const std::string& s) {
         auto m = query_reply();
         m.hub_id = s;
         return Message(m);
       }},
      {"metadata key", kMaxMetadataKeyBytes, false,
       [](const std::string& s) {
         auto m = query_reply();
         m.instances.front().metadata = {{s, "v"}};
         return Message(m);
       }},
      {"metadata value", kMaxMetadataValueBytes, false,
       [](const std::string& s) {
         auto m = query_reply();
         m.instances.front().metadata = {{"k", s}};
         return Message(m);
       }},
      {"Deregister.node_id", kMaxServiceNameBytes, true,
       [](const std::string& s) {
         auto m = deregister();
         m.node_id = s;
         return Message(m);
       }},
      {"DeregisterAck.node_id", kMaxServiceNameBytes, true,
       [](const std::string& s) {
         auto m = deregister_ack();
         m.node_id = s;
         return Message(m);
       }},
      {"StatusReply.hub_id", kMaxServiceNameBytes, true,
       [](const std::string& s) {
         auto m = status_reply();
         m.hub_id = s;
         return Message(m);
       }},
      {"counter name", kMaxIdBytes, false,
       [](const std::string& s) {
         auto m = status_reply();
         m.counters = {{s, 1}};
         return Message(m);
       }},
      {"summary.service", kMaxServiceNameBytes, true,
       [](const std::string& s) {
         auto m = services_reply();
         m.services.front().service.name = s;
         return Message(m);
       }},
      {"ErrorReply.message", kMaxMessageBytes, false,
       [](const std::string& s) {
         auto m = error_reply();
         m.message = s;
         return Message(m);
       }},
      {"update.routes.text", kMaxRouteRuleBytes, false,
       [](const std::string& s) {
         auto m = downbeat_with_routes();
         m.updates.front().routes->front().text = s;
         return Message(m);
       }},
      {"QueryReply.routes.text", kMaxRouteRuleBytes, false,
       [](const std::string& s) {
         auto m = query_reply();
         m.routes = std::vector<RouteRuleText>{{s, 0, false, true}};
         return Message(m);
       }},
      {"AdminRequest.routes.text", kMaxRouteRuleBytes, false,
       [](const std::string& s) {
         auto m = admin_set_routes();
         m.routes.back().text = s;
         return Message(m);
       }},
  };
}

TEST(CodecLimits, StringsAtTheirLimitAreAccepted) {
  for (const auto& f : string_fields())
    EXPECT_TRUE(RoundTrips(f.with(std::string(f.max_bytes, 'a')))) << f.name;
}

TEST(CodecMalformed, StringsOverTheirLimitAreInvalid) {
  for (const auto& f : string_fields())
    EXPECT_TRUE(IsFailure(decode_single(encode(f.with(std::string(f.max_bytes + 1, 'a')))),
                          ErrorCode::kInvalid))
        << f.name;
}

TEST(CodecMalformed, NamesAndIdsThatAreEmptyOrHoldControlCharactersAreInvalid) {
  const std::vector<std::string> bad{"", std::string("a\0b", 3), "line\nbreak", "tab\there",
                                     "del\x7f"};
  for (const auto& f : string_fields()) {
    if (!f.name_rules) continue;
    for (const auto& s : bad)
      EXPECT_TRUE(IsFailure(decode_single(encode(f.with(s))), ErrorCode::kInvalid))
          << f.name << " = \"" << s << "\"";
  }
}

TEST(CodecLimits, FreeTextFieldsAcceptEmptyAndControlCharacters) {
  for (const auto& f : string_fields()) {
    if (f.name_rules) continue;
    EXPECT_TRUE(RoundTrips(f.with(""))) << f.name;
    EXPECT_TRUE(RoundTrips(f.with("tab\there"))) << f.name;
  }
}

TEST(CodecLimits, MetadataOfMaxEntriesIsAcceptedAndOneMoreIsInvalid) {
  auto reply = golden::query_reply();
  auto& md = reply.instances.front().metadata;
  md.clear();
  for (std::size_t i = 0; i < kMaxMetadataEntries; ++i)
    md.emplace("k" + std::to_string(i), "v");
  EXPECT_TRUE(RoundTrips(reply));
  md.emplace("one-too-many", "v");
  EXPECT_TRUE(IsFailure(decode_single(encode(reply)), ErrorCode::kInvalid));
}

TEST(CodecMalformed, EnumValuesOutOfRangeAreInvalid) {
  auto status = golden::query_reply();
  status.instances.front().status = static_cast<InstanceStatus>(kMaxInstanceStatus + 1);
  EXPECT_TRUE(IsFailure(decode_single(encode(status)), ErrorCode::kInvalid)) << "status";

  auto kind = golden::downbeat();
  kind.updates.front().kind = static_cast<UpdateKind>(kMaxUpdateKind + 1);
  EXPECT_TRUE(IsFailure(decode_single(encode(kind)), ErrorCode::kInvalid)) << "kind";

  auto code = golden::error_reply();
  code.code = static_cast<ErrorCode>(kMaxErrorCode + 1);
  EXPECT_TRUE(IsFailure(decode_single(encode(code)), ErrorCode::kInvalid)) << "code";

  auto tree = wire::parse(encode(golden::upbeat()));
  tree[6][0][6] = u64(kU64Max);  // registration status, far out of range
  EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kInvalid)) << "huge status";
}

TEST(CodecMalformed, NumbersTooLargeForTheirFieldAreInvalid) {
  struct Case {
    const char* field;
    Message message;
    std::vector<std::size_t> path;
    std::uint64_t value;
  };
  const std::vector<Case> cases{
      {"registration.weight", golden::upbeat(), {6, 0, 4}, kU32Max + 1},
      {"upsert.weight", golden::downbeat(), {8, 0, 5, 0, 2}, kU32Max + 1},
      {"DownBeat.lease_ms", golden::downbeat(), {7}, kU32Max + 1},
      {"DeregisterAck.removed", golden::deregister_ack(), {4}, kU32Max + 1},
      {"StatusReply.tier", golden::status_reply(), {4}, kU32Max + 1},
      {"StatusReply.uptime_ms",
       golden::status_reply(),
       {6},
       static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1},
      {"summary.instances", golden::services_reply(), {3, 0, 3}, kU32Max + 1},
      {"summary.up", golden::services_reply(), {3, 0, 4}, kU64Max},
  };
  for (const auto& c : cases) {
    auto tree = wire::parse(encode(c.message));
    wire::for_each_at(tree, c.path, [&](Node& n) { n = u64(c.value); });
    EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kInvalid)) << c.field;
  }
}

TEST(CodecMalformed, NegativeOrFractionalNumberWhereUnsignedExpectedIsMalformed) {
  for (const Node& seq : {Node(std::int64_t{-1}), Node(4821.0)}) {
    auto tree = wire::parse(encode(golden::deregister()));
    tree[4] = seq;
    EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kMalformed));
  }
}

TEST(CodecMalformed, HugeClaimedLengthsWithFewBytesAreRejected) {
  // malformed (the frame lies) or too_large (over a count limit) both name the
  // fault; what matters is that no claim is believed.
  const auto claims = {
      bytes_of({0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}),                        // array of 4 Gi
      bytes_of({0xdf, 0xff, 0xff, 0xff, 0xff, 0x01}),                        // map of 4 Gi
      bytes_of({0xdb, 0xff, 0xff, 0xff, 0xff, 0x61}),                        // string of 4 GiB
      bytes_of({0xdd, 0x00, 0x3f, 0xff, 0xff, 0x01}),                        // array of 4 Mi
      bytes_of({0xdb, 0x00, 0x3f, 0xff, 0xff, 0x61}),                        // string of 4 MiB
      bytes_of({0x98, 0x01, 0x01, 0xa1, 0x6e, 0x01, 0x02, 0x03, 0xdd, 0x00,  // UpBeat whose
                0x01, 0x00, 0x00, 0x90}),                                    // set claims 64 Ki
  };
  for (const auto& bytes : claims) {
    const auto item = decode_single(bytes);
    const auto* f = failure_of(item);
    ASSERT_NE(f, nullptr);
    EXPECT_THAT(f->code, ::testing::AnyOf(ErrorCode::kMalformed, ErrorCode::kTooLarge)) << f->what;
  }
}

TEST(CodecMalformed, DeepNestingIsRejectedAsTooLargeWithoutRecursingOnTheStack) {
  for (const std::size_t depth : {std::size_t{64}, std::size_t{100'000}}) {
    std::string bytes(depth, '\x91');  // [[[[...1...]]]]
    bytes += '\x01';
    EXPECT_TRUE(IsFailure(decode_single(bytes), ErrorCode::kTooLarge)) << depth;
  }
}

// ------------------------------------------------------------------- fuzz

// One to four random edits: bit flips, special bytes, insertions, deletions,
// truncation, duplicated slices. rng() % n keeps the sequence identical on
// every standard library, unlike the <random> distributions.
std::string mutate(std::string bytes, std::mt19937_64& rng) {
  static constexpr unsigned char kSpecial[] = {0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xc0, 0xc1,
                                               0xc2, 0xc3, 0xc4, 0xcc, 0xcf, 0xd0, 0xd3, 0xd9,
                                               0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xff};
  const auto edits = 1 + rng() % 4;
  for (std::uint64_t e = 0; e < edits && !bytes.empty(); ++e) {
    const auto at = rng() % bytes.size();
    switch (rng() % 6) {
      case 0:
        bytes[at] = static_cast<char>(bytes[at] ^ (1u << (rng() % 8)));
        break;
      case 1:
        bytes[at] = static_cast<char>(kSpecial[rng() % std::size(kSpecial)]);
        break;
      case 2:
        bytes.insert(at, 1, static_cast<char>(rng() % 256));
        break;
      case 3:
        bytes.erase(at, 1 + rng() % 8);
        break;
      case 4:
        bytes.resize(at);
        break;
      default:
        bytes.insert(rng() % bytes.size(), bytes.substr(at, 1 + rng() % 16));
        break;
    }
  }
  return bytes;
}

TEST(CodecFuzz, RandomMutationsOfGoldenSamplesNeverThrowAndStayConsistent) {
  std::vector<Bytes> seeds;
  for (const auto& c : golden_cases())
    seeds.push_back(c.committed());
  std::mt19937_64 rng(0xCA5CADE);
  std::size_t decoded = 0;
  for (int i = 0; i < 20'000; ++i) {
    const auto bytes = mutate(seeds[rng() % seeds.size()], rng);
    DecodedFrame frame;
    ASSERT_NO_THROW(frame = decode_frame(bytes)) << "iteration " << i;
    if (!frame.batched) {
      ASSERT_EQ(frame.items.size(), 1u) << "iteration " << i;
    }
    for (const auto& item : frame.items) {
      if (const auto* f = failure_of(item)) {
        // The decoder never claims an epoch problem; that is the hub's call.
        ASSERT_THAT(f->code, ::testing::AnyOf(ErrorCode::kUnknownVersion, ErrorCode::kMalformed,
                                              ErrorCode::kTooLarge, ErrorCode::kUnknownType,
                                              ErrorCode::kInvalid))
            << "iteration " << i;
        continue;
      }
      ++decoded;
      // Whatever decodes is a message the codec can carry again unchanged.
      ASSERT_TRUE(RoundTrips(std::get<Message>(item))) << "iteration " << i;
    }
  }
  RecordProperty("decoded_messages", static_cast<int>(decoded));
  EXPECT_GT(decoded, 0u) << "mutations too destructive to reach the field checks";
}

// ---------------------------------------------------------------- revisions

TEST(CodecForwardCompatibility, QueryReplyWithoutProvenanceFieldsDecodesWithDefaults) {
  // The first revision of QueryReply ended at `instances`.
  auto tree = wire::parse(encode(golden::query_reply()));
  tree.array().resize(2 + 8);
  for (auto& instance : tree[9].array())
    instance.array().resize(6);  // nor did instances carry a tier
  const auto decoded = decode_single(wire::pack(tree));
  ASSERT_TRUE(std::holds_alternative<Message>(decoded));
  const auto& reply = std::get<QueryReply>(std::get<Message>(decoded));
  EXPECT_EQ(reply.tier, 0u);
  EXPECT_EQ(reply.source, AnswerSource::kLocal);
  EXPECT_EQ(reply.age_ms, 0u);
  EXPECT_FALSE(reply.stale);
  ASSERT_EQ(reply.instances.size(), 2u);
  EXPECT_EQ(reply.instances[0].tier, 0u);
}

TEST(CodecForwardCompatibility, UpBeatOfTheFirstRevisionDecodesAsAnAgentsBeatWithoutDelta) {
  auto tree = wire::parse(encode(golden::hub_delta_upbeat()));
  tree.array().resize(2 + 6);  // ended at `uses`
  const auto decoded = decode_single(wire::pack(tree));
  ASSERT_TRUE(std::holds_alternative<Message>(decoded));
  const auto& beat = std::get<UpBeat>(std::get<Message>(decoded));
  EXPECT_FALSE(beat.delta.has_value());
  EXPECT_EQ(beat.sender_tier, 0u);
  EXPECT_EQ(beat.uses, golden::hub_delta_upbeat().uses);
}

TEST(CodecForwardCompatibility, StatusReplyOfTheFirstRevisionDecodesWithoutTierFields) {
  auto tree = wire::parse(encode(golden::status_reply()));
  tree.array().resize(2 + 9);  // ended at `counters`
  const auto decoded = decode_single(wire::pack(tree));
  ASSERT_TRUE(std::holds_alternative<Message>(decoded));
  const auto& status = std::get<StatusReply>(std::get<Message>(decoded));
  EXPECT_TRUE(status.upstreams.empty());
  EXPECT_TRUE(status.zone.empty());
  EXPECT_EQ(status.counters, golden::status_reply().counters);
}

TEST(CodecForwardCompatibility, RoutesAbsentFromAnEarlierEncodingReadAsNotSaid) {
  // Before revision 3's rules, an update ended at `removed`, a QueryReply at
  // `stale`, an AdminRequest at `share_percent`.
  auto down = wire::parse(encode(golden::downbeat_with_routes()));
  down[8][0].array().resize(7);
  const auto beat = decode_single(wire::pack(down));
  ASSERT_TRUE(std::holds_alternative<Message>(beat));
  const auto& update = std::get<DownBeat>(std::get<Message>(beat)).updates.at(0);
  EXPECT_FALSE(update.routes.has_value()) << "absent means unchanged";
  EXPECT_EQ(update.version, golden::downbeat_with_routes().updates[0].version);

  auto reply = wire::parse(encode(golden::query_reply()));
  reply.array().resize(2 + 12);
  const auto answered = decode_single(wire::pack(reply));
  ASSERT_TRUE(std::holds_alternative<Message>(answered));
  EXPECT_FALSE(std::get<QueryReply>(std::get<Message>(answered)).routes.has_value());

  auto admin = wire::parse(encode(golden::admin_set_routes()));
  admin.array().resize(2 + 9);
  const auto request = decode_single(wire::pack(admin));
  ASSERT_TRUE(std::holds_alternative<Message>(request));
  EXPECT_TRUE(std::get<AdminRequest>(std::get<Message>(request)).routes.empty());
}

// ---------------------------------------------------------------- routing rules

TEST(CodecRoutes, RulesSurviveInEveryMessageThatCarriesThem) {
  const std::vector<RouteRuleText> rules{
      {"=> zone = dc1", std::numeric_limits<std::int32_t>::max(), false, true},
      {"zone = dc3 =>", std::numeric_limits<std::int32_t>::min(), true, true},
      {"host = 10.* => tier = 0", -1, false, false},
      {"", 0, false, true},  // the hub refuses it; the wire carries it
  };
  auto down = golden::downbeat();
  down.updates[0].routes = rules;
  EXPECT_TRUE(RoundTrips(down));
  down.updates[0].routes = std::vector<RouteRuleText>{};  // "no rules" is not "unchanged"
  EXPECT_TRUE(RoundTrips(down));
  auto reply = golden::query_reply();
  reply.routes = rules;
  EXPECT_TRUE(RoundTrips(reply));
  reply.routes.reset();
  EXPECT_TRUE(RoundTrips(reply));
  auto admin = golden::admin_set_routes();
  admin.routes = rules;
  EXPECT_TRUE(RoundTrips(admin));
  admin.routes.clear();  // kSetRoutes with none: remove every rule
  EXPECT_TRUE(RoundTrips(admin));
}

TEST(CodecRoutes, MaxRulesAreAcceptedAndOneMoreIsInvalid) {
  auto admin = golden::admin_set_routes();
  admin.routes.assign(kMaxRouteRules, RouteRuleText{"=> zone = dc1", 0, false, true});
  EXPECT_TRUE(RoundTrips(admin));
  admin.routes.push_back(admin.routes.back());
  EXPECT_TRUE(IsFailure(decode_single(encode(admin)), ErrorCode::kInvalid));

  auto down = golden::downbeat_with_routes();
  down.updates[0].routes->assign(kMaxRouteRules + 1, RouteRuleText{"=> zone = a", 0, false, true});
  EXPECT_TRUE(IsFailure(decode_single(encode(down)), ErrorCode::kInvalid));
}

TEST(CodecRoutes, PriorityOutsideInt32IsInvalid) {
  for (const Node& priority :
       {Node(u64(std::uint64_t{std::numeric_limits<std::int32_t>::max()} + 1)),
        Node(std::int64_t{std::numeric_limits<std::int32_t>::min()} - 1)}) {
    auto tree = wire::parse(encode(golden::downbeat_with_routes()));
    tree[8][0][7][0][1] = priority;
    EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kInvalid));
    auto admin = wire::parse(encode(golden::admin_set_routes()));
    admin[11][0][1] = priority;
    EXPECT_TRUE(IsFailure(decode_single(wire::pack(admin)), ErrorCode::kInvalid));
  }
}

TEST(CodecRoutes, RoutesThatAreNotAListOrRulesOfTheWrongShapeAreMalformed) {
  auto tree = wire::parse(encode(golden::downbeat_with_routes()));
  tree[8][0][7] = Map{{Node("text"), Node("=> zone = a")}};
  EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kMalformed));

  tree = wire::parse(encode(golden::downbeat_with_routes()));
  tree[8][0][7][0] = Node("=> zone = a");  // a bare string, not [text, priority, force, enabled]
  EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kMalformed));

  tree = wire::parse(encode(golden::admin_set_routes()));
  tree[11] = Nil{};  // always a list in an AdminRequest
  EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kMalformed));
}

// ---------------------------------------------------------------- resource bounds

TEST(CodecMalformed, ErrorCodeZeroIsInvalid) {
  // ErrorCode starts at 1; read_error only checks the upper bound.
  auto tree = wire::parse(encode(golden::error_reply()));
  tree[2] = u64(0);
  EXPECT_TRUE(IsFailure(decode_single(wire::pack(tree)), ErrorCode::kInvalid));
}

using cascade::test_support::vm_peak_kib;

TEST(CodecMalformed, ClaimedCountsReserveNoMoreThanTheFrameCanHold) {
  // Seven nested arrays each claiming 4 Mi - 1 items: 35 bytes that would make
  // the parser reserve 7 x 64 MiB (16 bytes per claimed item) if the count
  // limit were max_frame_bytes rather than the size of the frame at hand. Run
  // in a fresh process so earlier tests do not hide the peak.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::string bytes;
        for (int i = 0; i < 7; ++i)
          bytes += bytes_of({0xdd, 0x00, 0x3f, 0xff, 0xff});
        const auto before = vm_peak_kib();
        const auto frame = decode_frame(bytes);
        const auto grown_mib = (vm_peak_kib() - before) / 1024;
        std::exit(frame.items.size() == 1 && failure_of(frame.items[0]) && grown_mib < 16 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ClipMessage, ShortTextIsKept) {
  EXPECT_EQ(clip_message("refused: no instance svc/i1"), "refused: no instance svc/i1");
  EXPECT_EQ(clip_message(std::string(kMaxMessageBytes, 'a')).size(), kMaxMessageBytes);
}

TEST(ClipMessage, LongTextIsCutAtACharacterBoundaryAndSaysSo) {
  // "é" is two bytes: a cut between them would leave half a character.
  std::string text;
  while (text.size() < 2 * kMaxMessageBytes)
    text += "\xc3\xa9";
  const auto clipped = clip_message(text);
  EXPECT_LE(clipped.size(), kMaxMessageBytes);
  ASSERT_TRUE(clipped.ends_with("..."));
  const auto body = clipped.substr(0, clipped.size() - 3);
  EXPECT_EQ(body.size() % 2, 0u);
  EXPECT_EQ(body, text.substr(0, body.size()));
}

}  // namespace
}  // namespace cascade::proto
