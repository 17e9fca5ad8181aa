#include "cascade/common/message_parts.hpp"

#include <iterator>
#include <string>
#include <utility>

#include "cascade/common/codec.hpp"
#include "cascade/common/field_writer.hpp"

namespace cascade::proto {
namespace {

// What a list's array header and a part's growing counts may add.
constexpr std::size_t kSlack = 64;

template <typename T>
std::size_t record_size(const T& record) {
  std::string out;
  wire::StringSink sink{out};
  wire::Packer pk(sink);
  wire::FieldWriter(pk).record(record);
  return out.size();
}

std::size_t size_of(const Instance& in) {
  return record_size(in);
}
std::size_t size_of(const std::string& id) {
  return id.size() + 5;
}

// Fills parts (messages of type M) up to `max_bytes` each; `make_part` starts
// the next one, with its encoded size without the items.
template <typename M>
class PartWriter {
 public:
  PartWriter(std::size_t max_bytes, M first, std::size_t first_size)
      : max_bytes_(max_bytes), used_(first_size) {
    parts_.push_back(std::move(first));
  }
  bool fits(std::size_t bytes) const { return used_ + bytes + kSlack <= max_bytes_; }
  bool fits_in_part_of(std::size_t part_size, std::size_t bytes) const {
    return part_size + bytes + kSlack <= max_bytes_;
  }
  void add(std::size_t bytes) { used_ += bytes; }
  M& current() { return parts_.back(); }
  void next(M part, std::size_t size) {
    parts_.push_back(std::move(part));
    used_ = size;
  }
  std::vector<Message> take() {
    return {std::make_move_iterator(parts_.begin()), std::make_move_iterator(parts_.end())};
  }

 private:
  std::size_t max_bytes_;
  std::size_t used_;
  std::vector<M> parts_;
};

// ------------------------------------------------------------- DownBeat

DownBeat push_part_of(const DownBeat& reply) {
  DownBeat part;
  part.hub_id = reply.hub_id;
  part.hub_epoch = reply.hub_epoch;
  part.node_id = reply.node_id;
  part.push = true;
  return part;
}

class DownBeatSplitter {
 public:
  DownBeatSplitter(const DownBeat& header, std::size_t max_bytes)
      : push_(push_part_of(header)),
        push_size_(encode(push_).size()),
        out_(max_bytes, header, encode(header).size()) {}

  void add(ServiceUpdate update) {
    auto shell = shell_of(update);
    const auto shell_size = record_size(shell);
    std::size_t items = 0;
    for (const auto& in : update.upserts)
      items += size_of(in);
    for (const auto& id : update.removed)
      items += size_of(id);
    const auto whole = shell_size + items;
    // Whole in this part, else whole in the next, else split from here on.
    if (!out_.fits(whole) && out_.fits_in_part_of(push_size_, whole)) next_part();
    if (out_.fits(whole)) {
      out_.current().updates.push_back(std::move(update));
      out_.add(whole);
      return;
    }
    split(std::move(update), std::move(shell), shell_size);
  }
  std::vector<Message> take() { return out_.take(); }

 private:
  static ServiceUpdate shell_of(const ServiceUpdate& update) {
    ServiceUpdate shell;
    shell.service = update.service;
    shell.from_version = update.from_version;
    shell.version = update.version;
    shell.kind = update.kind;
    shell.routes = update.routes;
    return shell;
  }
  void next_part() { out_.next(push_, push_size_); }

  // One update over several parts: its instances, then its removed ids.
  void split(ServiceUpdate update, ServiceUpdate shell, std::size_t shell_size) {
    const auto first = !update.upserts.empty()   ? size_of(update.upserts.front())
                       : !update.removed.empty() ? size_of(update.removed.front())
                                                 : 0;
    if (!out_.fits(shell_size + first)) next_part();
    ServiceUpdate piece = shell;
    out_.add(shell_size);
    shell.routes.reset();  // the first piece carries the rules
    auto place = [&](auto&& item, auto list_of_piece) {
      const auto bytes = size_of(item);
      if (!out_.fits(bytes) && !(piece.upserts.empty() && piece.removed.empty())) {
        piece.more = true;
        out_.current().updates.push_back(std::move(piece));
        next_part();
        piece = shell;
        out_.add(shell_size);
      }
      list_of_piece(piece).push_back(std::move(item));
      out_.add(bytes);
    };
    for (auto& in : update.upserts)
      place(
          std::move(in), [](ServiceUpdate & p) -> auto& { return p.upserts; });
    for (auto& id : update.removed)
      place(
          std::move(id), [](ServiceUpdate & p) -> auto& { return p.removed; });
    out_.current().updates.push_back(std::move(piece));
  }

