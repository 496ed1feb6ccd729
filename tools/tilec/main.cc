// The `tilec` command line: parses arguments with CLI11, runs the chosen
// subcommand, and turns every error into a message on stderr and an exit code
// (see kExitCodesHelp).
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <new>

#include "tools/tilec/common.h"

#ifndef TILEC_VERSION
#define TILEC_VERSION "unknown"
#endif

namespace tilec::tools {
namespace {

// Columns for error source lines: the terminal's width when stderr is one.
int ErrorWidth() {
  winsize ws{};
  if (isatty(STDERR_FILENO) && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  return UserError::kDefaultWidth;
}

enum ExitCode { kOk = 0, kUserError = 1, kUsageError = 2, kInternalError = 3, kDeviceError = 4 };

int Main(int argc, char** argv) {
  CLI::App app("tilec: compile and run Tile tensor programs", "tilec");
  app.set_version_flag("--version", "tilec " TILEC_VERSION);
  app.footer(std::string(kExitCodesHelp));
  app.require_subcommand(1);
  // Let global options such as -v follow the subcommand too.
  app.fallthrough();
  GlobalOptions global;
  app.add_flag("-v,--verbose", global.verbose, "More output on stderr (repeat for more)");
  app.add_flag("-q,--quiet", global.quiet,
               "No progress line (one shows on a terminal for a compile or run longer than 1 s)");
  app.add_option("--progress-delay", global.progress_delay, "Seconds before the progress line shows (tests)")
      ->group("")
      ->check(CLI::NonNegativeNumber);

  std::vector<Command> commands = {AddCheckCommand(app, global), AddRunCommand(app, global),
                                   AddCompileCommand(app, global), AddExplainCommand(app, global),
                                   AddDevicesCommand(app, global), AddBenchCommand(app, global),
                                   AddLayoutCommand(app, global), AddCacheCommand(app, global),
                                   AddTuneCommand(app, global), AddOptCommand(app, global),
                                   AddImportCommand(app, global), AddGradCommand(app, global)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 reports `tilec frob` as a missing subcommand; name the word instead.
    if (e.get_exit_code() != 0 && app.get_subcommands().empty() && !app.remaining().empty()) {
      std::vector<std::string> names;
      for (const Command& c : commands) names.push_back(c.app->get_name());
      fmt::print(stderr, "unknown subcommand '{}' (available: {})\nRun with --help for more information.\n",
                 app.remaining().front(), JoinNames(names));
      return kUsageError;
    }
    // --help and --version arrive here too, with exit code 0.
    return app.exit(e) == 0 ? kOk : kUsageError;
  }

  try {
    for (const Command& c : commands)
      if (c.app->parsed()) c.run();
    std::fflush(stdout);
    return kOk;
  } catch (const CLI::Error& e) {
    // Usage errors found after parsing (e.g. an input given twice).
    fmt::print(stderr, "{}\nRun with --help for more information.\n", e.what());
    return kUsageError;
  } catch (const UserError& e) {
    fmt::print(stderr, "{}\n", e.Render(ErrorWidth()));
    return kUserError;
  } catch (const DeviceError& e) {
    fmt::print(stderr, "{}\n", e.Render());
    return kDeviceError;
  } catch (const InternalError& e) {
    fmt::print(stderr, "{}\n", e.Render());
    return kInternalError;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "error: out of memory\n");
    return kUserError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", InternalError(e.what()).Render());
    return kInternalError;
  }
}

}  // namespace
}  // namespace tilec::tools

int main(int argc, char** argv) {
  try {
    return tilec::tools::Main(argc, argv);
  } catch (...) {
    // Nothing may escape as a crash, not even from setting up the parser.
    std::fputs("internal error: unexpected exception\n", stderr);
    return 3;
  }
}
