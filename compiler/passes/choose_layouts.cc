#include "compiler/passes/choose_layouts.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "compiler/schedule/cost_model.h"
#include "compiler/passes/flatten.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {

using lang::ContractionOp;
using lang::ElementwiseOp;
using lang::Layout;
using lang::Program;
using lang::TensorDecl;

// A Direct kernel (a layout Flatten cannot express) is assumed this many
// times slower than the flat form's estimate: one work item per element, no
// vectors (docs/layouts.md: "correct but slow").
constexpr double kDirectSlowdown = 8;

enum class Kind { RowMajor, ChannelsLast, Block16, Block8 };
constexpr Kind kKinds[] = {Kind::RowMajor, Kind::ChannelsLast, Kind::Block16, Kind::Block8};

// The variable a polynomial is, alone with coefficient 1 and no constant.
std::optional<std::string> SingleVar(const lang::Polynomial& p) {
  if (p.terms.size() != 1 || !(p.constant == lang::Rational(0))) return std::nullopt;
  if (!(p.terms.begin()->second == lang::Rational(1))) return std::nullopt;
  return p.terms.begin()->first;
}

std::set<std::string> VarsOf(const ContractionOp::Access& a) {
  std::set<std::string> vars;
  for (const lang::Polynomial& p : a.index)
    for (const auto& [v, k] : p.terms) vars.insert(v);
  return vars;
}

// The channel dimensions of a contraction (see passes/choose_layouts.h): the
// output's (-1: none) and each input's (-1: not a data input).
struct Channels {
  int out = -1;
  std::vector<int> in;
  std::string var;  // the output channel's variable (co)
};

// A depthwise (grouped by one) contraction's channel: an output dimension
// indexed by a variable alone that the weights (inputs without other output
// variables) use, and that every data input indexes alone in one dimension,
// its channel there (c in T[n, c, x, y] = +(D[n, c, x + i, y + j] * K[c, i, j])).
// The batch n is no channel: no weights use it.
Channels DepthwiseChannels(const ContractionOp& c, const std::set<std::string>& out_vars) {
  Channels ch;
  ch.in.assign(c.inputs.size(), -1);
  for (size_t d = 0; d < c.output_index.size() && ch.out < 0; ++d) {
    std::optional<std::string> v = SingleVar(c.output_index[d]);
    if (!v) continue;
    bool weights = false, ok = true;
    std::vector<int> in(c.inputs.size(), -1);
    for (size_t a = 0; a < c.inputs.size() && ok; ++a) {
      std::set<std::string> vars = VarsOf(c.inputs[a]);
      if (!vars.count(*v)) continue;
      bool data = false;
      for (const std::string& o : vars) data = data || (out_vars.count(o) && o != *v);
      if (!data) {
        weights = true;
        continue;
      }
      int count = 0;
      for (size_t k = 0; k < c.inputs[a].index.size(); ++k)
        if (SingleVar(c.inputs[a].index[k]) == *v) in[a] = static_cast<int>(k), ++count;
      for (const lang::Polynomial& p : c.inputs[a].index)
        if (!SingleVar(p) && p.Coeff(*v) != lang::Rational(0)) ok = false;
      ok = ok && count == 1 && c.inputs[a].index.size() == c.output_index.size();
    }
    if (!ok || !weights) continue;
    ch.out = static_cast<int>(d);
    ch.var = *v;
    ch.in = std::move(in);
  }
  return ch;
}

