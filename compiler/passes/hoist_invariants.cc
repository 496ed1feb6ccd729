#include "compiler/passes/hoist_invariants.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "compiler/ir/flat.h"

namespace tilec::compiler {
namespace {

using lang::ElementwiseOp;

bool IsFloatType(lang::DataType t) { return t == lang::DataType::F32 || t == lang::DataType::F64; }

}  // namespace

lang::Program HoistInvariants(const lang::Program& program) {
  int64_t largest = 0;
  for (const auto& [name, t] : program.tensors) largest = std::max(largest, t.shape.ElementCount());
  std::set<std::string> invariant(program.inputs.begin(), program.inputs.end());
  std::set<std::string> hoisted;  // outputs of moved ops
  std::vector<lang::Op> front, rest;
  for (const lang::Op& op : program.ops) {
    auto* e = std::get_if<ElementwiseOp>(&op);
    bool move = e && e->fn != lang::ElemFn::Index &&
                program.Tensor(e->output).shape.ElementCount() < largest &&
                std::all_of(e->operands.begin(), e->operands.end(), [&](const lang::Operand& o) {
                  return !o.is_tensor || invariant.count(o.tensor);
                });
    if (move) {
      invariant.insert(e->output);
      hoisted.insert(e->output);
      front.push_back(op);
    } else {
      rest.push_back(op);
    }
  }
  lang::Program out = program;
  out.ops = std::move(front);
  for (lang::Op& op : rest) {
    auto* e = std::get_if<ElementwiseOp>(&op);
    if (e && e->fn == lang::ElemFn::Div && IsFloatType(e->compute_type) && e->operands.size() == 2 &&
        e->operands[1].is_tensor && hoisted.count(e->operands[1].tensor)) {
      const lang::TensorDecl& b = program.Tensor(e->operands[1].tensor);
      const lang::TensorDecl& result = program.Tensor(e->output);
      if (IsFloatType(b.shape.dtype) && SaturatingMul(b.shape.ElementCount(), 16) <= result.shape.ElementCount()) {
        std::string name = fmt::format("{}_recip", b.name);
        for (int k = 1; out.tensors.count(name); ++k) name = fmt::format("{}_recip{}", b.name, k);
        lang::TensorDecl r;
        r.name = name;
        r.shape = {e->compute_type, b.shape.dims};
        r.layout = lang::RowMajorLayout(b.shape.dims);
        r.role = lang::TensorRole::Temporary;
        r.span = e->span;
        out.tensors[name] = r;
        ElementwiseOp recip;
        recip.output = name;
        recip.fn = lang::ElemFn::Div;
        lang::Operand one;
        one.is_tensor = false;
        one.scalar.dtype = e->compute_type;
        one.scalar.is_float = true;
        one.scalar.f = 1.0;
        recip.operands = {one, e->operands[1]};
        recip.compute_type = e->compute_type;
        recip.span = e->span;
        out.ops.push_back(recip);
        e->fn = lang::ElemFn::Mul;
        e->operands[1].tensor = name;
      }
    }
  }
  for (lang::Op& op : rest) out.ops.push_back(std::move(op));
  return out;
}

}  // namespace tilec::compiler
