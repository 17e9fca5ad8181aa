// Lists larger than a frame (schemas/protocol-v1.md, section 5.13): the
// sender's split and the receiver's assembly, on messages of the size that
// broke consumers before (150,000 instances, a 6 MB reply).

#include "cascade/common/message_parts.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "cascade/common/codec.hpp"

namespace cascade::proto {
namespace {

constexpr std::size_t kLargeService = 150'000;

std::vector<Instance> instances(std::size_t n, const std::string& prefix = "orders-") {
  std::vector<Instance> list;
  list.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Instance in;
    in.id = prefix + std::to_string(i);
    in.address = "10." + std::to_string(i / 65536 % 256) + "." + std::to_string(i / 256 % 256) +
                 "." + std::to_string(i % 256) + ":8080";
    in.zone = "dc1-a";
    list.push_back(std::move(in));
  }
  return list;
}

DownBeat reply_with(std::vector<ServiceUpdate> updates) {
  DownBeat down;
  down.hub_id = "hub-a";
  down.hub_epoch = 3;
  down.node_id = "consumer-1";
  down.ack_seq = 77;
  down.lease_ms = 6000;
  down.stale = {StaleList{{"pay", "default"}, 9000}};
  down.updates = std::move(updates);
  return down;
}

ServiceUpdate full_list(std::size_t n) {
  ServiceUpdate update;
  update.service = {"orders", "default"};
  update.version = 9;
  update.kind = UpdateKind::kFull;
  update.upserts = instances(n);
  update.routes = std::vector<RouteRuleText>{{"=> zone = dc1-a", 1, false, true}};
  return update;
}

// What a receiver applies from the parts, in order, like AgentCore does.
std::vector<ServiceUpdate> assemble(const std::vector<Message>& parts) {
  PartAssembler assembler;
  std::vector<ServiceUpdate> applied;
  for (const auto& part : parts)
    for (const auto& update : std::get<DownBeat>(part).updates)
      if (const auto* whole = assembler.add(update)) applied.push_back(*whole);
  return applied;
}

// Most receivers never see a list in parts: a whole update is applied as it
// came, and the assembler is a pointer until a part arrives (an agent core
// of a million-agent simulation carried ~900 bytes for it).
TEST(PartAssembler, AWholeUpdateIsAppliedInPlaceByAnAssemblerThatHoldsNothing) {
  EXPECT_LE(sizeof(PartAssembler), 2 * sizeof(void*));
  PartAssembler assembler;
  const auto update = full_list(3);
  EXPECT_EQ(assembler.add(update), &update);
  QueryReply reply;
  reply.request_id = 9;
  EXPECT_EQ(assembler.add(reply), &reply);
  assembler.forget_reply(9);  // nothing held: nothing to forget
  assembler.clear();
  EXPECT_EQ(assembler.dropped(), 0u);
}

// After clear() the next list in parts starts afresh.
TEST(PartAssembler, PartsHeldWhenClearedAreForgottenAndTheNextListAssemblesAnew) {
  const auto parts = split_into_parts(reply_with({full_list(kLargeService)}));
  ASSERT_GT(parts.size(), 2u);
  PartAssembler assembler;
  for (const auto& update : std::get<DownBeat>(parts[0]).updates)
    EXPECT_EQ(assembler.add(update), nullptr);
  assembler.clear();
  std::vector<ServiceUpdate> applied;
  for (const auto& part : parts)
    for (const auto& update : std::get<DownBeat>(part).updates)
      if (const auto* whole = assembler.add(update)) applied.push_back(*whole);
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0].upserts.size(), kLargeService);
}

TEST(MessageParts, AMessageWithinAPartGoesWholeAndUnchanged) {
  const Message down = reply_with({full_list(10)});
  const auto parts = split_into_parts(down);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0], down);
}

