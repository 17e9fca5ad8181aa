#include "cascade/hub/instance_rows.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "cascade/common/msgpack_blob.hpp"
#include "cascade/hub/store.hpp"

namespace cascade::hub {

namespace {

// msgpack's output stream: appends to the batch's buffer.
struct AppendTo {
  std::string& bytes;
  void write(const char* data, std::size_t size) { bytes.append(data, size); }
};

}  // namespace

InstanceRows::InstanceRows(std::initializer_list<InstanceRecord> records) {
  for (const auto& record : records)
    push_back(record);
}

InstanceRows::InstanceRows(const std::vector<InstanceRecord>& records) {
  for (const auto& record : records)
    push_back(record);
}

void InstanceRows::add(const InstanceFields& fields) {
  Span span{bytes_.size(), {}, fields.row, fields.weight, fields.status};
  const std::string_view texts[] = {fields.name,  fields.group,   fields.id,
                                    fields.owner, fields.address, fields.zone};
  for (std::size_t i = 0; i < std::size(texts); ++i) {
    bytes_.append(texts[i]);
    span.lengths[i] = static_cast<std::uint32_t>(texts[i].size());
  }
  const std::size_t packed_from = bytes_.size();
  AppendTo out{bytes_};
  if (fields.metadata != nullptr)
    msgpack::pack(out, *fields.metadata);
  else if (!fields.metadata_blob.empty())
    bytes_.append(fields.metadata_blob);
  else
    msgpack::pack(out, std::map<std::string, std::string>{});
  span.lengths.back() = static_cast<std::uint32_t>(bytes_.size() - packed_from);
  spans_.push_back(span);
}

void InstanceRows::push_back(const InstanceRecord& record) {
  const proto::Instance& in = record.instance;
  add({record.row, record.service.name, record.service.group, in.id, record.owner, in.address,
       in.zone, &in.metadata, in.weight, in.status});
}

InstanceRow InstanceRows::operator[](std::size_t i) const {
  const Span& span = spans_[i];
  std::array<std::string_view, Span::kTexts> texts;
  std::size_t at = span.start;
  for (std::size_t t = 0; t < texts.size(); ++t) {
    texts[t] = std::string_view(bytes_).substr(at, span.lengths[t]);
    at += span.lengths[t];
  }
  return {span.row, texts[0], texts[1], texts[2],    texts[3],
          texts[4], texts[5], texts[6], span.weight, span.status};
}

std::vector<std::uint32_t> InstanceRows::order_by_row() const {
  std::vector<std::uint32_t> order(spans_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [this](std::uint32_t a, std::uint32_t b) { return spans_[a].row < spans_[b].row; });
  return order;
}

std::vector<InstanceRecord> InstanceRows::records() const {
  std::vector<InstanceRecord> out;
  out.reserve(size());
  for (const InstanceRow row : *this)
    out.push_back(row.record());
  return out;
}

InstanceRecord InstanceRow::record() const {
  auto metadata = unpack_blob<std::map<std::string, std::string>>(metadata_blob);
  if (!metadata) throw std::invalid_argument("an instance row's metadata is not a map of strings");
  proto::Instance instance{std::string(id), std::string(address), weight, std::string(zone),
                           status,          std::move(*metadata)};
  return {service(), std::move(instance), std::string(owner), row};
}

}  // namespace cascade::hub
