// The real cascadectl binary against an in-process fake hub: exit codes and
// where output goes.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/fake_hub.hpp"
#include "tools/ctl/render.hpp"

namespace cascade::ctl {
namespace {

namespace fs = std::filesystem;

struct CtlRun {
  int code = -1;
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
};

std::string shell_quote(const std::string& arg) {
  std::string quoted = "'";
  for (const char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class CtlBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "cascadectl_test_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // Runs cascadectl with `args` (CASCADE_HUB unset), capturing stdout and stderr.
  CtlRun run(const std::vector<std::string>& args) {
    std::string command = "env -u CASCADE_HUB " + shell_quote(CASCADECTL_PATH);
    for (const auto& arg : args)
      command += " " + shell_quote(arg);
    command += " >" + shell_quote((dir_ / "out").string()) + " 2>" +
               shell_quote((dir_ / "err").string()) + " </dev/null";
    CtlRun result;
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(command.c_str());
    result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = slurp(dir_ / "out");
    result.err = slurp(dir_ / "err");
    return result;
  }

  fs::path dir_;
};

TEST_F(CtlBinary, TheBinaryIsWhereTheBuildPutsIt) {
  EXPECT_EQ(fs::path(CASCADECTL_PATH), fs::path(CASCADE_BINARY_DIR "/tools/cascadectl"));
  EXPECT_TRUE(fs::exists(CASCADECTL_PATH));
}

TEST_F(CtlBinary, StatusAgainstAHubExitsZeroWithTheTable) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "status"});

  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, status_table(testing::canned_status(0)));
  EXPECT_EQ(r.err, "");
}

TEST_F(CtlBinary, ServicesJsonExitsZero) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "--json", "services"});

  EXPECT_EQ(r.code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["services"].size(), 2U);
}

TEST_F(CtlBinary, ResolveKnownServiceExitsZeroWithItsInstances) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "--json", "resolve", "orders"});

  EXPECT_EQ(r.code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["service"], "orders");
  EXPECT_EQ(json["group"], "default");
  EXPECT_EQ(json["instances"].size(), 2U);
}

TEST_F(CtlBinary, ResolveUnknownGroupExitsOneAndPrintsTheEmptyResult) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "resolve", "orders", "--group", "blue"});

  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.out.rfind("orders (group blue) not found at hub hub-a\n", 0), 0U) << r.out;
  ASSERT_EQ(hub.requests().size(), 1U);
  EXPECT_EQ(std::get<proto::Query>(hub.requests()[0]).service,
            (proto::ServiceKey{"orders", "blue"}));
}

TEST_F(CtlBinary, GlobalFlagsMayFollowTheCommand) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"resolve", "orders", "--json", "--hub", hub.endpoint()});

  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["service"], "orders");
}

TEST_F(CtlBinary, ErrorReplyExitsFourWithTheMessageOnStderr) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "resolve", "forbidden"});

  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "cascadectl: hub error invalid: service name not allowed\n");
}

TEST_F(CtlBinary, MissingCommandExitsTwo) {
  const CtlRun r = run({"--hub", "tcp://127.0.0.1:1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err, "");
}

TEST_F(CtlBinary, MissingHubExitsTwo) {
  EXPECT_EQ(run({"status"}).code, 2);
}

TEST_F(CtlBinary, UnknownFlagExitsTwo) {
  EXPECT_EQ(run({"--hub", "tcp://127.0.0.1:1", "--bogus", "status"}).code, 2);
}

TEST_F(CtlBinary, ResolveWithoutServiceExitsTwo) {
  EXPECT_EQ(run({"--hub", "tcp://127.0.0.1:1", "resolve"}).code, 2);
}

TEST_F(CtlBinary, BadTimeoutExitsTwo) {
  EXPECT_EQ(run({"--hub", "tcp://127.0.0.1:1", "--timeout-ms", "soon", "status"}).code, 2);
  EXPECT_EQ(run({"--hub", "tcp://127.0.0.1:1", "--timeout-ms", "0", "status"}).code, 2);
}

TEST_F(CtlBinary, MalformedEndpointExitsTwo) {
  const CtlRun r = run({"--hub", "not-an-endpoint", "status"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not-an-endpoint"), std::string::npos) << r.err;
}

TEST_F(CtlBinary, HelpExitsZeroAndDocumentsTheExitCodes) {
  const CtlRun r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Exit codes:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4  the hub replied with an error"), std::string::npos) << r.out;
  EXPECT_EQ(run({"resolve", "--help"}).code, 0);
}

TEST_F(CtlBinary, NobodyListeningExitsThreePromptly) {
  const testing::RefusingPort port;

  const CtlRun r = run({"--hub", port.endpoint(), "--timeout-ms", "200", "status"});

  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("hub unreachable"), std::string::npos) << r.err;
  EXPECT_LT(r.elapsed, std::chrono::milliseconds{2000});
}

TEST_F(CtlBinary, SilentHubExitsThree) {
  testing::FakeHub hub([](const proto::Message&) { return std::vector<testing::Frames>{}; });

  const CtlRun r = run({"--hub", hub.endpoint(), "--timeout-ms", "200", "services"});

  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("no reply"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cascade::ctl
