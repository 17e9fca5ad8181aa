#pragma once
// What Prometheus does to a hub, as a PeriodicReader's read: GET /metrics on
// one kept-alive connection (libcurl), the answer checked for a family the
// hub samples from its owning thread, so each read costs that thread its
// sample. The connection is made, and used once, before the reader starts.
// Header-only; link CURL::libcurl.

#include <curl/curl.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace cascade::bench {

class ScrapeRead {
 public:
  explicit ScrapeRead(const std::string& url) : state_(std::make_shared<State>()) {
    if (state_->easy == nullptr) throw std::runtime_error("curl_easy_init failed");
    curl_easy_setopt(state_->easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(state_->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(state_->easy, CURLOPT_TIMEOUT_MS, 10'000L);
    curl_easy_setopt(state_->easy, CURLOPT_WRITEFUNCTION, &on_body);
    curl_easy_setopt(state_->easy, CURLOPT_WRITEDATA, &state_->body);
    (*this)();
  }

  void operator()() {
    state_->body.clear();
    const auto result = curl_easy_perform(state_->easy);
    long status = 0;
    curl_easy_getinfo(state_->easy, CURLINFO_RESPONSE_CODE, &status);
    if (result != CURLE_OK || status != 200)
      throw std::runtime_error(std::string("scrape failed: ") + curl_easy_strerror(result) +
                               ", HTTP " + std::to_string(status));
    // A sampled family: the owning thread answered this scrape.
    if (state_->body.find("\ncascade_hub_beats_total ") == std::string::npos)
      throw std::runtime_error("scrape without cascade_hub_beats_total");
  }

 private:
  static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* body) {
    static_cast<std::string*>(body)->append(data, size * count);
    return size * count;
  }
  struct State {
    State() { curl_global_init(CURL_GLOBAL_DEFAULT); }
    ~State() {
      curl_easy_cleanup(easy);
      curl_global_cleanup();
    }
    CURL* easy = curl_easy_init();
    std::string body;
  };
  std::shared_ptr<State> state_;  // std::function copies the read; the connection is one
};

}  // namespace cascade::bench