  DownBeat push_;
  std::size_t push_size_;
  PartWriter<DownBeat> out_;
};

std::vector<Message> split_downbeat(DownBeat whole, std::size_t max_bytes) {
  auto updates = std::move(whole.updates);
  whole.updates.clear();
  DownBeatSplitter splitter(whole, max_bytes);
  for (auto& update : updates)
    splitter.add(std::move(update));
  return splitter.take();
}

// ------------------------------------------------------------- QueryReply

std::vector<Message> split_query_reply(QueryReply whole, std::size_t max_bytes) {
  auto instances = std::move(whole.instances);
  whole.instances.clear();
  const auto header_size = encode(whole).size();
  PartWriter<QueryReply> out(max_bytes, whole, header_size);
  whole.routes.reset();  // the first part carries the rules
  for (auto& in : instances) {
    const auto bytes = size_of(in);
    if (!out.fits(bytes) && !out.current().instances.empty()) {
      out.current().more = true;
      out.next(whole, header_size);
    }
    out.current().instances.push_back(std::move(in));
    out.add(bytes);
  }
  return out.take();
}

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

bool continues(const ServiceUpdate& held, const ServiceUpdate& part) {
  return held.version == part.version && held.from_version == part.from_version &&
         held.kind == part.kind;
}

bool continues(const QueryReply& held, const QueryReply& part) {
  return held.version == part.version && held.service == part.service &&
         held.hub_epoch == part.hub_epoch;
}

}  // namespace

std::vector<Message> split_into_parts(Message message, std::size_t max_bytes) {
  const bool splittable =
      std::holds_alternative<DownBeat>(message) || std::holds_alternative<QueryReply>(message);
  if (!splittable || encode(message).size() <= max_bytes) return {std::move(message)};
  if (auto* down = std::get_if<DownBeat>(&message))
    return split_downbeat(std::move(*down), max_bytes);
  return split_query_reply(std::move(std::get<QueryReply>(message)), max_bytes);
}

// ------------------------------------------------------------- assembly

namespace {

// The part held under `key` in `held`, grown by `part`; what to apply (the
// whole) once `part` is the last. Shared by updates and replies.
template <typename Key, typename M, typename Append>
const M* assemble(std::map<Key, M>& held, const Key& key, const M& part, M& assembled,
                  std::uint64_t& dropped, Append&& append_items) {
  auto it = held.find(key);
  if (it != held.end() && !continues(it->second, part)) {
    held.erase(it);
    it = held.end();
    ++dropped;
  }
  if (it == held.end()) {
    if (!part.more) return &part;  // came whole: the common case, no copy
    held.emplace(key, part);
    return nullptr;
  }
  if (!append_items(it->second, part)) {
    held.erase(it);
    ++dropped;
    return nullptr;
  }
  if (part.more) return nullptr;
  assembled = std::move(it->second);
  assembled.more = false;
  held.erase(it);
  return &assembled;
}

}  // namespace

const ServiceUpdate* PartAssembler::add(const ServiceUpdate& part) {
  return assemble(updates_, part.service, part, assembled_update_, dropped_,
                  [](ServiceUpdate& whole, const ServiceUpdate& next) {
                    append(whole.upserts, next.upserts);
                    append(whole.removed, next.removed);
                    return whole.upserts.size() + whole.removed.size() <= kMaxAssembledInstances;
                  });
}

const QueryReply* PartAssembler::add(const QueryReply& part) {
  return assemble(replies_, part.request_id, part, assembled_reply_, dropped_,
                  [](QueryReply& whole, const QueryReply& next) {
                    append(whole.instances, next.instances);
                    return whole.instances.size() <= kMaxAssembledInstances;
                  });
}

void PartAssembler::clear() {
  updates_.clear();
  replies_.clear();
}

}  // namespace cascade::proto
