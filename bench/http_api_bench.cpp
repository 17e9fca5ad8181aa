// cascade_http_api_bench: cascade-agent's HTTP API against the real binaries
// (docs/benchmarks.md, "Agent HTTP API"; issue 13 §4). Starts cascade-hub and
// two cascade-agents with --http 127.0.0.1:0 as child processes, registers
// --instances instances of "orders" through the second agent's API, and
// measures on the first:
//   [1] resolve: GET /api/v1/services/orders, the service cached, from N
//       keep-alive clients at once (one curl multi handle in this process):
//       latency per request, requests/s, the agent's CPU per request;
//   [2] watchers: W long polls GET ...?index=V&wait=60s parked at once (raw
//       sockets on one epoll set, bench/watch_fleet.hpp), then one more
//       instance registered through the second agent (PUT /api/v1/instances):
//       when each watcher came back, from the first watcher's return (about
//       when the change reached the agent) and from the PUT. Every answer
//       must be 200 with the new version and the new instance. Beside it: the
//       agent's VmRSS, threads and open files before the watchers and with
//       them parked, and the CPU its threads spent until the last answer.
// Everything listens and connects on 127.0.0.1 only. Exits 0 when every
// check passed (a target MISS is a result, not an error), 1 when one failed.

#include <curl/curl.h>
#include <signal.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/thread_cpu.hpp"
#include "cascade/bench/watch_fleet.hpp"

