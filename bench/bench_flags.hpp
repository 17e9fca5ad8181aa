#pragma once
// Command-line flags of the benchmark programs: each program lists its flags
// ("--name value", or "--switch") in a table of what they set, and the
// arguments are applied in order, with the same messages in every program. A bad value or
// an unknown flag throws std::invalid_argument (bench_main: exit code 2);
// --help or -h prints the program's usage and exits 0. Header-only.

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "cascade/common/clock.hpp"

namespace cascade::bench {

// A decimal integer, positive unless `zero_ok`.
inline std::size_t parse_count(const std::string& flag, const std::string& text,
                               bool zero_ok = false) {
  std::size_t v = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || (v == 0 && !zero_ok))
    throw std::invalid_argument(flag + " needs a " + (zero_ok ? "non-negative" : "positive") +
                                " integer, got '" + text + "'");
  return v;
}

// A decimal number, positive unless `zero_ok`.
inline double parse_number(const std::string& flag, const std::string& text, bool zero_ok = false) {
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(zero_ok ? v >= 0 : v > 0))
    throw std::invalid_argument(flag + " needs a " + (zero_ok ? "non-negative" : "positive") +
                                " number, got '" + text + "'");
  return v;
}

// Milliseconds, a count.
inline Duration ms_flag(const std::string& flag, const std::string& text, bool zero_ok = false) {
  return Duration{static_cast<Duration::rep>(parse_count(flag, text, zero_ok))};
}

// Seconds, a number (fractions kept to the millisecond).
inline Duration seconds_flag(const std::string& flag, const std::string& text,
                             bool zero_ok = false) {
  return Duration{static_cast<Duration::rep>(parse_number(flag, text, zero_ok) * 1000)};
}

// In a flag table: zero is allowed too (counts and numbers are positive otherwise).
inline constexpr bool kZeroOk = true;

// The flags of one program. Declare each, then apply() the arguments.
class Flags {
 public:
  // Told the flag's name and, for a flag that takes one, its value.
  using Setter = std::function<void(const std::string& flag, const std::string& value)>;

  // A table row: a flag that stores its value in a count (std::size_t), a
  // number (double), or a Duration in the unit its name ends with ("-ms" or
  // "-s"); or a "--no-..." switch that sets a bool to false.
  struct Flag {
    using Target = std::variant<std::size_t*, double*, Duration*, bool*>;
    Flag(std::string flag_name, Target flag_target, bool flag_zero_ok = false)
        : name(std::move(flag_name)), target(flag_target), zero_ok(flag_zero_ok) {}
    std::string name;
    Target target;
    bool zero_ok;
  };

  Flags(int argc, char** argv, const char* usage) : args_(argv + 1, argv + argc), usage_(usage) {}

  // Declares the flags of a table (a "--no-..." switch takes no value).
  void add(std::initializer_list<Flag> table) {
    for (const Flag& flag : table)
      std::visit([&](auto* out) { store(flag.name, out, flag.zero_ok); }, flag.target);
  }
  // A flag with a value, and one without, that do more than store it.
  void on_value(const std::string& flag, Setter set) { handlers_[flag] = {true, std::move(set)}; }
  void on(const std::string& flag, std::function<void()> act) {
    handlers_[flag] = {false,
                       [act = std::move(act)](const std::string&, const std::string&) { act(); }};
  }
  // A switch that acts at once when given, before every other flag wherever
  // it stands (as --quick: the others can then override what it sets).
  void first(const std::string& flag, const std::function<void()>& act) {
    if (std::find(args_.begin(), args_.end(), flag) != args_.end()) act();
    on(flag, [] {});
  }

  // Applies the arguments in order.
  void apply() const {
    for (std::size_t i = 0; i < args_.size(); ++i) {
      const std::string& a = args_[i];
      if (a == "--help" || a == "-h") {
        std::fputs(usage_, stdout);
        std::exit(0);
      }
      const auto it = handlers_.find(a);
      if (it == handlers_.end())
        throw std::invalid_argument("unknown option '" + a + "' (see --help)");
      const Handler& handler = it->second;
      if (!handler.takes_value) {
        handler.set(a, "");
        continue;
      }
      if (i + 1 >= args_.size()) throw std::invalid_argument(a + " needs a value");
      handler.set(a, args_[++i]);
    }
  }

 private:
  struct Handler {
    bool takes_value = false;
    Setter set;
  };

  void store(const std::string& flag, std::size_t* out, bool zero_ok) {
    on_value(flag, [out, zero_ok](const std::string& f, const std::string& v) {
      *out = parse_count(f, v, zero_ok);
    });
  }
  void store(const std::string& flag, double* out, bool zero_ok) {
    on_value(flag, [out, zero_ok](const std::string& f, const std::string& v) {
      *out = parse_number(f, v, zero_ok);
    });
  }
  void store(const std::string& flag, Duration* out, bool zero_ok) {
    const bool ms = flag.ends_with("-ms");
    if (!ms && !flag.ends_with("-s"))
      throw std::logic_error(flag + ": a duration's flag names its unit, -ms or -s");
    on_value(flag, [out, zero_ok, ms](const std::string& f, const std::string& v) {
      *out = ms ? ms_flag(f, v, zero_ok) : seconds_flag(f, v, zero_ok);
    });
  }
  void store(const std::string& flag, bool* out, bool /*zero_ok*/) {
    if (!flag.starts_with("--no-"))
      throw std::logic_error(flag + ": a switch that turns something off is named --no-...");
    on(flag, [out] { *out = false; });
  }

  std::vector<std::string> args_;
  const char* usage_;
  std::map<std::string, Handler> handlers_;
};

// The options a program starts from (Options{}), after the flags that
// declare(flags, options) lists were applied to the arguments.
template <typename Options, typename Declare>
Options parse_flags(int argc, char** argv, const char* usage, Declare declare) {
  Options options;
  Flags flags(argc, argv, usage);
  declare(flags, options);
  flags.apply();
  return options;
}

}  // namespace cascade::bench
