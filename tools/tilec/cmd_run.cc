// `tilec run FILE --in NAME=FILE.npy... [--out NAME=FILE.npy...] [--target T]`:
// run a Tile program on .npy (or random) inputs, in the memory layouts given
// by `-s NAME=SHAPE:LAYOUT` or `--layout NAME=SPEC`, and write or summarize
// its outputs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "runtime/npy.h"
#include "runtime/program.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/parser.h"
#include "tile_lang/program.h"
#include "tools/tilec/common.h"
#include "tools/tilec/program_file.h"
#include "tools/tilec/tuning_flags.h"
#include "tools/tilec/json.h"
#include "tools/tilec/progress.h"
#include "tools/tilec/targets.h"

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
  std::string target;  // set by AddTargetOption: kDefaultTarget
  KernelOptions kernel;
  bool json = false;
  // --check: compare every output with the reference evaluator on the same
  // inputs; an element matches when |got - want| <= atol * scale + rtol *
  // |want| (NumPy's allclose, with `scale` the output's largest magnitude
  // when above 1: a long sum rounds relative to its partial sums, which an
  // element that cancels to near 0 no longer shows), integers and bools
  // exactly, NaN where NaN is expected.
  bool check = false;
  double rtol = 1e-4;
  double atol = 1e-5;
};

// Where an input's data came from, for messages.
struct InputSource {
  lang::Tensor tensor;
  std::string origin;  // "a.npy" or "random"
};

struct OutputStats {
  int64_t nans = 0;
  double min = 0, max = 0, mean = 0;  // over the elements that are not NaN
};

