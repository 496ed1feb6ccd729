// Contractions: names, sizes, affine index polynomials, constraints, the
// output type, `default`, and index bounds.
#include <fmt/format.h>

#include <set>

#include "support/error.h"
#include "tile_lang/bind_context.h"
#include "tile_lang/bounds.h"

namespace tilec::lang::bind {
namespace {

// Converts an index expression to an affine polynomial with rational
// coefficients; `/` is exact (rational) division here, unlike in elementwise
// expressions.
class PolyBuilder {
 public:
  explicit PolyBuilder(Context& ctx) : ctx_(ctx) {}

  Polynomial Build(const ast::Expr& e) {
    return ctx_.AtSpan(e.span, [&] { return Convert(e); });
  }

 private:
  static Polynomial Constant(Rational c) {
    Polynomial p;
    p.constant = c;
    return p;
  }

  Polynomial Convert(const ast::Expr& e) {
    switch (e.kind) {
      case ast::ExprKind::IntLit:
        return Constant(e.int_value);
      case ast::ExprKind::FloatLit:
        ctx_.Fail(e.span, "a float literal cannot be used in an index polynomial");
      case ast::ExprKind::Name:
        return NameTerm(e);
      case ast::ExprKind::Unary:
        if (e.unary_op != ast::UnaryOp::Neg)
          ctx_.Fail(e.span, "only '+', '-', '*' and '/' are allowed in an index polynomial");
        return Convert(*e.args[0]) * Rational(-1);
      case ast::ExprKind::Binary:
        return Binary(e);
      case ast::ExprKind::Ternary:
      case ast::ExprKind::Call:
        ctx_.Fail(e.span, "only '+', '-', '*' and '/' are allowed in an index polynomial");
    }
    TILEC_UNREACHABLE("bad expression kind {}", static_cast<int>(e.kind));
  }

  Polynomial NameTerm(const ast::Expr& e) {
    if (e.name_class == ast::NameClass::Index) {
      Polynomial p;
      p.terms[e.name] = 1;
      return p;
    }
    const Symbol& s = ctx_.Lookup(e.name, e.span);
    if (s.kind != Symbol::Kind::Dim && s.kind != Symbol::Kind::Constant)
      ctx_.Fail(e.span, "tensor '{}' cannot be used in an index polynomial", e.name);
    if (s.value.is_float)
      ctx_.Fail(e.span, "'{}' is {}, not an integer constant; index polynomials need integers",
                e.name, ToString(s.value));
    return Constant(s.value.i);
  }

  Polynomial Binary(const ast::Expr& e) {
    Polynomial a = Convert(*e.args[0]);
    Polynomial b = Convert(*e.args[1]);
    switch (e.binary_op) {
      case ast::BinaryOp::Add:
        return a + b;
      case ast::BinaryOp::Sub:
        return a - b;
      case ast::BinaryOp::Mul:
        if (a.IsConstant()) return b * a.constant;
        if (b.IsConstant()) return a * b.constant;
        ctx_.Fail(e.span, "index polynomial is not affine: both factors depend on index variables");
      case ast::BinaryOp::Div:
        if (!b.IsConstant())
          ctx_.Fail(e.span, "index polynomial is not affine: the divisor depends on index variables");
        if (b.constant.num == 0) ctx_.Fail(ctx_.OperatorSpan(e), "division by zero in index polynomial");
        return a * (Rational(1) / b.constant);
      default:
        ctx_.Fail(ctx_.OperatorSpan(e), "only '+', '-', '*' and '/' are allowed in an index polynomial");
    }
  }

