// lang::Gradient: derived gradients checked against central finite
// differences of the reference evaluator in f64, for every differentiable
// example of examples/ and for programs that exercise each rule; the derived
// programs compiled through the normal pipeline on the llvm device and
// compared with the evaluator; the unsupported cases' errors.
//
// Tolerances. Finite differences: h = 1e-5 on inputs of magnitude <= 1, in
// f64; the truncation error is O(h^2) and the rounding error O(1e-16 / h),
// both far below |fd - grad| <= 1e-6 * (1 + |fd|), which a wrong rule misses
// by orders of magnitude. Compiled (f32) against the evaluator (f32):
// 1e-4 relative, as the other pipeline tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <random>
#include <set>

#include "tests/unit/pipeline_check.h"
#include "tile_lang/gradient.h"
#include "tile_lang/printer.h"

namespace tilec {
namespace {

using lang::DataType;
using lang::Shape;

// An input of a case: its dims (f64 unless `integer`), the range of its
// random values, and the factor between its gradient and the finite
// differences (-1 under reverse_grad(X, 1.0)).
struct In {
  std::vector<int64_t> dims;
  double lo = -1, hi = 1;
  bool integer = false;
  double factor = 1;
};
using Inputs = std::map<std::string, In>;

struct Example {
  std::string name;
  Inputs inputs;
};
void PrintTo(const Example& e, std::ostream* os) { *os << e.name; }

// The differentiable examples with small shapes (sizes that do not divide
// tiles).
const std::vector<Example>& Differentiable() {
  static const std::vector<Example> examples = {
      {"attributes_escapes", {{"lower", {{7}}}, {"B", {{7}}}}},
      {"avgpool_2x2", {{"I", {{2, 5, 7, 3}}}}},
      {"axpy", {{"Alpha", {{}}}, {"X", {{7}}}, {"Y", {{7}}}}},
      {"batch_norm",
       {{"X", {{2, 3, 5, 4}}}, {"Mean", {{4}}}, {"Var", {{4}, 0.2, 1}}, {"Gamma", {{4}}}, {"Beta", {{4}}}}},
      {"batched_matmul", {{"X", {{2, 5, 7}}}, {"Y", {{2, 7, 3}}}}},
      {"bias_broadcast", {{"X", {{2, 3, 5, 4}}}, {"Bias", {{4}}}, {"S", {{5, 1}}}}},
      {"binary_crossentropy", {{"P", {{7}, 0.1, 0.9, false, -1}}, {"T", {{7}, 0, 1}}}},
      {"builtin_softmax", {{"X", {{5, 7}}}}},
      {"casts", {{"X", {{7}}}, {"K", {{7}, -8, 8, true}}}},
      {"concat", {{"A", {{5, 3}}}, {"B", {{5, 4}}}}},
      {"conv1d", {{"I", {{2, 7, 3}}}, {"W", {{3, 3, 4}}}}},
      {"conv2d_dilation2", {{"I", {{1, 7, 9, 2}}}, {"F", {{3, 3, 2, 3}}}}},
      {"conv2d_stride2", {{"I", {{1, 7, 9, 2}}}, {"F", {{3, 3, 2, 3}}}}},
      {"conv2d_valid", {{"I", {{1, 7, 9, 2}}}, {"F", {{3, 3, 2, 3}}}}},
      {"conv3d", {{"I", {{1, 5, 4, 5, 2}}}, {"F", {{3, 3, 3, 2, 2}}}}},
      {"conv_relu", {{"D", {{1, 5, 7, 3}}}, {"K", {{3, 3, 4, 3}}}}},
      {"cumsum", {{"I", {{5, 7}}}}},
      {"depthwise_conv2d", {{"I", {{1, 5, 7, 3}}}, {"F", {{3, 3, 3}}}}},
      {"diagonal", {{"I", {{5, 5}}}}},
      {"dot_product", {{"A", {{7}}}, {"B", {{7}}}}},
      {"f16_ops", {{"A", {{5, 7}}}, {"B", {{7}}}}},
      {"f64_ops", {{"A", {{7}}}, {"B", {{7}}}}},
      {"gather", {{"D", {{5, 3}}}, {"Idx", {{2, 3}, -1, 6, true}}}},
      {"global_avg_pool", {{"I", {{2, 5, 7, 3}}}}},
      {"index_tril", {{"I", {{5, 7}}}}},
      {"interleave_max", {{"I", {{5, 7}}}}},
      {"layer_norm", {{"X", {{5, 7}}}, {"Gamma", {{7}}}, {"Beta", {{7}}}}},
      {"leaky_relu", {{"X", {{5, 7}}}}},
      {"math_fns", {{"X", {{7}, -0.9, 0.9}}, {"P", {{7}, 0.1, 1}}}},
      {"matmul", {{"A", {{5, 7}}}, {"B", {{7, 3}}}}},
      {"matmul_bias_relu", {{"A", {{5, 7}}}, {"W", {{7, 3}}}, {"Bias", {{3}}}}},
      {"max_axis", {{"X", {{5, 7}}}}},
      {"maxpool_2x2", {{"I", {{1, 5, 7, 3}}}}},
      {"maxpool_3x3_same", {{"I", {{1, 5, 7, 3}}}}},
      {"mean_axes", {{"X", {{3, 5, 7}}}}},
      {"min_axis", {{"X", {{5, 7}}}}},
      {"outer_product", {{"A", {{5}}}, {"B", {{7}}}}},
      {"pad_to_multiple", {{"I", {{7}}}}},
      {"pointwise_conv", {{"I", {{1, 5, 7, 3}}}, {"F", {{3, 4}}}}},
      {"relu", {{"X", {{3, 5, 7}}}}},
      {"repeat", {{"I", {{2, 3, 5}}}}},
      {"reshape", {{"I", {{3, 5, 7}}}}},
      {"reverse", {{"I", {{5, 7}}}}},
      {"rounding", {{"X", {{7}}}, {"Y", {{7}}}}},
      {"scatter", {{"E", {{5, 3}}}, {"Idx", {{5}, -1, 4, true}}, {"V", {{4}}}}},
      {"select", {{"F", {{5, 7}}}, {"A", {{5, 7}}}, {"B", {{5, 7}}}}},
      {"sigmoid", {{"X", {{5, 7}}}}},
      {"slice", {{"I", {{5, 7}}}}},
      {"softmax", {{"X", {{5, 7}}}}},
      {"subsample", {{"I", {{5, 7}}}}},
      {"sum_axis", {{"X", {{3, 5, 7}}}}},
      {"tanh", {{"X", {{5, 7}}}}},
      {"trace", {{"I", {{5, 5}}}}},
      {"transpose", {{"I", {{5, 7}}}}},
      {"upsample_nearest", {{"I", {{5, 7}}}}},
      {"upsample_zero_insert", {{"I", {{5, 7}}}}},
      {"variable_input", {{"I", {{2, 3, 4}}}}},
      {"zero_pad", {{"I", {{5, 7}}}}},
  };
  return examples;
}

// The examples without a gradient check, and why. Those whose reason starts
// with "error:" must fail with a UserError containing the rest.
const std::map<std::string, std::string>& Skipped() {
  static const std::map<std::string, std::string> skipped = {
      {"argmax", "its output is an integer (no float output to differentiate)"},
      {"compare", "its outputs are bools"},
      {"int_arith", "an integer program (bit operations need integer inputs)"},
      {"logical_ops", "its outputs are bools"},
      {"one_hot", "its output is a bool"},
      {"precedence", "an integer program (bit operations need integer inputs)"},
      {"prng", "its only input is the u32 random state"},
      {"shape", "its output is an integer"},
      {"cumprod", "error:product aggregation"},
      {"prod_reduce", "error:product aggregation"},
      {"maxplus", "error:max/min of a combination"},
  };
  return skipped;
}

std::string ReadExample(const std::string& name) {
  std::string path = fmt::format("{}/examples/{}.tile", TILEC_SOURCE_DIR, name);
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::map<std::string, Shape> ShapesOf(const Inputs& inputs, DataType fp) {
  std::map<std::string, Shape> shapes;
  for (const auto& [name, in] : inputs) shapes[name] = Shape{in.integer ? DataType::I32 : fp, in.dims};
  return shapes;
}

// Random inputs for `bound`'s inputs: the ranges of `inputs` where given,
// [-1, 1) otherwise; integers uniform in their range.
std::map<std::string, lang::Tensor> RandomTensors(const lang::Program& bound, const Inputs& inputs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::string, lang::Tensor> out;
  for (const std::string& name : bound.inputs) {
    lang::Tensor t(bound.Tensor(name).shape);
    auto it = inputs.find(name);
    In range = it == inputs.end() ? In{} : it->second;
    for (int64_t i = 0; i < t.size(); ++i) {
      if (lang::IsFloat(t.dtype())) {
        t.SetDouble(i, std::uniform_real_distribution<double>(range.lo, range.hi)(rng));
      } else {
        t.SetInt(i, std::uniform_int_distribution<int64_t>(static_cast<int64_t>(range.lo),
                                                           static_cast<int64_t>(range.hi))(rng));
      }
    }
    out.emplace(name, std::move(t));
  }
  return out;
}

lang::Program BindText(const std::string& text, const std::map<std::string, Shape>& shapes) {
  return lang::Bind(lang::Parse(MakeSource("gradient.tile", text)), shapes);
}

// sum over the differentiated outputs O of <O_grad, O(inputs)>.
double Loss(const lang::Program& forward, const lang::GradientProgram& g,
            const std::map<std::string, lang::Tensor>& inputs, const std::map<std::string, lang::Tensor>& seeds) {
  auto outputs = lang::Evaluate(forward, inputs);
  double loss = 0;
  for (const auto& [out, incoming] : g.incoming) {
    const lang::Tensor& o = outputs.at(out);
    const lang::Tensor& s = seeds.at(incoming);
    for (int64_t i = 0; i < o.size(); ++i) loss += o.GetDouble(i) * s.GetDouble(i);
  }
  return loss;
}

// Derives the gradient of `source` (bound to `inputs` in f64) with respect to
// every float input, of every f64 output, and compares it with central finite
// differences at up to `max_points` elements per input. Returns the gradient
// program.
lang::GradientProgram CheckGradient(const std::string& source, const Inputs& inputs, const std::string& what,
                                    int max_points = 48) {
  lang::ast::Function f = lang::Parse(MakeSource(what, source));
  auto shapes = ShapesOf(inputs, DataType::F64);
  lang::Program forward = lang::Bind(f, shapes);
  lang::GradientOptions options;
  for (const std::string& o : forward.outputs)
    if (forward.Tensor(o).shape.dtype == DataType::F64) options.outputs.push_back(o);
  lang::GradientProgram g = lang::Gradient(f, shapes, options);
  std::string text = lang::Print(g.function);
  SCOPED_TRACE(what + ":\n" + text);
  lang::Program derived = BindText(text, g.input_shapes);
  auto values = RandomTensors(derived, inputs, 7);
  std::map<std::string, lang::Tensor> x, seeds;
  for (auto& [name, t] : values) (forward.tensors.count(name) && shapes.count(name) ? x : seeds).emplace(name, t);
  auto grads = lang::Evaluate(derived, values);
  const double h = 1e-5;
  int checked = 0;
  for (const auto& [input, out] : g.gradients) {
    const lang::Tensor& grad = grads.at(out);
    EXPECT_EQ(grad.shape(), x.at(input).shape()) << input;
    int64_t n = grad.size();
    int64_t step = std::max<int64_t>(1, n / max_points);
    for (int64_t i = 0; i < n; i += step) {
      auto plus = x, minus = x;
      plus.at(input).SetDouble(i, x.at(input).GetDouble(i) + h);
      minus.at(input).SetDouble(i, x.at(input).GetDouble(i) - h);
      double fd = inputs.at(input).factor * (Loss(forward, g, plus, seeds) - Loss(forward, g, minus, seeds)) / (2 * h);
      double got = grad.GetDouble(i);
      EXPECT_NEAR(got, fd, 1e-6 * (1 + std::fabs(fd))) << what << ": " << out << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 0) << what;
  return g;
}

// Derives the gradient in f32, compiles it for the llvm device and compares
// its outputs with the evaluator's on the same inputs.
void CheckCompiled(const std::string& source, const Inputs& inputs, const std::string& what) {
  auto device = testing::DeviceFor("llvm");
  ASSERT_TRUE(device) << "no llvm device";
  lang::ast::Function f = lang::Parse(MakeSource(what, source));
  auto shapes = ShapesOf(inputs, DataType::F32);
  lang::Program forward = lang::Bind(f, shapes);
  lang::GradientOptions options;
  for (const std::string& o : forward.outputs)
    if (forward.Tensor(o).shape.dtype == DataType::F32) options.outputs.push_back(o);
  if (options.outputs.empty()) return;
  lang::GradientProgram g = lang::Gradient(f, shapes, options);
  std::string text = lang::Print(g.function);
  SCOPED_TRACE(what + " (f32):\n" + text);
  lang::Program derived = BindText(text, g.input_shapes);
  compiler::CompileOptions compile;
  compile.hw = device->hardware_model();
  auto program = testing::CompileCase(device, derived, compile);
  if (!device->WhyCannotRun().empty()) return;
  auto values = RandomTensors(derived, inputs, 11);
  auto expected = lang::Evaluate(derived, values);
  auto actual = program->Run(values);
  EXPECT_TRUE(testing::OutputsMatch(expected, actual, what, 1e-4));
}

class ExampleGradient : public ::testing::TestWithParam<Example> {};

TEST_P(ExampleGradient, MatchesFiniteDifferences) {
  const Example& e = GetParam();
  CheckGradient(ReadExample(e.name), e.inputs, e.name);
}

TEST_P(ExampleGradient, CompilesAndMatchesEvaluator) {
  const Example& e = GetParam();
  CheckCompiled(ReadExample(e.name), e.inputs, e.name);
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleGradient, ::testing::ValuesIn(Differentiable()),
                         [](const auto& info) { return info.param.name; });

// Every example is either checked or skipped with a reason; the skipped ones
// that are unsupported fail with a clear error.
TEST(GradientExamples, EveryExampleIsCoveredOrSkippedWithAReason) {
  std::set<std::string> checked;
  for (const Example& e : Differentiable()) checked.insert(e.name);
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(TILEC_SOURCE_DIR) / "examples")) {
    if (entry.path().extension() != ".tile") continue;
    std::string name = entry.path().stem().string();
    bool skipped = Skipped().count(name) > 0;
    EXPECT_TRUE(checked.count(name) || skipped)
        << "examples/" << name << ".tile: add it to Differentiable() or Skipped() in " << __FILE__;
    EXPECT_FALSE(checked.count(name) && skipped) << name;
  }
}

TEST(GradientExamples, UnsupportedExamplesFailWithTheStatement) {
  const std::map<std::string, Inputs> inputs = {
      {"cumprod", {{"I", {{7}}}}}, {"prod_reduce", {{"X", {{5, 7}}}}}, {"maxplus", {{"A", {{5, 7}}}, {"B", {{7, 3}}}}}};
  for (const auto& [name, reason] : Skipped()) {
    if (reason.rfind("error:", 0) != 0) continue;
    lang::ast::Function f = lang::Parse(MakeSource(name + ".tile", ReadExample(name)));
    try {
      lang::Gradient(f, ShapesOf(inputs.at(name), DataType::F32));
      ADD_FAILURE() << name << ": no error";
    } catch (const UserError& err) {
      std::string text = err.Render(200);
      EXPECT_NE(text.find(reason.substr(6)), std::string::npos) << text;
      EXPECT_NE(text.find(name + ".tile:"), std::string::npos) << "no location: " << text;
    }
  }
}

}  // namespace
}  // namespace tilec
