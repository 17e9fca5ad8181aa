#pragma once
// How every endpoint that shows a service answers, blocking or not, without
// blocking a server thread: look the service up with Client::resolve_async
// (from the cache, or one hub query shared by every caller of a service not
// yet at hand), then answer at once; or, when the client holds a version,
// park on the WatchBoard until the service's version differs from it or the
// wait ends. `render` makes the answer either way (nullptr: nothing known).

#include <optional>
#include <string>

#include "cascade/agent/api/watch_board.hpp"
#include "cascade/agent/client.hpp"

namespace cascade::agent::api {

void resolve_or_watch(Client& client, WatchBoard& watches, const proto::ServiceKey& service,
                      std::optional<std::uint64_t> held, Duration wait, std::string variant,
                      WatchBoard::Render render, http::ResponderPtr later);

}  // namespace cascade::agent::api