  Context& ctx_;
};

void CollectVars(const Polynomial& p, std::set<std::string>& vars) {
  for (const auto& [v, c] : p.terms) vars.insert(v);
}

}  // namespace

void AddContraction(Context& ctx, ContractionOp op, const Shape& shape) {
  ctx.AddTensor(op.output, shape, op.span);
  std::set<std::string> vars;
  for (const auto& p : op.output_index) CollectVars(p, vars);
  for (const auto& in : op.inputs)
    for (const auto& p : in.index) CollectVars(p, vars);
  for (const auto& c : op.constraints) CollectVars(c.poly, vars);
  op.index_vars.assign(vars.begin(), vars.end());
  op.bounds = DeriveIndexBounds(op, ctx.program());
  ctx.program().ops.push_back(std::move(op));
}

void BindContraction(Context& ctx, const ast::Statement& st) {
  const ast::Contraction& c = st.contraction;
  const std::string& out = c.output.name;
  ctx.CheckFree(out, st.name_span, true);
  PolyBuilder poly(ctx);

  ContractionOp op;
  op.output = out;
  op.agg = c.agg;
  op.comb = c.comb;
  op.no_defract = c.no_defract;
  op.span = st.span;

  // Output: sizes first (they are expressions), then the index polynomials.
  size_t rank = c.output.indices.size();
  if (c.sizes.empty() && rank > 0)
    ctx.Fail(c.output.span, "output '{}' has {} ind{} but no sizes; write {}[..., : N, ...]", out,
             rank, rank == 1 ? "ex" : "ices", out);
  if (!c.sizes.empty() && c.sizes.size() != rank)
    ctx.Fail(c.output.span, "output '{}' has {} ind{} but {} size{}", out, rank,
             rank == 1 ? "ex" : "ices", c.sizes.size(), c.sizes.size() == 1 ? "" : "s");
  Shape shape;
  for (const auto& size : c.sizes) {
    int64_t d = RequireInt(ctx, *size, fmt::format("a size of output '{}'", out));
    if (d < 0) ctx.Fail(size->span, "size {} of output '{}' is negative", d, out);
    shape.dims.push_back(d);
  }
  for (const auto& idx : c.output.indices) op.output_index.push_back(poly.Build(*idx));

  // Inputs.
  size_t expected = c.comb == ast::CombOp::None ? 1 : c.comb == ast::CombOp::Cond ? 3 : 2;
  TILEC_CHECK(c.inputs.size() == expected, "contraction with {} inputs for its combination",
              c.inputs.size());
  std::vector<DataType> types;
  for (const auto& ref : c.inputs) {
    const Symbol& s = ctx.Lookup(ref.name, ref.span);
    if (s.kind == Symbol::Kind::Prng)
      ctx.Fail(ref.span, "'{0}' is the result of prng_step; use prng_value({0}) or prng_state({0})",
               ref.name);
    if (s.kind != Symbol::Kind::Input && s.kind != Symbol::Kind::Tensor)
      ctx.Fail(ref.span, "'{}' is the constant {}, not a tensor", ref.name, ToString(s.value));
    const Shape& in = ctx.ShapeOf(ref.name);
    if (static_cast<int>(ref.indices.size()) != in.rank())
      ctx.Fail(ref.span, "'{}' has {} dimension{} ({}) but is indexed with {}", ref.name, in.rank(),
               in.rank() == 1 ? "" : "s", ToString(in), ref.indices.size());
    ContractionOp::Access access{ref.name, {}};
    for (const auto& idx : ref.indices) access.index.push_back(poly.Build(*idx));
    op.inputs.push_back(std::move(access));
    types.push_back(in.dtype);
  }
  shape.dtype = types[0];
  for (size_t k = 1; k < types.size(); ++k) shape.dtype = Promote(shape.dtype, types[k]);
  if (c.comb == ast::CombOp::Eq) shape.dtype = DataType::Bool;
  if (c.comb == ast::CombOp::Cond) shape.dtype = types[2];

  // Constraints: 0 <= poly < bound.
  for (const auto& con : c.constraints) {
    ContractionOp::Constraint bound;
    bound.poly = poly.Build(*con.poly);
    bound.range = RequireInt(ctx, *con.bound, "a constraint bound");
    op.constraints.push_back(std::move(bound));
  }

  if (c.default_tensor) {
    const std::string& p = *c.default_tensor;
    SourceSpan span = c.default_span.known() ? c.default_span : st.span;
    const Symbol& s = ctx.Lookup(p, span);
    if (s.kind != Symbol::Kind::Input && s.kind != Symbol::Kind::Tensor)
      ctx.Fail(span, "default '{}' must be a tensor", p);
    const Shape& ps = ctx.ShapeOf(p);
    if (ps.dims != shape.dims)
      ctx.Fail(span, "default '{}' is {} but output '{}' has dimensions [{}]", p, ToString(ps), out,
               fmt::join(shape.dims, ", "));
    op.default_tensor = p;
  }

  AddContraction(ctx, std::move(op), shape);
  ctx.SetSpan(out, st.name_span);
}

}  // namespace tilec::lang::bind
