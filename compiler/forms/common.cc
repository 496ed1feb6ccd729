#include "compiler/forms/common.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <memory>

#include "compiler/sem/builder.h"
#include "support/error.h"

namespace tilec::compiler {

using lang::ast::AggOp;
using namespace sem::builder;

int64_t TotalL2Bytes(const HardwareModel& hw) {
  return SaturatingMul(hw.l2_bytes, std::max<int64_t>(hw.compute_units, 1));
}

bool FitsInHalfTheLastLevelCache(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw) {
  if (hw.l3_bytes <= 0) return false;
  int64_t bytes = 0;
  for (const std::vector<std::string>* names : {&spec.outputs, &spec.inputs})
    for (const std::string& t : *names) {
      const lang::TensorDecl& d = program.Tensor(t);
      bytes = SaturatingAdd(bytes, SaturatingMul(d.layout.elements, lang::ByteSize(d.shape.dtype)));
    }
  return bytes <= hw.l3_bytes / 2;
}

std::string Sanitize(const std::string& s) {
  std::string r;
  for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "v" + r;
  return r;
}

std::vector<std::string> IndexNames(const FlatContraction& flat) {
  std::vector<std::string> names;
  std::map<std::string, int> seen;
  for (int i = 0; i < flat.num_indices(); ++i) {
    std::string s = Sanitize(flat.indices[i].name);
    if (seen[s]++) s += fmt::format("_{}", i);
    names.push_back(s);
  }
  return names;
}

lang::DataType IndexTypeFor(const FlatContraction& flat) {
  const int64_t kMax = (int64_t{1} << 31) - 1;
  for (const FlatAccess& a : flat.accesses) {
    int64_t lo = a.offset, hi = a.offset;
    for (int i = 0; i < flat.num_indices(); ++i) {
      int64_t span = CheckedMul(a.strides[i], flat.indices[i].range, "an address");
      (span < 0 ? lo : hi) += span;
    }
    if (lo < -kMax || hi > kMax || a.limit > kMax) return lang::DataType::I64;
  }
  for (const FlatIndex& i : flat.indices)
    if (i.range > kMax / 2) return lang::DataType::I64;
  // A constraint's sides are index-typed too: `a < -4294967297` on small
  // tensors (infeasible, but still compiled) needs i64.
  for (const auto* list : {&flat.constraints, &flat.padding})
    for (const FlatConstraint& c : *list) {
      int64_t lo = 0, hi = 0;
      for (int i = 0; i < flat.num_indices(); ++i) {
        int64_t span = CheckedMul(c.lhs[i], flat.indices[i].range, "a constraint");
        (span < 0 ? lo : hi) += span;
        if (lo < -kMax / 2 || hi > kMax / 2) return lang::DataType::I64;
      }
      if (c.rhs < -kMax / 2 || c.rhs > kMax / 2) return lang::DataType::I64;
    }
  return lang::DataType::I32;
}

std::string ParamName(const std::string& tensor, int position) {
  std::string s = "p" + std::to_string(position) + "_";
  for (char c : tensor) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

std::vector<sem::Param> BufferParams(const KernelSpec& spec, const lang::Program& program) {
  std::vector<sem::Param> params;
  int pos = 0;
  for (const std::string& t : spec.outputs) {
    sem::Type elem = sem::Type::Scalar(program.Tensor(t).shape.dtype);
    params.push_back({ParamName(t, pos++), sem::Type::Pointer(elem, sem::AddressSpace::Global), true});
  }
  for (const std::string& t : spec.inputs) {
    sem::Type elem = sem::Type::Scalar(program.Tensor(t).shape.dtype);
    params.push_back(
        {ParamName(t, pos++), sem::Type::Pointer(elem, sem::AddressSpace::Global, true), true});
  }
  return params;
}

GeneratedKernel StartCpuKernel(const KernelSpec& spec, const lang::Program& program,
                               std::vector<sem::Expr>& params, std::vector<sem::Stmt>& top) {
  GeneratedKernel out;
  out.function.name = spec.name;
  out.function.index_type = lang::DataType::I64;
  out.function.params = BufferParams(spec, program);
  for (const sem::Param& p : out.function.params) params.push_back(sem::builder::_Var(p.name, p.type));
  top.push_back(sem::builder::_Comment(spec.flat.comment.empty() ? spec.name : spec.flat.comment));
  return out;
}

GeneratedKernel EndCpuKernel(GeneratedKernel out, std::vector<sem::Stmt> top, std::array<int64_t, 3> global) {
  out.function.body = sem::builder::_Block(std::move(top));
  out.function.work_group_size = std::array<int64_t, 3>{1, 1, 1};
  out.local = {1, 1, 1};
  out.global = global;
  return out;
}

const FlatAccess& PointAccess(const KernelSpec& spec, const std::string& tensor) {
  const FlatContraction& flat = spec.flat;
  if (flat.accesses.at(0).tensor == tensor) return flat.accesses[0];
  for (size_t a = flat.first_post_op_input(); a < flat.accesses.size(); ++a)
    if (flat.accesses[a].tensor == tensor) return flat.accesses[a];
  bool written = std::find(flat.kernel_outputs.begin(), flat.kernel_outputs.end(), tensor) !=
                 flat.kernel_outputs.end();
  TILEC_CHECK(written, "kernel {} has no point access for {}", spec.name, tensor);
  return flat.accesses[0];
}

sem::Expr BufferOf(const KernelSpec& spec, const std::vector<sem::Expr>& params,
                   const std::string& tensor) {
  for (size_t p = 0; p < spec.outputs.size(); ++p)
    if (spec.outputs[p] == tensor) return params.at(p);
  for (size_t p = 0; p < spec.inputs.size(); ++p)
    if (spec.inputs[p] == tensor) return params.at(spec.outputs.size() + p);
  TILEC_UNREACHABLE("kernel {} has no buffer for {}", spec.name, tensor);
}

void DeclareGridPositions(const FlatContraction& flat, const std::vector<std::string>& names,
                          const std::vector<int>& grid, sem::Expr id, std::vector<sem::Stmt>& top,
                          std::vector<sem::Expr>& pos) {
  for (size_t k = 0; k < grid.size(); ++k) {
    int i = grid[k];
    int64_t range = flat.indices[i].range;
    std::string name = names[i] + "_0";
    top.push_back(_Declare(sem::Type::Index(), name, k + 1 == grid.size() ? id : id % range));
    pos[i] = _Var(name, sem::Type::Index());
    if (k + 1 != grid.size()) id = id / range;
  }
}

sem::Expr AggIdentity(AggOp agg, const sem::Type& t) {
  bool is_float = lang::IsFloat(t.dtype);
  switch (agg) {
    case AggOp::Sum: return is_float ? _Float(0, t) : _LimitConst(sem::LimitKind::Zero, t);
    case AggOp::Prod: return is_float ? _Float(1, t) : _LimitConst(sem::LimitKind::One, t);
    case AggOp::Max:
      return is_float ? _Float(-std::numeric_limits<double>::infinity(), t) : _LimitConst(sem::LimitKind::Min, t);
    case AggOp::Min:
      return is_float ? _Float(std::numeric_limits<double>::infinity(), t) : _LimitConst(sem::LimitKind::Max, t);
    case AggOp::Assign: break;
  }
  TILEC_UNREACHABLE("an assignment has no identity");
}

sem::Expr AggCombine(AggOp agg, sem::Expr a, sem::Expr b) {
  switch (agg) {
    case AggOp::Sum: return a + b;
    case AggOp::Prod: return a * b;
    case AggOp::Max: return _Max(a, b);
    case AggOp::Min: return _Min(a, b);
    case AggOp::Assign: break;
  }
  TILEC_UNREACHABLE("an assignment has no combine");
}

sem::Expr MulAdd(const HardwareModel& hw, sem::Expr a, sem::Expr b, sem::Expr acc) {
  return hw.has_fma ? sem::builder::_Fma(std::move(a), std::move(b), std::move(acc))
                    : sem::builder::_Mad(std::move(a), std::move(b), std::move(acc));
}

sem::Expr AggCombineBool(AggOp agg, sem::Expr acc, sem::Expr v) {
  switch (agg) {
    case AggOp::Sum:
    case AggOp::Max: return _LogicalOr(acc, v);
    case AggOp::Prod:
    case AggOp::Min: return _LogicalAnd(acc, v);
    case AggOp::Assign: break;
  }
  return v;
}

FormPlan StartPlan(Form form, const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw,
                   const CodegenOptions& options) {
  FormPlan plan;
  plan.form = form;
  plan.spec = &spec;
  plan.program = &program;
  plan.hw = &hw;
  plan.options = options;
  return plan;
}

FormPlan KeepState(FormPlan plan, std::shared_ptr<const FormState> state, std::string text) {
  plan.state = std::move(state);
  plan.text = std::move(text);
  return plan;
}

GeneratedKernel FinishKernel(const FormPlan& plan, GeneratedKernel kernel) {
  kernel.form = plan.form;
  kernel.plan_text = plan.text;
  return kernel;
}

bool PaddingNeedsZeros(const KernelSpec& spec) {
  return !spec.flat.padding.empty() && (!spec.flat.post_ops.empty() || !spec.flat.generate_contraction);
}

bool LargerThanTheCaches(int64_t bytes, int64_t factor, const HardwareModel& hw) {
  return bytes > SaturatingMul(TotalL2Bytes(hw), factor);
}

bool StreamingStoresPay(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw,
                        int64_t bytes, int64_t factor, int64_t run_bytes) {
  return run_bytes >= hw.mem_width && LargerThanTheCaches(bytes, factor, hw) &&
         !FitsInHalfTheLastLevelCache(spec, program, hw);
}

}  // namespace tilec::compiler
