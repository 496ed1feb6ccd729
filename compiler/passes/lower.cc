#include "compiler/passes/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "compiler/passes/flatten.h"
#include "compiler/passes/fuse_reductions.h"
#include "compiler/passes/output_coverage.h"
#include "compiler/passes/split_reduction.h"
#include "tile_lang/evaluator.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {

// RelayoutInputs' copies must pay for themselves: the contraction's work
// (its index box) at least this many times the input's elements. A copy
// that puts the vector dimension innermost (vector loads instead of
// gathers) pays early; packing an input whose vector dimension is innermost
// already into contiguous panels pays only where each element is used
// very often, as the copy runs on every run: with each weight used 196
// times (bench/suite conv3x3 n1 14x14 256>256) packing loses, used 784
// times (a 28x28 128->128 convolution) it starts to win, hence 512
// (bench/HISTORY.md has the sweep over convolutions and matmuls). A
// constant input's copy runs once and is always made (LowerOptions::constants).
constexpr int64_t kCopyMinUses = 16;
constexpr int64_t kPanelMinUses = 512;

using lang::ContractionOp;
using lang::ElementwiseOp;
using lang::Program;
using lang::SpecialOp;
using lang::TensorDecl;

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

// The flat indices (outer, inner) that output coordinate d is split into,
// d = B * outer + inner, or nullopt when d is not split by exactly B.
std::optional<std::pair<int, int>> SplitOf(const OutputCoords& coords, size_t d, int64_t block,
                                           const std::vector<FlatIndex>& indices) {
  if (coords.constant[d] != 0) return std::nullopt;
  int outer = -1, inner = -1;
  for (size_t i = 0; i < indices.size(); ++i) {
    int64_t c = coords.coeffs[d][i];
    if (c == 0) continue;
    if (c == block && outer < 0) outer = static_cast<int>(i);
    else if (c == 1 && inner < 0 && indices[i].range == block) inner = static_cast<int>(i);
    else return std::nullopt;
  }
  if (outer < 0 || inner < 0) return std::nullopt;
  return std::make_pair(outer, inner);
}

// The access of `t`, broadcast NumPy-style to the kernel's output
// coordinates, through t's own layout: a plain dimension by its stride, a
// blocked one through the kernel's split of that coordinate (nullopt when
// the kernel does not split it by the same block: no affine access).
std::optional<FlatAccess> ElementAccess(const TensorDecl& t, const std::vector<int64_t>& out_dims,
                                        const OutputCoords& coords,
                                        const std::vector<FlatIndex>& indices) {
  std::optional<std::vector<DimParts>> parts = LayoutParts(t);
  if (!parts) return std::nullopt;
  FlatAccess a;
  a.tensor = t.name;
  a.dtype = t.shape.dtype;
  a.limit = t.layout.elements;
  int num_indices = static_cast<int>(indices.size());
  a.strides.assign(num_indices, 0);
  int shift = static_cast<int>(out_dims.size()) - t.shape.rank();
  TILEC_CHECK(shift >= 0, "tensor {} has a higher rank than the kernel output", t.name);
  for (int k = 0; k < t.shape.rank(); ++k) {
    int d = k + shift;
    if (t.shape.dims[k] == 1 && out_dims[d] != 1) continue;  // broadcast: stride 0
    TILEC_CHECK(t.shape.dims[k] == out_dims[d], "tensor {} dim {} does not broadcast", t.name, k);
    const DimParts& p = (*parts)[k];
    if (p.block != 1) {
      auto split = SplitOf(coords, d, p.block, indices);
      if (!split) return std::nullopt;
      a.strides[split->first] = CheckedAdd(a.strides[split->first], p.outer_stride, "a stride");
      a.strides[split->second] = CheckedAdd(a.strides[split->second], p.stride, "a stride");
      continue;
    }
    for (int i = 0; i < num_indices; ++i)
      a.strides[i] = CheckedAdd(a.strides[i], CheckedMul(p.stride, coords.coeffs[d][i], "a stride"),
                                "a stride");
    a.offset = CheckedAdd(a.offset, CheckedMul(p.stride, coords.constant[d], "an offset"),
                          "an offset");
  }
  return a;
}

// The output dimensions whose blocks `t` pads (nChw8c with C = 17: dim 1).
std::vector<int> PaddedDims(const TensorDecl& t) {
  std::vector<int> padded;
  std::optional<std::vector<DimParts>> parts = LayoutParts(t);
  if (!parts) return padded;
  for (int d = 0; d < t.shape.rank(); ++d)
    if ((*parts)[d].block > 1 && t.shape.dims[d] % (*parts)[d].block != 0) padded.push_back(d);
  return padded;
}

