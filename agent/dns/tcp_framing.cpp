#include "cascade/agent/dns/tcp_framing.hpp"

#include <cassert>

#include "cascade/agent/dns/ldns.hpp"

namespace cascade::agent::dns {

namespace {

// Drops the consumed front of `buffer` once it is at least half of it, so
// that a long-lived connection's buffers do not grow and copies stay rare.
void compact(std::vector<std::uint8_t>& buffer, std::size_t& start) {
  if (start == buffer.size()) {
    buffer.clear();
    start = 0;
  } else if (start > 0 && start * 2 >= buffer.size()) {
    buffer.erase(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(start));
    start = 0;
  }
}

constexpr std::size_t kPrefix = 2;

}  // namespace

void TcpFraming::received(std::span<const std::uint8_t> bytes) {
  in_.insert(in_.end(), bytes.begin(), bytes.end());
}

std::optional<std::vector<std::uint8_t>> TcpFraming::next_message() {
  const std::size_t available = in_.size() - in_start_;
  if (available < kPrefix) return std::nullopt;
  const std::size_t length = ldns_read_uint16(in_.data() + in_start_);
  if (available < kPrefix + length) return std::nullopt;
  const auto begin = in_.begin() + static_cast<std::ptrdiff_t>(in_start_ + kPrefix);
  std::vector<std::uint8_t> message(begin, begin + static_cast<std::ptrdiff_t>(length));
  in_start_ += kPrefix + length;
  compact(in_, in_start_);
  return message;
}

void TcpFraming::queue(std::span<const std::uint8_t> message) {
  assert(message.size() <= 0xFFFF);
  const std::size_t at = out_.size();
  out_.resize(at + kPrefix);
  ldns_write_uint16(out_.data() + at, static_cast<std::uint16_t>(message.size()));
  out_.insert(out_.end(), message.begin(), message.end());
}

std::span<const std::uint8_t> TcpFraming::unsent() const {
  return std::span<const std::uint8_t>(out_).subspan(out_start_);
}

void TcpFraming::sent(std::size_t count) {
  out_start_ += count;
  compact(out_, out_start_);
}

}  // namespace cascade::agent::dns
