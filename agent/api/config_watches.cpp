#include "cascade/agent/api/config_watches.hpp"

namespace cascade::agent::api {

namespace {

// The board is keyed like services; its keys name config groups. Versions:
// a hub's are never 0 (a group never set is gone at version 1), so 0 is the
// version of a group with no answer yet, and a wait for the first answer is a
// watch of version 0.
constexpr std::string_view kConfigKeyGroup = "config group";
constexpr std::uint64_t kNoAnswer = 0;

proto::ServiceKey key_of(std::string_view group) {
  return {std::string(group), std::string(kConfigKeyGroup)};
}

}  // namespace

ConfigWatches::ConfigWatches(Client& client, const Clock& clock, std::uint64_t seed,
                             Duration query_timeout)
    : client_(client), query_timeout_(query_timeout), board_(source(), clock, seed) {}

WatchSource ConfigWatches::source() {
  // version() also runs every few seconds for each watched group: config_held()
  // marks it used, so the Client keeps following it while it is watched.
  auto version = [this](const proto::ServiceKey& key) {
    const auto held = client_.config_held(key.name);
    return std::optional(held ? held->version : kNoAnswer);
  };
  auto current = [version](const proto::ServiceKey& key) {
    Resolution now;
    now.service = key;
    now.version = *version(key);
    return std::optional(now);
  };
  return {version, current};
}

void ConfigWatches::watch(const std::string& group, std::optional<std::uint64_t> index,
                          Duration wait, std::string variant, Render render,
                          http::ResponderPtr responder) {
  auto held = client_.config_held(group);
  if (held && !index) {
    responder->respond(render(&*held));
    return;
  }
  // The render reads the group when it runs: a change that woke the watch
  // may already have been overtaken by the next one.
  auto board_render = [this, group, render = std::move(render)](const Resolution*) {
    const auto now = client_.config_held(group);
    return render(now ? &*now : nullptr);
  };
  if (held)
    board_.watch(key_of(group), *index, wait, std::move(variant), std::move(board_render),
                 std::move(responder));
  else
    board_.watch(key_of(group), kNoAnswer, std::min(wait, query_timeout_), std::move(variant),
                 std::move(board_render), std::move(responder));
}

namespace {

// when_held() runs its `use` as a render; nobody waits for what it renders.
class Nobody : public http::Responder {
 public:
  void respond(http::Response) override {}
};

}  // namespace

void ConfigWatches::when_held(const std::string& group,
                              std::function<void(const ConfigSnapshot*)> use) {
  auto render = [use = std::move(use)](const ConfigSnapshot* now) {
    use(now);
    return http::Response{};
  };
  watch(group, std::nullopt, query_timeout_, "when-held:" + std::to_string(++uses_),
        std::move(render), std::make_shared<Nobody>());
}

void ConfigWatches::on_change(const ConfigSnapshot& snapshot) {
  Resolution changed;
  changed.service = key_of(snapshot.group);
  changed.version = snapshot.version;
  board_.on_change(changed);
}

}  // namespace cascade::agent::api
