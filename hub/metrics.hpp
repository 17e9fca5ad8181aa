#pragma once
// Hub counters, declared once. Detected, enforced and rejected events are
// counted separately so an operator can tell "saw" from "did".

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cascade::hub {

#define CASCADE_HUB_COUNTERS(X)                                                       \
  X(beats)                /* UpBeats handled */                                       \
  X(beats_stale_seq)      /* UpBeats older than one already applied */                \
  X(stale_epoch)          /* messages from an agent incarnation already replaced */   \
  X(full_sets_received)   /* registration sets applied */                             \
  X(full_sets_requested)  /* DownBeats that asked for the full set */                 \
  X(deltas_received)      /* registration deltas (or chunks) from lower-tier hubs */  \
  X(queries)              /* Query messages answered */                               \
  X(queries_not_found)    /* ... of which the service had no instance */              \
  X(queries_cross_tier)   /* ... of which this tier lacked the service */             \
  X(deregistrations)      /* graceful Deregister messages */                          \
  X(nodes_expired)        /* agents whose lease ran out */                            \
  X(instances_expired)    /* instances removed by lease expiry */                     \
  X(expiry_deferred)      /* ticks that hit the per-tick expiry cap */                \
  X(expiries_held)        /* expired leases eviction protection held (unconfirmed) */ \
  X(frames_shed)          /* frames answered busy unread: over the queue bound */     \
  X(expiries_postponed)   /* leases run out while shedding, extended once */          \
  X(nodes_confirmed_dead) /* held nodes expired: every address refused connections */ \
  X(updates_delta)        /* service deltas sent downstream */                        \
  X(updates_full)         /* full service lists sent downstream */                    \
  X(updates_gone)         /* "service gone" updates sent downstream */                \
  X(updates_cross_tier)   /* lists composed with the upper tier's, sent downstream */ \
  X(updates_stale)        /* replies naming a used list served stale, per list */     \
  X(decode_errors)        /* frames or messages that failed to decode */              \
  X(invalid_messages)     /* well-formed messages that broke a rule */                \
  X(unexpected_messages)  /* reply-type messages sent to the hub */                   \
  X(failure_signals)      /* failure signals received (reports may hold several) */   \
  X(signals_counted)      /* ... counted here: this hub holds the instance */         \
  X(signals_sent_up)      /* ... sent to the upper tier, which holds the address */   \
  X(signals_sent_down)    /* ... sent to the lower-tier hub that holds it */          \
  X(signals_unknown)      /* ... about an address nobody here knows */                \
  X(signals_dropped)      /* ... not forwarded: too many hops or no route */          \
  X(isolations)           /* instances isolated by failure reports */                 \
  X(readmissions)         /* isolations that ended */                                 \
  X(isolations_capped)    /* quorum reached, held back by the per-service cap */      \
  X(pushes)               /* DownBeats pushed between beats */                        \
  X(config_pushes)        /* ... of them with config changes (pushed on their own) */ \
  X(admin_requests)       /* operator operations (AdminRequest), all audited */       \
  X(admin_refused)        /* ... of which refused (invalid, or not applicable) */     \
  X(forbidden)            /* messages refused: their key may not do what they ask */  \
  X(epoch_jumps)          /* beats or deregistrations with an epoch far too new */    \
  X(services_reclaimed)   /* service entries freed: no instance, rule or consumer */  \
  X(waits_capped)         /* consumers' waits for a new service left to their beat */

struct HubCounters {
#define CASCADE_DECLARE_COUNTER(name) std::uint64_t name = 0;
  CASCADE_HUB_COUNTERS(CASCADE_DECLARE_COUNTER)
#undef CASCADE_DECLARE_COUNTER

  std::vector<std::pair<std::string, std::uint64_t>> list() const {
    std::vector<std::pair<std::string, std::uint64_t>> out;
#define CASCADE_LIST_COUNTER(name) out.emplace_back(#name, name);
    CASCADE_HUB_COUNTERS(CASCADE_LIST_COUNTER)
#undef CASCADE_LIST_COUNTER
    return out;
  }
};

// The config centre's (hub/config_centre.hpp), named in status with a
// "config_" prefix: config_updates_delta, ...
#define CASCADE_CONFIG_COUNTERS(X)                                                       \
  X(updates_delta)   /* group updates sent to followers as deltas */                     \
  X(updates_full)    /* ... as the whole group */                                        \
  X(updates_gone)    /* ... as "gone" (never set here, or every key removed) */          \
  X(edits)           /* operators' edits and rollbacks that changed something */         \
  X(edits_refused)   /* ... refused whole (a limit, a name, a version not kept) */       \
  X(served_stale)    /* groups named stale in replies: the upper copy is past its TTL */ \
  X(lists_requested) /* replies that asked for a follow list: its digest did not match */

struct ConfigCentreCounters {
#define CASCADE_DECLARE_COUNTER(name) std::uint64_t name = 0;
  CASCADE_CONFIG_COUNTERS(CASCADE_DECLARE_COUNTER)
#undef CASCADE_DECLARE_COUNTER

  std::vector<std::pair<std::string, std::uint64_t>> list() const {
    std::vector<std::pair<std::string, std::uint64_t>> out;
#define CASCADE_LIST_COUNTER(name) out.emplace_back("config_" #name, name);
    CASCADE_CONFIG_COUNTERS(CASCADE_LIST_COUNTER)
#undef CASCADE_LIST_COUNTER
    return out;
  }
};

}  // namespace cascade::hub
