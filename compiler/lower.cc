#include "compiler/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "compiler/flatten.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {

using lang::ContractionOp;
using lang::ElementwiseOp;
using lang::Program;
using lang::SpecialOp;
using lang::TensorDecl;

// Element strides per logical dimension of a plain layout (one physical dim
// per logical dim, divisor 1), or nullopt for a blocked one.
std::optional<std::vector<int64_t>> PlainStrides(const TensorDecl& t) {
  std::vector<int64_t> strides(t.shape.dims.size(), 0);
  std::vector<bool> seen(t.shape.dims.size(), false);
  if (t.layout.phys.size() != t.shape.dims.size()) return std::nullopt;
  for (const lang::PhysicalDim& p : t.layout.phys) {
    if (p.divisor != 1 || p.dim < 0 || p.dim >= static_cast<int>(strides.size()) || seen[p.dim])
      return std::nullopt;
    seen[p.dim] = true;
    strides[p.dim] = p.stride;
  }
  return strides;
}

std::vector<int64_t> RequirePlainStrides(const TensorDecl& t) {
  auto s = PlainStrides(t);
  if (!s)
    TILEC_USER_ERROR("tensor '{}' has the blocked layout {}: elementwise operations on blocked "
                     "layouts are not supported by the kernel generator yet (contractions are)",
                     t.name, ToString(t.layout));
  return *s;
}

bool IsIntegral(const lang::Polynomial& p) {
  if (!p.constant.IsInteger()) return false;
  for (const auto& [v, c] : p.terms)
    if (!c.IsInteger()) return false;
  return true;
}

bool AllIntegral(const ContractionOp& op) {
  for (const auto& p : op.output_index)
    if (!IsIntegral(p)) return false;
  for (const auto& a : op.inputs)
    for (const auto& p : a.index)
      if (!IsIntegral(p)) return false;
  for (const auto& c : op.constraints)
    if (!IsIntegral(c.poly)) return false;
  return true;
}

// Output indices (nonzero output stride) must address distinct elements:
// sorted by |stride|, each stride must step over the whole span of the
// smaller ones.
bool OutputInjective(const FlatContraction& flat) {
  std::vector<std::pair<int64_t, int64_t>> sr;  // |stride|, range
  for (int i = 0; i < flat.num_indices(); ++i) {
    int64_t s = flat.output().strides[i];
    if (s != 0 && flat.indices[i].range > 1) sr.emplace_back(s < 0 ? -s : s, flat.indices[i].range);
  }
  std::sort(sr.begin(), sr.end());
  int64_t span = 1;  // elements covered by the smaller strides
  for (auto [s, r] : sr) {
    if (s < span) return false;
    span = s * r;
  }
  return true;
}

// The output access covers its whole buffer exactly once at offset 0.
bool OutputDense(const FlatContraction& flat) {
  const FlatAccess& out = flat.output();
  // Constraints do not matter here: elements no valid point reaches are
  // written as 0 by the kernel itself (see gen_contraction.cc).
  if (out.offset != 0) return false;
  std::vector<std::pair<int64_t, int64_t>> sr;
  for (int i = 0; i < flat.num_indices(); ++i) {
    int64_t s = out.strides[i];
    if (s < 0) return false;
    if (s != 0 && flat.indices[i].range > 1) sr.emplace_back(s, flat.indices[i].range);
  }
  std::sort(sr.begin(), sr.end());
  int64_t expect = 1;
  for (auto [s, r] : sr) {
    if (s != expect) return false;
    expect = CheckedMul(s, r, "an output size");
  }
  return expect == out.limit;
}