Channels FindChannels(const ContractionOp& c) {
  Channels ch;
  ch.in.assign(c.inputs.size(), -1);
  std::set<std::string> out_vars;
  for (const lang::Polynomial& p : c.output_index)
    for (const auto& [v, k] : p.terms) out_vars.insert(v);
  std::string cvar;
  for (size_t d = 0; d < c.output_index.size(); ++d) {
    std::optional<std::string> v = SingleVar(c.output_index[d]);
    if (!v) continue;
    bool alone = true;
    for (const auto& a : c.inputs) {
      std::set<std::string> vars = VarsOf(a);
      if (!vars.count(*v)) continue;
      for (const std::string& o : vars) alone = alone && (o == *v || !out_vars.count(o));
    }
    if (alone) {
      ch.out = static_cast<int>(d);
      cvar = *v;
    }
  }
  if (ch.out < 0) return DepthwiseChannels(c, out_vars);
  ch.var = cvar;
  for (size_t a = 0; a < c.inputs.size(); ++a) {
    const auto& access = c.inputs[a];
    if (access.index.size() != c.output_index.size()) continue;
    std::set<std::string> vars = VarsOf(access);
    bool data = false;
    for (const std::string& v : vars) data = data || (out_vars.count(v) && v != cvar);
    if (!data) continue;
    int found = -1, count = 0;
    for (size_t k = 0; k < access.index.size(); ++k) {
      std::optional<std::string> v = SingleVar(access.index[k]);
      if (!v || out_vars.count(*v)) continue;
      bool shared = false;  // a contracted variable: another input has it
      for (size_t b = 0; b < c.inputs.size(); ++b)
        if (b != a && VarsOf(c.inputs[b]).count(*v)) shared = true;
      if (shared) {
        found = static_cast<int>(k);
        ++count;
      }
    }
    if (count == 1) ch.in[a] = found;
  }
  return ch;
}

// A candidate layout of kind `kind` for dims with channel dimension c, or
// nullopt when it adds nothing (channels-last of a tensor whose channel is
// already innermost, a block over a channel dim too small for it).
std::optional<Layout> KindLayout(Kind kind, const std::vector<int64_t>& dims, int c) {
  int rank = static_cast<int>(dims.size());
  if (kind == Kind::RowMajor) return lang::RowMajorLayout(dims);
  if (rank > 12 || c < 0 || c >= rank) return std::nullopt;
  auto letter = [](int d) { return static_cast<char>('a' + d); };
  std::string tag;
  if (kind == Kind::ChannelsLast) {
    if (c == rank - 1) return std::nullopt;
    for (int d = 0; d < rank; ++d)
      if (d != c) tag += letter(d);
    tag += letter(c);
  } else {
    int64_t block = kind == Kind::Block16 ? 16 : 8;
    if (dims[c] <= block / 2) return std::nullopt;
    if (c != 0) tag += letter(0);
    tag += static_cast<char>('A' + c);
    for (int d = 1; d < rank; ++d)
      if (d != c) tag += letter(d);
    tag += fmt::format("{}{}", block, letter(c));
  }
  // The oneDNN names where the tensor is rank 4 with its channel second.
  if (rank == 4 && c == 1) {
    if (tag == "acdb") tag = "nhwc";
    if (tag == "aBcd16b") tag = "nChw16c";
    if (tag == "aBcd8b") tag = "nChw8c";
  }
  return lang::ParseLayout(tag, dims);
}

// For a weights input (not a data input: `channels` < 0), row-major when
// its layout blocks the dimension that the output channel's variable `var`
// indexes alone (OIHW weights in MACE's image_conv_filter order Acdb4a,
// OIhw8o): computed in another layout, the vector form would otherwise get
// that block's 4 or 8 lanes, where plain weights are packed into panels of
// whole vectors by Lower (bench/mace_images.py's "conv blocked buffers"
// case, conv 3x3 64->64 on 56x56 with Acdb4a weights, runs several times
// faster computed in NHWC). nullopt otherwise.
std::optional<Layout> WeightsLayout(const ContractionOp::Access& access, const TensorDecl& t, const std::string& var,
                                    int channels) {
  if (channels >= 0 || var.empty()) return std::nullopt;
  for (size_t d = 0; d < access.index.size(); ++d) {
    std::optional<std::string> v = SingleVar(access.index[d]);
    if (!v || *v != var) continue;
    for (const lang::PhysicalDim& p : t.layout.phys)
      if (p.dim == static_cast<int>(d) && p.divisor > 1) return lang::RowMajorLayout(t.shape.dims);
  }
  return std::nullopt;
}

