#include "cascade/agent/agent_core.hpp"

#include <algorithm>
#include <limits>

#include "cascade/common/digest.hpp"
#include "cascade/common/list_version.hpp"

namespace cascade::agent {

namespace {
// Declared for a list whose version this hub may not have issued; larger than
// any version a hub issues, so the hub answers with the full list (or "gone").
constexpr std::uint64_t kUnverifiedVersion = ~std::uint64_t{0};
// Delta mode remembers, per unanswered beat, which changes it covered.
constexpr std::size_t kMaxTrackedBeats = 256;

template <typename T>
void append(std::vector<T>& to, std::vector<T>&& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}
}  // namespace

void AgentActions::merge(AgentActions&& other) {
  append(send, std::move(other.send));
  append(changed, std::move(other.changed));
  append(dropped, std::move(other.dropped));
  append(answered, std::move(other.answered));
  append(timed_out, std::move(other.timed_out));
  append(refused, std::move(other.refused));
  append(keepalive, std::move(other.keepalive));
  append(config_changed, std::move(other.config_changed));
  append(config_dropped, std::move(other.config_dropped));
  deregistered |= other.deregistered;
}

AgentCore::AgentCore(AgentCoreConfig config, std::uint64_t rng_seed)
    : config_(std::move(config)),
      rng_(rng_seed),
      keepalive_rng_(rng_seed ^ 0x9e3779b97f4a7c15ULL),
      reporter_(config_.reports, config_.node_id),
      configs_(config_.subscription_ttl) {
  if (all_mode()) mirrors_.resize(config_.hub_count);
}

AgentActions AgentCore::start(MonoTime now) {
  AgentActions out;
  if (stopped_ || deregister_) return out;  // shut down before the transport came up
  send_keepalives(now, out);                // arms the first
  send_beat(now, out);  // announce ourselves at once; the period is jittered from here
  return out;
}

MonoTime AgentCore::next_deadline() const {
  if (stopped_) return MonoTime{Duration{std::numeric_limits<std::int64_t>::max() / 4}};  // never
  MonoTime next = next_beat_at_;
  if (resend_full_at_) next = std::min(next, *resend_full_at_);
  if (retry_at_) next = std::min(next, *retry_at_);
  for (const auto& [id, q] : pending_)
    next = std::min(next, q.deadline);
  if (auto reports = reporter_.next_deadline()) next = std::min(next, *reports);
  if (next_keepalive_at_) next = std::min(next, *next_keepalive_at_);
  return next;
}

void AgentCore::send_keepalives(MonoTime now, AgentActions& out) {
  if (!has_standby_hubs()) return;
  const auto interval = standby_keepalive_interval().count();
  if (!next_keepalive_at_) {  // first call: spread the fleet over one interval
    next_keepalive_at_ = now + Duration{keepalive_rng_.uniform(interval / 2, interval)};
    return;
  }
  if (now < *next_keepalive_at_) return;
  for (std::size_t hub = 0; hub < config_.hub_count; ++hub)
    if (hub != current_hub_) out.keepalive.push_back(hub);
  next_keepalive_at_ = now + Duration{keepalive_rng_.uniform(interval * 9 / 10, interval)};
}

AgentActions AgentCore::on_timer(MonoTime now) {
  AgentActions out;
  expire_queries(now, out);
  send_reports(now, out);
  if (stopped_ || deregister_)
    next_keepalive_at_.reset();  // leaving: a failover will not need the standby hubs
  else
    send_keepalives(now, out);
  if (resend_full_at_ && now >= *resend_full_at_) {
    resend_full_at_.reset();
    need_full_ = true;
    next_beat_at_ = now;
  }
  if (stopped_) return out;
  if (now < next_beat_at_) {
    retry_beat(now, out);
    return out;
  }
  if (deregister_) {  // stopping: no more beats, only the Deregister until it is acknowledged
    next_beat_at_ = now + retry_pause();
    send_deregister(out);
    return out;
  }
  const bool overdue = last_beat_unsent_ ||
                       now - last_beat_at_ >= std::chrono::duration_cast<Duration>(
                                                  beat_interval() * (1.0 - config_.beat_jitter));
  if (awaiting_reply_ && overdue) {
    ++counters_.beats_missed;
    if (++misses_ >= config_.misses_before_failover) {
      fail_over(now);
      return out;
    }
  }
  expire_unused(now, out);
  append(out.config_dropped, configs_.expire(now));
  send_beat(now, out);
  return out;
}

void AgentCore::send_reports(MonoTime now, AgentActions& out) {
  auto signals = reporter_.take_due(now);
  if (signals.empty() || stopped_) return;
  ++counters_.fast_fail_reports;
  out.send.push_back({current_hub_, proto::FailureReport{0, std::move(signals), 0}});
}

void AgentCore::fail_over(MonoTime now) {
  if (all_mode()) mirrors_[current_hub_].need_full = true;  // a mirror from now on
  current_hub_ = (current_hub_ + 1) % config_.hub_count;
  hub_holds_set_ = false;
  granted_interval_ = Duration{0};  // the next hub grants its own
  journal_.clear();
  for (auto& m : mirrors_)
    m.need_full = true;  // the journal they took deltas from is gone
  misses_ = 0;
  awaiting_reply_ = false;
  retry_at_.reset();
  ++failovers_;
  ++failover_streak_;
  // Capped exponential backoff, jittered so a fleet losing one hub does not
  // arrive at the next one in the same instant.
  const auto shift = std::min<std::uint32_t>(failover_streak_ - 1, 20);
  Duration backoff = std::min<Duration>(config_.failover_backoff_base * (std::int64_t{1} << shift),
                                        config_.failover_backoff_max);
  // A hub that comes back restores us with one lease of grace: never wait so
  // long that the grace runs out before we try again.
  if (granted_lease_.count() > 0) backoff = std::min(backoff, granted_lease_ / 3);
  next_beat_at_ = now + rng_.jittered(backoff, 0.2);
}

proto::UpBeat AgentCore::bare_beat_header() {
  proto::UpBeat beat;
  beat.node_id = config_.node_id;
  beat.epoch = config_.epoch;
  beat.seq = ++seq_;
  ++counters_.beats_sent;
  beat.digest = digest_.value();
  beat.sender_tier = config_.sender_tier;
  return beat;
}

proto::UpBeat AgentCore::beat_header() {
  auto beat = bare_beat_header();
  declare_reads(beat);
  return beat;
}

void AgentCore::declare_reads(proto::UpBeat& beat) {
  std::set<proto::ServiceKey> used(pinned_);
  for (const auto& [key, entry] : cache_)
    used.insert(key);
  beat.uses.reserve(used.size());
  for (const auto& key : used) {
    auto it = cache_.find(key);
    std::uint64_t held = 0;
    if (it != cache_.end())
      held = it->second.version_trusted ? it->second.version : kUnverifiedVersion;
    beat.uses.push_back({key, held});
  }
  configs_declared_ = configs_.uses();
  configs_declared_seq_ = beat.seq;
  declare_configs(beat);
  if (config_.send_deltas) {
    change_no_at_seq_[beat.seq] = change_no_;
    // Unanswered beats (hub down) must not grow this without bound.
    while (change_no_at_seq_.size() > kMaxTrackedBeats)
      change_no_at_seq_.erase(change_no_at_seq_.begin());
  }
}

void AgentCore::emit_beat(AgentActions& out) {
  if (need_full_)
    emit_full_set(out);
  else if (config_.send_deltas && !journal_.empty())
    emit_delta(out);
  else
    out.send.push_back({current_hub_, beat_header()});
}

void AgentCore::emit_full_set(AgentActions& out) {
  full_sent_seq_ = emit_whole_set(current_hub_, out);
  full_sent_digest_ = digest_.value();
  if (config_.send_deltas) {
    // Changes from now on go as deltas on top of this set: the hub applies
    // what we send in order and refuses (send_full) a delta that does not
    // give our digest. Waiting for this set's own answer sent the whole set
    // again with every change while changes came faster than answers (a
    // tier's registration wave: each instance carried ~100 times).
    held_change_no_ = change_no_;
    trim_journal();
    hub_holds_set_ = true;
    need_full_ = false;
  }
}

// The whole set to `hub`, in one beat or in chunks past
// max_registrations_per_beat (a tier's set is larger than a frame may be).
std::uint64_t AgentCore::emit_whole_set(std::size_t hub, AgentActions& out) {
  auto set = registrations();
  const auto limit = config_.max_registrations_per_beat;
  if (limit != 0 && set.size() > limit)
    return emit_chunks(hub, /*reset=*/true, std::move(set), {}, out);
  auto beat = header_for(hub);
  beat.registrations = std::move(set);
  const auto seq = beat.seq;
  out.send.push_back({hub, std::move(beat)});
  return seq;
}

void AgentCore::emit_delta(AgentActions& out) {
  auto delta = journal_after(held_change_no_);
  emit_chunks(current_hub_, /*reset=*/false, std::move(delta.upserts), std::move(delta.removed),
              out);
}

proto::RegistrationDelta AgentCore::journal_after(std::uint64_t held) const {
  proto::RegistrationDelta delta;
  for (const auto& [key, change] : journal_) {
    if (change <= held) continue;
    auto it = registrations_.find(key);
    if (it != registrations_.end())
      delta.upserts.push_back(it->second);
    else
      delta.removed.push_back(key);
  }
  return delta;
}

void AgentCore::trim_journal() {
  std::uint64_t held = held_change_no_;
  for (std::size_t hub = 0; hub < mirrors_.size(); ++hub)
    if (hub != current_hub_ && !mirrors_[hub].need_full)
      held = std::min(held, mirrors_[hub].held_change_no);
  std::erase_if(journal_, [&](const auto& kv) { return kv.second <= held; });
}

// One beat per chunk, each with its own seq; all but the last say `more`.
// Replies to the earlier chunks are not acted on (see on_downbeat). Returns
// the last beat's seq.
std::uint64_t AgentCore::emit_chunks(std::size_t hub, bool reset,
                                     std::vector<proto::Registration> upserts,
                                     std::vector<proto::InstanceKey> removed, AgentActions& out) {
  const std::size_t limit = config_.max_registrations_per_beat == 0
                                ? std::numeric_limits<std::size_t>::max()
                                : config_.max_registrations_per_beat;
  std::size_t next_upsert = 0;
  std::size_t next_removed = 0;
  std::uint64_t last_seq = 0;
  do {
    proto::RegistrationDelta delta;
    delta.reset = reset && next_upsert == 0;
    const auto take_up = std::min(limit, upserts.size() - next_upsert);
    delta.upserts.assign(std::make_move_iterator(upserts.begin() + next_upsert),
                         std::make_move_iterator(upserts.begin() + next_upsert + take_up));
    next_upsert += take_up;
    const auto take_rm = std::min(limit - take_up, removed.size() - next_removed);
    delta.removed.assign(removed.begin() + next_removed, removed.begin() + next_removed + take_rm);
    next_removed += take_rm;
    delta.more = next_upsert < upserts.size() || next_removed < removed.size();
    auto beat = header_for(hub);
    beat.delta = std::move(delta);
    last_seq = beat.seq;
    out.send.push_back({hub, std::move(beat)});
  } while (next_upsert < upserts.size() || next_removed < removed.size());
  if (hub == current_hub_) burst_end_seq_ = last_seq;
  return last_seq;
}

// The current hub's beats declare what we read; a mirror's carry our set
// only (delta mode: each remembers the change it was built at).
proto::UpBeat AgentCore::header_for(std::size_t hub) {
  if (hub == current_hub_) return beat_header();
  auto beat = bare_beat_header();
  if (config_.send_deltas) note_mirror_beat(mirrors_[hub], beat.seq);
  return beat;
}

void AgentCore::send_beat(MonoTime now, AgentActions& out) {
  // Counted once per interval, not again for each retry or chunk.
  if (configs_.size() > proto::kMaxConfigUsesPerBeat)
    counters_.config_groups_left_out += configs_.size() - proto::kMaxConfigUsesPerBeat;
  emit_beat(out);
  if (all_mode()) emit_mirror_beats(out);
  awaiting_reply_ = true;
  last_beat_at_ = now;
  last_beat_unsent_ = false;
  next_beat_at_ = regular_beat_at_ = now + rng_.jittered(beat_interval(), config_.beat_jitter);
  retries_left_ = config_.retries_per_beat;
  arm_retry(now);
}

void AgentCore::arm_retry(MonoTime now) {
  retry_at_.reset();
  if (retries_left_ > 0) retry_at_ = now + config_.reply_timeout;
}

// The interval's beat again (with a new seq) while it is unanswered. Misses
// are still counted once per interval, so failover timing does not change.
void AgentCore::retry_beat(MonoTime now, AgentActions& out) {
  if (!retry_at_ || now < *retry_at_) return;
  retry_at_.reset();
  if (!awaiting_reply_ || deregister_) return;
  --retries_left_;
  ++counters_.beat_retries;
  emit_beat(out);
  arm_retry(now);
}

AgentActions AgentCore::on_message(MonoTime now, std::size_t from_hub,
                                   const proto::Message& message) {
  AgentActions out;
  if (const auto* down = std::get_if<proto::DownBeat>(&message)) {
    if (down->node_id != config_.node_id) return out;
    if (down->push) {
      ++counters_.pushes;
      on_push(now, from_hub, *down, out);
      return out;
    }
    ++counters_.beat_replies;
    // Versions are per hub: a late answer from a hub we left cannot be applied.
    if (from_hub == current_hub_)
      on_downbeat(now, *down, out);
    else if (all_mode() && from_hub < mirrors_.size())
      on_mirror_downbeat(from_hub, *down);
  } else if (const auto* reply = std::get_if<proto::QueryReply>(&message)) {
    if (!pending_.contains(reply->request_id)) return out;  // timed out, or not ours
    if (const auto* whole = parts_.add(*reply)) on_query_reply(now, *whole, out);
  } else if (const auto* ack = std::get_if<proto::DeregisterAck>(&message)) {
    on_deregister_ack(from_hub, *ack, out);
  } else if (const auto* error = std::get_if<proto::ErrorReply>(&message)) {
    on_error(now, from_hub, *error, out);
  }
  return out;
}

// A query the hub cannot or will not answer (its upper tier is unreachable,
// or our key may not ask) ends now, like a timeout, instead of holding the
// caller for query_timeout. Refusals of our key are kept for status and logs.
void AgentCore::on_error(MonoTime now, std::size_t from_hub, const proto::ErrorReply& error,
                         AgentActions& out) {
  if (error.code == proto::ErrorCode::kBusy) {
    if (pending_.erase(error.ref) > 0) {  // a query: the caller decides whether to ask again
      out.timed_out.push_back(error.ref);
      ++counters_.lookups_busy;
    } else if (from_hub == current_hub_) {
      back_off(now, error);
    }
    return;
  }
  const bool refusal = error.code == proto::ErrorCode::kForbidden ||
                       error.code == proto::ErrorCode::kUnauthenticated;
  if (refusal) {
    last_refusal_ = error;
    out.refused.push_back(error);
  }
  const bool ends_query = refusal || error.code == proto::ErrorCode::kUnavailable;
  if (!ends_query || pending_.erase(error.ref) == 0) return;
  out.timed_out.push_back(error.ref);
  ++(refusal ? counters_.lookups_refused : counters_.lookups_unavailable);
}

// The hub answered, so no reply is missing: no miss is counted and nothing
// fails over (moving a fleet onto the next hub would overload that one). The
// beat (or Deregister) goes again, whole, once the time the hub asked for
// has passed, plus up to half as much again so the shed fleet comes back
// spread out. ref 0: the hub could not read which message it shed, and ours
// is the one waiting.
void AgentCore::back_off(MonoTime now, const proto::ErrorReply& busy) {
  const bool ours = busy.ref == 0 || (busy.ref > last_applied_ack_ && busy.ref <= seq_);
  if (!ours || (!awaiting_reply_ && !deregister_)) return;
  ++counters_.beats_shed;
  awaiting_reply_ = false;
  retry_at_.reset();
  misses_ = 0;
  const Duration after = busy.retry_after_ms > 0 ? Duration{busy.retry_after_ms} : beat_interval();
  next_beat_at_ = regular_beat_at_ = now + after + Duration{rng_.uniform(0, after.count() / 2)};
}

// Stopped once the hub (kAll: every hub) acknowledged the Deregister.
void AgentCore::on_deregister_ack(std::size_t hub, const proto::DeregisterAck& ack,
                                  AgentActions& out) {
  if (ack.node_id != config_.node_id || !deregister_) return;
  if (all_mode()) {
    if (hub >= mirrors_.size()) return;
    mirrors_[hub].deregistered = true;
    if (!std::all_of(mirrors_.begin(), mirrors_.end(),
                     [](const Mirror& m) { return m.deregistered; }))
      return;
  }
  out.deregistered = true;
  deregister_.reset();
  stopped_ = true;
}

void AgentCore::send_deregister(AgentActions& out) {
  if (!all_mode()) {
    out.send.push_back({current_hub_, *deregister_});
    return;
  }
  for (std::size_t hub = 0; hub < mirrors_.size(); ++hub)
    if (!mirrors_[hub].deregistered) out.send.push_back({hub, *deregister_});
}

// The follow list goes whole when it is not the list last sent (a group
// followed or dropped, a version moved, another hub); otherwise its digest
// stands for it, a few bytes whatever the number of groups. A hub that does
// not believe we hold what the digest says (a reply or push lost, a restart)
// asks for the list (DownBeat::send_configs).
void AgentCore::declare_configs(proto::UpBeat& beat) {
  if (configs_list_sent_ != configs_declared_) {
    beat.configs = configs_declared_;
    configs_list_sent_ = configs_declared_;
    configs_list_sent_seq_ = beat.seq;
    return;
  }
  beat.configs_digest = proto::config_uses_digest(configs_declared_);
}

void AgentCore::emit_mirror_beats(AgentActions& out) {
  for (std::size_t hub = 0; hub < mirrors_.size(); ++hub)
    if (hub != current_hub_) emit_mirror_beat(hub, out);
  if (config_.send_deltas) trim_journal();
}

// Reads go to the current hub only (versions are per hub), and the
// declaration its reply confirms stays the current hub's beat: a mirror
// takes our set, whole once and then as deltas (delta mode), or whole again
// whenever it changed (otherwise).
void AgentCore::emit_mirror_beat(std::size_t hub, AgentActions& out) {
  Mirror& m = mirrors_[hub];
  if (m.need_full) {
    m.full_sent_seq = emit_whole_set(hub, out);
    m.full_sent_digest = digest_.value();
    if (config_.send_deltas) {  // changes go on top of it, as to the current hub
      m.need_full = false;
      m.held_change_no = change_no_;
    }
    return;
  }
  auto delta = config_.send_deltas ? journal_after(m.held_change_no) : proto::RegistrationDelta{};
  if (delta.upserts.empty() && delta.removed.empty())
    out.send.push_back({hub, header_for(hub)});
  else
    emit_chunks(hub, /*reset=*/false, std::move(delta.upserts), std::move(delta.removed), out);
}

void AgentCore::note_mirror_beat(Mirror& m, std::uint64_t seq) {
  m.change_no_at_seq[seq] = change_no_;
  // Unanswered beats (hub down) must not grow this without bound.
  while (m.change_no_at_seq.size() > kMaxTrackedBeats)
    m.change_no_at_seq.erase(m.change_no_at_seq.begin());
}

void AgentCore::on_mirror_downbeat(std::size_t hub, const proto::DownBeat& down) {
  Mirror& m = mirrors_[hub];
  // A restarted mirror gets our set once, as the current hub does (it goes
  // with our next beat, each agent's at its own phase).
  if (m.hub_epoch != 0 && down.hub_epoch != m.hub_epoch) m.need_full = true;
  m.hub_epoch = down.hub_epoch;
  if (down.send_full) {
    if (down.ack_seq >= m.full_sent_seq) m.need_full = true;
  } else if (config_.send_deltas) {
    auto sent = m.change_no_at_seq.find(down.ack_seq);
    if (sent == m.change_no_at_seq.end()) return;
    m.held_change_no = std::max(m.held_change_no, sent->second);
    m.change_no_at_seq.erase(m.change_no_at_seq.begin(), std::next(sent));
    trim_journal();
  } else if (down.ack_seq >= m.full_sent_seq && m.full_sent_seq != 0 &&
             m.full_sent_digest == digest_.value()) {
    m.need_full = false;
  }
}

// A push between beats (an isolation) carries updates only. It is applied
// when it comes from the hub we read from, in the incarnation we know: its
// versions are that hub's. Beat state (acks, misses, leases) is untouched.
void AgentCore::on_push(MonoTime now, std::size_t from_hub, const proto::DownBeat& push,
                        AgentActions& out) {
  if (from_hub != current_hub_ || push.hub_id != hub_id_ || push.hub_epoch != hub_epoch_) return;
  apply_updates(now, push.updates, out);
  apply_config_updates(now, push.config_updates, out);
}

// An update that builds on a version we do not hold, newer than ours, means
// a change passed us by: a push that was lost, or a beat reply made from the
// version our beat declared while a push moved us on. The hub now believes
// we hold its newest list, so nothing else would come before the next beat:
// beat now and let its reply repair the list. At most once per
// kRepairSpacing, so a service that changes all the time cannot turn the
// beats into a storm.
void AgentCore::apply_updates(MonoTime now, const std::vector<proto::ServiceUpdate>& updates,
                              AgentActions& out) {
  bool missed = false;
  for (const auto& update : updates)
    if (const auto* whole = parts_.add(update))  // a list in parts applies once all came
      missed |= apply_update(now, *whole, out) == UpdateOutcome::kMissedBase;
  if (missed) repair_soon(now);
}

// Config updates apply as service updates do (common/config_copy.hpp); one
// that missed its base leaves the group declared at version 0, and the beat
// that declares it goes now rather than at the end of the interval.
void AgentCore::apply_config_updates(MonoTime now, const std::vector<proto::ConfigUpdate>& updates,
                                     AgentActions& out) {
  if (updates.empty()) return;
  std::vector<proto::ConfigUpdate> whole;  // a group in parts applies once all came
  for (const auto& update : updates)
    if (const auto* assembled = parts_.add(update)) whole.push_back(*assembled);
  auto applied = configs_.apply(now, whole);
  append(out.config_changed, std::move(applied.changed));
  if (applied.missed_base) {
    // Declared at 0 now, which may be the list sent last (a first answer
    // missed since): the hub believes otherwise, so the list goes, not its digest.
    configs_list_sent_.reset();
    repair_soon(now);
  }
}

void AgentCore::repair_soon(MonoTime now) {
  if (deregister_ || (last_repair_ && now - *last_repair_ < kRepairSpacing)) return;
  last_repair_ = now;
  next_beat_at_ = std::min(next_beat_at_, now);
}

// A hub that fell behind spaces its fleet out (protocol section 5.17). The
// next beat was scheduled when this one left, at the interval then: moved to
// the new one now, or a stretched hub would wait one more interval for relief.
// A beat brought forward since (a change to send, a repair) stays where it is.
void AgentCore::adopt_interval(MonoTime now, Duration granted) {
  if (granted == granted_interval_) return;
  granted_interval_ = granted;
  if (next_beat_at_ != regular_beat_at_ || next_beat_at_ <= now) return;
  next_beat_at_ = regular_beat_at_ =
      last_beat_at_ + rng_.jittered(beat_interval(), config_.beat_jitter);
}

void AgentCore::on_downbeat(MonoTime now, const proto::DownBeat& down, AgentActions& out) {
  // Replies can overtake each other (through proxies, or after a failover):
  // an answer older than one already applied describes an older state.
  if (down.ack_seq < last_applied_ack_) return;
  // A reply to a beat this incarnation never sent answers an earlier one (same
  // node id, its seq started over): taking it would discard our own replies.
  if (down.ack_seq > seq_) return;
  last_applied_ack_ = down.ack_seq;
  if (down.ack_seq == seq_) {
    awaiting_reply_ = false;
    retry_at_.reset();
  }
  misses_ = 0;
  failover_streak_ = 0;
  last_reply_at_ = now;
  if (hub_epoch_ != 0 && (down.hub_epoch != hub_epoch_ || down.hub_id != hub_id_)) {
    // The hub restarted (or we moved): resend our set once, at a random point
    // within one interval, so a whole fleet does not resend in the same instant.
    resend_full_at_ = now + Duration{rng_.uniform(0, beat_interval().count())};
    configs_list_sent_.reset();  // it does not know what we follow: the next beat says
  }
  const bool other_hub = !hub_id_.empty() && down.hub_id != hub_id_;
  if (down.lease_ms > 0) granted_lease_ = Duration{down.lease_ms};
  adopt_interval(now, Duration{down.interval_ms});
  hub_epoch_ = down.hub_epoch;
  hub_id_ = down.hub_id;
  if (other_hub) {
    hub_holds_set_ = false;
    parts_.clear();       // parts of the other hub's lists will never be completed
    configs_.distrust();  // its versions are not the other hub's
  }
  if (down.send_full) {
    // A reply to a beat sent before our newest set (or before its last chunk)
    // asks for what is already on its way.
    if (down.ack_seq >= std::max(full_sent_seq_, burst_end_seq_)) {
      need_full_ = true;
      hub_holds_set_ = false;
      // The whole set goes next (the journal stays for the mirrors).
      next_beat_at_ = now;  // the hub lacks our set: send it now rather than in an interval
    }
  } else if (config_.send_deltas) {
    on_set_acknowledged(down.ack_seq);
  } else if (down.ack_seq >= full_sent_seq_ && full_sent_seq_ != 0 &&
             full_sent_digest_ == digest_.value()) {
    need_full_ = false;
  }
  apply_updates(now, down.updates, out);
  apply_config_updates(now, down.config_updates, out);
  if (down.send_configs && down.ack_seq >= configs_list_sent_seq_) {
    configs_list_sent_.reset();  // the hub did not take our digest: the list goes now
    repair_soon(now);
  }
  // Every group the beat declared is current as of this reply (unless the
  // reply moved it on); a reply to an older beat, or one that did not take
  // the beat's digest, says nothing of them.
  if (down.ack_seq == configs_declared_seq_ && !other_hub && !down.send_configs)
    configs_.confirm(now, configs_declared_, down.stale_configs);
  // Every entry the beat declared is now confirmed current by the hub, but
  // for those it serves stale, which are as old as it says.
  for (auto& [key, entry] : cache_) {
    entry.confirm(now, 0, false);
    // Versions are numbered per hub: after moving to another hub, declare
    // none held so the new hub sends each list whole once (the lists are kept
    // and served meanwhile).
    if (other_hub) entry.version_trusted = false;
  }
  for (const auto& stale : down.stale)
    if (auto it = cache_.find(stale.service); it != cache_.end())
      it->second.confirm(now, stale.age_ms, true);
}

void AgentCore::CacheEntry::confirm(MonoTime now, std::uint64_t age_ms, bool stale) {
  // An age from the wire is any 64-bit number: bounded, so it is never read
  // as negative (fresh) and the subtraction cannot overflow.
  const auto bounded = std::min<std::uint64_t>(age_ms, kMaxAnswerAge.count());
  heard_at = now;
  confirmed_at = now - Duration{static_cast<Duration::rep>(bounded)};
  source_stale = stale;
  from_snapshot = false;
}

// Delta mode: the hub holds the set as of beat `ack_seq` (its digest matched),
// so the changes made before that beat was built are no longer news.
void AgentCore::on_set_acknowledged(std::uint64_t ack_seq) {
  hub_holds_set_ = true;
  if (ack_seq >= full_sent_seq_) need_full_ = false;
  auto sent = change_no_at_seq_.find(ack_seq);
  if (sent == change_no_at_seq_.end()) return;
  held_change_no_ = std::max(held_change_no_, sent->second);
  change_no_at_seq_.erase(change_no_at_seq_.begin(), std::next(sent));
  trim_journal();
}

// Versions one hub incarnation issues for a list grow: its registry's, and
// among themselves those of lists it composes with an upper tier's (top bit
// set; protocol section 5.8). A full list older than the one held from the
// same hub was overtaken on the way by a newer one and must not replace it.
bool AgentCore::overtaken(const CacheEntry& entry, std::uint64_t version) {
  return entry.version_trusted && ((entry.version ^ version) & proto::kCrossTierVersionBit) == 0 &&
         version < entry.version;
}

AgentCore::UpdateOutcome AgentCore::apply_update(MonoTime now, const proto::ServiceUpdate& update,
                                                 AgentActions& out) {
  auto it = cache_.find(update.service);
  if (it == cache_.end()) {
    if (!pinned_.contains(update.service)) return UpdateOutcome::kIgnored;  // dropped meanwhile
    it = cache_.emplace(update.service, CacheEntry{}).first;
    it->second.last_used = now;
  }
  CacheEntry& entry = it->second;
  switch (update.kind) {
    case proto::UpdateKind::kDelta:
      // Stale (or onto a list this hub did not issue): the next beat repairs it.
      // Versions one hub issues are ordered: one past ours means we missed a change.
      if (entry.version != update.from_version || !entry.version_trusted)
        return entry.version_trusted && update.version > entry.version ? UpdateOutcome::kMissedBase
                                                                       : UpdateOutcome::kIgnored;
      for (const auto& id : update.removed)
        entry.instances.erase(id);
      for (const auto& in : update.upserts)
        entry.instances.insert_or_assign(in.id, in);
      break;
    case proto::UpdateKind::kFull:
      if (entry.version == update.version)
        return UpdateOutcome::kIgnored;  // a repeat of what we hold (e.g. crossed a query reply)
      if (overtaken(entry, update.version))
        return UpdateOutcome::kIgnored;  // a late reply or push: a newer list came first
      entry.instances.clear();
      for (const auto& in : update.upserts)
        entry.instances.emplace(in.id, in);
      break;
    case proto::UpdateKind::kGone:
      entry.instances.clear();
      break;
  }
  if (update.routes) entry.routes = update.routes;  // nil: the rules did not change
  entry.version = update.version;
  entry.version_trusted = true;
  out.changed.push_back(update.service);
  return UpdateOutcome::kApplied;
}

void AgentCore::on_query_reply(MonoTime now, const proto::QueryReply& reply, AgentActions& out) {
  auto pending = pending_.find(reply.request_id);
  if (pending == pending_.end()) return;  // timed out already; the beat keeps the entry fresh
  pending_.erase(pending);
  ++(reply.found ? counters_.lookups_answered : counters_.lookups_not_found);
  CacheEntry& entry = cache_[reply.service];
  entry.instances.clear();
  for (const auto& in : reply.instances)
    entry.instances.emplace(in.id, in);
  entry.version = reply.version;
  if (reply.routes) entry.routes = reply.routes;
  // An answer from a hub other than the one we beat to (a late reply after a
  // failover) is served, but its version means nothing to the current hub.
  entry.version_trusted = hub_id_.empty() || reply.hub_id == hub_id_;
  entry.last_used = now;
  // An answer from an upper tier's cache is as old as that cache says (up to kMaxAnswerAge).
  entry.confirm(now, reply.age_ms, reply.stale);
  out.changed.push_back(reply.service);
  out.answered.push_back(reply.request_id);
}

void AgentCore::expire_unused(MonoTime now, AgentActions& out) {
  for (auto it = cache_.begin(); it != cache_.end();) {
    if (!pinned_.contains(it->first) && now - it->second.last_used >= config_.subscription_ttl) {
      out.dropped.push_back(it->first);
      it = cache_.erase(it);
    } else {
      ++it;
    }
  }
}

void AgentCore::expire_queries(MonoTime now, AgentActions& out) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now >= it->second.deadline) {
      out.timed_out.push_back(it->first);
      ++counters_.lookups_timed_out;
      parts_.forget_reply(it->first);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

AgentActions AgentCore::add_registration(MonoTime now, proto::Registration reg) {
  proto::InstanceKey key{reg.service, reg.instance.id};
  auto [it, inserted] = registrations_.try_emplace(key, reg);
  if (!inserted) {
    if (it->second == reg) return {};
    digest_.remove(it->second);
    it->second = std::move(reg);
  }
  digest_.add(it->second);
  registration_changed(now, key);
  return {};
}

AgentActions AgentCore::remove_registration(MonoTime now, const proto::ServiceKey& service,
                                            const std::string& id) {
  proto::InstanceKey key{service, id};
  auto it = registrations_.find(key);
  if (it == registrations_.end()) return {};
  digest_.remove(it->second);
  registrations_.erase(it);
  registration_changed(now, key);
  return {};
}

std::vector<proto::Registration> AgentCore::registrations() const {
  std::vector<proto::Registration> out;
  out.reserve(registrations_.size());
  for (const auto& [key, reg] : registrations_)
    out.push_back(reg);
  return out;
}

void AgentCore::registration_changed(MonoTime now, const proto::InstanceKey& key) {
  if (config_.send_deltas) {
    journal_[key] = ++change_no_;  // the mirrors take it as a delta too
  } else {
    for (auto& m : mirrors_)
      m.need_full = true;
  }
  if (!config_.send_deltas || !hub_holds_set_) need_full_ = true;
  // Changes travel now (after the coalescing delay), not at the next interval.
  next_beat_at_ = std::min(next_beat_at_, now + config_.change_delay);
}

void AgentCore::pin(const proto::ServiceKey& service) {
  pinned_.insert(service);
}

void AgentCore::use_config(MonoTime now, std::string_view group) {
  const bool first = !configs_.follows(group);
  configs_.use(now, group);
  // Its first answer travels now (after the coalescing delay), not at the next interval.
  if (first && !stopped_ && !deregister_)
    next_beat_at_ = std::min(next_beat_at_, now + config_.change_delay);
}

void AgentCore::pin_config(MonoTime now, std::string_view group) {
  use_config(now, group);
  configs_.pin(now, group);
}

Resolution AgentCore::resolution_of(const proto::ServiceKey& key, const CacheEntry& e, MonoTime now,
                                    WallMs wall_now) const {
  Resolution r;
  r.service = key;
  r.version = e.version;
  r.instances.reserve(e.instances.size());
  for (const auto& [id, in] : e.instances)
    r.instances.push_back(in);
  r.source = e.from_snapshot ? Source::kSnapshot : Source::kHub;
  r.age = age_of(e, now, wall_now);
  r.stale = is_stale(e, r.age);
  r.routes = e.routes;
  return r;
}

Duration AgentCore::age_of(const CacheEntry& e, MonoTime now, WallMs wall_now) const {
  return e.from_snapshot ? Duration{std::max<WallMs>(0, wall_now - e.snapshot_wall_ms)}
                         : now - e.confirmed_at;
}

CacheAges AgentCore::cache_ages(MonoTime now, WallMs wall_now) const {
  CacheAges ages;
  for (const auto& [key, entry] : cache_) {
    const Duration age = age_of(entry, now, wall_now);
    ages.oldest = std::max(ages.oldest.value_or(age), age);
    if (is_stale(entry, age)) ++ages.stale;
  }
  return ages;
}

std::optional<Resolution> AgentCore::lookup(MonoTime now, WallMs wall_now,
                                            const proto::ServiceKey& service) {
  auto it = cache_.find(service);
  if (it == cache_.end()) return std::nullopt;
  // A list our hub answered for lately is the best there is, even one it
  // serves stale (its upper tier is cut off): asking again would only bring
  // the same answer. One the hub went quiet about is worth a query.
  const auto& entry = it->second;
  if (entry.from_snapshot || now - entry.heard_at > stale_after()) return std::nullopt;
  it->second.last_used = now;
  return resolution_of(service, entry, now, wall_now);
}

std::optional<Resolution> AgentCore::peek(MonoTime now, WallMs wall_now,
                                          const proto::ServiceKey& service) const {
  auto it = cache_.find(service);
  if (it == cache_.end()) return std::nullopt;
  return resolution_of(service, it->second, now, wall_now);
}

std::optional<AgentCore::Held> AgentCore::held(MonoTime now,
                                               const proto::ServiceKey& service) const {
  auto it = cache_.find(service);
  if (it == cache_.end()) return std::nullopt;
  return Held{it->second.version, now - it->second.confirmed_at};
}

std::optional<bool> AgentCore::cache_lists(const proto::ServiceKey& service,
                                           const std::string& instance_id) const {
  auto it = cache_.find(service);
  if (it == cache_.end()) return std::nullopt;
  return it->second.instances.contains(instance_id);
}

std::optional<Resolution> AgentCore::lookup_any(MonoTime now, WallMs wall_now,
                                                const proto::ServiceKey& service) {
  auto it = cache_.find(service);
  if (it == cache_.end()) return std::nullopt;
  it->second.last_used = now;
  return resolution_of(service, it->second, now, wall_now);
}

AgentActions AgentCore::query(MonoTime now, const proto::ServiceKey& service,
                              std::uint64_t& request_id) {
  request_id = ++request_seq_;
  pending_[request_id] = PendingQuery{service, now + config_.query_timeout};
  ++counters_.lookups_sent;
  AgentActions out;
  out.send.push_back({current_hub_, proto::Query{request_id, config_.node_id, service}});
  return out;
}

AgentActions AgentCore::shutdown(MonoTime now) {
  deregister_ = proto::Deregister{config_.node_id, config_.epoch, ++seq_};
  next_beat_at_ = now + retry_pause();
  AgentActions out;
  send_deregister(out);
  return out;
}

void AgentCore::beat_not_sent(MonoTime now) {
  ++counters_.beats_unsent;
  last_beat_unsent_ = true;
  next_beat_at_ = std::min(next_beat_at_, now + retry_pause());
}

AgentActions AgentCore::on_link_up(MonoTime now, std::size_t hub) {
  const bool waiting = deregister_ || awaiting_reply_ || last_beat_unsent_ || failover_streak_ > 0;
  if (stopped_ || hub != current_hub_ || !waiting) return {};
  awaiting_reply_ = false;
  retry_at_.reset();
  next_beat_at_ = now;
  return on_timer(now);
}

void AgentCore::restore_snapshot(const std::vector<ServiceSnapshot>& services, MonoTime now) {
  for (const auto& snap : services) {
    CacheEntry& entry = cache_[snap.service];
    entry.version = snap.version;
    entry.instances.clear();
    for (const auto& in : snap.instances)
      entry.instances.emplace(in.id, in);
    entry.from_snapshot = true;
    entry.version_trusted = false;  // the snapshot does not say which hub issued it
    entry.snapshot_wall_ms = snap.fetched_wall_ms;
    entry.routes = snap.routes;
    entry.last_used = now;  // a restored entry gets one TTL to be used again
  }
}

void AgentCore::restore_config_snapshot(const std::vector<ConfigGroupSnapshot>& groups,
                                        MonoTime now) {
  for (const auto& g : groups)
    configs_.restore(now, g.group, g.version, g.entries, g.gone, g.fetched_wall_ms);
}

std::optional<ConfigGroupSnapshot> AgentCore::config_snapshot_of(std::string_view group,
                                                                 WallMs wall_now,
                                                                 MonoTime now) const {
  const auto* held = configs_.find(group);
  if (held == nullptr || !held->received) return std::nullopt;
  const WallMs confirmed = held->snapshot_wall_ms != 0
                               ? held->snapshot_wall_ms
                               : wall_now - (now - held->confirmed_at).count();
  return ConfigGroupSnapshot{std::string(group), held->version, confirmed, held->gone,
                             held->entries};
}

// The snapshot keeps the hub's routing rules with the list: a restored entry
// picks under the rules it was saved with (routes_of() and lookups see them as
// they see a hub's) until a hub answers, which it does with the whole list and
// its current rules (the restored version is declared unverified).
ServiceSnapshot AgentCore::snapshot_of(const proto::ServiceKey& service, WallMs wall_now,
                                       MonoTime now) const {
  ServiceSnapshot snap;
  snap.service = service;
  auto it = cache_.find(service);
  if (it == cache_.end()) return snap;
  const CacheEntry& e = it->second;
  snap.version = e.version;
  snap.fetched_wall_ms =
      e.from_snapshot ? e.snapshot_wall_ms : wall_now - (now - e.confirmed_at).count();
  for (const auto& [id, in] : e.instances)
    snap.instances.push_back(in);
  snap.routes = e.routes;
  return snap;
}

bool AgentCore::hub_reachable(MonoTime now) const {
  return last_reply_at_ && now - *last_reply_at_ <= stale_after();
}

}  // namespace cascade::agent
