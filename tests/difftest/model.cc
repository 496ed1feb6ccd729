#include "tests/difftest/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

namespace tilec::difftest {

int64_t Eval(const Size& s, const Prog& p) {
  if (s.dim.empty()) return s.add;
  return s.coef * p.dims.at(s.dim) + s.add;
}

namespace {

// "t", "- t", "+ t" pieces of a sum, `first` without a leading '+'.
void AppendTerm(std::string& out, int64_t coef, const std::string& name) {
  if (coef == 0) return;
  const bool first = out.empty();
  const int64_t mag = coef < 0 ? -coef : coef;
  if (first) {
    if (coef < 0) out += "-";
  } else {
    out += coef < 0 ? " - " : " + ";
  }
  if (name.empty()) {
    out += fmt::format("{}", mag);
  } else if (mag == 1) {
    out += name;
  } else {
    out += fmt::format("{}*{}", mag, name);
  }
}

std::string FloatText(double v) {
  const std::string s = fmt::format("{}", std::fabs(v));
  const char* point = s.find_first_of(".e") == std::string::npos ? ".0" : "";
  return v < 0 ? fmt::format("(-{}{})", s, point) : fmt::format("{}{}", s, point);
}

}  // namespace

std::string ToText(const Poly& p) {
  std::string s;
  for (const auto& [coef, var] : p.terms) AppendTerm(s, coef, var);
  AppendTerm(s, p.dim_coef, p.dim);
  AppendTerm(s, p.constant, "");
  if (s.empty()) return p.div == 1 ? std::string(1, '0') : fmt::format("0 / {}", p.div);
  return p.div == 1 ? s : fmt::format("({}) / {}", s, p.div);
}

std::string ToText(const Size& s) {
  if (s.dim.empty()) return fmt::format("{}", s.add);
  std::string out;
  AppendTerm(out, s.coef, s.dim);
  AppendTerm(out, s.add, "");
  return out;
}

std::string ToText(const Expr& e) {
  switch (e.kind) {
    case Expr::kRef: return e.name;
    case Expr::kInt: return e.ival < 0 ? fmt::format("(-{})", -e.ival) : fmt::format("{}", e.ival);
    case Expr::kFloat: return FloatText(e.fval);
    case Expr::kUnary: return fmt::format("({}{})", e.name, ToText(e.args[0]));
    case Expr::kBinary: return fmt::format("({} {} {})", ToText(e.args[0]), e.name, ToText(e.args[1]));
    case Expr::kSelect:
      return fmt::format("({} ? {} : {})", ToText(e.args[0]), ToText(e.args[1]), ToText(e.args[2]));
    case Expr::kCall: {
      std::vector<std::string> args;
      for (const Expr& a : e.args) args.push_back(ToText(a));
      return fmt::format("{}({})", e.name, fmt::join(args, ", "));
    }
  }
  return "?";
}

namespace {

std::string RefText(const Ref& r) {
  std::vector<std::string> idx;
  for (const Poly& p : r.idx) idx.push_back(ToText(p));
  return fmt::format("{}[{}]", r.tensor, fmt::join(idx, ", "));
}

std::string ContractionText(const std::string& out, const Contraction& c) {
  std::vector<std::string> idx, sizes;
  for (const Poly& p : c.out_idx) idx.push_back(ToText(p));
  for (const Size& s : c.sizes) sizes.push_back(ToText(s));
  std::string body;
  switch (c.comb) {
    case 0: body = RefText(c.refs[0]); break;
    case '*':
    case '+': body = fmt::format("{} {} {}", RefText(c.refs[0]), c.comb, RefText(c.refs[1])); break;
    case '=': body = fmt::format("{} == {}", RefText(c.refs[0]), RefText(c.refs[1])); break;
    default: body = fmt::format("{} == {} ? {}", RefText(c.refs[0]), RefText(c.refs[1]), RefText(c.refs[2]));
  }
  std::string text = idx.empty() ? fmt::format("{}[] = {}({})", out, c.agg, body)
                                 : fmt::format("{}[{} : {}] = {}({})", out, fmt::join(idx, ", "),
                                               fmt::join(sizes, ", "), c.agg, body);
  for (const auto& [poly, bound] : c.constraints) text += fmt::format(", {} < {}", ToText(poly), ToText(bound));
  if (!c.default_tensor.empty()) text += " default " + c.default_tensor;
  return text;
}

void CollectRefs(const Expr& e, std::set<std::string>& out) {
  if (e.kind == Expr::kRef) out.insert(e.name);
  for (const Expr& a : e.args) CollectRefs(a, out);
}

}  // namespace

std::string ToText(const Prog& p) {
  std::vector<std::string> ins;
  for (const Input& in : p.inputs) ins.push_back(fmt::format("{}[{}]", in.name, fmt::join(in.dims, ", ")));
  std::string text =
      fmt::format("function ({}) -> ({}) {{\n", fmt::join(ins, ", "), fmt::join(p.outputs, ", "));
  for (const Stmt& s : p.stmts) {
    text += "  ";
    text += s.is_contraction ? ContractionText(s.out, s.c) : fmt::format("{} = {}", s.out, ToText(s.e));
    text += ";\n";
  }
  return text + "}\n";
}

lang::Shape InputShape(const Prog& p, const Input& in) {
  lang::Shape shape{in.dtype, {}};
  for (const std::string& d : in.dims) shape.dims.push_back(p.dims.at(d));
  return shape;
}

std::set<std::string> Uses(const Stmt& s) {
  std::set<std::string> used;
  if (s.is_contraction) {
    for (const Ref& r : s.c.refs) used.insert(r.tensor);
    if (!s.c.default_tensor.empty()) used.insert(s.c.default_tensor);
  } else {
    CollectRefs(s.e, used);
  }
  return used;
}

void RemoveDead(Prog& p) {
  std::set<std::string> live(p.outputs.begin(), p.outputs.end());
  std::vector<Stmt> kept;
  for (auto it = p.stmts.rbegin(); it != p.stmts.rend(); ++it) {
    if (!live.count(it->out)) continue;
    for (const std::string& u : Uses(*it)) live.insert(u);
    kept.insert(kept.begin(), *it);
  }
  p.stmts = std::move(kept);
  for (auto it = p.layouts.begin(); it != p.layouts.end();) {
    bool is_input = std::any_of(p.inputs.begin(), p.inputs.end(), [&](const Input& in) { return in.name == it->first; });
    it = (live.count(it->first) || is_input) ? std::next(it) : p.layouts.erase(it);
  }
}

double UnitRoundoff(DataType t) {
  switch (t) {
    case DataType::F16: return std::ldexp(1.0, -11);
    case DataType::F32: return std::ldexp(1.0, -24);
    case DataType::F64: return std::ldexp(1.0, -53);
    default: return 0;
  }
}

namespace {

// Largest magnitude a type holds; floats keep a margin of 2 so that an
// amplitude bound below it cannot round to infinity on one side only.
double TypeMax(DataType t) {
  switch (t) {
    case DataType::Bool: return 1;
    case DataType::F16: return 65504.0 / 2;
    case DataType::F32: return 1e37;
    case DataType::F64: return 1e300;
    default: return std::ldexp(1.0, lang::BitWidth(t) - (lang::IsSigned(t) ? 1 : 0));
  }
}

// Integers of a float type's significand are converted exactly.
bool IsFloatT(DataType t) { return lang::IsFloat(t); }

// Math functions: the largest |argument| allowed, the output bound and the
// Lipschitz constant over that domain, as functions of the argument's bound.
struct MathFn {
  const char* name;
  double arg_limit;
  double (*out)(double a);
  double (*lipschitz)(double a);
};
const MathFn kMath[] = {
    {"exp", 4, [](double a) { return std::exp(a); }, [](double a) { return std::exp(a); }},
    {"tanh", 1e6, [](double) { return 1.0; }, [](double) { return 1.0; }},
    {"sin", 100, [](double) { return 1.0; }, [](double) { return 1.0; }},
    {"cos", 100, [](double) { return 1.0; }, [](double) { return 1.0; }},
    {"atan", 1e6, [](double) { return 1.6; }, [](double) { return 1.0; }},
    {"sigmoid", 80, [](double) { return 1.0; }, [](double) { return 0.25; }},
    {"sinh", 3, [](double a) { return std::cosh(a); }, [](double a) { return std::cosh(a); }},
    {"cosh", 3, [](double a) { return std::cosh(a); }, [](double a) { return std::sinh(a) + 1; }},
    {"tan", 1, [](double a) { return std::tan(a); }, [](double a) { return 1 / (std::cos(a) * std::cos(a)); }},
    {"asin", 0.5, [](double) { return 1.6; }, [](double) { return 1.2; }},
    {"acos", 0.5, [](double) { return 3.2; }, [](double) { return 1.2; }},
};
// Ulps a device's math library may be off by (OpenCL's full profile allows
// up to 16 for pow, fewer for the others).
constexpr double kMathUlps = 16;

bool IsCompare(const std::string& op) {
  return op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=";
}
bool IsBitOp(const std::string& op) {
  return op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>" || op == "~";
}

class Analyzer {
 public:
  explicit Analyzer(const std::map<std::string, DataType>& dtypes) : dtypes_(dtypes) {}

