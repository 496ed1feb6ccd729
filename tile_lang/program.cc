#include "tile_lang/program.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <limits>
#include <set>

#include "support/error.h"

namespace tilec::lang {
namespace {

using Wide = __int128;

// Every Rational operation computes in 128 bits (products of two int64 values
// always fit) and only then narrows, so overflow is detected instead of UB.
int64_t Narrow(Wide v) {
  if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min())
    TILEC_USER_ERROR("integer overflow in rational arithmetic (a value exceeds 64 bits)");
  return static_cast<int64_t>(v);
}

Wide Gcd(Wide a, Wide b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    Wide t = a % b;
    a = b;
    b = t;
  }
  return a;
}

Rational Normalize(Wide n, Wide d) {
  if (d == 0) TILEC_USER_ERROR("division by zero in rational arithmetic");
  if (d < 0) {
    n = -n;
    d = -d;
  }
  Wide g = Gcd(n, d);
  if (g > 1) {
    n /= g;
    d /= g;
  }
  Rational r;
  r.num = Narrow(n);
  r.den = Narrow(d);
  return r;
}

// |v| as text without negating v (INT64_MIN has no positive int64).
std::string Magnitude(int64_t v) {
  uint64_t m = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return fmt::format("{}", m);
}

// "i", "2*i", "i/2", "3*i/2" for a positive coefficient num/den.
std::string Term(const Rational& c, const std::string& var) {
  std::string num = Magnitude(c.num);
  std::string s = num == "1" ? var : fmt::format("{}*{}", num, var);
  if (c.den != 1) s += fmt::format("/{}", c.den);
  return s;
}

std::string MagnitudeText(const Rational& c) {
  std::string s = Magnitude(c.num);
  if (c.den != 1) s += fmt::format("/{}", c.den);
  return s;
}

// Floats print with a '.' or exponent so they never read as integers.
std::string FloatText(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  std::string s = fmt::format("{}", f);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string AccessText(const std::string& tensor, const std::vector<Polynomial>& index) {
  std::vector<std::string> parts;
  for (const auto& p : index) parts.push_back(ToString(p));
  return fmt::format("{}[{}]", tensor, fmt::join(parts, ", "));
}

std::string OperandText(const Operand& o) { return o.is_tensor ? o.tensor : ToString(o.scalar); }

std::string TypeText(const TensorDecl& t) {
  std::string s = ToString(t.shape);
  if (!t.layout.phys.empty() || t.layout.elements != 0) {
    if (!t.layout.IsRowMajor(t.shape.dims)) s += fmt::format(" @ {}", ToString(t.layout));
  }
  return s;
}

std::string ContractionText(const Program& p, const ContractionOp& op) {
  std::string out = fmt::format("{}: {} = {}(", AccessText(op.output, op.output_index),
                                TypeText(p.Tensor(op.output)), ast::Spelling(op.agg));
  std::vector<std::string> in;
  for (const auto& a : op.inputs) in.push_back(AccessText(a.tensor, a.index));
  switch (op.comb) {
    case ast::CombOp::None: out += fmt::format("{}", fmt::join(in, ", ")); break;
    case ast::CombOp::Mul: out += fmt::format("{}", fmt::join(in, " * ")); break;
    case ast::CombOp::Add: out += fmt::format("{}", fmt::join(in, " + ")); break;
    case ast::CombOp::Eq: out += fmt::format("{}", fmt::join(in, " == ")); break;
    case ast::CombOp::Cond:
      TILEC_CHECK(in.size() == 3, "cond contraction with {} inputs", in.size());
      out += fmt::format("{} == {} ? {}", in[0], in[1], in[2]);
      break;
  }
  out += ")\n";
  if (!op.index_vars.empty()) {
    std::vector<std::string> ranges;
    for (size_t k = 0; k < op.index_vars.size(); ++k) {
      ContractionOp::Bound b = k < op.bounds.size() ? op.bounds[k] : ContractionOp::Bound{};
      if (b.lo == 0) {
        ranges.push_back(fmt::format("{} {}", op.index_vars[k], b.hi < 0 ? 0 : b.hi + 1));
      } else {
        ranges.push_back(fmt::format("{} [{}, {}]", op.index_vars[k], b.lo, b.hi));
      }
    }
    out += fmt::format("    ranges: {}\n", fmt::join(ranges, ", "));
  }
  if (!op.constraints.empty()) {
    std::vector<std::string> cs;
    for (const auto& c : op.constraints) cs.push_back(fmt::format("{} < {}", ToString(c.poly), c.range));
    out += fmt::format("    constraints: {}\n", fmt::join(cs, ", "));
  }
  if (op.default_tensor) out += fmt::format("    default: {}\n", *op.default_tensor);
  if (op.no_defract) out += "    no_defract\n";
  return out;
}

std::string ElementwiseText(const Program& p, const ElementwiseOp& op) {
  std::vector<std::string> args;
  for (const auto& o : op.operands) args.push_back(OperandText(o));
  if (op.fn == ElemFn::Index) args.push_back(fmt::format("{}", op.axis));
  return fmt::format("{}: {} = {}({})\n", op.output, TypeText(p.Tensor(op.output)), Name(op.fn),
                     fmt::join(args, ", "));
}

std::string SpecialText(const Program& p, const SpecialOp& op) {
  std::vector<std::string> outs;
  for (const auto& o : op.outputs) outs.push_back(fmt::format("{}: {}", o, TypeText(p.Tensor(o))));
  return fmt::format("{} = {}({})\n", fmt::join(outs, ", "), Name(op.fn), fmt::join(op.inputs, ", "));
}

}  // namespace

