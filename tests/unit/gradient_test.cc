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

// With the forward tensors the backward reads passed in (GradientOptions::
// saved, as a training step passes its forward run's results), the gradient
// program computes none of them and gives the same gradients as the one that
// computes them again.
TEST_P(ExampleGradient, SavedForwardTensorsGiveTheSameGradients) {
  const Example& e = GetParam();
  lang::ast::Function f = lang::Parse(MakeSource(e.name, ReadExample(e.name)));
  auto shapes = ShapesOf(e.inputs, DataType::F64);
  lang::Program forward = lang::Bind(f, shapes);
  lang::GradientOptions options;
  for (const std::string& o : forward.outputs)
    if (forward.Tensor(o).shape.dtype == DataType::F64) options.outputs.push_back(o);
  lang::GradientProgram plain = lang::Gradient(f, shapes, options);
  if (plain.forward_reads.empty()) return;  // the backward reads no forward tensor (a linear program)
  options.saved = plain.forward_reads;
  lang::GradientProgram saved = lang::Gradient(f, shapes, options);
  std::string text = lang::Print(saved.function);
  SCOPED_TRACE(e.name + " with saved tensors:\n" + text);
  EXPECT_EQ(saved.forward_reads, plain.forward_reads);
  for (const lang::ast::Statement& st : saved.function.body) {
    const std::string& def = st.kind == lang::ast::Statement::Kind::Assignment ? st.assignment.name
                                                                               : st.contraction.output.name;
    EXPECT_TRUE(std::find(plain.forward_reads.begin(), plain.forward_reads.end(), def) == plain.forward_reads.end())
        << "the gradient program computes the saved tensor " << def;
  }
  // The forward run: the program with the saved tensors as extra outputs.
  lang::ast::Function with_saved = f;
  for (const std::string& t : plain.forward_reads)
    if (std::none_of(f.outputs.begin(), f.outputs.end(), [&](const auto& o) { return o.name == t; }))
      with_saved.outputs.push_back({t, {}});
  auto x = RandomTensors(forward, e.inputs, 5);
  auto forward_values = lang::Evaluate(lang::Bind(with_saved, shapes), x);
  lang::Program plain_program = BindText(lang::Print(plain.function), plain.input_shapes);
  auto values = RandomTensors(plain_program, e.inputs, 9);
  for (auto& [name, t] : x) values.at(name) = t;
  auto want = lang::Evaluate(plain_program, values);
  for (const std::string& t : plain.forward_reads) values[t] = forward_values.at(t);
  auto got = lang::Evaluate(BindText(text, saved.input_shapes), values);
  EXPECT_TRUE(testing::OutputsMatch(want, got, e.name, 1e-12));
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


// Every differentiable elementwise function of the table (grad_rules.h), with
// tensors in every operand position and broadcasting operands.
TEST(GradientRules, ElementwiseTableMatchesFiniteDifferences) {
  const char* source = R"(
function (A[N, M], B[N, M], P[N, M], Row[M], Col[N, One], S[]) -> (O) {
  T1 = A / B + A % B - B * A + -A;
  T2 = pow(P, A) + pow(P, 2) + exp(A) + log(P) + sqrt(P) + tanh(A) + sigmoid(A) + erf(A);
  T3 = sin(A) + cos(A) + tan(A) + sinh(A) + cosh(A) + asin(A) + acos(A) + atan(A);
  T4 = abs(A) + min(A, B) + max(A, B) + floor(B) + ceil(B) + round(B) + relu(A);
  T5 = (A > B ? A * Row : B * Col) * S;
  O = T1 + T2 + T3 + T4 + T5 + as_float(A, 64) + Row;
})";
  Inputs inputs = {{"A", {{5, 7}, -0.9, 0.9}}, {"B", {{5, 7}, 0.5, 2}},  {"P", {{5, 7}, 0.2, 2}},
                   {"Row", {{7}}},            {"Col", {{5, 1}}},        {"S", {{}}}};
  CheckGradient(source, inputs, "elementwise");
  CheckCompiled(source, inputs, "elementwise");
}

