#include "cascade/tools/ctl/render_config.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>

#include "cascade/common/config_json.hpp"
#include "cascade/tools/ctl/render.hpp"

namespace cascade::ctl {
namespace {

// A value in a table cell: text as it is, other bytes as "0x..." (long ones cut).
std::string cell_of(std::string_view value) {
  if (is_text_value(value)) return std::string(value);
  constexpr std::size_t kShown = 32;
  return "0x" + hex_of(value.substr(0, kShown)) + (value.size() > kShown ? "..." : "") + " (" +
         std::to_string(value.size()) + " bytes)";
}

std::string change_of(const proto::ConfigChange& c) {
  const auto side = [](const std::optional<std::string>& v) {
    return v ? cell_of(*v) : std::string("(unset)");
  };
  return side(c.old_value) + " -> " + side(c.new_value);
}

std::string get_table(const proto::ConfigReply& reply) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : reply.entries)
    rows.push_back({e.key, cell_of(e.value), std::to_string(e.origin.tier), e.origin.hub,
                    std::to_string(e.origin.version)});
  return fmt::format("group {}  version {}  {} keys\n", printable(reply.group), reply.version,
                     reply.entries.size()) +
         format_table({{"KEY"}, {"VALUE"}, {"TIER", Align::kRight}, {"HUB"}, {"VERSION"}}, rows);
}

std::string list_table(const proto::ConfigReply& reply) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : reply.groups)
    rows.push_back({g.group, std::to_string(g.version), std::to_string(g.keys),
                    std::to_string(g.own_keys), std::to_string(g.bytes),
                    std::to_string(g.followers)});
  return format_table({{"GROUP"},
                       {"VERSION"},
                       {"KEYS", Align::kRight},
                       {"OWN", Align::kRight},
                       {"BYTES", Align::kRight},
                       {"FOLLOWERS", Align::kRight}},
                      rows);
}

std::string history_table(const proto::ConfigReply& reply) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : reply.history)
    rows.push_back(
        {std::to_string(c.version), format_wall_ms(c.wall_ms), c.key, change_of(c), c.author});
  return format_table({{"VERSION"}, {"WHEN"}, {"KEY"}, {"CHANGE"}, {"AUTHOR"}}, rows);
}

}  // namespace

std::string format_wall_ms(std::int64_t wall_ms) {
  if (wall_ms <= 0) return "-";
  const std::time_t seconds = wall_ms / 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", utc, wall_ms % 1000);
}

std::string config_table(proto::ConfigView view, const proto::ConfigReply& reply, bool value_only) {
  switch (view) {
    case proto::ConfigView::kGet:
      if (value_only && reply.entries.size() == 1)
        return printable(cell_of(reply.entries.front().value)) + "\n";
      return get_table(reply);
    case proto::ConfigView::kList:
      return list_table(reply);
    case proto::ConfigView::kHistory:
      return history_table(reply);
  }
  return {};
}

std::string config_json(proto::ConfigView view, const proto::ConfigReply& reply) {
  auto json = config_reply_json(view, reply);
  if (view == proto::ConfigView::kHistory)
    for (auto& change : json["history"])
      change["when"] = format_wall_ms(change["wall_ms"].get<std::int64_t>());
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace cascade::ctl