TEST(MessageParts, AListOfAServiceLargerThanAFrameGoesInPartsThatEachFit) {
  const auto down = reply_with({full_list(kLargeService)});
  ASSERT_GT(encode(down).size(), kDefaultMaxFrameBytes) << "the size that broke consumers";
  const auto parts = split_into_parts(down);
  ASSERT_GT(parts.size(), 4u);
  for (const auto& part : parts)
    EXPECT_LE(encode(part).size(), kMaxPartBytes);

  const auto& reply = std::get<DownBeat>(parts.front());
  EXPECT_FALSE(reply.push) << "the first part is the reply";
  EXPECT_EQ(reply.ack_seq, 77u);
  EXPECT_EQ(reply.lease_ms, 6000u);
  EXPECT_EQ(reply.stale, down.stale);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto& push = std::get<DownBeat>(parts[i]);
    EXPECT_TRUE(push.push);
    EXPECT_EQ(push.ack_seq, 0u);
    EXPECT_EQ(push.hub_epoch, 3u);
    EXPECT_EQ(push.node_id, "consumer-1");
    EXPECT_TRUE(push.stale.empty());
  }

  const auto applied = assemble(parts);
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0], down.updates[0]) << "the same update, instances in order, rules once";
}

TEST(MessageParts, SmallUpdatesAroundALargeOneKeepTheirOrderAndStayWhole) {
  ServiceUpdate gone;
  gone.service = {"old", "default"};
  gone.from_version = 4;
  gone.kind = UpdateKind::kGone;
  ServiceUpdate delta;
  delta.service = {"pay", "default"};
  delta.from_version = 2;
  delta.version = 3;
  delta.removed = {"pay-7"};
  const auto down = reply_with({gone, full_list(kLargeService), delta});
  const auto applied = assemble(split_into_parts(down));
  ASSERT_EQ(applied.size(), 3u);
  EXPECT_EQ(applied[0], gone);
  EXPECT_EQ(applied[1], down.updates[1]);
  EXPECT_EQ(applied[2], delta);
}

TEST(MessageParts, ALargeDeltaSplitsItsUpsertsAndRemovedIds) {
  ServiceUpdate delta;
  delta.service = {"orders", "default"};
  delta.from_version = 8;
  delta.version = 9;
  delta.upserts = instances(40'000, "new-");
  for (std::size_t i = 0; i < 100'000; ++i)
    delta.removed.push_back("orders-" + std::to_string(i));
  const auto parts = split_into_parts(reply_with({delta}));
  ASSERT_GT(parts.size(), 2u);
  for (const auto& part : parts)
    EXPECT_LE(encode(part).size(), kMaxPartBytes);
  const auto applied = assemble(parts);
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0], delta);
}

TEST(MessageParts, AQueryReplyOfALargeServiceComesInRepliesOfTheSameRequest) {
  QueryReply reply;
  reply.request_id = 41;
  reply.hub_id = "hub-a";
  reply.service = {"orders", "default"};
  reply.found = true;
  reply.version = 9;
  reply.instances = instances(kLargeService);
  reply.routes = std::vector<RouteRuleText>{};
  const auto parts = split_into_parts(reply);
  ASSERT_GT(parts.size(), 4u);
  PartAssembler assembler;
  const QueryReply* whole = nullptr;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& part = std::get<QueryReply>(parts[i]);
    EXPECT_LE(encode(part).size(), kMaxPartBytes);
    EXPECT_EQ(part.request_id, 41u);
    EXPECT_EQ(part.more, i + 1 < parts.size());
    whole = assembler.add(part);
    EXPECT_EQ(whole != nullptr, i + 1 == parts.size());
  }
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(*whole, reply);
}

TEST(MessageParts, AnInstanceLargerThanAPartStillGoesInAPartOfItsOwn) {
  auto update = full_list(3);
  for (int i = 0; i < 64; ++i)
    update.upserts[1].metadata["k" + std::to_string(i)] = std::string(kMaxMetadataValueBytes, 'v');
  const auto parts = split_into_parts(reply_with({update}), /*max_bytes=*/16 * 1024);
  EXPECT_EQ(parts.size(), 3u);
  const auto applied = assemble(parts);
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0], update);
}

// ------------------------------------------------------------- config groups (revision 6)

// A group of `keys` keys whose values are `value_bytes` each, every byte value among them.
std::vector<ConfigEntry> config_entries(std::size_t keys, std::size_t value_bytes,
                                        const std::string& prefix = "key.") {
  std::vector<ConfigEntry> entries;
  for (std::size_t i = 0; i < keys; ++i) {
    std::string value(value_bytes, '\0');
    for (std::size_t b = 0; b < value_bytes; ++b)
      value[b] = static_cast<char>((b + i) % 256);
    entries.push_back({prefix + std::to_string(i), std::move(value), {1, "hub-a", 40 + i}});
  }
  return entries;
}

