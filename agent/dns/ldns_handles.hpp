#pragma once
// Owning handles for libldns objects, so that every early return frees what
// it built. ldns hands out raw pointers; whoever receives one wraps it here
// at once. A pointer pushed into a packet or a record belongs to that packet
// or record from then on (release() it when pushing).

#include <memory>

#include "cascade/agent/dns/ldns.hpp"

namespace cascade::agent::dns {

struct PacketFree {
  void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};
struct RecordFree {
  void operator()(ldns_rr* r) const { ldns_rr_free(r); }
};
struct RdfFree {
  void operator()(ldns_rdf* d) const { ldns_rdf_deep_free(d); }
};

using PacketPtr = std::unique_ptr<ldns_pkt, PacketFree>;
using RecordPtr = std::unique_ptr<ldns_rr, RecordFree>;
using RdfPtr = std::unique_ptr<ldns_rdf, RdfFree>;

}  // namespace cascade::agent::dns
