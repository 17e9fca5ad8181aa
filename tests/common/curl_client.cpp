#include "cascade/tests/common/curl_client.hpp"

#include <algorithm>
#include <cctype>
#include <memory>

namespace cascade::testing {

namespace {

// curl_global_init once per process, before any thread uses curl.
struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  ~CurlGlobal() { curl_global_cleanup(); }
};

void ensure_global() {
  static CurlGlobal global;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* out) {
  std::string line(data, size * count);
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    auto value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n'))
      value.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(out))[name] = value;
  }
  return size * count;
}

// One easy handle set up for `call`, writing into `result`.
struct Transfer {
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  HttpResult result;

  explicit Transfer(const HttpCall& call) {
    easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, call.url.c_str());
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, call.method.c_str());
    if (call.method == "HEAD") curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
    if (!call.body.empty() || call.method == "PUT" || call.method == "POST") {
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS, call.body.c_str());
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(call.body.size()));
    }
    for (const auto& h : call.headers)
      headers = curl_slist_append(headers, h.c_str());
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(call.timeout.count()));
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &result.body);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &result.headers);
  }
  void done(CURLcode code) {
    if (code == CURLE_OK)
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &result.status);
    else
      result.error = curl_easy_strerror(code);
  }
  ~Transfer() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(easy);
  }
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
};

}  // namespace

HttpResult http(const HttpCall& call) {
  ensure_global();
  Transfer transfer(call);
  transfer.done(curl_easy_perform(transfer.easy));
  return std::move(transfer.result);
}

std::vector<HttpResult> http_all(const std::vector<HttpCall>& calls) {
  ensure_global();
  CURLM* multi = curl_multi_init();
  std::vector<std::unique_ptr<Transfer>> transfers;
  for (const auto& call : calls) {
    transfers.push_back(std::make_unique<Transfer>(call));
    curl_easy_setopt(transfers.back()->easy, CURLOPT_PRIVATE, transfers.back().get());
    curl_multi_add_handle(multi, transfers.back()->easy);
  }
  int running = 1;
  while (running > 0) {
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi, &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      Transfer* transfer = nullptr;
      curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &transfer);
      transfer->done(message->data.result);
    }
    if (running > 0) curl_multi_poll(multi, nullptr, 0, 100, nullptr);
  }
  std::vector<HttpResult> results;
  for (auto& t : transfers) {
    curl_multi_remove_handle(multi, t->easy);
    results.push_back(std::move(t->result));
  }
  curl_multi_cleanup(multi);
  return results;
}

}  // namespace cascade::testing
