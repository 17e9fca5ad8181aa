#pragma once
// Strict reading of JSON request bodies (the agent's and the hub's HTTP APIs): every field typed
// and bounded, unknown fields refused, the first problem reported with the field's name. A bad body
// becomes a 400 whose code says which kind of problem it was:
//   invalid_json   the body is not JSON, or not an object
//   missing_field  a required field is absent
//   invalid_field  a field has the wrong type or an out-of-range value
//   unknown_field  a field this endpoint does not know (a typo, usually)
// Field names match exactly (cascade's own API), or folded as Consul matches
// them (its Go decoder ignores case, and it takes snake_case aliases).

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cascade/http/exchange.hpp"

namespace cascade::http {

struct BodyError {
  std::string code;
  std::string message;
  Response response() const { return Response::error(400, code, message); }
};

// A JSON document as a response body: one line, invalid UTF-8 (names from
// the wire are not promised to be UTF-8) replaced.
std::string dump_json(const nlohmann::ordered_json& json);

// The body as a JSON object, or invalid_json.
std::variant<nlohmann::json, BodyError> parse_object(std::string_view body);

// How a body's field names are matched to the names an endpoint reads.
enum class KeyMatch {
  kExact,   // as written
  kFolded,  // case and underscores ignored: "ID", "id"; "EnableTagOverride", "enable_tag_override"
};

class JsonFields {
 public:
  explicit JsonFields(const nlohmann::json& object, KeyMatch match = KeyMatch::kExact)
      : object_(object), match_(match) {}

  std::optional<std::string> text(std::string_view key, bool required = false);
  std::optional<std::uint64_t> number(std::string_view key, std::uint64_t max,
                                      bool required = false);
  std::optional<bool> flag(std::string_view key);
  std::optional<std::vector<std::string>> texts(std::string_view key);
  std::optional<std::map<std::string, std::string>> text_map(std::string_view key);
  // An object field, to read with a JsonFields of its own (nullptr when absent).
  const nlohmann::json* object(std::string_view key);
  // A field of any type (nullptr when absent).
  const nlohmann::json* any(std::string_view key);
  // An array of objects, each to read with a JsonFields of its own.
  std::optional<std::vector<const nlohmann::json*>> objects(std::string_view key);
  // Marks a field as known without reading it (accepted and ignored).
  void ignore(std::string_view key) { known_.insert(normal(key)); }

  // After every field was read: the first problem, or an unknown field.
  std::optional<BodyError> finish() const;
  // Records a problem found by the caller (a value the types allow but the endpoint does not).
  void fail(std::string_view key, const std::string& message);

 private:
  const nlohmann::json* field(std::string_view key, bool required,
                              bool type_ok(const nlohmann::json&), std::string_view expected);
  // `key` as this matching compares it.
  std::string normal(std::string_view key) const;

  const nlohmann::json& object_;
  KeyMatch match_;
  std::set<std::string, std::less<>> known_;
  std::optional<BodyError> error_;
};

}  // namespace cascade::http