// Coordinates of a contraction's output in its flat indices (flat.vars).
OutputCoords ContractionCoords(const ContractionOp& op, const FlatContraction& flat) {
  OutputCoords c;
  for (const lang::Polynomial& p : op.output_index) {
    std::vector<int64_t> coeffs(flat.num_indices(), 0);
    int64_t k = p.constant.num;
    for (const FlatContraction::VarForm& v : flat.vars) {
      int64_t a = p.Coeff(v.var).num;
      if (a == 0) continue;
      k = CheckedAdd(k, CheckedMul(a, v.offset, "an output coordinate"), "an output coordinate");
      for (int i = 0; i < flat.num_indices(); ++i)
        coeffs[i] = CheckedAdd(coeffs[i], CheckedMul(a, v.coeffs[i], "an output coordinate"),
                               "an output coordinate");
    }
    c.coeffs.push_back(std::move(coeffs));
    c.constant.push_back(k);
  }
  return c;
}

// Identity coordinates for a kernel whose indices are the output dims.
OutputCoords IdentityCoords(size_t rank) {
  OutputCoords c;
  for (size_t d = 0; d < rank; ++d) {
    std::vector<int64_t> coeffs(rank, 0);
    coeffs[d] = 1;
    c.coeffs.push_back(std::move(coeffs));
    c.constant.push_back(0);
  }
  return c;
}

// The access of `t`, broadcast NumPy-style to the output coordinates.
FlatAccess BroadcastAccess(const TensorDecl& t, const std::vector<int64_t>& out_dims,
                           const OutputCoords& coords, int num_indices) {
  FlatAccess a;
  a.tensor = t.name;
  a.dtype = t.shape.dtype;
  a.limit = t.layout.elements;
  a.strides.assign(num_indices, 0);
  std::vector<int64_t> strides = RequirePlainStrides(t);
  int shift = static_cast<int>(out_dims.size()) - t.shape.rank();
  TILEC_CHECK(shift >= 0, "tensor {} has a higher rank than the kernel output", t.name);
  for (int k = 0; k < t.shape.rank(); ++k) {
    int d = k + shift;
    if (t.shape.dims[k] == 1 && out_dims[d] != 1) continue;  // broadcast: stride 0
    TILEC_CHECK(t.shape.dims[k] == out_dims[d], "tensor {} dim {} does not broadcast", t.name, k);
    for (int i = 0; i < num_indices; ++i)
      a.strides[i] = CheckedAdd(a.strides[i], CheckedMul(strides[k], coords.coeffs[d][i], "a stride"),
                                "a stride");
    a.offset = CheckedAdd(a.offset, CheckedMul(strides[k], coords.constant[d], "an offset"),
                          "an offset");
  }
  return a;
}

class Lowerer {
 public:
  Lowerer(const Program& p, const LowerOptions& o) : extended_(p), program_(extended_), options_(o) {
    for (const std::string& in : p.inputs) available_.insert(in);
    for (size_t i = 0; i < p.ops.size(); ++i)
      for (const std::string& t : Reads(p.ops[i])) readers_[t].push_back(i);
    outputs_.insert(p.outputs.begin(), p.outputs.end());
    PropagateLayouts();
  }

  KernelPlan Run() {
    done_.assign(program_.ops.size(), false);
    for (size_t i = 0; i < program_.ops.size(); ++i) {
      if (done_[i]) continue;
      done_[i] = true;
      const lang::Op& op = program_.ops[i];
      if (auto* c = std::get_if<ContractionOp>(&op)) LowerContraction(i, *c);
      else if (auto* e = std::get_if<ElementwiseOp>(&op)) LowerElementwise(i, *e);
      else LowerSpecial(std::get<SpecialOp>(op));
    }
    // Temporaries: written by one kernel, read by another, not a program output.
    std::set<std::string> written;
    for (const KernelSpec& k : plan_.kernels)
      for (const std::string& o : k.outputs) written.insert(o);
    for (const std::string& t : written)
      if (!outputs_.count(t)) plan_.temporaries.push_back(t);
    return std::move(plan_);
  }