double Bytes(const TensorDecl& t, const Layout& l) {
  return static_cast<double>(l.elements) * static_cast<double>(lang::ByteSize(t.shape.dtype));
}

std::string Spec(const Layout& l) { return l.any ? "any" : lang::ToSpec(l); }

// The contraction's estimated seconds in `program`'s layouts.
double KernelSeconds(const Program& program, const ContractionOp& c, const HardwareModel& hw) {
  if (std::optional<FlatContraction> flat = TryFlatten(program, c)) return EstimateTime(*flat, hw).seconds();
  double points = 1;
  for (const ContractionOp::Bound& b : c.bounds) points *= static_cast<double>(std::max<int64_t>(b.hi - b.lo + 1, 1));
  return kDirectSlowdown * 2 * points / (hw.peak_gflops * 1e9);
}

// A relayout's estimated seconds: its bytes read and written over the
// bandwidth, kDirectSlowdown times that when the copy is a Direct kernel
// (Flatten cannot split one variable by two block sizes: nChw16c -> nChw8c).
double CopySeconds(const Program& base, const TensorDecl& src, const Layout& to, const HardwareModel& hw);

// One candidate for a chain: its result's layout kind (none: as-is) and
// whether the data inputs are relayouted into it.
struct Form {
  std::optional<Kind> kind;
  bool convert_inputs = false;
  double kernel_s = 0;
  double copy_s = 0;
  int copies = 0;
  double total() const { return kernel_s + copy_s; }
};


double CopySeconds(const Program& base, const TensorDecl& src, const Layout& to, const HardwareModel& hw) {
  double s = (Bytes(src, src.layout) + Bytes(src, to)) / (hw.mem_bandwidth_gbs * 1e9);
  Program p;
  p.source = base.source;
  p.tensors[src.name] = src;
  TensorDecl dst = src;
  dst.name = src.name + "_copy";
  dst.layout = to;
  p.tensors[dst.name] = dst;
  return TryFlatten(p, lang::IdentityCopy(src, dst.name)) ? s : kDirectSlowdown * s;
}

class Chooser {
 public:
  Chooser(const Program& program, const HardwareModel& hw, const ChooseLayoutsOptions& options)
      : hw_(hw), options_(options) {
    out_.program = program;
  }

  LayoutChoice Run() {
    Program& p = out_.program;
    if (options_.relayout) {
      before_.resize(p.ops.size());
      after_.resize(p.ops.size());
      for (size_t i = 0; i < p.ops.size(); ++i)
        if (std::holds_alternative<ContractionOp>(p.ops[i])) Decide(i);
      std::vector<lang::Op> ops;
      for (size_t i = 0; i < p.ops.size(); ++i) {
        for (lang::Op& op : before_[i]) ops.push_back(std::move(op));
        ops.push_back(p.ops[i]);
        for (lang::Op& op : after_[i]) ops.push_back(std::move(op));
      }
      p.ops = std::move(ops);
    }
    ResolveRemainingAny();
    return std::move(out_);
  }

 private:
  Program& P() { return out_.program; }

  bool Free(const TensorDecl& t) const {
    return t.layout.any || (t.role == lang::TensorRole::Temporary && t.layout.IsRowMajor(t.shape.dims));
  }

  void SetLayout(const std::string& name, const Layout& layout) {
    TensorDecl& t = P().tensors.at(name);
    bool was_any = t.layout.any;
    t.layout = layout;
    Record(t);
    if (was_any) out_.decisions.push_back(fmt::format("{}: any -> {}", name, Spec(layout)));
  }

  void Record(const TensorDecl& t) {
    for (TensorDecl& d : out_.tensors)
      if (d.name == t.name) {
        d = t;
        return;
      }
    out_.tensors.push_back(t);
  }