// ---- Rational ----------------------------------------------------------------

Rational::Rational(int64_t n, int64_t d) { *this = Normalize(n, d); }

int64_t Rational::Floor() const {
  Wide q = static_cast<Wide>(num) / den;
  if (num % den != 0 && num < 0) --q;
  return Narrow(q);
}

int64_t Rational::Ceil() const {
  Wide q = static_cast<Wide>(num) / den;
  if (num % den != 0 && num > 0) ++q;
  return Narrow(q);
}

Rational operator+(Rational a, Rational b) {
  return Normalize(static_cast<Wide>(a.num) * b.den + static_cast<Wide>(b.num) * a.den,
                   static_cast<Wide>(a.den) * b.den);
}
Rational operator-(Rational a, Rational b) {
  return Normalize(static_cast<Wide>(a.num) * b.den - static_cast<Wide>(b.num) * a.den,
                   static_cast<Wide>(a.den) * b.den);
}
Rational operator-(Rational a) { return Normalize(-static_cast<Wide>(a.num), a.den); }
Rational operator*(Rational a, Rational b) {
  return Normalize(static_cast<Wide>(a.num) * b.num, static_cast<Wide>(a.den) * b.den);
}
Rational operator/(Rational a, Rational b) {
  if (b.num == 0) TILEC_USER_ERROR("division by zero in rational arithmetic");
  return Normalize(static_cast<Wide>(a.num) * b.den, static_cast<Wide>(a.den) * b.num);
}
bool operator<(Rational a, Rational b) {
  return static_cast<Wide>(a.num) * b.den < static_cast<Wide>(b.num) * a.den;
}

std::string ToString(Rational r) {
  if (r.den == 1) return fmt::format("{}", r.num);
  return fmt::format("{}/{}", r.num, r.den);
}

// ---- Polynomial --------------------------------------------------------------

Rational Polynomial::Coeff(const std::string& var) const {
  auto it = terms.find(var);
  return it == terms.end() ? Rational(0) : it->second;
}

Polynomial operator+(const Polynomial& a, const Polynomial& b) {
  Polynomial r = a;
  for (const auto& [var, c] : b.terms) {
    Rational sum = r.Coeff(var) + c;
    if (sum.num == 0) {
      r.terms.erase(var);
    } else {
      r.terms[var] = sum;
    }
  }
  r.constant = a.constant + b.constant;
  return r;
}

Polynomial operator-(const Polynomial& a, const Polynomial& b) { return a + b * Rational(-1); }

Polynomial operator*(const Polynomial& a, Rational k) {
  Polynomial r;
  if (k.num == 0) return r;
  for (const auto& [var, c] : a.terms) r.terms[var] = c * k;
  r.constant = a.constant * k;
  return r;
}

std::string ToString(const Polynomial& p) {
  std::string out;
  for (const auto& [var, c] : p.terms) {
    bool neg = c.num < 0;
    if (out.empty()) {
      out = (neg ? "-" : "") + Term(c, var);
    } else {
      out += (neg ? " - " : " + ") + Term(c, var);
    }
  }
  if (out.empty()) return ToString(p.constant);
  if (p.constant.num != 0) out += (p.constant.num < 0 ? " - " : " + ") + MagnitudeText(p.constant);
  return out;
}

