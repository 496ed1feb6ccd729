#include "tile_lang/grad_shift_free.h"

#include <algorithm>
#include <map>
#include <set>
#include <variant>

#include "support/error.h"

namespace tilec::lang::grad {
namespace {

class ShiftFree {
 public:
  ShiftFree(const Program& prog, const std::vector<std::string>& outputs) : prog_(prog), outputs_(outputs) {}

  // Whether the outputs do not depend on `m`'s value (ops before m's
  // definition at `def` cannot read it).
  bool Check(const std::string& m, size_t def) {
    states_.clear();
    const Shape& s = prog_.Tensor(m).shape;
    State st{Kind::Shift, 1, {}};
    for (size_t k = 0; k < s.dims.size(); ++k) st.map.push_back(s.dims[k] == 1 ? -1 : static_cast<int>(k));
    states_[m] = st;
    for (size_t k = def + 1; k < prog_.ops.size(); ++k) {
      const Op& op = prog_.ops[k];
      if (const auto* e = std::get_if<ElementwiseOp>(&op)) Set(e->output, Elementwise(*e));
      else if (const auto* c = std::get_if<ContractionOp>(&op)) Set(c->output, Contraction(*c));
      else
        for (const std::string& in : std::get<SpecialOp>(op).inputs)
          if (Get(in).kind != Kind::Same)
            for (const std::string& out : std::get<SpecialOp>(op).outputs) Set(out, Other());
    }
    return std::all_of(outputs_.begin(), outputs_.end(), [&](const std::string& o) { return Get(o).kind == Kind::Same; });
  }

 private:
  enum class Kind { Same, Shift, Scale, Other };
  struct State {
    Kind kind = Kind::Same;
    int sign = 1;
    std::vector<int> map;
    bool operator==(const State&) const = default;
  };
  static State Other() { return {Kind::Other, 1, {}}; }
  static State Same() { return {}; }

  State Get(const std::string& t) const {
    auto it = states_.find(t);
    return it == states_.end() ? Same() : it->second;
  }
  void Set(const std::string& t, const State& s) {
    if (s.kind == Kind::Same) states_.erase(t);
    else states_[t] = s;
  }

  // An operand's state in the output's index space (broadcasting aligns trailing dimensions).
  State Broadcast(const Operand& o, const Shape& y) const {
    if (!o.is_tensor) return Same();
    State s = Get(o.tensor);
    if (s.kind == Kind::Same || s.kind == Kind::Other) return s;
    int off = static_cast<int>(y.dims.size() - prog_.Tensor(o.tensor).shape.dims.size());
    for (int& d : s.map)
      if (d >= 0) d += off;
    return s;
  }
  static State Negated(State s) {
    if (s.kind == Kind::Shift) s.sign = -s.sign;
    return s;  // -(t * exp(s d)) is (-t) * exp(s d)
  }
  static bool Opposite(const State& a, const State& b) { return a.map == b.map && a.sign == -b.sign; }

  State Elementwise(const ElementwiseOp& op) const {
    const Shape& y = prog_.Tensor(op.output).shape;
    std::vector<State> x;
    bool all_same = true;
    for (const Operand& o : op.operands) {
      x.push_back(Broadcast(o, y));
      all_same = all_same && x.back().kind == Kind::Same;
      if (x.back().kind == Kind::Other) return Other();
    }
    if (all_same) return Same();
    if (!IsFloat(y.dtype)) return Other();
    auto kind = [&](size_t k) { return x.at(k).kind; };
    switch (op.fn) {
      case ElemFn::Ident:
      case ElemFn::Cast: return x[0];
      case ElemFn::Neg: return Negated(x[0]);
      case ElemFn::Exp:
        if (kind(0) == Kind::Shift) return {Kind::Scale, x[0].sign, x[0].map};
        return Other();
      case ElemFn::Log:
        if (kind(0) == Kind::Scale) return {Kind::Shift, x[0].sign, x[0].map};
        return Other();
      case ElemFn::Add:
      case ElemFn::Sub: {
        State a = x[0], b = op.fn == ElemFn::Sub ? Negated(x[1]) : x[1];
        if (b.kind == Kind::Same && a.kind == Kind::Shift) return a;
        if (a.kind == Kind::Same && b.kind == Kind::Shift) return b;
        if (a.kind == Kind::Shift && b.kind == Kind::Shift && Opposite(a, b)) return Same();
        if (a.kind == Kind::Scale && b.kind == Kind::Scale && a == b) return a;
        return Other();
      }
      case ElemFn::Mul:
      case ElemFn::Div: {
        State a = x[0], b = x[1];
        if (op.fn == ElemFn::Div && b.kind == Kind::Scale) b.sign = -b.sign;  // 1 / exp(s d) = exp(-s d)
        if (a.kind == Kind::Scale && b.kind == Kind::Same) return a;
        if (a.kind == Kind::Same && b.kind == Kind::Scale) return b;
        if (a.kind == Kind::Scale && b.kind == Kind::Scale && Opposite(a, b)) return Same();
        return Other();
      }
      default: return Other();
    }
  }