// Contractions: the same tensor twice, `+` and `== ?` combinations, `<` with
// a default, a rank-0 output, an `=` with a default at an offset.
TEST(GradientRules, ContractionFormsMatchFiniteDifferences) {
  const char* ordered = R"(
function (A[N, M], B[M], Idx[N], Cls[M], Z[N]) -> (O, Q, R) {
  Sq[i : N] = +(A[i, j] * A[i, j]);
  Ad[i, j : N, M] = +(A[i, j] + B[j]);
  Sel[i : N] = +(Idx[i] == Cls[j] ? B[j]);
  Mn[i : N] = <(A[i, j]), j < M - 1 default Z;
  Tot[] = +(Ad[i, j]);
  O = Sq + Sel + Mn;
  Q = Tot * 2;
  Z2[i : N + 2] = =(Z[i]);
  R[i + 1 : N + 2] = =(Sq[i]) default Z2;
})";
  Inputs inputs = {{"A", {{5, 7}}}, {"B", {{7}}}, {"Idx", {{5}, 0, 3, true}}, {"Cls", {{7}, 0, 3, true}}, {"Z", {{5}}}};
  CheckGradient(ordered, inputs, "contractions");
  CheckCompiled(ordered, inputs, "contractions");
}

lang::GradientProgram Derive(const std::string& source, const std::map<std::string, Shape>& shapes,
                             lang::GradientOptions options = {}) {
  return lang::Gradient(lang::Parse(MakeSource("test.tile", source)), shapes, options);
}

std::map<std::string, lang::Tensor> EvaluateGradient(const lang::GradientProgram& g,
                                                     const std::map<std::string, std::vector<double>>& values) {
  lang::Program bound = BindText(lang::Print(g.function), g.input_shapes);
  std::map<std::string, lang::Tensor> inputs;
  for (const auto& [name, v] : values) {
    lang::Tensor t(g.input_shapes.at(name));
    EXPECT_EQ(t.size(), static_cast<int64_t>(v.size())) << name;
    for (size_t i = 0; i < v.size(); ++i) t.SetDouble(static_cast<int64_t>(i), v[i]);
    inputs.emplace(name, std::move(t));
  }
  return lang::Evaluate(bound, inputs);
}

std::vector<double> Values(const lang::Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.size(); ++i) v.push_back(t.GetDouble(i));
  return v;
}

// Ties in a max window: the whole gradient goes to the first element (the
// smallest row-major position), one element per window, as PyTorch's max
// pooling.
TEST(GradientRules, MaxWindowTiesGoToTheFirstElement) {
  auto g = Derive("function (X[N]) -> (O) { O[i : 3] = >(X[2 * i + j]), j < 3; }",
                  {{"X", Shape{DataType::F32, {7}}}});
  auto out = EvaluateGradient(g, {{"X", {1, 1, 1, 1, 1, 1, 1}}, {"O_grad", {1, 2, 4}}});
  EXPECT_EQ(Values(out.at("X_grad")), (std::vector<double>{1, 0, 2, 0, 4, 0, 0}));
  // The maximum gets it; X[4] is the maximum of two windows, and first in the second's tie.
  out = EvaluateGradient(g, {{"X", {0, 3, 1, 0, 5, 5, 2}}, {"O_grad", {1, 2, 4}}});
  EXPECT_EQ(Values(out.at("X_grad")), (std::vector<double>{0, 1, 0, 0, 6, 0, 0}));
}

// A max whose window variable does not move the input's position (its
// steps cancel: B[-i + 1, i - 1, ...] with B's dims 1) has a window of one
// position: its key is still a tensor over the window (difftest --grad seeds
// 105413 and 105919 derived `B_key = as_float(1, 64)`, a constant, and the
// gradient program failed to bind: an internal error).
TEST(GradientRules, MaxOverAWindowThatDoesNotMoveTheInput) {
  CheckGradient("function (B[N1, N0, N0, N0]) -> (T0) { T0[k : N0] = >(B[-i + N1, i - 1, k, k]); }",
                {{"B", In{{1, 1, 1, 1}}}}, "difftest --grad seed 105413");
  CheckGradient("function (A[N1, N1, N0]) -> (T4) { T0[i : N1] = >(A[i, -j + N1, j - 1]); T4 = T0; }",
                {{"A", In{{1, 1, 1}}}}, "difftest --grad seed 105919");
  CheckCompiled("function (B[N1, N0, N0, N0]) -> (T0) { T0[k : N0] = >(B[-i + N1, i - 1, k, k]); }",
                {{"B", In{{1, 1, 1, 1}}}}, "difftest --grad seed 105413, compiled");
}

// Elementwise min/max of two equal values give each half (PyTorch's rule).
TEST(GradientRules, ElementwiseMaxTiesSplitEvenly) {
  auto g = Derive("function (X[N], Y[N]) -> (O) { O = max(X, Y); }",
                  {{"X", Shape{DataType::F32, {3}}}, {"Y", Shape{DataType::F32, {3}}}});
  auto out = EvaluateGradient(g, {{"X", {1, 2, 3}}, {"Y", {1, 5, 0}}, {"O_grad", {2, 2, 2}}});
  EXPECT_EQ(Values(out.at("X_grad")), (std::vector<double>{1, 0, 2}));
  EXPECT_EQ(Values(out.at("Y_grad")), (std::vector<double>{1, 2, 0}));
}

