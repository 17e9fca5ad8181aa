#pragma once
// The bearer tokens an HTTP interface accepts, from a file of lines
//   NAME TOKEN      # e.g. "deploy-bot 9f2c...": the name is logged, never the token
// Blank lines and lines starting with '#' are skipped. The file must be
// private to its owner (mode 0600). Tokens are compared in constant time.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace cascade::http {

class BearerTokens {
 public:
  // The tokens of `file`, or what is wrong with it (naming file:line).
  static std::variant<BearerTokens, std::string> load(const std::string& file);
  static BearerTokens of(std::vector<std::pair<std::string, std::string>> name_and_token);

  // The name of the token presented, or nullopt when it is none of them.
  std::optional<std::string> name_of(std::string_view presented) const;
  std::size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::pair<std::string, std::string>> tokens_;  // name, token
};

// The token a request presents: "Authorization: Bearer T" or, as Consul's
// clients send it, "X-Consul-Token: T" or "?token=T" (python-consul 0.7
// sends only the last). "" when none.
std::string_view presented_token(std::string_view authorization, std::string_view consul_token,
                                 std::string_view token_argument);

}  // namespace cascade::http
