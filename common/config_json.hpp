#pragma once
// The JSON of the config centre's answers, as every JSON interface shows
// them (cascadectl config --json, the hub's HTTP admin API, the agent's HTTP
// API): one definition, so the field names cannot drift apart. Header-only;
// the targets that include it link nlohmann_json.
//
//   get:     {"group", "version", "entries": [{"key", "value", "binary", ["value_hex"],
//            "tier", "hub", "version"}]}
//            "value" holds the bytes as UTF-8 (invalid sequences replaced when
//            printed); when "binary" is true they are not text and
//            "value_hex" holds them exactly.
//   list:    {"groups": [{"group", "version", "keys", "own_keys", "bytes", "followers"}]}
//   history: {"group", "history": [{"version", "wall_ms", "key", "old", "new", "author"}]}
//            (old / new: null when the key was not set / was removed)

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "cascade/common/protocol.hpp"

namespace cascade {

// Text a terminal and a JSON reader can take: valid UTF-8 without control
// characters other than tab and newline.
inline bool is_text_value(std::string_view bytes) {
  std::size_t follow = 0;  // continuation bytes still expected
  for (unsigned char c : bytes) {
    if (follow > 0) {
      if ((c & 0xC0U) != 0x80U) return false;
      --follow;
      continue;
    }
    if (c < 0x80U) {
      if ((c < 0x20U && c != '\n' && c != '\t') || c == 0x7FU) return false;
    } else if ((c & 0xE0U) == 0xC0U && c >= 0xC2U) {
      follow = 1;
    } else if ((c & 0xF0U) == 0xE0U) {
      follow = 2;
    } else if ((c & 0xF8U) == 0xF0U && c <= 0xF4U) {
      follow = 3;
    } else {
      return false;
    }
  }
  return follow == 0;
}

inline std::string hex_of(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4U];
    out += kDigits[c & 0xFU];
  }
  return out;
}

// hex_of's inverse; nullopt for an odd length or a character not a hex digit.
inline std::optional<std::string> bytes_of_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int high = digit(hex[i]);
    const int low = digit(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>((high << 4) | low));
  }
  return out;
}

inline nlohmann::ordered_json config_entry_json(const proto::ConfigEntry& e) {
  const bool text = is_text_value(e.value);
  nlohmann::ordered_json entry{{"key", e.key}, {"value", e.value}, {"binary", !text}};
  if (!text) entry["value_hex"] = hex_of(e.value);
  entry["tier"] = e.origin.tier;
  entry["hub"] = e.origin.hub;
  entry["version"] = e.origin.version;
  return entry;
}

inline nlohmann::ordered_json config_get_json(const proto::ConfigReply& reply) {
  auto entries = nlohmann::ordered_json::array();
  for (const auto& e : reply.entries)
    entries.push_back(config_entry_json(e));
  return {{"group", reply.group}, {"version", reply.version}, {"entries", std::move(entries)}};
}

inline nlohmann::ordered_json config_list_json(const proto::ConfigReply& reply) {
  auto groups = nlohmann::ordered_json::array();
  for (const auto& g : reply.groups)
    groups.push_back({{"group", g.group},
                      {"version", g.version},
                      {"keys", g.keys},
                      {"own_keys", g.own_keys},
                      {"bytes", g.bytes},
                      {"followers", g.followers}});
  return {{"groups", std::move(groups)}};
}

inline nlohmann::ordered_json config_history_json(const proto::ConfigReply& reply) {
  const auto value = [](const std::optional<std::string>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  // A binary value is given in hex too, as config_entry_json gives it.
  const auto add_hex = [](nlohmann::ordered_json& change, const char* name,
                          const std::optional<std::string>& v) {
    if (v && !is_text_value(*v)) change[name] = hex_of(*v);
  };
  auto history = nlohmann::ordered_json::array();
  for (const auto& c : reply.history) {
    nlohmann::ordered_json change{
        {"version", c.version},      {"wall_ms", c.wall_ms},      {"key", c.key},
        {"old", value(c.old_value)}, {"new", value(c.new_value)}, {"author", c.author}};
    add_hex(change, "old_hex", c.old_value);
    add_hex(change, "new_hex", c.new_value);
    history.push_back(std::move(change));
  }
  return {{"group", reply.group}, {"history", std::move(history)}};
}

inline nlohmann::ordered_json config_reply_json(proto::ConfigView view,
                                                const proto::ConfigReply& reply) {
  switch (view) {
    case proto::ConfigView::kGet:
      return config_get_json(reply);
    case proto::ConfigView::kList:
      return config_list_json(reply);
    case proto::ConfigView::kHistory:
      return config_history_json(reply);
  }
  return nullptr;
}

}  // namespace cascade
