// Canonical Tile text. Parentheses are added only where Tile's grammar would
// otherwise build a different tree: `?:` is the loosest operator and
// left-associative (so a ternary needs parentheses as an else-branch or an
// operand, not as a condition), binary operators are left-associative except
// comparisons, which do not associate at all, and unary operators bind
// tightest. The parser folds `-literal` into a literal, so a negation of a
// literal is printed `-(1)` to survive the round trip.
#include "tile_lang/printer.h"

#include <cmath>

#include "support/error.h"

namespace tilec::lang {

using namespace ast;

namespace {

// Binding strength of a printed node: ternary 0, binary 1..10, unary, atom.
constexpr int kTernaryPrec = 0;
constexpr int kUnaryPrec = 100;
constexpr int kAtomPrec = 101;

bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsNameChar(char c) {
  return IsUpper(c) || IsLower(c) || (c >= '0' && c <= '9') || c == '_';
}

// [A-Za-z0-9_]+'? — what the lexer accepts after `#` or `$`.
bool IsEscapable(std::string_view name) {
  if (!name.empty() && name.back() == '\'') name.remove_suffix(1);
  if (name.empty()) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

bool IsKeyword(std::string_view name) {
  return name == "function" || name == "default" || name == "no_defract";
}

// Spells `name` so the lexer reads it back as a name of class `cls`.
std::string SpellName(const std::string& name, NameClass cls) {
  TILEC_CHECK(IsEscapable(name), "name '{}' cannot be written in Tile", name);
  if (cls == NameClass::Tensor) return IsUpper(name[0]) ? name : "#" + name;
  return IsLower(name[0]) && !IsKeyword(name) ? name : "$" + name;
}

// Calls and attribute parameters accept either class: escape only if needed.
std::string SpellAnyName(const std::string& name) {
  TILEC_CHECK(IsEscapable(name), "name '{}' cannot be written in Tile", name);
  if (IsUpper(name[0]) || (IsLower(name[0]) && !IsKeyword(name))) return name;
  return "$" + name;
}

std::string FormatFloat(double v) {
  TILEC_CHECK(std::isfinite(v), "float literal {} has no Tile spelling", v);
  // fmt's "{}" is the shortest text that reads back as the same double.
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

int PrecOf(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Ternary: return kTernaryPrec;
    case ExprKind::Binary: return Precedence(e.binary_op);
    case ExprKind::Unary: return kUnaryPrec;
    default: return kAtomPrec;
  }
}

bool IsNegativeLiteral(const Expr& e) {
  return (e.kind == ExprKind::IntLit && e.int_value < 0) ||
         (e.kind == ExprKind::FloatLit && std::signbit(e.float_value));
}

void PrintExpr(const Expr& e, std::string& out);

void PrintWrapped(const Expr& e, bool parens, std::string& out) {
  if (parens) out += '(';
  PrintExpr(e, out);
  if (parens) out += ')';
}

void PrintExpr(const Expr& e, std::string& out) {
  switch (e.kind) {
    case ExprKind::IntLit:
      out += fmt::format("{}", e.int_value);
      return;
    case ExprKind::FloatLit:
      out += FormatFloat(e.float_value);
      return;
    case ExprKind::Name:
      out += SpellName(e.name, e.name_class);
      return;
    case ExprKind::Unary: {
      TILEC_CHECK(e.args.size() == 1 && e.args[0]);
      const Expr& a = *e.args[0];
      out += Spelling(e.unary_op);
      // `-1` would re-parse as the literal -1. No other parentheses: each
      // would count as a level of nesting when the text is parsed again, so
      // a deep chain of unary operators that parsed would print as one too
      // deep to parse (the parser caps nesting). `- -x` is spaced instead.
      bool literal = a.kind == ExprKind::IntLit || a.kind == ExprKind::FloatLit;
      bool parens = PrecOf(a) < kUnaryPrec ||
                    (e.unary_op == UnaryOp::Neg && literal && !IsNegativeLiteral(a));
      if (!parens && e.unary_op == UnaryOp::Neg &&
          ((a.kind == ExprKind::Unary && a.unary_op == UnaryOp::Neg) || IsNegativeLiteral(a)))
        out += ' ';
      PrintWrapped(a, parens, out);
      return;
    }
    case ExprKind::Binary: {
      TILEC_CHECK(e.args.size() == 2 && e.args[0] && e.args[1]);
      int prec = Precedence(e.binary_op);
      bool nonassoc = IsComparison(e.binary_op);
      int lp = PrecOf(*e.args[0]);
      PrintWrapped(*e.args[0], lp < prec || (nonassoc && lp == prec), out);
      out += fmt::format(" {} ", Spelling(e.binary_op));
      PrintWrapped(*e.args[1], PrecOf(*e.args[1]) <= prec, out);
      return;
    }
    case ExprKind::Ternary: {
      TILEC_CHECK(e.args.size() == 3 && e.args[0] && e.args[1] && e.args[2]);
      PrintExpr(*e.args[0], out);  // left-associative: a ternary condition needs no parens
      out += " ? ";
      PrintExpr(*e.args[1], out);  // delimited by '?' and ':'
      out += " : ";
      PrintWrapped(*e.args[2], PrecOf(*e.args[2]) == kTernaryPrec, out);
      return;
    }
    case ExprKind::Call: {
      TILEC_CHECK(!e.args.empty(), "call of '{}' without arguments", e.name);
      out += SpellAnyName(e.name);
      out += '(';
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i) out += ", ";
        TILEC_CHECK(e.args[i] != nullptr);
        PrintExpr(*e.args[i], out);
      }
      out += ')';
      return;
    }
  }
  TILEC_UNREACHABLE("bad ExprKind {}", static_cast<int>(e.kind));
}

void PrintList(const std::vector<ExprPtr>& exprs, std::string& out) {
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (i) out += ", ";
    TILEC_CHECK(exprs[i] != nullptr);
    PrintExpr(*exprs[i], out);
  }
}