  std::map<std::string, Info> tensors;
  std::string invalid;
  bool disagrees = false;

  void Fail(std::string why) {
    if (invalid.empty()) invalid = std::move(why);
  }

  // Value info of a literal met by an operand of type `other`, per the weak
  // typing of constants (language.md 6.2).
  Info Literal(const Expr& e, DataType other) {
    Info i;
    if (e.kind == Expr::kInt) {
      i.dtype = other == DataType::Bool ? DataType::I32 : other;
      i.amax = std::fabs(static_cast<double>(e.ival));
    } else {
      i.dtype = IsFloatT(other) ? other : DataType::F32;
      i.amax = std::fabs(e.fval);
    }
    i.lo = e.kind == Expr::kInt ? static_cast<double>(e.ival) : e.fval;
    return i;
  }

  bool IsLit(const Expr& e) { return e.kind == Expr::kInt || e.kind == Expr::kFloat; }

  // Analyzes the value operands of an op together, typing literals by the
  // non-literal operands.
  std::vector<Info> Operands(const std::vector<const Expr*>& es) {
    std::vector<Info> out(es.size());
    std::optional<DataType> t;
    for (size_t k = 0; k < es.size(); ++k)
      if (!IsLit(*es[k])) {
        out[k] = Value(*es[k]);
        t = t ? lang::Promote(*t, out[k].dtype) : out[k].dtype;
      }
    if (!t) Fail("an operation on literals only");
    for (size_t k = 0; k < es.size(); ++k)
      if (IsLit(*es[k])) out[k] = Literal(*es[k], t.value_or(DataType::I32));
    return out;
  }

