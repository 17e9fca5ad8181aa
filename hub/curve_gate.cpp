#include "cascade/hub/curve_gate.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "cascade/common/endpoint_security.hpp"
#include "cascade/common/options.hpp"

namespace cascade::hub {

namespace {

constexpr std::string_view kKeyFlags = "--secret-key and --authorized-keys";

std::shared_ptr<const AuthorizedKeys> load_or_throw(const std::filesystem::path& file) {
  auto loaded = AuthorizedKeys::load(file);
  if (auto* error = std::get_if<std::string>(&loaded)) throw std::runtime_error(*error);
  return std::get<std::shared_ptr<const AuthorizedKeys>>(std::move(loaded));
}

// A metadata property of a received message, "" when the transport has none.
std::string property(zmq::message_t& frame, const char* name) {
  try {
    if (const char* value = frame.gets(name)) return value;
  } catch (const zmq::error_t&) {
    // Not set for this transport or mechanism (inproc, ipc, plain text).
  }
  return {};
}

// Whether the flag values give a key for `endpoint` (FILE alone covers all),
// without reading the files: options are checked before files are read.
bool names_key_for(const std::vector<std::string>& flag_values, const std::string& endpoint) {
  return std::any_of(flag_values.begin(), flag_values.end(), [&](const std::string& value) {
    const bool for_one = is_zmq_endpoint(value) && value.find('=') != std::string::npos;
    return !for_one || value.starts_with(endpoint + "=");
  });
}

}  // namespace

std::string check_security_config(const SecurityConfig& config, std::string_view listen,
                                  const std::vector<std::string>& upstreams) {
  if (config.secret_key.empty() != config.authorized_keys.empty())
    return "--secret-key and --authorized-keys go together: a hub with a key pair must know "
           "whom to admit, and the reverse";
  if (!config.upstream_public_keys.empty() && config.secret_key.empty())
    return "--upstream-public-key needs --secret-key (the key this hub dials upstream with)";
  if (!config.secret_key.empty())
    for (const auto& up : upstreams)
      if (!names_key_for(config.upstream_public_keys, up))
        return "a hub with keys speaks Curve upstream too: give --upstream-public-key FILE (for "
               "every upstream) or " +
               up + "=FILE";
  const bool keys = !config.secret_key.empty();
  if (auto error = check_secure_by_default("--listen", listen, keys, config.insecure, kKeyFlags);
      !error.empty())
    return error;
  for (const auto& up : upstreams)
    if (auto error = check_secure_by_default("--upstream", up, keys, config.insecure, kKeyFlags);
        !error.empty())
      return error;
  return {};
}

CurveGate::CurveGate(const SecurityConfig& config, zmq::context_t& context) : config_(config) {
  if (config.insecure && !config.has_keys())
    spdlog::warn(
        "--insecure: serving in plain text; anyone who can reach this port can act as "
        "any agent or operator");
  if (config.secret_key.empty()) return;
  own_ = curve::read_secret_key_file(config.secret_key);
  upstream_public_ = curve::ServerKeys::read(config.upstream_public_keys);
  keys_ = load_or_throw(config.authorized_keys);
  zap_ = std::make_unique<ZapHandler>(context, keys_);
  spdlog::info("Curve: public key {}, {} authorised keys from {}", own_->public_z85, keys_->size(),
               config.authorized_keys.string());
}

std::string_view CurveGate::mode() const {
  if (secure()) return "curve";
  return config_.insecure ? "insecure" : "loopback";
}

void CurveGate::serve_on(zmq::socket_t& router) const {
  if (own_) curve::make_curve_server(router, *own_);
}

void CurveGate::dial_upstream(zmq::socket_t& dealer, const std::string& endpoint) const {
  if (own_) curve::make_curve_client(dealer, *own_, upstream_public_.for_endpoint(endpoint));
}

Authentication CurveGate::authenticate(zmq::message_t& frame, MonoTime now) {
  Authentication result;
  result.address = property(frame, "Peer-Address");
  if (!secure()) return result;
  // The ZAP handler set the user id to the client's public key at the
  // handshake; the key's principal is looked up now, in this thread's table,
  // so a key removed since then stops working at its next message.
  const auto key = property(frame, "User-Id");
  result.principal = keys_->find(key);
  if (result.principal != nullptr) return result;
  result.passed = false;
  ++unauthenticated_;
  std::uint64_t suppressed = 0;
  if (refusal_log_.allow(now, suppressed))
    spdlog::warn("refused a message from {} with key {}: not authorised (any more){}",
                 result.address.empty() ? "?" : result.address, key.empty() ? "?" : key,
                 suppressed ? fmt::format(" [{} more suppressed]", suppressed) : std::string());
  return result;
}

proto::ErrorReply CurveGate::unauthenticated_reply() {
  return {proto::ErrorCode::kUnauthenticated,
          "this connection's key is not (or no longer) authorised by the hub", 0};
}

CurveGate::ReloadOutcome CurveGate::reload() {
  if (!secure()) return {false, "this hub runs without keys: no authorised keys file to reload"};
  auto loaded = AuthorizedKeys::load(config_.authorized_keys);
  if (auto* error = std::get_if<std::string>(&loaded)) {
    spdlog::error("authorised keys not reloaded, keeping the {} in use: {}", keys_->size(), *error);
    return {false, "kept the keys in use: " + *error};
  }
  keys_ = std::get<std::shared_ptr<const AuthorizedKeys>>(std::move(loaded));
  zap_->set_keys(keys_);
  auto message = fmt::format("reloaded {} authorised keys from {}", keys_->size(),
                             config_.authorized_keys.string());
  spdlog::info("{}", message);
  return {true, std::move(message)};
}

void CurveGate::append_counters(std::vector<std::pair<std::string, std::uint64_t>>& out) const {
  out.emplace_back("zap_accepted", zap_ ? zap_->accepted() : 0);
  out.emplace_back("zap_refused", zap_ ? zap_->refused() : 0);
  out.emplace_back("unauthenticated", unauthenticated_);
}

}  // namespace cascade::hub
