#include "cascade/agent/api/hub_editor.hpp"

#include <spdlog/spdlog.h>

#include <zmq.hpp>

#include "cascade/common/log.hpp"
#include "cascade/tools/ctl/hub_client.hpp"

namespace cascade::agent::api {

namespace {

// The hub's refusals and silences, logged at most this often.
SharedRateLimit& refusal_log() {
  static SharedRateLimit limit(10, std::chrono::seconds(10));
  return limit;
}

EditOutcome outcome_of(const proto::Message& reply) {
  using Result = EditOutcome::Result;
  if (const auto* admin = std::get_if<proto::AdminReply>(&reply))
    return {admin->ok ? Result::kApplied : Result::kRefused, admin->message};
  if (const auto* error = std::get_if<proto::ErrorReply>(&reply)) {
    const bool key = error->code == proto::ErrorCode::kForbidden ||
                     error->code == proto::ErrorCode::kUnauthenticated;
    return {key ? Result::kForbidden : Result::kRefused, error->message};
  }
  return {Result::kUnanswered, "the hub answered with an unexpected message"};
}

}  // namespace

// A HubClient towards the hub the agent beats to now, made again when the
// agent moved to another hub or a request went unanswered (its socket may
// hold a request the hub never took).
class HubEditor::Link {
 public:
  ctl::HubClient& towards(const Client& client) {
    const auto& options = client.options();
    const auto& endpoint = options.hubs.at(client.status().current_hub);
    if (!hub_ || endpoint != endpoint_) {
      std::optional<ctl::CurveCredentials> curve;
      if (options.keys.enabled())
        curve = ctl::CurveCredentials{{options.keys.public_key, options.keys.secret_key},
                                      options.keys.hub_key_for(endpoint)};
      hub_.reset();
      hub_ = std::make_unique<ctl::HubClient>(context_, endpoint, curve);
      endpoint_ = endpoint;
    }
    return *hub_;
  }
  void forget() { hub_.reset(); }

 private:
  zmq::context_t context_{1};
  std::string endpoint_;
  std::unique_ptr<ctl::HubClient> hub_;  // after context_: closed first
};

HubEditor::HubEditor(const Client& client, Duration timeout, std::size_t max_queued)
    : client_(client),
      timeout_(timeout),
      max_queued_(max_queued),
      link_(std::make_unique<Link>()),
      thread_([this] { run(); }) {}

HubEditor::~HubEditor() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void HubEditor::edit(std::string group, std::vector<proto::ConfigEdit> edits, std::string actor,
                     Done done) {
  Job job{std::move(group), std::move(edits), std::move(actor), std::move(done)};
  {
    std::lock_guard lock(mu_);
    if (queue_.size() < max_queued_) {
      queue_.push_back(std::move(job));
      cv_.notify_all();
      return;
    }
  }
  const EditOutcome overflow{
      EditOutcome::Result::kOverflow,
      std::to_string(max_queued_) + " edits are waiting for the hub at this agent already"};
  count_and_log(job, overflow);
  job.done(overflow);
}

void HubEditor::run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    auto job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    const auto outcome = send(job);
    count_and_log(job, outcome);
    job.done(outcome);
    lock.lock();
  }
}

EditOutcome HubEditor::send(const Job& job) {
  proto::AdminRequest request;
  request.request_id = next_request_id_++;
  request.op = proto::AdminOp::kConfigEdit;
  request.actor = job.actor;
  request.config_group = job.group;
  request.config_edits = job.edits;
  ++counters_.sent;
  auto& hub = link_->towards(client_);
  if (auto reply = hub.request(request, timeout_)) return outcome_of(*reply);
  EditOutcome outcome{
      hub.key_refused() ? EditOutcome::Result::kForbidden : EditOutcome::Result::kUnanswered,
      hub.failure()};
  link_->forget();
  return outcome;
}

void HubEditor::count_and_log(const Job& job, const EditOutcome& outcome) {
  using Result = EditOutcome::Result;
  switch (outcome.result) {
    case Result::kApplied:
      ++counters_.applied;
      return;
    case Result::kRefused:
    case Result::kForbidden:
      ++counters_.refused;
      break;
    case Result::kUnanswered:
      ++counters_.unanswered;
      break;
    case Result::kOverflow:
      ++counters_.overflowed;
      break;
  }
  std::uint64_t suppressed = 0;
  if (refusal_log().allow(suppressed))
    spdlog::warn("config edit of group {} by {} not applied: {} ({} such messages suppressed)",
                 job.group, job.actor, outcome.message, suppressed);
}

}  // namespace cascade::agent::api
