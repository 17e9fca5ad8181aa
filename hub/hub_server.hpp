#pragma once
// The hub's I/O shell: a ZeroMQ ROUTER socket, the clock and the store around
// a HubCore. One thread (the caller of run()) owns the core and the socket;
// the store belongs to the StoreWriter's thread once the core is restored.
//
// Durable acknowledgement: a reply that acknowledges a state change
// (HandleResult::durable) is held back until the write-behind batch holding
// that change has committed, so an agent never sees an ack for something a
// crash of the hub process could lose (with --fsync, nor a power loss).
// Group commit: one transaction per batch, never per message, committed on
// the writer's thread while this one keeps serving; steady-state beats
// write nothing and are answered at once.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>
#include <zmq.hpp>

#include "cascade/common/clock.hpp"
#include "cascade/common/log.hpp"
#include "cascade/common/zmq_util.hpp"
#include "cascade/hub/connection_monitor.hpp"
#include "cascade/hub/curve_gate.hpp"
#include "cascade/hub/hub_config.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/hub/hub_metrics.hpp"
#include "cascade/hub/inbound_queue.hpp"
#include "cascade/hub/owner_mailbox.hpp"
#include "cascade/hub/probe_runner.hpp"
#include "cascade/hub/store.hpp"
#include "cascade/hub/store_writer.hpp"

namespace cascade::hub {

class HubServer {
 public:
  // Reads the key files (config.security; throws with a message for the
  // operator when one is unusable), then takes the next epoch from the store
  // and restores its snapshot.
  HubServer(const HubConfig& config, const Clock& clock, HubStore& store, zmq::context_t& context);

  // Binds the listen endpoint and returns the one actually bound (a port of
  // `*` resolved). Throws zmq::error_t (e.g. EADDRINUSE).
  std::string bind();

  // Serves until `stop` is set, then commits what is pending. Whenever
  // `reload_requested` is set (SIGHUP), clears it and reloads the authorised keys.
  void run(const std::atomic<bool>& stop, std::atomic<bool>* reload_requested = nullptr);

  // Registers the hub's metrics (hub/hub_metrics.hpp) in `registry`, which
  // must outlive the server; before run(). Without it the hub counts only
  // what its status shows. Scrapes take their sample of the state on the
  // owning thread, through the mailbox, waiting at most `sample_timeout`.
  void enable_metrics(metrics::Registry& registry,
                      std::chrono::milliseconds sample_timeout = std::chrono::seconds(2));

  // Work for the owning thread, from any other (hub/owner_mailbox.hpp).
  OwnerMailbox& mailbox() { return mailbox_; }

  // Something the operator's reload re-reads besides the authorised keys
  // (SIGHUP, reload-keys): the HTTP admin API's token file. Before run().
  // `reload` runs on the owning thread, logs what it found and says it; a
  // failure keeps what it had. The reload-keys reply says every outcome.
  using ReloadOutcome = CurveGate::ReloadOutcome;
  void add_reload(std::function<ReloadOutcome()> reload);

  // The rest is for tasks the mailbox runs (the HTTP admin API,
  // hub/admin_api/server_owner.hpp): on the owning thread only.
  //
  // An operator command that another of the hub's interfaces received and
  // authenticated as `request.actor` (e.g. "http:alice", from a bearer
  // token), from `peer_address`: handled as cascadectl's AdminRequest is
  // (HubCore::handle: validation, audit record) and, on a hub with keys, as
  // sent by an operator key of that name. The reply acknowledges a change:
  // give it only from an after_commit() callback.
  HandleResult handle_operator_command(const proto::AdminRequest& request,
                                       std::string_view peer_address);
  // `then(committed)` runs on the owning thread once the commit of the batch
  // holding what was changed so far was tried: committed false when the
  // store refused it (the core requeued the change; a later batch retries it).
  void after_commit(std::function<void(bool committed)> then);
  // What `cascadectl status` shows: the core's status with the shell's part
  // (security mode, connection and key counters).
  proto::StatusReply status() const;
  MonoTime now() const { return clock_.now(); }

  const HubCore& core() const { return core_; }

 private:
  using Multipart = std::vector<zmq::message_t>;
  // What waits for one batch's commit.
  struct CommitGroup {
    std::vector<Multipart> replies;  // acknowledgements of the batch's changes
    // Pushes made after those replies: a push is a delta from the version
    // the reply before it carries, and one that overtook its reply would not
    // apply.
    std::vector<Multipart> pushes;
    // Interfaces waiting for the commit that holds their operator's change.
    std::vector<std::function<void(bool committed)>> waiters;
  };

