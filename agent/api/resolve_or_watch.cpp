#include "cascade/agent/api/resolve_or_watch.hpp"

namespace cascade::agent::api {

void resolve_or_watch(Client& client, WatchBoard& watches, const proto::ServiceKey& service,
                      std::optional<std::uint64_t> held, Duration wait, std::string variant,
                      WatchBoard::Render render, http::ResponderPtr later) {
  client.resolve_async(service, [&watches, service, held, wait, variant = std::move(variant),
                                 render = std::move(render),
                                 later = std::move(later)](std::optional<Resolution> now) {
    if (!held || !now) return later->respond(render(now ? &*now : nullptr));
    watches.watch(service, *held, wait, variant, render, later);
  });
}

}  // namespace cascade::agent::api
