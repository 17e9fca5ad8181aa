#pragma once
// The bearer tokens an HTTP server checks, and which requests must carry one.
//
// The agent's API asks one of every request. The hub's admin API asks one of
// operator commands always and of reads from other hosts, so the rule is the
// API's. A request that carries a token is checked whatever the rule says: a
// wrong token is refused rather than ignored, so a client with a stale token
// learns it at once.
//
// The tokens can be replaced while the server runs (the hub re-reads its token
// file on SIGHUP and reload-keys): each request is checked against the set
// current when it arrives; a file that does not load keeps the set in use.
//
// Thread-safety: every member from any thread.

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "cascade/http/bearer_tokens.hpp"
#include "cascade/http/exchange.hpp"

namespace cascade::http {

class RequestTokens {
 public:
  // True when `request` must carry one of the tokens.
  using Rule = std::function<bool(const Request&)>;
  static bool every_request(const Request&) { return true; }

  explicit RequestTokens(BearerTokens tokens, Rule needs_token = every_request);

  bool needs_token(const Request& request) const { return needs_token_(request); }
  // The name of the token presented, or nullopt when it is none of them.
  std::optional<std::string> name_of(std::string_view presented) const;
  std::size_t size() const;

  // Loads `file` (BearerTokens::load) and uses its tokens from now on.
  // @return "" when they replaced the old ones, else what is wrong with the
  // file (the tokens in use stay).
  std::string reload(const std::string& file);

 private:
  std::shared_ptr<const BearerTokens> current() const;

  Rule needs_token_;
  mutable std::mutex mutex_;
  std::shared_ptr<const BearerTokens> tokens_;  // replaced whole, never changed
};

}  // namespace cascade::http