  static DataType PromoteAll(const std::vector<Info>& in) {
    DataType t = in[0].dtype;
    for (size_t k = 1; k < in.size(); ++k) t = lang::Promote(t, in[k].dtype);
    return t;
  }

  // `v` converted to `t`.
  Info Convert(Info v, DataType t) {
    if (v.dtype == t) return v;
    Info r = v;
    r.dtype = t;
    if (IsFloatT(t)) {
      if (v.amax > TypeMax(t)) Fail(fmt::format("a value of magnitude up to {} converted to {}", v.amax, Name(t)));
      if (!v.exact) r.err = v.err + 2 * UnitRoundoff(t) * v.amax;
    } else {
      if (IsFloatT(v.dtype) && !v.exact) Fail("an inexact float converted to an integer or bool");
      r.amax = t == DataType::Bool ? 1 : std::min(v.amax, TypeMax(t));
      r.lo = t == DataType::Bool ? 0 : -r.amax;
      r.err = 0;
    }
    return r;
  }

  // Requires that a discontinuous operation sees only exact values.
  void NeedExact(const std::vector<Info>& in, const std::string& what) {
    for (const Info& i : in)
      if (!i.exact) Fail(fmt::format("an inexact value reaches '{}'", what));
  }

  Info Result(DataType t, bool exact, double amax, double err, double lo) {
    Info r;
    r.dtype = t;
    if (!IsFloatT(t)) {
      r.exact = true;
      r.amax = t == DataType::Bool ? 1 : std::min(amax, TypeMax(t));
      r.lo = t == DataType::Bool ? 0 : -r.amax;
      return r;
    }
    if (amax > TypeMax(t)) Fail(fmt::format("{} values may reach {} (overflow)", Name(t), amax));
    r.exact = exact;
    r.amax = amax;
    r.lo = std::max(lo, -amax);
    r.err = exact ? 0 : err + 2 * UnitRoundoff(t) * amax;
    return r;
  }