void PrintRef(const TensorRef& r, std::string& out) {
  out += SpellName(r.name, NameClass::Tensor);
  out += '[';
  PrintList(r.indices, out);
  out += ']';
}

void PrintContraction(const Contraction& c, std::string& out) {
  out += SpellName(c.output.name, NameClass::Tensor);
  out += '[';
  PrintList(c.output.indices, out);
  if (!c.sizes.empty()) {
    out += " : ";
    PrintList(c.sizes, out);
  } else if (c.has_colon && c.output.indices.empty()) {
    out += ':';
  }
  out += fmt::format("] = {}(", Spelling(c.agg));
  size_t expected = c.comb == CombOp::None ? 1 : c.comb == CombOp::Cond ? 3 : 2;
  TILEC_CHECK(c.inputs.size() == expected, "contraction has {} inputs for its combination",
              c.inputs.size());
  PrintRef(c.inputs[0], out);
  if (c.comb != CombOp::None) {
    out += c.comb == CombOp::Mul ? " * " : c.comb == CombOp::Add ? " + " : " == ";
    PrintRef(c.inputs[1], out);
  }
  if (c.comb == CombOp::Cond) {
    out += " ? ";
    PrintRef(c.inputs[2], out);
  }
  out += ')';
  for (const Constraint& k : c.constraints) {
    TILEC_CHECK(k.poly && k.bound);
    out += ", ";
    // The polynomial ends at the first top-level '<', so it never contains one.
    PrintExpr(*k.poly, out);
    out += " < ";
    PrintExpr(*k.bound, out);
  }
  if (c.no_defract) out += " no_defract";
  if (c.default_tensor) out += " default " + SpellName(*c.default_tensor, NameClass::Tensor);
}

void PrintStatement(const Statement& s, std::string& out) {
  out += "  ";
  for (const Attribute& a : s.attributes) {
    out += "[[" + SpellName(a.name, NameClass::Index);
    if (!a.params.empty()) {
      out += '(';
      for (size_t i = 0; i < a.params.size(); ++i) {
        if (i) out += ", ";
        out += SpellAnyName(a.params[i]);
      }
      out += ')';
    }
    out += "]] ";
  }
  if (s.kind == Statement::Kind::Contraction) {
    PrintContraction(s.contraction, out);
  } else {
    TILEC_CHECK(s.assignment.value != nullptr);
    out += SpellName(s.assignment.name, NameClass::Tensor) + " = ";
    PrintExpr(*s.assignment.value, out);
  }
  out += ";\n";
}

}  // namespace

std::string Print(const Function& f) {
  std::string out = "function (";
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    const Input& in = f.inputs[i];
    if (i) out += ", ";
    out += SpellName(in.name, NameClass::Tensor);
    if (in.has_dims) {
      out += '[';
      for (size_t d = 0; d < in.dims.size(); ++d) {
        if (d) out += ", ";
        out += SpellName(in.dims[d], NameClass::Tensor);
      }
      out += ']';
    }
  }
  out += ") -> (";
  for (size_t i = 0; i < f.outputs.size(); ++i) {
    if (i) out += ", ";
    out += SpellName(f.outputs[i].name, NameClass::Tensor);
  }
  out += ") {\n";
  for (const Statement& s : f.body) PrintStatement(s, out);
  out += "}\n";
  return out;
}

std::string Print(const Expr& e) {
  std::string out;
  PrintExpr(e, out);
  return out;
}

}  // namespace tilec::lang
