// The Tile AST: what the parser produces and the printer prints back.
//
// A program is one `Function` with inputs, outputs and a list of statements.
// A statement is either a contraction
//     O[n, x : N, X] = +(A[n, x + i - 1] * B[i]), i < 3 no_defract default P;
// or an elementwise assignment
//     R = (O > 0 ? O : 0);
// optionally preceded by attributes `[[name(p, q)]]`.
//
// Expressions (`Expr`) are used both for index polynomials (inside `[...]` of
// tensor references and constraint left sides) and for elementwise
// expressions and sizes; the parser only admits polynomial forms
// (literals, names, unary -, + - * /, parentheses, and `2i` juxtaposition,
// which parses as 2 * i) in polynomial positions. The binder checks that
// polynomials are affine.
//
// Names come in two classes, as in Tile's lexer: `Tensor` names start with an
// upper-case letter (tensors, dimension sizes, named constants) and `Index`
// names with a lower-case letter (index variables, function names). `#name`
// makes any spelling a Tensor-class name, `$Name` an Index-class one; the
// printer re-adds the escape when the spelling needs it. A trailing `'` is
// part of the name (`T'`).
//
// Every node carries the SourceSpan it was parsed from. Spans are ignored by
// structural equality (Equal), which is what parse(print(ast)) == ast means.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/source.h"

namespace tilec::lang::ast {

// Binary operators: (enumerator, spelling, precedence). Higher binds tighter.
// Tile's precedence (lowest to highest): ?: < || < && < ^ < | < & < == != <
// < > <= >= < << >> < + - < * / % ; unary - ~ ! bind tightest.
// `&&`, `||`, `!` and `%` are Tilec extensions (Tile has none of them).
#define TILEC_BINARY_OPS(X)   \
  X(LogicalOr, "||", 1)       \
  X(LogicalAnd, "&&", 2)      \
  X(BitXor, "^", 3)           \
  X(BitOr, "|", 4)            \
  X(BitAnd, "&", 5)           \
  X(Eq, "==", 6)              \
  X(Ne, "!=", 6)              \
  X(Lt, "<", 7)               \
  X(Gt, ">", 7)               \
  X(Le, "<=", 7)              \
  X(Ge, ">=", 7)              \
  X(Shl, "<<", 8)             \
  X(Shr, ">>", 8)             \
  X(Add, "+", 9)              \
  X(Sub, "-", 9)              \
  X(Mul, "*", 10)             \
  X(Div, "/", 10)             \
  X(Mod, "%", 10)

enum class BinaryOp : uint8_t {
#define TILEC_X(e, s, p) e,
  TILEC_BINARY_OPS(TILEC_X)
#undef TILEC_X
};
std::string_view Spelling(BinaryOp op);
int Precedence(BinaryOp op);
// Comparison operators are non-associative in Tile (`a < b < c` is an error).
bool IsComparison(BinaryOp op);

enum class UnaryOp : uint8_t { Neg, BitNot, LogicalNot };
std::string_view Spelling(UnaryOp op);  // "-", "~", "!"

enum class NameClass : uint8_t { Tensor, Index };

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

enum class ExprKind : uint8_t { IntLit, FloatLit, Name, Unary, Binary, Ternary, Call };

// One node type with a kind tag; the fields used by each kind are listed.
struct Expr {
  ExprKind kind;
  SourceSpan span;
  int64_t int_value = 0;      // IntLit
  double float_value = 0;     // FloatLit
  std::string name;           // Name (identifier), Call (function name)
  NameClass name_class = NameClass::Tensor;  // Name
  UnaryOp unary_op = UnaryOp::Neg;           // Unary
  BinaryOp binary_op = BinaryOp::Add;        // Binary
  std::vector<ExprPtr> args;  // Unary: 1; Binary: 2; Ternary: cond, then, else; Call: arguments
};

ExprPtr MakeInt(int64_t v, SourceSpan span = {});
ExprPtr MakeFloat(double v, SourceSpan span = {});
ExprPtr MakeName(std::string name, NameClass cls, SourceSpan span = {});
ExprPtr MakeUnary(UnaryOp op, ExprPtr a, SourceSpan span = {});
ExprPtr MakeBinary(BinaryOp op, ExprPtr a, ExprPtr b, SourceSpan span = {});
ExprPtr MakeTernary(ExprPtr c, ExprPtr t, ExprPtr f, SourceSpan span = {});
ExprPtr MakeCall(std::string name, std::vector<ExprPtr> args, SourceSpan span = {});

// Aggregations: + sum, * product, > max, < min, = assign.
enum class AggOp : uint8_t { Sum, Prod, Max, Min, Assign };
std::string_view Spelling(AggOp op);  // "+", "*", ">", "<", "="

// Combinations of a contraction's inputs: one input (None), A * B, A + B,
// A == B, and the ternary A == B ? C (Cond).
enum class CombOp : uint8_t { None, Mul, Add, Eq, Cond };

// T[i, j + 1]: a tensor and its index polynomials.
struct TensorRef {
  std::string name;
  std::vector<ExprPtr> indices;
  SourceSpan span;
};

// `poly < bound`, meaning 0 <= poly < bound.
struct Constraint {
  ExprPtr poly;
  ExprPtr bound;
  SourceSpan span;
};

struct Contraction {
  TensorRef output;                 // output index polynomials
  std::vector<ExprPtr> sizes;       // after ':' (empty for O[] and O[:])
  bool has_colon = false;           // O[:] vs O[]; O[i : N] has it too
  AggOp agg = AggOp::Sum;
  CombOp comb = CombOp::None;
  std::vector<TensorRef> inputs;    // 1 input, or 2 (Mul/Add/Eq), or 3 (Cond)
  std::vector<Constraint> constraints;
  bool no_defract = false;
  std::optional<std::string> default_tensor;
  SourceSpan default_span;
};

struct Assignment {
  std::string name;
  ExprPtr value;
};

struct Attribute {
  std::string name;
  std::vector<std::string> params;
  SourceSpan span;
};

struct Statement {
  enum class Kind : uint8_t { Contraction, Assignment } kind;
  std::vector<Attribute> attributes;
  Contraction contraction;  // when kind == Contraction
  Assignment assignment;    // when kind == Assignment
  SourceSpan span;
  // The span of the defined name (output tensor or assignment target).
  SourceSpan name_span;
};

// An input `A[M, N]` (has_dims, dims named), `A[]` (has_dims, rank 0), or
// `A` (no dims given: rank and sizes come from the bound shape).
struct Input {
  std::string name;
  bool has_dims = false;
  std::vector<std::string> dims;
  std::vector<SourceSpan> dim_spans;
  SourceSpan span;
};

struct Output {
  std::string name;
  SourceSpan span;
};

struct Function {
  std::vector<Input> inputs;
  std::vector<Output> outputs;
  std::vector<Statement> body;
  SourceFilePtr source;  // the text this was parsed from (for diagnostics)
};

// Structural equality, ignoring spans and the source pointer. Float literals
// compare by value (bitwise on the double).
bool Equal(const Expr& a, const Expr& b);
bool Equal(const Function& a, const Function& b);

}  // namespace tilec::lang::ast