namespace cascade::bench {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kService = "orders";
constexpr double kResolveTargetUs = 1000;      // resolve p99
constexpr double kWakeTargetMs = 100;          // last watcher after the change reached the agent
constexpr const char* kWatchWait = "60s";      // each watch's ?wait=
constexpr milliseconds kPatience{15'000};      // for a process, a registration, a batch of connects
constexpr milliseconds kWakePatience{30'000};  // for the change to reach every watcher

constexpr const char* kUsage =
    R"(cascade_http_api_bench: cascade-agent's HTTP API (real cascade-hub and cascade-agent
processes on 127.0.0.1): resolve latency and throughput, and W parked long-poll watches
answered when the service changes.

  --watchers N        parked watches per round (default 10000)
  --seconds S         measured seconds per resolve client count (default 3; +20% warm-up)
  --clients LIST      concurrent keep-alive resolve clients, comma-separated (default 1,4,16)
  --http-threads N    passed to the watching agent as --http-threads (default: not passed,
                      the agent's own default, 2)
  --instances N       instances of 'orders' registered before measuring (default 10)
  --rounds N          watch rounds: each parks W watches and registers one more instance
                      (default 3)
  --settle-ms MS      wait after every watch request was accepted, before the change (default 1000)
  --connect-batch N   watch connections opened before waiting for the agent to accept them
                      (default 500; keeps its listen queue from overflowing)
  --hub-binary PATH   cascade-hub (default: the one built alongside)
  --agent-binary PATH cascade-agent (default: the one built alongside)
  --quick             smoke test: --watchers 200 --seconds 0.5 --clients 1,4 --rounds 1
                      --settle-ms 200
)";

struct Options {
  std::size_t watchers = 10'000;
  double seconds = 3;
  std::vector<std::size_t> clients{1, 4, 16};
  std::size_t http_threads = 0;  // 0: not passed
  std::size_t instances = 10;
  std::size_t rounds = 3;
  Duration settle{1000};
  std::size_t connect_batch = 500;
  std::string hub_binary = CASCADE_HUB_BINARY;  // both defined by bench/CMakeLists.txt
  std::string agent_binary = CASCADE_AGENT_BINARY;
};

std::vector<std::size_t> parse_list(const std::string& flag, const std::string& list) {
  std::vector<std::size_t> values;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const auto comma = std::min(list.find(',', pos), list.size());
    values.push_back(parse_count(flag, list.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  return values;
}

Options parse(int argc, char** argv) {
  return parse_flags<Options>(argc, argv, kUsage, [](Flags& flags, Options& o) {
    flags.first("--quick", [&o] {
      o.watchers = 200;
      o.seconds = 0.5;
      o.clients = {1, 4};
      o.rounds = 1;
      o.settle = Duration{200};
    });
    flags.add({{"--watchers", &o.watchers},
               {"--seconds", &o.seconds},
               {"--http-threads", &o.http_threads},
               {"--instances", &o.instances},
               {"--rounds", &o.rounds},
               {"--settle-ms", &o.settle, kZeroOk},
               {"--connect-batch", &o.connect_batch}});
    flags.on_value("--clients", [&o](const std::string& flag, const std::string& v) {
      o.clients = parse_list(flag, v);
    });
    flags.on_value("--hub-binary",
                   [&o](const std::string&, const std::string& v) { o.hub_binary = v; });
    flags.on_value("--agent-binary",
                   [&o](const std::string&, const std::string& v) { o.agent_binary = v; });
  });
}

// ---------------------------------------------------------------- processes

// A real binary in a child process, stdout and stderr in `log`. It never
// outlives the bench (PR_SET_PDEATHSIG); destruction sends SIGTERM (an agent
// deregisters, the hub commits) and SIGKILL after 10 s.
class Child {
 public:
  Child(std::vector<std::string> args, fs::path log) : log_(std::move(log)) {
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      exec_logged(args, log_, false);
    }
  }
  ~Child() {
    if (reaped_) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 1000; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) != 0) return;
      std::this_thread::sleep_for(milliseconds(10));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }

  // The rest of the first line of its output that starts with `prefix`,
  // waiting for it. Throws when it ended or `patience` passed first.
  std::string line_after(const std::string& prefix, milliseconds patience) {
    const auto deadline = SteadyClock::now() + patience;
    for (;;) {
      std::ifstream in(log_);
      for (std::string line; std::getline(in, line);)
        if (line.starts_with(prefix)) return line.substr(prefix.size());
      check_alive(deadline, "printed '" + prefix + "'");
      std::this_thread::sleep_for(milliseconds(5));
    }
  }

  // Throws, with the end of its log, once it has ended or `deadline` passed.
  void check_alive(SteadyClock::time_point deadline, const std::string& what) {
    int status = 0;
    const bool ended = waitpid(pid_, &status, WNOHANG) == pid_;
    reaped_ = reaped_ || ended;
    if (!ended && SteadyClock::now() < deadline) return;
    std::string how = " never ";
    if (ended)
      how = WIFSIGNALED(status)
                ? " was killed by signal " + std::to_string(WTERMSIG(status)) + " before it "
                : " exited with " + std::to_string(WEXITSTATUS(status)) + " before it ";
    throw std::runtime_error(log_.stem().string() + how + what + "; its log ends:\n" + tail());
  }

 private:
  std::string tail() const {
    std::ifstream in(log_);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
  }

  fs::path log_;
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// What /proc says of a process.
struct ProcSample {
  double rss_mib = 0;
  std::size_t threads = 0;
  std::size_t files = 0;  // open file descriptors
};

std::size_t open_files(pid_t pid) {
  std::size_t n = 0;
  std::error_code error;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", error), end;
       !error && it != end; it.increment(error))
    ++n;
  return n;
}

ProcSample sample(pid_t pid) {
  ProcSample s;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string name;
    double value = 0;
    fields >> name >> value;
    if (name == "VmRSS:") s.rss_mib = value / 1024;  // kB
    if (name == "Threads:") s.threads = static_cast<std::size_t>(value);
  }
  s.files = open_files(pid);
  return s;
}

// CPU time of each thread of a process: nanoseconds on a CPU from
// /proc/PID/task/TID/schedstat (exact, unlike the clock ticks of stat); from
// stat, its minor page faults (memory touched for the first time) and the
// clock ticks it ran in the kernel and in user space (their ratio is what
// tells system calls and faults from the thread's own work).
struct ThreadCpu {
  std::string name;  // its comm
  pid_t tid = 0;
  std::uint64_t ns = 0;
  std::uint64_t faults = 0;      // stat field 10
  std::uint64_t user_ticks = 0;  // field 14
  std::uint64_t sys_ticks = 0;   // field 15
  std::uint64_t waits = 0;       // voluntary context switches (status): times it slept
};

std::uint64_t voluntary_switches(const fs::path& status_file) {
  std::ifstream in(status_file);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("voluntary_ctxt_switches:")) return std::stoull(line.substr(24));
  return 0;
}

