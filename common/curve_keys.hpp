#pragma once
// CurveZMQ long-term keys: making them, keeping them in files, and putting
// them on sockets (docs/security.md).
//
// A key pair lives in two files written by `cascadectl keygen NAME`:
//   NAME.key  the secret key, mode 0600 from the moment it exists (like an
//             ssh private key, a file others can read is refused);
//   NAME.pub  the public key, to hand to whoever must recognise this key.
// Each holds its key in Z85 (40 characters) on one line; lines starting with
// `#` and blank lines are comments. Only the secret is read from NAME.key:
// the public half is derived from it, so the two can never disagree.
//
// Errors are KeyError, whose message names the file and what is wrong.

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

namespace cascade::curve {

inline constexpr std::size_t kZ85KeyChars = 40;  // a 32-byte key in Z85
inline constexpr std::size_t kKeyBytes = 32;

struct KeyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct KeyPair {
  std::string public_z85;
  std::string secret_z85;
  bool operator==(const KeyPair&) const = default;
};

// A fresh key pair from libsodium's generator (zmq_curve_keypair).
KeyPair generate_key_pair();

// True when `text` is 40 characters of valid Z85, i.e. a key.
bool is_z85_key(std::string_view text);

// The public key of a secret one (zmq_curve_public). Throws KeyError when
// `secret_z85` is not a key.
std::string public_of(std::string_view secret_z85);

// A key as libzmq hands it over in binary (the ZAP credentials frame), in Z85.
// Throws KeyError unless `binary` is 32 bytes.
std::string z85_of_binary(std::string_view binary);

// Writes DIR/NAME.key (mode 0600, created with that mode) and DIR/NAME.pub.
// Refuses (KeyError) when either exists: a key is never overwritten.
// Returns the two paths written, the secret first.
std::pair<std::filesystem::path, std::filesystem::path> write_key_files(
    const std::filesystem::path& dir, std::string_view name, const KeyPair& keys);

// Reads a secret key file and derives its public half. Refuses a file that
// its group or others may read or write.
KeyPair read_secret_key_file(const std::filesystem::path& file);
// Reads a public key file (NAME.pub).
std::string read_public_key_file(const std::filesystem::path& file);

// The servers' public keys a client dials with, from flag values
// `[ENDPOINT=]FILE` (--hub-public-key, --upstream-public-key): FILE for every
// server, ENDPOINT=FILE for the one at ENDPOINT (hubs need not share a key).
struct ServerKeys {
  std::string every;  // "" when no FILE alone was given
  std::map<std::string, std::string> by_endpoint;

  // Reads every file named; throws KeyError naming a bad one.
  static ServerKeys read(const std::vector<std::string>& flag_values);
  // The key for the server at `endpoint`; "" when none was given.
  const std::string& for_endpoint(const std::string& endpoint) const {
    const auto it = by_endpoint.find(endpoint);
    return it != by_endpoint.end() ? it->second : every;
  }
};

// A ROUTER that accepts CurveZMQ clients with this key pair. Clients are
// checked by the ZAP handler of the socket's context for `zap_domain`.
// Call before bind().
void make_curve_server(zmq::socket_t& socket, const KeyPair& own,
                       std::string_view zap_domain = "cascade");
// A DEALER that speaks CurveZMQ as `own` to a server with `server_public_z85`.
// Call before connect().
void make_curve_client(zmq::socket_t& socket, const KeyPair& own,
                       std::string_view server_public_z85);

}  // namespace cascade::curve
