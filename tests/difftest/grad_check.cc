#include "tests/difftest/grad_check.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

#include "runtime/program.h"
#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/gradient.h"
#include "tile_lang/parser.h"
#include "tile_lang/printer.h"

namespace tilec::difftest {
namespace {

using Tensors = std::map<std::string, lang::Tensor>;

// Floats uniform in [-1, 1] (continuous: no ties between window elements);
// integers and bools as `tilec run --random-inputs` makes them.
Tensors MakeInputs(const lang::Program& bound, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensors inputs;
  for (size_t i = 0; i < bound.inputs.size(); ++i) {
    lang::Tensor t(bound.Tensor(bound.inputs[i]).shape);
    if (lang::IsFloat(t.dtype())) {
      for (int64_t k = 0; k < t.size(); ++k) t.SetDouble(k, std::uniform_real_distribution<double>(-1, 1)(rng));
    } else {
      lang::FillRandom(t, seed + i);
    }
    inputs.emplace(bound.inputs[i], std::move(t));
  }
  return inputs;
}

// sum over the differentiated outputs of <incoming gradient, output>, and
// the sum of the terms' magnitudes (the scale of its rounding error).
std::pair<double, double> Loss(const lang::Program& forward, const lang::GradientProgram& g, const Tensors& x,
                               const Tensors& seeds) {
  Tensors out = lang::Evaluate(forward, x);
  double loss = 0, scale = 0;
  for (const auto& [name, incoming] : g.incoming) {
    const lang::Tensor& o = out.at(name);
    const lang::Tensor& s = seeds.at(incoming);
    for (int64_t i = 0; i < o.size(); ++i) {
      loss += o.GetDouble(i) * s.GetDouble(i);
      scale += std::fabs(o.GetDouble(i) * s.GetDouble(i));
    }
  }
  return {loss, scale};
}

// kInvalid, with the reason in `finding` (difftest --grad counts them).
Verdict Skip(Finding* finding, std::string why) {
  *finding = {"skipped", "", std::move(why)};
  return Verdict::kInvalid;
}

}  // namespace

Verdict CheckGradient(const Prog& p, const std::vector<Backend>& backends, bool, Finding* finding) {
  std::map<std::string, lang::Shape> shapes;
  for (const Input& in : p.inputs) {
    lang::Shape s = InputShape(p, in);
    if (lang::IsFloat(s.dtype)) s.dtype = DataType::F64;
    shapes.emplace(in.name, s);
  }
  lang::ast::Function f;
  lang::Program forward;
  try {
    f = lang::Parse(MakeSource("difftest.tile", ToText(p)));
    forward = lang::Bind(f, shapes);
  } catch (const UserError&) {
    return Skip(finding, "does not bind in f64");  // e.g. bit operations on an integer input
  }
  // An f32 or f16 value inside (a cast) would make finite differences noise.
  for (const auto& [name, decl] : forward.tensors)
    if (lang::IsFloat(decl.shape.dtype) && decl.shape.dtype != DataType::F64)
      return Skip(finding, "computes in f16 or f32");

  lang::GradientProgram g;
  lang::Program derived;
  try {
    g = lang::Gradient(f, shapes);
    derived = lang::Bind(lang::Parse(MakeSource("gradient.tile", lang::Print(g.function))), g.input_shapes);
  } catch (const UserError& e) {
    // Nothing float to differentiate, or a statement without a gradient rule.
    const std::string& m = e.message();
    return Skip(finding, m.find("no float") != std::string::npos ? "nothing float to differentiate"
                         : m.find("product aggregation") != std::string::npos ? "unsupported: product aggregation"
                         : m.find("combination") != std::string::npos ? "unsupported: max/min of a combination"
                         : m.find("reached twice") != std::string::npos ? "unsupported: max/min element reached twice"
                                                                         : "unsupported: " + m);
  } catch (const InternalError& e) {
    *finding = {"grad-internal-error", "", e.Render()};
    return Verdict::kFail;
  }
  Tensors values = MakeInputs(derived, 1), x, seeds;
  for (auto& [name, t] : values) (shapes.count(name) ? x : seeds).emplace(name, t);
  Tensors grads;
  try {
    grads = lang::Evaluate(derived, values);
    Loss(forward, g, x, seeds);
  } catch (const UserError&) {
    return Skip(finding, "the evaluator rejects it");  // e.g. conflicting assignments
  }

  for (const auto& [input, out] : g.gradients) {
    const lang::Tensor& grad = grads.at(out);
    const int64_t n = grad.size();
    const int64_t step = std::max<int64_t>(1, n / 16);
    for (int64_t i = 0; i < n; i += step) {
      const double want = grad.GetDouble(i);
      bool agreed = false, finite = std::isfinite(want);
      std::string tried;
      for (double h : {1e-6, 1e-4, 1e-8}) {
        if (!finite) break;
        Tensors plus = x, minus = x;
        plus.at(input).SetDouble(i, x.at(input).GetDouble(i) + h);
        minus.at(input).SetDouble(i, x.at(input).GetDouble(i) - h);
        auto [lp, sp] = Loss(forward, g, plus, seeds);
        auto [lm, sm] = Loss(forward, g, minus, seeds);
        const double fd = (lp - lm) / (2 * h);
        if (!std::isfinite(fd)) {
          finite = false;
          break;
        }
        // FD's rounding error is about eps * scale / h; its truncation error O(h^2).
        const double tol = 1e-5 * (1 + std::fabs(want)) + 1e-15 * (sp + sm) / h;
        tried += fmt::format(" h={:g}: {:.9g} (tolerance {:.2g});", h, fd, tol);
        if (std::fabs(fd - want) <= tol) {
          agreed = true;
          break;
        }
      }
      if (finite && !agreed) {
        *finding = {"grad-mismatch", "",
                    fmt::format("{}[{}] = {:.9g}; finite differences:{}", out, i, want, tried)};
        return Verdict::kFail;
      }
    }
  }

  for (const Backend& b : backends) {
    try {
      runtime::Program program = runtime::Program::Compile(derived, b.device);
      Tensors actual = program.Run(values);
      for (const auto& [input, out] : g.gradients) {
        const lang::Tensor& want = grads.at(out);
        const lang::Tensor& got = actual.at(out);
        double amax = 0;
        for (int64_t i = 0; i < want.size(); ++i) amax = std::max(amax, std::fabs(want.GetDouble(i)));
        for (int64_t i = 0; i < want.size(); ++i) {
          const double w = want.GetDouble(i), v = got.GetDouble(i);
          if ((std::isnan(w) && std::isnan(v)) || w == v) continue;
          if (!(std::fabs(w - v) <= 1e-7 * (1 + amax))) {
            *finding = {"grad-mismatch", b.name,
                        fmt::format("compiled {}[{}] = {:.12g}, evaluator {:.12g}", out, i, v, w)};
            return Verdict::kFail;
          }
        }
      }
    } catch (const Error& e) {
      *finding = {"grad-compile-error", b.name, e.Render()};
      return Verdict::kFail;
    }
  }
  return Verdict::kPass;
}

}  // namespace tilec::difftest
