// The gradient stage's deriver (gradient.h): walks a bound program's ops in
// reverse and writes each one's gradient statements. Internal to tile_lang:
// gradient.cc drives it and holds the elementwise rules' use and the
// bookkeeping; grad_contraction.cc holds the contraction and special rules.
#pragma once

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "support/error.h"
#include "tile_lang/ast.h"
#include "tile_lang/grad_index.h"
#include "tile_lang/gradient.h"
#include "tile_lang/program.h"
#include "tile_lang/to_ast.h"

namespace tilec::lang::grad {

using ast::ExprPtr;

inline ExprPtr Call(const std::string& name, std::vector<ExprPtr> args) {
  return ast::MakeCall(name, std::move(args));
}
// Adds the tensors `e` (or the statement `st`) reads to `names`.
void CollectNames(const ast::Expr& e, std::set<std::string>& names);
void CollectNames(const ast::Statement& st, std::set<std::string>& names);

class Deriver {
 public:
  Deriver(const ast::Function& f, const Program& prog, std::map<std::string, double> factors)
      : f_(f), prog_(prog), factors_(std::move(factors)) {
    for (const auto& in : f.inputs) {
      used_.insert(in.name);
      used_.insert(in.dims.begin(), in.dims.end());
    }
    for (const auto& st : f.body)
      used_.insert(st.kind == ast::Statement::Kind::Assignment ? st.assignment.name : st.contraction.output.name);
    for (const auto& [name, decl] : prog.tensors) used_.insert(name);
  }

  GradientProgram Run(const GradientOptions& options);

 private:
  struct Grad {
    std::string name;
    bool owned;  // a statement made for this gradient alone (which may be renamed)
    // Set: the tensor has these dims, which broadcast to the gradient's
    // (ContributeBroadcast); Finalize broadcasts it.
    std::optional<std::vector<int64_t>> narrow = std::nullopt;
  };

  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int k = 2; used_.count(name); ++k) name = fmt::format("{}_{}", base, k);
    used_.insert(name);
    return name;
  }
  // A forward tensor's name in the derived program: temporaries `_T3` become `T3`.
  std::string Name(const std::string& t) {
    if (t.empty() || t[0] != '_') return t;
    auto it = renamed_.find(t);
    if (it == renamed_.end()) it = renamed_.emplace(t, Fresh(t.substr(1))).first;
    return it->second;
  }
  std::string GradBase(const std::string& t) { return Name(t) + "_grad"; }
  const Shape& ShapeOf(const std::string& t) const { return prog_.Tensor(t).shape; }
  bool NeedsGrad(const std::string& t) const {
    return reach_.count(t) && !constant_.count(t) && IsFloat(ShapeOf(t).dtype);
  }

  [[noreturn]] void Fail(const SourceSpan& span, const std::string& what) const {
    TILEC_USER_ERROR_AT(prog_.source, span, "cannot differentiate this statement: {}", what);
  }

  std::string Emit(const std::string& base, ExprPtr value) {
    std::string name = Fresh(base);
    backward_.push_back(AssignmentStatement(name, std::move(value)));
    return name;
  }
  std::string Emit(const std::string& base, ast::Contraction c) {
    c.output.name = Fresh(base);
    std::string name = c.output.name;
    backward_.push_back(ContractionStatement(std::move(c)));
    return name;
  }
  static ast::TensorRef Ref(const std::string& name, const std::vector<Polynomial>& index) {
    ast::TensorRef r;
    r.name = name;
    for (const Polynomial& p : index) r.indices.push_back(PolynomialExpr(p));
    return r;
  }
  static std::vector<ExprPtr> Sizes(const std::vector<int64_t>& dims) {
    std::vector<ExprPtr> sizes;
    for (int64_t d : dims) sizes.push_back(ast::MakeInt(d));
    return sizes;
  }

  void Contribute(const std::string& t, std::string name, const std::vector<int64_t>& dims, DataType dtype,
                  bool owned);
  void ContributeExpr(const std::string& t, const ExprPtr& value, const std::vector<int64_t>& dims,
                      DataType dtype);
  void ContributeBroadcast(const std::string& t, std::string name, const std::vector<int64_t>& dims,
                           DataType dtype);
  bool IsBroadcast(const ContractionOp& c, const ContractionOp::Access& a) const;
  std::optional<Grad> Finalize(const std::string& t, bool narrow_ok = false);
  Grad Materialize(const std::string& t, const std::string& name, const std::vector<int64_t>& dims);
  std::optional<std::string> BatchVar(const Gather& g, const ContractionOp& c) const;
  std::vector<ast::Constraint> Constraints(const ContractionOp& c);
  std::string Filled(const std::string& t, int64_t value);
  ast::Contraction Write(Gather g, const ContractionOp& c, const std::string& out, ast::AggOp agg,
                         ast::CombOp comb);

  // Whether a caller can name forward tensor `t` (GradientOptions::saved):
  // not a temporary (`_T3`) nor reverse_grad's (ReverseGrad).
  bool Saveable(const std::string& t) const { return !t.empty() && t[0] != '_' && !factors_.count(t); }
  std::string RectifiedInput(const ElementwiseOp& op) const;
  void Elementwise(const ElementwiseOp& op, Grad g);
  void Contraction(const ContractionOp& c, const std::string& g);
  void Extremum(const ContractionOp& c, const std::string& g);
  std::optional<std::pair<std::string, std::vector<Polynomial>>> WindowKey(const ContractionOp& c,
                                                                           const std::string& g);
  void Default(const ContractionOp& c, const std::string& g);
  void Special(const SpecialOp& op, const std::string& g);
  // The forward ops the backward statements need, except those whose
  // results are all in `saved`; `reads` gets the named forward tensors the
  // backward statements read through temporaries only (what a caller may
  // save), `needed` every tensor the returned ops and the backward read.
  std::vector<ast::Statement> Forward(const std::set<std::string>& saved, std::vector<std::string>& reads,
                                      std::set<std::string>& needed);

  const ast::Function& f_;
  const Program& prog_;
  std::map<std::string, double> factors_;  // reverse_grad: tensor -> its gradient's factor
  std::set<std::string> used_;
  std::map<std::string, std::string> renamed_;
  std::set<std::string> reach_;  // tensors that depend on an input being differentiated
  std::set<std::string> constant_;  // max/min results the outputs do not depend on (ShiftFree)
  std::map<std::string, std::vector<Grad>> contribs_;
  std::map<std::pair<std::string, int64_t>, std::string> filled_;  // Filled's tensors
  std::vector<ast::Statement> backward_;
};

}  // namespace tilec::lang::grad
