// Events in the logs: the text line and the JSON object carry the same ids,
// and nothing a peer puts in an id can break a line in two.

#include "cascade/common/log_event.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace cascade {
namespace {

// The line `log` writes through a logger formatted as `format`.
template <typename Log>
std::string logged(LogFormat format, Log log) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  auto logger = std::make_shared<spdlog::logger>("hub", sink);
  logger->set_formatter(make_log_formatter(format));
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  set_log_fields_formatted(true);  // as init_logging() does
  log();
  set_log_fields_formatted(false);
  spdlog::set_default_logger(previous);
  return out.str();
}

void expire_n1() {
  log_event(spdlog::level::info, "agent expired",
            {{"hub", "hub-1"}, {"node", "n1"}, {"why", "lease ran out"}, {"instances", 3}});
}

TEST(LogEvent, ATextLineEndsWithTheIdsAsKeyValuePairsQuotedWhereNeeded) {
  const auto line = logged(LogFormat::kText, expire_n1);
  EXPECT_NE(line.find(" info [hub] agent expired hub=hub-1 node=n1 why=\"lease ran out\" "
                      "instances=3\n"),
            std::string::npos)
      << line;
}

TEST(LogEvent, AJsonLineIsOneObjectWithTheIdsAsMembers) {
  const auto line = logged(LogFormat::kJson, expire_n1);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
  const auto json = nlohmann::json::parse(line);
  EXPECT_EQ(json["level"], "info");
  EXPECT_EQ(json["program"], "hub");
  EXPECT_EQ(json["msg"], "agent expired");
  EXPECT_EQ(json["node"], "n1");
  EXPECT_EQ(json["why"], "lease ran out");
  EXPECT_EQ(json["instances"], "3");
  const std::string time = json["time"];
  EXPECT_EQ(time.size(), 24u) << time;  // 2026-12-02T05:44:31.589Z
  EXPECT_EQ(time.back(), 'Z');
}

TEST(LogEvent, ControlCharactersInAnIdCannotForgeALineInEitherFormat) {
  const auto forged = [] {
    log_event(spdlog::level::warn, "message refused",
              {{"node", "n1\n2026-12-02T00:00:00.000 info [hub] all good\x1fnode=evil"}});
  };
  const auto text = logged(LogFormat::kText, forged);
  EXPECT_EQ(text.find('\n'), text.size() - 1) << text;
  EXPECT_EQ(text.find(" node="), text.rfind(" node=")) << "one node field: " << text;
  EXPECT_NE(text.find(R"(node="n1\u000a2026)"), std::string::npos) << text;
  const auto json_line = logged(LogFormat::kJson, forged);
  EXPECT_EQ(json_line.find('\n'), json_line.size() - 1) << json_line;
  const auto json = nlohmann::json::parse(json_line);
  // The separator that starts a field is replaced: the id stays one field.
  EXPECT_EQ(json["node"], "n1\n2026-12-02T00:00:00.000 info [hub] all good?node=evil");
}

TEST(LogEvent, APlainMessageWithoutFieldsPrintsAsItIs) {
  const auto text = logged(LogFormat::kText, [] { spdlog::info("listening on {}", "tcp://x:1"); });
  EXPECT_NE(text.find(" info [hub] listening on tcp://x:1\n"), std::string::npos) << text;
  const auto json =
      nlohmann::json::parse(logged(LogFormat::kJson, [] { spdlog::warn("say \"hi\" \\ bye"); }));
  EXPECT_EQ(json["msg"], "say \"hi\" \\ bye");
  EXPECT_EQ(json["level"], "warning");
}

TEST(LogEvent, AnApplicationsOwnLoggerGetsTheFinishedTextLine) {
  // The agent library logs events too; an application that never called
  // init_logging() formats them with its own pattern.
  std::ostringstream out;
  auto logger = std::make_shared<spdlog::logger>(
      "app", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_pattern("%v");
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  expire_n1();
  spdlog::set_default_logger(previous);
  EXPECT_EQ(out.str(), "agent expired hub=hub-1 node=n1 why=\"lease ran out\" instances=3\n");
}

TEST(LogEvent, TheFormatFlagTakesTextOrJsonOnly) {
  LogFormat format = LogFormat::kText;
  EXPECT_TRUE(parse_log_format("json", format));
  EXPECT_EQ(format, LogFormat::kJson);
  EXPECT_TRUE(parse_log_format("text", format));
  EXPECT_EQ(format, LogFormat::kText);
  EXPECT_FALSE(parse_log_format("xml", format));
}

}  // namespace
}  // namespace cascade