// An input that receives no gradient (only through floor and a comparison)
// gets zeros; the signature lists the incoming gradients and the results.
TEST(GradientRules, InputWithoutGradientGetsZeros) {
  auto g = Derive("function (X[N], Y[N]) -> (O, B) { O = X + floor(Y); B = Y > 0; }",
                  {{"X", Shape{DataType::F32, {3}}}, {"Y", Shape{DataType::F32, {3}}}});
  EXPECT_EQ(g.incoming, (std::map<std::string, std::string>{{"O", "O_grad"}}));
  EXPECT_EQ(g.gradients, (std::map<std::string, std::string>{{"X", "X_grad"}, {"Y", "Y_grad"}}));
  auto out = EvaluateGradient(g, {{"X", {1, 2, 3}}, {"Y", {0.5, -1.5, 2}}, {"O_grad", {1, 2, 3}}});
  EXPECT_EQ(Values(out.at("X_grad")), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(Values(out.at("Y_grad")), (std::vector<double>{0, 0, 0}));
}

// Saved tensors are offered: the gradient program takes those it reads (a
// softmax's backward reads E and S, not Y) and computes no op behind them;
// an input or an unknown name is a user error.
TEST(GradientRules, SavedTensorsTheGradientReadsBecomeInputs) {
  const std::string softmax =
      "function (X[N, D]) -> (Y) { M[i, 0 : N, 1] = >(X[i, j]); E = exp(X - M); S[i, 0 : N, 1] = +(E[i, j]); "
      "Y = E / S; }";
  std::map<std::string, Shape> shapes = {{"X", Shape{DataType::F64, {2, 3}}}};
  auto g = Derive(softmax, shapes, {{}, {}, {"Y", "S", "E"}});
  EXPECT_EQ(g.forward_reads, (std::vector<std::string>{"E", "S"}));
  EXPECT_EQ(g.saved, (std::vector<std::string>{"S", "E"}));
  std::vector<std::string> inputs;
  for (const auto& in : g.function.inputs) inputs.push_back(in.name);
  EXPECT_EQ(inputs, (std::vector<std::string>{"X", "Y_grad", "S", "E"}));
  std::string text = lang::Print(g.function);
  EXPECT_EQ(text.find("exp("), std::string::npos) << text;
  EXPECT_EQ(text.find(">("), std::string::npos) << text;
  EXPECT_THROW(Derive(softmax, shapes, {{}, {}, {"X"}}), UserError);
  EXPECT_THROW(Derive(softmax, shapes, {{}, {}, {"Q"}}), UserError);
  EXPECT_THROW(Derive(softmax, shapes, {{}, {}, {"E", "E"}}), UserError);
}

// Names the program uses already get a suffix; temporaries are renamed.
TEST(GradientRules, NamesDoNotCollide) {
  auto g = Derive("function (X[N], O_grad[N]) -> (O) { X_grad = O_grad * 2.0; O = X * X_grad; }",
                  {{"X", Shape{DataType::F32, {3}}}, {"O_grad", Shape{DataType::F32, {3}}}},
                  {{"X"}, {}, {}});
  EXPECT_EQ(g.incoming.at("O"), "O_grad_2");
  EXPECT_EQ(g.gradients.at("X"), "X_grad_2");
  auto out = EvaluateGradient(g, {{"X", {1, 2, 3}}, {"O_grad", {1, 1, 1}}, {"O_grad_2", {1, 0, 2}}});
  EXPECT_EQ(Values(out.at("X_grad_2")), (std::vector<double>{2, 0, 4}));
}

// Softmax, log-softmax and log-sum-exp (over a max, or over a min of a 3-D
// tensor as the ONNX importer writes them) subtract the row extremum only to
// keep exp in range: their results do not depend on its value, so it is a
// constant to the gradient, without the max rule's keys and winners.
TEST(GradientRules, ShiftInvariantMaxIsAConstant) {
  const char* invariant = R"(
function (X[N, D], Z[B, C, F]) -> (Y, L, Lse, Yz) {
  M[i, 0 : N, 1] = >(X[i, j]);
  E = exp(X - M);
  S[i, 0 : N, 1] = +(E[i, j]);
  Y = E / S;
  T = X - M;
  Et = exp(T);
  St[i, 0 : N, 1] = +(Et[i, j]);
  L = T - log(St);
  Lse = M + log(S);
  Mz[n, c, 0 : B, C, 1] = <(Z[n, c, d]);
  Ez = exp(Mz - Z);
  Sz[n, c, 0 : B, C, 1] = +(Ez[n, c, d]);
  Yz = Ez / Sz;
})";
  Inputs inputs = {{"X", {{5, 7}}}, {"Z", {{2, 3, 4}}}};
  auto g = CheckGradient(invariant, inputs, "shift-invariant");
  std::string text = lang::Print(g.function);
  EXPECT_EQ(text.find("_winner"), std::string::npos) << text;
  EXPECT_EQ(text.find("_key"), std::string::npos) << text;
  CheckCompiled(invariant, inputs, "shift-invariant");
}

