// consumer HUB_ENDPOINT SERVICE=ADDRESS: registers the instance through the
// installed agent library, resolves the service until the hub lists it, and
// deregisters. Exit 0 when the hub listed the instance and acknowledged the
// deregistration; 1 otherwise.
#include <cascade/agent/client.hpp>
#include <cascade/agent/registration_spec.hpp>
#include <chrono>
#include <iostream>
#include <thread>
#include <variant>

namespace {

using cascade::agent::Client;
using cascade::agent::ClientOptions;
using cascade::agent::Resolution;
using cascade::proto::Registration;

bool lists(const Resolution& resolution, const Registration& registration) {
  for (const auto& instance : resolution.instances)
    if (instance.address == registration.instance.address) return true;
  return false;
}

// Beats carry the registration; the service may take a beat to appear.
bool wait_until_listed(Client& client, const Registration& registration) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto resolution = client.resolve(registration.service);
        resolution && lists(*resolution, registration)) {
      std::cout << "resolved " << registration.service.name << ": " << registration.instance.address
                << " (version " << resolution->version << ")\n";
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::cerr << "consumer: the hub never listed " << registration.instance.address << "\n";
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: consumer HUB_ENDPOINT SERVICE=ADDRESS\n";
    return 2;
  }
  auto parsed = cascade::agent::parse_registration(argv[2]);
  if (auto* error = std::get_if<std::string>(&parsed)) {
    std::cerr << "consumer: " << *error << "\n";
    return 2;
  }
  const auto registration = std::get<Registration>(parsed);
  ClientOptions options;
  options.hubs = {argv[1]};
  options.beat_interval = std::chrono::milliseconds(100);
  Client client(options);
  client.register_instance(registration);
  const bool listed = wait_until_listed(client, registration);
  const bool acknowledged = client.shutdown();
  std::cout << "deregistration " << (acknowledged ? "acknowledged" : "not acknowledged") << "\n";
  return listed && acknowledged ? 0 : 1;
}