  // Read by an op outside `group` (the copies already chosen for insertion
  // included: a relayout of an earlier group's result reads it), or a
  // program output.
  bool Stored(const std::string& t, const std::set<size_t>& group) const {
    const Program& p = out_.program;
    if (std::find(p.outputs.begin(), p.outputs.end(), t) != p.outputs.end()) return true;
    auto reads = [&](const lang::Op& op) {
      std::vector<std::string> r = lang::Reads(op);
      return std::find(r.begin(), r.end(), t) != r.end();
    };
    for (size_t j = 0; j < p.ops.size(); ++j)
      if (!group.count(j) && reads(p.ops[j])) return true;
    for (const auto* pending : {&before_, &after_})
      for (const std::vector<lang::Op>& ops : *pending)
        for (const lang::Op& op : ops)
          if (reads(op)) return true;
    return false;
  }

  void Decide(size_t i) {
    const ContractionOp c = std::get<ContractionOp>(P().ops[i]);
    if (c.default_tensor) return;
    const TensorDecl& out = P().Tensor(c.output);
    if (out.shape.ElementCount() == 0) return;
    Channels ch = FindChannels(c);
    if (ch.out < 0) return;
    // The chain Lower fuses: elementwise ops with the output's dims reading it.
    std::vector<std::string> members = {c.output};
    std::set<size_t> group = {i};
    for (size_t j = i + 1; j < P().ops.size(); ++j) {
      auto* e = std::get_if<ElementwiseOp>(&P().ops[j]);
      if (!e || P().Tensor(e->output).shape.dims != out.shape.dims) continue;
      bool reads = false;
      for (const auto& o : e->operands)
        reads = reads || (o.is_tensor && std::count(members.begin(), members.end(), o.tensor));
      if (!reads || std::count(members.begin(), members.end(), e->output)) continue;
      members.push_back(e->output);
      group.insert(j);
    }
    std::vector<bool> stored;
    for (const std::string& m : members) stored.push_back(Stored(m, group));
    // As-is: free members take the first fixed member's layout (PropagateLayouts).
    std::optional<Layout> fixed;
    for (const std::string& m : members)
      if (!Free(P().Tensor(m)) && !fixed) fixed = P().Tensor(m).layout;
    Layout asis_out = Free(out) ? fixed.value_or(lang::RowMajorLayout(out.shape.dims)) : out.layout;

    // What KernelSeconds reads: the contraction's own tensors (a copy of
    // the whole program per candidate made layouts a large share of a
    // network's compile).
    Program base;
    base.source = P().source;
    base.tensors[c.output] = P().Tensor(c.output);
    for (const auto& a : c.inputs) base.tensors[a.tensor] = P().Tensor(a.tensor);
    auto evaluate = [&](Form& f) -> bool {
      Program trial = base;
      if (!f.kind) {
        trial.tensors.at(c.output).layout = asis_out;
        f.kernel_s = KernelSeconds(trial, c, hw_);
        return true;
      }
      std::optional<Layout> x = KindLayout(*f.kind, out.shape.dims, ch.out);
      if (!x) return false;
      trial.tensors.at(c.output).layout = *x;
      if (f.convert_inputs) {
        std::set<std::string> seen;
        for (size_t a = 0; a < c.inputs.size(); ++a) {
          const TensorDecl& t = P().Tensor(c.inputs[a].tensor);
          if (ch.in[a] < 0 || seen.count(t.name)) continue;
          std::optional<Layout> y = KindLayout(*f.kind, t.shape.dims, ch.in[a]);
          if (!y || *y == t.layout) continue;
          seen.insert(t.name);
          trial.tensors.at(t.name).layout = *y;
          f.copy_s += CopySeconds(P(), t, *y, hw_);
          ++f.copies;
        }
        if (f.copies == 0) return false;  // the same as reading them as they are
      }
      // Weights blocked along the output channel: row-major (WeightsLayout).
      for (size_t a = 0; a < c.inputs.size(); ++a) {
        const TensorDecl& t = P().Tensor(c.inputs[a].tensor);
        std::optional<Layout> y = WeightsLayout(c.inputs[a], t, ch.var, ch.in[a]);
        if (!y || trial.tensors.at(t.name).layout == *y) continue;
        trial.tensors.at(t.name).layout = *y;
        f.copy_s += CopySeconds(P(), t, *y, hw_);
        ++f.copies;
      }
      for (size_t m = 0; m < members.size(); ++m) {
        const TensorDecl& t = P().Tensor(members[m]);
        if (Free(t) || !stored[m]) continue;
        std::optional<Layout> xt = KindLayout(*f.kind, t.shape.dims, ch.out);
        if (*xt == t.layout) continue;
        TensorDecl from = t;  // the copy reads xt, writes t's layout
        from.layout = *xt;
        f.copy_s += CopySeconds(P(), from, t.layout, hw_);
        ++f.copies;
      }
      f.kernel_s = KernelSeconds(trial, c, hw_);
      return true;
    };

    Form asis;
    evaluate(asis);
    Form best_plain = asis, best_copy;
    bool have_copy = false;
    bool asis_free = true;  // every member free: as-is is only row-major
    for (const std::string& m : members) asis_free = asis_free && Free(P().Tensor(m));
    if (asis_free) best_plain.kernel_s = best_plain.copy_s = 1e300;
    for (Kind kind : kKinds)
      for (bool convert : {false, true}) {
        Form f;
        f.kind = kind;
        f.convert_inputs = convert;
        if (!evaluate(f)) continue;
        if (f.copies == 0) {
          if (f.total() < best_plain.total() * 0.999) best_plain = f;  // ties keep the earlier
        } else if (!have_copy || f.total() < best_copy.total()) {
          best_copy = f;
          have_copy = true;
        }
      }
    Form chosen = best_plain;
    if (have_copy && best_copy.total() < (1 - options_.margin) * best_plain.total()) chosen = best_copy;
    if (!chosen.kind) return;  // as-is
    Apply(i, c, ch, members, stored, group, chosen, asis);
  }

