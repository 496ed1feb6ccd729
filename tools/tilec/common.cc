// Helpers shared by the `tilec` subcommands (see common.h).
#include "tools/tilec/common.h"

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>

#include "tile_lang/binder.h"
#include "tile_lang/layout.h"
#include "tile_lang/lint.h"
#include "tile_lang/parser.h"

namespace tilec::tools {
namespace {

// The NAME and VALUE of a NAME=VALUE argument, or an error message.
std::string CheckNameValue(const std::string& arg, NameValue* out) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos) return fmt::format("expected NAME=VALUE, got '{}'", arg);
  if (eq == 0) return fmt::format("missing NAME before '=' in '{}'", arg);
  if (eq + 1 == arg.size()) return fmt::format("missing VALUE after '=' in '{}'", arg);
  if (out) *out = {arg.substr(0, eq), arg.substr(eq + 1)};
  return {};
}

NameValue Split(const std::string& arg) {
  NameValue nv;
  std::string error = CheckNameValue(arg, &nv);
  // Arguments reach here only through the validators, which ran CheckNameValue.
  TILEC_CHECK(error.empty(), "{}", error);
  return nv;
}

}  // namespace

SourceFilePtr ReadSourceFile(const std::string& path) {
  errno = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) TILEC_USER_ERROR("cannot open '{}': {}", path, std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  for (;;) {
    size_t n = std::fread(buf, 1, sizeof buf, f.get());
    text.append(buf, n);
    if (n < sizeof buf) break;
  }
  if (std::ferror(f.get())) TILEC_USER_ERROR("cannot read '{}': {}", path, std::strerror(errno));
  return MakeSource(path, std::move(text));
}

CLI::Option* AddShapeLayoutOptions(CLI::App* app, std::vector<std::string>& shapes,
                                   std::vector<std::string>& layouts, std::string_view shape_help) {
  CLI::Option* s = app->add_option("-s,--shape", shapes, std::string(shape_help))
                       ->check(NameShapeLayoutValidator())
                       ->type_name("NAME=TYPE[DIMS][:LAYOUT]")
                       ->allow_extra_args(false);
  app->add_option("--layout", layouts, std::string(kLayoutHelp))
      ->check(NameValueValidator())
      ->type_name("NAME=LAYOUT")
      ->allow_extra_args(false);
  return s;
}

lang::ast::Function ParseSource(const SourceFilePtr& source) {
  lang::ParseOptions options;
  options.max_errors = kMaxParseErrors;
  lang::ast::Function f = lang::Parse(source, nullptr, options);
  for (const UserError& w : lang::Lint(f)) fmt::print(stderr, "{}\n", w.Render());
  return f;
}

CLI::Option* AddTargetOption(CLI::App* app, std::string& target, std::string_view what, bool with_ref) {
  target = std::string(kDefaultTarget);
  std::string help = fmt::format(
      "Device {}: 'llvm' (the host CPU through LLVM, all cores), 'opencl' (the first OpenCL device) or a "
      "device id from `tilec devices` ('llvm:cpu', 'opencl:0:0', …){}",
      what, with_ref ? "; 'ref': the reference evaluator (plain loops; slow, exact)" : "");
  CLI::Option* o = app->add_option("--target", target, help)->capture_default_str()->type_name("NAME");
  // The old spelling of compile and explain, hidden, for one release.
  app->add_option("--device", target, "Old name of --target")->group("")->type_name("NAME");
  app->add_option("--cpu", TargetCpu(),
                  "The CPU kernels are planned and compiled for: an LLVM CPU name or x86-64 level ('znver3', "
                  "'skylake-avx512', 'x86-64-v3', …), an AArch64 core ('neoverse-n1', 'apple-m1', …), or "
                  "ARCH:NAME ('aarch64:generic'); default: TILEC_CPU, else the host. The llvm device runs "
                  "the code only where the host has that CPU's architecture and features (else `compile -o` "
                  "writes it); an OpenCL CPU device plans for it")
      ->type_name("NAME");
  return o;
}

std::string& TargetCpu() {
  static std::string cpu;
  return cpu;
}