ConfigUpdate full_group(std::size_t keys, std::size_t value_bytes) {
  ConfigUpdate update;
  update.group = "orders-config";
  update.from_version = 0;
  update.version = (std::uint64_t{3} << 40) | 12;
  update.kind = UpdateKind::kFull;
  update.upserts = config_entries(keys, value_bytes);
  return update;
}

DownBeat reply_with_configs(std::vector<ConfigUpdate> config_updates) {
  auto down = reply_with({});
  down.config_updates = std::move(config_updates);
  return down;
}

// What a receiver applies of the config updates in the parts, in order.
std::vector<ConfigUpdate> assemble_configs(const std::vector<Message>& parts) {
  PartAssembler assembler;
  std::vector<ConfigUpdate> applied;
  for (const auto& part : parts)
    for (const auto& update : std::get<DownBeat>(part).config_updates)
      if (const auto* whole = assembler.add(update)) applied.push_back(*whole);
  return applied;
}

TEST(MessageParts, AConfigGroupWithinAPartGoesWholeAndUnchanged) {
  const Message down = reply_with_configs({full_group(10, 1000)});
  const auto parts = split_into_parts(down);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0], down);
}

TEST(MessageParts, AFullConfigGroupOf3MiBGoesInPartsThatEachFitAndJoinToTheOriginal) {
  const auto group = full_group(48, 64 * 1024);  // 3 MiB of values, each at its limit
  const auto down = reply_with_configs({group});
  ASSERT_GT(encode(down).size(), 3u * 1024 * 1024);
  const auto parts = split_into_parts(down);
  ASSERT_GE(parts.size(), 4u);

  std::vector<const ConfigUpdate*> pieces;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    EXPECT_LE(encode(parts[i]).size(), kMaxPartBytes) << "part " << i;
    const auto& part = std::get<DownBeat>(parts[i]);
    EXPECT_EQ(part.push, i > 0) << "the first part is the reply, the rest pushes";
    EXPECT_EQ(part.ack_seq, i == 0 ? 77u : 0u);
    EXPECT_EQ(part.node_id, "consumer-1");
    EXPECT_EQ(part.stale.empty(), i > 0);
    for (const auto& piece : part.config_updates)
      pieces.push_back(&piece);
  }
  ASSERT_EQ(pieces.size(), parts.size()) << "one piece of the group per part";
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    EXPECT_EQ(pieces[i]->group, group.group);
    EXPECT_EQ(pieces[i]->from_version, group.from_version);
    EXPECT_EQ(pieces[i]->version, group.version);
    EXPECT_EQ(pieces[i]->kind, UpdateKind::kFull);
    EXPECT_FALSE(pieces[i]->upserts.empty());
    EXPECT_EQ(pieces[i]->more, i + 1 < pieces.size()) << "piece " << i;
  }

  const auto applied = assemble_configs(parts);
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0], group) << "the same entries, in order, every byte kept";
}

TEST(MessageParts, AConfigDeltaSplitsItsEntriesAndRemovedKeys) {
  ConfigUpdate delta;
  delta.group = "orders-config";
  delta.from_version = 11;
  delta.version = 12;
  delta.kind = UpdateKind::kDelta;
  delta.upserts = config_entries(20, 60 * 1024, "new.");
  for (std::size_t i = 0; i < 30'000; ++i)
    delta.removed.push_back("old.key." + std::to_string(i) + std::string(40, 'x'));
  const auto parts = split_into_parts(reply_with_configs({delta}));
  ASSERT_GT(parts.size(), 2u);
  for (const auto& part : parts)
    EXPECT_LE(encode(part).size(), kMaxPartBytes);
  const auto applied = assemble_configs(parts);
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0], delta);
}

