// `tilec opt FILE.sem --pass NAME … --emit sem|llvm|llvm-opt|cl`: reads sem
// text (what `tilec compile --emit sem` prints, compiler/sem/parser.h), runs
// the named passes in order and prints the result, or the target code an
// emitter makes of it: MLIR's `mlir-opt`, for text-in, text-out tests of one
// pass (tests/golden/opt).
//
// The input is verified after parsing, as every pass and emitter requires: a
// module sem::Verify rejects is the user's error (exit code 1). A pass whose
// output fails Verify is a bug in the pass (exit code 3).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>

#include "compiler/sem/parser.h"
#include "compiler/sem/printer.h"
#include "compiler/sem/simplify.h"
#include "compiler/sem/verify.h"
#include "hal/llvm/llvm_device.h"
#include "tools/tilec/common.h"
#include "tools/tilec/targets.h"

namespace tilec::tools {
namespace {

struct OptOptions {
  std::string file;
  std::vector<std::string> passes;  // --pass, in order
  std::string emit = "sem";
  std::string target;  // set by AddTargetOption
  bool target_given = false;
  std::string output;  // -o FILE: write there instead of stdout
};

// The passes `--pass` names, in the order of `tilec opt --help`.
const std::vector<std::string>& PassNames() {
  static const std::vector<std::string> names = {"simplify", "verify"};
  return names;
}

const std::vector<std::string>& EmitNames() {
  static const std::vector<std::string> names = {"sem", "llvm", "llvm-opt", "cl"};
  return names;
}

SourceFilePtr ReadInput(const std::string& path) {
  if (path != "-") return ReadSourceFile(path);
  std::string text(std::istreambuf_iterator<char>(std::cin), {});
  return MakeSource("<stdin>", std::move(text));
}

sem::Module RunPass(const std::string& pass, sem::Module m) {
  if (pass == "simplify")
    for (sem::Function& f : m.functions) f = sem::Simplify(f);
  // "verify": the module is verified after every pass anyway.
  return m;
}

// The target code of `m` from the device of `emit`'s language: --target's
// device when given (it must be of that language), else llvm or opencl.
std::string EmitCode(const OptOptions& o, const sem::Module& m) {
  bool llvm = o.emit != "cl";
  std::string target = o.target_given ? o.target : llvm ? "llvm" : "opencl";
  std::shared_ptr<hal::Device> device = OpenTargetDevice(target, /*with_ref=*/false, /*shared=*/false);
  auto* llvm_device = dynamic_cast<hal::cpu::LlvmDevice*>(device.get());
  if (llvm != (llvm_device != nullptr))
    TILEC_USER_ERROR("--emit {} needs {} device, not {} (see tilec devices)", o.emit,
                     llvm ? "an llvm" : "an opencl", device->id());
  if (o.emit == "llvm-opt") return llvm_device->EmitOptimizedIR(m);
  return device->EmitCode(m);
}

void RunOpt(const OptOptions& o, const GlobalOptions& global) {
  for (const std::string& p : o.passes)
    if (std::find(PassNames().begin(), PassNames().end(), p) == PassNames().end())
      TILEC_USER_ERROR("--pass {}: unknown pass (available: {})", p, JoinNames(PassNames()));
  if (std::find(EmitNames().begin(), EmitNames().end(), o.emit) == EmitNames().end())
    TILEC_USER_ERROR("--emit {}: unknown output (available: {})", o.emit, JoinNames(EmitNames()));
  SourceFilePtr source = ReadInput(o.file);
  sem::Module m = Timed(global, "parse", [&] { return sem::Parse(source); });
  std::vector<std::string> problems = sem::Problems(m);
  if (!problems.empty())
    TILEC_USER_ERROR("{}: the sem module is invalid:\n  {}", source->name, fmt::join(problems, "\n  "));
  for (const std::string& pass : o.passes) {
    m = Timed(global, pass, [&] { return RunPass(pass, std::move(m)); });
    sem::Verify(m);
  }
  std::string text = o.emit == "sem" ? sem::Print(m) : Timed(global, "emit " + o.emit, [&] { return EmitCode(o, m); });
  if (o.output.empty()) {
    fmt::print("{}", text);
    return;
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(o.output.c_str(), "wb"), &std::fclose);
  if (!f || std::fwrite(text.data(), 1, text.size(), f.get()) != text.size())
    TILEC_USER_ERROR("-o {}: cannot write the file", o.output);
}

}  // namespace

Command AddOptCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<OptOptions>();
  CLI::App* app = parent.add_subcommand("opt", "Run sem passes on sem text and print the result or its target code");
  app->footer(Footer(
      "The input is sem text as `tilec compile --emit sem` prints it (docs/architecture.md, \"The sem text\n"
      "and tilec opt\"); it is verified after parsing. Passes: simplify (sem::Simplify), verify (sem::Verify,\n"
      "which also runs after every pass).\n\nExamples:\n"
      "  tilec opt matmul.sem --pass simplify\n"
      "  tilec opt matmul.sem --emit llvm --cpu x86-64-v4\n"
      "  tilec opt matmul.sem --emit cl\n"
      "  tilec compile examples/relu.tile -s X=f32[3,5,7] --emit sem | tilec opt - --pass verify\n"
      "  tilec compile examples/matmul.tile -s A=f32[5,7] -s B=f32[7,13] --emit sem > matmul.sem   # an input"));
  app->add_option("file", opts->file, "sem text ('-': standard input)")->required()->type_name("FILE.sem");
  app->add_option("--pass", opts->passes, "A pass to run (repeat for several, run in order): simplify, verify")
      ->type_name("NAME")
      ->allow_extra_args(false);
  app->add_option("--emit", opts->emit,
                  "What to print: sem (the module after the passes), llvm, llvm-opt (LLVM IR, after O3), cl "
                  "(OpenCL C)")
      ->capture_default_str();
  AddTargetOption(app, opts->target, "whose emitter makes the code of --emit llvm, llvm-opt or cl (default: llvm, "
                  "or opencl for --emit cl)", /*with_ref=*/false);
  app->add_option("-o,--output", opts->output, "Write the output to FILE instead of standard output")
      ->type_name("FILE");
  return {app, [app, opts, &global] {
            opts->target_given = app->get_option("--target")->count() + app->get_option("--device")->count() > 0;
            RunOpt(*opts, global);
          }};
}

}  // namespace tilec::tools
