#include "cascade/common/protocol.hpp"

namespace cascade::proto {

const char* to_string(InstanceStatus s) {
  switch (s) {
    case InstanceStatus::kUp:
      return "UP";
    case InstanceStatus::kDown:
      return "DOWN";
    case InstanceStatus::kOutOfService:
      return "OUT_OF_SERVICE";
    case InstanceStatus::kStarting:
      return "STARTING";
  }
  return "UNKNOWN";
}

std::optional<InstanceStatus> parse_status(std::string_view s) {
  for (std::uint8_t i = 0; i <= kMaxInstanceStatus; ++i) {
    const auto status = static_cast<InstanceStatus>(i);
    if (s == to_string(status)) return status;
  }
  return std::nullopt;
}

const char* to_string(ErrorCode c) {
  switch (c) {
    case ErrorCode::kUnknownVersion:
      return "unknown_version";
    case ErrorCode::kMalformed:
      return "malformed";
    case ErrorCode::kTooLarge:
      return "too_large";
    case ErrorCode::kUnknownType:
      return "unknown_type";
    case ErrorCode::kStaleEpoch:
      return "stale_epoch";
    case ErrorCode::kInvalid:
      return "invalid";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kUnauthenticated:
      return "unauthenticated";
    case ErrorCode::kForbidden:
      return "forbidden";
    case ErrorCode::kBusy:
      return "busy";
  }
  return "unknown";
}

const char* to_string(AnswerSource s) {
  switch (s) {
    case AnswerSource::kLocal:
      return "local";
    case AnswerSource::kCache:
      return "cache";
    case AnswerSource::kUpstream:
      return "upstream";
  }
  return "unknown";
}

const char* to_string(Health h) {
  switch (h) {
    case Health::kOk:
      return "ok";
    case Health::kIsolated:
      return "isolated";
    case Health::kUnconfirmed:
      return "unconfirmed";
  }
  return "unknown";
}

const char* to_string(FailureKind k) {
  switch (k) {
    case FailureKind::kTimeout:
      return "timeout";
    case FailureKind::kConnectionRefused:
      return "refused";
    case FailureKind::kConnectionReset:
      return "reset";
    case FailureKind::kSystemError:
      return "system";
    case FailureKind::kBusinessError:
      return "business";
    case FailureKind::kBreakerOpen:
      return "breaker_open";
  }
  return "unknown";
}

std::optional<FailureKind> parse_failure_kind(std::string_view s) {
  for (std::uint8_t i = 0; i <= kMaxFailureKind; ++i) {
    const auto kind = static_cast<FailureKind>(i);
    if (s == to_string(kind)) return kind;
  }
  return std::nullopt;
}

const char* to_string(AdminOp op) {
  switch (op) {
    case AdminOp::kMarkOutOfService:
      return "mark_out_of_service";
    case AdminOp::kMarkInService:
      return "mark_in_service";
    case AdminOp::kAddStatic:
      return "add_static";
    case AdminOp::kRemoveStatic:
      return "remove_static";
    case AdminOp::kEvictionProtection:
      return "eviction_protection";
    case AdminOp::kNotifySwitch:
      return "notify_switch";
    case AdminOp::kReadmit:
      return "readmit";
    case AdminOp::kSetRoutes:
      return "set_routes";
    case AdminOp::kReloadKeys:
      return "reload_keys";
    case AdminOp::kConfigEdit:
      return "config_edit";
    case AdminOp::kConfigRollback:
      return "config_rollback";
  }
  return "unknown";
}

std::string clip_message(std::string text) {
  if (text.size() <= kMaxMessageBytes) return text;
  static constexpr std::string_view kEllipsis = "...";
  std::size_t end = kMaxMessageBytes - kEllipsis.size();
  const auto continuation = [&](std::size_t i) {
    return (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
  };
  while (end > 0 && continuation(end))
    --end;  // never split a character
  text.resize(end);
  text += kEllipsis;
  return text;
}

bool is_instance_op(AdminOp op) {
  switch (op) {
    case AdminOp::kMarkOutOfService:
    case AdminOp::kMarkInService:
    case AdminOp::kAddStatic:
    case AdminOp::kRemoveStatic:
    case AdminOp::kReadmit:
      return true;
    case AdminOp::kEvictionProtection:
    case AdminOp::kNotifySwitch:
    case AdminOp::kSetRoutes:
    case AdminOp::kReloadKeys:
    case AdminOp::kConfigEdit:
    case AdminOp::kConfigRollback:
      return false;
  }
  return false;
}

std::uint64_t ref_of(const Message& m) {
  return std::visit(
      [](const auto& message) -> std::uint64_t {
        if constexpr (requires { message.request_id; })
          return message.request_id;
        else if constexpr (requires { message.seq; })
          return message.seq;
        else
          return 0;
      },
      m);
}

const char* to_string(MsgType t) {
  switch (t) {
    case MsgType::kUpBeat:
      return "UpBeat";
    case MsgType::kDownBeat:
      return "DownBeat";
    case MsgType::kQuery:
      return "Query";
    case MsgType::kQueryReply:
      return "QueryReply";
    case MsgType::kDeregister:
      return "Deregister";
    case MsgType::kDeregisterAck:
      return "DeregisterAck";
    case MsgType::kStatusRequest:
      return "StatusRequest";
    case MsgType::kStatusReply:
      return "StatusReply";
    case MsgType::kServicesRequest:
      return "ServicesRequest";
    case MsgType::kServicesReply:
      return "ServicesReply";
    case MsgType::kError:
      return "Error";
    case MsgType::kBatch:
      return "Batch";
    case MsgType::kFailureReport:
      return "FailureReport";
    case MsgType::kReportAck:
      return "ReportAck";
    case MsgType::kAdminRequest:
      return "AdminRequest";
    case MsgType::kAdminReply:
      return "AdminReply";
    case MsgType::kConfigRequest:
      return "ConfigRequest";
    case MsgType::kConfigReply:
      return "ConfigReply";
  }
  return "Unknown";
}

MsgType type_of(const Message& m) {
  // Variant alternatives are declared in MsgType order, UpBeat = 1, skipping Batch.
  const auto n = m.index() + 1;
  return static_cast<MsgType>(n < static_cast<std::size_t>(MsgType::kBatch) ? n : n + 1);
}

}  // namespace cascade::proto
