#include "cascade/http/json_fields.hpp"

#include <algorithm>
#include <cctype>

namespace cascade::http {

namespace {

bool is_string(const nlohmann::json& j) {
  return j.is_string();
}
bool is_object(const nlohmann::json& j) {
  return j.is_object();
}
// An array (or an object) whose every element is what `Element` accepts.
template <bool (*Element)(const nlohmann::json&)>
bool array_of(const nlohmann::json& j) {
  return j.is_array() && std::all_of(j.begin(), j.end(), Element);
}
template <bool (*Element)(const nlohmann::json&)>
bool object_of(const nlohmann::json& j) {
  return j.is_object() && std::all_of(j.begin(), j.end(), Element);
}

}  // namespace

std::string dump_json(const nlohmann::ordered_json& json) {
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::variant<nlohmann::json, BodyError> parse_object(std::string_view body) {
  auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_discarded()) return BodyError{"invalid_json", "the body is not valid JSON"};
  if (!parsed.is_object()) return BodyError{"invalid_json", "the body must be a JSON object"};
  return parsed;
}

std::string JsonFields::normal(std::string_view key) const {
  if (match_ == KeyMatch::kExact) return std::string(key);
  std::string folded;
  for (unsigned char c : key)
    if (c != '_') folded.push_back(static_cast<char>(std::tolower(c)));
  return folded;
}

const nlohmann::json* JsonFields::field(std::string_view key, bool required,
                                        bool type_ok(const nlohmann::json&),
                                        std::string_view expected) {
  const auto wanted = normal(key);
  known_.insert(wanted);
  auto it = object_.find(key);
  if (match_ == KeyMatch::kFolded)
    for (auto i = object_.begin(); it == object_.end() && i != object_.end(); ++i)
      if (normal(i.key()) == wanted) it = i;
  if (it == object_.end() || it->is_null()) {
    if (required && !error_)
      error_ = BodyError{"missing_field", "field '" + std::string(key) + "' is required"};
    return nullptr;
  }
  if (!type_ok(*it)) {
    fail(key, "must be " + std::string(expected));
    return nullptr;
  }
  return &*it;
}

void JsonFields::fail(std::string_view key, const std::string& message) {
  if (!error_) error_ = BodyError{"invalid_field", "field '" + std::string(key) + "' " + message};
}

std::optional<std::string> JsonFields::text(std::string_view key, bool required) {
  const auto* value = field(
      key, required, [](const nlohmann::json& j) { return j.is_string(); }, "a string");
  if (!value) return std::nullopt;
  return value->get<std::string>();
}

std::optional<std::uint64_t> JsonFields::number(std::string_view key, std::uint64_t max,
                                                bool required) {
  const auto* value = field(
      key, required, [](const nlohmann::json& j) { return j.is_number_unsigned(); },
      "a whole number, 0 or more");
  if (!value) return std::nullopt;
  const auto n = value->get<std::uint64_t>();
  if (n > max) {
    fail(key, "must be at most " + std::to_string(max));
    return std::nullopt;
  }
  return n;
}

std::optional<bool> JsonFields::flag(std::string_view key) {
  const auto* value = field(
      key, false, [](const nlohmann::json& j) { return j.is_boolean(); }, "true or false");
  if (!value) return std::nullopt;
  return value->get<bool>();
}

std::optional<std::vector<std::string>> JsonFields::texts(std::string_view key) {
  const auto* value = field(key, false, array_of<is_string>, "an array of strings");
  if (!value) return std::nullopt;
  return value->get<std::vector<std::string>>();
}

std::optional<std::map<std::string, std::string>> JsonFields::text_map(std::string_view key) {
  const auto* value = field(key, false, object_of<is_string>, "an object of string values");
  if (!value) return std::nullopt;
  return value->get<std::map<std::string, std::string>>();
}

const nlohmann::json* JsonFields::object(std::string_view key) {
  return field(key, false, is_object, "an object");
}

const nlohmann::json* JsonFields::any(std::string_view key) {
  return field(
      key, false, [](const nlohmann::json&) { return true; }, "anything");
}

std::optional<std::vector<const nlohmann::json*>> JsonFields::objects(std::string_view key) {
  const auto* value = field(key, false, array_of<is_object>, "an array of objects");
  if (!value) return std::nullopt;
  std::vector<const nlohmann::json*> list;
  for (const auto& element : *value)
    list.push_back(&element);
  return list;
}

std::optional<BodyError> JsonFields::finish() const {
  if (error_) return error_;
  for (const auto& [key, value] : object_.items())
    if (!known_.contains(normal(key)))
      return BodyError{"unknown_field", "unknown field '" + key + "'"};
  return std::nullopt;
}

}  // namespace cascade::http