  // One pass over the hub's queue (after reading what the socket holds, if
  // `readable`): frames served oldest first, those past the bound shed;
  // true when frames are left queued or any was shed (a backlog).
  bool serve_pending_frames(bool readable);
  void read_queued_frames();
  void shed(InboundQueue::Next& next);
  void handle(Multipart& frames);
  void note_valid_input(const proto::DecodedFrame& decoded, Multipart& frames,
                        const access::Principal* key);
  void connect_upstreams(zmq::context_t& context);
  void receive_from_upstream(std::size_t index);
  // Sends what the core produced for the upstreams and the deferred replies.
  void route_core_output();
  void run_probes();
  void reply(Multipart& frames, std::vector<proto::Message> replies, bool batched, bool durable);
  void send_deferred(const DeferredReply& deferred);
  // Remembers how a node's beats arrive, so pushes can follow the same way.
  void learn_route(const proto::Message& message, const Multipart& frames);
  void send_to_node(const NodeMessage& out);
  // Hands the core's pending batch to the writer (or, when nothing changed,
  // releases what waits at once). Only while the writer is idle.
  void flush();
  // Whether to flush now: never while the writer commits. With the queue
  // drained: when a reply or an interface waits for it, or at the flush
  // interval. Under a backlog: at the flush interval.
  bool commit_due(bool backlog) const;
  // The writer's outcome: what waited for it is sent (or dropped, the batch
  // requeued and the failure logged).
  void finish_commit(StoreWriter::Outcome outcome);
  void release(CommitGroup& group, bool committed);
  // At the end of run(): the batch in hand, then the last one, committed.
  void commit_remaining();
  bool behind_commit() const;
  void send_now(Multipart& frames);
  void log_bad_input(const proto::DecodeFailure& failure);
  // Completes the core's reply to an accepted reload-keys command.
  void reload_keys(proto::Message& reply);
  // The authorised keys (when the hub has keys) and every add_reload(); the
  // outcomes joined.
  ReloadOutcome reload_all();
  // The security mode and counters, after the core built a status reply.
  void complete_status(proto::StatusReply& status) const;
  // What a scrape shows of the state; on the owning thread.
  metrics::SampledFamilies::Sample metrics_sample() const;
  std::chrono::milliseconds poll_timeout() const;

  HubConfig config_;
  const Clock& clock_;
  CurveGate gate_;  // first: a bad key file stops the start before the store's epoch moves
  zmq::socket_t socket_;
  ConnectionMonitor connections_;         // of socket_: limit, idle timeout
  std::vector<zmq::socket_t> upstreams_;  // one DEALER per --upstream
  HubCore core_;
  InboundQueue inbound_;  // frames read off socket_, served oldest first or shed
  ProbeRunner probes_;    // the TCP connects core_ asks for, on their own thread
  // Queries forwarded to the upper tier, by core token: the envelope their
  // reply goes back in, as a frame of its own.
  std::unordered_map<std::uint64_t, Multipart> deferred_envelopes_;
  // The routing frames of each consumer's (or lower-tier hub's) last beat:
  // its own DEALER, or the proxy it comes through. Identity stays in the
  // message; this only says which connection reaches that node now.
  std::unordered_map<std::string, std::vector<std::string>> node_routes_;
  proto::DecodeLimits limits_;
  StoreWriter writer_;      // after core_: the store is the writer's once restored
  CommitGroup gathering_;   // waits for the changes marked since the last batch
  CommitGroup committing_;  // waits for the batch the writer has
  std::vector<std::function<ReloadOutcome()>> reloads_;
  MonoTime last_tick_{};  // when the core's timers last ran
  MonoTime last_flush_;
  MonoTime next_route_prune_;
  LinkWatches upstream_links_;  // one per upstreams_: tells the core when a link is back
  RateLimit bad_input_log_{10, Duration{10'000}};
  RateLimit store_error_log_{5, Duration{10'000}};
  OwnerMailbox mailbox_;
  std::unique_ptr<ShellMetrics> metrics_;  // null: --metrics not given
  std::unique_ptr<StoreMetrics> store_metrics_;
};

}  // namespace cascade::hub