void read_stat(const fs::path& stat_file, ThreadCpu& t) {
  std::ifstream in(stat_file);
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return;
  std::istringstream fields(stat.substr(close + 2));  // from field 3 on
  std::vector<std::uint64_t> numbers;
  std::string field;
  for (int i = 3; i <= 15 && fields >> field; ++i)
    numbers.push_back(i >= 10 ? std::stoull(field) : 0);
  if (numbers.size() < 13) return;
  t.faults = numbers[10 - 3];
  t.user_ticks = numbers[14 - 3];
  t.sys_ticks = numbers[15 - 3];
}

std::map<pid_t, ThreadCpu> thread_cpu(pid_t pid) {
  std::map<pid_t, ThreadCpu> out;
  std::error_code error;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/task", error), end;
       !error && it != end; it.increment(error)) {
    ThreadCpu t;
    t.tid = static_cast<pid_t>(std::stol(it->path().filename().string()));
    std::ifstream comm(it->path() / "comm");
    std::getline(comm, t.name);
    std::ifstream schedstat(it->path() / "schedstat");
    schedstat >> t.ns;
    read_stat(it->path() / "stat", t);
    t.waits = voluntary_switches(it->path() / "status");
    out[t.tid] = t;
  }
  // cascade-agent names none of its own threads: they carry the process's
  // name, in the order they start: main, the Client's I/O thread, the watch
  // board's thread (the HTTP server's loops, http-loop-N, and ZeroMQ's name
  // themselves).
  const auto main = out.find(pid);
  if (main == out.end()) return out;
  const auto process_name = main->second.name;
  const char* roles[] = {"main", "client-io", "watch-board"};
  std::size_t next = 0;
  for (auto& [tid, t] : out)
    if (t.name == process_name && next < std::size(roles)) t.name = roles[next++];
  return out;
}

std::uint64_t process_cpu_ns(pid_t pid) {
  std::uint64_t sum = 0;
  for (const auto& [tid, t] : thread_cpu(pid))
    sum += t.ns;
  return sum;
}

// The threads that used CPU between two readings, busiest first.
std::vector<ThreadCpu> cpu_between(const std::map<pid_t, ThreadCpu>& before,
                                   const std::map<pid_t, ThreadCpu>& after) {
  std::vector<ThreadCpu> used;
  for (const auto& [tid, t] : after) {
    const auto it = before.find(tid);
    const bool old = it != before.end();
    const ThreadCpu zero;
    const ThreadCpu& from = old ? it->second : zero;
    if (t.ns > from.ns)
      used.push_back({t.name, tid, t.ns - from.ns, t.faults - from.faults,
                      t.user_ticks - from.user_ticks, t.sys_ticks - from.sys_ticks,
                      t.waits - from.waits});
  }
  std::sort(used.begin(), used.end(), [](const auto& a, const auto& b) { return a.ns > b.ns; });
  return used;
}

double own_cpu_seconds() {
  return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

// Raises this process's open-file limit to the hard limit; throws when that
// is too low for `needed` descriptors.
void raise_open_file_limit(std::size_t needed) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) throw std::runtime_error("getrlimit failed");
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < needed)
    throw std::runtime_error("the open-file limit (RLIMIT_NOFILE hard limit " +
                             std::to_string(limit.rlim_max) + ") is below the " +
                             std::to_string(needed) + " descriptors --watchers needs");
}

// ---------------------------------------------------------------- HTTP

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  ~CurlGlobal() { curl_global_cleanup(); }
  CurlGlobal(const CurlGlobal&) = delete;
  CurlGlobal& operator=(const CurlGlobal&) = delete;
};

struct HttpReply {
  long status = 0;  // 0: no response
  std::string body;
  std::uint64_t index = 0;  // X-Cascade-Index
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* reply) {
  static_cast<HttpReply*>(reply)->body.append(data, size * count);
  return size * count;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* reply) {
  constexpr std::string_view kIndex = "x-cascade-index:";
  const std::string_view line(data, size * count);
  if (line.size() > kIndex.size() && strncasecmp(data, kIndex.data(), kIndex.size()) == 0) {
    auto value = line.substr(kIndex.size());
    value.remove_prefix(std::min(value.find_first_not_of(' '), value.size()));
    std::from_chars(value.data(), value.data() + value.size(),
                    static_cast<HttpReply*>(reply)->index);
  }
  return size * count;
}