// Where a result depends on the extremum's value (added back; subtracted
// along the axis that is summed; a sum of shifted values; the extremum an
// output), the max rule stays and the gradients still match.
TEST(GradientRules, ShiftDependentMaxKeepsItsGradient) {
  const std::vector<std::string> dependent = {
      R"(function (X[N, D]) -> (Y) {
  M[i, 0 : N, 1] = >(X[i, j]);
  E = exp(X - M);
  S[i, 0 : N, 1] = +(E[i, j]);
  Y = E / S + M;
})",
      R"(function (X[N, D]) -> (Y) {
  M[0, j : 1, D] = >(X[i, j]);
  E = exp(X - M);
  S[i, 0 : N, 1] = +(E[i, j]);
  Y = E / S;
})",
      R"(function (X[N, D]) -> (Y) {
  M[i, 0 : N, 1] = >(X[i, j]);
  T = X - M;
  S[i, 0 : N, 1] = +(T[i, j]);
  Y = T - S;
})",
      R"(function (X[N, D]) -> (Y, M) {
  M[i, 0 : N, 1] = >(X[i, j]);
  E = exp(X - M);
  S[i, 0 : N, 1] = +(E[i, j]);
  Y = E / S;
})",
  };
  for (const std::string& source : dependent) {
    auto g = CheckGradient(source, {{"X", {{5, 7}}}}, "shift-dependent");
    EXPECT_NE(lang::Print(g.function).find("M_winner"), std::string::npos) << source;
  }
}

// Gradients that are broadcasts of a reduction's gradient (to a trailing
// axis, to a rank-0 sum, to a kept size-1 axis) are summed as broadcast
// operands and broadcast to the input's shape once.
TEST(GradientRules, BroadcastGradientsMatchFiniteDifferences) {
  const char* source = R"(
function (X[N, D], A[N, D]) -> (O) {
  S[j : D] = +(X[i, j]);
  T[] = +(X[i, j]);
  U[i, 0 : N, 1] = +(A[i, j]);
  O = S * T + U;
})";
  Inputs inputs = {{"X", {{5, 7}}}, {"A", {{5, 7}}}};
  CheckGradient(source, inputs, "broadcast gradients");
  CheckCompiled(source, inputs, "broadcast gradients");
}

// A broadcast gradient stays narrow into elementwise ops: log-softmax's
// exp reads it beside E (`T_grad = S_grad * E`, no copy of S_grad to E's
// shape); an addition passes it on to its full-shaped operands; an operand
// of another shape (B) gets it broadcast first.
TEST(GradientRules, NarrowGradientsFlowThroughElementwiseOps) {
  const char* log_softmax = R"(
function (X[N, D]) -> (L) {
  M[i, 0 : N, 1] = >(X[i, j]);
  T = X - M;
  E = exp(T);
  S[i, 0 : N, 1] = +(E[i, j]);
  L = T - log(S);
})";
  Inputs inputs = {{"X", {{5, 7}}}};
  auto g = CheckGradient(log_softmax, inputs, "log-softmax");
  std::string text = lang::Print(g.function);
  EXPECT_NE(text.find("T_grad = S_grad * E;"), std::string::npos) << text;
  EXPECT_EQ(text.find("E_grad"), std::string::npos) << text;
  CheckCompiled(log_softmax, inputs, "log-softmax");
  const char* mixed = R"(
function (X[N, D], A[N, D], B[N, One]) -> (O) {
  E = exp(X);
  F = A + B;
  G = E + F;
  S[i, 0 : N, 1] = +(G[i, j]);
  O = S * S;
})";
  Inputs mixed_inputs = {{"X", {{5, 7}}}, {"A", {{5, 7}}}, {"B", {{5, 1}}}};
  CheckGradient(mixed, mixed_inputs, "narrow gradients");
  CheckCompiled(mixed, mixed_inputs, "narrow gradients");
}

