// The config centre on the wire (protocol revision 6, schemas/protocol-v1.md
// section 5.16): values are bytes carried as MessagePack bin, never str; the
// limits on values, keys and lists; a nil value as a removal; and encodings
// of earlier revisions (no config fields, no `more`) still decoding. Frames
// are made by editing the golden samples' MessagePack trees (wire_tree.hpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cascade/common/codec.hpp"
#include "cascade/tests/codec/golden_messages.hpp"
#include "cascade/tests/codec/wire_tree.hpp"

namespace cascade::proto {
namespace {

using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;
using wire::Bin;
using wire::Nil;
using wire::Node;

DecodedMessage decode_single(std::string_view bytes) {
  auto frame = decode_frame(bytes);
  if (frame.batched || frame.items.size() != 1)
    return DecodeFailure{ErrorCode::kMalformed, "test: not exactly one item", 0};
  return std::move(frame.items.front());
}

template <typename M>
const M* decoded_as(const DecodedMessage& item) {
  const auto* message = std::get_if<Message>(&item);
  return message != nullptr ? std::get_if<M>(message) : nullptr;
}

std::string describe(const DecodedMessage& item) {
  if (const auto* f = std::get_if<DecodeFailure>(&item))
    return std::string("failure ") + to_string(f->code) + ": " + f->what;
  return std::string("a ") + to_string(type_of(std::get<Message>(item)));
}

AssertionResult RoundTrips(const Message& m) {
  const auto item = decode_single(encode(m));
  if (const auto* back = std::get_if<Message>(&item); back != nullptr && *back == m)
    return AssertionSuccess();
  return AssertionFailure() << "decoded " << describe(item);
}

// Fails with `code` and exactly the text `what`.
AssertionResult FailsWith(const DecodedMessage& item, ErrorCode code, const std::string& what) {
  const auto* f = std::get_if<DecodeFailure>(&item);
  if (f != nullptr && f->code == code && f->what == what) return AssertionSuccess();
  return AssertionFailure() << "decoded " << describe(item) << "\nexpected failure "
                            << to_string(code) << ": " << what;
}

// Every byte value, then again from the top, `size` bytes in all.
std::string every_byte(std::size_t size = 256) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<char>(i % 256);
  return bytes;
}

// Where the samples keep their config values (indices into the message array).
// 28: DownBeat.config_updates[0].upserts[1].value, the binary one.
const std::vector<std::size_t> kEntryValue{11, 0, 4, 1, 1};
// 29: AdminRequest.config_edits[0].value and [1].value (nil: a removal).
const std::vector<std::size_t> kEditValue{13, 0, 1};
const std::vector<std::size_t> kRemovalValue{13, 1, 1};
// 33: ConfigReply.history[1].old_value.
const std::vector<std::size_t> kOldValue{9, 1, 2};

Node& at(Node& root, const std::vector<std::size_t>& path) {
  Node* n = &root;
  for (auto i : path)
    n = &(*n)[i];
  return *n;
}

// ------------------------------------------------------------- bytes

TEST(ConfigCodec, ValuesWithEveryByteValueSurviveInEveryRecordThatCarriesThem) {
  auto down = golden::downbeat_config_updates();
  for (auto& entry : down.config_updates[0].upserts)
    entry.value = every_byte();
  EXPECT_TRUE(RoundTrips(down));

  auto edit = golden::admin_config_edit();
  edit.config_edits[0].value = every_byte();
  EXPECT_TRUE(RoundTrips(edit));

  auto history = golden::config_reply_history();
  const auto bytes = every_byte();
  history.history[1].old_value = bytes;
  history.history[1].new_value = std::string(bytes.rbegin(), bytes.rend());
  EXPECT_TRUE(RoundTrips(history));

  auto reply = golden::config_reply();
  reply.entries[0].value = every_byte();
  const auto item = decode_single(encode(reply));
  const auto* back = decoded_as<ConfigReply>(item);
  ASSERT_NE(back, nullptr) << describe(item);
  ASSERT_EQ(back->entries[0].value.size(), 256u) << "a 0x00 byte does not end the value";
  for (std::size_t i = 0; i < 256; ++i)
    EXPECT_EQ(static_cast<unsigned char>(back->entries[0].value[i]), i);
}

TEST(ConfigCodec, ValuesTravelAsBinNeverAsStr) {
  auto tree = wire::parse(encode(golden::downbeat_config_updates()));
  EXPECT_EQ(at(tree, kEntryValue), Node(Bin{golden::feature_mask()}));
  tree = wire::parse(encode(golden::admin_config_edit()));
  EXPECT_EQ(at(tree, kEditValue), Node(Bin{"30000"})) << "a text value is bytes too";
  EXPECT_EQ(at(tree, kRemovalValue), Node(Nil{}));
}

TEST(ConfigCodec, AValueSentAsStrIsMalformedAndTheErrorNamesTheField) {
  struct Case {
    Message message;
    std::vector<std::size_t> path;
    std::string what;
  };
  const std::vector<Case> cases{
      {golden::downbeat_config_updates(), kEntryValue, "config_entry.value is not bytes (bin)"},
      {golden::admin_config_edit(), kEditValue, "config_edit.value is not bytes (bin)"},
      {golden::config_reply_history(), kOldValue, "config_change.old_value is not bytes (bin)"},
      {golden::config_reply(), {7, 0, 1}, "config_entry.value is not bytes (bin)"},
  };
  for (const auto& c : cases) {
    auto tree = wire::parse(encode(c.message));
    auto& value = at(tree, c.path);
    value = Node(std::get<Bin>(value.v).bytes);  // the same bytes, as a str
    EXPECT_TRUE(FailsWith(decode_single(wire::pack(tree)), ErrorCode::kMalformed, c.what));
  }
}

TEST(ConfigCodec, AValueOfAtMost64KiBIsAcceptedAndOneByteMoreIsInvalid) {
  ASSERT_EQ(kMaxConfigValueBytes, 64u * 1024);
  const auto longest = every_byte(kMaxConfigValueBytes);
  const auto too_long = every_byte(kMaxConfigValueBytes + 1);
  const std::string what = "longer than " + std::to_string(kMaxConfigValueBytes) + " bytes";

  auto down = golden::downbeat_config_updates();
  down.config_updates[0].upserts[1].value = longest;
  EXPECT_TRUE(RoundTrips(down));
  down.config_updates[0].upserts[1].value = too_long;
  EXPECT_TRUE(
      FailsWith(decode_single(encode(down)), ErrorCode::kInvalid, "config_entry.value " + what));

  auto edit = golden::admin_config_edit();
  edit.config_edits[0].value = longest;
  EXPECT_TRUE(RoundTrips(edit));
  edit.config_edits[0].value = too_long;
  EXPECT_TRUE(
      FailsWith(decode_single(encode(edit)), ErrorCode::kInvalid, "config_edit.value " + what));

  auto history = golden::config_reply_history();
  history.history[0].new_value = too_long;
  EXPECT_TRUE(FailsWith(decode_single(encode(history)), ErrorCode::kInvalid,
                        "config_change.new_value " + what));
}

// ------------------------------------------------------------- removal

TEST(ConfigCodec, AnEditWithANilValueDecodesAsARemovalAndAnEmptyValueAsASet) {
  const auto item = decode_single(encode(golden::admin_config_edit()));
  const auto* edit = decoded_as<AdminRequest>(item);
  ASSERT_NE(edit, nullptr) << describe(item);
  ASSERT_EQ(edit->config_edits.size(), 2u);
  EXPECT_EQ(edit->config_edits[0].value, std::optional<std::string>("30000"));
  EXPECT_EQ(edit->config_edits[1].key, "degrade.hm-query");
  EXPECT_FALSE(edit->config_edits[1].value.has_value()) << "nil: remove the key";

  // A value of no bytes is a value: the key is set, to nothing.
  auto tree = wire::parse(encode(golden::admin_config_edit()));
  at(tree, kRemovalValue) = Bin{};
  const auto empty = decode_single(wire::pack(tree));
  const auto* set = decoded_as<AdminRequest>(empty);
  ASSERT_NE(set, nullptr) << describe(empty);
  EXPECT_EQ(set->config_edits[1].value, std::optional<std::string>(""));
  EXPECT_NE(encode(*set), encode(golden::admin_config_edit()));
}

TEST(ConfigCodec, AnEntryValueIsNeverNil) {
  // Only an edit and a history record may lack a value; an entry always has one.
  auto tree = wire::parse(encode(golden::downbeat_config_updates()));
  at(tree, kEntryValue) = Nil{};
  EXPECT_TRUE(FailsWith(decode_single(wire::pack(tree)), ErrorCode::kMalformed,
                        "config_entry.value is not bytes (bin)"));
}

// ------------------------------------------------------------- keys and groups

TEST(ConfigCodec, KeysAndGroupsFollowTheNameRules) {
  struct Case {
    const char* field;
    std::string value;
    std::string what;
  };
  const std::string long_key(kMaxConfigKeyBytes + 1, 'k');
  const std::vector<Case> cases{
      {"key", "", "config_entry.key is empty"},
      {"key", "ttl\nms", "config_entry.key has a control character"},
      {"key", long_key, "config_entry.key longer than 255 bytes"},
      {"group", "", "config_update.group is empty"},
      {"group", std::string(kMaxServiceNameBytes + 1, 'g'),
       "config_update.group longer than 255 bytes"},
  };
  for (const auto& c : cases) {
    auto down = golden::downbeat_config_updates();
    if (std::string(c.field) == "key")
      down.config_updates[1].upserts[0].key = c.value;
    else
      down.config_updates[1].group = c.value;
    EXPECT_TRUE(FailsWith(decode_single(encode(down)), ErrorCode::kInvalid, c.what)) << c.field;
  }
  auto down = golden::downbeat_config_updates();
  down.config_updates[1].upserts[0].key = std::string(kMaxConfigKeyBytes, 'k');
  EXPECT_TRUE(RoundTrips(down));

  auto beat = golden::upbeat_configs();
  beat.configs[0].group = "tab\there";
  EXPECT_TRUE(FailsWith(decode_single(encode(beat)), ErrorCode::kInvalid,
                        "config_use.group has a control character"));
}

// ------------------------------------------------------------- list bounds

TEST(ConfigCodec, AnUpBeatFollowing1024GroupsIsAcceptedAnd1025AreInvalid) {
  auto beat = golden::upbeat_configs();
  beat.configs.clear();
  for (std::size_t i = 0; i < kMaxConfigUsesPerBeat; ++i)
    beat.configs.push_back({"group-" + std::to_string(i), i});
  EXPECT_TRUE(RoundTrips(beat));
  beat.configs.push_back({"one-too-many", 0});
  const auto item = decode_single(encode(beat));
  EXPECT_TRUE(FailsWith(item, ErrorCode::kInvalid, "UpBeat.configs holds more than 1024 items"));
  EXPECT_EQ(std::get<DecodeFailure>(item).ref, beat.seq) << "the beat's seq, for its ErrorReply";
}

TEST(ConfigCodec, OtherConfigListsAreBoundedToo) {
  auto down = golden::downbeat_config_updates();
  down.config_updates.assign(kMaxConfigUsesPerBeat + 1, down.config_updates[1]);
  EXPECT_TRUE(FailsWith(decode_single(encode(down)), ErrorCode::kInvalid,
                        "DownBeat.config_updates holds more than 1024 items"));

  // A served group holds at most 4096 keys from each of 8 tiers.
  const auto most = kMaxConfigKeysPerGroup * kMaxConfigTiers;
  down = golden::downbeat_config_updates();
  auto& upserts = down.config_updates[0].upserts;
  upserts.resize(most, golden::config_entry("k", "", 1, golden::kHubId, 1));
  EXPECT_TRUE(RoundTrips(down));
  upserts.push_back(upserts.back());
  EXPECT_TRUE(
      FailsWith(decode_single(encode(down)), ErrorCode::kInvalid,
                "config_update.upserts holds more than " + std::to_string(most) + " items"));

  auto edit = golden::admin_config_edit();
  edit.config_edits.assign(kMaxConfigKeysPerGroup, ConfigEdit{"k", std::nullopt});
  EXPECT_TRUE(RoundTrips(edit));
  edit.config_edits.push_back(edit.config_edits.back());
  EXPECT_TRUE(FailsWith(decode_single(encode(edit)), ErrorCode::kInvalid,
                        "AdminRequest.config_edits holds more than 4096 items"));
}

// ------------------------------------------------------------- enums

TEST(ConfigCodec, AnUnknownConfigViewIsInvalid) {
  for (const std::uint64_t view : {std::uint64_t{kMaxConfigView} + 1, std::uint64_t{255}}) {
    auto tree = wire::parse(encode(golden::config_request()));
    tree[3] = Node(view);
    const auto item = decode_single(wire::pack(tree));
    EXPECT_TRUE(FailsWith(item, ErrorCode::kInvalid,
                          "ConfigRequest.view has unknown value " + std::to_string(view)));
    EXPECT_EQ(std::get<DecodeFailure>(item).ref, golden::config_request().request_id);
  }
  for (const auto view : {ConfigView::kGet, ConfigView::kList, ConfigView::kHistory}) {
    auto request = golden::config_request();
    request.view = view;
    EXPECT_TRUE(RoundTrips(request));
  }
}

TEST(ConfigCodec, UnknownAdminOpsAndUpdateKindsOfConfigRecordsAreInvalid) {
  auto tree = wire::parse(encode(golden::admin_config_rollback()));
  tree[3] = Node(std::uint64_t{kMaxAdminOp} + 1);
  EXPECT_TRUE(FailsWith(decode_single(wire::pack(tree)), ErrorCode::kInvalid,
                        "AdminRequest.op has unknown value 12"));

  auto down = golden::downbeat_config_updates();
  down.config_updates[0].kind = static_cast<UpdateKind>(kMaxUpdateKind + 1);
  EXPECT_TRUE(FailsWith(decode_single(encode(down)), ErrorCode::kInvalid,
                        "config_update.kind has unknown value 3"));
}

// ------------------------------------------------------------- earlier revisions

TEST(ConfigCodec, AConfigUpdateWithoutMoreFromAnOlderWriterDecodesAsWhole) {
  auto sent = golden::downbeat_config_updates();
  sent.config_updates[0].more = true;
  auto tree = wire::parse(encode(sent));
  for (auto& update : tree[11].array())
    update.array().resize(6);  // ended at `removed`
  const auto item = decode_single(wire::pack(tree));
  const auto* down = decoded_as<DownBeat>(item);
  ASSERT_NE(down, nullptr) << describe(item);
  ASSERT_EQ(down->config_updates.size(), 2u);
  EXPECT_FALSE(down->config_updates[0].more) << "absent: the update came whole";
  EXPECT_EQ(*down, golden::downbeat_config_updates());

  auto reply = wire::parse(encode(golden::config_reply()));
  reply.array().resize(2 + 8);  // ended at `history`
  const auto answered = decode_single(wire::pack(reply));
  const auto* whole = decoded_as<ConfigReply>(answered);
  ASSERT_NE(whole, nullptr) << describe(answered);
  EXPECT_EQ(*whole, golden::config_reply());
}

TEST(ConfigCodec, BeatsOfRevision5WithoutConfigFieldsDecodeWithNone) {
  // Revision 5 ended an UpBeat at on_behalf_of, a DownBeat at stale, an
  // AdminRequest at routes.
  auto up = wire::parse(encode(golden::upbeat_configs()));
  up.array().resize(2 + 9);
  const auto beat_item = decode_single(wire::pack(up));
  const auto* beat = decoded_as<UpBeat>(beat_item);
  ASSERT_NE(beat, nullptr) << describe(beat_item);
  EXPECT_TRUE(beat->configs.empty());
  auto expected_beat = golden::upbeat_configs();
  expected_beat.configs.clear();
  EXPECT_EQ(*beat, expected_beat);

  auto down = wire::parse(encode(golden::downbeat_config_updates()));
  down.array().resize(2 + 9);
  const auto reply_item = decode_single(wire::pack(down));
  const auto* reply = decoded_as<DownBeat>(reply_item);
  ASSERT_NE(reply, nullptr) << describe(reply_item);
  EXPECT_TRUE(reply->config_updates.empty());
  EXPECT_EQ(*reply, golden::reply_to_node_a(4823));

  // The revision-5 samples, as they were committed, cut the same way.
  for (const auto& sample : {golden::upbeat(), golden::upbeat_via_proxy()}) {
    auto tree = wire::parse(encode(sample));
    tree.array().resize(2 + 9);
    const auto item = decode_single(wire::pack(tree));
    ASSERT_NE(decoded_as<UpBeat>(item), nullptr) << describe(item);
    EXPECT_EQ(std::get<Message>(item), Message(sample));
  }

  auto admin = wire::parse(encode(golden::admin_config_edit()));
  admin.array().resize(2 + 10);
  const auto admin_item = decode_single(wire::pack(admin));
  const auto* request = decoded_as<AdminRequest>(admin_item);
  ASSERT_NE(request, nullptr) << describe(admin_item);
  EXPECT_TRUE(request->config_group.empty());
  EXPECT_TRUE(request->config_edits.empty());
  EXPECT_EQ(request->config_version, 0u);
}

// ------------------------------------------------------------- the parser's limits

TEST(ConfigCodec, BinIsAcceptedInAnIgnoredTrailingFieldAndExtIsStillRefused) {
  const auto bytes = encode(golden::status_request());  // 93 01 07 4d
  ASSERT_EQ(bytes[0], '\x93');
  std::string with_bin = bytes;
  with_bin[0] = '\x94';
  with_bin += std::string("\xc4\x02\x00\xff", 4);  // bin 8 of 2 bytes
  const auto item = decode_single(with_bin);
  ASSERT_NE(decoded_as<StatusRequest>(item), nullptr) << describe(item);

  for (const auto& ext : {std::string("\xd4\x01\x00", 3),             // fixext 1
                          std::string("\xc7\x02\x01\x00\xff", 5)}) {  // ext 8 of 2 bytes
    std::string with_ext = bytes;
    with_ext[0] = '\x94';
    with_ext += ext;
    const auto refused = decode_single(with_ext);
    const auto* f = std::get_if<DecodeFailure>(&refused);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->code, ErrorCode::kTooLarge) << f->what;
  }
}

TEST(ConfigCodec, ABinClaimingMoreThanTheFrameHoldsIsRejected) {
  auto tree = wire::parse(encode(golden::config_reply()));
  const auto whole = wire::pack(tree);
  // The reply's first value, its bin header cut to claim 4 GiB - 1 bytes.
  const auto value = wire::pack(at(tree, {7, 0, 1}));
  const auto offset = whole.find(value);
  ASSERT_NE(offset, std::string::npos);
  std::string lying = whole.substr(0, offset) + std::string("\xc6\xff\xff\xff\xff", 5) +
                      whole.substr(offset + value.size());
  const auto item = decode_single(lying);
  const auto* f = std::get_if<DecodeFailure>(&item);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->code == ErrorCode::kMalformed || f->code == ErrorCode::kTooLarge) << f->what;
}

}  // namespace
}  // namespace cascade::proto
