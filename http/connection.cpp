#include "cascade/http/connection.hpp"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <cctype>
#include <cerrno>

#include "cascade/http/event_loop.hpp"
#include "cascade/http/response_head.hpp"
#include "cascade/http/server.hpp"
#include "cascade/http/url.hpp"

namespace cascade::http {

namespace beast_http = boost::beast::http;

namespace {

constexpr std::size_t kReadChunk = 16 * 1024;
// Input read beyond the request in flight (pipelined requests) is buffered
// up to this much; reading stops there until that request is answered.
constexpr std::size_t kMaxBuffered = 64 * 1024;

// The Responder of one request: answers through the connection while both
// live, and only that request (a later one on the same connection has
// another number).
class PendingAnswer final : public Responder {
 public:
  PendingAnswer(std::weak_ptr<Connection> connection, std::uint64_t number)
      : connection_(std::move(connection)), number_(number) {}
  void respond(Response response) override {
    if (auto connection = connection_.lock()) connection->answer(number_, std::move(response));
  }
  void respond_shared(const std::shared_ptr<const SharedResponse>& response) override {
    if (auto connection = connection_.lock()) connection->answer(number_, response);
  }

 private:
  std::weak_ptr<Connection> connection_;
  std::uint64_t number_;
};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

void count_status(ServerCounters& counters, int status) {
  if (status < 400)
    ++counters.responses_2xx;
  else if (status < 500)
    ++counters.responses_4xx;
  else
    ++counters.responses_5xx;
}

std::string_view view(boost::beast::string_view text) {
  return {text.data(), text.size()};
}

bool would_block() {
  return errno == EAGAIN || errno == EWOULDBLOCK;
}

}  // namespace

Connection::Connection(int fd, SocketAddress peer, ConnectionHost& host, EventLoop& loop,
                       ServerCounters& counters, const ConnectionLimits& limits)
    : fd_(fd),
      peer_(std::move(peer)),
      host_(host),
      loop_(loop),
      counters_(counters),
      limits_(limits),
      last_activity_(std::chrono::steady_clock::now()) {}

Connection::~Connection() {
  if (fd_ >= 0) ::close(fd_);
}

bool Connection::on_events(std::uint32_t events, SteadyTime now) {
  Lock lock(mu_);
  if ((events & EPOLLERR) != 0) close_locked();
  if ((events & EPOLLOUT) != 0 && state_ == State::kWriting) flush();
  if (state_ != State::kClosed &&
      ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) != 0 || needs_loop()))
    pump(lock, now);
  return state_ == State::kClosed;
}

bool Connection::resume(SteadyTime now) {
  Lock lock(mu_);
  if (state_ == State::kReading) pump(lock, now);
  return state_ == State::kClosed;
}

bool Connection::close_if_expired(SteadyTime now) {
  Lock lock(mu_);
  const auto idle = now - last_activity_;
  if ((state_ == State::kReading || state_ == State::kWriting) && idle > limits_.idle_timeout)
    close_locked();
  else if (state_ == State::kLingering && idle > limits_.linger_timeout)
    close_locked();
  return state_ == State::kClosed;
}

bool Connection::shed(const Response& response) {
  Lock lock(mu_);
  if (state_ == State::kParked) {
    unpark();
    send(response, false);
  }
  return state_ == State::kWriting;
}

void Connection::close() {
  Lock lock(mu_);
  close_locked();
}

void Connection::answer(std::uint64_t request, Response response) {
  answer_with(
      request, [&] { return std::move(response); }, [&] { send(response, keep_alive_); });
}

void Connection::answer(std::uint64_t request,
                        const std::shared_ptr<const SharedResponse>& response) {
  answer_with(
      request, [&] { return response->response(); }, [&] { send(*response, keep_alive_); });
}

// An answer for `request` (and not another on this connection): kept for the
// Handler's return when it comes while the Handler runs (keep()), written at
// once when the request is parked (send_now()), ignored otherwise.
template <typename Keep, typename Send>
void Connection::answer_with(std::uint64_t request, Keep keep, Send send_now) {
  Lock lock(mu_);
  if (request != request_number_) return;
  if (state_ == State::kHandling) {
    if (!early_) early_ = keep();
    return;
  }
  if (state_ != State::kParked) return;
  unpark();
  ++counters_.answered_later;
  send_now();
  if (needs_loop()) loop_.resume(shared_from_this());
}

