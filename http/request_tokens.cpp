#include "cascade/http/request_tokens.hpp"

#include <utility>
#include <variant>

namespace cascade::http {

RequestTokens::RequestTokens(BearerTokens tokens, Rule needs_token)
    : needs_token_(std::move(needs_token)),
      tokens_(std::make_shared<const BearerTokens>(std::move(tokens))) {}

// A copy of the pointer under the lock; the comparison runs outside it, so
// a reload never waits for requests being checked (nor they for it).
std::shared_ptr<const BearerTokens> RequestTokens::current() const {
  std::lock_guard lock(mutex_);
  return tokens_;
}

std::optional<std::string> RequestTokens::name_of(std::string_view presented) const {
  return current()->name_of(presented);
}

std::size_t RequestTokens::size() const {
  return current()->size();
}

std::string RequestTokens::reload(const std::string& file) {
  auto loaded = BearerTokens::load(file);
  if (auto* error = std::get_if<std::string>(&loaded)) return *error;
  auto next = std::make_shared<const BearerTokens>(std::get<BearerTokens>(std::move(loaded)));
  std::lock_guard lock(mutex_);
  tokens_ = std::move(next);
  return {};
}

}  // namespace cascade::http
