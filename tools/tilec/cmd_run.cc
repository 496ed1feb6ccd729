// `tilec run FILE --in NAME=FILE.npy... [--out NAME=FILE.npy...] [--target T]`:
// run a Tile program on .npy (or random) inputs, in the memory layouts given
// by `-s NAME=SHAPE:LAYOUT` or `--layout NAME=SPEC`, and write or summarize
// its outputs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "runtime/npy.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/parser.h"
#include "tile_lang/program.h"
#include "tools/tilec/common.h"
#include "tools/tilec/targets.h"
#include "tools/tilec/tuning_flags.h"

namespace tilec::tools {
namespace {

struct RunOptions {
  std::string file;
  std::vector<std::string> ins;
  std::vector<std::string> outs;
  std::vector<std::string> shapes;
  std::vector<std::string> layouts;
  bool random_inputs = false;
  uint64_t seed = 1;
  std::string target = "llvm";  // the host CPU through LLVM: the default device
  // --check: compare every output with the reference evaluator on the same
  // inputs; an element matches when |got - want| <= atol + rtol * |want|
  // (NumPy's allclose), integers and bools exactly, NaN where NaN is expected.
  bool check = false;
  double rtol = 1e-4;
  double atol = 1e-5;
  bool no_tuning_cache = false;
};

// Where an input's data came from, for messages.
struct InputSource {
  lang::Tensor tensor;
  std::string origin;  // "a.npy" or "random"
};

std::string TargetHelp() {
  std::string help = "Where to run the program:";
  for (const Target& t : Targets()) help += fmt::format("\n  {}: {}", t.name, t.description);
  return help;
}

// "R: f32[2, 3]  min -1  max 2.5  mean 0.25": one line per output when no
// --out asks for a file.
std::string Summary(const std::string& name, const lang::Tensor& t) {
  std::string line = fmt::format("{}: {}", name, lang::ToString(t.shape()));
  if (t.size() == 0) return line + "  (no elements)";
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  double sum = 0;
  int64_t nans = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = t.GetDouble(i);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  if (nans == t.size()) return line + fmt::format("  (all {} elements are NaN)", nans);
  line += fmt::format("  min {:.6g}  max {:.6g}  mean {:.6g}", lo, hi, sum / static_cast<double>(t.size() - nans));
  if (nans > 0) line += fmt::format("  ({} NaN)", nans);
  return line;
}

std::vector<std::string> InputNames(const lang::ast::Function& f) {
  std::vector<std::string> names;
  for (const auto& in : f.inputs) names.push_back(in.name);
  return names;
}

std::vector<std::string> OutputNames(const lang::ast::Function& f) {
  std::vector<std::string> names;
  for (const auto& out : f.outputs) names.push_back(out.name);
  return names;
}

// One output against the reference: "check R: f32[1, 56, 56, 64], max abs
// error 9.5e-06, max rel error 2.1e-05: OK" (or "MISMATCH in N elements,
// first at [i]: got g, expected w"). True when every element matches.
bool CheckOutput(const std::string& name, const lang::Tensor& got, const lang::Tensor& want,
                 const RunOptions& opts) {
  TILEC_CHECK(got.shape() == want.shape(), "output '{}' is {} but the reference is {}", name,
              lang::ToString(got.shape()), lang::ToString(want.shape()));
  bool exact = !lang::IsFloat(want.dtype());
  double max_abs = 0, max_rel = 0;
  int64_t bad = 0, first_bad = -1;
  for (int64_t i = 0; i < want.size(); ++i) {
    double g = got.GetDouble(i), w = want.GetDouble(i);
    bool ok;
    if (std::isnan(w) || std::isnan(g)) {
      ok = std::isnan(w) && std::isnan(g);
    } else if (std::isinf(w) || std::isinf(g)) {
      ok = g == w;
    } else {
      double abs_err = std::fabs(g - w);
      max_abs = std::max(max_abs, abs_err);
      if (w != 0) max_rel = std::max(max_rel, abs_err / std::fabs(w));
      ok = exact ? g == w : abs_err <= opts.atol + opts.rtol * std::fabs(w);
    }
    if (!ok && bad++ == 0) first_bad = i;
  }
  std::string line = fmt::format("check {}: {}, max abs error {:.3g}, max rel error {:.3g}: ", name,
                                 lang::ToString(want.shape()), max_abs, max_rel);
  if (bad == 0) {
    fmt::print("{}OK\n", line);
    return true;
  }
  fmt::print("{}MISMATCH in {} of {} elements, first at flat index {}: got {:.9g}, expected {:.9g}\n",
             line, bad, want.size(), first_bad, got.GetDouble(first_bad), want.GetDouble(first_bad));
  return false;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Reads or generates every input, checking that each one is given exactly once.
std::map<std::string, InputSource> LoadInputs(const RunOptions& opts, const lang::ast::Function& f,
                                              const std::map<std::string, lang::Shape>& shapes,
                                              const GlobalOptions& global) {
  std::vector<std::string> inputs = InputNames(f);
  std::map<std::string, std::string> files = SplitNameValues(opts.ins, "--in");
  for (const auto& [name, unused] : files) {
    if (!Contains(inputs, name))
      TILEC_USER_ERROR("--in {}: '{}' is not an input of the program (inputs: {})", name, name, JoinNames(inputs));
    if (shapes.count(name))
      throw CLI::ValidationError("--in", fmt::format("input '{}' is given both by --in and by -s", name));
  }
  for (const auto& [name, unused] : shapes) {
    if (!Contains(inputs, name))
      TILEC_USER_ERROR("-s {}: '{}' is not an input of the program (inputs: {})", name, name, JoinNames(inputs));
  }

  std::map<std::string, InputSource> result;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& name = inputs[i];
    if (auto it = files.find(name); it != files.end()) {
      lang::Tensor t = Timed(global, "read " + it->second, [&] { return runtime::ReadNpy(it->second); });
      result.emplace(name, InputSource{std::move(t), it->second});
    } else if (auto sit = shapes.find(name); sit != shapes.end()) {
      lang::Tensor t(sit->second);
      // One stream per input, so two inputs of the same shape differ.
      lang::FillRandom(t, opts.seed + i);
      result.emplace(name, InputSource{std::move(t), "random"});
    } else {
      TILEC_USER_ERROR("no data for input '{}': give --in {}=FILE.npy{}", name, name,
                       opts.random_inputs ? fmt::format(" or -s {}=TYPE[DIMS]", name) : "");
    }
  }
  return result;
}

void RunRun(const RunOptions& opts, const GlobalOptions& global) {
  const Target& target = FindTarget(opts.target);
  ProcessRunTuning() = {opts.no_tuning_cache, global.verbose};
  SourceFilePtr source = ReadSourceFile(opts.file);
  lang::ast::Function f = Timed(global, "parse", [&] { return lang::Parse(source); });

  // Check the requested outputs before any work, so a typo costs nothing.
  std::vector<std::string> outputs = OutputNames(f);
  std::map<std::string, std::string> out_files = SplitNameValues(opts.outs, "--out");
  for (const auto& [name, unused] : out_files) {
    if (!Contains(outputs, name))
      TILEC_USER_ERROR("--out {}: '{}' is not an output of the program (outputs: {})", name, name,
                       JoinNames(outputs));
  }

  ShapeLayoutArgs args = ParseShapeLayoutArgs(opts.shapes, opts.layouts);
  std::map<std::string, InputSource> inputs = LoadInputs(opts, f, args.shapes, global);
  std::map<std::string, lang::Shape> shapes;
  std::map<std::string, lang::Tensor> tensors;
  std::vector<std::string> origins;
  for (auto& [name, in] : inputs) {
    shapes.emplace(name, in.tensor.shape());
    origins.push_back(fmt::format("{} = {} ({})", name, lang::ToString(in.tensor.shape()), in.origin));
    tensors.emplace(name, std::move(in.tensor));
  }

  // Shapes come from the input files, so a binding error says which file gave which shape.
  lang::Program program = Timed(global, "bind", [&] {
    return BindWithLayouts(f, shapes, args.layouts, fmt::format("input shapes: {}", fmt::join(origins, ", ")));
  });
  std::map<std::string, lang::Tensor> results =
      Timed(global, fmt::format("run [{}]", target.name), [&] { return target.run(program, tensors); });
  std::map<std::string, lang::Tensor> reference;
  if (opts.check)
    reference = Timed(global, "run [ref] for --check", [&] { return lang::Evaluate(program, tensors); });

  for (const std::string& name : outputs) {
    auto it = results.find(name);
    TILEC_CHECK(it != results.end(), "target '{}' did not produce output '{}'", target.name, name);
    if (out_files.empty()) {
      fmt::print("{}\n", Summary(name, it->second));
    } else if (auto fit = out_files.find(name); fit != out_files.end()) {
      Timed(global, "write " + fit->second, [&] { runtime::WriteNpy(fit->second, it->second); });
    }
  }
  if (!opts.check) return;
  int mismatched = 0;
  for (const std::string& name : outputs)
    mismatched += !CheckOutput(name, results.at(name), reference.at(name), opts);
  if (mismatched > 0)
    TILEC_USER_ERROR("--check: {} of {} outputs differ from the reference evaluator on {} (rtol {}, "
                     "atol {})", mismatched, outputs.size(), target.name, opts.rtol, opts.atol);
}

}  // namespace

Command AddRunCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* app = parent.add_subcommand("run", "Run a Tile program on .npy (or random) inputs");
  app->footer(std::string(kExitCodesHelp) +
              "\n\nInput shapes come from the .npy files. Without --out, one line per output is printed:\n"
              "name, shape, min, max, mean.\n\nLayouts: inputs and outputs are logical (row-major) tensors "
              "whatever their layout;\nthe runtime packs inputs into their layouts on the device and unpacks "
              "outputs.\nThe reference target ignores layouts.\n\nExamples:\n"
              "  tilec run examples/conv_relu.tile --in D=d.npy --in K=k.npy --out R=r.npy\n"
              "  tilec run examples/conv_relu.tile --random-inputs -s D=f32[1,8,8,4] -s K=f32[3,3,4,4]\n"
              "  tilec run examples/conv_relu.tile --random-inputs -s D=f32[1,8,8,4] -s K=f32[3,3,4,4] --check\n"
              "  tilec run examples/conv_relu.tile --target opencl --in D=d.npy --layout 'D=order(0,3,1,2)' "
              "--in K=k.npy");
  app->add_option("file", opts->file, "Tile source file")->required()->type_name("FILE.tile");
  app->add_option("--in", opts->ins, "An input from a .npy file (repeat per input)")
      ->check(NameValueValidator())
      ->type_name("NAME=FILE.npy")
      ->allow_extra_args(false);
  app->add_option("--out", opts->outs, "Write an output to a .npy file (repeat per output); "
                                       "outputs not named are not written")
      ->check(NameValueValidator())
      ->type_name("NAME=FILE.npy")
      ->allow_extra_args(false);
  CLI::Option* random = app->add_flag("--random-inputs", opts->random_inputs,
                                      "Generate the inputs given by -s with pseudo-random values "
                                      "(floats in [-1, 1), ints in [-8, 8])");
  AddShapeLayoutOptions(app, opts->shapes, opts->layouts,
                        "Shape of a random input and optionally its layout, e.g. -s A=f32[32,224,224,64] or "
                        "-s A=f32[1,64,56,56]:nChw16c (layouts: oneDNN tags such as acdb or aBcd16b, named "
                        "formats such as nhwc, nChw16c, b_fs_yx_fsv16, NCHW4, CHWN4, row-major, order(p0,...), "
                        "strides(s0,...); see docs/layouts.md and `tilec layout`)")
      ->needs(random);
  app->add_option("--seed", opts->seed, "Seed of the random inputs (input i uses SEED + i)")
      ->capture_default_str()
      ->needs(random);
  app->add_option("--target", opts->target, TargetHelp())->capture_default_str()->type_name("NAME");
  CLI::Option* check = app->add_flag(
      "--check", opts->check,
      "Also run the reference evaluator on the same inputs and compare every output: one line per "
      "output with the max absolute and relative error and OK or MISMATCH; exit 1 on a mismatch");
  app->add_option("--rtol", opts->rtol, "--check: relative tolerance (|got - want| <= atol + rtol * |want|)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->needs(check);
  app->add_option("--atol", opts->atol, "--check: absolute tolerance")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->needs(check);
  AddNoTuningCacheFlag(app, opts->no_tuning_cache);
  return {app, [opts, &global] { RunRun(*opts, global); }};
}

}  // namespace tilec::tools
