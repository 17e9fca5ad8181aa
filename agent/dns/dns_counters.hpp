#pragma once
// The DNS interface's counters, declared once. Every query lands in exactly
// one replies_* counter or in `dropped`; problems with the input are counted
// apart from the replies they got.

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cascade::agent::dns {

#define CASCADE_DNS_COUNTERS(X)                                                                  \
  X(queries_udp)       /* datagrams received on the UDP socket */                                \
  X(queries_tcp)       /* messages received on TCP connections */                                \
  X(bad_queries)       /* ... that were no answerable query: every kind below */                 \
  X(dropped)           /* ... given no reply: shorter than a header, or a response (QR) */       \
  X(replies_noerror)   /* replies with at least one answer */                                    \
  X(replies_nodata)    /* NOERROR without answers: no record of that type */                     \
  X(replies_nxdomain)  /* unknown services and names */                                          \
  X(replies_servfail)  /* no hub answered and nothing cached, or too many lookups pending */     \
  X(replies_refused)   /* names outside the domain, classes other than IN */                     \
  X(replies_formerr)   /* malformed queries, not exactly one question */                         \
  X(replies_notimp)    /* opcodes other than QUERY */                                            \
  X(replies_badvers)   /* EDNS versions other than 0 */                                          \
  X(replies_truncated) /* UDP replies cut to fit, TC set: the asker retries over TCP */          \
  X(lookups)           /* services looked up in the registry (resolve_async) */                  \
  X(lookups_overflow)  /* queries answered SERVFAIL at once: max_pending_lookups were pending */ \
  X(udp_send_errors)   /* replies the UDP socket would not take */                               \
  X(tcp_accepted)      /* TCP connections accepted */                                            \
  X(tcp_refused)       /* ... closed at once: max_tcp_connections were open */                   \
  X(tcp_idle_closed)   /* ... closed after tcp_idle_timeout without traffic */

// Written by the server's thread, read by any (relaxed: each is a tally).
struct DnsCounters {
#define CASCADE_DECLARE_COUNTER(name) std::atomic<std::uint64_t> name{0};
  CASCADE_DNS_COUNTERS(CASCADE_DECLARE_COUNTER)
#undef CASCADE_DECLARE_COUNTER

  std::vector<std::pair<std::string, std::uint64_t>> list() const {
    std::vector<std::pair<std::string, std::uint64_t>> out;
#define CASCADE_LIST_COUNTER(name) out.emplace_back(#name, name.load(std::memory_order_relaxed));
    CASCADE_DNS_COUNTERS(CASCADE_LIST_COUNTER)
#undef CASCADE_LIST_COUNTER
    return out;
  }
};

inline void bump(std::atomic<std::uint64_t>& counter) {
  counter.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace cascade::agent::dns