  Info Value(const Expr& e) {
    switch (e.kind) {
      case Expr::kRef: {
        auto it = tensors.find(e.name);
        if (it == tensors.end()) {
          Fail("unknown tensor " + e.name);
          return {};
        }
        return it->second;
      }
      case Expr::kInt:
      case Expr::kFloat: Fail("a literal-only expression"); return {};
      case Expr::kUnary: return Unary(e);
      case Expr::kBinary: return Binary(e);
      case Expr::kSelect: {
        Info c = Value(e.args[0]);
        NeedExact({c}, "?:");
        std::vector<Info> v = Operands({&e.args[1], &e.args[2]});
        DataType t = PromoteAll(v);
        Info b = Convert(v[0], t), d = Convert(v[1], t);
        return Result(t, b.exact && d.exact, std::max(b.amax, d.amax), std::max(b.err, d.err), std::min(b.lo, d.lo));
      }
      case Expr::kCall: return Call(e);
    }
    return {};
  }

  Info Unary(const Expr& e) {
    Info a = Value(e.args[0]);
    if (e.name == "!") {
      NeedExact({a}, "!");
      return Result(DataType::Bool, true, 1, 0, 0);
    }
    if (e.name == "~") {
      if (IsFloatT(a.dtype)) Fail("~ on a float");
      return Result(a.dtype, true, TypeMax(a.dtype), 0, 0);
    }
    // Negation: exact, but integers wrap at MIN.
    return Result(a.dtype, a.exact, IsFloatT(a.dtype) ? a.amax : TypeMax(a.dtype), a.err, -a.amax);
  }

  Info Binary(const Expr& e) {
    const std::string& op = e.name;
    std::vector<Info> v = Operands({&e.args[0], &e.args[1]});
    DataType t = PromoteAll(v);
    if (op == "&&" || op == "||") {
      NeedExact(v, op);
      return Result(DataType::Bool, true, 1, 0, 0);
    }
    Info a = Convert(v[0], t), b = Convert(v[1], t);
    if (IsCompare(op)) {
      NeedExact({a, b}, op);
      return Result(DataType::Bool, true, 1, 0, 0);
    }
    if (IsBitOp(op)) {
      if (IsFloatT(t)) Fail(op + " on floats");
      return Result(t, true, TypeMax(t), 0, 0);
    }
    const bool fl = IsFloatT(t);
    if (op == "+") return Result(t, !fl, a.amax + b.amax, a.err + b.err, a.lo + b.lo);
    if (op == "-") return Result(t, !fl, a.amax + b.amax, a.err + b.err, a.lo - b.amax);
    if (op == "*") {
      // x * x is never negative: lets log and sqrt see a positive argument.
      const bool square = ToText(e.args[0]) == ToText(e.args[1]);
      return Result(t, !fl, a.amax * b.amax, a.err * b.amax + b.err * a.amax + a.err * b.err,
                    square ? 0 : -a.amax * b.amax);
    }
    if (op == "/") {
      if (!fl) return Result(t, true, a.amax, 0, 0);
      if (e.args[1].kind != Expr::kFloat && e.args[1].kind != Expr::kInt) Fail("float division by a tensor");
      const double d = std::fabs(e.args[1].kind == Expr::kFloat ? e.args[1].fval : static_cast<double>(e.args[1].ival));
      if (d < 0.25) Fail("float division by a small constant");
      return Result(t, false, a.amax / d, a.err / d, -a.amax / d);
    }
    if (op == "%") {
      NeedExact({a, b}, "%");
      return Result(t, true, fl ? a.amax : b.amax, 0, 0);
    }
    Fail("unknown operator " + op);
    return {};
  }

