#include "compiler/passes/fuse_reductions.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "compiler/ir/flat.h"

namespace tilec::compiler {
namespace {

using lang::ContractionOp;
using lang::ElementwiseOp;
using lang::Program;
using lang::TensorDecl;
using lang::ast::AggOp;
using lang::ast::CombOp;

// The row space a group works over.
struct RowSpace {
  std::vector<int64_t> rows;
  int64_t length = 1;
  bool operator==(const RowSpace&) const = default;
  std::vector<int64_t> Full() const {
    std::vector<int64_t> d = rows;
    d.push_back(length);
    return d;
  }
  std::vector<int64_t> Row() const {
    std::vector<int64_t> d = rows;
    d.push_back(1);
    return d;
  }
};

bool Plain(const TensorDecl& t) { return t.layout == lang::RowMajorLayout(t.shape.dims); }

bool IsVar(const lang::Polynomial& p, const std::string& var) {
  return p.constant == lang::Rational(0) && p.terms.size() == 1 && p.terms.begin()->first == var &&
         p.terms.begin()->second == lang::Rational(1);
}

// The row space of `c` if it is a row reduction (ir/kernel.h: RowGroupSpec).
std::optional<RowSpace> RowReduction(const Program& program, const ContractionOp& c) {
  if (c.agg == AggOp::Assign || c.default_tensor || !c.constraints.empty()) return std::nullopt;
  if (c.comb != CombOp::None && c.comb != CombOp::Mul && c.comb != CombOp::Add) return std::nullopt;
  const TensorDecl& out = program.Tensor(c.output);
  lang::DataType dt = out.shape.dtype;
  if (dt != lang::DataType::F32 && dt != lang::DataType::F64 && !lang::IsInteger(dt)) return std::nullopt;
  int rank = out.shape.rank();
  if (rank < 2 || out.shape.dims.back() != 1 || !Plain(out)) return std::nullopt;
  if (static_cast<int>(c.output_index.size()) != rank || c.inputs.empty()) return std::nullopt;
  std::vector<std::string> row_vars;
  for (int d = 0; d + 1 < rank; ++d) {
    const lang::Polynomial& p = c.output_index[d];
    if (p.terms.size() != 1 || !IsVar(p, p.terms.begin()->first)) return std::nullopt;
    row_vars.push_back(p.terms.begin()->first);
  }
  if (!c.output_index.back().IsConstant() || c.output_index.back().constant != lang::Rational(0))
    return std::nullopt;
  if (std::set<std::string>(row_vars.begin(), row_vars.end()).size() != row_vars.size()) return std::nullopt;
  RowSpace space;
  space.rows.assign(out.shape.dims.begin(), out.shape.dims.end() - 1);
  std::optional<std::string> reduced;
  for (const ContractionOp::Access& a : c.inputs) {
    const TensorDecl& in = program.Tensor(a.tensor);
    if (in.shape.rank() != rank || !Plain(in) || static_cast<int>(a.index.size()) != rank) return std::nullopt;
    for (int d = 0; d + 1 < rank; ++d)
      if (!IsVar(a.index[d], row_vars[d]) || in.shape.dims[d] != space.rows[d]) return std::nullopt;
    const lang::Polynomial& last = a.index.back();
    if (last.terms.size() != 1) return std::nullopt;
    std::string j = last.terms.begin()->first;
    if (!IsVar(last, j) || std::count(row_vars.begin(), row_vars.end(), j)) return std::nullopt;
    if (reduced && (*reduced != j || in.shape.dims.back() != space.length)) return std::nullopt;
    reduced = j;
    space.length = in.shape.dims.back();
  }
  if (c.index_vars.size() != row_vars.size() + 1) return std::nullopt;
  return space;
}

// Can `t` be read broadcast to `dims` (NumPy rules, plain layout)?
bool Broadcasts(const TensorDecl& t, const std::vector<int64_t>& dims) {
  if (t.shape.rank() > static_cast<int>(dims.size()) || !Plain(t)) return false;
  size_t off = dims.size() - t.shape.dims.size();
  for (size_t d = 0; d < t.shape.dims.size(); ++d)
    if (t.shape.dims[d] != 1 && t.shape.dims[d] != dims[off + d]) return false;
  return true;
}

// Does elementwise `e` fit a group over `space`?
bool Fits(const Program& program, const ElementwiseOp& e, const RowSpace& space) {
  if (e.fn == lang::ElemFn::Index) return false;
  const TensorDecl& out = program.Tensor(e.output);
  if (!Plain(out) || (out.shape.dims != space.Full() && out.shape.dims != space.Row())) return false;
  for (const lang::Operand& o : e.operands)
    if (o.is_tensor && !Broadcasts(program.Tensor(o.tensor), out.shape.dims)) return false;
  return true;
}


std::string OutputOf(const lang::Op& op) {
  if (auto* c = std::get_if<ContractionOp>(&op)) return c->output;
  return std::get<ElementwiseOp>(op).output;
}

class Grouper {
 public:
  Grouper(const Program& p, int64_t max_row_bytes) : program_(p), max_row_bytes_(max_row_bytes) {
    for (size_t i = 0; i < p.ops.size(); ++i)
      for (const std::string& t : lang::Reads(p.ops[i])) readers_[t].push_back(i);
  }

