#include "tests/difftest/check.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "runtime/program.h"
#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/parser.h"

namespace tilec::difftest {

lang::Program BindProg(const Prog& p) {
  std::map<std::string, lang::Shape> shapes;
  for (const Input& in : p.inputs) shapes.emplace(in.name, InputShape(p, in));
  return lang::Bind(lang::Parse(MakeSource("difftest.tile", ToText(p))), shapes, p.layouts);
}

BoundFacts FactsOf(const lang::Program& bound) {
  BoundFacts f;
  for (const auto& [name, decl] : bound.tensors) f.dtypes[name] = decl.shape.dtype;
  for (const lang::Op& op : bound.ops) {
    const auto* c = std::get_if<lang::ContractionOp>(&op);
    if (!c) continue;
    std::set<std::string> out_vars;
    for (const lang::Polynomial& poly : c->output_index)
      for (const auto& [var, coeff] : poly.terms) out_vars.insert(var);
    int64_t terms = 1, box = 1;
    for (size_t k = 0; k < c->index_vars.size(); ++k) {
      const int64_t range = std::max<int64_t>(0, c->bounds[k].hi - c->bounds[k].lo + 1);
      box = std::min<int64_t>(box * std::max<int64_t>(range, 1), int64_t{1} << 40);
      if (!out_vars.count(c->index_vars[k])) terms = std::min<int64_t>(terms * std::max<int64_t>(range, 1), int64_t{1} << 40);
    }
    f.terms[c->output] = terms;
    f.box[c->output] = box;
  }
  return f;
}

namespace {

// Inputs as `tilec run --random-inputs` makes them (seed 1 + input position),
// so that the printed command line reproduces a finding.
std::map<std::string, lang::Tensor> MakeInputs(const lang::Program& bound) {
  std::map<std::string, lang::Tensor> inputs;
  for (size_t i = 0; i < bound.inputs.size(); ++i) {
    lang::Tensor t(bound.Tensor(bound.inputs[i]).shape);
    lang::FillRandom(t, 1 + i);
    inputs.emplace(bound.inputs[i], std::move(t));
  }
  return inputs;
}

// Compares one output; the float rule is |got - want| <= 2 * err, err the
// model's bound (0 for exact values), NaN only against NaN.
std::optional<std::string> Compare(const std::string& name, const lang::Tensor& got, const lang::Tensor& want,
                                   const Info& info) {
  if (got.shape() != want.shape())
    return fmt::format("{}: shape {} instead of {}", name, lang::ToString(got.shape()), lang::ToString(want.shape()));
  const bool fl = lang::IsFloat(want.dtype());
  for (int64_t i = 0; i < want.size(); ++i) {
    if (!fl) {
      if (got.GetInt(i) != want.GetInt(i))
        return fmt::format("{}[{}] = {}, expected {} (exact)", name, i, got.GetInt(i), want.GetInt(i));
      continue;
    }
    const double g = got.GetDouble(i), w = want.GetDouble(i);
    if (std::isnan(g) && std::isnan(w)) continue;
    if (g == w) continue;
    const double tol = 2 * info.err;
    if (!(std::fabs(g - w) <= tol))
      return fmt::format("{}[{}] = {:.9g}, expected {:.9g} (tolerance {:.3g}{})", name, i, g, w, tol,
                         info.exact ? ", exact value" : "");
  }
  return std::nullopt;
}

}  // namespace

Verdict Check(const Prog& p, const std::vector<Backend>& backends, bool strict, Finding* finding) {
  lang::Program bound;
  try {
    bound = BindProg(p);
  } catch (const UserError& e) {
    if (!strict) return Verdict::kInvalid;
    *finding = {"bind-rejected", "", e.Render()};
    return Verdict::kFail;
  } catch (const InternalError& e) {
    *finding = {"internal-error", "bind", e.Render()};
    return Verdict::kFail;
  }
  BoundFacts facts = FactsOf(bound);
  Analysis analysis = Analyze(p, facts.dtypes, facts.terms);
  if (!analysis.invalid.empty()) return Verdict::kInvalid;

  std::map<std::string, lang::Tensor> inputs = MakeInputs(bound);
  std::map<std::string, lang::Tensor> expected;
  try {
    expected = lang::Evaluate(bound, inputs);
  } catch (const UserError& e) {
    if (!strict) return Verdict::kInvalid;
    *finding = {"eval-error", "", e.Render()};
    return Verdict::kFail;
  } catch (const InternalError& e) {
    *finding = {"internal-error", "ref", e.Render()};
    return Verdict::kFail;
  }

  for (const Backend& b : backends) {
    std::map<std::string, lang::Tensor> actual;
    try {
      runtime::Program program = runtime::Program::Compile(bound, b.device);
      actual = program.Run(inputs);
      for (const std::string& name : bound.outputs) {
        if (!actual.count(name)) {
          *finding = {"mismatch", b.name, "no output " + name};
          return Verdict::kFail;
        }
        if (auto bad = Compare(name, actual.at(name), expected.at(name), analysis.tensors.at(name))) {
          *finding = {"mismatch", b.name, *bad};
          return Verdict::kFail;
        }
      }
    } catch (const InternalError& e) {
      *finding = {"internal-error", b.name, e.Render()};
      return Verdict::kFail;
    } catch (const UserError& e) {
      // The evaluator ran the program, so the compiler must too.
      *finding = {"user-error", b.name, e.Render()};
      return Verdict::kFail;
    } catch (const DeviceError& e) {
      *finding = {"device-error", b.name, e.Render()};
      return Verdict::kFail;
    } catch (const std::exception& e) {
      *finding = {"exception", b.name, e.what()};
      return Verdict::kFail;
    }
  }
  return Verdict::kPass;
}

}  // namespace tilec::difftest
