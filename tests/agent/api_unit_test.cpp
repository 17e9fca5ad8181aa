// The pieces of the agent's HTTP API that need no server: the watch state
// machine, argument parsing, strict JSON bodies, the native JSON, and the
// watch board with a fake source.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "cascade/agent/api/json_fields.hpp"
#include "cascade/agent/api/native_api.hpp"
#include "cascade/agent/api/native_json.hpp"
#include "cascade/agent/api/query_args.hpp"
#include "cascade/agent/api/watch_board.hpp"
#include "cascade/agent/api/watch_set.hpp"

namespace cascade::agent::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const proto::ServiceKey kOrders{"orders", "default"};
const proto::ServiceKey kPayments{"payments", "default"};

MonoTime at(std::int64_t ms) {
  return mono_from_ms(ms);
}

TEST(WatchSetTest, AChangeEndsTheWatchesHoldingAnotherVersionOnly) {
  WatchSet set;
  const auto old_holder = set.park(kOrders, 5, at(1000));
  const auto current_holder = set.park(kOrders, 6, at(1000));
  const auto other_service = set.park(kPayments, 5, at(1000));
  EXPECT_THAT(set.changed(kOrders, 6), ElementsAre(old_holder));
  EXPECT_EQ(set.size(), 2u);
  // Back to an older version (a hub restarted): the holder of 6 ends too.
  EXPECT_THAT(set.changed(kOrders, 4), ElementsAre(current_holder));
  EXPECT_THAT(set.watched_services(), ElementsAre(kPayments));
  EXPECT_TRUE(set.cancel(other_service));
  EXPECT_FALSE(set.cancel(other_service));
  EXPECT_EQ(set.size(), 0u);
}

TEST(WatchSetTest, WaitsEndAtTheirDeadlinesInOrder) {
  WatchSet set;
  const auto late = set.park(kOrders, 1, at(3000));
  const auto early = set.park(kOrders, 1, at(1000));
  EXPECT_EQ(set.next_deadline(), at(1000));
  EXPECT_THAT(set.expire(at(999)), IsEmpty());
  EXPECT_THAT(set.expire(at(1000)), ElementsAre(early));
  EXPECT_EQ(set.next_deadline(), at(3000));
  EXPECT_THAT(set.expire(at(5000)), ElementsAre(late));
  EXPECT_FALSE(set.next_deadline());
  EXPECT_THAT(set.changed(kOrders, 2), IsEmpty());  // nothing left to wake
}