// ---- Names ---------------------------------------------------------------------

std::string_view Name(ElemFn fn) {
  switch (fn) {
#define TILEC_X(e, n, a) \
  case ElemFn::e:        \
    return n;
    TILEC_ELEM_FNS(TILEC_X)
#undef TILEC_X
  }
  TILEC_UNREACHABLE("bad ElemFn {}", static_cast<int>(fn));
}

int Arity(ElemFn fn) {
  switch (fn) {
#define TILEC_X(e, n, a) \
  case ElemFn::e:        \
    return a;
    TILEC_ELEM_FNS(TILEC_X)
#undef TILEC_X
  }
  TILEC_UNREACHABLE("bad ElemFn {}", static_cast<int>(fn));
}

std::string_view Name(SpecialFn fn) {
  switch (fn) {
    case SpecialFn::Gather: return "gather";
    case SpecialFn::Scatter: return "scatter";
    case SpecialFn::Reshape: return "reshape";
    case SpecialFn::Shape: return "shape";
    case SpecialFn::PrngStep: return "prng_step";
  }
  TILEC_UNREACHABLE("bad SpecialFn {}", static_cast<int>(fn));
}

std::string ToString(const Scalar& s) {
  if (s.is_float) return FloatText(s.f);
  return fmt::format("{}", s.i);
}

// ---- Program -------------------------------------------------------------------

const TensorDecl& Program::Tensor(const std::string& name) const {
  auto it = tensors.find(name);
  TILEC_CHECK(it != tensors.end(), "program has no tensor '{}'", name);
  return it->second;
}

std::vector<std::string> Reads(const Op& op) {
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

std::vector<std::string> Writes(const Op& op) {
  if (auto* c = std::get_if<ContractionOp>(&op)) return {c->output};
  if (auto* e = std::get_if<ElementwiseOp>(&op)) return {e->output};
  return std::get<SpecialOp>(op).outputs;
}

void VerifyDataflow(const Program& program, std::string_view stage) {
  std::set<std::string> defined(program.inputs.begin(), program.inputs.end());
  for (size_t k = 0; k < program.ops.size(); ++k) {
    for (const std::string& t : Reads(program.ops[k]))
      TILEC_CHECK(defined.count(t), "after {}: op {} reads '{}' before any op writes it", stage, k, t);
    for (const std::string& t : Writes(program.ops[k])) defined.insert(t);
  }
  for (const std::string& o : program.outputs)
    TILEC_CHECK(defined.count(o), "after {}: no op writes the output '{}'", stage, o);
}

ContractionOp IdentityCopy(const TensorDecl& src, const std::string& dst) {
  ContractionOp c;
  c.output = dst;
  c.agg = ast::AggOp::Assign;
  c.comb = ast::CombOp::None;
  ContractionOp::Access in{src.name, {}};
  for (int d = 0; d < src.shape.rank(); ++d) {
    std::string var = fmt::format("i{}", d);
    Polynomial p;
    p.terms[var] = Rational(1);
    c.output_index.push_back(p);
    in.index.push_back(p);
    c.index_vars.push_back(var);
  }
  std::sort(c.index_vars.begin(), c.index_vars.end());  // "i10" sorts before "i2"
  for (const std::string& var : c.index_vars)
    c.bounds.push_back({0, src.shape.dims[std::stoi(var.substr(1))] - 1});
  c.inputs.push_back(std::move(in));
  return c;
}

std::string ToString(const Program& p) {
  auto signature = [&](const std::vector<std::string>& names) {
    std::vector<std::string> parts;
    for (const auto& n : names) parts.push_back(fmt::format("{}: {}", n, TypeText(p.Tensor(n))));
    return fmt::format("{}", fmt::join(parts, ", "));
  };
  std::string out =
      fmt::format("function ({}) -> ({}) {{\n", signature(p.inputs), signature(p.outputs));
  for (const auto& op : p.ops) {
    out += "  ";
    if (const auto* c = std::get_if<ContractionOp>(&op)) {
      out += ContractionText(p, *c);
    } else if (const auto* e = std::get_if<ElementwiseOp>(&op)) {
      out += ElementwiseText(p, *e);
    } else {
      out += SpecialText(p, std::get<SpecialOp>(op));
    }
  }
  out += "}\n";
  return out;
}

}  // namespace tilec::lang
