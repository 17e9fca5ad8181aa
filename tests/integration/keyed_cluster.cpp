#include "cascade/tests/integration/keyed_cluster.hpp"

#include <fstream>

#include "cascade/common/curve_keys.hpp"

namespace cascade::integration {

std::string KeyedClusterTest::keygen(const std::string& name) {
  const auto keys = curve::generate_key_pair();
  curve::write_key_files(dir(), name, keys);
  return keys.public_z85;
}

std::string KeyedClusterTest::key_file(const std::string& name) const {
  return (dir() / (name + ".key")).string();
}

std::string KeyedClusterTest::public_key_file(const std::string& name) const {
  return (dir() / (name + ".pub")).string();
}

void KeyedClusterTest::authorize_keys(const std::vector<std::pair<std::string, std::string>>& lines,
                                      const std::string& file) {
  // Written aside and renamed: a hub reloading on SIGHUP never reads half a file.
  const auto written = keys_file(file + ".new");
  {
    std::ofstream out(written, std::ios::trunc);
    for (const auto& [key, rest] : lines)
      out << curve::read_public_key_file(public_key_file(key)) << " " << rest << "\n";
  }
  std::filesystem::rename(written, keys_file(file));
}

void KeyedClusterTest::authorize(const std::vector<std::string>& lines, const std::string& file) {
  std::vector<std::pair<std::string, std::string>> keyed;
  for (const auto& line : lines)
    keyed.emplace_back(line.substr(0, line.find(' ')), line);
  authorize_keys(keyed, file);
}

RunningHub KeyedClusterTest::start_keyed_hub(HubOptions options, const std::string& key,
                                             const std::string& file) {
  options.extra.insert(options.extra.end(), {"--secret-key", key_file(key), "--authorized-keys",
                                             keys_file(file).string()});
  return start_hub(options);
}

std::vector<std::string> KeyedClusterTest::as(const std::string& name,
                                              const std::string& hub_key) const {
  return {"--secret-key", key_file(name), "--hub-public-key", public_key_file(hub_key)};
}

Process& KeyedClusterTest::start_keyed_provider(const std::string& endpoint, const std::string& key,
                                                const std::string& id,
                                                const std::string& registration,
                                                const std::string& hub_key) {
  auto args = as(key, hub_key);
  args.insert(args.end(), {"--hub", endpoint, "--id", id, "--register", registration});
  return start_agent(id, args);
}

CtlResult KeyedClusterTest::ctl_as(const std::string& name, const RunningHub& hub,
                                   std::vector<std::string> args) {
  auto all = as(name);
  all.insert(all.end(), {"--hub", hub.endpoint});
  all.insert(all.end(), args.begin(), args.end());
  return ctl(all);
}

bool KeyedClusterTest::wait_until_resolved(const RunningHub& hub, const std::string& reader,
                                           const std::string& service, const std::string& address) {
  return poll_until(
      [&] {
        const auto r = ctl_as(reader, hub, {"resolve", service});
        return r.status.exited_with(0) && r.out.find(address) != std::string::npos;
      },
      kPatience, Millis{100});
}

std::unique_ptr<HubProbe> KeyedClusterTest::probe_as(const std::string& name,
                                                     const std::string& endpoint,
                                                     const std::string& hub_key) const {
  return std::make_unique<HubProbe>(endpoint, curve::read_secret_key_file(key_file(name)),
                                    curve::read_public_key_file(public_key_file(hub_key)));
}

}  // namespace cascade::integration
