#pragma once
// The fixture of the agent's HTTP API tests over real HTTP (libcurl): a
// Client beating to an in-process hub, its LocalApi on a free loopback port,
// and requests to it.

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cascade/agent/api/local_api.hpp"
#include "cascade/tests/agent/client_with_hub.hpp"
#include "cascade/tests/common/curl_client.hpp"

namespace cascade::agent::testing {

class LocalApiWithHubTest : public ClientWithHubTest {
 protected:
  // `adjust` changes the Client's options (zone, keys) before it starts,
  // `adjust_hub` the hub's config.
  explicit LocalApiWithHubTest(const std::string& name,
                               const std::function<void(ClientOptions&)>& adjust = {},
                               const std::function<void(hub::HubConfig&)>& adjust_hub = {})
      : ClientWithHubTest(name, adjust_hub) {
    auto o = options(name + "-agent");
    if (adjust) adjust(o);
    client_ = std::make_unique<Client>(o);
    HttpApiOptions http;
    http.listen = std::get<SocketAddress>(SocketAddress::parse("127.0.0.1:0"));
    api_ = std::make_unique<api::LocalApi>(*client_, http);
    client_->on_change([this](const Resolution& r) { api_->on_change(r); });
    base_ = "http://" + api_->address().to_string();
  }
  void TearDown() override {
    client_->shutdown();
    api_.reset();  // after the Client's I/O thread stopped, as cascade-agent does
    client_.reset();
    ClientWithHubTest::TearDown();
  }

  cascade::testing::HttpResult call(std::string method, const std::string& path,
                                    std::string body = "") {
    return cascade::testing::http({std::move(method), base_ + path, std::move(body)});
  }
  cascade::testing::HttpResult get(const std::string& path) { return call("GET", path); }
  cascade::testing::HttpResult put(const std::string& path, std::string body = "") {
    return call("PUT", path, std::move(body));
  }
  static nlohmann::json json_of(const cascade::testing::HttpResult& result) {
    return nlohmann::json::parse(result.body, nullptr, false);
  }

  std::unique_ptr<Client> client_;
  std::unique_ptr<api::LocalApi> api_;
  std::string base_;
};

}  // namespace cascade::agent::testing
