#include "cascade/hub/liveness_probes.hpp"

#include <utility>

namespace cascade::hub {

void LivenessProbes::probe(std::string_view node_id, const std::vector<std::string>& addresses) {
  if (!config_.enabled || addresses.empty()) return;
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) it = nodes_.emplace(std::string(node_id), NodeProbes{}).first;
  auto& node = it->second;
  node.addresses.insert(addresses.begin(), addresses.end());
  for (const auto& address : node.addresses) {
    if (node.refused.contains(address)) continue;  // already known gone
    if (queued_.size() >= config_.max_queued) {
      ++counters_.probes_capped;  // asked again a lease later while still held
      continue;
    }
    queued_.push_back({std::string(node_id), address});
  }
}

void LivenessProbes::forget(std::string_view node_id) {
  if (auto it = nodes_.find(node_id); it != nodes_.end()) nodes_.erase(it);
}

bool LivenessProbes::on_result(const ProbeResult& result) {
  switch (result.outcome) {
    case ProbeOutcome::kRefused:
      ++counters_.probes_refused;
      return refused(result.node_id, result.address);
    case ProbeOutcome::kAccepted:
      ++counters_.probes_accepted;
      break;
    case ProbeOutcome::kNoAnswer:
      ++counters_.probes_no_answer;
      break;
  }
  // Alive, or cannot tell: a refusal seen earlier no longer stands for this address.
  if (auto it = nodes_.find(result.node_id); it != nodes_.end())
    it->second.refused.erase(result.address);
  return false;
}

bool LivenessProbes::on_refused_report(std::string_view node_id, const std::string& address) {
  if (!config_.enabled || !nodes_.contains(node_id)) return false;
  ++counters_.refused_reports;
  return refused(node_id, address);
}

bool LivenessProbes::refused(std::string_view node_id, const std::string& address) {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end() || !it->second.addresses.contains(address)) return false;
  auto& node = it->second;
  node.refused.insert(address);
  if (node.refused.size() < node.addresses.size()) return false;
  nodes_.erase(it);
  return true;
}

std::vector<ProbeRequest> LivenessProbes::take_requests() {
  counters_.probes_sent += queued_.size();
  return std::exchange(queued_, {});
}

}  // namespace cascade::hub
