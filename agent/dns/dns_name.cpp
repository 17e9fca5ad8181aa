#include "cascade/agent/dns/dns_name.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "cascade/common/validate.hpp"

namespace cascade::agent::dns {

namespace {

constexpr std::string_view kServiceKeyword = "service";
constexpr std::string_view kGroupKeyword = "group";
constexpr std::string_view kAddressKeyword = "addr";

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The labels of a name, lower-cased, the leftmost first, the root left out.
std::vector<std::string> labels_of(const ldns_rdf& name) {
  std::vector<std::string> labels;
  const auto count = ldns_dname_label_count(&name);
  labels.reserve(count);
  for (std::uint8_t i = 0; i < count; ++i) {
    RdfPtr label(ldns_dname_label(&name, i));
    if (!label || ldns_rdf_size(label.get()) < 1) break;
    // A one-label name: its length octet, then the label's octets.
    const auto* data = ldns_rdf_data(label.get());
    labels.push_back(lower(std::string(reinterpret_cast<const char*>(data + 1), data[0])));
  }
  return labels;
}

std::string join(const std::vector<std::string>& labels, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) out += '.';
    out += labels[i];
  }
  return out;
}

DnsName service_or_nothing(proto::ServiceKey key) {
  if (!proto::check_service_key(key).empty()) return NoSuchName{};
  return ServiceName{std::move(key)};
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// "0a000007" -> 10.0.0.7; 32 digits -> an IPv6 address.
DnsName address_or_nothing(std::string_view hex) {
  IpAddress ip;
  if (hex.size() == 8)
    ip.family = AF_INET;
  else if (hex.size() == 32)
    ip.family = AF_INET6;
  else
    return NoSuchName{};
  for (std::size_t i = 0; i < ip.size(); ++i) {
    const int high = hex_digit(hex[2 * i]);
    const int low = hex_digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return NoSuchName{};
    ip.bytes[i] = static_cast<unsigned char>(high * 16 + low);
  }
  return AddressName{ip};
}

}  // namespace

RdfPtr name_below(std::string_view labels, const ldns_rdf& parent) {
  RdfPtr prefix(ldns_dname_new_frm_str(std::string(labels).c_str()));
  RdfPtr name(prefix ? ldns_dname_cat_clone(prefix.get(), &parent) : nullptr);
  if (!name) throw std::invalid_argument("'" + std::string(labels) + "' is not a DNS name");
  return name;
}

DnsZone::DnsZone(std::string_view domain) {
  std::string absolute(domain);
  if (!absolute.ends_with('.')) absolute += '.';
  origin_.reset(ldns_dname_new_frm_str(absolute.c_str()));
  if (absolute == "." || !origin_)
    throw std::invalid_argument("DNS domain '" + std::string(domain) + "' is not a domain name");
  labels_ = labels_of(*origin_);
}

DnsName DnsZone::classify(const ldns_rdf& name) const {
  auto labels = labels_of(name);
  if (labels.size() < labels_.size() ||
      !std::equal(labels_.begin(), labels_.end(), labels.end() - labels_.size()))
    return OutsideZone{};
  labels.resize(labels.size() - labels_.size());
  if (labels.empty()) return ZoneApex{};
  const std::string keyword = std::move(labels.back());
  labels.pop_back();
  if (keyword == kServiceKeyword) {
    if (labels.empty()) return EmptyNonTerminal{};
    return service_or_nothing({join(labels, labels.size()), std::string(proto::kDefaultGroup)});
  }
  if (keyword == kGroupKeyword) {
    if (labels.size() < 2) return EmptyNonTerminal{};  // group.DOMAIN, GROUP.group.DOMAIN
    return service_or_nothing({join(labels, labels.size() - 1), labels.back()});
  }
  if (keyword == kAddressKeyword) {
    if (labels.empty()) return EmptyNonTerminal{};
    if (labels.size() == 1) return address_or_nothing(labels.front());
  }
  return NoSuchName{};
}

RdfPtr DnsZone::address_name(const IpAddress& ip) const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (std::size_t i = 0; i < ip.size(); ++i) {
    hex += kDigits[ip.bytes[i] >> 4];
    hex += kDigits[ip.bytes[i] & 0xf];
  }
  return name_below(hex + "." + std::string(kAddressKeyword), *origin_);
}

}  // namespace cascade::agent::dns