  Info Call(const Expr& e) {
    const std::string& f = e.name;
    if (f == "as_float" || f == "as_int" || f == "as_uint" || f == "as_bool") {
      Info a = Value(e.args[0]);
      DataType t = DataType::Bool;
      if (f != "as_bool") {
        const int bits = static_cast<int>(e.args[1].ival);
        t = f == "as_float" ? (bits == 16 ? DataType::F16 : bits == 32 ? DataType::F32 : DataType::F64)
                            : *lang::ParseDataType(fmt::format("{}{}", f == "as_int" ? "i" : "u", bits));
      }
      if (!IsFloatT(t)) NeedExact({a}, f);
      if (IsFloatT(a.dtype) && !IsFloatT(t)) {
        // Saturating, exact conversion of an exact value.
        return Result(t, true, a.amax, 0, 0);
      }
      return Convert(a, t);
    }
    if (f == "abs" || f == "relu") {
      Info a = Value(e.args[0]);
      // relu(x) is `x < 0 ? 0 : x`: the literal makes a bool operand i32.
      if (f == "relu" && a.dtype == DataType::Bool) a = Convert(a, DataType::I32);
      if (!IsFloatT(a.dtype)) return Result(a.dtype, true, TypeMax(a.dtype), 0, 0);
      return Result(a.dtype, a.exact, a.amax, a.err, 0);
    }
    if (f == "min" || f == "max") {
      std::vector<Info> v = Operands({&e.args[0], &e.args[1]});
      DataType t = PromoteAll(v);
      Info a = Convert(v[0], t), b = Convert(v[1], t);
      return Result(t, a.exact && b.exact, std::max(a.amax, b.amax), std::max(a.err, b.err),
                    f == "max" ? std::max(a.lo, b.lo) : std::min(a.lo, b.lo));
    }
    if (f == "floor" || f == "ceil" || f == "round") {
      // Math functions: integer arguments are computed in f32.
      Info a = Value(e.args[0]);
      NeedExact({a}, f);
      if (!IsFloatT(a.dtype)) a = Convert(a, DataType::F32);
      return Result(a.dtype, true, a.amax + 1, 0, a.lo - 1);
    }
    // Math functions compute in the promoted float type (f32 for integers).
    std::vector<const Expr*> args;
    for (const Expr& a : e.args) args.push_back(&a);
    std::vector<Info> v = Operands(args);
    DataType t = PromoteAll(v);
    if (!IsFloatT(t)) t = DataType::F32;
    Info a = Convert(v[0], t);
    const double ulp_err = kMathUlps * UnitRoundoff(t);
    if (f == "log" || f == "sqrt") {
      if (a.lo < 0.5) Fail(f + " of an argument not bounded away from 0");
      const double lip = f == "log" ? 1 / a.lo : 0.5 / std::sqrt(a.lo);
      const double out = f == "log" ? std::max(std::fabs(std::log(a.amax)), std::fabs(std::log(a.lo))) : std::sqrt(a.amax);
      return Result(t, false, out, lip * a.err + ulp_err * out, f == "log" ? -out : 0);
    }
    if (f == "pow") {
      Info b = Convert(v[1], t);
      if (a.lo < 0.5 || a.amax > 4 || b.amax > 2) Fail("pow outside its tested domain");
      const double out = std::pow(std::max(a.amax, 1 / a.lo), b.amax);
      const double lip = b.amax * out / a.lo + out * std::log(std::max(a.amax, 1 / a.lo));
      return Result(t, false, out, lip * (a.err + b.err) + ulp_err * out, 0);
    }
    for (const MathFn& m : kMath)
      if (f == m.name) {
        if (a.amax > m.arg_limit) Fail(fmt::format("{} of an argument up to {}", f, a.amax));
        const double out = m.out(a.amax);
        return Result(t, false, out, m.lipschitz(a.amax) * a.err + ulp_err * out,
                      (f == "exp" || f == "cosh" || f == "sigmoid") ? 0 : -out);
      }
    Fail("unknown function " + f);
    return {};
  }

  void Statement(const Stmt& s, int64_t terms) {
    // Without the binder's types (a pre-check), the model's own.
    auto bound = dtypes_.find(s.out);
    Info r = s.is_contraction ? Contract(s.c, bound == dtypes_.end() ? ContractionType(s.c) : bound->second, terms)
                              : Value(s.e);
    if (bound != dtypes_.end() && r.dtype != bound->second && invalid.empty()) {
      Fail(fmt::format("the model types {} as {}, the binder as {}", s.out, Name(r.dtype), Name(bound->second)));
      disagrees = true;
    }
    tensors[s.out] = r;
  }

