#pragma once
// CLI11 conventions shared by cascade-hub and cascade-agent: the same --config
// handling (TOML, keys as the long flag names, unknown keys are errors), the
// same exit codes (0 for --help, 2 for usage errors). Include only from an
// option parser's .cpp: CLI11's header costs seconds per translation unit.

#include <CLI/CLI.hpp>
#include <optional>
#include <string_view>

#include "cascade/common/options.hpp"

namespace cascade {

inline void add_config_file_option(CLI::App& app, std::string_view example_key) {
  app.set_config("--config", "",
                 "Read options from this TOML file (keys as the long flags, e.g. " +
                     std::string(example_key) + ")");
  app.allow_config_extras(CLI::config_extras_mode::error);
}

// Parses; returns the outcome to exit with for --help or a parse error, and
// nullopt when the caller should go on to validate the values.
template <typename Config>
std::optional<ParsedOptions<Config>> parse_or_exit(CLI::App& app, int argc, const char* const* argv,
                                                   std::string_view program) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return ParsedOptions<Config>{std::nullopt, 0, app.help()};
  } catch (const CLI::ParseError& e) {
    return ParsedOptions<Config>::usage_error(
        program, std::string(e.what()) + "\nRun with --help for usage.");
  }
  return std::nullopt;
}

}  // namespace cascade
