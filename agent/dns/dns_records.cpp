#include "cascade/agent/dns/dns_records.hpp"

#include <cassert>
#include <new>

#include "cascade/agent/dns/dns_name.hpp"

namespace cascade::agent::dns {

namespace {

RecordPtr new_record(ldns_rr_type type, const ldns_rdf& owner, std::uint32_t ttl) {
  RecordPtr rr(ldns_rr_new());
  if (!rr) throw std::bad_alloc();
  ldns_rr_set_type(rr.get(), type);
  ldns_rr_set_class(rr.get(), LDNS_RR_CLASS_IN);
  ldns_rr_set_ttl(rr.get(), ttl);
  ldns_rr_set_owner(rr.get(), ldns_rdf_clone(&owner));
  return rr;
}

// Hands `field` to `rr` (which frees it with itself).
void push(ldns_rr& rr, ldns_rdf* field) {
  if (field == nullptr || !ldns_rr_push_rdf(&rr, field)) {
    ldns_rdf_deep_free(field);
    throw std::bad_alloc();
  }
}

}  // namespace

RecordPtr address_record(const ldns_rdf& owner, const IpAddress& ip, std::uint32_t ttl) {
  const bool v4 = ip.family == AF_INET;
  auto rr = new_record(v4 ? LDNS_RR_TYPE_A : LDNS_RR_TYPE_AAAA, owner, ttl);
  push(*rr, ldns_rdf_new_frm_data(v4 ? LDNS_RDF_TYPE_A : LDNS_RDF_TYPE_AAAA, ip.size(), ip.bytes));
  return rr;
}

RecordPtr srv_record(const ldns_rdf& owner, SrvFields fields, std::uint32_t ttl) {
  auto rr = new_record(LDNS_RR_TYPE_SRV, owner, ttl);
  push(*rr, ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, fields.priority));
  push(*rr, ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, fields.weight));
  push(*rr, ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, fields.port));
  push(*rr, fields.target.release());
  return rr;
}

RecordPtr txt_record(const ldns_rdf& owner, const std::vector<std::string>& strings,
                     std::uint32_t ttl) {
  auto rr = new_record(LDNS_RR_TYPE_TXT, owner, ttl);
  for (const auto& text : strings) {
    assert(text.size() <= kMaxTxtString);
    // A character-string rdf holds its length octet, then the octets.
    std::vector<std::uint8_t> data;
    data.reserve(text.size() + 1);
    data.push_back(static_cast<std::uint8_t>(text.size()));
    data.insert(data.end(), text.begin(), text.end());
    push(*rr, ldns_rdf_new_frm_data(LDNS_RDF_TYPE_STR, data.size(), data.data()));
  }
  return rr;
}

RecordPtr soa_record(const ldns_rdf& origin, std::uint32_t ttl) {
  auto rr = new_record(LDNS_RR_TYPE_SOA, origin, ttl);
  push(*rr, name_below("ns", origin).release());          // MNAME: no real primary exists
  push(*rr, name_below("hostmaster", origin).release());  // RNAME
  // The zone is never transferred: serial and timers say nothing but must be there.
  push(*rr, ldns_native2rdf_int32(LDNS_RDF_TYPE_INT32, 1));       // SERIAL
  push(*rr, ldns_native2rdf_int32(LDNS_RDF_TYPE_PERIOD, 3600));   // REFRESH
  push(*rr, ldns_native2rdf_int32(LDNS_RDF_TYPE_PERIOD, 600));    // RETRY
  push(*rr, ldns_native2rdf_int32(LDNS_RDF_TYPE_PERIOD, 86400));  // EXPIRE
  push(*rr, ldns_native2rdf_int32(LDNS_RDF_TYPE_PERIOD, ttl));    // MINIMUM: the negative TTL
  return rr;
}

}  // namespace cascade::agent::dns
