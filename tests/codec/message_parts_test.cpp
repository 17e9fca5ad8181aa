// Lists larger than a frame (schemas/protocol-v1.md, section 5.13): the
// sender's split and the receiver's assembly, on messages of the size that
// broke consumers before (150,000 instances, a 6 MB reply).

#include "cascade/common/message_parts.hpp"

#include <gtest/gtest.h>

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