// A weight's gradient over a batch of at least 2 with at least 1024
// reduction steps per element is computed per batch element and summed
// (K_grad_part); a batch of 1 or a short reduction is not split.
TEST(GradientRules, WeightGradientSplitsTheBatch) {
  const char* conv = R"(
function (D[N, H, W, CI], K[KH, KW, CI, CO]) -> (O) {
  O[n, x, y, co : N, H, W, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]);
})";
  Inputs split = {{"D", {{2, 32, 32, 2}}}, {"K", {{3, 3, 2, 3}}}};
  auto g = CheckGradient(conv, split, "batch split", 24);
  std::string text = lang::Print(g.function);
  EXPECT_NE(text.find("K_grad_part[n, i, j, ci, co : 2, 3, 3, 2, 3] = +(D[n, i + x - 1, j + y - 1, ci] * "
                      "O_grad[n, x, y, co]);"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("K_grad[i0, i1, i2, i3 : 3, 3, 2, 3] = +(K_grad_part[b, i0, i1, i2, i3]);"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("D_grad_part"), std::string::npos) << text;
  CheckCompiled(conv, split, "batch split");
  for (const Inputs& whole : {Inputs{{"D", {{1, 32, 32, 2}}}, {"K", {{3, 3, 2, 3}}}},
                              Inputs{{"D", {{3, 8, 8, 2}}}, {"K", {{3, 3, 2, 3}}}}}) {
    auto w = Derive(conv, ShapesOf(whole, DataType::F32));
    EXPECT_EQ(lang::Print(w.function).find("_part"), std::string::npos) << lang::Print(w.function);
  }
}

// Strided windows (stride 3 over 5 taps with padding, and stride 2 in a
// max pool) are split by phase: each element of the gradient
// visits only the taps of its phase (`3 * x + xr`, xr < 3), not every x.
TEST(GradientRules, StridedWindowsSplitByPhase) {
  const char* conv = R"(
function (I[N, C], F[K, C, D]) -> (O) {
  O[x, d : (N + 1) / 3, D] = +(I[3 * x + i - 2, c] * F[i, c, d]);
})";
  Inputs inputs = {{"I", {{21, 2}}}, {"F", {{5, 2, 3}}}};
  auto g = CheckGradient(conv, inputs, "stride 3");
  std::string text = lang::Print(g.function);
  EXPECT_NE(text.find("I_grad[3 * x + xr, c : 21, 2] = +(O_grad[x - xt, d] * F[xr + 3 * xt + 2, c, d]), xr < 3;"),
            std::string::npos)
      << text;
  CheckCompiled(conv, inputs, "stride 3");
  const char* pool = R"(
function (I[N, H, W, C]) -> (O) {
  O[n, x, y, c : N, (H + 1) / 2, (W + 1) / 2, C] = >(I[n, 2 * x + i - 1, 2 * y + j - 1, c]), i < 3, j < 3;
})";
  Inputs pool_inputs = {{"I", {{2, 10, 8, 3}}}};
  g = CheckGradient(pool, pool_inputs, "max pool");
  text = lang::Print(g.function);
  EXPECT_NE(text.find("I_grad[n, 2 * x + xr, 2 * y + yr, c : 2, 10, 8, 3]"), std::string::npos) << text;
  CheckCompiled(pool, pool_inputs, "max pool");
  // An odd size: `2 * x + xr` would overhang it (a slow direct kernel), so
  // the index is made plain through the tap.
  pool_inputs = {{"I", {{2, 9, 8, 3}}}};
  g = CheckGradient(pool, pool_inputs, "max pool of odd height");
  text = lang::Print(g.function);
  EXPECT_NE(text.find("I_grad[n, i, 2 * y + yr, c : 2, 9, 8, 3]"), std::string::npos) << text;
  CheckCompiled(pool, pool_inputs, "max pool");
}

// The derived text parses back to the same AST.
TEST(GradientRules, DerivedProgramRoundTrips) {
  auto g = Derive("function (I[N, M]) -> (O) { O[i, j : 2 * N, 2 * M] = =(I[i / 2 - a / 2, j / 2 - b / 2]), a < 2, b < 2; }",
                  {{"I", Shape{DataType::F32, {3, 4}}}});
  std::string text = lang::Print(g.function);
  EXPECT_TRUE(lang::ast::Equal(lang::Parse(MakeSource("g.tile", text)), g.function)) << text;
  EXPECT_NE(text.find("I_grad[(i - a) / 2, (j - b) / 2 : 3, 4] = +(O_grad[i, j]), a < 2, b < 2;"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace tilec
