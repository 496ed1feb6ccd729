#include "compiler/ir/flat.h"

#include <fmt/format.h>

#include "support/error.h"

namespace tilec::compiler {
namespace {

std::string OperandText(const lang::Operand& o) {
  return o.is_tensor ? o.tensor : lang::ToString(o.scalar);
}

int ExpectedInputs(lang::ast::CombOp op) {
  switch (op) {
    case lang::ast::CombOp::None: return 1;
    case lang::ast::CombOp::Mul:
    case lang::ast::CombOp::Add:
    case lang::ast::CombOp::Eq: return 2;
    case lang::ast::CombOp::Cond: return 3;
  }
  return -1;
}

}  // namespace

int64_t CheckedMul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) TILEC_USER_ERROR("{} overflows 64-bit integers", what);
  return r;
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return INT64_MAX;
  return r;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return INT64_MAX;
  return r;
}

int64_t CheckedAdd(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) TILEC_USER_ERROR("{} overflows 64-bit integers", what);
  return r;
}

bool TileFits(const FlatContraction& flat, const std::vector<int64_t>& tile) {
  if (tile.size() != flat.indices.size()) return false;
  for (size_t i = 0; i < tile.size(); ++i)
    if (tile[i] < 1 || tile[i] > flat.indices[i].range) return false;
  return true;
}

void Verify(const FlatContraction& flat) {
  size_t n = flat.indices.size();
  for (const FlatIndex& idx : flat.indices)
    TILEC_CHECK(idx.range >= 1, "index {} has range {}", idx.name, idx.range);
  TILEC_CHECK(!flat.accesses.empty(), "flat contraction {} has no output access", flat.name);
  if (flat.generate_contraction) {
    TILEC_CHECK(flat.num_inputs == ExpectedInputs(flat.comb_op), "{} inputs for combination op {}",
                flat.num_inputs, static_cast<int>(flat.comb_op));
  }
  TILEC_CHECK(flat.num_inputs >= 0 &&
                  static_cast<size_t>(flat.first_post_op_input()) <= flat.accesses.size(),
              "num_inputs {} but only {} accesses", flat.num_inputs, flat.accesses.size());
  for (const FlatAccess& a : flat.accesses) {
    TILEC_CHECK(a.strides.size() == n, "access {} has {} strides for {} indices", a.tensor,
                a.strides.size(), n);
    TILEC_CHECK(a.limit >= 0, "access {} has negative limit {}", a.tensor, a.limit);
  }
  for (const auto* list : {&flat.constraints, &flat.padding})
    for (const FlatConstraint& c : *list)
      TILEC_CHECK(c.lhs.size() == n, "constraint has {} coefficients for {} indices", c.lhs.size(),
                  n);
}

std::string ToString(const lang::ElementwiseOp& op) {
  std::string args;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    if (i) args += ", ";
    args += OperandText(op.operands[i]);
  }
  if (op.fn == lang::ElemFn::Index) args += fmt::format(", {}", op.axis);
  return fmt::format("{} = {}({})", op.output, lang::Name(op.fn), args);
}

std::string ToString(const FlatContraction& flat) {
  std::string out = fmt::format("Contraction {}:\n", flat.name);
  if (!flat.comment.empty()) out += flat.comment + "\n";
  out += "Range";
  for (const FlatAccess& a : flat.accesses) out += " " + a.tensor;
  out += "\n";
  for (size_t i = 0; i < flat.indices.size(); ++i) {
    out += fmt::format("{} {}", flat.indices[i].name, flat.indices[i].range);
    for (const FlatAccess& a : flat.accesses)
      out += i < a.strides.size() ? fmt::format(" {}", a.strides[i]) : std::string(" ?");
    out += "\n";
  }
  out += "off";
  for (const FlatAccess& a : flat.accesses) out += fmt::format(" {}", a.offset);
  out += "\n";
  for (const FlatConstraint& c : flat.constraints)
    out += fmt::format("Constraint: ({}) <= {}\n", fmt::join(c.lhs, ","), c.rhs);
  for (const FlatConstraint& c : flat.padding)
    out += fmt::format("Padding unless: ({}) <= {}\n", fmt::join(c.lhs, ","), c.rhs);
  if (!flat.post_ops.empty()) {
    out += "Output operations:\n";
    for (const lang::ElementwiseOp& op : flat.post_ops) out += ToString(op) + "\n";
  }
  return out;
}

}  // namespace tilec::compiler
