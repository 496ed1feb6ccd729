// `tilec compile FILE -s … --emit STAGE` prints one stage of the kernel
// pipeline (or, with --json, the kernels and the stage as JSON; with -o,
// writes ahead-of-time output, see aot.h); `tilec explain FILE -s …` prints
// the seed-style tables (flat table, constraints, post-ops, tile-search log,
// chosen tile, thread and read plans); `tilec devices` lists the devices and
// their hardware models.
#include <algorithm>
#include <memory>

#include "compiler/pipeline.h"
#include "hal/hal.h"
#include "hal/llvm/llvm_device.h"
#include "runtime/program.h"
#include "runtime/settings.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"
#include "tools/tilec/aot.h"
#include "tools/tilec/common.h"
#include "tools/tilec/program_file.h"
#include "tools/tilec/tuning_flags.h"
#include "tools/tilec/json.h"
#include "tools/tilec/progress.h"
#include "tools/tilec/targets.h"

namespace tilec::tools {
namespace {

struct CompileOptions {
  std::string file;
  std::vector<std::string> shapes;
  std::vector<std::string> layouts;  // --layout NAME=SPEC
  std::string emit = "sem";
  std::string target;                // set by AddTargetOption: kDefaultTarget
  bool target_given = false;         // --target (or --device) on the command line
  bool emit_given = false;           // --emit on the command line
  std::string hw = "device";         // or "seed"
  KernelOptions kernel;
  int local = -1;                    // -1: the device's choice
  bool full_search = false;
  bool json = false;
  std::string output;                // -o NAME: ahead-of-time output instead of a printed stage
};

lang::Program BindFile(const CompileOptions& o, const GlobalOptions& global,
                       std::vector<compiler::StageTime>* timings, ProgramFile& file) {
  file = ReadProgramFile(o.file, o.shapes, o.layouts, global);
  lang::ast::Function f = Timed(global, "parse", [&] { return ParseSource(file.source); }, timings);
  return Timed(global, "bind", [&] { return BindWithLayouts(f, file.BindShapes(), file.args.layouts); }, timings);
}

// Which form a kernel got: its plan's first line, else the flat
// (seed-structured, GPU) form with its tile.
std::string FormText(const compiler::CompiledKernel& k) {
  const std::string& plan = k.code.plan_text;
  if (!plan.empty()) return plan.substr(0, plan.find('\n'));
  if (k.search) return fmt::format("Flat form, tile {}", compiler::TileText(k.spec.flat, k.tile));
  return fmt::format("One work item per element ({})", compiler::Name(k.spec.kind));
}

Json KernelJson(const compiler::CompiledKernel& k) {
  Json j = Json::Object();
  j.Set("name", k.spec.name).Set("kind", compiler::Name(k.spec.kind));
  j.Set("form", compiler::Name(k.code.form));
  // Where a flat kernel's settings came from (compiler::ResolveConfig).
  j.Set("config", compiler::Name(k.source));
  j.Set("form_text", FormText(k));
  j.Set("tile", k.search ? Json::ArrayOf(k.tile) : Json());
  j.Set("global", Json::ArrayOf(std::vector<int64_t>(k.code.global.begin(), k.code.global.end())));
  j.Set("local", Json::ArrayOf(std::vector<int64_t>(k.code.local.begin(), k.code.local.end())));
  j.Set("outputs", Json::ArrayOf(k.spec.outputs)).Set("inputs", Json::ArrayOf(k.spec.inputs));
  return j;
}

void RunCompile(const CompileOptions& o, const GlobalOptions& global, bool explain) {
  std::vector<std::string> kEmit = compiler::StageNames();
  for (const char* code : {"cl", "llvm", "llvm-opt"}) kEmit.push_back(code);
  if (std::find(kEmit.begin(), kEmit.end(), o.emit) == kEmit.end())
    TILEC_USER_ERROR("--emit {}: unknown stage (available: {})", o.emit, JoinNames(kEmit));
  if (o.hw != "device" && o.hw != "seed")
    TILEC_USER_ERROR("--hw {}: unknown hardware model (available: device, seed)", o.hw);
  bool llvm_code = o.emit == "llvm" || o.emit == "llvm-opt";
  bool code = o.emit == "cl" || llvm_code;  // target code rather than a pipeline stage
  if (!o.output.empty() && (explain || o.hw != "device"))
    TILEC_USER_ERROR("-o: ahead-of-time code is compiled for the target's own hardware model (no --hw seed)");
  if (!o.output.empty() && o.emit_given)
    TILEC_USER_ERROR("-o writes ahead-of-time code and --emit {} prints a stage: give one of them (the written "
                     "code is --emit llvm-opt's, or --emit cl's with --target opencl)",
                     o.emit);
  std::vector<compiler::StageTime> timings;
  ProgramFile file;
  lang::Program program = BindFile(o, global, &timings, file);
  // --emit cl names its language: without --target it shows OpenCL kernels
  // shaped for the OpenCL device.
  std::string target = !o.target_given && o.emit == "cl" ? "opencl" : o.target;
  // The target's device: its hardware model shapes the kernels (--hw
  // device), its language is the code's.
  std::shared_ptr<hal::Device> device;
  compiler::HardwareModel hw = compiler::SeedExampleHardware();
  if (o.hw == "device" || code) {
    device = OpenTargetDevice(target, /*with_ref=*/false, /*shared=*/false);
    if (o.hw == "device") hw = device->hardware_model();
  }
  // The code comes from a device of its language, whichever model shaped the kernels.
  std::shared_ptr<hal::Device> code_device = device;
  if (code && llvm_code != (dynamic_cast<hal::cpu::LlvmDevice*>(device.get()) != nullptr))
    code_device = runtime::OpenDevice(llvm_code ? "llvm" : "opencl", TargetCpu());
  compiler::CompileOptions options;
  options.hw = hw;
  if (o.local >= 0) options.use_local = o.local != 0;
  options.search.fast = !o.full_search;
  if (o.full_search) options.search.max_scored = int64_t{1} << 20;
  ApplyKernelOptions(o.kernel, options);
  if (explain) {
    options.print_after = {"kernels", "tiles", "plan"};
  } else if (!code && o.output.empty()) {
    options.print_after = {o.emit};
  }
  std::string text;  // what is printed (or, with --json, put in "text")
  options.print_sink = [&](const std::string& s, const std::string& t) {
    text += fmt::format("// ----- {}\n{}", s, t);
    if (!t.empty() && t.back() != '\n') text += "\n";
    if (!o.json) {
      fmt::print("{}", text);
      text.clear();
    }
  };
  Progress progress(!global.quiet && !o.json && Progress::StderrIsTerminal(), {}, {}, global.progress_delay);
  options.progress = [&](const std::string& s, size_t kernel, size_t kernels) {
    progress.Set(CompileStageText("compile", s, kernel, kernels));
  };
  // Through the runtime like every client, which applies the tuning cache;
  // with --hw seed without a device, since tuned configurations belong to
  // one and the kernels are shaped for the seed's model.
  std::shared_ptr<hal::Device> model_device = o.hw == "device" ? device : nullptr;
  runtime::Program compiled_program = [&] {
    ProgressTicker ticker(progress);
    return Timed(global, "compile", [&] { return runtime::Program::CompileOnly(program, model_device, options); },
                 &timings);
  }();
  const compiler::CompiledProgram& compiled = compiled_program.compiled();
  CheckKernelSettings(options, compiled);
  LogTunedKernels(global, compiled);
  if (!o.output.empty()) {
    progress.Set(fmt::format("emit ahead-of-time code for {}", device->id()));
    ProgressTicker ticker(progress);
    std::vector<std::string> files = WriteAot(compiled, *device, o.output, o.file, file.model ? &file.constants : nullptr);
    progress.Clear();
    if (o.json) {
      fmt::print("{}\n", Json::Object()
                             .Set("target", target)
                             .Set("device", device->id())
                             .Set("files", Json::ArrayOf(files))
                             .Dump(2));
    } else {
      for (const std::string& f : files) fmt::print("wrote {}\n", f);
    }
    return;
  }
  if (o.emit == "kernels" && !explain) {
    std::string forms = "// ----- forms\n";
    for (const compiler::CompiledKernel& k : compiled.kernels) forms += fmt::format("{}: {}\n", k.spec.name, FormText(k));
    if (file.model) {
      // A model's kernels with the ONNX nodes fused into each.
      std::vector<std::vector<std::string>> origins = KernelOrigins(file, compiled);
      forms += "// ----- onnx nodes\n";
      for (size_t k = 0; k < compiled.kernels.size(); ++k)
        forms += fmt::format("{}: {}\n", compiled.kernels[k].spec.name, fmt::join(origins[k], ", "));
    }
    if (o.json) {
      text += forms;
    } else {
      fmt::print("{}", forms);
    }
  }
  if (code && !explain) {
    progress.Set(fmt::format("emit {} for {}", o.emit, code_device->id()));
    ProgressTicker ticker(progress);
    if (o.emit == "llvm-opt") {
      auto& llvm_device = static_cast<hal::cpu::LlvmDevice&>(*code_device);
      text = llvm_device.EmitOptimizedIR(compiled.Module());
    } else {
      text = compiled_program.TargetCode(*code_device);
    }
    progress.Clear();
    if (!o.json) fmt::print("{}", text);
  }
  progress.Clear();
  if (o.json) {
    Json j = Json::Object();
    j.Set("file", o.file).Set("target", target).Set("device", device ? Json(device->id()) : Json());
    j.Set("hw", hw.name).Set("emit", o.emit);
    Json kernels = Json::Array();
    for (const compiler::CompiledKernel& k : compiled.kernels) kernels.Push(KernelJson(k));
    j.Set("kernels", std::move(kernels)).Set("temporaries", Json::ArrayOf(compiled.temporaries));
    j.Set("text", text);
    Json t = Json::Object();
    for (const compiler::StageTime& st : timings) t.Set(st.stage, st.ms);
    for (const compiler::StageTime& st : compiled.timings) t.Set("compile." + st.stage, st.ms);
    j.Set("timings_ms", std::move(t));
    fmt::print("{}\n", j.Dump(2));
  }
  if (global.verbose >= 1)
    for (const auto& t : compiled.timings) fmt::print(stderr, "tilec: stage {}: {:.2f} ms\n", t.stage, t.ms);
}

void AddShared(CLI::App* app, CompileOptions& o) {
  app->add_option("file", o.file, std::string(kProgramFileHelp))->required()->type_name("FILE");
  AddWeightsOption(app);
  AddShapeLayoutOptions(app, o.shapes, o.layouts);
  AddTargetOption(app, o.target,
                  "whose hardware model shapes the kernels and whose language the code is in (--emit cl "
                  "without --target: opencl)",
                  /*with_ref=*/false);
  app->add_option("--hw", o.hw, "Hardware model: 'device' (the device's) or 'seed' (the seed's example GPU)")
      ->capture_default_str();
  AddKernelOptions(app, o.kernel);
  app->add_option("--local", o.local, "1: stage inputs in local memory; 0: read global memory")
      ->type_name("0|1");
  app->add_flag("--full-search", o.full_search, "Expand every candidate instead of PlaidML's early stop");
}

// Runs `run` after noting whether --target or its alias was given.
std::function<void()> WithTargetGiven(CLI::App* app, std::shared_ptr<CompileOptions> opts,
                                      std::function<void()> run) {
  return [app, opts, run] {
    opts->target_given = app->get_option("--target")->count() + app->get_option("--device")->count() > 0;
    if (auto* emit = app->get_option_no_throw("--emit")) opts->emit_given = emit->count() > 0;
    run();
  };
}

}  // namespace

Command AddCompileCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<CompileOptions>();
  CLI::App* app = parent.add_subcommand("compile", "Compile a Tile program and print one pipeline stage");
  app->footer(Footer(
      "Stages: kernels (fusion and flat tables), tiles (tile-search log), plan (thread and read plans),\n"
      "sem (the sem tree after simplification), cl (OpenCL C), llvm (LLVM IR for the host CPU),\n"
      "llvm-opt (the LLVM IR after O3).\n\nExamples:\n"
      "  tilec compile examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64] --emit kernels\n"
      "  tilec compile examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64] --target opencl --emit cl\n"
      "  tilec compile examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64] --emit llvm --json\n"
      "  tilec compile examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64] -o conv   "
      "# conv.o conv.h conv.c tilec_aot_runtime.c\n"
      "  tilec compile examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64] --target opencl -o conv   "
      "# conv.cl conv.json\n\n"
      "Ahead-of-time use (docs/user-guide.md):\n"
      "  cc -O2 app.c conv.c tilec_aot_runtime.c conv.o -lpthread -lm -lmvec   "
      "# conv.h says whether -lmvec is needed"));
  AddShared(app, *opts);
  app->add_option("--emit", opts->emit,
                  "Pass to print the IR after (hoist, layouts, kernels, tiles, plan, sem), or the target code "
                  "(cl, llvm, llvm-opt)")
      ->capture_default_str();
  app->add_option("-o,--output", opts->output,
                  "Write ahead-of-time output instead of printing a stage: for llvm NAME.o, NAME.h (int NAME(...)), "
                  "NAME.c and tilec_aot_runtime.{h,c}; for opencl NAME.cl and NAME.json (launch description)")
      ->type_name("[DIR/]NAME");
  AddJsonFlag(app, opts->json,
              "file, target, device, hw, emit, kernels [{name, kind, form, config, form_text, tile, global, local, "
              "outputs, inputs}], temporaries, text (the --emit stage), timings_ms");
  return {app, WithTargetGiven(app, opts, [opts, &global] { RunCompile(*opts, global, false); })};
}

Command AddExplainCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<CompileOptions>();
  CLI::App* app = parent.add_subcommand(
      "explain", "Print the seed-style tables: flat table, constraints, post-ops, tile search, plans");
  app->footer(Footer(
      "Examples:\n"
      "  tilec explain examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64]\n"
      "  tilec explain examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64] --target opencl\n"
      "  tilec explain examples/conv_relu.tile -s D=f32[32,224,224,64] -s K=f32[3,3,64,64] --hw seed   "
      "# the seed's layer and hardware"));
  AddShared(app, *opts);
  return {app, WithTargetGiven(app, opts, [opts, &global] { RunCompile(*opts, global, true); })};
}

}  // namespace tilec::tools