OutputStats Stats(const lang::Tensor& t) {
  OutputStats s;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  double sum = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = t.GetDouble(i);
    if (std::isnan(v)) {
      ++s.nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  if (s.nans < t.size()) s = {s.nans, lo, hi, sum / static_cast<double>(t.size() - s.nans)};
  return s;
}

// "R: f32[2, 3]  min -1  max 2.5  mean 0.25": one line per output when no
// --out asks for a file.
std::string Summary(const std::string& name, const lang::Tensor& t) {
  std::string line = fmt::format("{}: {}", name, lang::ToString(t.shape()));
  if (t.size() == 0) return line + "  (no elements)";
  OutputStats s = Stats(t);
  if (s.nans == t.size()) return line + fmt::format("  (all {} elements are NaN)", s.nans);
  line += fmt::format("  min {:.6g}  max {:.6g}  mean {:.6g}", s.min, s.max, s.mean);
  if (s.nans > 0) line += fmt::format("  ({} NaN)", s.nans);
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

// One output against the reference.
struct CheckResult {
  double max_abs = 0, max_rel = 0;
  int64_t bad = 0, first_bad = -1;
  double got = 0, want = 0;  // at first_bad
  bool ok() const { return bad == 0; }
};

CheckResult CompareOutput(const std::string& name, const lang::Tensor& got, const lang::Tensor& want,
                          const RunOptions& opts) {
  TILEC_CHECK(got.shape() == want.shape(), "output '{}' is {} but the reference is {}", name,
              lang::ToString(got.shape()), lang::ToString(want.shape()));
  bool exact = !lang::IsFloat(want.dtype());
  double scale = 1;
  for (int64_t i = 0; i < want.size(); ++i)
    if (double w = std::fabs(want.GetDouble(i)); std::isfinite(w)) scale = std::max(scale, w);
  CheckResult r;
  for (int64_t i = 0; i < want.size(); ++i) {
    double g = got.GetDouble(i), w = want.GetDouble(i);
    bool ok;
    if (std::isnan(w) || std::isnan(g)) {
      ok = std::isnan(w) && std::isnan(g);
    } else if (std::isinf(w) || std::isinf(g)) {
      ok = g == w;
    } else {
      double abs_err = std::fabs(g - w);
      r.max_abs = std::max(r.max_abs, abs_err);
      if (w != 0) r.max_rel = std::max(r.max_rel, abs_err / std::fabs(w));
      ok = exact ? g == w : abs_err <= opts.atol * scale + opts.rtol * std::fabs(w);
    }
    if (!ok && r.bad++ == 0) {
      r.first_bad = i;
      r.got = g;
      r.want = w;
    }
  }
  return r;
}

// "check R: f32[1, 56, 56, 64], max abs error 9.5e-06, max rel error 2.1e-05:
// OK" (or "MISMATCH in N elements, first at [i]: got g, expected w").
std::string CheckLine(const std::string& name, const lang::Shape& shape, const CheckResult& r, int64_t size) {
  std::string line = fmt::format("check {}: {}, max abs error {:.3g}, max rel error {:.3g}: ", name,
                                 lang::ToString(shape), r.max_abs, r.max_rel);
  if (r.ok()) return line + "OK";
  return line + fmt::format("MISMATCH in {} of {} elements, first at flat index {}: got {:.9g}, expected {:.9g}",
                            r.bad, size, r.first_bad, r.got, r.want);
}

Json ShapeJson(const lang::Shape& shape) { return Json::ArrayOf(shape.dims); }

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Reads or generates every input, checking that each one is given exactly once.
std::map<std::string, InputSource> LoadInputs(const RunOptions& opts, const lang::ast::Function& f,
                                              const ProgramFile& file, const GlobalOptions& global) {
  std::vector<std::string> inputs = InputNames(f);
  const std::map<std::string, lang::Shape>& shapes = file.args.shapes;
  std::map<std::string, std::string> files = SplitNameValues(file.Rename(opts.ins), "--in");
  for (const auto& [name, unused] : files) {
    if (!Contains(inputs, name))
      TILEC_USER_ERROR("--in {}: '{}' is not an input of the program (inputs: {})", file.UserName(name),
                       file.UserName(name), JoinNames(inputs));
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
    if (auto c = file.constants.find(name); c != file.constants.end()) {
      result.emplace(name, InputSource{c->second, "the model's constant"});
    } else if (auto it = files.find(name); it != files.end()) {
      lang::Tensor t = Timed(global, "read " + it->second, [&] { return runtime::ReadNpy(it->second); });
      result.emplace(name, InputSource{std::move(t), it->second});
    } else if (auto sit = shapes.find(name); sit != shapes.end() || (opts.random_inputs && file.model_shapes.count(name))) {
      lang::Tensor t(sit != shapes.end() ? sit->second : file.model_shapes.at(name));
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

// Runs the program on the target's device, the progress line saying which
// stage and kernel the compiler is at.
std::map<std::string, lang::Tensor> RunOnDevice(const RunOptions& opts, const lang::Program& program,
                                                const std::map<std::string, lang::Tensor>& inputs,
                                                const GlobalOptions& global, Progress& progress,
                                                std::string* device_id, std::map<std::string, std::string>* layouts) {
  std::shared_ptr<hal::Device> device = OpenTargetDevice(opts.target, /*with_ref=*/true);
  *device_id = device->id();
  compiler::CompileOptions options;
  ApplyKernelOptions(opts.kernel, options);
  options.progress = [&](const std::string& stage, size_t kernel, size_t kernels) {
    // After the last kernel's last stage the device builds the module.
    bool last = stage == "sem" && kernel + 1 == kernels;
    progress.Set(last ? fmt::format("build: {} kernels for {}", kernels, device->id())
                      : CompileStageText("compile", stage, kernel, kernels));
  };
  ProgressTicker ticker(progress);
  runtime::Program compiled = runtime::Program::Compile(program, device, options);
  CheckKernelSettings(options, compiled.compiled());
  LogTunedKernels(global, compiled.compiled());
  // The layout each output got on the device (chosen by the compiler for `any`).
  for (const std::string& name : program.outputs) (*layouts)[name] = lang::ToSpec(compiled.bound().Tensor(name).layout);
  progress.Set(fmt::format("run: {} kernels on {}", compiled.compiled().kernels.size(), device->id()));
  return compiled.Run(inputs);
}

void RunRun(const RunOptions& opts, const GlobalOptions& global) {
  bool ref = IsReferenceTarget(opts.target);
  if (ref && !opts.kernel.empty())
    TILEC_USER_ERROR("--tile and --rank choose compiled kernels' tiles; the reference target 'ref' has no kernels");
  Progress progress(!global.quiet && Progress::StderrIsTerminal(), {}, {}, global.progress_delay);
  std::vector<compiler::StageTime> timings;
  ProgramFile file = ReadProgramFile(opts.file, opts.shapes, opts.layouts, global);
  lang::ast::Function f = Timed(global, "parse", [&] { return ParseSource(file.source); }, &timings);

  // Check the requested outputs before any work, so a typo costs nothing.
  std::vector<std::string> outputs = OutputNames(f);
  std::map<std::string, std::string> out_files = SplitNameValues(file.Rename(opts.outs), "--out");
  for (const auto& [name, unused] : out_files) {
    if (!Contains(outputs, name))
      TILEC_USER_ERROR("--out {}: '{}' is not an output of the program (outputs: {})", file.UserName(name),
                       file.UserName(name), JoinNames(outputs));
  }

  const ShapeLayoutArgs& args = file.args;
  std::map<std::string, InputSource> inputs = LoadInputs(opts, f, file, global);
  std::map<std::string, lang::Shape> shapes;
  std::map<std::string, lang::Tensor> tensors;
  std::vector<std::string> origins;
  for (auto& [name, in] : inputs) {
    shapes.emplace(name, in.tensor.shape());
    if (!file.constants.count(name))
      origins.push_back(fmt::format("{} = {} ({})", name, lang::ToString(in.tensor.shape()), in.origin));
    tensors.emplace(name, std::move(in.tensor));
  }

  // Shapes come from the input files, so a binding error says which file gave which shape.
  lang::Program program = Timed(global, "bind", [&] {
    return BindWithLayouts(f, shapes, args.layouts, fmt::format("input shapes: {}", fmt::join(origins, ", ")));
  }, &timings);
  std::string device_id(kReferenceTarget);
  std::map<std::string, std::string> layouts;  // per output, on the device
  std::map<std::string, lang::Tensor> results = Timed(global, fmt::format("run [{}]", opts.target), [&] {
    if (ref) {
      progress.Set("run: the reference evaluator");
      ProgressTicker ticker(progress);
      return lang::Evaluate(program, tensors);
    }
    return RunOnDevice(opts, program, tensors, global, progress, &device_id, &layouts);
  }, &timings);
  std::map<std::string, lang::Tensor> reference;
  if (opts.check) {
    progress.Set("check: the reference evaluator");
    ProgressTicker ticker(progress);
    reference = Timed(global, "run [ref] for --check", [&] { return lang::Evaluate(program, tensors); }, &timings);
  }
  progress.Clear();

  Json json_outputs = Json::Array();
  int mismatched = 0;
  std::vector<std::string> check_lines;
  for (const std::string& name : outputs) {
    auto it = results.find(name);
    TILEC_CHECK(it != results.end(), "target '{}' did not produce output '{}'", opts.target, name);
    const lang::Tensor& t = it->second;
    auto fit = out_files.find(name);
    if (fit != out_files.end())
      Timed(global, "write " + fit->second, [&] { runtime::WriteNpy(fit->second, t); });
    std::optional<CheckResult> check;
    if (opts.check) {
      check = CompareOutput(name, t, reference.at(name), opts);
      mismatched += !check->ok();
      check_lines.push_back(CheckLine(file.UserName(name), t.shape(), *check, t.size()));
    }
    const lang::TensorDecl& decl = program.Tensor(name);
    // An `any` output: the layout the compiler chose (the data is logical whatever it is).
    std::string layout = decl.layout.any && layouts.count(name) ? layouts.at(name) : decl.layout.name;
    if (!opts.json) {
      if (decl.layout.any && layouts.count(name)) fmt::print("{}: layout any -> {}\n", name, layout);
      if (out_files.empty()) fmt::print("{}\n", Summary(file.UserName(name), t));
      continue;
    }
    Json o = Json::Object();
    o.Set("name", file.UserName(name)).Set("dtype", lang::Name(t.dtype())).Set("shape", ShapeJson(t.shape()));
    o.Set("layout", layout);
    if (fit != out_files.end()) o.Set("file", fit->second);
    OutputStats stats = Stats(t);
    bool any = t.size() > stats.nans;
    o.Set("min", any ? Json(stats.min) : Json()).Set("max", any ? Json(stats.max) : Json());
    o.Set("mean", any ? Json(stats.mean) : Json()).Set("nans", stats.nans);
    if (check) {
      Json c = Json::Object();
      c.Set("max_abs_error", check->max_abs).Set("max_rel_error", check->max_rel);
      c.Set("mismatches", check->bad).Set("verdict", check->ok() ? "OK" : "MISMATCH");
      if (!check->ok()) c.Set("first_mismatch", Json::Object()
                                                    .Set("flat_index", check->first_bad)
                                                    .Set("got", check->got)
                                                    .Set("expected", check->want));
      o.Set("check", std::move(c));
    }
    json_outputs.Push(std::move(o));
  }
  if (!opts.json)
    for (const std::string& line : check_lines) fmt::print("{}\n", line);
  if (opts.json) {
    Json j = Json::Object();
    j.Set("file", opts.file).Set("target", opts.target).Set("device", device_id);
    j.Set("outputs", std::move(json_outputs));
    if (opts.check)
      j.Set("check", Json::Object()
                         .Set("rtol", opts.rtol)
                         .Set("atol", opts.atol)
                         .Set("verdict", mismatched == 0 ? "OK" : "MISMATCH"));
    Json t = Json::Object();
    for (const compiler::StageTime& st : timings) t.Set(st.stage, st.ms);
    j.Set("timings_ms", std::move(t));
    fmt::print("{}\n", j.Dump(2));
  }
  if (mismatched > 0)
    TILEC_USER_ERROR("--check: {} of {} outputs differ from the reference evaluator on {} (rtol {}, "
                     "atol {})", mismatched, outputs.size(), opts.target, opts.rtol, opts.atol);
}

}  // namespace

Command AddRunCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* app = parent.add_subcommand("run", "Run a Tile program on .npy (or random) inputs");
  app->footer(Footer(
      "Input shapes come from the .npy files. Without --out, one line per output is printed:\n"
      "name, shape, min, max, mean.\n\nLayouts: inputs and outputs are logical (row-major) tensors "
      "whatever their layout;\nthe runtime packs inputs into their layouts on the device and unpacks "
      "outputs.\nThe reference target ignores layouts.\n\nExamples:\n"
      "  tilec run examples/conv_relu.tile --in D=d.npy --in K=k.npy --out R=r.npy\n"
      "  tilec run examples/conv_relu.tile --random-inputs -s D=f32[1,8,8,4] -s K=f32[3,3,4,4]\n"
      "  tilec run examples/conv_relu.tile --random-inputs -s D=f32[1,8,8,4] -s K=f32[3,3,4,4] --check\n"
      "  tilec run examples/conv_relu.tile --random-inputs -s D=f32[1,8,8,4] -s K=f32[3,3,4,4] --check --json\n"
      "  tilec run examples/conv_relu.tile --target opencl --in D=d.npy --layout 'D=order(0,3,1,2)' "
      "--in K=k.npy"));
  app->add_option("file", opts->file, std::string(kProgramFileHelp))->required()->type_name("FILE");
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
  AddWeightsOption(app);
  AddShapeLayoutOptions(app, opts->shapes, opts->layouts,
                        "Shape of a random input and optionally its layout, e.g. -s A=f32[32,224,224,64] or "
                        "-s A=f32[1,64,56,56]:nChw16c (layouts: oneDNN tags such as acdb or aBcd16b, named "
                        "formats such as nhwc, nChw16c, b_fs_yx_fsv16, NCHW4, CHWN4, row-major, order(p0,...), "
                        "strides(s0,...); see docs/layouts.md and `tilec layout`)")
      ->needs(random);
  AddSeedOption(app, opts->seed)->needs(random);
  AddTargetOption(app, opts->target, "to run on", /*with_ref=*/true);
  AddKernelOptions(app, opts->kernel);
  CLI::Option* check = app->add_flag(
      "--check", opts->check,
      "Also run the reference evaluator on the same inputs and compare every output: one line per "
      "output with the max absolute and relative error and OK or MISMATCH; exit 1 on a mismatch");
  app->add_option("--rtol", opts->rtol,
                  "--check: relative tolerance (|got - want| <= atol * scale + rtol * |want|, scale: the "
                  "output's largest magnitude, at least 1)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->needs(check);
  app->add_option("--atol", opts->atol, "--check: absolute tolerance, times the output's largest magnitude where above 1")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->needs(check);
  AddJsonFlag(app, opts->json,
              "file, target, device, outputs [{name, dtype, shape, layout, file, min, max, mean, nans, "
              "check {max_abs_error, max_rel_error, mismatches, verdict, first_mismatch}}], check {rtol, atol, "
              "verdict}, timings_ms {stage: ms}");
  return {app, [opts, &global] { RunRun(*opts, global); }};
}

}  // namespace tilec::tools
