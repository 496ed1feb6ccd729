#include "tile_lang/grad_reverse.h"

#include <fmt/format.h>

#include <optional>
#include <set>

#include "support/error.h"
#include "tile_lang/to_ast.h"

namespace tilec::lang::grad {
namespace {

using ast::ExprPtr;

// The constant factor `c` of reverse_grad(X, c): a literal, possibly negated.
std::optional<double> LiteralValue(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::IntLit) return static_cast<double>(e.int_value);
  if (e.kind == ast::ExprKind::FloatLit) return e.float_value;
  if (e.kind == ast::ExprKind::Unary && e.unary_op == ast::UnaryOp::Neg)
    if (auto v = LiteralValue(*e.args.at(0))) return -*v;
  return std::nullopt;
}

// PlaidML's reverse_grad(X, c) is X whose gradient is multiplied by -c;
// binding forgets it. Each call becomes a tensor of its own, defined just
// before its statement (`ReverseGrad = X;`), whose gradient is scaled.
class ReverseGrads {
 public:
  explicit ReverseGrads(const ast::Function& f) : f_(f) {
    for (const auto& in : f.inputs) {
      names_.insert(in.name);
      names_.insert(in.dims.begin(), in.dims.end());
    }
    for (const auto& st : f.body)
      names_.insert(st.kind == ast::Statement::Kind::Assignment ? st.assignment.name : st.contraction.output.name);
  }

  ast::Function Rewrite(std::map<std::string, double>& factors) {
    ast::Function out = f_;
    out.body.clear();
    for (const auto& st : f_.body) {
      if (st.kind == ast::Statement::Kind::Assignment && st.assignment.value) {
        ast::Statement copy = st;
        copy.assignment.value = Replace(st.assignment.value, out.body, factors);
        out.body.push_back(std::move(copy));
      } else {
        out.body.push_back(st);
      }
    }
    return out;
  }

 private:
  ExprPtr Replace(const ExprPtr& e, std::vector<ast::Statement>& body, std::map<std::string, double>& factors) {
    if (e->kind == ast::ExprKind::Call && e->name == "reverse_grad" && e->args.size() == 2) {
      std::optional<double> c = LiteralValue(*e->args[1]);
      if (!c)
        TILEC_USER_ERROR_AT(f_.source, e->args[1]->span,
                            "the factor of 'reverse_grad' must be a literal for tilec grad");
      std::string name = "ReverseGrad";
      for (int k = 2; names_.count(name); ++k) name = fmt::format("ReverseGrad_{}", k);
      names_.insert(name);
      ast::Statement def = AssignmentStatement(name, Replace(e->args[0], body, factors));
      def.span = def.name_span = e->span;
      body.push_back(std::move(def));
      factors[name] = -*c;
      return ast::MakeName(name, ast::NameClass::Tensor, e->span);
    }
    if (e->args.empty()) return e;
    auto copy = std::make_shared<ast::Expr>(*e);
    for (auto& a : copy->args)
      if (a) a = Replace(a, body, factors);
    return copy;
  }

  const ast::Function& f_;
  std::set<std::string> names_;
};

}  // namespace

ast::Function RewriteReverseGrads(const ast::Function& f, std::map<std::string, double>& factors) {
  return ReverseGrads(f).Rewrite(factors);
}

}  // namespace tilec::lang::grad
