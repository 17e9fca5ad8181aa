#include "cascade/hub/instance_map.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace cascade::hub {

InstanceSlot* InstanceSlot::make(std::string_view id) {
  // Every path in checks ids against this bound; a longer one here is a bug.
  if (id.size() > proto::kMaxIdBytes) throw std::length_error("instance id over 255 bytes");
  uuid_form::Packed packed;
  const bool is_uuid = uuid_form::pack(id, packed);
  const std::size_t tail = is_uuid ? packed.size() : id.size();
  void* block = ::operator new(sizeof(InstanceSlot) + tail);
  auto* slot = new (block) InstanceSlot(tail, is_uuid);
  std::memcpy(reinterpret_cast<char*>(slot + 1),
              is_uuid ? static_cast<const void*>(packed.data()) : id.data(), tail);
  return slot;
}

bool InstanceSlot::id_less(const InstanceSlot* a, const InstanceSlot* b) {
  if (a->packed_ && b->packed_) return std::memcmp(a + 1, b + 1, uuid_form::kPackedSize) < 0;
  return a->id() < b->id();
}

void InstanceSlot::destroy(InstanceSlot* slot) {
  slot->~InstanceSlot();
  ::operator delete(static_cast<void*>(slot));
}

InstanceEntry& InstanceMap::at(std::string_view id) const {
  InstanceSlot* slot = find(id);
  if (slot == nullptr) throw std::out_of_range("no instance " + std::string(id));
  return slot->entry();
}

InstanceMap::Placed InstanceMap::try_emplace(std::string_view id) {
  const Index::Key key{id};  // hashed once for the find and the insert
  if (InstanceSlot* found = index_.find(key); found != nullptr) return {found, false};
  index_.reserve_one();  // a rehash that throws comes before the slot is made
  InstanceSlot* made = InstanceSlot::make(id);
  index_.insert(made, key);
  return {made, true};
}

void InstanceMap::erase(InstanceSlot* slot) {
  InstanceSlot::destroy(index_.erase(slot->id()));
}

InstanceMap::Detached InstanceMap::detach(InstanceSlot* slot) {
  Detached out(index_.erase(slot->id()));
  out->detached_ = true;
  return out;
}

void InstanceMap::clear() {
  // The iterator reads only the slot words, never an object it has passed.
  for (auto it = index_.begin(); it != index_.end();) {
    InstanceSlot* slot = &*it;
    ++it;
    InstanceSlot::destroy(slot);
  }
  index_ = Index{};
}

std::vector<const InstanceSlot*> InstanceMap::sorted() const {
  std::vector<const InstanceSlot*> out;
  out.reserve(size());
  for (const InstanceSlot& slot : index_)
    out.push_back(&slot);
  std::sort(out.begin(), out.end(), InstanceSlot::id_less);
  return out;
}

}  // namespace cascade::hub