// An easy handle for `url` that writes into `reply` (and reuses its connection).
CURL* easy_for(const std::string& url, HttpReply& reply) {
  CURL* easy = curl_easy_init();
  if (easy == nullptr) throw std::runtime_error("curl_easy_init failed");
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 10'000L);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &reply);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &reply);
  return easy;
}

// One request, waiting for its answer.
HttpReply http(const std::string& method, const std::string& url, const std::string& body = "") {
  HttpReply reply;
  CURL* easy = easy_for(url, reply);
  curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_slist* headers = nullptr;
  if (!body.empty()) {
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  }
  if (curl_easy_perform(easy) == CURLE_OK)
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &reply.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(easy);
  return reply;
}

// ---------------------------------------------------------------- the deployment

// A hub and two agents on 127.0.0.1: `watching` is measured, `registering`
// takes the registrations (so the change reaches the watching agent through
// the hub, as a change made elsewhere does).
class Deployment {
 public:
  Deployment(const Options& o, const fs::path& dir) {
    fs::create_directories(dir / "hub");
    hub_ = std::make_unique<Child>(
        std::vector<std::string>{o.hub_binary, "--id", "http-bench-hub", "--listen",
                                 "tcp://127.0.0.1:*", "--data", (dir / "hub").string(),
                                 "--probe-held", "off",  // made-up addresses: never dialled
                                 "--log-level", "warn"},
        dir / "hub.log");
    const auto endpoint = hub_endpoint(dir / "hub" / "hub.endpoint");
    std::vector<std::string> extra;
    if (o.http_threads != 0) extra = {"--http-threads", std::to_string(o.http_threads)};
    if (o.watchers + 256 > 16384) {  // the agent's default --http-max-connections
      extra.emplace_back("--http-max-connections");
      extra.push_back(std::to_string(o.watchers + 256));
    }
    watching_ = start_agent(o, dir, endpoint, "watching-agent", extra, watching_port_);
    registering_ = start_agent(o, dir, endpoint, "registering-agent", {}, registering_port_);
  }
  // The agents first, the hub last.
  ~Deployment() {
    watching_.reset();
    registering_.reset();
    hub_.reset();
  }
  Deployment(const Deployment&) = delete;
  Deployment& operator=(const Deployment&) = delete;

  pid_t watching_pid() const { return watching_->pid(); }
  // Throws, with the end of its log, when the watching agent has ended or `deadline` passed.
  void check_watching(SteadyClock::time_point deadline, const std::string& what) {
    watching_->check_alive(deadline, what);
  }
  std::uint16_t watching_port() const { return watching_port_; }
  std::string watching_url(const std::string& path) const { return url(watching_port_, path); }
  std::string registering_url(const std::string& path) const {
    return url(registering_port_, path);
  }

  // Registers one instance of the service through the registering agent.
  void register_instance(const std::string& address) {
    const auto body =
        std::string("{\"service\":\"") + kService + "\",\"address\":\"" + address + "\"}";
    const auto reply = http("PUT", registering_url("/api/v1/instances"), body);
    if (reply.status != 200)
      throw std::runtime_error("PUT /api/v1/instances " + body + " answered " +
                               std::to_string(reply.status) + ": " + reply.body);
  }

  // Resolves on the watching agent until it has `instances` instances;
  // returns that answer (throws after the patience).
  HttpReply resolved_with(std::size_t instances) {
    const auto deadline = SteadyClock::now() + kPatience;
    for (;;) {
      auto reply = http("GET", watching_url(std::string("/api/v1/services/") + kService));
      if (reply.status == 200 &&
          nlohmann::json::parse(reply.body).at("instances").size() == instances)
        return reply;
      watching_->check_alive(deadline, "resolved " + std::to_string(instances) +
                                           " instances (last answer " +
                                           std::to_string(reply.status) + ": " + reply.body + ")");
      std::this_thread::sleep_for(milliseconds(20));
    }
  }

 private:
  static std::string url(std::uint16_t port, const std::string& path) {
    return "http://127.0.0.1:" + std::to_string(port) + path;
  }

