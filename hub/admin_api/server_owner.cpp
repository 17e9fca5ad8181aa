#include "cascade/hub/admin_api/server_owner.hpp"

namespace cascade::hub::admin_api {

void ServerOwner::run(std::function<void(Owner&)> task) {
  server_.mailbox().post([this, task = std::move(task)] { task(*this); });
}

proto::Message ServerOwner::command(const proto::AdminRequest& request,
                                    std::string_view peer_address,
                                    std::function<void(bool committed)> then) {
  auto result = server_.handle_operator_command(request, peer_address);
  // Every operator command's reply is durable (its audit record at least);
  // one refused before the core even looked would wait one commit for
  // nothing, which costs nothing.
  server_.after_commit(std::move(then));
  return std::move(result.reply);
}

AdminService::AdminService(HubServer& server, const http::ApiOptions& options,
                           const std::filesystem::path& store_file)
    : owner_(server), http_(options, owner_, store_file) {
  // Without a token file there is nothing to re-read (and a hub without keys
  // still says reload-keys has nothing to do).
  if (options.token_file.empty()) return;
  server.add_reload([this] {
    const auto outcome = http_.reload_tokens();
    return HubServer::ReloadOutcome{outcome.ok, outcome.message};
  });
}

}  // namespace cascade::hub::admin_api
