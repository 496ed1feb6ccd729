// Helpers shared by the `tilec` subcommands: global options, reading sources,
// NAME=VALUE arguments, logging, and the registry of subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "support/error.h"
#include "support/source.h"
#include "tile_lang/types.h"

namespace tilec::tools {

// Options of the top-level `tilec` command, visible to every subcommand.
struct GlobalOptions {
  int verbose = 0;  // -v count: 1 stages and timings; higher levels reserved
};

// A subcommand: its CLI11 app and what to do when the command line selects it.
struct Command {
  CLI::App* app = nullptr;
  std::function<void()> run;
};

// The exit codes, for every --help footer and the docs.
inline constexpr std::string_view kExitCodesHelp =
    "Exit codes:\n"
    "  0  success\n"
    "  1  user error (bad Tile source, shapes, .npy files or arguments' contents)\n"
    "  2  usage error (unknown option or subcommand, missing or malformed argument)\n"
    "  3  internal error (a bug in tilec; please report it)\n"
    "  4  device error (the device or its driver failed)";

Command AddCheckCommand(CLI::App& parent, const GlobalOptions& global);
Command AddRunCommand(CLI::App& parent, const GlobalOptions& global);
Command AddCompileCommand(CLI::App& parent, const GlobalOptions& global);
Command AddExplainCommand(CLI::App& parent, const GlobalOptions& global);
Command AddDevicesCommand(CLI::App& parent, const GlobalOptions& global);

// Reads a Tile source file. UserError with the path and the system's reason
// if it cannot be read.
SourceFilePtr ReadSourceFile(const std::string& path);

struct NameValue {
  std::string name;
  std::string value;
};

// CLI11 check for `NAME=VALUE` arguments (NAME and VALUE non-empty); a
// malformed one is a usage error naming it.
CLI::Validator NameValueValidator();
// Like NameValueValidator, and VALUE must parse as a shape (`f32[2, 3]`).
CLI::Validator NameShapeValidator();

// Splits validated NAME=VALUE arguments into a map; a NAME given twice is a
// usage error (CLI::ValidationError) naming `option`.
std::map<std::string, std::string> SplitNameValues(const std::vector<std::string>& args,
                                                   const std::string& option);

// `-s NAME=SHAPE` arguments as shapes by name.
std::map<std::string, lang::Shape> ParseShapeArgs(const std::vector<std::string>& args,
                                                  const std::string& option);

// "A, B, C" (or "none").
std::string JoinNames(const std::vector<std::string>& names);

// Runs `f`, logging its wall time as stage `stage` at verbosity 1.
template <typename F>
auto Timed(const GlobalOptions& global, std::string_view stage, F&& f) {
  auto start = std::chrono::steady_clock::now();
  auto log = [&] {
    if (global.verbose < 1) return;
    std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
    fmt::print(stderr, "tilec: {}: {:.2f} ms\n", stage, ms.count());
  };
  if constexpr (std::is_void_v<decltype(f())>) {
    f();
    log();
  } else {
    auto result = f();
    log();
    return result;
  }
}

// A UserError with a note appended after its rendering, e.g. where the
// shapes a binding error is about came from.
class UserErrorWithNote : public UserError {
 public:
  UserErrorWithNote(const UserError& error, std::string note) : UserError(error), note_(std::move(note)) {}
  std::string Render() const override { return UserError::Render() + "\nnote: " + note_; }

 private:
  std::string note_;
};

}  // namespace tilec::tools
