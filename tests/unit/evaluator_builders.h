// Building Programs by hand for the reference evaluator's tests
// (evaluator_contraction_test.cc, evaluator_elementwise_test.cc): no parser
// or binder, so every expected value is computed independently by the tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "tile_lang/evaluator.h"

namespace tilec::lang::eval_test {

using ast::AggOp;
using ast::CombOp;
inline constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
inline constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
inline const double kNan = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

// ---- building programs ------------------------------------------------------

inline Polynomial Poly(std::vector<std::pair<std::string, Rational>> terms, Rational constant = 0) {
  Polynomial p;
  for (auto& [v, k] : terms) p.terms[v] = k;
  p.constant = constant;
  return p;
}
inline Polynomial V(const std::string& v) { return Poly({{v, 1}}); }
inline Polynomial K(int64_t c) { return Poly({}, c); }

struct Var {
  std::string name;
  int64_t lo, hi;
};

inline ContractionOp Contraction(std::string out, std::vector<Polynomial> out_index, AggOp agg,
                          CombOp comb, std::vector<ContractionOp::Access> inputs,
                          std::vector<Var> vars,
                          std::vector<ContractionOp::Constraint> constraints = {}) {
  ContractionOp op;
  op.output = std::move(out);
  op.output_index = std::move(out_index);
  op.agg = agg;
  op.comb = comb;
  op.inputs = std::move(inputs);
  op.constraints = std::move(constraints);
  std::sort(vars.begin(), vars.end(), [](const Var& a, const Var& b) { return a.name < b.name; });
  for (const auto& v : vars) {
    op.index_vars.push_back(v.name);
    op.bounds.push_back({v.lo, v.hi});
  }
  return op;
}

inline Operand T(const std::string& name) {
  Operand o;
  o.tensor = name;
  return o;
}
inline Operand SInt(int64_t v, DataType t = DataType::I32) {
  Operand o;
  o.is_tensor = false;
  o.scalar.dtype = t;
  o.scalar.i = v;
  return o;
}
inline Operand SFloat(double v, DataType t = DataType::F32) {
  Operand o;
  o.is_tensor = false;
  o.scalar.dtype = t;
  o.scalar.is_float = true;
  o.scalar.f = v;
  return o;
}

inline ElementwiseOp Elem(std::string out, ElemFn fn, std::vector<Operand> operands, DataType compute) {
  ElementwiseOp op;
  op.output = std::move(out);
  op.fn = fn;
  op.operands = std::move(operands);
  op.compute_type = compute;
  return op;
}

inline SpecialOp Special(SpecialFn fn, std::vector<std::string> outs, std::vector<std::string> ins) {
  SpecialOp op;
  op.fn = fn;
  op.outputs = std::move(outs);
  op.inputs = std::move(ins);
  return op;
}

class Builder {
 public:
  explicit Builder(std::string text = "") { p_.source = MakeSource("test.tile", std::move(text)); }
  Builder& In(const std::string& name, Shape s) {
    p_.inputs.push_back(name);
    return Decl(name, std::move(s), TensorRole::Input);
  }
  Builder& Out(const std::string& name, Shape s) {
    p_.outputs.push_back(name);
    return Decl(name, std::move(s), TensorRole::Output);
  }
  Builder& Tmp(const std::string& name, Shape s) {
    return Decl(name, std::move(s), TensorRole::Temporary);
  }
  Builder& Do(Op op) {
    p_.ops.push_back(std::move(op));
    return *this;
  }
  const Program& program() const { return p_; }

 private:
  Builder& Decl(const std::string& name, Shape s, TensorRole role) {
    TensorDecl d;
    d.name = name;
    d.shape = std::move(s);
    d.role = role;
    p_.tensors[name] = d;
    return *this;
  }
  Program p_;
};

inline Shape S(DataType t, std::vector<int64_t> dims) { return Shape{t, std::move(dims)}; }

inline Tensor Make(Shape s, const std::vector<double>& values) {
  Tensor t(std::move(s));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.size());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.size(); ++i)
    t.SetDouble(static_cast<int64_t>(i), values[i]);
  return t;
}
inline Tensor MakeInt(Shape s, const std::vector<int64_t>& values) {
  Tensor t(std::move(s));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.size());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.size(); ++i)
    t.SetInt(static_cast<int64_t>(i), values[i]);
  return t;
}
inline Tensor Random(Shape s, uint64_t seed) {
  Tensor t(std::move(s));
  FillRandom(t, seed);
  return t;
}

inline std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.size(); ++i) v.push_back(t.GetDouble(i));
  return v;
}
inline std::vector<int64_t> Ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.size(); ++i) v.push_back(t.GetInt(i));
  return v;
}

// Evaluates and returns output `name`, checking its shape against the declaration.
inline Tensor Eval1(const Program& p, std::map<std::string, Tensor> inputs, const std::string& name) {
  auto out = Evaluate(p, inputs);
  auto it = out.find(name);
  EXPECT_NE(it, out.end()) << name;
  if (it == out.end()) return Tensor();
  EXPECT_EQ(it->second.shape(), p.tensors.at(name).shape);
  return std::move(it->second);
}
}  // namespace tilec::lang::eval_test
