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
std::size_t size_of(const ConfigEntry& entry) {
  return record_size(entry);
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

// An update of a service's list or of a config group, as the splitter sees
// it: what every piece repeats (the shell), and where in a DownBeat it goes.
ServiceUpdate shell_of(const ServiceUpdate& update) {
  ServiceUpdate shell;
  shell.service = update.service;
  shell.from_version = update.from_version;
  shell.version = update.version;
  shell.kind = update.kind;
  shell.routes = update.routes;
  return shell;
}
ConfigUpdate shell_of(const ConfigUpdate& update) {
  ConfigUpdate shell;
  shell.group = update.group;
  shell.from_version = update.from_version;
  shell.version = update.version;
  shell.kind = update.kind;
  return shell;
}
// What the pieces after the first leave out: the first carries the rules.
void after_first_piece(ServiceUpdate& shell) {
  shell.routes.reset();
}
void after_first_piece(ConfigUpdate& /*shell*/) {}
std::vector<ServiceUpdate>& list_of(DownBeat& part, const ServiceUpdate& /*update*/) {
  return part.updates;
}
std::vector<ConfigUpdate>& list_of(DownBeat& part, const ConfigUpdate& /*update*/) {
  return part.config_updates;
}

class DownBeatSplitter {
 public:
  DownBeatSplitter(const DownBeat& header, std::size_t max_bytes)
      : push_(push_part_of(header)),
        push_size_(encode(push_).size()),
        out_(max_bytes, header, encode(header).size()) {}

  // Service updates, then config updates, each in the order given.
  template <typename Update>
  void add(Update update) {
    auto shell = shell_of(update);
    const auto shell_size = record_size(shell);
    std::size_t items = 0;
    for (const auto& item : update.upserts)
      items += size_of(item);
    for (const auto& key : update.removed)
      items += size_of(key);
    const auto whole = shell_size + items;
    // Whole in this part, else whole in the next, else split from here on.
    if (!out_.fits(whole) && out_.fits_in_part_of(push_size_, whole)) next_part();
    if (out_.fits(whole)) {
      list_of(out_.current(), update).push_back(std::move(update));
      out_.add(whole);
      return;
    }
    split(std::move(update), std::move(shell), shell_size);
  }
  std::vector<Message> take() { return out_.take(); }

 private:
  void next_part() { out_.next(push_, push_size_); }

  // One update over several parts: its upserts, then its removed ids or keys.
  template <typename Update>
  void split(Update update, Update shell, std::size_t shell_size) {
    const auto first = !update.upserts.empty()   ? size_of(update.upserts.front())
                       : !update.removed.empty() ? size_of(update.removed.front())
                                                 : 0;
    if (!out_.fits(shell_size + first)) next_part();
    Update piece = shell;
    out_.add(shell_size);
    after_first_piece(shell);
    auto place = [&](auto&& item, auto list_of_piece) {
      const auto bytes = size_of(item);
      if (!out_.fits(bytes) && !(piece.upserts.empty() && piece.removed.empty())) {
        piece.more = true;
        list_of(out_.current(), piece).push_back(std::move(piece));
        next_part();
        piece = shell;
        out_.add(shell_size);
      }
      list_of_piece(piece).push_back(std::move(item));
      out_.add(bytes);
    };
    for (auto& item : update.upserts)
      place(
          std::move(item), [](Update & p) -> auto& { return p.upserts; });
    for (auto& key : update.removed)
      place(
          std::move(key), [](Update & p) -> auto& { return p.removed; });
    list_of(out_.current(), piece).push_back(std::move(piece));
  }

  DownBeat push_;
  std::size_t push_size_;
  PartWriter<DownBeat> out_;
};

std::vector<Message> split_downbeat(DownBeat whole, std::size_t max_bytes) {
  auto updates = std::move(whole.updates);
  auto config_updates = std::move(whole.config_updates);
  whole.updates.clear();
  whole.config_updates.clear();
  DownBeatSplitter splitter(whole, max_bytes);
  for (auto& update : updates)
    splitter.add(std::move(update));
  for (auto& update : config_updates)
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

// ------------------------------------------------------------- ConfigReply

std::vector<Message> split_config_reply(ConfigReply whole, std::size_t max_bytes) {
  auto entries = std::move(whole.entries);
  auto groups = std::move(whole.groups);
  auto history = std::move(whole.history);
  whole.entries.clear();
  whole.groups.clear();
  whole.history.clear();
  const auto header_size = encode(whole).size();
  PartWriter<ConfigReply> out(max_bytes, whole, header_size);
  auto place = [&](auto&& item, auto list_of_part) {
    const auto bytes = record_size(item);
    const auto& part = out.current();
    const bool empty = part.entries.empty() && part.groups.empty() && part.history.empty();
    if (!out.fits(bytes) && !empty) {
      out.current().more = true;
      out.next(whole, header_size);
    }
    list_of_part(out.current()).push_back(std::move(item));
    out.add(bytes);
  };
  for (auto& entry : entries)
    place(
        std::move(entry), [](ConfigReply & p) -> auto& { return p.entries; });
  for (auto& group : groups)
    place(
        std::move(group), [](ConfigReply & p) -> auto& { return p.groups; });
  for (auto& change : history)
    place(
        std::move(change), [](ConfigReply & p) -> auto& { return p.history; });
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

bool continues(const ConfigUpdate& held, const ConfigUpdate& part) {
  return held.version == part.version && held.from_version == part.from_version &&
         held.kind == part.kind;
}

bool continues(const ConfigReply& held, const ConfigReply& part) {
  return held.version == part.version && held.group == part.group && held.ok == part.ok;
}

}  // namespace

std::vector<Message> split_into_parts(Message message, std::size_t max_bytes) {
  const bool splittable = std::holds_alternative<DownBeat>(message) ||
                          std::holds_alternative<QueryReply>(message) ||
                          std::holds_alternative<ConfigReply>(message);
  if (!splittable || encode(message).size() <= max_bytes) return {std::move(message)};
  if (auto* down = std::get_if<DownBeat>(&message))
    return split_downbeat(std::move(*down), max_bytes);
  if (auto* config = std::get_if<ConfigReply>(&message))
    return split_config_reply(std::move(*config), max_bytes);
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

// A part that came whole while nothing is held is applied as it is, and
// allocates nothing.
template <typename Key, typename M, typename Append>
const M* PartAssembler::add_part(std::map<Key, M> Held::*parts, M Held::*assembled, const Key& key,
                                 const M& part, Append&& append_items) {
  if (!held_ && !part.more) return &part;
  if (!held_) held_ = std::make_unique<Held>();
  return assemble((*held_).*parts, key, part, (*held_).*assembled, dropped_, append_items);
}

const ServiceUpdate* PartAssembler::add(const ServiceUpdate& part) {
  return add_part(&Held::updates, &Held::assembled_update, part.service, part,
                  [](ServiceUpdate& whole, const ServiceUpdate& next) {
                    append(whole.upserts, next.upserts);
                    append(whole.removed, next.removed);
                    return whole.upserts.size() + whole.removed.size() <= kMaxAssembledInstances;
                  });
}

const QueryReply* PartAssembler::add(const QueryReply& part) {
  return add_part(&Held::replies, &Held::assembled_reply, part.request_id, part,
                  [](QueryReply& whole, const QueryReply& next) {
                    append(whole.instances, next.instances);
                    return whole.instances.size() <= kMaxAssembledInstances;
                  });
}

const ConfigUpdate* PartAssembler::add(const ConfigUpdate& part) {
  return add_part(&Held::config_updates, &Held::assembled_config_update, part.group, part,
                  [](ConfigUpdate& whole, const ConfigUpdate& next) {
                    append(whole.upserts, next.upserts);
                    append(whole.removed, next.removed);
                    return whole.upserts.size() + whole.removed.size() <= kMaxAssembledConfigItems;
                  });
}

const ConfigReply* PartAssembler::add(const ConfigReply& part) {
  return add_part(&Held::config_replies, &Held::assembled_config_reply, part.request_id, part,
                  [](ConfigReply& whole, const ConfigReply& next) {
                    append(whole.entries, next.entries);
                    append(whole.groups, next.groups);
                    append(whole.history, next.history);
                    return whole.entries.size() + whole.groups.size() + whole.history.size() <=
                           kMaxAssembledInstances;
                  });
}

void PartAssembler::forget_reply(std::uint64_t request_id) {
  if (!held_) return;
  held_->replies.erase(request_id);
  held_->config_replies.erase(request_id);
}

// Frees what was held: the receiver moved on, and its next lists in parts
// start afresh.
void PartAssembler::clear() {
  held_.reset();
}

}  // namespace cascade::proto