TEST(MessageParts, ServiceAndConfigUpdatesOfALargeReplyKeepTheirOrderAndSmallOnesStayWhole) {
  ConfigUpdate gone;
  gone.group = "retired-config";
  gone.from_version = 5;
  gone.version = 6;
  gone.kind = UpdateKind::kGone;
  ConfigUpdate small;
  small.group = "pay-config";
  small.from_version = 2;
  small.version = 3;
  small.kind = UpdateKind::kDelta;
  small.upserts = config_entries(1, 10);
  small.removed = {"limit.pay.max_in_flight"};
  auto down = reply_with_configs({gone, full_group(40, 64 * 1024), small});
  down.updates = {full_list(kLargeService)};
  const auto parts = split_into_parts(down);
  for (const auto& part : parts)
    EXPECT_LE(encode(part).size(), kMaxPartBytes);

  // Every service part comes before any config part.
  bool config_seen = false;
  for (const auto& part : parts) {
    const auto& beat = std::get<DownBeat>(part);
    if (!beat.updates.empty()) {
      EXPECT_FALSE(config_seen) << "a service part after a config one";
    }
    config_seen = config_seen || !beat.config_updates.empty();
  }
  const auto services = assemble(parts);
  ASSERT_EQ(services.size(), 1u);
  EXPECT_EQ(services[0], down.updates[0]);
  const auto configs = assemble_configs(parts);
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_EQ(configs[0], gone);
  EXPECT_EQ(configs[1], down.config_updates[1]);
  EXPECT_EQ(configs[2], small);
}

ConfigReply config_reply_of(std::vector<ConfigEntry> entries) {
  ConfigReply reply;
  reply.request_id = 52;
  reply.ok = true;
  reply.group = "orders-config";
  reply.version = (std::uint64_t{3} << 40) | 12;
  reply.entries = std::move(entries);
  return reply;
}

// The parts of a reply, checked as they come, and what the receiver assembles.
std::optional<ConfigReply> assemble_reply(const std::vector<Message>& parts,
                                          std::uint64_t request_id) {
  PartAssembler assembler;
  std::optional<ConfigReply> whole;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& part = std::get<ConfigReply>(parts[i]);
    EXPECT_LE(encode(part).size(), kMaxPartBytes) << "part " << i;
    EXPECT_EQ(part.request_id, request_id);
    EXPECT_EQ(part.more, i + 1 < parts.size()) << "part " << i;
    const auto* done = assembler.add(part);
    EXPECT_EQ(done != nullptr, i + 1 == parts.size()) << "part " << i;
    if (done != nullptr) whole = *done;
  }
  return whole;
}

TEST(MessageParts, AConfigReplyLargerThanAPartComesInRepliesOfTheSameRequest) {
  const auto reply = config_reply_of(config_entries(64, 64 * 1024));  // 4 MiB: over a frame
  ASSERT_GT(encode(reply).size(), kDefaultMaxFrameBytes);
  const auto parts = split_into_parts(reply);
  ASSERT_GT(parts.size(), 4u);
  for (const auto& part : parts) {
    const auto& piece = std::get<ConfigReply>(part);
    EXPECT_TRUE(piece.ok);
    EXPECT_EQ(piece.group, reply.group);
    EXPECT_EQ(piece.version, reply.version);
  }
  const auto whole = assemble_reply(parts, 52);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(*whole, reply);
}

TEST(MessageParts, AConfigHistoryLargerThanAPartIsSplitByItsChanges) {
  ConfigReply reply;
  reply.request_id = 53;
  reply.ok = true;
  reply.group = "orders-config";
  for (std::uint64_t v = 80; v > 0; --v)  // 3.75 MiB of values
    reply.history.push_back({v, "key." + std::to_string(v % 3),
                             v % 2 ? std::nullopt : std::optional(std::string(32 * 1024, 'o')),
                             std::string(32 * 1024, static_cast<char>(v)), "ops@bastion", 0});
  const auto parts = split_into_parts(reply);
  ASSERT_GT(parts.size(), 2u);
  const auto whole = assemble_reply(parts, 53);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(*whole, reply) << "newest first, as sent";
}

TEST(MessageParts, ConfigRequestsAndEditsAreNeverSplit) {
  AdminRequest edit;
  edit.request_id = 9;
  edit.op = AdminOp::kConfigEdit;
  edit.config_group = "orders-config";
  for (const auto& entry : config_entries(40, 64 * 1024))
    edit.config_edits.push_back({entry.key, entry.value});
  ASSERT_GT(encode(edit).size(), kMaxPartBytes);
  EXPECT_EQ(split_into_parts(edit).size(), 1u);
  const Message request = ConfigRequest{10, ConfigView::kGet, "orders-config", ""};
  EXPECT_EQ(split_into_parts(request, 4), std::vector<Message>{request});
}

