#pragma once
// A hub's authorised-keys file: which CurveZMQ public keys may connect, and
// as which principal (common/access.hpp).
//
// One line per key:
//   PUBLIC_KEY NAME ROLE [register=GLOB,GLOB...] [query=GLOB,GLOB...]
// PUBLIC_KEY is Z85 (40 characters, as `cascadectl keygen` writes NAME.pub);
// ROLE is agent, hub, proxy, operator or reader; a scope not given means every
// service. `#` starts a comment line; blank lines are skipped. One name may
// have several keys (a rotation: the old and the new key both work until the
// old line is removed); one key may appear once.
//
// A table is immutable once parsed: the ZAP handler's thread and the server's
// thread share it through a shared_ptr, and a reload makes a new one.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "cascade/common/access.hpp"

namespace cascade::hub {

class AuthorizedKeys;
// A parsed table, or the first error: "ORIGIN:LINE: what is wrong".
using AuthorizedKeysResult = std::variant<std::shared_ptr<const AuthorizedKeys>, std::string>;

class AuthorizedKeys {
 public:
  // `origin` names the text in errors (the file's path).
  static AuthorizedKeysResult parse(std::string_view text, std::string_view origin);
  static AuthorizedKeysResult load(const std::filesystem::path& file);

  // The principal a key stands for, nullptr for an unknown key. The pointer
  // lives as long as this table.
  const access::Principal* find(std::string_view public_z85) const;
  std::size_t size() const { return by_key_.size(); }

 private:
  std::unordered_map<std::string, access::Principal> by_key_;
};

}  // namespace cascade::hub