 private:
  static std::vector<std::string> Reads(const lang::Op& op) {
    std::vector<std::string> r;
    if (auto* c = std::get_if<ContractionOp>(&op)) {
      for (const auto& a : c->inputs) r.push_back(a.tensor);
      if (c->default_tensor) r.push_back(*c->default_tensor);
    } else if (auto* e = std::get_if<ElementwiseOp>(&op)) {
      for (const auto& o : e->operands)
        if (o.is_tensor) r.push_back(o.tensor);
    } else {
      for (const auto& t : std::get<SpecialOp>(op).inputs) r.push_back(t);
    }
    return r;
  }

  std::string NextName() { return fmt::format("kernel_{}", plan_.kernels.size()); }

  // Is `t` read by an op outside `group` (op indices), or a program output?
  bool NeededOutside(const std::string& t, const std::set<size_t>& group) const {
    if (outputs_.count(t)) return true;
    auto it = readers_.find(t);
    if (it == readers_.end()) return false;
    for (size_t r : it->second)
      if (!group.count(r)) return true;
    return false;
  }

  // Greedily collects later elementwise ops that can join a kernel whose
  // output has `dims` (see lower.h). `local` holds the tensors the kernel
  // computes so far.
  std::vector<size_t> CollectFusable(size_t after, const std::vector<int64_t>& dims,
                                     std::set<std::string> local) {
    std::vector<size_t> fused;
    if (!options_.fuse) return fused;
    // Results are written through their own plain access, or through the
    // root's access when laid out like the root (blocked layouts included).
    const lang::Layout& root_layout = program_.Tensor(*local.begin()).layout;
    for (size_t j = after + 1; j < program_.ops.size(); ++j) {
      if (done_[j]) continue;
      auto* e = std::get_if<ElementwiseOp>(&program_.ops[j]);
      if (!e || program_.Tensor(e->output).shape.dims != dims) continue;
      const TensorDecl& result = program_.Tensor(e->output);
      if (!PlainStrides(result) && !(result.layout == root_layout)) continue;
      bool ok = true;
      for (const auto& o : e->operands) {
        if (!o.is_tensor || local.count(o.tensor)) continue;
        const TensorDecl& t = program_.Tensor(o.tensor);
        if (!available_.count(o.tensor) || !PlainStrides(t) || t.shape.rank() > (int)dims.size()) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      fused.push_back(j);
      local.insert(e->output);
    }
    return fused;
  }

  // Adds post-ops `fused` to `k`: their input accesses, their written
  // outputs, and the kernel's buffer lists. `root_outputs` are tensors the
  // kernel computes before the post-ops.
  void AddPostOps(KernelSpec& k, const std::vector<size_t>& fused, const std::vector<int64_t>& dims,
                  std::set<size_t> group, const std::set<std::string>& root_outputs) {
    FlatContraction& flat = k.flat;
    for (size_t j : fused) group.insert(j);
    std::set<std::string> computed = root_outputs;
    // Tensors that already have a post-op access (a contraction input read at
    // the contraction's own points does not count: post-ops read at the
    // output's coordinates).
    std::set<std::string> have;
    for (size_t a = flat.first_post_op_input(); a < flat.accesses.size(); ++a)
      have.insert(flat.accesses[a].tensor);
    std::vector<FlatAccess> extra_inputs, extra_outputs;
    for (size_t j : fused) {
      const ElementwiseOp& e = std::get<ElementwiseOp>(program_.ops[j]);
      flat.post_ops.push_back(e);
      for (const auto& o : e.operands) {
        if (!o.is_tensor || computed.count(o.tensor) || have.count(o.tensor)) continue;
        extra_inputs.push_back(
            BroadcastAccess(program_.Tensor(o.tensor), dims, k.coords, flat.num_indices()));
        have.insert(o.tensor);
        AddInput(k, o.tensor);
      }
      computed.insert(e.output);
      done_[j] = true;
    }
    for (size_t j : fused) {
      const std::string& out = std::get<ElementwiseOp>(program_.ops[j]).output;
      if (!NeededOutside(out, group)) continue;
      const TensorDecl& result = program_.Tensor(out);
      if (result.layout == program_.Tensor(flat.accesses[0].tensor).layout) {
        have.insert(out);  // written through the output's access
        flat.kernel_outputs.push_back(out);
        continue;
      }
      FlatAccess access = BroadcastAccess(result, dims, k.coords, flat.num_indices());
      // A result laid out like the kernel's output is written through the
      // output's access (as the seed's table shows: R is stored at O's place).
      bool same_as_output = access.strides == flat.accesses[0].strides &&
                            access.offset == flat.accesses[0].offset &&
                            access.limit == flat.accesses[0].limit;
      if (!have.count(out) && out != flat.accesses[0].tensor && !same_as_output)
        extra_outputs.push_back(std::move(access));
      have.insert(out);
      flat.kernel_outputs.push_back(out);
    }
    for (auto& a : extra_inputs) flat.accesses.push_back(std::move(a));
    for (auto& a : extra_outputs) flat.accesses.push_back(std::move(a));
  }

  static void AddInput(KernelSpec& k, const std::string& t) {
    if (std::find(k.inputs.begin(), k.inputs.end(), t) == k.inputs.end() &&
        std::find(k.outputs.begin(), k.outputs.end(), t) == k.outputs.end())
      k.inputs.push_back(t);
  }

  void Finish(KernelSpec k) {
    k.outputs = k.flat.kernel_outputs;
    // Inputs that are also outputs are passed once, as outputs.
    std::vector<std::string> inputs;
    for (const std::string& t : k.inputs)
      if (std::find(k.outputs.begin(), k.outputs.end(), t) == k.outputs.end()) inputs.push_back(t);
    k.inputs = std::move(inputs);
    for (const std::string& o : k.outputs) available_.insert(o);
    Verify(k.flat);
    plan_.kernels.push_back(std::move(k));
  }

  // An elementwise-form kernel over `dims` whose first post-op is `first`.
  KernelSpec ElementwiseKernel(KernelKind kind, const std::vector<int64_t>& dims) {
    KernelSpec k;
    k.name = NextName();
    k.kind = kind;
    FlatContraction& flat = k.flat;
    flat.name = k.name;
    flat.generate_contraction = false;
    flat.num_inputs = 0;
    for (size_t d = 0; d < dims.size(); ++d) flat.indices.push_back({fmt::format("i{}", d), dims[d]});
    k.coords = IdentityCoords(dims.size());
    return k;
  }

  void LowerElementwise(size_t i, const ElementwiseOp& e) {
    const TensorDecl& out = program_.Tensor(e.output);
    const std::vector<int64_t>& dims = out.shape.dims;
    if (out.shape.ElementCount() == 0) {
      available_.insert(e.output);  // nothing to compute
      return;
    }
    KernelSpec k = ElementwiseKernel(KernelKind::Elementwise, dims);
    k.flat.comment = fmt::format("elementwise {}", e.output);
    std::vector<size_t> fused = {i};
    for (size_t j : CollectFusable(i, dims, {e.output})) fused.push_back(j);
    // The root's output is the kernel's access 0 (it need not be written).
    k.flat.accesses.push_back(BroadcastAccess(out, dims, k.coords, k.flat.num_indices()));
    // Access 0 is the root's output; like every post-op result it is written
    // only if needed outside the kernel.
    AddPostOps(k, fused, dims, {}, {});
    Finish(std::move(k));
  }

  void LowerSpecial(const SpecialOp& s) {
    KernelSpec k;
    k.name = NextName();
    k.kind = KernelKind::Special;
    k.special = s;
    k.outputs = s.outputs;
    for (const std::string& t : s.inputs) AddInput(k, t);
    k.flat.name = k.name;
    k.flat.kernel_outputs = s.outputs;
    for (const std::string& o : k.outputs) available_.insert(o);
    plan_.kernels.push_back(std::move(k));
  }

  void LowerContraction(size_t i, const ContractionOp& c) {
    const TensorDecl& out = program_.Tensor(c.output);
    if (out.shape.ElementCount() == 0) {
      available_.insert(c.output);
      return;  // nothing to compute; the runtime allocates an empty buffer
    }
    std::optional<FlatContraction> flat;
    if (AllIntegral(c)) flat = TryFlatten(program_, c);
    if (flat && !OutputInjective(*flat)) flat.reset();
    if (flat && options_.relayout_for_vectors && !c.default_tensor && OutputDense(*flat)) {
      if (std::optional<ContractionOp> moved = RelayoutInputs(c, *flat)) {
        flat = Flatten(extended_, *moved);
        return LowerFlatContraction(i, *moved, std::move(*flat));
      }
    }
    if (flat) return LowerFlatContraction(i, c, std::move(*flat));
    {
      KernelSpec k;
      k.name = NextName();
      k.kind = KernelKind::Direct;
      k.contraction = c;
      k.flat.name = k.name;
      k.flat.kernel_outputs = {c.output};
      k.outputs = {c.output};
      for (const auto& a : c.inputs) AddInput(k, a.tensor);
      if (c.default_tensor) AddInput(k, *c.default_tensor);
      k.inputs.erase(std::remove(k.inputs.begin(), k.inputs.end(), c.output), k.inputs.end());
      available_.insert(c.output);
      plan_.kernels.push_back(std::move(k));
      return;
    }
  }

  void LowerFlatContraction(size_t i, const ContractionOp& c, FlatContraction flat) {
    const TensorDecl& out = program_.Tensor(c.output);
    bool fill = c.default_tensor.has_value() || !OutputDense(flat);
    if (fill) EmitFill(c);
    KernelSpec k;
    k.name = NextName();
    k.kind = KernelKind::Contraction;
    k.flat = std::move(flat);
    k.flat.name = k.name;
    k.coords = ContractionCoords(c, k.flat);
    k.store_reached_only = fill;
    for (const auto& a : c.inputs) AddInput(k, a.tensor);
    std::vector<size_t> fused;
    if (!fill) fused = CollectFusable(i, out.shape.dims, {c.output});
    std::set<size_t> group = {i};
    k.flat.kernel_outputs.clear();
    for (size_t j : fused) group.insert(j);
    if (fill || NeededOutside(c.output, group)) k.flat.kernel_outputs.push_back(c.output);
    AddPostOps(k, fused, out.shape.dims, {i}, {c.output});
    Finish(std::move(k));
  }

  // A temporary left row-major that an elementwise op turns into a tensor
  // of the same dimensions with another layout (a conv output O feeding
  // R = relu(O) with R in nChw16c) takes that layout, so the fused kernel
  // computes in the layout it stores. Backwards, so chains propagate.
  void PropagateLayouts() {
    for (auto it = extended_.ops.rbegin(); it != extended_.ops.rend(); ++it) {
      auto* e = std::get_if<ElementwiseOp>(&*it);
      if (!e) continue;
      const TensorDecl& out = extended_.Tensor(e->output);
      if (out.layout.IsRowMajor(out.shape.dims)) continue;
      for (const lang::Operand& o : e->operands) {
        if (!o.is_tensor) continue;
        TensorDecl& t = extended_.tensors.at(o.tensor);
        if (t.role != lang::TensorRole::Temporary || t.shape.dims != out.shape.dims ||
            !t.layout.IsRowMajor(t.shape.dims) || outputs_.count(t.name))
          continue;
        t.layout = out.layout;
        plan_.new_tensors.push_back(t);
      }
    }
  }

  // See LowerOptions::relayout_for_vectors. Emits the copy kernels and
  // returns the contraction reading the copies, or nullopt.
  std::optional<ContractionOp> RelayoutInputs(const ContractionOp& c, const FlatContraction& flat) {
    if (flat.agg_op != lang::ast::AggOp::Sum || !lang::IsFloat(flat.agg_type)) return std::nullopt;
    int v = -1;
    for (int i = 0; i < flat.num_indices(); ++i)
      if (flat.output().strides[i] == 1) v = i;
    if (v < 0) return std::nullopt;
    const std::string& vname = flat.indices[v].name;
    int64_t work = 1;
    for (const FlatIndex& idx : flat.indices) work = CheckedMul(work, idx.range, "the work size");
    std::optional<ContractionOp> moved;
    int64_t range_v = flat.indices[v].range;
    int64_t block = options_.vector_block;
    bool pack = block > 0 && range_v > block && range_v % block == 0;
    for (int a = 1; a <= flat.num_inputs; ++a) {
      int64_t s = flat.accesses[a].strides[v];
      if (s == 0 || (s == 1 && !pack)) continue;
      const ContractionOp::Access& access = c.inputs[a - 1];
      const TensorDecl& t = program_.Tensor(access.tensor);
      if (t.shape.ElementCount() * 16 > work) continue;  // copying would not pay
      // Exactly one dimension indexed by v alone, with coefficient 1.
      int dim = -1, uses = 0;
      for (size_t d = 0; d < access.index.size(); ++d) {
        const lang::Polynomial& p = access.index[d];
        if (p.Coeff(vname) == lang::Rational(0)) continue;
        ++uses;
        if (p.terms.size() == 1 && p.Coeff(vname) == lang::Rational(1)) dim = static_cast<int>(d);
      }
      if (uses != 1 || dim < 0) continue;
      if (!moved) moved = c;
      moved->inputs[a - 1].tensor = CopyForVectors(t, dim, pack ? block : 0);
    }
    return moved;
  }

  // A copy of `t` (in a new temporary) whose dimension `dim` is innermost;
  // with `block` > 0, packed in panels: dim / block outermost, then the
  // other dimensions, then dim % block (what a work item reads is then
  // contiguous).
  std::string CopyForVectors(const TensorDecl& t, int dim, int64_t block) {
    std::string key = fmt::format("{}/{}/{}", t.name, dim, block);
    if (auto it = copies_.find(key); it != copies_.end()) return it->second;
    TensorDecl copy = t;
    copy.name = fmt::format("{}_vec{}", t.name, copies_.size());
    copy.role = lang::TensorRole::Temporary;
    std::vector<std::string> order;
    for (int d = 0; d < t.shape.rank(); ++d)
      if (d != dim) order.push_back(std::to_string(d));
    order.push_back(std::to_string(dim));
    if (block == 0) {
      copy.layout = lang::ParseLayout(fmt::format("order({})", fmt::join(order, ",")), t.shape.dims);
    } else {
      const std::vector<int64_t>& dims = t.shape.dims;
      lang::Layout& l = copy.layout;
      l.name = fmt::format("panels(dim {} by {})", dim, block);
      l.phys.clear();
      l.phys.push_back({dim, block, dims[dim] / block, 0});
      for (int d = 0; d < t.shape.rank(); ++d)
        if (d != dim) l.phys.push_back({d, 1, dims[d], 0});
      l.phys.push_back({dim, 1, block, 0});
      int64_t stride = 1;
      for (auto it = l.phys.rbegin(); it != l.phys.rend(); ++it) {
        it->stride = stride;
        stride = CheckedMul(stride, it->size, "a packed size");
      }
      l.elements = stride;
    }
    extended_.tensors[copy.name] = copy;
    plan_.new_tensors.push_back(copy);
    copies_[key] = copy.name;

    // The copy is a contraction copy[i0, i1, ...] = =(t[i0, i1, ...]), so
    // Flatten handles the packed (blocked) layout.
    ContractionOp c;
    c.output = copy.name;
    c.agg = lang::ast::AggOp::Assign;
    c.comb = lang::ast::CombOp::None;
    ContractionOp::Access in{t.name, {}};
    for (int d = 0; d < t.shape.rank(); ++d) {
      std::string var = fmt::format("i{}", d);
      lang::Polynomial p;
      p.terms[var] = lang::Rational(1);
      c.output_index.push_back(p);
      in.index.push_back(p);
      c.index_vars.push_back(var);
    }
    std::sort(c.index_vars.begin(), c.index_vars.end());  // "i10" sorts before "i2"
    for (const std::string& var : c.index_vars)
      c.bounds.push_back({0, t.shape.dims[std::stoi(var.substr(1))] - 1});
    c.inputs.push_back(in);
    KernelSpec k;
    k.name = NextName();
    k.kind = KernelKind::Contraction;
    k.flat = Flatten(extended_, c);
    k.flat.name = k.name;
    k.flat.comment =
        block == 0 ? fmt::format("{} = copy of {} with dimension {} innermost", copy.name, t.name, dim)
                   : fmt::format("{} = copy of {} in panels of {} along dimension {}", copy.name,
                                 t.name, block, dim);
    k.coords = ContractionCoords(c, k.flat);
    AddInput(k, t.name);
    Finish(std::move(k));
    return copy.name;
  }

  // Zeros, or the default tensor, into a contraction's output.
  void EmitFill(const ContractionOp& c) {
    const TensorDecl& out = program_.Tensor(c.output);
    KernelSpec k = ElementwiseKernel(KernelKind::Fill, out.shape.dims);
    k.flat.comment = c.default_tensor ? fmt::format("{} = copy of {}", c.output, *c.default_tensor)
                                      : fmt::format("{} = 0", c.output);
    ElementwiseOp e;
    e.output = c.output;
    e.fn = lang::ElemFn::Ident;
    e.compute_type = out.shape.dtype;
    lang::Operand o;
    if (c.default_tensor) {
      o.tensor = *c.default_tensor;
      e.compute_type = program_.Tensor(o.tensor).shape.dtype;
    } else {
      o.is_tensor = false;
      o.scalar.dtype = out.shape.dtype;
      o.scalar.is_float = lang::IsFloat(out.shape.dtype);
    }
    e.operands.push_back(o);
    FlatContraction& flat = k.flat;
    flat.accesses.push_back(BroadcastAccess(out, out.shape.dims, k.coords, flat.num_indices()));
    if (c.default_tensor) {
      flat.accesses.push_back(BroadcastAccess(program_.Tensor(*c.default_tensor), out.shape.dims,
                                              k.coords, flat.num_indices()));
      AddInput(k, *c.default_tensor);
    }
    flat.post_ops.push_back(e);
    flat.kernel_outputs = {c.output};
    Finish(std::move(k));
  }

  Program extended_;        // the bound program, plus relayout copies and propagated layouts
  const Program& program_;  // = extended_
  std::map<std::string, std::string> copies_;  // "tensor/dim" -> copy
  LowerOptions options_;
  KernelPlan plan_;
  std::vector<bool> done_;
  std::set<std::string> available_;  // tensors in memory before the next kernel
  std::set<std::string> outputs_;
  std::map<std::string, std::vector<size_t>> readers_;
};

}  // namespace

