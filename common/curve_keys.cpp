#include "cascade/common/curve_keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cascade/common/options.hpp"
#include "cascade/common/private_file.hpp"

namespace cascade::curve {

namespace {

std::string quoted(const std::filesystem::path& file) {
  return "'" + file.string() + "'";
}

// The one key line of a key file: comments and blank lines skipped, exactly
// one other line, holding a key.
std::string key_line_of(const std::filesystem::path& file, std::string_view what) {
  std::ifstream in(file);
  if (!in)
    throw KeyError("cannot read " + std::string(what) + " file " + quoted(file) + ": " +
                   std::strerror(errno));
  std::string key;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto last = line.find_last_not_of(" \t\r");
    const auto text = line.substr(first, last - first + 1);
    const auto where = file.string() + ":" + std::to_string(number) + ": ";
    if (!key.empty())
      throw KeyError(where + "more than one key in a " + std::string(what) + " file");
    if (text.size() != kZ85KeyChars)
      throw KeyError(where + "a key is " + std::to_string(kZ85KeyChars) +
                     " Z85 characters, this line has " + std::to_string(text.size()));
    if (!is_z85_key(text)) throw KeyError(where + "not a Z85 key (characters outside Z85)");
    key = text;
  }
  if (key.empty()) throw KeyError(quoted(file) + " holds no key");
  return key;
}

// Creates `file` for writing with `mode` from the first instant; fails when
// it exists. O_EXCL also refuses a symlink planted in its place.
void write_new_file(const std::filesystem::path& file, mode_t mode, const std::string& text) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw KeyError("cannot create " + quoted(file) + ": " + std::strerror(errno));
  // The umask can only take bits away; this makes sure the owner can read it.
  const bool ok = ::fchmod(fd, mode) == 0 &&
                  ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) throw KeyError("cannot write " + quoted(file) + ": " + std::strerror(error));
}

}  // namespace

KeyPair generate_key_pair() {
  std::array<char, kZ85KeyChars + 1> public_key{};
  std::array<char, kZ85KeyChars + 1> secret_key{};
  if (zmq_curve_keypair(public_key.data(), secret_key.data()) != 0)
    throw KeyError(std::string("cannot make a CURVE key pair: ") + zmq_strerror(zmq_errno()) +
                   " (is libzmq built with libsodium?)");
  return {public_key.data(), secret_key.data()};
}

bool is_z85_key(std::string_view text) {
  if (text.size() != kZ85KeyChars) return false;
  const std::string terminated(text);
  std::array<std::uint8_t, kKeyBytes> binary{};
  return zmq_z85_decode(binary.data(), terminated.c_str()) != nullptr;
}

std::string public_of(std::string_view secret_z85) {
  if (!is_z85_key(secret_z85)) throw KeyError("not a Z85 secret key");
  const std::string secret(secret_z85);
  std::array<char, kZ85KeyChars + 1> public_key{};
  if (zmq_curve_public(public_key.data(), secret.c_str()) != 0)
    throw KeyError(std::string("cannot derive a public key: ") + zmq_strerror(zmq_errno()));
  return public_key.data();
}

std::string z85_of_binary(std::string_view binary) {
  if (binary.size() != kKeyBytes)
    throw KeyError("a binary key is 32 bytes, not " + std::to_string(binary.size()));
  std::array<char, kZ85KeyChars + 1> text{};
  zmq_z85_encode(text.data(), reinterpret_cast<const std::uint8_t*>(binary.data()), binary.size());
  return text.data();
}

std::pair<std::filesystem::path, std::filesystem::path> write_key_files(
    const std::filesystem::path& dir, std::string_view name, const KeyPair& keys) {
  const auto secret_file = dir / (std::string(name) + ".key");
  const auto public_file = dir / (std::string(name) + ".pub");
  // Both checked before either is written: no half-made pair left behind.
  for (const auto& file : {secret_file, public_file})
    if (std::filesystem::exists(std::filesystem::symlink_status(file)))
      throw KeyError(quoted(file) + " exists; refusing to overwrite a key");
  const std::string n(name);
  write_new_file(secret_file, S_IRUSR | S_IWUSR,
                 "# cascade CurveZMQ secret key '" + n +
                     "'. Keep it private (mode 0600); never copy it off this host.\n"
                     "# Its public key is in " +
                     n + ".pub.\n" + keys.secret_z85 + "\n");
  write_new_file(public_file, S_IRUSR | S_IWUSR | S_IRGRP | S_IROTH,
                 "# cascade CurveZMQ public key '" + n +
                     "': give it to the hubs (authorised keys) or clients that must know it.\n" +
                     keys.public_z85 + "\n");
  return {secret_file, public_file};
}

KeyPair read_secret_key_file(const std::filesystem::path& file) {
  if (auto error = check_private_file(file, "secret key file"); !error.empty())
    throw KeyError(error);
  auto secret = key_line_of(file, "secret key");
  return {public_of(secret), std::move(secret)};
}

std::string read_public_key_file(const std::filesystem::path& file) {
  return key_line_of(file, "public key");
}

ServerKeys ServerKeys::read(const std::vector<std::string>& flag_values) {
  ServerKeys keys;
  for (const auto& value : flag_values) {
    const auto equals = value.find('=');
    if (is_zmq_endpoint(value) && equals != std::string::npos)
      keys.by_endpoint[value.substr(0, equals)] = read_public_key_file(value.substr(equals + 1));
    else
      keys.every = read_public_key_file(value);
  }
  return keys;
}

void make_curve_server(zmq::socket_t& socket, const KeyPair& own, std::string_view zap_domain) {
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, own.secret_z85);
  socket.set(zmq::sockopt::zap_domain, zap_domain);
}

void make_curve_client(zmq::socket_t& socket, const KeyPair& own,
                       std::string_view server_public_z85) {
  socket.set(zmq::sockopt::curve_serverkey, server_public_z85);
  socket.set(zmq::sockopt::curve_publickey, own.public_z85);
  socket.set(zmq::sockopt::curve_secretkey, own.secret_z85);
}

}  // namespace cascade::curve
