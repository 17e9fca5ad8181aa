#pragma once
// A small HTTP client for tests, on libcurl (a client no one here wrote):
// one blocking request at a time, or many at once through curl's multi API.

#include <curl/curl.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace cascade::testing {

struct HttpResult {
  long status = 0;  // 0: no response (connection refused, timed out)
  std::string body{};
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string error;                           // curl's message when status is 0
};

struct HttpCall {
  std::string method = "GET";
  std::string url;
  std::string body{};
  std::vector<std::string> headers{};  // "Name: value"
  std::chrono::milliseconds timeout{10'000};
};

// One request, waiting for its response.
HttpResult http(const HttpCall& call);
inline HttpResult http_get(const std::string& url) {
  return http({"GET", url});
}
// All requests at once on one thread; results in the same order.
std::vector<HttpResult> http_all(const std::vector<HttpCall>& calls);

}  // namespace cascade::testing
