#include "cascade/http/bearer_tokens.hpp"

#include <fstream>
#include <sstream>

#include "cascade/common/private_file.hpp"

namespace cascade::http {

namespace {

// Short tokens can be guessed; 16 characters of a random token are ~96 bits.
constexpr std::size_t kMinTokenChars = 16;

// Same result as a == b, in time that depends on the lengths only.
bool equal_in_constant_time(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

std::variant<BearerTokens, std::string> BearerTokens::load(const std::string& file) {
  if (auto error = check_private_file(file, "token file"); !error.empty()) return error;
  std::ifstream in(file);
  if (!in) return "cannot read token file '" + file + "'";
  BearerTokens tokens;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line);
    std::string name, token, extra;
    words >> name >> token >> extra;
    if (name.empty() || name.front() == '#') continue;
    const auto where = file + ":" + std::to_string(number) + ": ";
    if (token.empty() || !extra.empty()) return where + "expected 'NAME TOKEN'";
    if (token.size() < kMinTokenChars)
      return where + "token '" + name + "' is shorter than " + std::to_string(kMinTokenChars) +
             " characters (make one with: head -c 24 /dev/urandom | base64)";
    tokens.tokens_.emplace_back(std::move(name), std::move(token));
  }
  if (tokens.tokens_.empty()) return "token file '" + file + "' holds no token";
  return tokens;
}

BearerTokens BearerTokens::of(std::vector<std::pair<std::string, std::string>> name_and_token) {
  BearerTokens tokens;
  tokens.tokens_ = std::move(name_and_token);
  return tokens;
}

std::optional<std::string> BearerTokens::name_of(std::string_view presented) const {
  std::optional<std::string> found;
  // Every token compared, so the time says nothing about which one matched.
  for (const auto& [name, token] : tokens_)
    if (equal_in_constant_time(presented, token) && !found) found = name;
  return found;
}

std::string_view presented_token(std::string_view authorization, std::string_view consul_token,
                                 std::string_view token_argument) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() > kBearer.size() && authorization.starts_with(kBearer))
    return authorization.substr(kBearer.size());
  return consul_token.empty() ? token_argument : consul_token;
}

}  // namespace cascade::http