  std::string hub_endpoint(const fs::path& file) {
    const auto deadline = SteadyClock::now() + kPatience;
    for (;;) {
      std::ifstream in(file);
      std::string line;
      if (std::getline(in, line) && line.starts_with("tcp://")) return line;
      hub_->check_alive(deadline, "wrote " + file.string());
      std::this_thread::sleep_for(milliseconds(5));
    }
  }

  static std::unique_ptr<Child> start_agent(const Options& o, const fs::path& dir,
                                            const std::string& hub, const std::string& name,
                                            const std::vector<std::string>& extra,
                                            std::uint16_t& port) {
    std::vector<std::string> args{o.agent_binary, "--hub",       hub,           "--id", name,
                                  "--http",       "127.0.0.1:0", "--log-level", "warn"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto agent = std::make_unique<Child>(args, dir / (name + ".log"));
    const auto address = agent->line_after("http listening on 127.0.0.1:", kPatience);
    port = static_cast<std::uint16_t>(std::stoul(address));
    return agent;
  }

  std::unique_ptr<Child> hub_;
  std::unique_ptr<Child> watching_;
  std::unique_ptr<Child> registering_;
  std::uint16_t watching_port_ = 0;
  std::uint16_t registering_port_ = 0;
};

// ---------------------------------------------------------------- [1] resolve

struct ResolveFigures {
  std::size_t clients = 0;
  std::size_t requests = 0;  // measured: started and answered within the window
  std::size_t failed = 0;    // not 200 with the expected version
  double seconds = 0;
  Percentiles us;
  double agent_cpu = 0;  // the agent's CPU seconds per wall second
  double bench_cpu = 0;  // this process's
};

// `clients` keep-alive connections on one curl multi handle, each sending
// the next GET as soon as its answer is in, for `seconds` after a warm-up.
ResolveFigures measure_resolve(const std::string& url, std::uint64_t version, std::size_t clients,
                               double seconds, pid_t agent) {
  struct Client {
    HttpReply reply;
    CURL* easy = nullptr;
    SteadyClock::time_point start{};
  };
  std::vector<Client> cs(clients);  // never resized: the handles point into it
  CURLM* multi = curl_multi_init();
  auto begin = [&](Client& c) {
    c.reply = {};
    c.start = SteadyClock::now();
    curl_multi_add_handle(multi, c.easy);
  };
  for (auto& c : cs) {
    c.easy = easy_for(url, c.reply);
    curl_easy_setopt(c.easy, CURLOPT_PRIVATE, &c);
    begin(c);
  }
  ResolveFigures f;
  f.clients = clients;
  std::vector<double> us;
  const auto window =
      std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
  const auto from = SteadyClock::now() + window / 5;  // warm-up
  const auto until = from + window;
  std::uint64_t agent_cpu_from = 0;
  double own_cpu_from = 0;
  bool measuring = false;
  for (;;) {
    int running = 0;
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi, &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      const auto now = SteadyClock::now();
      Client* c = nullptr;
      curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &c);
      long status = 0;
      if (message->data.result == CURLE_OK)
        curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
      curl_multi_remove_handle(multi, c->easy);
      if (c->start >= from && now <= until) {
        us.push_back(std::chrono::duration<double, std::micro>(now - c->start).count());
        if (status != 200 || c->reply.index != version) ++f.failed;
      }
      if (now < until) begin(*c);
    }
    const auto now = SteadyClock::now();
    if (!measuring && now >= from) {
      measuring = true;
      agent_cpu_from = process_cpu_ns(agent);
      own_cpu_from = own_cpu_seconds();
    }
    if (now >= until) break;
    curl_multi_poll(multi, nullptr, 0, 10, nullptr);
  }
  f.seconds = seconds_since(from);
  f.agent_cpu = static_cast<double>(process_cpu_ns(agent) - agent_cpu_from) / 1e9 / f.seconds;
  f.bench_cpu = (own_cpu_seconds() - own_cpu_from) / f.seconds;
  for (auto& c : cs) {
    curl_multi_remove_handle(multi, c.easy);  // those still in flight
    curl_easy_cleanup(c.easy);
  }
  curl_multi_cleanup(multi);
  f.requests = us.size();
  f.us = percentiles(us);
  return f;
}

void print_resolve_header() {
  std::printf(
      "clients  requests     req/s  p50_us  p99_us  max_us  agent_cpu  agent_us/req  "
      "bench_cpu  failed\n");
}

