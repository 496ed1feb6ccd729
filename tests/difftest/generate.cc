#include "tests/difftest/generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "support/error.h"

namespace tilec::difftest {
namespace {

int64_t Pick(Rng& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
bool Chance(Rng& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
template <typename T>
const T& OneOf(Rng& rng, const std::vector<T>& v) {
  return v[static_cast<size_t>(Pick(rng, 0, static_cast<int64_t>(v.size()) - 1))];
}

std::vector<int> RandomPermutation(Rng& rng, int n) {
  std::vector<int> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  return perm;
}

// Dense strides in a random dimension order, with random gaps (a view into
// a bigger buffer): nested, so no two elements alias.
std::string RandomStrides(Rng& rng, const std::vector<int64_t>& dims) {
  std::vector<int> order = RandomPermutation(rng, static_cast<int>(dims.size()));
  std::vector<int64_t> strides(dims.size());
  int64_t next = Pick(rng, 1, 2);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[static_cast<size_t>(*it)] = next;
    next = next * std::max<int64_t>(dims[static_cast<size_t>(*it)], 1) + (Chance(rng, 0.3) ? Pick(rng, 1, 3) : 0);
  }
  return fmt::format("strides({})", fmt::join(strides, ", "));
}

const std::vector<LayoutKind> kLayouts = {
    {"row-major", [](int) { return true; }, false, [](Rng&, const std::vector<int64_t>&) { return std::string("row-major"); }},
    {"nchw", [](int r) { return r == 4; }, false, [](Rng&, const std::vector<int64_t>&) { return std::string("nchw"); }},
    {"nhwc", [](int r) { return r == 4; }, false, [](Rng&, const std::vector<int64_t>&) { return std::string("nhwc"); }},
    {"chwn", [](int r) { return r == 4; }, false, [](Rng&, const std::vector<int64_t>&) { return std::string("chwn"); }},
    {"ncdhw", [](int r) { return r == 5; }, false, [](Rng&, const std::vector<int64_t>&) { return std::string("ncdhw"); }},
    {"ndhwc", [](int r) { return r == 5; }, false, [](Rng&, const std::vector<int64_t>&) { return std::string("ndhwc"); }},
    {"order", [](int r) { return r >= 2; }, false,
     [](Rng& rng, const std::vector<int64_t>& dims) {
       return fmt::format("order({})", fmt::join(RandomPermutation(rng, static_cast<int>(dims.size())), ", "));
     }},
    {"strides", [](int r) { return r >= 1; }, false, &RandomStrides},
    {"nChw4c", [](int r) { return r == 4; }, true, [](Rng&, const std::vector<int64_t>&) { return std::string("nChw4c"); }},
    {"nChw8c", [](int r) { return r == 4; }, true, [](Rng&, const std::vector<int64_t>&) { return std::string("nChw8c"); }},
    {"nChw16c", [](int r) { return r == 4; }, true, [](Rng&, const std::vector<int64_t>&) { return std::string("nChw16c"); }},
};

const std::vector<DataType> kTypes = {DataType::Bool, DataType::I8,  DataType::I16, DataType::I32,
                                      DataType::I64,  DataType::U8,  DataType::U16, DataType::U32,
                                      DataType::U64,  DataType::F16, DataType::F32, DataType::F64};

// Sizes: small, with 1 and primes often.
const std::vector<int64_t> kSizes = {1, 1, 2, 3, 3, 4, 5, 5, 7, 7, 8, 11, 13, 16, 17};

// Contractions whose index box is larger are rejected (evaluator time).
constexpr int64_t kMaxBox = 60000;
constexpr int64_t kMaxElements = 6000;

enum class Want { kAny, kInt, kExact };

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  Generated Run() {
    const int ndims = static_cast<int>(Pick(rng_, 2, 4));
    for (int d = 0; d < ndims; ++d) p_.dims[fmt::format("N{}", d)] = OneOf(rng_, kSizes);
    std::vector<std::string> dim_names;
    for (const auto& [name, v] : p_.dims) dim_names.push_back(name);
    const int ninputs = static_cast<int>(Pick(rng_, 1, 3));
    for (int k = 0; k < ninputs; ++k) {
      Input in;
      in.name = std::string(1, static_cast<char>('A' + k));
      in.dtype = Chance(rng_, 0.4) ? DataType::F32 : OneOf(rng_, kTypes);
      const int rank = Chance(rng_, 0.05) ? 5 : static_cast<int>(Pick(rng_, 0, 4));
      for (int r = 0; r < rank; ++r) in.dims.push_back(OneOf(rng_, dim_names));
      p_.inputs.push_back(in);
    }
    if (!Refresh()) return {p_, finding_};
    const int nstmts = static_cast<int>(Pick(rng_, 1, 5));
    for (int k = 0; k < nstmts; ++k) {
      const std::string name = fmt::format("T{}", k);
      bool added = false;
      for (int attempt = 0; attempt < 12 && !added; ++attempt) {
        Stmt s;
        s.out = name;
        if (Chance(rng_, 0.55)) {
          s.is_contraction = true;
          s.c = GenContraction();
        } else {
          s.e = GenElementwise();
        }
        p_.stmts.push_back(s);
        if (Refresh()) {
          added = true;
        } else {
          if (finding_) return {failed_, finding_};
          p_.stmts.pop_back();
          Refresh();
        }
      }
    }
    if (p_.stmts.empty()) {
      Stmt s;
      s.out = "T0";
      s.e = Expr{Expr::kRef, p_.inputs[0].name, 0, 0, {}};
      p_.stmts.push_back(s);
      Refresh();
    }

    // Outputs: every statement no later one reads, and some others.
    std::set<std::string> used;
    for (const Stmt& s : p_.stmts)
      for (const std::string& u : Uses(s)) used.insert(u);
    for (const Stmt& s : p_.stmts)
      if (!used.count(s.out) || Chance(rng_, 0.3)) p_.outputs.push_back(s.out);

    // Layouts for inputs, outputs and (rarely) intermediates.
    for (const Input& in : p_.inputs) MaybeLayout(in.name, 0.35);
    for (const Stmt& s : p_.stmts) MaybeLayout(s.out, 0.2);
    // A layout the catalogue row believed valid may be rejected: a finding.
    if (!Refresh() && finding_) return {failed_, finding_};
    return {p_, std::nullopt};
  }

 private:
  // Checks the program so far: false if the model deems it outside the
  // comparable subset; a finding (and false) if the binder rejects what the
  // model accepts or types it differently.
  bool Refresh() {
    Prog probe = p_;
    for (const Stmt& s : p_.stmts)
      if (std::find(probe.outputs.begin(), probe.outputs.end(), s.out) == probe.outputs.end())
        probe.outputs.push_back(s.out);
    Analysis pre = Analyze(p_, {}, {});
    if (!pre.invalid.empty()) return false;
    if (probe.outputs.empty()) {
      dims_.clear();
      sizes_.clear();
      for (const Input& in : p_.inputs) {
        dims_[in.name] = InputShape(p_, in).dims;
        std::vector<Size>& sizes = sizes_[in.name];
        for (const std::string& d : in.dims) sizes.push_back(Size{d, 1, 0});
      }
      analysis_ = std::move(pre);
      return true;
    }
    lang::Program bound;
    try {
      bound = BindProg(probe);
    } catch (const UserError& e) {
      finding_ = Finding{"bind-rejected", "", e.Render()};
      failed_ = probe;
      return false;
    }
    BoundFacts facts = FactsOf(bound);
    Analysis a = Analyze(p_, facts.dtypes, facts.terms);
    if (a.disagrees) {
      finding_ = Finding{"type-model", "", a.invalid};
      failed_ = probe;
    }
    if (!a.invalid.empty()) return false;
    for (const auto& [name, box] : facts.box)
      if (box > kMaxBox) return false;
    for (const auto& [name, decl] : bound.tensors)
      if (decl.shape.ElementCount() > kMaxElements) return false;
    analysis_ = std::move(a);
    dims_.clear();
    sizes_.clear();
    for (const Input& in : p_.inputs) {
      dims_[in.name] = bound.Tensor(in.name).shape.dims;
      std::vector<Size>& sizes = sizes_[in.name];
        for (const std::string& d : in.dims) sizes.push_back(Size{d, 1, 0});
    }
    for (const Stmt& s : p_.stmts) {
      dims_[s.out] = bound.Tensor(s.out).shape.dims;
      if (s.is_contraction) {
        sizes_[s.out] = s.c.sizes;
      } else {
        sizes_[s.out].clear();
        for (int64_t v : dims_[s.out]) sizes_[s.out].push_back(Size{"", 1, v});
      }
    }
    return true;
  }

  void MaybeLayout(const std::string& name, double p) {
    auto it = dims_.find(name);
    if (it == dims_.end() || it->second.empty() || !Chance(rng_, p)) return;
    const std::vector<int64_t>& dims = it->second;
    // Blocked layouts only where Tilec supports them: on inputs that only
    // contractions read, and never as a `default` (a fill kernel, which takes
    // only plain layouts; see DifftestRegressions.DISABLED_FillOfBlockedContractionOutput).
    bool elementwise = std::none_of(p_.inputs.begin(), p_.inputs.end(), [&](const Input& in) { return in.name == name; });
    for (const Stmt& s : p_.stmts)
      if ((!s.is_contraction && Uses(s).count(name)) || s.c.default_tensor == name) elementwise = true;
    std::vector<const LayoutKind*> fit;
    for (const LayoutKind& k : kLayouts)
      if (k.fits(static_cast<int>(dims.size())) && !(k.blocked && elementwise)) fit.push_back(&k);
    p_.layouts[name] = OneOf(rng_, fit)->make(rng_, dims);
  }

  std::vector<std::string> TensorNames() const {
    std::vector<std::string> names;
    for (const Input& in : p_.inputs) names.push_back(in.name);
    for (const Stmt& s : p_.stmts) names.push_back(s.out);
    return names;
  }

  // ---- contractions ----

  struct Var {
    std::string name;
    Size extent;
  };

  std::string FreshVar() { return fmt::format("{}{}", static_cast<char>('i' + next_var_ % 17), next_var_ / 17 ? std::to_string(next_var_ / 17) : ""); }

  Var& NewVar(std::vector<Var>& vars, Size extent) {
    vars.push_back({FreshVar(), extent});
    ++next_var_;
    return vars.back();
  }

  // An index polynomial for a dimension of size `s`, introducing variables
  // (bounded by this dimension or by a constraint) as needed.
  Poly IndexFor(const Size& s, std::vector<Var>& vars, Contraction& c) {
    Poly p;
    const int64_t n = Eval(s, p_);
    const int64_t r = Pick(rng_, 0, 99);
    if (r < 35 && !vars.empty()) {
      p.terms.push_back({1, OneOf(rng_, vars).name});
      if (Chance(rng_, 0.2)) p.constant = Pick(rng_, -2, 2);
    } else if (r < 65) {
      p.terms.push_back({1, NewVar(vars, s).name});
    } else if (r < 75) {
      // Convolution tap with padding: v + w - K/2, w < K.
      const std::string v = (vars.empty() || Chance(rng_, 0.5)) ? NewVar(vars, s).name : OneOf(rng_, vars).name;
      const int64_t k = Pick(rng_, 1, 4);
      const std::string w = NewVar(vars, Size{"", 1, k}).name;
      c.constraints.push_back({Poly{{{1, w}}, "", 0, 0, 1}, Size{"", 1, k}});
      p.terms = {{1, v}, {1, w}};
      p.constant = -(k / 2);
    } else if (r < 81) {
      // Strided: 2v + w, w < 2 (or 3: overlapping windows).
      const std::string v = NewVar(vars, Size{"", 1, (n + 1) / 2}).name;
      const int64_t k = Pick(rng_, 1, 3);
      const std::string w = NewVar(vars, Size{"", 1, k}).name;
      c.constraints.push_back({Poly{{{1, w}}, "", 0, 0, 1}, Size{"", 1, k}});
      p.terms = {{2, v}, {1, w}};
    } else if (r < 87 && !s.dim.empty() && s.coef == 1 && s.add == 0) {
      // Reversed: N - 1 - v.
      p.terms.push_back({-1, NewVar(vars, s).name});
      p.dim = s.dim;
      p.dim_coef = 1;
      p.constant = -1;
    } else if (r < 93) {
      // Rational: v / 2 (odd v are no valid assignment).
      p.terms.push_back({1, NewVar(vars, Size{"", 1, 2 * n}).name});
      p.div = 2;
    } else {
      p.constant = Pick(rng_, 0, std::max<int64_t>(n, 1));
    }
    return p;
  }

  Contraction GenContraction() {
    Contraction c;
    const int64_t r = Pick(rng_, 0, 99);
    int nrefs = 1;
    if (r < 40) {
      c.comb = 0;
    } else if (r < 65) {
      c.comb = '*', nrefs = 2;
    } else if (r < 80) {
      c.comb = '+', nrefs = 2;
    } else if (r < 90) {
      c.comb = '=', nrefs = 2;
    } else {
      c.comb = '?', nrefs = 3;
    }
    const char aggs[] = {'+', '+', '*', '>', '<', '='};
    c.agg = aggs[Pick(rng_, 0, 5)];
    std::vector<Var> vars;
    const std::vector<std::string> names = TensorNames();
    for (int k = 0; k < nrefs; ++k) {
      Ref ref;
      ref.tensor = OneOf(rng_, names);
      for (const Size& s : sizes_.at(ref.tensor)) ref.idx.push_back(IndexFor(s, vars, c));
      c.refs.push_back(ref);
    }
    // Output: a subset of the variables (all of them for '=', so that each
    // element gets at most one contribution), each in its own polynomial.
    std::vector<const Var*> outs;
    for (const Var& v : vars)
      if (c.agg == '=' || Chance(rng_, 0.6)) outs.push_back(&v);
    std::shuffle(outs.begin(), outs.end(), rng_);
    for (const Var* v : outs) {
      Poly p;
      Size size = v->extent;
      const int64_t r2 = Pick(rng_, 0, 9);
      if (r2 < 6) {
        p.terms.push_back({1, v->name});
      } else if (r2 < 7) {
        p.terms.push_back({1, v->name});
        p.constant = Pick(rng_, 1, 2);
        size.add += p.constant;
      } else if (r2 < 8) {
        p.terms.push_back({2, v->name});
        size.coef *= 2;
        size.add *= 2;
      } else if (r2 < 9) {
        const int64_t n = Eval(v->extent, p_);
        p.terms.push_back({-1, v->name});
        p.constant = n - 1;
        size = Size{"", 1, n};
      } else {
        p.terms.push_back({1, v->name});
        size = Size{"", 1, std::max<int64_t>(0, Eval(v->extent, p_) - 1)};
      }
      c.out_idx.push_back(p);
      c.sizes.push_back(size);
    }
    if (Chance(rng_, 0.2) && c.out_idx.size() < 4) {
      const size_t at = static_cast<size_t>(Pick(rng_, 0, static_cast<int64_t>(c.out_idx.size())));
      c.out_idx.insert(c.out_idx.begin() + static_cast<std::ptrdiff_t>(at), Poly{});
      c.sizes.insert(c.sizes.begin() + static_cast<std::ptrdiff_t>(at), Size{"", 1, 1});
    }
    // An extra constraint over two variables: a triangle (b <= a) or a band.
    if (vars.size() >= 2 && Chance(rng_, 0.2)) {
      const Var& a = OneOf(rng_, vars);
      const Var& b = OneOf(rng_, vars);
      if (a.name != b.name) {
        if (Chance(rng_, 0.5)) {
          c.constraints.push_back({Poly{{{1, a.name}, {-1, b.name}}, "", 0, 0, 1}, a.extent});
        } else {
          c.constraints.push_back({Poly{{{1, a.name}, {1, b.name}}, "", 0, 0, 1}, Size{"", 1, Pick(rng_, 1, 9)}});
        }
      }
    }
    // A default tensor of the output's dimensions, if there is one.
    if (Chance(rng_, 0.25)) {
      std::vector<int64_t> out_dims;
      for (const Size& s : c.sizes) out_dims.push_back(Eval(s, p_));
      std::vector<std::string> fits;
      for (const std::string& name : names)
        if (dims_.at(name) == out_dims) fits.push_back(name);
      if (!fits.empty()) c.default_tensor = OneOf(rng_, fits);
    }
    return c;
  }

  // ---- elementwise expressions ----

  bool Broadcasts(const std::vector<int64_t>& from, const std::vector<int64_t>& to) const {
    if (from.size() > to.size()) return false;
    for (size_t k = 0; k < from.size(); ++k) {
      const int64_t f = from[from.size() - 1 - k], t = to[to.size() - 1 - k];
      if (f != t && f != 1) return false;
    }
    return true;
  }

  bool Fits(const std::string& name, Want want) const {
    auto it = analysis_.tensors.find(name);
    if (it == analysis_.tensors.end()) return false;
    if (want == Want::kInt) return !lang::IsFloat(it->second.dtype);
    if (want == Want::kExact) return it->second.exact;
    return true;
  }

  Expr Leaf(Want want) {
    std::vector<std::string> fit;
    for (const std::string& name : TensorNames())
      if (Broadcasts(dims_.at(name), target_) && Fits(name, want)) fit.push_back(name);
    if (fit.empty())
      for (const std::string& name : TensorNames())
        if (Broadcasts(dims_.at(name), target_)) fit.push_back(name);
    return Expr{Expr::kRef, OneOf(rng_, fit), 0, 0, {}};
  }

  Expr Lit(bool allow_float) {
    if (allow_float && Chance(rng_, 0.4)) {
      const std::vector<double> fl = {0.5, 0.25, 1.5, 2.0, 3.0, 0.125, -1.0, 1.0};
      return Expr{Expr::kFloat, "", 0, OneOf(rng_, fl), {}};
    }
    const std::vector<int64_t> in = {0, 1, 1, 2, 3, 5, 7, -1, -3, 100, 255, 1000, 70000};
    return Expr{Expr::kInt, "", OneOf(rng_, in), 0, {}};
  }

  static Expr Bin(const std::string& op, Expr a, Expr b) { return Expr{Expr::kBinary, op, 0, 0, {std::move(a), std::move(b)}}; }
  static Expr Call(const std::string& f, std::vector<Expr> args) { return Expr{Expr::kCall, f, 0, 0, std::move(args)}; }

  // An operand: a subexpression, or (for the second operand) a literal.
  Expr Operand(int depth, Want want, bool literal_ok) {
    if (literal_ok && Chance(rng_, 0.3)) return Lit(want != Want::kInt);
    return Gen(depth - 1, want);
  }

  Expr Gen(int depth, Want want) {
    if (depth <= 0 || Chance(rng_, 0.25)) return Leaf(want);
    const int64_t r = Pick(rng_, 0, 99);
    if (want == Want::kInt || (want == Want::kAny && r < 30)) {
      // Integer operations (bit ops, shifts, division and remainder by
      // anything, including 0).
      const std::vector<std::string> ops = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"};
      if (Chance(rng_, 0.1)) return Expr{Expr::kUnary, "~", 0, 0, {Gen(depth - 1, Want::kInt)}};
      if (Chance(rng_, 0.15)) {
        const std::vector<std::string> casts = {"as_int", "as_uint"};
        const std::vector<int64_t> bits = {8, 16, 32, 64};
        return Call(OneOf(rng_, casts), {Gen(depth - 1, Want::kExact), Expr{Expr::kInt, "", OneOf(rng_, bits), 0, {}}});
      }
      return Bin(OneOf(rng_, ops), Gen(depth - 1, Want::kInt), Operand(depth, Want::kInt, true));
    }
    if (want == Want::kExact || r < 55) {
      // Exact operations on any type: comparisons, selections, min/max,
      // rounding, casts, logical operators.
      const int64_t k = Pick(rng_, 0, 9);
      switch (k) {
        case 0: {
          const std::vector<std::string> cmp = {"==", "!=", "<", ">", "<=", ">="};
          return Bin(OneOf(rng_, cmp), Gen(depth - 1, Want::kExact), Operand(depth, Want::kExact, true));
        }
        case 1:
          return Expr{Expr::kSelect, "", 0, 0,
                      {Gen(depth - 1, Want::kExact), Gen(depth - 1, want), Operand(depth, want, true)}};
        case 2: return Call(Chance(rng_, 0.5) ? "min" : "max", {Gen(depth - 1, want), Operand(depth, want, true)});
        case 3: {
          const std::vector<std::string> f = {"floor", "ceil", "round", "abs", "relu"};
          return Call(OneOf(rng_, f), {Gen(depth - 1, Want::kExact)});
        }
        case 4: {
          const std::vector<int64_t> bits = {16, 32, 64};
          return Call("as_float", {Gen(depth - 1, want), Expr{Expr::kInt, "", OneOf(rng_, bits), 0, {}}});
        }
        case 5: return Call("as_bool", {Gen(depth - 1, Want::kExact)});
        case 6: return Bin(Chance(rng_, 0.5) ? "&&" : "||", Gen(depth - 1, Want::kExact), Gen(depth - 1, Want::kExact));
        case 7: return Expr{Expr::kUnary, Chance(rng_, 0.5) ? "-" : "!", 0, 0, {Gen(depth - 1, want)}};
        case 8: return Bin("%", Gen(depth - 1, Want::kExact), Operand(depth, Want::kExact, true));
        default: return Leaf(want);
      }
    }
    // Float arithmetic and math functions (inexact, compared with tolerance).
    const int64_t k = Pick(rng_, 0, 9);
    switch (k) {
      case 0:
      case 1: {
        const std::vector<std::string> ops = {"+", "-", "*"};
        return Bin(OneOf(rng_, ops), Gen(depth - 1, want), Operand(depth, want, true));
      }
      case 2: return Bin("/", Gen(depth - 1, want), Lit(true));
      case 3: {
        // log/sqrt of 1 + x*x (bounded away from 0), pow of it.
        Expr x = Gen(depth - 1, want);
        Expr arg = Bin("+", Expr{Expr::kFloat, "", 0, 1.0, {}}, Bin("*", x, x));
        const int64_t f = Pick(rng_, 0, 2);
        if (f == 2) return Call("pow", {arg, Lit(true)});
        return Call(f == 0 ? "log" : "sqrt", {arg});
      }
      case 4: return Call("asin", {Bin("*", Gen(depth - 1, want), Expr{Expr::kFloat, "", 0, 0.5, {}})});
      default: {
        const std::vector<std::string> f = {"exp", "tanh", "sin", "cos", "atan", "sigmoid", "sinh", "cosh", "tan", "acos"};
        const std::string& fn = OneOf(rng_, f);
        Expr a = Gen(depth - 1, want);
        if (fn == "acos") a = Bin("*", a, Expr{Expr::kFloat, "", 0, 0.5, {}});
        return Call(fn, {a});
      }
    }
  }

  Expr GenElementwise() {
    const std::vector<std::string> names = TensorNames();
    target_ = dims_.at(OneOf(rng_, names));
    return Gen(static_cast<int>(Pick(rng_, 1, 3)), Want::kAny);
  }

  Rng rng_;
  Prog p_;
  Analysis analysis_;
  std::map<std::string, std::vector<int64_t>> dims_;
  std::map<std::string, std::vector<Size>> sizes_;
  std::vector<int64_t> target_;
  std::optional<Finding> finding_;
  Prog failed_;  // the program of finding_
  int next_var_ = 0;
};

}  // namespace

const std::vector<LayoutKind>& LayoutCatalogue() { return kLayouts; }

Generated Generate(uint64_t seed) { return Generator(seed).Run(); }

}  // namespace tilec::difftest