  std::vector<FusedRowGroup> Run() {
    for (size_t i = 0; i < program_.ops.size(); ++i) {
      const lang::Op& op = program_.ops[i];
      if (auto* c = std::get_if<ContractionOp>(&op)) {
        std::optional<RowSpace> s = RowReduction(program_, *c);
        if (!s || s->length < 2) {
          Close();
          continue;
        }
        if (!has_space_ || !(space_ == *s)) {
          Close();
          space_ = *s;
          has_space_ = true;
        }
        ops_.push_back(i);
        reductions_++;
      } else if (auto* e = std::get_if<ElementwiseOp>(&op)) {
        if (has_space_ && Fits(program_, *e, space_)) {
          ops_.push_back(i);
          continue;
        }
        Close();
        // A full-shaped op may start a group (a producer of a reduction).
        const TensorDecl& out = program_.Tensor(e->output);
        if (out.shape.rank() >= 2 && out.shape.dims.back() > 1) {
          RowSpace s;
          s.rows.assign(out.shape.dims.begin(), out.shape.dims.end() - 1);
          s.length = out.shape.dims.back();
          if (Fits(program_, *e, s)) {
            space_ = std::move(s);
            has_space_ = true;
            ops_.push_back(i);
          }
        }
      } else {
        Close();
      }
    }
    Close();
    return std::move(groups_);
  }

 private:
  void Close() {
    if (has_space_ && reductions_ > 0) Emit();
    has_space_ = false;
    ops_.clear();
    reductions_ = 0;
  }

  void Emit() {
    std::set<size_t> members(ops_.begin(), ops_.end());
    std::set<std::string> computed;
    for (size_t i : ops_) computed.insert(OutputOf(program_.ops[i]));
    FusedRowGroup g;
    g.ops = ops_;
    KernelSpec& k = g.kernel;
    k.kind = KernelKind::RowGroup;
    k.row_group.rows = space_.rows;
    k.row_group.length = space_.length;
    std::set<std::string> seen_inputs;
    int64_t row_bytes = 0;
    auto row_share = [&](const TensorDecl& t) {
      if (!t.shape.dims.empty() && t.shape.dims.back() == space_.length)
        row_bytes += space_.length * std::max(1, lang::BitWidth(t.shape.dtype) / 8);
    };
    for (size_t i : ops_) {
      const lang::Op& op = program_.ops[i];
      k.row_group.ops.push_back(op);
      for (const std::string& t : lang::Reads(op))
        if (!computed.count(t) && seen_inputs.insert(t).second) {
          k.inputs.push_back(t);
          row_share(program_.Tensor(t));
        }
      std::string out = OutputOf(op);
      bool needed = std::count(program_.outputs.begin(), program_.outputs.end(), out) > 0;
      if (auto r = readers_.find(out); r != readers_.end())
        for (size_t reader : r->second) needed |= !members.count(reader);
      if (needed) {
        k.outputs.push_back(out);
        row_share(program_.Tensor(out));
      }
    }
    if (row_bytes > max_row_bytes_) return;  // the passes would re-read memory
    for (int64_t r : space_.rows)
      if (r < 1) return;  // nothing to compute
    std::vector<std::string> names;
    for (size_t i : ops_) names.push_back(OutputOf(program_.ops[i]));
    k.flat.comment = fmt::format("row group {}", fmt::join(names, ", "));
    for (size_t d = 0; d < space_.rows.size(); ++d)
      k.flat.indices.push_back({fmt::format("i{}", d), space_.rows[d]});
    k.flat.indices.push_back({"row", space_.length});
    groups_.push_back(std::move(g));
  }

  const Program& program_;
  int64_t max_row_bytes_;
  std::map<std::string, std::vector<size_t>> readers_;
  RowSpace space_;
  bool has_space_ = false;  // space_ holds the open group's row space
  std::vector<size_t> ops_;
  int reductions_ = 0;
  std::vector<FusedRowGroup> groups_;
};


}  // namespace

std::vector<FusedRowGroup> FuseRowGroups(const Program& program, int64_t max_row_bytes) {
  return Grouper(program, max_row_bytes).Run();
}

}  // namespace tilec::compiler