void print_resolve(const ResolveFigures& f) {
  const double rate = static_cast<double>(f.requests) / f.seconds;
  std::printf("%7zu  %8zu  %8s  %6.0f  %6.0f  %6.0f  %8.0f%%  %12.1f  %8.0f%%  %6zu\n", f.clients,
              f.requests, si(rate).c_str(), f.us.p50, f.us.p99, f.us.max, f.agent_cpu * 100,
              rate > 0 ? f.agent_cpu / rate * 1e6 : 0.0, f.bench_cpu * 100, f.failed);
}

// ---------------------------------------------------------------- [2] watchers

struct RoundFigures {
  std::size_t round = 0;
  std::uint64_t from_version = 0;
  std::uint64_t to_version = 0;  // of the first answer
  double open_seconds = 0;       // every request written and accepted
  ProcSample parked;
  std::size_t answered = 0;  // any response
  std::size_t ok = 0;        // 200, the new version, the new instance in it
  double put_ms = 0;         // the PUT's own round trip
  std::vector<double> after_put_ms;
  std::vector<double> after_first_ms;
  double agent_cpu_ms = 0;  // from before the PUT to the last answer
  double bench_cpu_ms = 0;
  std::vector<ThreadCpu> threads;
};

std::string address_of_round(std::size_t round) {
  return "10.9.9." + std::to_string(9 + round) + ":80";
}

// One round: W watches of version `version` parked, then one more instance
// registered; every watcher's answer timed.
RoundFigures watch_round(const Options& o, Deployment& d, WatchFleet& fleet, std::size_t round,
                         std::uint64_t version, std::size_t base_files,
                         std::optional<ResolveFigures>* resolve_while_parked) {
  RoundFigures r;
  r.round = round;
  r.from_version = version;
  const auto request = std::string("GET /api/v1/services/") + kService +
                       "?index=" + std::to_string(version) + "&wait=" + kWatchWait +
                       " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(d.watching_port()) +
                       "\r\n\r\n";
  const auto agent = d.watching_pid();
  // Waits until the agent holds a connection for each request written.
  auto accepted = [&](std::size_t written) {
    const auto deadline = SteadyClock::now() + kPatience;
    for (std::size_t files = 0; (files = open_files(agent)) < base_files + written;) {
      d.check_watching(deadline, "accepted " + std::to_string(written) +
                                     " watch connections (it holds " +
                                     std::to_string(files - std::min(files, base_files)) + ")");
      std::this_thread::sleep_for(milliseconds(1));
    }
  };
  const auto open_start = SteadyClock::now();
  fleet.send_all(request, o.connect_batch, accepted, kPatience);
  r.open_seconds = seconds_since(open_start);
  std::this_thread::sleep_for(o.settle);
  if (const auto early = fleet.readable_now(); early != 0)
    throw std::runtime_error(std::to_string(early) +
                             " watchers were answered (or closed) before the change");
  r.parked = sample(agent);
  if (resolve_while_parked != nullptr)
    *resolve_while_parked = measure_resolve(
        d.watching_url(std::string("/api/v1/services/") + kService), version, 1, 1.0, agent);

  const auto cpu_before = thread_cpu(agent);
  const double own_before = own_cpu_seconds();
  const auto put_at = SteadyClock::now();
  d.register_instance(address_of_round(round));
  r.put_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - put_at).count();
  const auto answers = fleet.collect("\"" + address_of_round(round) + "\"", kWakePatience);
  r.bench_cpu_ms = (own_cpu_seconds() - own_before) * 1000;
  r.threads = cpu_between(cpu_before, thread_cpu(agent));
  for (const auto& t : r.threads)
    r.agent_cpu_ms += static_cast<double>(t.ns) / 1e6;

  auto first = SteadyClock::time_point::max();
  for (const auto& a : answers)
    if (a.status != 0) first = std::min(first, a.at);
  for (const auto& a : answers) {
    if (a.status == 0) continue;
    ++r.answered;
    if (r.to_version == 0) r.to_version = a.index;
    if (a.status == 200 && a.index > version && a.index == r.to_version && a.has_marker) ++r.ok;
    r.after_put_ms.push_back(std::chrono::duration<double, std::milli>(a.at - put_at).count());
    r.after_first_ms.push_back(std::chrono::duration<double, std::milli>(a.at - first).count());
  }
  return r;
}

