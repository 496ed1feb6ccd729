// `tilec compile FILE -s … --emit STAGE` prints one stage of the kernel
// pipeline; `tilec explain FILE -s …` prints the seed-style tables (flat
// table, constraints, post-ops, tile-search log, chosen tile, thread and read
// plans); `tilec devices` lists the devices and their hardware models.
#include <memory>

#include "compiler/pipeline.h"
#include "hal/hal.h"
#include "hal/llvm/llvm_device.h"
#include "runtime/program.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"
#include "tools/tilec/common.h"
#include "tools/tilec/tuning_flags.h"

namespace tilec::tools {
namespace {

struct CompileOptions {
  std::string file;
  std::vector<std::string> shapes;
  std::vector<std::string> layouts;  // --layout NAME=SPEC
  std::string emit = "sem";
  std::string device;  // empty: llvm for --emit llvm/llvm-opt, else opencl
  std::string hw = "device";  // or "seed"
  std::vector<std::string> tiles;  // KERNEL=T0,T1,…
  int local = -1;                  // -1: the device's choice
  bool full_search = false;
  int vector = 1;                  // 0: no vector form
  int64_t vector_rows = 0;         // 0: automatic
  bool no_tuning_cache = false;
};

compiler::CompileOptions MakeOptions(const CompileOptions& o, const compiler::HardwareModel& hw) {
  compiler::CompileOptions c;
  c.hw = hw;
  if (o.local >= 0) c.use_local = o.local != 0;
  c.search.fast = !o.full_search;
  if (o.full_search) c.search.max_scored = int64_t{1} << 20;
  c.forced_tiles = ParseTileArgs(o.tiles, "--tile");
  c.vectorize = o.vector != 0;
  c.vector_rows = o.vector_rows;
  return c;
}

lang::Program BindFile(const CompileOptions& o, const GlobalOptions& global) {
  SourceFilePtr source = ReadSourceFile(o.file);
  ShapeLayoutArgs args = ParseShapeLayoutArgs(o.shapes, o.layouts);
  lang::ast::Function f = Timed(global, "parse", [&] { return lang::Parse(source); });
  return Timed(global, "bind", [&] { return BindWithLayouts(f, args.shapes, args.layouts); });
}

void RunCompile(const CompileOptions& o, const GlobalOptions& global, bool explain) {
  static const std::vector<std::string> kEmit = {"kernels", "tiles", "plan", "sem",
                                                 "cl",      "llvm",  "llvm-opt"};
  if (std::find(kEmit.begin(), kEmit.end(), o.emit) == kEmit.end())
    TILEC_USER_ERROR("--emit {}: unknown stage (available: {})", o.emit, JoinNames(kEmit));
  if (o.hw != "device" && o.hw != "seed")
    TILEC_USER_ERROR("--hw {}: unknown hardware model (available: device, seed)", o.hw);
  bool llvm_code = o.emit == "llvm" || o.emit == "llvm-opt";
  bool code = o.emit == "cl" || llvm_code;  // target code rather than a pipeline stage
  lang::Program program = BindFile(o, global);
  std::shared_ptr<hal::Device> device;
  compiler::HardwareModel hw = compiler::SeedExampleHardware();
  if (o.hw == "device" || code) {
    device = hal::OpenDevice(!o.device.empty() ? o.device : llvm_code ? "llvm" : "opencl");
    if (o.hw == "device") hw = device->hardware_model();
  }
  // The code comes from a device of its language, whichever model shaped the kernels.
  std::shared_ptr<hal::Device> code_device = device;
  if (code && llvm_code != (dynamic_cast<hal::cpu::LlvmDevice*>(device.get()) != nullptr))
    code_device = hal::OpenDevice(llvm_code ? "llvm" : "opencl");
  compiler::CompileOptions options = MakeOptions(o, hw);
  // Tuned configurations belong to a device: only with its hardware model.
  if (device && o.hw == "device") ApplyTuningCache(options, *device, o.no_tuning_cache);
  std::string stage = o.emit == "kernels" ? "lower" : o.emit;
  if (explain) {
    options.print_after = {"lower", "tiles", "plan"};
  } else if (!code) {
    options.print_after = {stage};
  }
  options.print_sink = [](const std::string& s, const std::string& text) {
    fmt::print("// ----- {}\n{}", s, text);
    if (!text.empty() && text.back() != '\n') fmt::print("\n");
  };
  compiler::CompiledProgram compiled =
      Timed(global, "compile", [&] { return compiler::CompileProgram(program, options); });
  LogTunedKernels(global, compiled);
  if (o.emit == "kernels" && !explain) {
    // Which form each kernel got: the vector form's first plan line, else
    // the flat (seed-structured, GPU) form with its tile.
    fmt::print("// ----- forms\n");
    for (const compiler::CompiledKernel& k : compiled.kernels) {
      const std::string& plan = k.code.vector_plan;
      std::string form = !plan.empty() ? plan.substr(0, plan.find('\n'))
                         : k.search   ? fmt::format("Flat form, tile {}",
                                                    compiler::TileText(k.spec.flat, k.tile))
                                      : fmt::format("One work item per element ({})",
                                                    compiler::Name(k.spec.kind));
      fmt::print("{}: {}\n", k.spec.name, form);
    }
  }
  if (code && !explain) {
    if (o.emit == "llvm-opt") {
      auto& llvm_device = static_cast<hal::cpu::LlvmDevice&>(*code_device);
      fmt::print("{}", llvm_device.EmitOptimizedIR(compiled.Module()));
    } else {
      fmt::print("{}", code_device->EmitCode(compiled.Module()));
    }
  }
  if (global.verbose >= 1)
    for (const auto& t : compiled.timings) fmt::print(stderr, "tilec: stage {}: {:.2f} ms\n", t.stage, t.ms);
}

void AddShared(CLI::App* app, CompileOptions& o) {
  app->add_option("file", o.file, "Tile source file")->required()->type_name("FILE.tile");
  AddShapeLayoutOptions(app, o.shapes, o.layouts);
  app->add_option("--device", o.device,
                  "Device whose hardware model and code are used (default: llvm for --emit "
                  "llvm and llvm-opt, else opencl)");
  app->add_option("--hw", o.hw, "Hardware model: 'device' (the device's) or 'seed' (the seed's example GPU)")
      ->capture_default_str();
  app->add_option("--tile", o.tiles, "Force a kernel's tile, e.g. --tile kernel_0=8,32,2,3,16,2,2")
      ->check(NameValueValidator())
      ->type_name("KERNEL=SIZES")
      ->allow_extra_args(false);
  AddVectorOptions(app, o.vector, o.vector_rows);
  app->add_option("--local", o.local, "1: stage inputs in local memory; 0: read global memory")
      ->type_name("0|1");
  app->add_flag("--full-search", o.full_search, "Expand every candidate instead of PlaidML's early stop");
  AddNoTuningCacheFlag(app, o.no_tuning_cache);
}

}  // namespace

Command AddCompileCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<CompileOptions>();
  CLI::App* app = parent.add_subcommand("compile", "Compile a Tile program and print one pipeline stage");
  app->footer(std::string(kExitCodesHelp) +
              "\n\nStages: kernels (fusion and flat tables), tiles (tile-search log), plan (thread and "
              "read plans),\nsem (the sem tree after simplification), cl (OpenCL C), llvm (LLVM IR "
              "for the host CPU),\nllvm-opt (the LLVM IR after O3).\n\nExample:\n"
              "  tilec compile examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64] --emit cl");
  AddShared(app, *opts);
  app->add_option("--emit", opts->emit,
                  "Stage to print: kernels, tiles, plan, sem, cl, llvm, llvm-opt")
      ->capture_default_str();
  return {app, [opts, &global] { RunCompile(*opts, global, false); }};
}

Command AddExplainCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<CompileOptions>();
  CLI::App* app = parent.add_subcommand(
      "explain", "Print the seed-style tables: flat table, constraints, post-ops, tile search, plans");
  app->footer(std::string(kExitCodesHelp) +
              "\n\nExample (the seed's layer on the seed's example hardware):\n"
              "  tilec explain examples/conv_relu.tile -s D=f32[32,224,224,64] -s K=f32[3,3,64,64] --hw seed");
  AddShared(app, *opts);
  return {app, [opts, &global] { RunCompile(*opts, global, true); }};
}

Command AddDevicesCommand(CLI::App& parent, const GlobalOptions& global) {
  CLI::App* app = parent.add_subcommand("devices", "List devices with their ids and hardware models");
  app->footer(std::string(kExitCodesHelp));
  return {app, [] { fmt::print("{}", hal::DescribeAllDevices()); }};
}

}  // namespace tilec::tools