  State Contraction(const ContractionOp& c) const {
    std::vector<State> x;
    for (const auto& in : c.inputs) x.push_back(Get(in.tensor));
    bool all_same = std::all_of(x.begin(), x.end(), [](const State& s) { return s.kind == Kind::Same; });
    if (all_same && (!c.default_tensor || Get(*c.default_tensor).kind == Kind::Same)) return Same();
    if (c.default_tensor || !IsFloat(prog_.Tensor(c.output).shape.dtype)) return Other();
    // One perturbed input: `+(A)`, `+(A * B)` with B unchanged (Scale only), `>`/`<`/`=` (A alone).
    size_t k = 0;
    if (c.comb == ast::CombOp::Mul && x.size() == 2) {
      if (x[0].kind != Kind::Same && x[1].kind != Kind::Same) return Other();
      k = x[0].kind == Kind::Same ? 1 : 0;
      if (x[k].kind != Kind::Scale) return Other();
    } else if (c.comb != ast::CombOp::None || x.size() != 1) {
      return Other();
    }
    State s = x[k];
    if (s.kind == Kind::Other || (c.agg == ast::AggOp::Sum && s.kind == Kind::Shift) || c.agg == ast::AggOp::Prod)
      return Other();
    // An output element no term reaches is 0, unperturbed: fine for t * exp(s d),
    // not for t + s d, which takes a contraction that reaches every element.
    if (s.kind == Kind::Shift && !ReachesEverything(c)) return Other();
    // d must be read at the same point by every term of an output element:
    // each index of d is an output index (or 0).
    const auto& index = c.inputs[k].index;
    const Shape& out = prog_.Tensor(c.output).shape;
    for (int& d : s.map) {
      if (d < 0) continue;
      int found = -1;
      for (size_t e = 0; e < c.output_index.size() && found < 0; ++e)
        if (c.output_index[e] == index.at(d)) found = static_cast<int>(e);
      if (found < 0) return Other();
      d = out.dims[found] == 1 ? -1 : found;
    }
    return s;
  }

  // Without constraints, plain indices reading every element of the input
  // and each output index a plain variable (or 0 into a size-1 dimension) of
  // the same size.
  bool ReachesEverything(const ContractionOp& c) const {
    if (!c.constraints.empty() || c.inputs.size() != 1) return false;
    auto plain = [](const Polynomial& p) {
      return p.terms.size() == 1 && p.terms.begin()->second == Rational(1) && p.constant == Rational(0);
    };
    std::map<std::string, int64_t> size;
    const auto& in = c.inputs[0];
    const Shape& is = prog_.Tensor(in.tensor).shape;
    for (size_t d = 0; d < in.index.size(); ++d) {
      if (!plain(in.index[d]) || size.count(in.index[d].terms.begin()->first)) return false;
      size[in.index[d].terms.begin()->first] = is.dims[d];
    }
    const Shape& os = prog_.Tensor(c.output).shape;
    std::set<std::string> seen;
    for (size_t e = 0; e < c.output_index.size(); ++e) {
      const Polynomial& p = c.output_index[e];
      if (p.IsConstant() ? !(p.constant == Rational(0) && os.dims[e] == 1)
                         : !plain(p) || !size.count(p.terms.begin()->first) ||
                               size[p.terms.begin()->first] != os.dims[e] ||
                               !seen.insert(p.terms.begin()->first).second)
        return false;
    }
    return true;
  }

  const Program& prog_;
  const std::vector<std::string>& outputs_;
  std::map<std::string, State> states_;
};

}  // namespace

bool OutputsIgnore(const Program& prog, const std::vector<std::string>& outputs, const std::string& m, size_t def) {
  return ShiftFree(prog, outputs).Check(m, def);
}

}  // namespace tilec::lang::grad
