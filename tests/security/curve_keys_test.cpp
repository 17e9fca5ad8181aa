// Key files: what keygen writes is what the programs read, secrets are never
// readable by others, and a damaged file is refused with its reason.
#include "cascade/common/curve_keys.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::curve {
namespace {

using store_test::TempDir;
using ::testing::HasSubstr;

void write_text(const std::filesystem::path& file, const std::string& text, mode_t mode) {
  std::ofstream(file) << text;
  ::chmod(file.c_str(), mode);
}

std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const KeyError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CurveKeys, WrittenPairReadsBackTheSameKeys) {
  TempDir dir;
  const auto keys = generate_key_pair();
  const auto [secret, pub] = write_key_files(dir.path(), "hub-a", keys);
  EXPECT_EQ(secret, dir.path() / "hub-a.key");
  EXPECT_EQ(pub, dir.path() / "hub-a.pub");
  EXPECT_EQ(read_secret_key_file(secret), keys);
  EXPECT_EQ(read_public_key_file(pub), keys.public_z85);
}

TEST(CurveKeys, SecretKeyFileIsCreatedOwnerOnly) {
  TempDir dir;
  const auto old_umask = ::umask(0);  // the most permissive umask must not widen it
  write_key_files(dir.path(), "agent", generate_key_pair());
  ::umask(old_umask);
  struct stat info {};
  ASSERT_EQ(::stat((dir.path() / "agent.key").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST(CurveKeys, ExistingFilesAreNeverOverwritten) {
  TempDir dir;
  const auto first = generate_key_pair();
  write_key_files(dir.path(), "ops", first);
  EXPECT_THAT(error_of([&] { write_key_files(dir.path(), "ops", generate_key_pair()); }),
              HasSubstr("refusing to overwrite"));
  EXPECT_EQ(read_secret_key_file(dir.path() / "ops.key"), first);
}

TEST(CurveKeys, GroupReadableSecretKeyIsRefused) {
  TempDir dir;
  write_key_files(dir.path(), "leaky", generate_key_pair());
  ::chmod((dir.path() / "leaky.key").c_str(), 0640);
  const auto error = error_of([&] { read_secret_key_file(dir.path() / "leaky.key"); });
  EXPECT_THAT(error, HasSubstr("accessible by group or others (mode 0640)"));
  EXPECT_THAT(error, HasSubstr("chmod 600"));
}

TEST(CurveKeys, CommentsAndBlankLinesAroundTheKeyAreAllowed) {
  TempDir dir;
  const auto keys = generate_key_pair();
  write_text(dir.path() / "k.key", "# mine\n\n  " + keys.secret_z85 + "  \n# end\n", 0600);
  EXPECT_EQ(read_secret_key_file(dir.path() / "k.key"), keys);
}

TEST(CurveKeys, BadKeyFilesAreRefusedWithTheirReason) {
  TempDir dir;
  auto keys = generate_key_pair();
  // '#' is a Z85 character and starts a comment: a key cut to begin with it
  // would read as a comment line, not as a short key (1 run in 85).
  while (keys.public_z85[1] == '#')
    keys = generate_key_pair();
  write_text(dir.path() / "short.pub", keys.public_z85.substr(1) + "\n", 0644);
  EXPECT_THAT(error_of([&] { read_public_key_file(dir.path() / "short.pub"); }),
              HasSubstr("short.pub:1: a key is 40 Z85 characters, this line has 39"));
  // '"' and ',' are not in the Z85 alphabet.
  write_text(dir.path() / "bad.pub", "\"" + keys.public_z85.substr(1) + "\n", 0644);
  EXPECT_THAT(error_of([&] { read_public_key_file(dir.path() / "bad.pub"); }),
              HasSubstr("not a Z85 key"));
  write_text(dir.path() / "two.pub", keys.public_z85 + "\n" + keys.public_z85 + "\n", 0644);
  EXPECT_THAT(error_of([&] { read_public_key_file(dir.path() / "two.pub"); }),
              HasSubstr("two.pub:2: more than one key"));
  write_text(dir.path() / "empty.pub", "# nothing\n", 0644);
  EXPECT_THAT(error_of([&] { read_public_key_file(dir.path() / "empty.pub"); }),
              HasSubstr("holds no key"));
  EXPECT_THAT(error_of([&] { read_public_key_file(dir.path() / "missing.pub"); }),
              HasSubstr("cannot read public key file"));
}

TEST(CurveKeys, PublicKeyIsDerivedFromTheSecret) {
  const auto keys = generate_key_pair();
  EXPECT_EQ(public_of(keys.secret_z85), keys.public_z85);
  EXPECT_TRUE(is_z85_key(keys.public_z85));
  EXPECT_FALSE(is_z85_key(keys.public_z85.substr(1)));
}

TEST(CurveKeys, BinaryKeyFromZapBecomesItsZ85Text) {
  const auto keys = generate_key_pair();
  std::string binary(kKeyBytes, '\0');
  ASSERT_NE(zmq_z85_decode(reinterpret_cast<std::uint8_t*>(binary.data()), keys.public_z85.c_str()),
            nullptr);
  EXPECT_EQ(z85_of_binary(binary), keys.public_z85);
  EXPECT_THROW(z85_of_binary("short"), KeyError);
}

TEST(ServerKeys, FileAloneServesEveryServerAndEndpointEqualsFileServesOne) {
  TempDir dir;
  const auto a = generate_key_pair();
  const auto b = generate_key_pair();
  write_key_files(dir.path(), "l2-a", a);
  write_key_files(dir.path(), "l2-b", b);
  const auto keys = ServerKeys::read({(dir.path() / "l2-a.pub").string(),
                                      "tcp://10.0.0.2:7600=" + (dir.path() / "l2-b.pub").string()});
  EXPECT_EQ(keys.for_endpoint("tcp://10.0.0.1:7600"), a.public_z85);
  EXPECT_EQ(keys.for_endpoint("tcp://10.0.0.2:7600"), b.public_z85);
  EXPECT_THAT(error_of([&] { ServerKeys::read({"tcp://10.0.0.3:7600=/nonexistent.pub"}); }),
              HasSubstr("/nonexistent.pub"));
}

}  // namespace
}  // namespace cascade::curve