TEST(PartAssembler, AConfigPartOfAnotherVersionDropsThePartsHeldAndIsTakenOnItsOwn) {
  auto first = full_group(2, 10);
  first.more = true;
  auto newer = full_group(3, 10);
  newer.version += 1;
  PartAssembler assembler;
  EXPECT_EQ(assembler.add(first), nullptr);
  const auto* whole = assembler.add(newer);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(*whole, newer);
  EXPECT_EQ(assembler.dropped(), 1u);

  // Parts of different groups are held apart.
  auto a = full_group(1, 10);
  a.more = true;
  auto b = a;
  b.group = "other-config";
  EXPECT_EQ(assembler.add(a), nullptr);
  EXPECT_EQ(assembler.add(b), nullptr);
  a.more = false;
  ASSERT_NE(assembler.add(a), nullptr);
  EXPECT_EQ(assembler.dropped(), 1u);
}

TEST(PartAssembler, ALostLastConfigPartLeavesNothingApplied) {
  const auto parts = split_into_parts(reply_with_configs({full_group(48, 64 * 1024)}));
  ASSERT_GT(parts.size(), 1u);
  PartAssembler assembler;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i)
    for (const auto& update : std::get<DownBeat>(parts[i]).config_updates)
      EXPECT_EQ(assembler.add(update), nullptr);
}

TEST(PartAssembler, ConfigPartsBeyondTheirBoundAreDropped) {
  auto part = full_group(PartAssembler::kMaxAssembledConfigItems / 2 + 1, 0);
  part.more = true;
  PartAssembler assembler;
  EXPECT_EQ(assembler.add(part), nullptr);
  EXPECT_EQ(assembler.add(part), nullptr);
  EXPECT_EQ(assembler.dropped(), 1u);
}

TEST(PartAssembler, AConfigReplyOfAnotherVersionOrAForgottenOneStartsOver) {
  auto first = config_reply_of(config_entries(2, 10));
  first.more = true;
  auto newer = config_reply_of(config_entries(1, 10));
  newer.version += 1;
  PartAssembler assembler;
  EXPECT_EQ(assembler.add(first), nullptr);
  const auto* whole = assembler.add(newer);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(*whole, newer);
  EXPECT_EQ(assembler.dropped(), 1u);

  EXPECT_EQ(assembler.add(first), nullptr);
  assembler.forget_reply(first.request_id);  // the request timed out
  auto last = first;
  last.more = false;
  whole = assembler.add(last);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(whole->entries.size(), 2u) << "only the last part: the first was forgotten";
}

TEST(PartAssembler, APartOfAnotherVersionDropsThePartsHeldAndIsTakenOnItsOwn) {
  auto first = full_list(2);
  first.more = true;
  auto newer = full_list(3);
  newer.version = 10;
  PartAssembler assembler;
  EXPECT_EQ(assembler.add(first), nullptr);
  const auto* whole = assembler.add(newer);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(*whole, newer);
  EXPECT_EQ(assembler.dropped(), 1u);
}

TEST(PartAssembler, ALostLastPartLeavesNothingApplied) {
  const auto parts = split_into_parts(reply_with({full_list(kLargeService)}));
  PartAssembler assembler;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i)
    for (const auto& update : std::get<DownBeat>(parts[i]).updates)
      EXPECT_EQ(assembler.add(update), nullptr);
}

TEST(PartAssembler, PartsBeyondAMillionInstancesAreDropped) {
  auto part = full_list(600'000);
  part.more = true;
  PartAssembler assembler;
  EXPECT_EQ(assembler.add(part), nullptr);
  EXPECT_EQ(assembler.add(part), nullptr);
  EXPECT_EQ(assembler.dropped(), 1u);
  part.more = false;
  const auto* whole = assembler.add(part);
  ASSERT_NE(whole, nullptr) << "a fresh start after the drop";
  EXPECT_EQ(whole->upserts.size(), 600'000u);
}

}  // namespace
}  // namespace cascade::proto