std::string_view Name(KernelKind kind) {
  switch (kind) {
    case KernelKind::Contraction: return "contraction";
    case KernelKind::Elementwise: return "elementwise";
    case KernelKind::Fill: return "fill";
    case KernelKind::Special: return "special";
    case KernelKind::Direct: return "direct";
  }
  return "?";
}

KernelPlan Lower(const lang::Program& program, const LowerOptions& options) {
  return Lowerer(program, options).Run();
}

std::string ToString(const KernelPlan& plan) {
  std::string out;
  for (const KernelSpec& k : plan.kernels) {
    out += fmt::format("{} ({}): writes {}; reads {}\n", k.name, Name(k.kind),
                       fmt::join(k.outputs, ", "), fmt::join(k.inputs, ", "));
    if (k.kind == KernelKind::Special)
      out += fmt::format("  {}\n", lang::Name(k.special.fn));
    else if (k.kind == KernelKind::Direct)
      out += "  (fractional or non-injective indices, or layouts the flat form cannot express: one work item "
             "per output element)\n";
    else
      out += ToString(k.flat);
    out += "\n";
  }
  if (!plan.temporaries.empty())
    out += fmt::format("temporaries: {}\n", fmt::join(plan.temporaries, ", "));
  return out;
}

}  // namespace tilec::compiler