  std::string NewName(const std::string& base) {
    for (;;) {
      std::string name = fmt::format("{}_re{}", base, next_++);
      if (!P().tensors.count(name)) return name;
    }
  }

  // `from` becomes `to` in what `op` reads, and in what it writes unless
  // `reads_only`.
  void Rename(lang::Op& op, const std::string& from, const std::string& to, bool reads_only = false) {
    if (auto* c = std::get_if<ContractionOp>(&op)) {
      if (c->output == from && !reads_only) c->output = to;
      for (auto& a : c->inputs)
        if (a.tensor == from) a.tensor = to;
    } else if (auto* e = std::get_if<ElementwiseOp>(&op)) {
      if (e->output == from && !reads_only) e->output = to;
      for (auto& o : e->operands)
        if (o.is_tensor && o.tensor == from) o.tensor = to;
    }
  }

  void Apply(size_t i, const ContractionOp& c, const Channels& ch, const std::vector<std::string>& members,
             const std::vector<bool>& stored, const std::set<size_t>& group, const Form& chosen,
             const Form& asis) {
    std::string why = fmt::format(
        "why: estimated {:.3f} ms as-is, {:.3f} ms with relayouts (kernel {:.3f} ms + relayouts {:.3f} ms)",
        asis.total() * 1e3, chosen.total() * 1e3, chosen.kernel_s * 1e3, chosen.copy_s * 1e3);
    size_t last = *group.rbegin();
    for (size_t m = 0; m < members.size(); ++m) {
      TensorDecl t = P().Tensor(members[m]);
      Layout x = *KindLayout(*chosen.kind, t.shape.dims, ch.out);
      if (Free(t)) {
        if (!(x == t.layout) || t.layout.any) SetLayout(t.name, x);
        continue;
      }
      if (x == t.layout) continue;
      TensorDecl copy = t;
      copy.name = NewName(t.name);
      copy.role = lang::TensorRole::Temporary;
      copy.layout = x;
      P().tensors[copy.name] = copy;
      Record(copy);
      for (size_t j : group) Rename(P().ops[j], t.name, copy.name);
      // The copy back into t follows the group's last op; an op between the
      // group's ones that reads t runs before it, so it reads the copy (a
      // min over T0 placed between T0's contraction and T3 = T0 read T0
      // unwritten: difftest seed 930825).
      for (size_t j = *group.begin(); j < last; ++j)
        if (!group.count(j)) Rename(P().ops[j], t.name, copy.name, /*reads_only=*/true);
      if (!stored[m]) continue;
      after_[last].push_back(lang::IdentityCopy(copy, t.name));
      out_.why[t.name] = why;
      out_.decisions.push_back(fmt::format("{}: computed in {} as {}, relayouted into {}; {}", t.name, Spec(x),
                                           copy.name, Spec(t.layout), why));
    }
    ContractionOp& op = std::get<ContractionOp>(P().ops[i]);
    for (size_t a = 0; a < c.inputs.size(); ++a) {
      const TensorDecl t = P().Tensor(c.inputs[a].tensor);
      if (ch.in[a] >= 0 && !chosen.convert_inputs) continue;
      std::optional<Layout> y = ch.in[a] < 0 ? WeightsLayout(c.inputs[a], t, ch.var, ch.in[a])
                                             : KindLayout(*chosen.kind, t.shape.dims, ch.in[a]);
      if (!y || *y == t.layout) continue;
      std::string key = fmt::format("{}/{}", t.name, lang::ToString(*y));
      std::string& name = input_copies_[key];
      if (name.empty()) {
        TensorDecl copy = t;
        copy.name = name = NewName(t.name);
        copy.role = lang::TensorRole::Temporary;
        copy.layout = *y;
        P().tensors[copy.name] = copy;
        Record(copy);
        before_[i].push_back(lang::IdentityCopy(t, copy.name));
        out_.why[copy.name] = why;
        out_.decisions.push_back(fmt::format("{}: relayouted from {} into {} as {} for {}; {}", t.name,
                                             Spec(t.layout), Spec(*y), copy.name, c.output, why));
      }
      op.inputs[a].tensor = name;
    }
  }

