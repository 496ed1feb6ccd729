// Internal to the binder: the state shared by binder.cc (statements, inputs,
// outputs), bind_expr.cc (elementwise expressions, typing, constant folding),
// builtins.cc (calls) and bind_contraction.cc (contractions). Not a public API.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"
#include "tile_lang/ast.h"
#include "tile_lang/program.h"
#include "tile_lang/types.h"

namespace tilec::lang::bind {

// A value known at bind time: a literal, a dimension size or a folded named
// constant. Constants are "weak": they carry no element type of their own and
// take one from the tensors they meet (see PromoteOperands in bind_expr.cc).
struct Const {
  bool is_float = false;
  int64_t i = 0;  // when !is_float
  double f = 0;   // when is_float

  static Const Int(int64_t v) { return Const{false, v, 0}; }
  static Const Float(double v) { return Const{true, 0, v}; }
  double AsDouble() const { return is_float ? f : static_cast<double>(i); }
  bool IsTrue() const { return is_float ? f != 0 : i != 0; }
};
std::string ToString(const Const& c);

// What an expression evaluates to while binding.
struct Value {
  enum class Kind : uint8_t { Const, Tensor, Prng };
  Kind kind = Kind::Const;
  Const c;           // Const
  std::string name;  // Tensor: the tensor's name; Prng: the prng_step result's name

  static Value Of(Const c) { return Value{Kind::Const, c, {}}; }
  static Value Tensor(std::string n) { return Value{Kind::Tensor, {}, std::move(n)}; }
  static Value Prng(std::string n) { return Value{Kind::Prng, {}, std::move(n)}; }
};

// One entry of the single namespace shared by tensors, dims and constants.
struct Symbol {
  enum class Kind : uint8_t { Input, Dim, Constant, Tensor, Prng };
  Kind kind = Kind::Tensor;
  SourceSpan span;     // where it is defined
  Const value;         // Dim, Constant
  std::string input;   // Dim: the input that first bound it
  size_t prng_op = 0;  // Prng: index of its SpecialOp in Program::ops
  bool prng_taken[2] = {false, false};  // Prng: output {value, state} referenced yet
};

class Context {
 public:
  Context(const ast::Function& fn, Program& program) : fn_(fn), program_(program) {}

  const ast::Function& fn() const { return fn_; }
  Program& program() { return program_; }
  const SourceFilePtr& source() const { return fn_.source; }

  // Throws a UserError at `span` of the function's source.
  template <typename... Args>
  [[noreturn]] void Fail(const SourceSpan& span, fmt::format_string<Args...> format,
                         Args&&... args) const {
    throw UserError(fmt::format(format, std::forward<Args>(args)...), fn_.source, span);
  }
  // Runs `body`; a UserError without a location (overflow in Rational
  // arithmetic, say) is re-thrown at `span` so the user sees where it happened.
  template <typename F>
  auto AtSpan(const SourceSpan& span, F&& body) const -> decltype(body()) {
    try {
      return body();
    } catch (const UserError& e) {
      if (e.span().known()) throw;
      throw UserError(e.message(), fn_.source, span);
    }
  }

  std::string Where(const SourceSpan& span) const;  // "2:3"

  const Symbol* Find(const std::string& name) const;
  Symbol* FindMutable(const std::string& name);
  // The symbol `name`; UserError at `span` if it is not defined.
  const Symbol& Lookup(const std::string& name, const SourceSpan& span) const;
  // UserError at `span` if `name` is taken ("already defined at", or
  // "is an input and cannot be assigned" when `assigning`).
  void CheckFree(const std::string& name, const SourceSpan& span, bool assigning) const;
  void Define(const std::string& name, Symbol symbol);
  // Moves a symbol and its tensor declaration to a new name (prng outputs).
  void Rename(const std::string& from, const std::string& to, const SourceSpan& span);
  void SetSpan(const std::string& name, const SourceSpan& span);

  // A fresh temporary name `_T<n>`, numbered in program order.
  std::string NewTemp();
  // `dest` if given, else a fresh temporary.
  std::string OutputName(const std::string& dest) { return dest.empty() ? NewTemp() : dest; }

  // Declares a temporary tensor (and its symbol) defined by an op at `span`.
  void AddTensor(const std::string& name, Shape shape, const SourceSpan& span);
  const Shape& ShapeOf(const std::string& tensor) const { return program_.Tensor(tensor).shape; }

  // The tensor `v` names; UserError at `span` if it is a constant or a prng
  // result. `what` describes the use ("the first argument of gather()").
  const std::string& TensorOf(const Value& v, const SourceSpan& span, std::string_view what) const;
  // UserError at `span` if `v` is a prng_step result.
  void CheckNotPrng(const Value& v, const SourceSpan& span) const;

  // The span of a binary expression's operator when it can be found in the
  // source (so a caret points at `/`, not at the left operand), else e.span.
  SourceSpan OperatorSpan(const ast::Expr& e) const;

 private:
  const ast::Function& fn_;
  Program& program_;
  std::map<std::string, Symbol> symbols_;
  int next_temp_ = 0;
};

// ---- bind_expr.cc ----------------------------------------------------------

// Binds an elementwise expression. The op that computes the whole expression
// is named `dest` (a fresh temporary when empty); constants fold.
Value BindExpr(Context& ctx, const ast::Expr& e, const std::string& dest);

// Emits one elementwise op over bound `args` (typing, broadcasting, weak
// constants), or folds it when every argument is a constant. `op_span` is
// where errors about the operation point; `what` names it in messages ("'+'").
Value EmitElementwise(Context& ctx, ElemFn fn, const std::vector<Value>& args,
                      const SourceSpan& span, const SourceSpan& op_span, std::string_view what,
                      const std::string& dest);

// Binds `e` and requires a constant (UserError at e's span naming `what`).
Const RequireConst(Context& ctx, const ast::Expr& e, std::string_view what);
// Binds `e` and requires an integer constant.
int64_t RequireInt(Context& ctx, const ast::Expr& e, std::string_view what);

// A constant operand as a Scalar of type `t`: integers are wrapped to an integer
// `t` (C conversion); for a float `t` the value keeps its integer or float form.
Scalar ToScalar(const Const& c, DataType t);

// ---- builtins.cc -----------------------------------------------------------

// Binds a call: math functions, casts, special ops, inline builtins (relu,
// softmax, …) and bind-time functions (mod, assert_*).
Value BindCall(Context& ctx, const ast::Expr& call, const std::string& dest);

// ---- bind_contraction.cc ---------------------------------------------------

// Binds a contraction statement and appends its op.
void BindContraction(Context& ctx, const ast::Statement& st);

// Declares `op.output` with `shape`, fills index_vars and bounds, and appends
// the op. Used for the user's contractions and for builtin expansions.
void AddContraction(Context& ctx, ContractionOp op, const Shape& shape);

}  // namespace tilec::lang::bind
