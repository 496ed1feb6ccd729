// The bound (typed) program: the AST after binding every input to a shape.
//
// Binding resolves names, inlines builtin definitions (relu, softmax, …),
// folds constants (dimension sizes and named integer constants such as
// `Pad = (K - 1) / 2;` become numbers), infers every tensor's element type and
// dimensions, turns index expressions into affine polynomials with rational
// coefficients, and splits elementwise expressions into single operations
// (SSA, one output each, temporaries named `_T0`, `_T1`, …) as PlaidML does.
//
// Semantics, which the reference evaluator implements and every compiled
// kernel must match:
//  * A ContractionOp aggregates `comb(inputs)` over exactly the integer index
//    assignments for which every output and input index polynomial is an
//    integer within [0, dim) and every constraint 0 <= poly < range holds.
//    Output elements reached by no assignment are 0 (or the default tensor's
//    element when `default_tensor` is set), whatever the aggregation.
//    Assign (`=`) reaching one element with two different values is a
//    UserError at evaluation.
//  * Combination: inputs are converted to the output type, then combined
//    (Mul, Add); Eq compares in the inputs' promoted type and yields bool; Cond
//    contributes `a == b ? c : 0`.
//  * An ElementwiseOp converts its value operands to `compute_type`, applies
//    the operation as C does (integer `/` truncates toward zero; integer
//    division by zero yields 0; signed overflow wraps), broadcasts operands
//    NumPy-style to the output dims, and converts the result to the output's
//    dtype.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "support/source.h"
#include "tile_lang/ast.h"
#include "tile_lang/layout.h"
#include "tile_lang/types.h"

namespace tilec::lang {

// Exact rational number; always normalized (den > 0, gcd 1). Arithmetic that
// overflows int64 throws UserError.
struct Rational {
  int64_t num = 0;
  int64_t den = 1;

  Rational() = default;
  Rational(int64_t n) : num(n) {}  // NOLINT: implicit from integers on purpose
  Rational(int64_t n, int64_t d);

  bool IsInteger() const { return den == 1; }
  int64_t Floor() const;
  int64_t Ceil() const;
  bool operator==(const Rational&) const = default;
  auto operator<=>(const Rational& o) const;
};
Rational operator+(Rational a, Rational b);
Rational operator-(Rational a, Rational b);
Rational operator-(Rational a);
Rational operator*(Rational a, Rational b);
Rational operator/(Rational a, Rational b);
bool operator<(Rational a, Rational b);
std::string ToString(Rational r);  // "3", "-1/2"

// Defined inline (an addition to the declaration above) because a member with a
// deduced return type can only be used where its definition is visible; this
// makes `>`, `<=` and `>=` usable everywhere. Cross products fit in 128 bits.
inline auto Rational::operator<=>(const Rational& o) const {
  return static_cast<__int128>(num) * o.den <=> static_cast<__int128>(o.num) * den;
}

// Affine polynomial over index variables: sum of coeff * var, plus a constant.
struct Polynomial {
  std::map<std::string, Rational> terms;  // no zero coefficients
  Rational constant;

