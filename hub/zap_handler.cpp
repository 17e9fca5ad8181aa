#include "cascade/hub/zap_handler.hpp"

#include <spdlog/spdlog.h>

#include <zmq_addon.hpp>

#include "cascade/common/curve_keys.hpp"

namespace cascade::hub {

namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
constexpr std::string_view kZapVersion = "1.0";
// A request: version, request id, domain, address, identity, mechanism, and
// the mechanism's credentials (CURVE: one frame, the client's public key).
constexpr std::size_t kRequestFrames = 6;
enum Field : std::size_t { kVersion, kRequestId, kDomain, kAddress, kIdentity, kMechanism };

// The stop pair's endpoint: unique per handler, so handlers on several
// contexts (tests) do not collide.
std::string stop_endpoint(const void* handler) {
  return fmt::format("inproc://cascade-zap-stop-{}", handler);
}

}  // namespace

ZapHandler::ZapHandler(zmq::context_t& context, std::shared_ptr<const AuthorizedKeys> keys)
    : socket_(context, zmq::socket_type::rep),
      stop_in_(context, zmq::socket_type::pair),
      stop_out_(context, zmq::socket_type::pair),
      keys_(std::move(keys)) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind(kZapEndpoint);
  stop_in_.bind(stop_endpoint(this));
  stop_out_.connect(stop_endpoint(this));
  thread_ = std::thread([this] { serve(); });
}

ZapHandler::~ZapHandler() {
  stop_out_.send(zmq::str_buffer("stop"), zmq::send_flags::none);
  thread_.join();
}

void ZapHandler::set_keys(std::shared_ptr<const AuthorizedKeys> keys) {
  std::lock_guard lock(mu_);
  keys_ = std::move(keys);
}

void ZapHandler::serve() {
  zmq::pollitem_t items[] = {{socket_.handle(), 0, ZMQ_POLLIN, 0},
                             {stop_in_.handle(), 0, ZMQ_POLLIN, 0}};
  for (;;) {
    try {
      zmq::poll(items, 2, std::chrono::milliseconds{-1});
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;  // cascade-hub blocks signals; a process embedding it may not
      throw;
    }
    if (items[1].revents & ZMQ_POLLIN) return;
    Frames request;
    if (!zmq::recv_multipart(socket_, std::back_inserter(request), zmq::recv_flags::dontwait))
      continue;
    auto reply = answer(request);
    zmq::send_multipart(socket_, reply);
  }
}

ZapHandler::Frames ZapHandler::answer(const Frames& request) {
  const auto field = [&](std::size_t i) {
    return i < request.size() ? request[i].to_string_view() : std::string_view{};
  };
  Frames reply;
  reply.emplace_back(kZapVersion.data(), kZapVersion.size());
  reply.emplace_back(field(kRequestId).data(), field(kRequestId).size());
  const auto respond = [&](std::string_view code, std::string_view text, std::string_view user) {
    for (auto part : {code, text, user})
      reply.emplace_back(part.data(), part.size());
    reply.emplace_back();  // no metadata
    return std::move(reply);
  };
  std::string why;
  if (request.size() < kRequestFrames || field(kVersion) != kZapVersion)
    why = "not a ZAP 1.0 request";
  else if (field(kMechanism) != "CURVE" || request.size() != kRequestFrames + 1 ||
           request[kRequestFrames].size() != curve::kKeyBytes)
    why = "mechanism " + std::string(field(kMechanism)) + " (only CURVE is accepted)";
  if (why.empty()) {
    const auto key = curve::z85_of_binary(request[kRequestFrames].to_string_view());
    std::shared_ptr<const AuthorizedKeys> keys;
    {
      std::lock_guard lock(mu_);
      keys = keys_;
    }
    if (keys != nullptr && keys->find(key) != nullptr) {
      accepted_.fetch_add(1, std::memory_order_relaxed);
      return respond("200", "OK", key);
    }
    why = "key " + key + " is not authorised";
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  log_refusal(field(kAddress), why);
  return respond("400", "not authorised", "");
}

void ZapHandler::log_refusal(std::string_view address, std::string_view why) {
  std::uint64_t suppressed = 0;
  if (refusal_log_.allow(clock_.now(), suppressed))
    spdlog::warn("refused a connection from {}: {}{}", address.empty() ? "?" : address, why,
                 suppressed ? fmt::format(" [{} more suppressed]", suppressed) : std::string());
}

}  // namespace cascade::hub
