#include "cascade/hub/authorized_keys.hpp"

#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "cascade/common/curve_keys.hpp"

namespace cascade::hub {

namespace {

constexpr std::size_t kMaxNameChars = 255;

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;)
    words.push_back(std::move(word));
  return words;
}

// "a,b,c" into its globs; empty when a glob is empty (",a", "a,,b", "").
std::vector<std::string> globs_of(std::string_view list) {
  std::vector<std::string> globs;
  for (std::size_t start = 0;;) {
    const auto comma = list.find(',', start);
    const auto glob = list.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (glob.empty()) return {};
    globs.emplace_back(glob);
    if (comma == std::string_view::npos) return globs;
    start = comma + 1;
  }
}

// Reads the optional `register=` and `query=` words into `principal`; the
// error for the first word that is neither (or repeats one), else "".
std::string read_scopes(const std::vector<std::string>& words, access::Principal& principal) {
  bool seen_register = false;
  bool seen_query = false;
  for (std::size_t i = 3; i < words.size(); ++i) {
    const auto& word = words[i];
    const auto equals = word.find('=');
    const auto field = word.substr(0, equals);
    bool* seen = field == "register" ? &seen_register : field == "query" ? &seen_query : nullptr;
    if (seen == nullptr || equals == std::string::npos)
      return "unknown field '" + word + "' (expected register=GLOB,... or query=GLOB,...)";
    if (*seen) return field + "= given twice";
    *seen = true;
    auto globs = globs_of(std::string_view(word).substr(equals + 1));
    if (globs.empty()) return field + "= needs one or more globs separated by commas";
    (field == "register" ? principal.register_scope : principal.query_scope) =
        access::ServiceScope(std::move(globs));
  }
  return {};
}

// One non-comment line as (key, principal), or the error.
std::variant<std::pair<std::string, access::Principal>, std::string> parse_line(
    const std::string& line) {
  const auto words = words_of(line);
  if (words.size() < 3) return "expected PUBLIC_KEY NAME ROLE [register=...] [query=...]";
  if (!curve::is_z85_key(words[0]))
    return "bad key '" + words[0] + "': a public key is " + std::to_string(curve::kZ85KeyChars) +
           " Z85 characters (as in NAME.pub)";
  access::Principal principal;
  principal.name = words[1];
  if (principal.name.size() > kMaxNameChars) return "name longer than 255 characters";
  const auto role = access::parse_role(words[2]);
  if (!role) return "unknown role '" + words[2] + "' (agent, hub, proxy, operator or reader)";
  principal.role = *role;
  if (auto error = read_scopes(words, principal); !error.empty()) return error;
  return std::pair{words[0], std::move(principal)};
}

}  // namespace

AuthorizedKeysResult AuthorizedKeys::parse(std::string_view text, std::string_view origin) {
  auto keys = std::make_shared<AuthorizedKeys>();
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto where = std::string(origin) + ":" + std::to_string(number) + ": ";
    auto parsed = parse_line(line);
    if (auto* error = std::get_if<std::string>(&parsed)) return where + *error;
    auto& [key, principal] = std::get<0>(parsed);
    if (!keys->by_key_.emplace(key, std::move(principal)).second)
      return where + "duplicate key (already given for '" + keys->by_key_.at(key).name + "')";
  }
  return std::shared_ptr<const AuthorizedKeys>(std::move(keys));
}

AuthorizedKeysResult AuthorizedKeys::load(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return "cannot read authorised keys file '" + file.string() + "'";
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), file.string());
}

const access::Principal* AuthorizedKeys::find(std::string_view public_z85) const {
  const auto it = by_key_.find(std::string(public_z85));
  return it == by_key_.end() ? nullptr : &it->second;
}

}  // namespace cascade::hub