  bool IsConstant() const { return terms.empty(); }
  Rational Coeff(const std::string& var) const;
  bool operator==(const Polynomial&) const = default;
};
Polynomial operator+(const Polynomial& a, const Polynomial& b);
Polynomial operator-(const Polynomial& a, const Polynomial& b);
Polynomial operator*(const Polynomial& a, Rational k);
// "x + i - 1", "2*i + j/2", "0"; terms in name order, constant last.
std::string ToString(const Polynomial& p);

enum class TensorRole : uint8_t { Input, Output, Temporary };

struct TensorDecl {
  std::string name;
  Shape shape;
  Layout layout;  // row-major unless bound otherwise
  TensorRole role = TensorRole::Temporary;
  SourceSpan span;  // where it is declared or defined
};

// A scalar constant operand of an elementwise op (a literal or folded name).
struct Scalar {
  DataType dtype = DataType::I32;
  bool is_float = false;
  int64_t i = 0;     // when !is_float
  double f = 0;      // when is_float
  bool operator==(const Scalar&) const = default;
};
std::string ToString(const Scalar& s);

struct Operand {
  bool is_tensor = true;
  std::string tensor;  // when is_tensor
  Scalar scalar;       // otherwise
  bool operator==(const Operand&) const = default;
};

// Elementwise functions: (enumerator, printed name, arity; -1 = variadic).
#define TILEC_ELEM_FNS(X)                                                        \
  X(Ident, "ident", 1) X(Neg, "neg", 1) X(BitNot, "bit_not", 1) X(LogicalNot, "not", 1) \
  X(Add, "add", 2) X(Sub, "sub", 2) X(Mul, "mul", 2) X(Div, "div", 2) X(Mod, "mod", 2)   \
  X(CmpEq, "cmp_eq", 2) X(CmpNe, "cmp_ne", 2) X(CmpLt, "cmp_lt", 2)                      \
  X(CmpGt, "cmp_gt", 2) X(CmpLe, "cmp_le", 2) X(CmpGe, "cmp_ge", 2)                      \
  X(BitAnd, "bit_and", 2) X(BitOr, "bit_or", 2) X(BitXor, "bit_xor", 2)                  \
  X(Shl, "bit_left", 2) X(Shr, "bit_right", 2)                                           \
  X(LogicalAnd, "and", 2) X(LogicalOr, "or", 2)                                          \
  X(Cond, "cond", 3)                                                                     \
  X(Exp, "exp", 1) X(Log, "log", 1) X(Sqrt, "sqrt", 1) X(Pow, "pow", 2)                  \
  X(Tanh, "tanh", 1) X(Sin, "sin", 1) X(Cos, "cos", 1) X(Tan, "tan", 1)                  \
  X(Sinh, "sinh", 1) X(Cosh, "cosh", 1) X(Asin, "asin", 1) X(Acos, "acos", 1)            \
  X(Atan, "atan", 1) X(Abs, "abs", 1) X(Floor, "floor", 1) X(Ceil, "ceil", 1)            \
  X(Round, "round", 1) X(Min, "min", 2) X(Max, "max", 2) X(Sigmoid, "sigmoid", 1) X(Erf, "erf", 1)        \
  X(Cast, "cast", 1)   /* as_float/as_int/as_uint/as_bool: to the output dtype */        \
  X(Index, "index", 1) /* coordinate `axis` of the output; operand only gives the shape */

enum class ElemFn : uint8_t {
#define TILEC_X(e, n, a) e,
  TILEC_ELEM_FNS(TILEC_X)
#undef TILEC_X
};
std::string_view Name(ElemFn fn);
int Arity(ElemFn fn);

struct ElementwiseOp {
  std::string output;
  ElemFn fn = ElemFn::Ident;
  std::vector<Operand> operands;
  DataType compute_type = DataType::F32;  // operands are converted to this first
  int64_t axis = 0;                       // Index only
  SourceSpan span;
};

struct ContractionOp {
  struct Access {
    std::string tensor;
    std::vector<Polynomial> index;  // one per dimension of the tensor
  };
  struct Constraint {
    Polynomial poly;  // 0 <= poly < range
    int64_t range = 0;
  };
  struct Bound {
    int64_t lo = 0, hi = -1;  // inclusive box containing every valid value
  };

  std::string output;
  std::vector<Polynomial> output_index;  // one per output dimension
  ast::AggOp agg = ast::AggOp::Sum;
  ast::CombOp comb = ast::CombOp::None;
  std::vector<Access> inputs;            // 1, 2 or 3 (Cond)
  std::vector<Constraint> constraints;   // the user's constraints only
  std::vector<std::string> index_vars;   // sorted by name (the seed's order)
  std::vector<Bound> bounds;             // per index var: a box that contains every
                                         // valid assignment (exactness is checked per point)
  std::optional<std::string> default_tensor;
  bool no_defract = false;
  SourceSpan span;
};

// Operations with their own kernels and their own semantics.
enum class SpecialFn : uint8_t {
  Gather,     // out[i..., r...] = in[clamp(idx[i...], 0, D0-1), r...]; inputs {in, idx}
  Scatter,    // out = zeros([V.dims[0]] + E.dims[rank(I):]); out[clamp(I[i...]), r...] += E[i..., r...]; inputs {E, I, V}
  Reshape,    // row-major reinterpretation; inputs {in}; output dims from the call
  Shape,      // i32 vector of the input's dims; inputs {in}
  PrngStep,   // outputs {value f32[dims], state u32[3,2048]}; inputs {state}
};
std::string_view Name(SpecialFn fn);

struct SpecialOp {
  SpecialFn fn = SpecialFn::Reshape;
  std::vector<std::string> outputs;
  std::vector<std::string> inputs;
  SourceSpan span;
};

using Op = std::variant<ContractionOp, ElementwiseOp, SpecialOp>;

// The tensors `op` reads (a contraction's inputs and default tensor, an
// elementwise op's tensor operands, a special op's inputs), in order.
std::vector<std::string> Reads(const Op& op);
// The tensors `op` defines (one, or a special op's outputs).
std::vector<std::string> Writes(const Op& op);

// `dst[i0, i1, …] = =(src[i0, i1, …])`: an identity copy of `src` into a
// tensor of the same shape (whose layout may differ: a relayout).
ContractionOp IdentityCopy(const TensorDecl& src, const std::string& dst);

struct Program {
  SourceFilePtr source;
  std::vector<std::string> inputs;            // in signature order
  std::vector<std::string> outputs;           // in signature order
  std::map<std::string, TensorDecl> tensors;  // every tensor the ops use or define
  std::vector<Op> ops;                        // execution order; each name defined once

  const TensorDecl& Tensor(const std::string& name) const;  // InternalError if missing
};

// InternalError naming `stage` unless every tensor an op reads is an input
// or written by an earlier op, and every output is written (a pass that
// inserts or renames ops must keep this; a bound program has it).
void VerifyDataflow(const Program& program, std::string_view stage);

// Human-readable dump used by `tilec check` and golden tests: the signature
// with bound shapes, then one line per op with its output shape, and for
// contractions their index ranges and constraints.
std::string ToString(const Program& p);

}  // namespace tilec::lang
