// Helpers shared by the `tilec` subcommands: global options, reading sources,
// NAME=VALUE arguments (shapes with layouts, tiles), binding with layouts,
// logging, and the registry of subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/pipeline.h"
#include "support/error.h"
#include "support/source.h"
#include "tile_lang/ast.h"
#include "tile_lang/program.h"
#include "tile_lang/types.h"

namespace tilec::tools {

// Options of the top-level `tilec` command, visible to every subcommand.
struct GlobalOptions {
  int verbose = 0;     // -v count: 1 stages and timings; higher levels reserved
  bool quiet = false;  // -q: no progress line
  // Seconds of work before the progress line shows (hidden --progress-delay,
  // for tests that drive a pseudo-terminal without depending on timing).
  double progress_delay = 1.0;
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
Command AddBenchCommand(CLI::App& parent, const GlobalOptions& global);
Command AddLayoutCommand(CLI::App& parent, const GlobalOptions& global);
Command AddCacheCommand(CLI::App& parent, const GlobalOptions& global);
Command AddTuneCommand(CLI::App& parent, const GlobalOptions& global);
Command AddImportCommand(CLI::App& parent, const GlobalOptions& global);
Command AddOptCommand(CLI::App& parent, const GlobalOptions& global);
Command AddGradCommand(CLI::App& parent, const GlobalOptions& global);

// --- One vocabulary ------------------------------------------------------------------------
//
// Every subcommand registers the options it shares with others through these
// helpers, so one thing has one spelling, one help text and one default.

// The device every subcommand uses unless --target says otherwise: the host
// CPU through LLVM.
inline constexpr std::string_view kDefaultTarget = "llvm";

// Adds `--target NAME` (default kDefaultTarget; `what` says what the device is
// used for) and its hidden alias `--device`, kept for one release, and
// `--cpu NAME`, the CPU kernels are planned and compiled for (TargetCpu()).
// `with_ref`: the reference evaluator 'ref' is a valid target too.
CLI::Option* AddTargetOption(CLI::App* app, std::string& target, std::string_view what, bool with_ref);

// The value of `--cpu` (one subcommand runs per process): an LLVM CPU name,
// or empty for TILEC_CPU or the host.
std::string& TargetCpu();

// Options that steer the kernels' compilation, shared by run, bench, compile and explain.
struct KernelOptions {
  std::vector<std::string> tiles;  // --tile KERNEL=T0,T1,…
  std::vector<std::string> ranks;  // --rank KERNEL=K
  int vector = 1;                  // --vector 0: no vector form
  int64_t vector_rows = 0;         // --vector-rows: 0 automatic
  std::vector<std::string> work_groups;  // --work-group KERNEL=T0,T1,…
  bool no_tuning_cache = false;    // --no-tuning-cache
  bool no_relayout = false;        // --no-relayout: no layout choice (`any` is row-major)
  bool empty() const { return tiles.empty() && ranks.empty() && work_groups.empty(); }
};
// Adds --tile, --rank, --vector, --vector-rows, --work-group, --no-tuning-cache and --no-relayout.
void AddKernelOptions(CLI::App* app, KernelOptions& o);
// Sets the compile options the kernel options stand for (UserError for a bad --tile or --rank value).
void ApplyKernelOptions(const KernelOptions& o, compiler::CompileOptions& c);
// Every kernel named by --tile, --rank or --work-group must exist (UserError
// otherwise); the settings the compile did not use are printed as warnings.
void CheckKernelSettings(const compiler::CompileOptions& options, const compiler::CompiledProgram& compiled);

// Adds `--seed N` (random inputs: input i uses SEED + i).
CLI::Option* AddSeedOption(CLI::App* app, uint64_t& seed);

// Adds `--json` (`what` lists the fields).
CLI::Option* AddJsonFlag(CLI::App* app, bool& json, std::string_view what);

// The footer of a subcommand's --help: the exit codes, then `text` (which
// ends with the Examples section).
std::string Footer(std::string_view text);

// Parses a source file for the command line: after a syntax error the
// parser goes on to the next statement, so the user sees up to
// UserError::kMaxRenderedErrors errors at once and a count of the rest.
// lang::Lint's warnings (a tensor computed and never used, an unused input)
// go to stderr.
inline constexpr size_t kMaxParseErrors = 10000;
lang::ast::Function ParseSource(const SourceFilePtr& source);

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

// Splits validated NAME=VALUE arguments into a map; a NAME given twice is a
// usage error (CLI::ValidationError) naming `option`.
std::map<std::string, std::string> SplitNameValues(const std::vector<std::string>& args,
                                                   const std::string& option);

// `-s NAME=SHAPE` arguments as shapes by name.
std::map<std::string, lang::Shape> ParseShapeArgs(const std::vector<std::string>& args,
                                                  const std::string& option);

// --- Layouts on the command line ----------------------------------------------------------
//
// `-s NAME=TYPE[DIMS]:LAYOUT` gives an input its shape and its memory layout
// (any spec lang::ParseLayout accepts: nhwc, nChw16c, order(...),
// strides(...), …); `--layout NAME=SPEC` gives one to any tensor whose
// shape comes from elsewhere (an input read from a .npy file, an output).
// Host tensors stay logical (row-major); the runtime packs them into the
// layout on upload and unpacks outputs on download.

// Help text for the -s option of commands that accept layouts.
inline constexpr std::string_view kShapeLayoutHelp =
    "Shape of an input and optionally its memory layout, e.g. -s A=f32[1,56,56,64] or "
    "-s A=f32[1,64,56,56]:nChw16c (layouts: oneDNN tags such as acdb or aBcd16b, named formats such as "
    "nhwc, nChw16c, b_fs_yx_fsv16, NCHW4, CHWN4, row-major, order(p0,...), strides(s0,...); see "
    "docs/layouts.md and `tilec layout`; repeat per input)";
inline constexpr std::string_view kLayoutHelp =
    "Memory layout of any tensor (an input read from a file, an output, …), e.g. --layout R=nhwc "
    "(repeat per tensor; an input's layout may instead follow its -s shape)";

// Adds `-s,--shape NAME=TYPE[DIMS][:LAYOUT]` (help `shape_help`) and
// `--layout NAME=LAYOUT` to `app`; returns the -s option.
CLI::Option* AddShapeLayoutOptions(CLI::App* app, std::vector<std::string>& shapes,
                                   std::vector<std::string>& layouts,
                                   std::string_view shape_help = kShapeLayoutHelp);

// A layout spec and the argument that gave it, for messages.
struct LayoutArg {
  std::string spec;
  std::string origin;  // "-s D=f32[1,8,8,4]:nhwc" or "--layout D=nhwc"
};

struct ShapeLayoutArgs {
  std::map<std::string, lang::Shape> shapes;
  std::map<std::string, LayoutArg> layouts;
};

// Like NameValueValidator, and VALUE must parse as a shape (`f32[2, 3]`),
// optionally followed by `:LAYOUT`. Only the shape is checked here; a bad layout is a user error from ParseShapeLayoutArgs.
CLI::Validator NameShapeLayoutValidator();

// `-s NAME=TYPE[DIMS][:LAYOUT]` and `--layout NAME=SPEC` arguments (both
// validated). A layout given with -s is checked against its shape here:
// UserError "-s A=f32[2,3]:nhwc: bad layout 'nhwc' …". A name with a layout
// from both options, or given twice, is a usage error.
ShapeLayoutArgs ParseShapeLayoutArgs(const std::vector<std::string>& shape_args,
                                     const std::vector<std::string>& layout_args = {},
                                     const std::string& shape_option = "-s",
                                     const std::string& layout_option = "--layout");

// Binds `f` to `shapes`, then gives the tensors in `layouts` their layouts
// (lang::Bind with layouts). A layout for a tensor the program does not have,
// or one that does not fit the tensor's bound dimensions, is a UserError
// that names the argument and the spec. `shape_note`, if not empty, is
// appended to binding errors (e.g. which file gave which shape).
lang::Program BindWithLayouts(const lang::ast::Function& f, const std::map<std::string, lang::Shape>& shapes,
                              const std::map<std::string, LayoutArg>& layouts,
                              const std::string& shape_note = "");

// `--tile KERNEL=T0,T1,…` arguments: the forced tile of each kernel (UserError
// for a size that is not a number).
std::map<std::string, std::vector<int64_t>> ParseTileArgs(const std::vector<std::string>& args,
                                                          const std::string& option);
// `--rank KERNEL=K` arguments: use the K-th best tile candidate (0 = best).
std::map<std::string, int> ParseRankArgs(const std::vector<std::string>& args, const std::string& option);

// "A, B, C" (or "none").
std::string JoinNames(const std::vector<std::string>& names);

// "60s", "90", "2m", "1.5m", "500ms" -> seconds (more than 0, at most a
// day); CLI::ValidationError naming `option` otherwise.
double ParseDuration(const std::string& text, const std::string& option);

// Runs `f`, logging its wall time as stage `stage` at verbosity 1 and,
// if `record` is given, appending it there (for --json).
template <typename F>
auto Timed(const GlobalOptions& global, std::string_view stage, F&& f,
           std::vector<compiler::StageTime>* record = nullptr) {
  auto start = std::chrono::steady_clock::now();
  auto log = [&] {
    std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
    if (record) record->push_back({std::string(stage), ms.count()});
    if (global.verbose < 1) return;
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
  using UserError::Render;
  std::string Render(int width) const override { return UserError::Render(width) + "\nnote: " + note_; }

 private:
  std::string note_;
};

}  // namespace tilec::tools
