// Test fixtures shared by the flatten, read-plan, cost-model and tile-search
// tests: bound programs built by hand (independent of the parser and binder)
// and the seed's flat table typed in from the seed's text.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/ir/flat.h"
#include "tile_lang/layout.h"
#include "tile_lang/program.h"

namespace tilec::compiler::testing {

// sum of coeff * var, plus constant.
inline lang::Polynomial Poly(std::vector<std::pair<std::string, int64_t>> terms,
                             int64_t constant = 0) {
  lang::Polynomial p;
  for (auto& [var, c] : terms)
    if (c != 0) p.terms[var] = lang::Rational(c);
  p.constant = lang::Rational(constant);
  return p;
}
inline lang::Polynomial Var(const std::string& v) { return Poly({{v, 1}}); }

inline void AddTensor(lang::Program& p, const std::string& name, std::vector<int64_t> dims,
                      lang::DataType dtype = lang::DataType::F32,
                      lang::TensorRole role = lang::TensorRole::Input) {
  lang::TensorDecl t;
  t.name = name;
  t.shape.dtype = dtype;
  t.shape.dims = std::move(dims);
  t.layout = lang::RowMajorLayout(t.shape.dims);
  t.role = role;
  p.tensors[name] = t;
}

// Index vars in name order with bounds [lo, hi].
inline void SetIndices(lang::ContractionOp& op,
                       std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> vars) {
  for (auto& [name, b] : vars) {
    op.index_vars.push_back(name);
    op.bounds.push_back({b.first, b.second});
  }
}

// The seed's program:
//   function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
//     O[n, x, y, co : N, X, Y, CO] = +(D[n, x+i-1, y+j-1, ci] * K[i, j, co, ci]);
//     R = (O > 0 ? O : 0);
//   }
// with N=32, X=Y=224, CI=CO=64, I=J=3. Its only contraction is SeedConvOp().
inline lang::Program SeedConvProgram() {
  lang::Program p;
  AddTensor(p, "D", {32, 224, 224, 64});
  AddTensor(p, "K", {3, 3, 64, 64});
  AddTensor(p, "O", {32, 224, 224, 64}, lang::DataType::F32, lang::TensorRole::Temporary);
  AddTensor(p, "_T1", {32, 224, 224, 64}, lang::DataType::Bool, lang::TensorRole::Temporary);
  AddTensor(p, "R", {32, 224, 224, 64}, lang::DataType::F32, lang::TensorRole::Output);
  p.inputs = {"D", "K"};
  p.outputs = {"R"};
  lang::ContractionOp op;
  op.output = "O";
  op.output_index = {Var("n"), Var("x"), Var("y"), Var("co")};
  op.agg = lang::ast::AggOp::Sum;
  op.comb = lang::ast::CombOp::Mul;
  op.inputs = {
      {"D", {Var("n"), Poly({{"x", 1}, {"i", 1}}, -1), Poly({{"y", 1}, {"j", 1}}, -1), Var("ci")}},
      {"K", {Var("i"), Var("j"), Var("co"), Var("ci")}}};
  SetIndices(op, {{"ci", {0, 63}},
                  {"co", {0, 63}},
                  {"i", {0, 2}},
                  {"j", {0, 2}},
                  {"n", {0, 31}},
                  {"x", {0, 223}},
                  {"y", {0, 223}}});
  p.ops.push_back(op);
  return p;
}

inline const lang::ContractionOp& FirstContraction(const lang::Program& p) {
  return std::get<lang::ContractionOp>(p.ops.at(0));
}

inline lang::Operand TensorOperand(const std::string& name) {
  lang::Operand o;
  o.is_tensor = true;
  o.tensor = name;
  return o;
}
inline lang::Operand IntOperand(int64_t v) {
  lang::Operand o;
  o.is_tensor = false;
  o.scalar.dtype = lang::DataType::I32;
  o.scalar.i = v;
  return o;
}

// The ReLU post-ops of the seed: _T1 = cmp_gt(O, 0); R = cond(_T1, O, 0).
inline std::vector<lang::ElementwiseOp> SeedPostOps() {
  lang::ElementwiseOp gt;
  gt.output = "_T1";
  gt.fn = lang::ElemFn::CmpGt;
  gt.operands = {TensorOperand("O"), IntOperand(0)};
  lang::ElementwiseOp cond;
  cond.output = "R";
  cond.fn = lang::ElemFn::Cond;
  cond.operands = {TensorOperand("_T1"), TensorOperand("O"), IntOperand(0)};
  return {gt, cond};
}

// The seed's flat table, typed in from the seed's text, with the fused ReLU
// (the kernel writes only R).
inline FlatContraction SeedConvFlat() {
  FlatContraction f;
  f.name = "kernel_ID_0";
  f.indices = {{"ci", 64}, {"co", 64}, {"i", 3}, {"j", 3}, {"n", 32}, {"x", 224}, {"y", 224}};
  int64_t d_elems = int64_t{32} * 224 * 224 * 64;
  f.accesses = {
      {"O", lang::DataType::F32, 0, {0, 1, 0, 0, 3211264, 14336, 64}, d_elems},
      {"D", lang::DataType::F32, -14400, {1, 0, 14336, 64, 3211264, 14336, 64}, d_elems},
      {"K", lang::DataType::F32, 0, {1, 64, 12288, 4096, 0, 0, 0}, 3 * 3 * 64 * 64},
  };
  f.num_inputs = 2;
  f.constraints = {{{0, 0, -1, 0, 0, -1, 0}, -1},
                   {{0, 0, 1, 0, 0, 1, 0}, 224},
                   {{0, 0, 0, -1, 0, 0, -1}, -1},
                   {{0, 0, 0, 1, 0, 0, 1}, 224}};
  f.agg_type = lang::DataType::F32;
  f.agg_op = lang::ast::AggOp::Sum;
  f.comb_op = lang::ast::CombOp::Mul;
  f.post_ops = SeedPostOps();
  f.kernel_outputs = {"R"};
  return f;
}

}  // namespace tilec::compiler::testing
