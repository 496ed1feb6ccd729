#include "tile_lang/ast.h"

#include <bit>
#include <cstring>

#include "support/error.h"

namespace tilec::lang::ast {

std::string_view Spelling(BinaryOp op) {
  switch (op) {
#define TILEC_X(e, s, p) \
  case BinaryOp::e:      \
    return s;
    TILEC_BINARY_OPS(TILEC_X)
#undef TILEC_X
  }
  TILEC_UNREACHABLE("bad BinaryOp {}", static_cast<int>(op));
}

int Precedence(BinaryOp op) {
  switch (op) {
#define TILEC_X(e, s, p) \
  case BinaryOp::e:      \
    return p;
    TILEC_BINARY_OPS(TILEC_X)
#undef TILEC_X
  }
  TILEC_UNREACHABLE("bad BinaryOp {}", static_cast<int>(op));
}

bool IsComparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Gt:
    case BinaryOp::Le:
    case BinaryOp::Ge:
      return true;
    default:
      return false;
  }
}

std::string_view Spelling(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
      return "-";
    case UnaryOp::BitNot:
      return "~";
    case UnaryOp::LogicalNot:
      return "!";
  }
  TILEC_UNREACHABLE("bad UnaryOp {}", static_cast<int>(op));
}

std::string_view Spelling(AggOp op) {
  switch (op) {
    case AggOp::Sum:
      return "+";
    case AggOp::Prod:
      return "*";
    case AggOp::Max:
      return ">";
    case AggOp::Min:
      return "<";
    case AggOp::Assign:
      return "=";
  }
  TILEC_UNREACHABLE("bad AggOp {}", static_cast<int>(op));
}

namespace {

std::shared_ptr<Expr> NewExpr(ExprKind kind, SourceSpan span) {
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  e->span = span;
  return e;
}

bool EqualPtr(const ExprPtr& a, const ExprPtr& b) {
  if (!a || !b) return !a && !b;
  return Equal(*a, *b);
}

bool EqualRef(const TensorRef& a, const TensorRef& b) {
  if (a.name != b.name || a.indices.size() != b.indices.size()) return false;
  for (size_t i = 0; i < a.indices.size(); ++i) {
    if (!EqualPtr(a.indices[i], b.indices[i])) return false;
  }
  return true;
}

bool EqualExprs(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!EqualPtr(a[i], b[i])) return false;
  }
  return true;
}

bool EqualContraction(const Contraction& a, const Contraction& b) {
  if (!EqualRef(a.output, b.output) || !EqualExprs(a.sizes, b.sizes) ||
      a.has_colon != b.has_colon || a.agg != b.agg || a.comb != b.comb ||
      a.inputs.size() != b.inputs.size() || a.constraints.size() != b.constraints.size() ||
      a.no_defract != b.no_defract || a.default_tensor != b.default_tensor) {
    return false;
  }
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    if (!EqualRef(a.inputs[i], b.inputs[i])) return false;
  }
  for (size_t i = 0; i < a.constraints.size(); ++i) {
    if (!EqualPtr(a.constraints[i].poly, b.constraints[i].poly) ||
        !EqualPtr(a.constraints[i].bound, b.constraints[i].bound)) {
      return false;
    }
  }
  return true;
}

bool EqualStatement(const Statement& a, const Statement& b) {
  if (a.kind != b.kind || a.attributes.size() != b.attributes.size()) return false;
  for (size_t i = 0; i < a.attributes.size(); ++i) {
    if (a.attributes[i].name != b.attributes[i].name ||
        a.attributes[i].params != b.attributes[i].params) {
      return false;
    }
  }
  if (a.kind == Statement::Kind::Contraction) return EqualContraction(a.contraction, b.contraction);
  return a.assignment.name == b.assignment.name &&
         EqualPtr(a.assignment.value, b.assignment.value);
}

}  // namespace

ExprPtr MakeInt(int64_t v, SourceSpan span) {
  auto e = NewExpr(ExprKind::IntLit, span);
  e->int_value = v;
  return e;
}

ExprPtr MakeFloat(double v, SourceSpan span) {
  auto e = NewExpr(ExprKind::FloatLit, span);
  e->float_value = v;
  return e;
}

ExprPtr MakeName(std::string name, NameClass cls, SourceSpan span) {
  TILEC_CHECK(!name.empty(), "a Name needs a spelling");
  auto e = NewExpr(ExprKind::Name, span);
  e->name = std::move(name);
  e->name_class = cls;
  return e;
}

ExprPtr MakeUnary(UnaryOp op, ExprPtr a, SourceSpan span) {
  TILEC_CHECK(a != nullptr);
  auto e = NewExpr(ExprKind::Unary, span);
  e->unary_op = op;
  e->args = {std::move(a)};
  return e;
}

ExprPtr MakeBinary(BinaryOp op, ExprPtr a, ExprPtr b, SourceSpan span) {
  TILEC_CHECK(a != nullptr && b != nullptr);
  auto e = NewExpr(ExprKind::Binary, span);
  e->binary_op = op;
  e->args = {std::move(a), std::move(b)};
  return e;
}

ExprPtr MakeTernary(ExprPtr c, ExprPtr t, ExprPtr f, SourceSpan span) {
  TILEC_CHECK(c != nullptr && t != nullptr && f != nullptr);
  auto e = NewExpr(ExprKind::Ternary, span);
  e->args = {std::move(c), std::move(t), std::move(f)};
  return e;
}

ExprPtr MakeCall(std::string name, std::vector<ExprPtr> args, SourceSpan span) {
  TILEC_CHECK(!name.empty(), "a Call needs a function name");
  TILEC_CHECK(!args.empty(), "Tile cannot express a call with no arguments");
  for (const auto& a : args) TILEC_CHECK(a != nullptr);
  auto e = NewExpr(ExprKind::Call, span);
  e->name = std::move(name);
  e->args = std::move(args);
  return e;
}

bool Equal(const Expr& a, const Expr& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ExprKind::IntLit:
      return a.int_value == b.int_value;
    case ExprKind::FloatLit:
      // Bitwise, so that -0.0 != 0.0 and a NaN equals itself.
      return std::bit_cast<uint64_t>(a.float_value) == std::bit_cast<uint64_t>(b.float_value);
    case ExprKind::Name:
      return a.name == b.name && a.name_class == b.name_class;
    case ExprKind::Unary:
      return a.unary_op == b.unary_op && EqualExprs(a.args, b.args);
    case ExprKind::Binary:
      return a.binary_op == b.binary_op && EqualExprs(a.args, b.args);
    case ExprKind::Ternary:
      return EqualExprs(a.args, b.args);
    case ExprKind::Call:
      return a.name == b.name && EqualExprs(a.args, b.args);
  }
  return false;
}

bool Equal(const Function& a, const Function& b) {
  if (a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size() ||
      a.body.size() != b.body.size()) {
    return false;
  }
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const Input& x = a.inputs[i];
    const Input& y = b.inputs[i];
    if (x.name != y.name || x.has_dims != y.has_dims || x.dims != y.dims) return false;
  }
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    if (a.outputs[i].name != b.outputs[i].name) return false;
  }
  for (size_t i = 0; i < a.body.size(); ++i) {
    if (!EqualStatement(a.body[i], b.body[i])) return false;
  }
  return true;
}

}  // namespace tilec::lang::ast