// FlatContraction::padding of a kernel whose output is `t`: its coordinate
// along each padded dimension stays below the logical size.
std::vector<FlatConstraint> PaddingConstraints(const TensorDecl& t, const OutputCoords& coords) {
  std::vector<FlatConstraint> out;
  for (int d : PaddedDims(t))
    out.push_back({coords.coeffs[d], CheckedAdd(t.shape.dims[d] - 1, -coords.constant[d], "a bound")});
  return out;
}

// Do a contraction kernel's post-ops turn an all-zero contraction output
// into zeros (+0, bit for bit) in every tensor the kernel writes, reading no
// other tensor? Then its padding points, where the contraction leaves 0,
// need no mask (conv + ReLU keeps the vector form). Decided by running the
// post-ops in the reference evaluator on one zero element.
bool PostOpsKeepZero(const Program& program, const FlatContraction& flat) {
  if (!flat.generate_contraction ||
      flat.accesses.size() > static_cast<size_t>(flat.first_post_op_input()))
    return false;
  Program p;
  p.source = program.source;
  auto declare = [&](const std::string& name) {
    TensorDecl t = program.Tensor(name);
    t.shape.dims.assign(t.shape.dims.size(), 1);
    t.layout = lang::RowMajorLayout(t.shape.dims);
    p.tensors[name] = t;
  };
  const std::string& root = flat.output().tensor;
  declare(root);
  p.inputs = {root};
  for (const ElementwiseOp& op : flat.post_ops) {
    if (op.fn == lang::ElemFn::Index) return false;
    declare(op.output);
    p.ops.push_back(op);
  }
  for (const std::string& t : flat.kernel_outputs)
    if (t != root) p.outputs.push_back(t);
  std::map<std::string, lang::Tensor> results;
  try {
    results = lang::Evaluate(p, {{root, lang::Tensor(p.tensors.at(root).shape)}});
  } catch (const UserError&) {
    return false;  // keep the mask; the kernel reports nothing itself
  }
  for (const auto& [name, t] : results)
    for (size_t b = 0; b < t.bytes(); ++b)
      if (t.data()[b] != std::byte{0}) return false;
  return true;
}

class Lowerer {
 public:
  Lowerer(const Program& p, const LowerOptions& o) : extended_(p), program_(extended_), options_(o) {
    for (const std::string& in : p.inputs) available_.insert(in);
    for (size_t i = 0; i < p.ops.size(); ++i)
      for (const std::string& t : lang::Reads(p.ops[i])) readers_[t].push_back(i);
    outputs_.insert(p.outputs.begin(), p.outputs.end());
    PropagateLayouts();
  }

