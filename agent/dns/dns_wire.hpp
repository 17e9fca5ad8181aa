#pragma once
// DNS messages between libldns packets and bytes: the reply skeleton every
// answer starts from, and the encoding that makes a reply fit what its
// transport carries (RFC 1035 4.2.1, RFC 6891 for EDNS0, RFC 7766 for TCP).
// No byte of a DNS message is written by hand: libldns encodes and decodes.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cascade/agent/dns/ldns_handles.hpp"

namespace cascade::agent::dns {

// A UDP reply to a query without EDNS0 (RFC 1035).
inline constexpr std::size_t kPlainUdpLimit = 512;
// The UDP payload this server advertises and never exceeds, whatever larger
// size a query advertises: 1232 bytes fit the IPv6 minimum MTU without
// fragmentation (DNS flag day 2020's recommendation).
inline constexpr std::uint16_t kEdnsUdpLimit = 1232;
// A TCP message's length prefix is 16 bits.
inline constexpr std::size_t kTcpLimit = 65535;

// A reply to `query`: its id, opcode, RD and CD bits and its question, QR and
// AA set, RA clear (this server does not recurse), `rcode`; with an OPT
// record advertising kEdnsUdpLimit when the query had one.
PacketPtr new_reply(const ldns_pkt& query, ldns_pkt_rcode rcode);

struct Encoded {
  std::vector<std::uint8_t> wire;
  bool truncated = false;  // records were left out and TC is set
};

// `reply` in wire format, at most `limit` bytes. When the whole reply is
// larger, the additional section is dropped and then as many answers from the
// end as needed, and TC is set so that the asker retries over TCP (RFC 2181
// 9). Changes `reply` accordingly.
Encoded encode_within(ldns_pkt& reply, std::size_t limit);

// A header-only reply to bytes libldns could not parse as a DNS message but
// that are long enough to have a header: the asker's id, opcode and RD bit
// are read back to it with `rcode`. Empty when `raw` is shorter than a header.
std::vector<std::uint8_t> header_only_reply(std::span<const std::uint8_t> raw,
                                            ldns_pkt_rcode rcode);

}  // namespace cascade::agent::dns
