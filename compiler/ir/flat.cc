#include "compiler/ir/flat.h"

#include <fmt/format.h>

#include <algorithm>

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

std::optional<AddressSpan> ReachedAddresses(const FlatContraction& flat, const FlatAccess& a,
                                            const std::vector<bool>& free) {
  const int n = flat.num_indices();
  // Groups of indices linked by the constraints that count (union-find).
  std::vector<int> root(n);
  for (int i = 0; i < n; ++i) root[i] = i;
  auto find = [&](int i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  std::vector<const FlatConstraint*> counted;
  for (const FlatConstraint& c : flat.constraints) {
    bool counts = true;
    for (int i = 0; i < n; ++i) counts &= c.lhs[i] == 0 || !free[i];
    if (!counts) continue;
    counted.push_back(&c);
    int first = -1;
    for (int i = 0; i < n; ++i) {
      if (c.lhs[i] == 0) continue;
      if (first < 0) first = i;
      root[find(i)] = find(first);
    }
  }
  AddressSpan span{a.offset, a.offset};
  auto whole_range = [&](int i) {
    int64_t reach = CheckedMul(a.strides[i], flat.indices[i].range - 1, "an address");
    (reach < 0 ? span.lo : span.hi) += reach;
  };
  constexpr int64_t kMaxPoints = 65536;
  for (int g = 0; g < n; ++g) {
    if (find(g) != g) continue;
    std::vector<int> members;
    for (int i = 0; i < n; ++i)
      if (find(i) == g) members.push_back(i);
    std::vector<const FlatConstraint*> own;
    for (const FlatConstraint* c : counted)
      for (int i : members)
        if (c->lhs[i] != 0) {
          own.push_back(c);
          break;
        }
    int64_t points = 1;
    for (int i : members) points = SaturatingMul(points, flat.indices[i].range);
    if (own.empty() || points > kMaxPoints) {
      for (int i : members) whole_range(i);
      continue;
    }
    // Every point of the group: the least and greatest offset where the
    // group's constraints hold (a constraint's other indices are in the group).
    std::vector<int64_t> at(members.size(), 0);
    std::optional<AddressSpan> group;
    for (int64_t k = 0; k < points; ++k) {
      bool holds = true;
      for (const FlatConstraint* c : own) {
        int64_t sum = 0;
        for (size_t m = 0; m < members.size(); ++m) sum += c->lhs[members[m]] * at[m];
        holds &= sum <= c->rhs;
      }
      if (holds) {
        int64_t offset = 0;
        for (size_t m = 0; m < members.size(); ++m) offset += a.strides[members[m]] * at[m];
        if (!group) group = AddressSpan{offset, offset};
        group->lo = std::min(group->lo, offset);
        group->hi = std::max(group->hi, offset);
      }
      for (size_t m = 0; m < members.size() && ++at[m] == flat.indices[members[m]].range; ++m) at[m] = 0;
    }
    if (!group) return std::nullopt;
    span.lo += group->lo;
    span.hi += group->hi;
  }
  return span;
}

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