  KernelPlan Run() {
    done_.assign(program_.ops.size(), false);
    std::map<size_t, FusedRowGroup> row_groups;  // by first op
    if (options_.fuse && options_.row_group_max_bytes > 0)
      for (FusedRowGroup& g : FuseRowGroups(program_, options_.row_group_max_bytes)) {
        in_row_group_.insert(g.ops.begin(), g.ops.end());
        row_groups.emplace(g.ops.front(), std::move(g));
      }
    for (size_t i = 0; i < program_.ops.size(); ++i) {
      if (done_[i]) continue;
      done_[i] = true;
      if (auto g = row_groups.find(i); g != row_groups.end()) {
        EmitRowGroup(std::move(g->second));
        continue;
      }
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

  void EmitRowGroup(FusedRowGroup g) {
    for (size_t j : g.ops) done_[j] = true;
    g.kernel.name = NextName();
    g.kernel.flat.name = g.kernel.name;
    for (const std::string& o : g.kernel.outputs) available_.insert(o);
    plan_.kernels.push_back(std::move(g.kernel));
  }

  int splits_ = 0;  // reductions split so far (SplitReduction)
  std::set<size_t> in_row_group_;  // ops of the row groups FuseRowGroups formed
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
  // output has `dims` (see passes/lower.h). `local` holds the tensors the kernel
  // computes so far.
  std::vector<size_t> CollectFusable(size_t after, const KernelSpec& k,
                                     std::set<std::string> local) {
    std::vector<size_t> fused;
    if (!options_.fuse) return fused;
    const TensorDecl& root = program_.Tensor(k.flat.accesses.at(0).tensor);
    const std::vector<int64_t>& dims = root.shape.dims;
    std::vector<int> padded = PaddedDims(root);
    for (size_t j = after + 1; j < program_.ops.size(); ++j) {
      // An op of a row group stays there: taken as a post-op (the scale of
      // `S = Q·Kᵀ; Ss = S * Scale; softmax(Ss)`) it would leave the group
      // without its first op, and the softmax in four kernels.
      if (done_[j] || in_row_group_.count(j)) continue;
      auto* e = std::get_if<ElementwiseOp>(&program_.ops[j]);
      if (!e || program_.Tensor(e->output).shape.dims != dims) continue;
      // Results are written through their own access in the kernel's space,
      // and must hold the root's padding (it is written, as zeros).
      const TensorDecl& result = program_.Tensor(e->output);
      if (!(result.layout == root.layout)) {
        if (!Addressable(result, k)) continue;
        std::vector<DimParts> parts = *LayoutParts(result);
        bool holds_padding = true;
        for (int d : padded) holds_padding = holds_padding && parts[d].block > 1;
        if (!holds_padding) continue;
      }
      bool ok = true;
      for (const auto& o : e->operands) {
        if (!o.is_tensor || local.count(o.tensor)) continue;
        const TensorDecl& t = program_.Tensor(o.tensor);
        if (!available_.count(o.tensor) || t.shape.rank() > (int)dims.size() || !Addressable(t, k)) {
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

  // Can kernel `k` address `t` at its output points (ElementAccess)?
  bool Addressable(const TensorDecl& t, const KernelSpec& k) const {
    const std::vector<int64_t>& dims = program_.Tensor(k.flat.accesses.at(0).tensor).shape.dims;
    return ElementAccess(t, dims, k.coords, k.flat.indices).has_value();
  }

  FlatAccess RequireAccess(const TensorDecl& t, const KernelSpec& k) const {
    const std::vector<int64_t>& dims = program_.Tensor(k.flat.accesses.at(0).tensor).shape.dims;
    std::optional<FlatAccess> a = ElementAccess(t, dims, k.coords, k.flat.indices);
    TILEC_CHECK(a.has_value(), "kernel {} cannot address {} ({})", k.name, t.name,
                lang::ToString(t.layout));
    return *a;
  }

  // Adds post-ops `fused` to `k`: their input accesses, their written
  // outputs, and the kernel's buffer lists. `root_outputs` are tensors the
  // kernel computes before the post-ops.
  void AddPostOps(KernelSpec& k, const std::vector<size_t>& fused, std::set<size_t> group, const std::set<std::string>& root_outputs) {
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
        extra_inputs.push_back(RequireAccess(program_.Tensor(o.tensor), k));
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
      FlatAccess access = RequireAccess(result, k);
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
    if (!PostOpsKeepZero(program_, k.flat))
      k.flat.padding = PaddingConstraints(program_.Tensor(k.flat.accesses.at(0).tensor), k.coords);
    plan_.kernels.push_back(std::move(k));
  }

  // An elementwise-form kernel over the points of `out`'s buffer: one index
  // per plain dimension, two (d/B, d%B) per blocked one, so every tensor
  // blocked like `out` is addressed affinely and the padding is visited
  // (and zeroed). Access 0 is `out`'s.
  KernelSpec ElementwiseKernel(KernelKind kind, const TensorDecl& out) {
    KernelSpec k;
    k.name = NextName();
    k.kind = kind;
    FlatContraction& flat = k.flat;
    flat.name = k.name;
    flat.generate_contraction = false;
    flat.num_inputs = 0;
    const std::vector<int64_t>& dims = out.shape.dims;
    std::optional<std::vector<DimParts>> parts = LayoutParts(out);
    if (!parts)
      TILEC_USER_ERROR("tensor '{}' has the layout {}, which splits a dimension more than once: "
                       "elementwise operations on it are not supported yet",
                       out.name, ToString(out.layout));
    std::vector<int> first;  // per dim: its first flat index
    for (size_t d = 0; d < dims.size(); ++d) {
      first.push_back(flat.num_indices());
      int64_t b = (*parts)[d].block;
      if (b == 1) {
        flat.indices.push_back({fmt::format("i{}", d), dims[d]});
      } else {
        flat.indices.push_back({fmt::format("i{}/{}", d, b), (dims[d] + b - 1) / b});
        flat.indices.push_back({fmt::format("i{}%{}", d, b), b});
      }
    }
    for (size_t d = 0; d < dims.size(); ++d) {
      std::vector<int64_t> coeffs(flat.num_indices(), 0);
      int64_t b = (*parts)[d].block;
      coeffs[first[d]] = b;
      if (b != 1) coeffs[first[d] + 1] = 1;
      k.coords.coeffs.push_back(std::move(coeffs));
      k.coords.constant.push_back(0);
    }
    std::optional<FlatAccess> own = ElementAccess(out, dims, k.coords, flat.indices);
    TILEC_CHECK(own.has_value(), "kernel {} cannot address its output {}", k.name, out.name);
    flat.accesses.push_back(std::move(*own));
    return k;
  }

  // `t` itself when kernel `k` can address it, else a row-major copy of it
  // (a blocked input read by a kernel over another layout: nChw8c into an
  // NHWC result).
  std::string AddressableCopy(const std::string& t, const KernelSpec& k) {
    const TensorDecl& decl = program_.Tensor(t);
    if (Addressable(decl, k)) return t;
    return CopyToLayout(decl, lang::RowMajorLayout(decl.shape.dims), "row-major");
  }

  void LowerElementwise(size_t i, const ElementwiseOp& e) {
    const TensorDecl& out = program_.Tensor(e.output);
    if (out.shape.ElementCount() == 0) {
      available_.insert(e.output);  // nothing to compute
      return;
    }
    KernelSpec k = ElementwiseKernel(KernelKind::Elementwise, out);
    k.flat.comment = fmt::format("elementwise {}", e.output);
    if (LowerRelayout(i, e, k)) return;
    // Operands this kernel cannot address are read from copies.
    ElementwiseOp& root = std::get<ElementwiseOp>(extended_.ops[i]);
    for (lang::Operand& o : root.operands)
      if (o.is_tensor && o.tensor != e.output) o.tensor = AddressableCopy(o.tensor, k);
    k.name = NextName();  // after the copies' kernels
    k.flat.name = k.name;
    std::vector<size_t> fused = {i};
    for (size_t j : CollectFusable(i, k, {e.output})) fused.push_back(j);
    // Access 0 is the root's output; like every post-op result it is written
    // only if needed outside the kernel.
    AddPostOps(k, fused, {}, {});
    Finish(std::move(k));
  }

  // `R = D` where kernel `k` (over R's layout) cannot address D (D in
  // nChw16c, R in NCHW): one copy of D into R (a contraction `=`, which the
  // transpose form runs through registers) instead of a row-major copy of D
  // and then R = that copy. Only without padding in R (the copy reaches
  // every element) and between equal element types.
  bool LowerRelayout(size_t i, const ElementwiseOp& e, const KernelSpec& k) {
    if (e.fn != lang::ElemFn::Ident || e.operands.size() != 1 || !e.operands[0].is_tensor) return false;
    const TensorDecl& out = program_.Tensor(e.output);
    const TensorDecl& in = program_.Tensor(e.operands[0].tensor);
    if (in.shape != out.shape || e.compute_type != out.shape.dtype || Addressable(in, k) ||
        out.layout.image || out.layout.elements != out.shape.ElementCount())
      return false;
    ContractionOp c = lang::IdentityCopy(in, e.output);
    std::optional<FlatContraction> flat = TryFlatten(extended_, c);
    if (!flat || !OutputDense(*flat)) return false;
    flat->comment = fmt::format("{} = copy of {} ({} to {})", e.output, in.name, in.layout.name, out.layout.name);
    LowerFlatContraction(i, c, std::move(*flat));
    return true;
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
    if (flat && options_.split_max_outputs > 0 && OutputDense(*flat)) {
      std::string name = fmt::format("{}_part{}", c.output, splits_);
      if (auto split = SplitReduction(program_, c, *flat, name, options_.split_max_outputs,
                                      options_.split_min_points, options_.split_min_chunks)) {
        ++splits_;
        extended_.tensors[name] = split->partials;
        plan_.new_tensors.push_back(split->partials);
        std::optional<FlatContraction> partial = TryFlatten(extended_, split->partial);
        std::optional<FlatContraction> combine = TryFlatten(extended_, split->combine);
        TILEC_CHECK(partial && combine, "split reduction of {} does not flatten", c.output);
        partial->comment += " (partial results)";
        combine->comment += " (combine)";
        LowerFlatContraction(std::nullopt, split->partial, std::move(*partial));
        return LowerFlatContraction(i, split->combine, std::move(*combine));
      }
    }
    if (flat && options_.relayout_for_vectors && !c.default_tensor && OutputDense(*flat)) {
      if (std::optional<ContractionOp> moved = RelayoutInputs(c, *flat)) {
        flat = Flatten(extended_, *moved);
        return LowerFlatContraction(i, *moved, std::move(*flat));
      }
    }
    if (flat) return LowerFlatContraction(i, c, std::move(*flat));
    EmitDirect(c);
  }

  // One work item per output element (forms/special.cc): contractions the
  // flat form cannot express.
  void EmitDirect(const ContractionOp& c) {
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
  }

  // `i`: the op's index in the program, for fusion (none for copies).
  void LowerFlatContraction(std::optional<size_t> i, const ContractionOp& c, FlatContraction flat) {
    // A panel-split output index overhanging the output (OutputCovered)
    // needs no Fill: the kernel stores only where a valid point reaches.
    bool dense = OutputDense(flat);
    bool covered = !dense && !c.default_tensor && OutputCovered(flat);
    bool fill = c.default_tensor.has_value() || (!dense && !covered);
    if (fill) EmitFill(c);
    KernelSpec k;
    k.name = NextName();
    k.kind = KernelKind::Contraction;
    k.flat = std::move(flat);
    k.flat.name = k.name;
    k.coords = ContractionCoords(c, k.flat);
    k.store_reached_only = fill || covered;
    for (const auto& a : c.inputs) AddInput(k, a.tensor);
    std::vector<size_t> fused;
    if (!fill && i) fused = CollectFusable(*i, k, {c.output});
    std::set<size_t> group;
    if (i) group.insert(*i);
    k.flat.kernel_outputs.clear();
    for (size_t j : fused) group.insert(j);
    if (fill || !i || NeededOutside(c.output, group)) k.flat.kernel_outputs.push_back(c.output);
    AddPostOps(k, fused, group, {c.output});
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
    // v is a whole index variable, or the inner part "co%16" of one that a
    // blocked layout splits: then the copy is blocked alike ("panels").
    std::string vname = flat.indices[v].name;
    int64_t split = 0;
    if (size_t at = vname.find('%'); at != std::string::npos) {
      vname.resize(at);
      split = flat.indices[v].range;
    }
    int64_t work = 1;
    for (const FlatIndex& idx : flat.indices) work = CheckedMul(work, idx.range, "the work size");
    std::optional<ContractionOp> moved;
    int64_t range_v = flat.indices[v].range;
    int64_t block = PanelWidth(range_v);
    for (int a = 1; a <= flat.num_inputs; ++a) {
      int64_t s = flat.accesses[a].strides[v];
      const ContractionOp::Access& access = c.inputs[a - 1];
      const TensorDecl& t = program_.Tensor(access.tensor);
      // What one panel walk reads: the input, or one slice of it where it
      // moves along other output indices too (a batch: B[b, k, n]).
      int64_t slice = SaturatingMul(t.shape.ElementCount(), lang::BitWidth(t.shape.dtype)) / 8;
      bool batched = false;
      for (int i = 0; i < flat.num_indices(); ++i)
        if (i != v && flat.output().strides[i] != 0 && flat.accesses[a].strides[i] != 0) {
          slice /= flat.indices[i].range;
          batched = true;
        }
      // A constant's copy runs once: made wherever it reads faster.
      bool constant = options_.constants.count(access.tensor) > 0;
      bool pack = block > 0 && (((range_v % options_.vector_block == 0 || constant) && !batched) ||
                                slice >= options_.padded_panel_min_bytes);
      if (s == 0 || (s == 1 && (split || !pack))) continue;
      if (t.shape.ElementCount() == 0) continue;  // nothing to read
      if (!constant && SaturatingMul(t.shape.ElementCount(), s == 1 ? kPanelMinUses : kCopyMinUses) > work)
        continue;
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
      moved->inputs[a - 1].tensor = CopyForVectors(t, dim, split ? split : pack ? block : 0);
    }
    return moved;
  }

  // The panel width for a vector index of `range` values (0: no panels):
  // LowerOptions::vector_block where it divides the range; else the one of
  // 4, 3 or 2 of its 4 vectors whose padded last panel wastes least, if
  // that is at most 1/16 of the range (N = 333: panels of 48, 336
  // computed; 509: 64, 512). More waste is not worth the packing: N = 100
  // stays unpacked (7 vectors of 16, no panel of 32 or 48 pads less).
  int64_t PanelWidth(int64_t range) const {
    int64_t block = options_.vector_block;
    if (block <= 0 || range <= block) return 0;
    if (range % block == 0 || block % 4 != 0) return range % block == 0 ? block : 0;
    int64_t best = 0, best_padded = INT64_MAX;
    for (int64_t n : {4, 3, 2}) {
      int64_t b = block / 4 * n;
      int64_t padded = (range + b - 1) / b * b;
      if (padded < best_padded) best = b, best_padded = padded;
    }
    return (best_padded - range) * 16 <= range ? best : 0;
  }

  // A copy of `t` (in a new temporary) whose dimension `dim` is innermost;
  // with `block` > 0, packed in panels: dim / block outermost, then the
  // other dimensions, then dim % block (what a work item reads is then
  // contiguous; a last, partial panel is padded).
  std::string CopyForVectors(const TensorDecl& t, int dim, int64_t block) {
    std::vector<std::string> order;
    for (int d = 0; d < t.shape.rank(); ++d)
      if (d != dim) order.push_back(std::to_string(d));
    order.push_back(std::to_string(dim));
    lang::Layout l;
    if (block == 0) {
      l = lang::ParseLayout(fmt::format("order({})", fmt::join(order, ",")), t.shape.dims);
    } else {
      const std::vector<int64_t>& dims = t.shape.dims;
      l.name = fmt::format("panels(dim {} by {})", dim, block);
      l.phys.push_back({dim, block, (dims[dim] + block - 1) / block, 0});
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
    std::string how = block == 0 ? fmt::format("with dimension {} innermost", dim)
                                 : fmt::format("in panels of {} along dimension {}", block, dim);
    return CopyToLayout(t, l, how);
  }

  // A copy of `t` (a new temporary, "<t>_vec<N>") laid out as `layout`,
  // made by the contraction copy[i0, i1, ...] = =(t[i0, i1, ...]) (Flatten
  // handles blocked layouts on either side; a Direct kernel the rest).
  // Copies are shared: the same layout of `t` is copied once.
  std::string CopyToLayout(const TensorDecl& t, const lang::Layout& layout, const std::string& how) {
    std::string key = fmt::format("{}/{}", t.name, lang::ToString(layout));
    if (auto it = copies_.find(key); it != copies_.end()) return it->second;
    TensorDecl copy = t;
    copy.name = fmt::format("{}_vec{}", t.name, copies_.size());
    copy.role = lang::TensorRole::Temporary;
    copy.layout = layout;
    extended_.tensors[copy.name] = copy;
    plan_.new_tensors.push_back(copy);
    copies_[key] = copy.name;
    if (t.shape.ElementCount() == 0) {
      available_.insert(copy.name);
      return copy.name;  // nothing to copy (a kernel over no points is not one)
    }

    ContractionOp c = lang::IdentityCopy(t, copy.name);
    std::string comment = fmt::format("{} = copy of {} {}", copy.name, t.name, how);
    std::optional<FlatContraction> flat = TryFlatten(extended_, c);
    if (!flat) {
      EmitDirect(c);
      return copy.name;
    }
    flat->comment = comment;
    LowerFlatContraction(std::nullopt, c, std::move(*flat));
    return copy.name;
  }

  // Zeros, or the default tensor, into a contraction's output.
  void EmitFill(const ContractionOp& c) {
    const TensorDecl& out = program_.Tensor(c.output);
    KernelSpec k = ElementwiseKernel(KernelKind::Fill, out);
    ElementwiseOp e;
    e.output = c.output;
    e.fn = lang::ElemFn::Ident;
    e.compute_type = out.shape.dtype;
    lang::Operand o;
    if (c.default_tensor) {
      o.tensor = AddressableCopy(*c.default_tensor, k);
      e.compute_type = program_.Tensor(o.tensor).shape.dtype;
    } else {
      o.is_tensor = false;
      o.scalar.dtype = out.shape.dtype;
      o.scalar.is_float = lang::IsFloat(out.shape.dtype);
    }
    e.operands.push_back(o);
    k.name = NextName();  // after a copy's kernels
    k.flat.name = k.name;
    k.flat.comment = c.default_tensor ? fmt::format("{} = copy of {}", c.output, *c.default_tensor)
                                      : fmt::format("{} = 0", c.output);
    if (c.default_tensor) {
      k.flat.accesses.push_back(RequireAccess(program_.Tensor(o.tensor), k));
      AddInput(k, o.tensor);
    }
    k.flat.post_ops.push_back(e);
    k.flat.kernel_outputs = {c.output};
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

KernelPlan Lower(const lang::Program& program, const LowerOptions& options) {
  return Lowerer(program, options).Run();
}

}  // namespace tilec::compiler