void AddKernelOptions(CLI::App* app, KernelOptions& o) {
  app->add_option("--tile", o.tiles, "Force a kernel's tile, e.g. --tile kernel_0=8,32,2,3,16,2,2")
      ->check(NameValueValidator())
      ->type_name("KERNEL=SIZES")
      ->allow_extra_args(false);
  app->add_option("--rank", o.ranks, "Use a kernel's K-th best tile candidate (0: the best), e.g. --rank kernel_0=2")
      ->check(NameValueValidator())
      ->type_name("KERNEL=K")
      ->allow_extra_args(false);
  app->add_option("--vector", o.vector,
                  "1: on devices without local memory (CPUs), use the vector form where a kernel fits "
                  "it; 0: the flat (seed-structured) form everywhere")
      ->capture_default_str()
      ->check(CLI::IsMember({0, 1}))
      ->type_name("0|1");
  app->add_option("--vector-rows", o.vector_rows,
                  "Vector form: rows of the register block (0: as many as the vector registers hold)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{64}))
      ->type_name("N");
  app->add_option("--work-group", o.work_groups,
                  "Flat form (OpenCL, --vector 0): a kernel's work-group shape, threads along each flat index "
                  "as --tile lists them (1 for reductions), e.g. --work-group kernel_0=1,16,8")
      ->check(NameValueValidator())
      ->type_name("KERNEL=THREADS")
      ->allow_extra_args(false);
  app->add_flag("--no-tuning-cache", o.no_tuning_cache,
                "Ignore the tuning cache: compile every kernel with the cost model's pick (see tilec tune)");
  app->add_flag("--no-relayout", o.no_relayout,
                "Insert no relayout kernels and keep every tensor in its given layout ('any' is row-major); "
                "see docs/layouts.md");
}

void ApplyKernelOptions(const KernelOptions& o, compiler::CompileOptions& c) {
  c.forced_tiles = ParseTileArgs(o.tiles, "--tile");
  c.candidate_rank = ParseRankArgs(o.ranks, "--rank");
  c.vectorize = o.vector != 0;
  c.vector_rows = o.vector_rows;
  c.work_groups = ParseTileArgs(o.work_groups, "--work-group");
  c.layouts.relayout = !o.no_relayout;
  // An empty set of tuned configurations: runtime::Program::Compile then
  // does not read the tuning cache.
  if (o.no_tuning_cache) c.tuned = std::map<std::string, compiler::KernelConfig>{};
}

void CheckKernelSettings(const compiler::CompileOptions& options, const compiler::CompiledProgram& compiled) {
  auto check = [&](const std::string& option, const std::string& kernel) {
    compiler::CheckKernelExists(compiled, fmt::format("{} {}", option, kernel), kernel);
  };
  for (const auto& [kernel, tile] : options.forced_tiles) check("--tile", kernel);
  for (const auto& [kernel, rank] : options.candidate_rank) check("--rank", kernel);
  for (const auto& [kernel, shape] : options.work_groups) check("--work-group", kernel);
  for (const std::string& w : compiled.warnings) fmt::print(stderr, "warning: {}\n", w);
}

CLI::Option* AddSeedOption(CLI::App* app, uint64_t& seed) {
  return app->add_option("--seed", seed, "Seed of the random inputs (input i uses SEED + i)")
      ->capture_default_str()
      ->type_name("N");
}

CLI::Option* AddJsonFlag(CLI::App* app, bool& json, std::string_view what) {
  return app->add_flag("--json", json, fmt::format("Print one JSON object instead of text: {}", what));
}

std::string Footer(std::string_view text) { return fmt::format("{}\n\n{}", kExitCodesHelp, text); }

CLI::Validator NameValueValidator() {
  return CLI::Validator([](std::string& arg) { return CheckNameValue(arg, nullptr); }, "");
}

std::map<std::string, std::string> SplitNameValues(const std::vector<std::string>& args,
                                                   const std::string& option) {
  std::map<std::string, std::string> result;
  for (const std::string& arg : args) {
    NameValue nv = Split(arg);
    if (!result.emplace(nv.name, nv.value).second)
      throw CLI::ValidationError(option, fmt::format("'{}' is given more than once", nv.name));
  }
  return result;
}

std::map<std::string, lang::Shape> ParseShapeArgs(const std::vector<std::string>& args,
                                                  const std::string& option) {
  std::map<std::string, lang::Shape> result;
  for (const auto& [name, spec] : SplitNameValues(args, option)) result.emplace(name, lang::ParseShape(spec));
  return result;
}

CLI::Validator NameShapeLayoutValidator() {
  return CLI::Validator(
      [](std::string& arg) -> std::string {
        NameValue nv;
        std::string error = CheckNameValue(arg, &nv);
        if (!error.empty()) return error;
        try {
          lang::ParseShape(nv.value.substr(0, nv.value.find(':')));
        } catch (const UserError& e) {
          return fmt::format("bad shape in '{}': {}", arg, e.message());
        }
        return {};
      },
      "");
}

ShapeLayoutArgs ParseShapeLayoutArgs(const std::vector<std::string>& shape_args,
                                     const std::vector<std::string>& layout_args,
                                     const std::string& shape_option, const std::string& layout_option) {
  ShapeLayoutArgs result;
  for (const auto& [name, value] : SplitNameValues(shape_args, shape_option)) {
    std::string origin = fmt::format("{} {}={}", shape_option, name, value);
    std::pair<lang::Shape, std::optional<std::string>> parsed;
    try {
      parsed = lang::ParseShapeAndLayout(value);
    } catch (const UserError& e) {
      TILEC_USER_ERROR("{}: {}", origin, e.message());
    }
    result.shapes.emplace(name, parsed.first);
    if (parsed.second) result.layouts.emplace(name, LayoutArg{*parsed.second, origin});
  }
  for (const auto& [name, spec] : SplitNameValues(layout_args, layout_option)) {
    if (auto it = result.layouts.find(name); it != result.layouts.end())
      throw CLI::ValidationError(layout_option, fmt::format("'{}' already has a layout from '{}'", name,
                                                            it->second.origin));
    result.layouts.emplace(name, LayoutArg{spec, fmt::format("{} {}={}", layout_option, name, spec)});
  }
  return result;
}

lang::Program BindWithLayouts(const lang::ast::Function& f, const std::map<std::string, lang::Shape>& shapes,
                              const std::map<std::string, LayoutArg>& layouts, const std::string& shape_note) {
  lang::Program program;
  try {
    program = lang::Bind(f, shapes);
  } catch (const UserError& e) {
    if (shape_note.empty()) throw;
    throw UserErrorWithNote(e, shape_note);
  }
  if (layouts.empty()) return program;
  // Check each layout here, where the message can name the argument that gave
  // it; then bind again with them, so that the binder stays the one place
  // that decides what a layout means (binding takes microseconds).
  std::map<std::string, std::string> specs;
  for (const auto& [name, layout] : layouts) {
    auto it = program.tensors.find(name);
    if (it == program.tensors.end()) {
      std::vector<std::string> names;
      for (const auto& [t, decl] : program.tensors) names.push_back(t);
      TILEC_USER_ERROR("{}: the program has no tensor '{}' (tensors: {})", layout.origin, name, JoinNames(names));
    }
    try {
      lang::ParseLayout(layout.spec, it->second.shape.dims);
    } catch (const UserError& e) {
      TILEC_USER_ERROR("{}: {}", layout.origin, e.message());
    }
    specs.emplace(name, layout.spec);
  }
  return lang::Bind(f, shapes, specs);
}

std::map<std::string, std::vector<int64_t>> ParseTileArgs(const std::vector<std::string>& args,
                                                          const std::string& option) {
  std::map<std::string, std::vector<int64_t>> result;
  for (const auto& [kernel, spec] : SplitNameValues(args, option)) {
    std::vector<int64_t> tile;
    size_t pos = 0;
    while (true) {
      size_t comma = spec.find(',', pos);
      std::string part = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      try {
        size_t used = 0;
        tile.push_back(std::stoll(part, &used));
        if (used != part.size()) throw std::invalid_argument(part);
      } catch (const std::exception&) {
        TILEC_USER_ERROR("{} {}={}: '{}' is not a number", option, kernel, spec, part);
      }
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    result.emplace(kernel, std::move(tile));
  }
  return result;
}

std::map<std::string, int> ParseRankArgs(const std::vector<std::string>& args, const std::string& option) {
  std::map<std::string, int> result;
  for (const auto& [kernel, value] : SplitNameValues(args, option)) {
    int rank = -1;
    try {
      size_t used = 0;
      rank = std::stoi(value, &used);
      if (used != value.size()) rank = -1;
    } catch (const std::exception&) {
      rank = -1;
    }
    if (rank < 0)
      TILEC_USER_ERROR("{} {}={}: '{}' is not a candidate rank (0 is the best candidate, 1 the next, …)", option,
                       kernel, value, value);
    result.emplace(kernel, rank);
  }
  return result;
}

std::string JoinNames(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  return fmt::format("{}", fmt::join(names, ", "));
}

double ParseDuration(const std::string& text, const std::string& option) {
  std::string number = text;
  double scale = 1;
  auto ends = [&](std::string_view suffix) {
    return number.size() > suffix.size() && number.compare(number.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends("ms")) {
    scale = 1e-3;
    number.resize(number.size() - 2);
  } else if (ends("s")) {
    number.pop_back();
  } else if (ends("m")) {
    scale = 60;
    number.pop_back();
  }
  double value = -1;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size() || !(value > 0) || value * scale > 86400)
    throw CLI::ValidationError(option, fmt::format("'{}' is not a duration such as 60s, 90, 2m or 500ms "
                                                       "(more than 0, at most a day)", text));
  return value * scale;
}

}  // namespace tilec::tools