void print_parked_header() {
  std::printf("round        version  open_s  VmRSS_MiB  KiB/watch  threads  open_files\n");
}

void print_parked(const RoundFigures& r, const ProcSample& before, std::size_t watchers) {
  const auto version = std::to_string(r.from_version);
  std::printf("%5zu  %13s  %6.2f  %9.1f  %9.2f  %7zu  %10zu\n", r.round, version.c_str(),
              r.open_seconds, r.parked.rss_mib,
              (r.parked.rss_mib - before.rss_mib) * 1024 / static_cast<double>(watchers),
              r.parked.threads, r.parked.files);
}

void print_wake_header() {
  std::printf(
      "round  change  put_ms  put->first  put->p50  put->last  first->p50  first->p99  "
      "first->last  answered  200+new  agent_cpu_ms  bench_cpu_ms\n");
}

void print_wake(RoundFigures& r) {
  const auto change = "+" + std::to_string(r.to_version - r.from_version);
  const auto put = percentiles(r.after_put_ms);  // sorts them
  const auto first = percentiles(r.after_first_ms);
  const double put_first = r.after_put_ms.empty() ? 0 : r.after_put_ms.front();
  std::printf(
      "%5zu  %6s  %6.1f  %10.1f  %8.1f  %9.1f  %10.1f  %10.1f  %11.1f  %8zu  %7zu  %12.1f  "
      "%12.1f\n",
      r.round, change.c_str(), r.put_ms, put_first, put.p50, put.max, first.p50, first.p99,
      first.max, r.answered, r.ok, r.agent_cpu_ms, r.bench_cpu_ms);
}

