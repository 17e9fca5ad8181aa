#pragma once
// cascadectl's rendering of the config centre's replies (ConfigReply): tables
// for people, JSON for scripts. Pure, like tools/ctl/render.hpp.
//
// Tables:
//   get GROUP:      a header line (group, version), then KEY VALUE TIER HUB VERSION
//                   (the origin of each value: where it was set)
//   get GROUP KEY:  the value alone and a newline (`value_only`; text as it is
//                   but for control bytes, escaped; other bytes as 0x... hex)
//   list:           GROUP VERSION KEYS OWN BYTES FOLLOWERS
//   history GROUP:  VERSION WHEN KEY CHANGE AUTHOR, newest first
// JSON: common/config_json.hpp's shapes; history entries also have "when"
// (the wall time as format_wall_ms prints it).

#include <string>

#include "cascade/common/protocol.hpp"

namespace cascade::ctl {

std::string config_table(proto::ConfigView view, const proto::ConfigReply& reply,
                         bool value_only = false);
std::string config_json(proto::ConfigView view, const proto::ConfigReply& reply);

// "2026-12-02T13:01:02.345Z" for Unix milliseconds; "-" for 0 (not known).
std::string format_wall_ms(std::int64_t wall_ms);

}  // namespace cascade::ctl