  // language.md 4.4.
  DataType ContractionType(const Contraction& c) {
    std::vector<DataType> t;
    for (const Ref& r : c.refs) {
      auto it = tensors.find(r.tensor);
      t.push_back(it == tensors.end() ? DataType::F32 : it->second.dtype);
    }
    switch (c.comb) {
      case 0: return t[0];
      case '*':
      case '+': return lang::Promote(t[0], t[1]);
      case '=': return DataType::Bool;
      default: return t[2];
    }
  }

  Info Contract(const Contraction& c, DataType out_t, int64_t terms) {
    std::vector<Info> in;
    for (const Ref& r : c.refs) {
      auto it = tensors.find(r.tensor);
      if (it == tensors.end()) {
        Fail("unknown tensor " + r.tensor);
        return {};
      }
      in.push_back(it->second);
    }
    Info t;
    switch (c.comb) {
      case 0: t = in[0]; break;
      case '*':
      case '+': {
        Info a = Convert(in[0], out_t), b = Convert(in[1], out_t);
        t = c.comb == '*' ? Result(out_t, !IsFloatT(out_t), a.amax * b.amax,
                                   a.err * b.amax + b.err * a.amax + a.err * b.err, -a.amax * b.amax)
                          : Result(out_t, !IsFloatT(out_t), a.amax + b.amax, a.err + b.err, a.lo + b.lo);
        break;
      }
      case '=':
        NeedExact(in, "== combination");
        t = Result(DataType::Bool, true, 1, 0, 0);
        break;
      default:
        NeedExact({in[0], in[1]}, "== ? combination");
        t = in[2];
        t.lo = std::min(t.lo, 0.0);
    }
    if (t.dtype != out_t) t = Convert(t, out_t);
    Info r;
    const double k = static_cast<double>(std::max<int64_t>(terms, 1));
    const double u = UnitRoundoff(out_t);
    switch (c.agg) {
      case '+':
        r = Result(out_t, !IsFloatT(out_t), k * t.amax, k * t.err + k * u * k * t.amax, -k * t.amax);
        break;
      case '*': {
        const double grow = std::pow(std::max(1.0, t.amax), k - 1);
        r = Result(out_t, !IsFloatT(out_t), std::pow(std::max(1.0, t.amax), k),
                   k * (t.err + u * t.amax) * grow, -std::pow(std::max(1.0, t.amax), k));
        break;
      }
      default: r = t;  // max, min, assign: one of the contributions
    }
    // Unreached elements hold 0 or the default tensor's element.
    r.lo = std::min(r.lo, 0.0);
    if (!c.default_tensor.empty()) {
      auto it = tensors.find(c.default_tensor);
      if (it == tensors.end()) {
        Fail("unknown default " + c.default_tensor);
        return r;
      }
      Info d = Convert(it->second, out_t);
      r.amax = std::max(r.amax, d.amax);
      r.err = std::max(r.err, d.err);
      r.exact = r.exact && d.exact;
      r.lo = std::min(r.lo, d.lo);
    }
    return r;
  }

 private:
  const std::map<std::string, DataType>& dtypes_;
};

}  // namespace

Analysis Analyze(const Prog& p, const std::map<std::string, DataType>& dtypes,
                 const std::map<std::string, int64_t>& terms) {
  Analyzer a(dtypes);
  for (const Input& in : p.inputs) {
    Info i;
    i.dtype = in.dtype;
    // lang::FillRandom: floats in [-1, 1), signed ints in [-8, 8], unsigned in [0, 16].
    i.amax = IsFloatT(in.dtype) ? 1 : in.dtype == DataType::Bool ? 1 : lang::IsSigned(in.dtype) ? 8 : 16;
    i.lo = IsFloatT(in.dtype) || lang::IsSigned(in.dtype) ? -i.amax : 0;
    a.tensors[in.name] = i;
  }
  for (const Stmt& s : p.stmts) {
    auto it = terms.find(s.out);
    a.Statement(s, it == terms.end() ? 1 : it->second);
  }
  return {std::move(a.tensors), std::move(a.invalid), a.disagrees};
}

}  // namespace tilec::difftest