  // `any` tensors no contraction decided: an elementwise result takes an
  // operand's layout of the same dims (no relayout), anything else row-major.
  void ResolveRemainingAny() {
    Program& p = P();
    for (const lang::Op& op : p.ops) {
      auto* e = std::get_if<ElementwiseOp>(&op);
      if (!e || !p.Tensor(e->output).layout.any) continue;
      const TensorDecl& out = p.Tensor(e->output);
      std::optional<Layout> chosen;
      for (const auto& o : e->operands)
        if (o.is_tensor && !chosen && o.tensor != e->output && p.Tensor(o.tensor).shape.dims == out.shape.dims &&
            !p.Tensor(o.tensor).layout.any)
          chosen = p.Tensor(o.tensor).layout;
      SetLayout(e->output, chosen.value_or(lang::RowMajorLayout(out.shape.dims)));
    }
    std::vector<std::string> names;
    for (const auto& [name, t] : p.tensors)
      if (t.layout.any) names.push_back(name);
    for (const std::string& name : names) SetLayout(name, lang::RowMajorLayout(p.Tensor(name).shape.dims));
  }

  const HardwareModel& hw_;
  ChooseLayoutsOptions options_;
  LayoutChoice out_;
  std::vector<std::vector<lang::Op>> before_, after_;  // per op: copies to insert
  std::map<std::string, std::string> input_copies_;   // "tensor/layout" -> copy
  int next_ = 0;
};

}  // namespace

LayoutChoice ChooseLayouts(const lang::Program& program, const HardwareModel& hw,
                           const ChooseLayoutsOptions& options) {
  return Chooser(program, hw, options).Run();
}

}  // namespace tilec::compiler
