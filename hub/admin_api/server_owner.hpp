#pragma once
// The admin API's view of a real HubServer: tasks go through its mailbox
// (hub/owner_mailbox.hpp) and run between two passes of its loop; commands
// go through HubServer::handle_operator_command and are answered after its
// next commit (HubServer::after_commit).

#include <filesystem>
#include <memory>

#include "cascade/http/api_options.hpp"
#include "cascade/hub/admin_api/admin_http.hpp"
#include "cascade/hub/admin_api/owner_port.hpp"
#include "cascade/hub/hub_server.hpp"

namespace cascade::hub::admin_api {

class ServerOwner final : public OwnerPort, private Owner {
 public:
  explicit ServerOwner(HubServer& server) : server_(server) {}

  void run(std::function<void(Owner&)> task) override;

 private:
  const HubCore& core() const override { return server_.core(); }
  MonoTime now() const override { return server_.now(); }
  proto::StatusReply status() const override { return server_.status(); }
  proto::Message command(const proto::AdminRequest& request, std::string_view peer_address,
                         std::function<void(bool committed)> then) override;

  HubServer& server_;
};

// `cascade-hub --http`: the admin API over `server`, whose store file is
// `store_file`, its token file reloaded with the authorised keys. Call before
// server.run(); destroy after it returned. Throws as AdminHttp does.
class AdminService {
 public:
  AdminService(HubServer& server, const http::ApiOptions& options,
               const std::filesystem::path& store_file);
  const AdminHttp& http() const { return http_; }

 private:
  ServerOwner owner_;
  AdminHttp http_;
};

}  // namespace cascade::hub::admin_api
