#include "compiler/ir/kernel_signature.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "support/error.h"

namespace tilec::compiler {
namespace {

std::string_view AggName(lang::ast::AggOp op) {
  switch (op) {
    case lang::ast::AggOp::Sum: return "sum";
    case lang::ast::AggOp::Prod: return "prod";
    case lang::ast::AggOp::Max: return "max";
    case lang::ast::AggOp::Min: return "min";
    case lang::ast::AggOp::Assign: return "assign";
  }
  return "?";
}

std::string_view CombName(lang::ast::CombOp op) {
  switch (op) {
    case lang::ast::CombOp::None: return "none";
    case lang::ast::CombOp::Mul: return "mul";
    case lang::ast::CombOp::Add: return "add";
    case lang::ast::CombOp::Eq: return "eq";
    case lang::ast::CombOp::Cond: return "cond";
  }
  return "?";
}

// Tensor names -> position-based names: accesses "$a<k>" (the first access
// of a tensor), post-op results "$t<k>".
class Renamer {
 public:
  explicit Renamer(const FlatContraction& flat) {
    for (size_t a = 0; a < flat.accesses.size(); ++a)
      names_.emplace(flat.accesses[a].tensor, fmt::format("$a{}", a));
    for (size_t p = 0; p < flat.post_ops.size(); ++p)
      names_.insert_or_assign(flat.post_ops[p].output, fmt::format("$t{}", p));
  }
  std::string operator()(const std::string& tensor) const {
    auto it = names_.find(tensor);
    return it != names_.end() ? it->second : "$?";
  }

 private:
  std::map<std::string, std::string> names_;
};

// Rows permuted into canonical column order, as text.
std::string Row(const std::vector<int64_t>& row, const std::vector<int>& order) {
  std::vector<int64_t> r;
  for (int i : order) r.push_back(i < static_cast<int>(row.size()) ? row[i] : 0);
  return fmt::format("{}", fmt::join(r, ","));
}

// The canonical index order: by everything the signature says about an index
// that does not depend on the order of the others.
std::vector<int> CanonicalOrder(const KernelSpec& spec) {
  const FlatContraction& flat = spec.flat;
  int n = flat.num_indices();
  std::vector<std::vector<int64_t>> keys(n);
  for (int i = 0; i < n; ++i) {
    std::vector<int64_t>& k = keys[i];
    k.push_back(flat.indices[i].range);
    for (const FlatAccess& a : flat.accesses) k.push_back(a.strides[i]);
    for (const auto& c : spec.coords.coeffs) k.push_back(i < static_cast<int>(c.size()) ? c[i] : 0);
    for (const auto* list : {&flat.constraints, &flat.padding}) {
      std::vector<std::pair<int64_t, int64_t>> coeffs;
      for (const FlatConstraint& c : *list) coeffs.emplace_back(c.lhs[i], c.rhs);
      std::sort(coeffs.begin(), coeffs.end());
      k.push_back(static_cast<int64_t>(coeffs.size()));
      for (auto [a, b] : coeffs) {
        k.push_back(a);
        k.push_back(b);
      }
    }
  }
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return keys[a] < keys[b]; });
  return order;
}

}  // namespace

std::vector<int64_t> ToCanonical(const KernelSignature& s, const std::vector<int64_t>& tile) {
  TILEC_CHECK(tile.size() == s.order.size(), "tile of {} sizes for {} indices", tile.size(), s.order.size());
  std::vector<int64_t> out;
  for (int i : s.order) out.push_back(tile[i]);
  return out;
}

std::vector<int64_t> FromCanonical(const KernelSignature& s, const std::vector<int64_t>& tile) {
  TILEC_CHECK(tile.size() == s.order.size(), "tile of {} sizes for {} indices", tile.size(), s.order.size());
  std::vector<int64_t> out(tile.size());
  for (size_t c = 0; c < tile.size(); ++c) out[s.order[c]] = tile[c];
  return out;
}

KernelSignature SignKernel(const KernelSpec& spec) {
  TILEC_CHECK(IsFlatKind(spec.kind), "kernel {} ({}) has no flat form to sign", spec.name, Name(spec.kind));
  const FlatContraction& flat = spec.flat;
  std::vector<int> order = CanonicalOrder(spec);
  Renamer rename(flat);
  std::string s = fmt::format("kind {}\n", Name(spec.kind));
  s += fmt::format("agg {} {} {} contraction={} reached_only={}\n", AggName(flat.agg_op),
                   CombName(flat.comb_op), lang::Name(flat.agg_type), flat.generate_contraction ? 1 : 0,
                   spec.store_reached_only ? 1 : 0);
  s += "ranges";
  for (int i : order) s += fmt::format(" {}", flat.indices[i].range);
  s += fmt::format("\ninputs {}\n", flat.num_inputs);
  for (const FlatAccess& a : flat.accesses)
    s += fmt::format("access {} off {} limit {} strides {}\n", lang::Name(a.dtype), a.offset, a.limit,
                     Row(a.strides, order));
  // Row order follows the index names: sort the rows.
  auto rows = [&](std::string_view what, const std::vector<FlatConstraint>& list) {
    std::vector<std::string> lines;
    for (const FlatConstraint& c : list) lines.push_back(fmt::format("{} ({}) <= {}\n", what, Row(c.lhs, order), c.rhs));
    std::sort(lines.begin(), lines.end());
    for (const std::string& l : lines) s += l;
  };
  rows("constraint", flat.constraints);
  rows("padding", flat.padding);
  std::vector<std::string> vars;
  for (const FlatContraction::VarForm& v : flat.vars)
    vars.push_back(fmt::format("var ({}) + {}\n", Row(v.coeffs, order), v.offset));
  std::sort(vars.begin(), vars.end());
  for (const std::string& v : vars) s += v;
  for (const lang::ElementwiseOp& op : flat.post_ops) {
    std::string args;
    for (const lang::Operand& o : op.operands)
      args += " " + (o.is_tensor ? rename(o.tensor) : lang::ToString(o.scalar));
    s += fmt::format("post {} = {} {} axis {}:{}\n", rename(op.output), lang::Name(op.fn),
                     lang::Name(op.compute_type), op.axis, args);
  }
  s += "writes";
  for (const std::string& t : flat.kernel_outputs) s += " " + rename(t);
  s += "\n";
  for (size_t d = 0; d < spec.coords.coeffs.size(); ++d)
    s += fmt::format("coord ({}) + {}\n", Row(spec.coords.coeffs[d], order),
                     d < spec.coords.constant.size() ? spec.coords.constant[d] : 0);

  std::string hash = Fnv1a64Hex(s);
  return {std::move(s), std::move(hash), std::move(order)};
}

std::string Fnv1a64Hex(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace tilec::compiler