TEST(QueryArgsTest, WaitsInConsulsFormatAreCappedAtTheLongest) {
  auto wait = [](const char* text) {
    return std::get<Duration>(parse_wait(std::string_view(text)));
  };
  EXPECT_EQ(wait("30s"), Duration{30'000});
  EXPECT_EQ(wait("250ms"), Duration{250});
  EXPECT_EQ(wait("5m"), Duration{300'000});
  EXPECT_EQ(wait("7"), Duration{7000});  // seconds
  EXPECT_EQ(wait("2h"), Duration{600'000});
  EXPECT_EQ(wait("99999999999999999s"), Duration{600'000});
  EXPECT_EQ(std::get<Duration>(parse_wait(std::nullopt)), Duration{300'000});
  EXPECT_TRUE(error_of(parse_wait(std::string_view("soon"))));
  EXPECT_TRUE(error_of(parse_wait(std::string_view("-1s"))));
  EXPECT_TRUE(error_of(parse_wait(std::string_view(""))));
}

TEST(QueryArgsTest, IndexesFlagsAndServiceNamesAreChecked) {
  EXPECT_EQ(std::get<std::optional<std::uint64_t>>(parse_index(std::string_view("1099511627777"))),
            1099511627777u);
  EXPECT_FALSE(std::get<std::optional<std::uint64_t>>(parse_index(std::nullopt)));
  EXPECT_TRUE(error_of(parse_index(std::string_view("12x"))));
  EXPECT_TRUE(std::get<bool>(parse_flag(std::string_view(""), "passing")));
  EXPECT_FALSE(std::get<bool>(parse_flag(std::string_view("false"), "passing")));
  EXPECT_TRUE(error_of(parse_flag(std::string_view("maybe"), "passing")));
  EXPECT_EQ(std::get<proto::ServiceKey>(service_key_of("orders", std::nullopt)), kOrders);
  EXPECT_EQ(std::get<proto::ServiceKey>(service_key_of("orders", "blue")).group, "blue");
  EXPECT_TRUE(error_of(service_key_of("", std::nullopt)));
}

TEST(RegistrationJsonTest, AFullBodyBecomesTheRegistrationAndDefaultsFillTheRest) {
  auto parsed = registration_from_json(
      R"({"service":"orders","group":"blue","id":"o-1","address":"10.0.0.1:80","weight":30,
          "zone":"eu-1a","status":"down","metadata":{"build":"abc"}})");
  ASSERT_TRUE(std::holds_alternative<proto::Registration>(parsed));
  const auto& r = std::get<proto::Registration>(parsed);
  EXPECT_EQ(r.service, (proto::ServiceKey{"orders", "blue"}));
  EXPECT_EQ(r.instance.id, "o-1");
  EXPECT_EQ(r.instance.weight, 30u);
  EXPECT_EQ(r.instance.status, proto::InstanceStatus::kDown);
  EXPECT_EQ(r.instance.metadata.at("build"), "abc");
  const auto minimal = std::get<proto::Registration>(
      registration_from_json(R"({"service":"orders","address":"a:1"})"));
  EXPECT_EQ(minimal.instance.id, "a:1");
  EXPECT_EQ(minimal.instance.weight, 100u);
  EXPECT_EQ(minimal.service.group, "default");
  EXPECT_EQ(registration_json(minimal)["status"], "UP");
}

std::string body_error(std::string_view body) {
  auto parsed = registration_from_json(body);
  auto* error = std::get_if<BodyError>(&parsed);
  return error ? error->code + ": " + error->message : "no error";
}

TEST(RegistrationJsonTest, EveryProblemOfABodyIsNamed) {
  EXPECT_EQ(body_error("nope"), "invalid_json: the body is not valid JSON");
  EXPECT_EQ(body_error(R"({"service":"orders"})"), "missing_field: field 'address' is required");
  EXPECT_EQ(body_error(R"({"service":"o","address":"a:1","weight":-1})"),
            "invalid_field: field 'weight' must be a whole number, 0 or more");
  EXPECT_EQ(body_error(R"({"service":"o","address":"a:1","weight":5000000000})"),
            "invalid_field: field 'weight' must be at most 4294967295");
  EXPECT_EQ(body_error(R"({"service":"o","address":"a:1","metadata":{"k":1}})"),
            "invalid_field: field 'metadata' must be an object of string values");
  EXPECT_EQ(body_error(R"({"service":"o","address":"a:1","colour":"red"})"),
            "unknown_field: unknown field 'colour'");
  EXPECT_THAT(body_error(R"({"service":"o","address":""})"), HasSubstr("invalid_field: address"));
}

Resolution resolution(std::uint64_t version, std::size_t instances) {
  Resolution r;
  r.service = kOrders;
  r.version = version;
  for (std::size_t i = 0; i < instances; ++i) {
    proto::Instance in;
    in.id = "o-" + std::to_string(i);
    in.address = "10.0.0." + std::to_string(i) + ":80";
    r.instances.push_back(in);
  }
  return r;
}

TEST(NativeResolutionResponseTest, UnknownIs404NothingKnownIs503AndAListIs200WithItsIndex) {
  EXPECT_EQ(native_resolution_response(nullptr, kOrders).status, 503);
  auto unknown = resolution(0, 0);
  EXPECT_EQ(native_resolution_response(&unknown, kOrders).status, 404);
  auto emptied = resolution(7, 0);  // it existed: empty now, not unknown
  EXPECT_EQ(native_resolution_response(&emptied, kOrders).status, 200);
  auto listed = resolution(1099511627777, 2);
  listed.stale = true;
  listed.age = Duration{4200};
  const auto response = native_resolution_response(&listed, kOrders);
  EXPECT_EQ(response.status, 200);
  EXPECT_THAT(response.headers, ::testing::Contains(std::pair<std::string, std::string>{
                                    "X-Cascade-Index", "1099511627777"}));
  const auto json = nlohmann::json::parse(response.body);
  EXPECT_EQ(json["stale"], true);
  EXPECT_EQ(json["age_ms"], 4200);
  EXPECT_EQ(json["instances"].size(), 2u);
  EXPECT_TRUE(json["routes"].is_null());
}

// A Responder that records what it was answered.
class Recorder : public http::Responder {
 public:
  void respond(http::Response response) override {
    std::lock_guard lock(mu_);
    answers_.push_back(std::move(response));
  }
  std::size_t count() {
    std::lock_guard lock(mu_);
    return answers_.size();
  }
  http::Response first() {
    std::lock_guard lock(mu_);
    return answers_.at(0);
  }

 private:
  std::mutex mu_;
  std::vector<http::Response> answers_;
};

// A cache of one service whose version the test sets.
struct FakeCache {
  std::atomic<std::uint64_t> version{5};
  std::atomic<int> renders{0};
  WatchSource source() {
    return {
        [this](const proto::ServiceKey&) { return std::optional<std::uint64_t>(version.load()); },
        [this](const proto::ServiceKey&) { return std::optional(resolution(version, 1)); }};
  }
  WatchBoard::Render render() {
    return [this](const Resolution* r) {
      ++renders;
      return http::Response::json(200, std::to_string(r ? r->version : 0));
    };
  }
};

bool eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 500 && !pred(); ++i)
    std::this_thread::sleep_for(Duration{5});
  return pred();
}

TEST(WatchBoardTest, AWatchOfAVersionNoLongerHeldIsAnsweredAtOnce) {
  FakeCache cache;
  SystemClock clock;
  WatchBoard board(cache.source(), clock, 1);
  auto recorder = std::make_shared<Recorder>();
  board.watch(kOrders, 4, Duration{60'000}, "v", cache.render(), recorder);
  ASSERT_EQ(recorder->count(), 1u);  // on this thread, before watch() returned
  EXPECT_EQ(recorder->first().body, "5");
  EXPECT_EQ(board.parked(), 0u);
}

TEST(WatchBoardTest, OneChangeWakesEveryWatcherWithOneRenderingPerVariant) {
  FakeCache cache;
  SystemClock clock;
  WatchBoard board(cache.source(), clock, 1);
  std::vector<std::shared_ptr<Recorder>> recorders;
  for (int i = 0; i < 1000; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    board.watch(kOrders, 5, Duration{60'000}, i % 2 ? "a" : "b", cache.render(), recorders.back());
  }
  EXPECT_EQ(board.parked(), 1000u);
  EXPECT_EQ(cache.renders, 0);
  cache.version = 6;
  board.on_change(resolution(6, 1));
  ASSERT_TRUE(eventually([&] { return recorders.back()->count() == 1; }));
  for (const auto& r : recorders)
    ASSERT_TRUE(eventually([&] { return r->count() == 1; }));
  EXPECT_EQ(recorders.front()->first().body, "6");
  EXPECT_EQ(cache.renders, 2);  // one per variant, not one per watcher
  EXPECT_EQ(board.parked(), 0u);
}

TEST(WatchBoardTest, AWaitEndsWithTheServiceAsItIsAndAChangeOfAnotherServiceWakesNobody) {
  FakeCache cache;
  SystemClock clock;
  WatchBoard board(cache.source(), clock, 1);
  auto recorder = std::make_shared<Recorder>();
  board.watch(kOrders, 5, Duration{100}, "v", cache.render(), recorder);
  board.on_change([] {
    auto r = resolution(9, 1);
    r.service = kPayments;
    return r;
  }());
  EXPECT_EQ(recorder->count(), 0u);
  ASSERT_TRUE(eventually([&] { return recorder->count() == 1; }));
  EXPECT_EQ(recorder->first().body, "5");  // unchanged: the same version, at the wait's end
}

}  // namespace
}  // namespace cascade::agent::api