void print_threads(const RoundFigures& r) {
  std::printf("  round %zu, the agent's threads from the PUT to the last answer:", r.round);
  for (const auto& t : r.threads)
    if (t.ns >= 100'000)
      std::printf(
          " %s/%d %.1f ms (%.0f%% sys, %llu page faults, %llu waits);", t.name.c_str(), t.tid,
          static_cast<double>(t.ns) / 1e6,
          t.user_ticks + t.sys_ticks == 0 ? 0.0
                                          : 100.0 * static_cast<double>(t.sys_ticks) /
                                                static_cast<double>(t.user_ticks + t.sys_ticks),
          static_cast<unsigned long long>(t.faults), static_cast<unsigned long long>(t.waits));
  std::printf("\n");
}

// ---------------------------------------------------------------- run

int run(const Options& o) {
  for (const auto& binary : {o.hub_binary, o.agent_binary})
    if (binary.empty() || !fs::exists(binary))
      throw std::runtime_error("no binary at '" + binary + "' (--hub-binary, --agent-binary)");
  raise_open_file_limit(o.watchers + 64);
  CurlGlobal curl;
  TempDir dir("cascade-http-api-bench");
  const auto started = SteadyClock::now();
  const auto threads_text = o.http_threads == 0 ? std::string("not given (the agent's default)")
                                                : std::to_string(o.http_threads);
  std::printf(
      "cascade_http_api_bench: %u cores (%s), agent --http-threads %s, '%s' with %zu "
      "instances, %zu watchers, %zu round(s), resolve %.1f s per client count\n",
      std::thread::hardware_concurrency(), cpu_model().c_str(), threads_text.c_str(), kService,
      o.instances, o.watchers, o.rounds, o.seconds);
  std::printf("load average at start: %s (other work on the machine skews every figure)\n",
              load_average().c_str());
  std::fflush(stdout);

  Deployment d(o, dir.path());
  for (std::size_t i = 0; i < o.instances; ++i)
    d.register_instance(address(i + 1, 80));
  const auto cached = d.resolved_with(o.instances);
  const auto agent = d.watching_pid();
  std::printf("hub %s; watching agent %s (pid %d) on 127.0.0.1:%u\n", o.hub_binary.c_str(),
              o.agent_binary.c_str(), agent, d.watching_port());

  int failed_checks = 0;
  Verdicts verdicts;
  std::printf(
      "\n[1] resolve: GET /api/v1/services/%s (version %llu, %zu instances, %zu-byte "
      "body), keep-alive connections on one curl multi thread, %.1f s after %.1f s "
      "warm-up\n",
      kService, static_cast<unsigned long long>(cached.index), o.instances, cached.body.size(),
      o.seconds, o.seconds / 5);
  print_resolve_header();
  std::vector<ResolveFigures> resolves;
  const auto url = d.watching_url(std::string("/api/v1/services/") + kService);
  for (const auto clients : o.clients) {
    resolves.push_back(measure_resolve(url, cached.index, clients, o.seconds, agent));
    print_resolve(resolves.back());
    std::fflush(stdout);
    if (resolves.back().failed != 0) ++failed_checks;
  }

  std::printf(
      "\n[2] %zu watchers: GET /api/v1/services/%s?index=V&wait=%s on raw keep-alive "
      "sockets (one epoll thread), %lld ms settle, then PUT /api/v1/instances on the "
      "other agent\n",
      o.watchers, kService, kWatchWait, static_cast<long long>(o.settle.count()));
  std::this_thread::sleep_for(milliseconds(200));  // the resolve connections are closed
  const auto before = sample(agent);
  std::printf("agent before the watchers: VmRSS %.1f MiB, %zu threads, %zu open files\n",
              before.rss_mib, before.threads, before.files);
  print_parked_header();
  WatchFleet fleet(d.watching_port(), o.watchers);
  std::vector<RoundFigures> rounds;
  std::optional<ResolveFigures> parked_resolve;
  auto version = cached.index;
  for (std::size_t round = 0; round < o.rounds; ++round) {
    rounds.push_back(watch_round(o, d, fleet, round, version, before.files,
                                 round == 0 ? &parked_resolve : nullptr));
    print_parked(rounds.back(), before, o.watchers);
    std::fflush(stdout);
    version = rounds.back().to_version;
    if (rounds.back().ok != o.watchers) {
      ++failed_checks;
      break;
    }
  }
  if (parked_resolve) {
    const auto& p = *parked_resolve;
    std::printf(
        "resolve with %zu watches parked, 1 client: p50 %.0f us, p99 %.0f us, max %.0f "
        "us, %s req/s\n",
        o.watchers, p.us.p50, p.us.p99, p.us.max,
        si(static_cast<double>(p.requests) / p.seconds).c_str());
  }
  std::printf(
      "wake-up: ms from the PUT's start and from the first watcher's return (about when "
      "the change reached the agent)\n");
  print_wake_header();
  for (auto& r : rounds)
    print_wake(r);
  for (const auto& r : rounds)
    print_threads(r);
  const auto after = sample(agent);
  std::printf(
      "agent after the rounds (watchers idle on keep-alive): VmRSS %.1f MiB, %zu "
      "threads, %zu open files\n",
      after.rss_mib, after.threads, after.files);

  std::printf("\ntargets (issue 13):\n");
  for (const auto& f : resolves) {
    char line[160];
    std::snprintf(line, sizeof line, "resolve with %zu client(s): p99 %.0f us (target <= %.0f us)",
                  f.clients, f.us.p99, kResolveTargetUs);
    verdicts.line(f.us.p99 <= kResolveTargetUs, line);
  }
  for (auto& r : rounds) {
    auto first = percentiles(r.after_first_ms);
    char line[200];
    std::snprintf(line, sizeof line,
                  "round %zu: %zu of %zu watchers answered 200 with the new version, the last "
                  "%.1f ms after the first (target: all, <= %.0f ms)",
                  r.round, r.ok, o.watchers, first.max, kWakeTargetMs);
    verdicts.line(r.ok == o.watchers && first.max <= kWakeTargetMs, line);
  }
  std::printf("%d target(s) missed; %s; total run %.0f s; load average at end: %s\n",
              verdicts.misses,
              failed_checks == 0 ? "every answer checked" : "SOME CHECKS FAILED (see above)",
              seconds_since(started), load_average().c_str());
  return failed_checks == 0 ? 0 : 1;
}

}  // namespace
}  // namespace cascade::bench

int main(int argc, char** argv) {
  return cascade::bench::bench_main<cascade::bench::Options>(
      argc, argv, "cascade_http_api_bench", "http-api-bench", cascade::bench::parse,
      cascade::bench::run);
}