// Reads until the socket runs dry, serving each whole request as it comes.
void Connection::pump(Lock& lock, SteadyTime now) {
  for (;;) {
    if (state_ == State::kReading) serve_buffered(lock);
    if (state_ == State::kClosed) return;
    if (in_.size() >= kMaxBuffered) {
      unread_ = true;  // read on once the request in flight is answered
      return;
    }
    char buffer[kReadChunk];
    const auto got = ::recv(fd_, buffer, sizeof(buffer), 0);
    if (got > 0) {
      if (state_ == State::kLingering) continue;  // dropped; its idle time runs on
      last_activity_ = now;
      in_.append(buffer, static_cast<std::size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && would_block()) {
      unread_ = false;
      return;
    }
    close_locked();  // 0: the client closed (a parked request's client is gone); < 0: reset
    return;
  }
}

void Connection::serve_buffered(Lock& lock) {
  while (state_ == State::kReading && !in_.empty()) {
    std::optional<Response> refusal;
    switch (parse(refusal)) {
      case Parsed::kNeedMore:
        return;
      case Parsed::kRefused:
        in_.clear();
        parser_.reset();
        send(*refusal, false);
        return;
      case Parsed::kRequest: {
        const bool keep_alive = parser_->get().keep_alive();
        request_.body = std::move(parser_->get().body());
        parser_.reset();
        handle(lock, std::exchange(request_, Request{}), keep_alive);
        break;
      }
    }
  }
}

Connection::Parsed Connection::parse(std::optional<Response>& refusal) {
  if (!parser_) {
    parser_.emplace();
    parser_->header_limit(limits_.max_header_bytes);
    parser_->body_limit(limits_.max_body_bytes);
    head_seen_ = false;
  }
  while (!in_.empty()) {
    boost::system::error_code error;
    const auto used = parser_->put(boost::asio::buffer(in_.data(), in_.size()), error);
    in_.erase(0, used);
    if (error == beast_http::error::need_more) return Parsed::kNeedMore;
    if (error) {
      refusal = parse_error(error);
      return Parsed::kRefused;
    }
    if (parser_->is_header_done() && !head_seen_) {
      head_seen_ = true;
      refusal = on_head();
      if (refusal) return Parsed::kRefused;
    }
    if (parser_->is_done()) return Parsed::kRequest;
    if (used == 0) return Parsed::kNeedMore;
  }
  return Parsed::kNeedMore;
}

std::optional<Response> Connection::parse_error(const boost::system::error_code& error) {
  if (error == beast_http::error::body_limit) {
    ++counters_.bodies_too_large;
    host_.bad_input(peer_, "a request body over the limit");
    return Response::error(
        413, "body_too_large",
        "the request body is larger than " + std::to_string(limits_.max_body_bytes) + " bytes");
  }
  ++counters_.bad_requests;
  if (error == beast_http::error::header_limit) {
    host_.bad_input(peer_, "a request head over the limit");
    return Response::error(431, "header_too_large",
                           "the request line and headers are larger than " +
                               std::to_string(limits_.max_header_bytes) + " bytes");
  }
  host_.bad_input(peer_, "a malformed request: " + error.message());
  return Response::error(400, "bad_request", "malformed HTTP request: " + error.message());
}

// The request's head is in: the Request gets its method, path, arguments and
// headers, and the host may refuse it before its body is read.
std::optional<Response> Connection::on_head() {
  const auto& message = parser_->get();
  const auto target = parse_target(view(message.target()));
  if (!target) {
    ++counters_.bad_requests;
    host_.bad_input(peer_, "a request target that is not a path with valid escapes");
    return Response::error(400, "bad_request",
                           "the request target is not an absolute path with valid escapes");
  }
  request_.method = std::string(view(message.method_string()));
  request_.path = target->path;
  request_.query = target->query;
  for (const auto& field : message)
    request_.headers.insert_or_assign(lower(view(field.name_string())),
                                      std::string(view(field.value())));
  request_.peer = peer_;
  if (auto refused = host_.screen(request_)) return refused;
  // A client that asked whether to send its body is told to.
  if (!parser_->is_done() && lower(request_.header("expect")) == "100-continue")
    (void)::send(fd_, kContinue.data(), kContinue.size(), MSG_NOSIGNAL);
  return std::nullopt;
}

// Runs the Handler without the lock (it may answer at once through `later`,
// or keep it), then writes the answer or parks the request.
void Connection::handle(Lock& lock, Request request, bool keep_alive) {
  state_ = State::kHandling;
  keep_alive_ = keep_alive;
  const ResponderPtr later = std::make_shared<PendingAnswer>(weak_from_this(), request_number_);
  lock.unlock();
  Reply reply = host_.dispatch(request, later);
  lock.lock();
  if (state_ != State::kHandling) return;
  if (!reply) reply = std::exchange(early_, std::nullopt);
  if (reply) {
    send(*reply, keep_alive_);
    return;
  }
  state_ = State::kParked;
  ++counters_.parked;
}

void Connection::send(const Response& response, bool keep_alive) {
  std::string head;
  try {
    head = response_head(response, keep_alive);
  } catch (const std::invalid_argument& e) {
    host_.bad_input(peer_, e.what());
    send(Response::error(500, "internal", "the response had a malformed header"), keep_alive);
    return;
  }
  write(head, response.body, response.status, keep_alive);
}

// Written once for every request it answers (SharedResponse::wire).
void Connection::send(const SharedResponse& response, bool keep_alive) {
  try {
    write(response.wire(keep_alive), {}, response.response().status, keep_alive);
  } catch (const std::invalid_argument& e) {
    host_.bad_input(peer_, e.what());
    send(Response::error(500, "internal", "the response had a malformed header"), keep_alive);
  }
}

// The head and the body in one sendmsg; what the socket does not take now is
// written from the loop when it can (EPOLLOUT).
void Connection::write(std::string_view head, std::string_view body, int status, bool keep_alive) {
  count_status(counters_, status);
  keep_alive_ = keep_alive;
  iovec parts[2] = {{const_cast<char*>(head.data()), head.size()},
                    {const_cast<char*>(body.data()), body.size()}};
  msghdr message{};
  message.msg_iov = parts;
  message.msg_iovlen = body.empty() ? 1 : 2;
  ssize_t sent = 0;
  do {
    sent = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0 && !would_block()) {
    close_locked();
    return;
  }
  const auto done = static_cast<std::size_t>(std::max<ssize_t>(sent, 0));
  if (done == head.size() + body.size()) {
    finish_answer();
    return;
  }
  out_.clear();
  if (done < head.size()) out_.append(head.substr(done));
  out_.append(body.substr(done > head.size() ? done - head.size() : 0));
  state_ = State::kWriting;
}

void Connection::flush() {
  while (!out_.empty()) {
    const auto sent = ::send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && would_block()) return;
    if (sent < 0) {
      close_locked();
      return;
    }
    out_.erase(0, static_cast<std::size_t>(sent));
  }
  finish_answer();
}

// The answer is out: the next request may come (its idle time starts now),
// or, after a last answer, the client's input is dropped until it closes.
void Connection::finish_answer() {
  ++request_number_;
  last_activity_ = std::chrono::steady_clock::now();
  if (keep_alive_) {
    state_ = State::kReading;
    return;
  }
  ::shutdown(fd_, SHUT_WR);
  in_.clear();
  state_ = State::kLingering;
}

// Parked no more: its answer is being written.
void Connection::unpark() {
  --counters_.parked;
  state_ = State::kWriting;
}

void Connection::close_locked() {
  if (state_ == State::kClosed) return;
  if (state_ == State::kParked) --counters_.parked;
  ::close(fd_);
  fd_ = -1;
  state_ = State::kClosed;
  in_.clear();
  out_.clear();
  parser_.reset();
  host_.closed();
}

// True when input is waiting that only the loop will read: an answer given
// on another thread ends a request that had more behind it.
bool Connection::needs_loop() const {
  return state_ == State::kReading && (!in_.empty() || unread_);
}

}  // namespace cascade::http
