#include "cascade/agent/dns/dns_responder.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "cascade/agent/dns/dns_order.hpp"
#include "cascade/agent/dns/dns_records.hpp"
#include "cascade/agent/dns/dns_wire.hpp"
#include "cascade/agent/dns/instance_address.hpp"

namespace cascade::agent::dns {

namespace {

template <typename... Fns>
struct Overloaded : Fns... {
  using Fns::operator()...;
};
// Clang 14 (the sanitizer build) deduces no aggregate's template arguments by itself.
template <typename... Fns>
Overloaded(Fns...) -> Overloaded<Fns...>;

void push(ldns_pkt& reply, ldns_pkt_section section, RecordPtr rr) {
  if (ldns_pkt_push_rr(&reply, section, rr.get())) rr.release();
}

// Addresses already in a section: a record set holds each address once,
// however many instances (ports) share it.
class SeenAddresses {
 public:
  bool first_time(const IpAddress& ip) {
    return seen_.emplace(ip.family, std::string(reinterpret_cast<const char*>(ip.bytes), ip.size()))
        .second;
  }

 private:
  std::set<std::pair<int, std::string>> seen_;
};

bool wanted(ldns_rr_type asked, int family) {
  if (asked == LDNS_RR_TYPE_ANY) return true;
  return asked == (family == AF_INET ? LDNS_RR_TYPE_A : LDNS_RR_TYPE_AAAA);
}

std::uint16_t clamp16(std::uint32_t value) {
  return static_cast<std::uint16_t>(std::min<std::uint32_t>(value, 65535));
}

// The TXT fields of an instance, each KEY=VALUE; longer than a
// character-string allows: left out.
std::vector<std::string> txt_fields(const proto::Instance& in) {
  std::vector<std::string> fields{"id=" + in.id,
                                  "address=" + in.address,
                                  "zone=" + in.zone,
                                  "tier=" + std::to_string(in.tier),
                                  "weight=" + std::to_string(in.weight),
                                  std::string("health=") + proto::to_string(in.health)};
  for (const auto& [key, value] : in.metadata)
    fields.push_back(key + "=" + value);
  std::erase_if(fields, [](const std::string& f) { return f.size() > kMaxTxtString; });
  return fields;
}

}  // namespace

DnsResponder::DnsResponder(std::string_view domain, std::uint32_t ttl_seconds,
                           std::uint64_t rng_seed)
    : zone_(domain), ttl_(ttl_seconds), rng_(rng_seed) {}

DnsReply DnsResponder::respond(const DnsQuestion& question, const DnsName& name,
                               const std::optional<Resolution>& lookup, std::size_t limit) {
  auto reply = reply_to(question, name, lookup);
  auto encoded = encode_within(*reply, limit);
  return {std::move(encoded.wire), ldns_pkt_get_rcode(reply.get()), ldns_pkt_ancount(reply.get()),
          encoded.truncated};
}

PacketPtr DnsResponder::reply_to(const DnsQuestion& question, const DnsName& name,
                                 const std::optional<Resolution>& lookup) {
  return std::visit(
      Overloaded{
          [&](const OutsideZone&) { return new_reply(question.packet(), LDNS_RCODE_REFUSED); },
          [&](const ZoneApex&) { return apex_reply(question); },
          [&](const EmptyNonTerminal&) {
            auto reply = authoritative(question, LDNS_RCODE_NOERROR);
            add_soa_if_empty(*reply);
            return reply;
          },
          [&](const NoSuchName&) {
            auto reply = authoritative(question, LDNS_RCODE_NXDOMAIN);
            add_soa_if_empty(*reply);
            return reply;
          },
          [&](const ServiceName&) { return service_reply(question, lookup); },
          [&](const AddressName& address) { return address_reply(question, address.ip); },
      },
      name);
}

PacketPtr DnsResponder::service_reply(const DnsQuestion& question,
                                      const std::optional<Resolution>& lookup) {
  if (!lookup) return new_reply(question.packet(), LDNS_RCODE_SERVFAIL);
  const bool unknown = lookup->version == 0 && lookup->instances.empty();
  auto reply = authoritative(question, unknown ? LDNS_RCODE_NXDOMAIN : LDNS_RCODE_NOERROR);
  if (!unknown) {
    const auto served = dns_order(lookup->instances, rng_);
    switch (question.type()) {
      case LDNS_RR_TYPE_A:
      case LDNS_RR_TYPE_AAAA:
      case LDNS_RR_TYPE_ANY:
        add_addresses(*reply, question.name(), served, question.type());
        break;
      case LDNS_RR_TYPE_SRV:
        add_services(*reply, question.name(), served);
        break;
      case LDNS_RR_TYPE_TXT:
        add_texts(*reply, question.name(), served);
        break;
      default:
        break;
    }
  }
  add_soa_if_empty(*reply);
  return reply;
}

PacketPtr DnsResponder::address_reply(const DnsQuestion& question, const IpAddress& ip) {
  auto reply = authoritative(question, LDNS_RCODE_NOERROR);
  if (wanted(question.type(), ip.family))
    push(*reply, LDNS_SECTION_ANSWER, address_record(question.name(), ip, ttl_));
  add_soa_if_empty(*reply);
  return reply;
}

PacketPtr DnsResponder::apex_reply(const DnsQuestion& question) {
  auto reply = authoritative(question, LDNS_RCODE_NOERROR);
  if (question.type() == LDNS_RR_TYPE_SOA || question.type() == LDNS_RR_TYPE_ANY)
    push(*reply, LDNS_SECTION_ANSWER, soa_record(zone_.origin(), ttl_));
  add_soa_if_empty(*reply);
  return reply;
}

PacketPtr DnsResponder::authoritative(const DnsQuestion& question, ldns_pkt_rcode rcode) const {
  auto reply = new_reply(question.packet(), rcode);
  ldns_pkt_set_aa(reply.get(), true);
  return reply;
}

void DnsResponder::add_soa_if_empty(ldns_pkt& reply) const {
  if (ldns_pkt_ancount(&reply) == 0)
    push(reply, LDNS_SECTION_AUTHORITY, soa_record(zone_.origin(), ttl_));
}

void DnsResponder::add_addresses(ldns_pkt& reply, const ldns_rdf& owner,
                                 const std::vector<proto::Instance>& served,
                                 ldns_rr_type type) const {
  SeenAddresses seen;
  for (const auto& in : served) {
    const auto host = parse_instance_host(in.address);
    if (!host || !host->ip || !wanted(type, host->ip->family) || !seen.first_time(*host->ip))
      continue;
    push(reply, LDNS_SECTION_ANSWER, address_record(owner, *host->ip, ttl_));
  }
}

void DnsResponder::add_services(ldns_pkt& reply, const ldns_rdf& owner,
                                const std::vector<proto::Instance>& served) const {
  SeenAddresses in_additional;
  for (const auto& in : served) {
    const auto host = parse_instance_host(in.address);
    if (!host || !host->port) continue;
    SrvFields fields{clamp16(in.tier), clamp16(in.weight), *host->port, nullptr};
    if (host->ip) {
      fields.target = zone_.address_name(*host->ip);
      if (in_additional.first_time(*host->ip))
        push(reply, LDNS_SECTION_ADDITIONAL, address_record(*fields.target, *host->ip, ttl_));
    } else {
      fields.target.reset(ldns_dname_new_frm_str((host->host + ".").c_str()));
      if (!fields.target) continue;  // not a name DNS can carry (a label over 63 bytes)
    }
    push(reply, LDNS_SECTION_ANSWER, srv_record(owner, std::move(fields), ttl_));
  }
}

void DnsResponder::add_texts(ldns_pkt& reply, const ldns_rdf& owner,
                             const std::vector<proto::Instance>& served) const {
  for (const auto& in : served)
    push(reply, LDNS_SECTION_ANSWER, txt_record(owner, txt_fields(in), ttl_));
}

}  // namespace cascade::agent::dns
