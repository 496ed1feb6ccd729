#include "tile_lang/parser.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/error.h"
#include "tile_lang/printer.h"

namespace tilec::lang {
namespace {

using namespace ast;

// A fully parenthesized dump, independent of the printer: (+ a (* b c)).
// Index-class names print bare, tensor-class names with a leading '#'.
std::string Sexp(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit: return std::to_string(e.int_value);
    case ExprKind::FloatLit: return fmt::format("{}f", e.float_value);
    case ExprKind::Name: return (e.name_class == NameClass::Tensor ? "#" : "") + e.name;
    case ExprKind::Unary: return fmt::format("({} {})", Spelling(e.unary_op), Sexp(*e.args[0]));
    case ExprKind::Binary:
      return fmt::format("({} {} {})", Spelling(e.binary_op), Sexp(*e.args[0]), Sexp(*e.args[1]));
    case ExprKind::Ternary:
      return fmt::format("(? {} {} {})", Sexp(*e.args[0]), Sexp(*e.args[1]), Sexp(*e.args[2]));
    case ExprKind::Call: {
      std::string s = "(call " + e.name;
      for (const auto& a : e.args) s += " " + Sexp(*a);
      return s + ")";
    }
  }
  return "?";
}

std::string ExprSexp(const std::string& text) { return Sexp(*ParseExpr(MakeSource("e", text))); }

Function ParseText(const std::string& text) { return Parse(MakeSource("t.tile", text)); }

// Parses `function (...) -> (O) { stmt }` and returns the one statement.
Statement ParseStatementText(const std::string& stmt) {
  Function f = ParseText("function (I) -> (O) { " + stmt + " }");
  EXPECT_EQ(f.body.size(), 1u);
  return f.body.at(0);
}

std::string ErrorMessage(const std::string& program) {
  try {
    ParseText(program);
  } catch (const UserError& e) {
    return e.message();
  }
  return "(no error)";
}

std::string ExprError(const std::string& text) {
  try {
    ParseExpr(MakeSource("e", text));
  } catch (const UserError& e) {
    return e.message();
  }
  return "(no error)";
}

TEST(ParserTest, SeedConvolution) {
  Function f = ParseText(
      "function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) { O[n, x, y, co : N, X, Y, CO] = "
      "+(D[n, x+i-1, y+j-1, ci] * K[i, j, co, ci]); R = (O > 0 ? O : 0); }");
  ASSERT_EQ(f.inputs.size(), 2u);
  EXPECT_EQ(f.inputs[0].name, "D");
  EXPECT_TRUE(f.inputs[0].has_dims);
  EXPECT_EQ(f.inputs[0].dims, (std::vector<std::string>{"N", "X", "Y", "CI"}));
  EXPECT_EQ(f.inputs[1].dims, (std::vector<std::string>{"I", "J", "CO", "CI"}));
  ASSERT_EQ(f.outputs.size(), 1u);
  EXPECT_EQ(f.outputs[0].name, "R");
  ASSERT_EQ(f.body.size(), 2u);

  const Statement& s0 = f.body[0];
  ASSERT_EQ(s0.kind, Statement::Kind::Contraction);
  const Contraction& c = s0.contraction;
  EXPECT_EQ(c.output.name, "O");
  ASSERT_EQ(c.output.indices.size(), 4u);
  EXPECT_EQ(Sexp(*c.output.indices[3]), "co");
  ASSERT_EQ(c.sizes.size(), 4u);
  EXPECT_EQ(Sexp(*c.sizes[3]), "#CO");
  EXPECT_TRUE(c.has_colon);
  EXPECT_EQ(c.agg, AggOp::Sum);
  EXPECT_EQ(c.comb, CombOp::Mul);
  ASSERT_EQ(c.inputs.size(), 2u);
  EXPECT_EQ(c.inputs[0].name, "D");
  EXPECT_EQ(Sexp(*c.inputs[0].indices[1]), "(- (+ x i) 1)");
  EXPECT_EQ(Sexp(*c.inputs[0].indices[2]), "(- (+ y j) 1)");
  EXPECT_EQ(c.inputs[1].name, "K");
  EXPECT_TRUE(c.constraints.empty());
  EXPECT_FALSE(c.no_defract);
  EXPECT_FALSE(c.default_tensor.has_value());

  const Statement& s1 = f.body[1];
  ASSERT_EQ(s1.kind, Statement::Kind::Assignment);
  EXPECT_EQ(s1.assignment.name, "R");
  EXPECT_EQ(Sexp(*s1.assignment.value), "(? (> #O 0) #O 0)");
  EXPECT_EQ(f.source->name, "t.tile");
}

TEST(ParserTest, Precedence) {
  EXPECT_EQ(ExprSexp("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(ExprSexp("a * b + c"), "(+ (* a b) c)");
  EXPECT_EQ(ExprSexp("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(ExprSexp("a / b * c % d"), "(% (* (/ a b) c) d)");
  // `^` is looser than `|`, which is looser than `&` (unlike C).
  EXPECT_EQ(ExprSexp("a ^ b | c"), "(^ a (| b c))");
  EXPECT_EQ(ExprSexp("a | b ^ c"), "(^ (| a b) c)");
  EXPECT_EQ(ExprSexp("a & b | c"), "(| (& a b) c)");
  EXPECT_EQ(ExprSexp("a | b & c"), "(| a (& b c))");
  // Shifts are looser than + and tighter than comparisons.
  EXPECT_EQ(ExprSexp("a << b + c"), "(<< a (+ b c))");
  EXPECT_EQ(ExprSexp("a + b >> c"), "(>> (+ a b) c)");
  EXPECT_EQ(ExprSexp("a << b < c"), "(< (<< a b) c)");
  // Relational comparisons are tighter than equality.
  EXPECT_EQ(ExprSexp("a < b == c >= d"), "(== (< a b) (>= c d))");
  EXPECT_EQ(ExprSexp("a == b & c"), "(& (== a b) c)");
  // Tilec's && and || are the loosest binary operators.
  EXPECT_EQ(ExprSexp("!a && b || c"), "(|| (&& (! a) b) c)");
  EXPECT_EQ(ExprSexp("a || b && c"), "(|| a (&& b c))");
  EXPECT_EQ(ExprSexp("a && b ^ c"), "(&& a (^ b c))");
  // Unary binds tightest.
  EXPECT_EQ(ExprSexp("-a * b"), "(* (- a) b)");
  EXPECT_EQ(ExprSexp("~a & b"), "(& (~ a) b)");
  EXPECT_EQ(ExprSexp("-~!a"), "(- (~ (! a)))");
}

TEST(ParserTest, TernaryIsLowestAndLeftAssociative) {
  EXPECT_EQ(ExprSexp("a ? b : c ? d : e"), "(? (? a b c) d e)");
  EXPECT_EQ(ExprSexp("a ? b : (c ? d : e)"), "(? a b (? c d e))");
  EXPECT_EQ(ExprSexp("a ? b ? c : d : e"), "(? a (? b c d) e)");
  EXPECT_EQ(ExprSexp("a || b ? c + d : e | f"), "(? (|| a b) (+ c d) (| e f))");
  EXPECT_EQ(ExprSexp("X == Y ? 1 : 0"), "(? (== #X #Y) 1 0)");
}

TEST(ParserTest, ComparisonsDoNotChain) {
  EXPECT_EQ(ExprError("a < b < c"), "comparisons do not chain: '<' follows '<' at 1:3; add parentheses");
  EXPECT_EQ(ExprError("a == b != c"), "comparisons do not chain: '!=' follows '==' at 1:3; add parentheses");
  EXPECT_EQ(ExprError("a < b + c >= d"), "comparisons do not chain: '>=' follows '<' at 1:3; add parentheses");
  EXPECT_EQ(ExprSexp("(a < b) < c"), "(< (< a b) c)");
  EXPECT_EQ(ExprSexp("a < (b < c)"), "(< a (< b c))");
}

TEST(ParserTest, LiteralsAndNegativeFolding) {
  ExprPtr e = ParseExpr(MakeSource("e", "-1"));
  ASSERT_EQ(e->kind, ExprKind::IntLit);
  EXPECT_EQ(e->int_value, -1);
  EXPECT_EQ(e->span, (SourceSpan{{1, 1}, {1, 3}}));
  e = ParseExpr(MakeSource("e", "-9223372036854775808"));
  ASSERT_EQ(e->kind, ExprKind::IntLit);
  EXPECT_EQ(e->int_value, std::numeric_limits<int64_t>::min());
  e = ParseExpr(MakeSource("e", "- 2.5E-1"));
  ASSERT_EQ(e->kind, ExprKind::FloatLit);
  EXPECT_EQ(e->float_value, -0.25);
  // Only a literal token directly after '-' folds.
  EXPECT_EQ(ExprSexp("-(1)"), "(- 1)");
  EXPECT_EQ(ExprSexp("--1"), "(- -1)");
  EXPECT_EQ(ExprSexp("~-1"), "(~ -1)");
  EXPECT_EQ(ExprSexp("a - -1"), "(- a -1)");
  EXPECT_EQ(ExprSexp("-2 * b"), "(* -2 b)");
  EXPECT_EQ(ExprSexp("1e3 + 0.5"), "(+ 1000f 0.5f)");
  e = ParseExpr(MakeSource("e", "-0.0"));
  EXPECT_TRUE(std::signbit(e->float_value));
  EXPECT_EQ(ExprError("9223372036854775808"), "integer literal '9223372036854775808' does not fit in 64 bits");
  EXPECT_EQ(ExprError("-(9223372036854775808)"), "integer literal '9223372036854775808' does not fit in 64 bits");
}

TEST(ParserTest, NamesAndCalls) {
  ExprPtr e = ParseExpr(MakeSource("e", "#foo + $Bar + T' + x'"));
  EXPECT_EQ(Sexp(*e), "(+ (+ (+ #foo Bar) #T') x')");
  EXPECT_EQ(ExprSexp("exp(X) + #Foo(X, 1) + Bar(y) + $default(a)"),
            "(+ (+ (+ (call exp #X) (call Foo #X 1)) (call Bar y)) (call default a))");
  EXPECT_EQ(ExprSexp("max(a ? b : c, (d))"), "(call max (? a b c) d)");
  EXPECT_EQ(ExprError("f()"), "a call of 'f' needs at least one argument");
  ExprPtr call = ParseExpr(MakeSource("e", "  pow(A, 2)"));
  EXPECT_EQ(call->kind, ExprKind::Call);
  EXPECT_EQ(call->span, (SourceSpan{{1, 3}, {1, 12}}));
}

TEST(ParserTest, OutputForms) {
  Statement s = ParseStatementText("O[] = +(I[x]);");
  EXPECT_TRUE(s.contraction.output.indices.empty());
  EXPECT_FALSE(s.contraction.has_colon);
  s = ParseStatementText("O[:] = +(I[x]);");
  EXPECT_TRUE(s.contraction.output.indices.empty());
  EXPECT_TRUE(s.contraction.has_colon);
  EXPECT_TRUE(s.contraction.sizes.empty());
  s = ParseStatementText("O[i, j] = +(I[i, j]);");
  EXPECT_EQ(s.contraction.output.indices.size(), 2u);
  EXPECT_FALSE(s.contraction.has_colon);
  EXPECT_TRUE(s.contraction.sizes.empty());
  s = ParseStatementText("O[i, j : N + 1, (M ? 2 : 3)] = +(I[i, j]);");
  EXPECT_TRUE(s.contraction.has_colon);
  ASSERT_EQ(s.contraction.sizes.size(), 2u);
  EXPECT_EQ(Sexp(*s.contraction.sizes[0]), "(+ #N 1)");
  EXPECT_EQ(Sexp(*s.contraction.sizes[1]), "(? #M 2 3)");
}

TEST(ParserTest, AggregationsAndCombinations) {
  struct Case {
    std::string text;
    AggOp agg;
    CombOp comb;
    size_t inputs;
  };
  for (const Case& c : std::vector<Case>{
           {"O[i : N] = +(A[i]);", AggOp::Sum, CombOp::None, 1},
           {"O[i : N] = *(A[i] * B[i]);", AggOp::Prod, CombOp::Mul, 2},
           {"O[i : N] = >(A[i] + B[i]);", AggOp::Max, CombOp::Add, 2},
           {"O[i : N] = <(A[i] == B[i]);", AggOp::Min, CombOp::Eq, 2},
           {"O[i : N] = =(A[i] == B[i] ? C[i]);", AggOp::Assign, CombOp::Cond, 3},
       }) {
    Statement s = ParseStatementText(c.text);
    ASSERT_EQ(s.kind, Statement::Kind::Contraction) << c.text;
    EXPECT_EQ(s.contraction.agg, c.agg) << c.text;
    EXPECT_EQ(s.contraction.comb, c.comb) << c.text;
    EXPECT_EQ(s.contraction.inputs.size(), c.inputs) << c.text;
  }
  Statement s = ParseStatementText("AM[x : X] = >(I[x, y] == Max[x] ? Index[y]);");
  EXPECT_EQ(s.contraction.inputs[2].name, "Index");
  EXPECT_EQ(Sexp(*s.contraction.inputs[2].indices[0]), "y");
}

TEST(ParserTest, ConstraintsAndModifiers) {
  Statement s = ParseStatementText(
      "O[i : N] = +(I[k]), i - k < N, k < (M + 1) / 2 default P no_defract;");
  const Contraction& c = s.contraction;
  ASSERT_EQ(c.constraints.size(), 2u);
  EXPECT_EQ(Sexp(*c.constraints[0].poly), "(- i k)");
  EXPECT_EQ(Sexp(*c.constraints[0].bound), "#N");
  EXPECT_EQ(Sexp(*c.constraints[1].poly), "k");
  EXPECT_EQ(Sexp(*c.constraints[1].bound), "(/ (+ #M 1) 2)");
  EXPECT_TRUE(c.no_defract);
  ASSERT_TRUE(c.default_tensor.has_value());
  EXPECT_EQ(*c.default_tensor, "P");
  EXPECT_EQ(c.constraints[0].span, (SourceSpan{{1, 43}, {1, 52}}));
  EXPECT_EQ(c.default_span, (SourceSpan{{1, 78}, {1, 79}}));
  // A parenthesized '<' is part of the polynomial, which is then rejected.
  EXPECT_EQ(ErrorMessage("function (I) -> (O) { O[i : N] = +(I[i]), (i < 2) < 3; }"),
            "'<' is not allowed in an index polynomial (only integers, names, + - * / and "
            "parentheses are)");
  // The bound is an expression and may use any operator.
  s = ParseStatementText("O[i : N] = +(I[i]), i < N > 2 ? 1 : 2;");
  EXPECT_EQ(Sexp(*s.contraction.constraints[0].bound), "(? (> #N 2) 1 2)");
}

TEST(ParserTest, Juxtaposition) {
  Statement s = ParseStatementText("O[2i : N] = +(I[3 j, -2i, 2i + 1, N/2i]);");
  EXPECT_EQ(Sexp(*s.contraction.output.indices[0]), "(* 2 i)");
  const auto& idx = s.contraction.inputs[0].indices;
  EXPECT_EQ(Sexp(*idx[0]), "(* 3 j)");
  EXPECT_EQ(Sexp(*idx[1]), "(- (* 2 i))");
  EXPECT_EQ(Sexp(*idx[2]), "(+ (* 2 i) 1)");
  EXPECT_EQ(Sexp(*idx[3]), "(/ #N (* 2 i))");  // `2i` is atomic
  EXPECT_EQ(idx[0]->span, (SourceSpan{{1, 39}, {1, 42}}));
  // Only in polynomial positions.
  EXPECT_EQ(ExprError("2i"), "'2 i' (a number followed by an index name) is only allowed in an index "
                             "polynomial; write '2 * i'");
}

TEST(ParserTest, Attributes) {
  Statement s = ParseStatementText("[[pid(dot_stage, Foo)]] [[hint]] [[$X(#y)]] O = I;");
  ASSERT_EQ(s.attributes.size(), 3u);
  EXPECT_EQ(s.attributes[0].name, "pid");
  EXPECT_EQ(s.attributes[0].params, (std::vector<std::string>{"dot_stage", "Foo"}));
  EXPECT_EQ(s.attributes[1].name, "hint");
  EXPECT_TRUE(s.attributes[1].params.empty());
  EXPECT_EQ(s.attributes[2].name, "X");
  EXPECT_EQ(s.attributes[2].params, (std::vector<std::string>{"y"}));
  EXPECT_EQ(s.attributes[0].span, (SourceSpan{{1, 23}, {1, 46}}));
  EXPECT_EQ(s.kind, Statement::Kind::Assignment);
}

TEST(ParserTest, SignatureForms) {
  Function f = ParseText("function (A, B[], C[M, N], #d[#e], T') -> (X, Y) { X = A; Y = B; }");
  ASSERT_EQ(f.inputs.size(), 5u);
  EXPECT_FALSE(f.inputs[0].has_dims);
  EXPECT_TRUE(f.inputs[1].has_dims);
  EXPECT_TRUE(f.inputs[1].dims.empty());
  EXPECT_EQ(f.inputs[2].dims, (std::vector<std::string>{"M", "N"}));
  EXPECT_EQ(f.inputs[2].dim_spans[1], (SourceSpan{{1, 24}, {1, 25}}));
  EXPECT_EQ(f.inputs[2].span, (SourceSpan{{1, 19}, {1, 26}}));
  EXPECT_EQ(f.inputs[3].name, "d");
  EXPECT_EQ(f.inputs[3].dims, (std::vector<std::string>{"e"}));
  EXPECT_EQ(f.inputs[4].name, "T'");
  ASSERT_EQ(f.outputs.size(), 2u);
  EXPECT_EQ(f.outputs[1].name, "Y");
  EXPECT_EQ(f.outputs[1].span, (SourceSpan{{1, 47}, {1, 48}}));
}

TEST(ParserTest, EmptyBodiesAndEmptyStatements) {
  Function f = ParseText("function () -> (O) {}");
  EXPECT_TRUE(f.inputs.empty());
  EXPECT_TRUE(f.body.empty());
  f = ParseText("function (I) -> (O) { ; O = I;; ; }");
  ASSERT_EQ(f.body.size(), 1u);
}

TEST(ParserTest, StatementSpans) {
  Function f = ParseText("function (I) -> (O) {\n  [[a]] O[i : N] = +(I[i]);\n  P = I + 1;\n}");
  ASSERT_EQ(f.body.size(), 2u);
  EXPECT_EQ(f.body[0].name_span, (SourceSpan{{2, 9}, {2, 10}}));
  EXPECT_EQ(f.body[0].span, (SourceSpan{{2, 9}, {2, 27}}));
  EXPECT_EQ(f.body[0].contraction.output.span, (SourceSpan{{2, 9}, {2, 17}}));
  EXPECT_EQ(f.body[0].contraction.inputs[0].span, (SourceSpan{{2, 22}, {2, 26}}));
  EXPECT_EQ(f.body[1].span, (SourceSpan{{3, 3}, {3, 12}}));
  EXPECT_EQ(f.body[1].assignment.value->span, (SourceSpan{{3, 7}, {3, 12}}));
}

// Every example line of PlaidML's Tile syntax examples, wrapped in a function, parses
// to the tree its canonical printing shows.
TEST(ParserTest, PlaidmlNotesExamples) {
  struct Case {
    std::string stmt;
    std::string printed;
  };
  std::vector<Case> cases = {
      {"C[i, j : M, N] = +(A[i, k] * B[k, j]);", "C[i, j : M, N] = +(A[i, k] * B[k, j])"},
      {"Neg = -I;", "Neg = -I"},
      {"O_Neg[] = >(Neg[i, j, k]);", "O_Neg[] = >(Neg[i, j, k])"},
      {"O = -O_Neg;", "O = -O_Neg"},
      {"O[n : N] = +(I[m, n]);", "O[n : N] = +(I[m, n])"},
      {"O[] = *(I[x, y]);", "O[] = *(I[x, y])"},
      {"O[x : X] = <(I[x, y]);", "O[x : X] = <(I[x, y])"},
      {"O[i : (N + 1) / 2] = >(I[2 * i + j]), j < 2;", "O[i : (N + 1) / 2] = >(I[2 * i + j]), j < 2"},
      {"O[i0, i1 : N0, N1] = +(I[i0 - k, i1]), k < N0;", "O[i0, i1 : N0, N1] = +(I[i0 - k, i1]), k < N0"},
      {"O[i : N] = +(I[k]), i - k < N;", "O[i : N] = +(I[k]), i - k < N"},
      {"O[j, i : N, M] = =(I[i, j]);", "O[j, i : N, M] = =(I[i, j])"},
      {"O[i, c : I0, C] = =(Idx[i] == Count[c]);", "O[i, c : I0, C] = =(Idx[i] == Count[c])"},
      {"AM[x : X] = >(I[x, y] == Max[x] ? Index[y]);", "AM[x : X] = >(I[x, y] == Max[x] ? Index[y])"},
      {"O[n, x, co : N, L - K + 1, CO] = +(I[n, x + k, ci] * W[k, ci, co]);",
       "O[n, x, co : N, L - K + 1, CO] = +(I[n, x + k, ci] * W[k, ci, co])"},
      {"O[n0, 3*n1 + k, n2 : N0, 3*N1, N2] = =(I[n0, n1, n2]), k < 3 no_defract;",
       "O[n0, 3 * n1 + k, n2 : N0, 3 * N1, N2] = =(I[n0, n1, n2]), k < 3 no_defract"},
      {"O[i + 1, j : M + 2, N] = =(I[i, j]) default P;", "O[i + 1, j : M + 2, N] = =(I[i, j]) default P"},
      {"O[2i : N] = +(I[2i, j]);", "O[2 * i : N] = +(I[2 * i, j])"},
      {"O[i : 2*N] = +(I[i/2 + k/2] * K[k]);", "O[i : 2 * N] = +(I[i / 2 + k / 2] * K[k])"},
      {"Pad = (max(0, ((L + 1) / 2 - 1) * 2 + 3 - L)) / 2;", "Pad = max(0, ((L + 1) / 2 - 1) * 2 + 3 - L) / 2"},
      {"O[x : (L+1)/2] = >(I[2*x + k - Pad]), k < 3;", "O[x : (L + 1) / 2] = >(I[2 * x + k - Pad]), k < 3"},
      {"Y = (X < -2.5 ? 0 : (X > 2.5 ? 1 : 0.2 * X + 0.5));",
       "Y = X < -2.5 ? 0 : (X > 2.5 ? 1 : 0.2 * X + 0.5)"},
      {"Q = A / B;", "Q = A / B"},
      {"S = C << 2;", "S = C << 2"},
      {"T = ~C & 255;", "T = ~C & 255"},
      {"I32 = as_int(X, 32);", "I32 = as_int(X, 32)"},
      {"U8 = as_uint(Y, 8);", "U8 = as_uint(Y, 8)"},
      {"F = as_float(B, 32);", "F = as_float(B, 32)"},
      {"R = index(T, 0);", "R = index(T, 0)"},
      {"G = gather(V, Idx);", "G = gather(V, Idx)"},
      {"S = shape(T);", "S = shape(T)"},
      {"F = reshape(T, N0 * N1);", "F = reshape(T, N0 * N1)"},
      {"O = builtin_softmax(I, X, Y);", "O = builtin_softmax(I, X, Y)"},
      {"Z = relu(A);", "Z = relu(A)"},
      {"M = max(A, 0.0);", "M = max(A, 0.0)"},
      {"Assert = assert_valid(BI - S + 1 == BO);", "Assert = assert_valid(BI - S + 1 == BO)"},
      {"[[pid(dot_stage)]] T[$J : N] = +(#lower[$J] * B[$J]);",
       "[[pid(dot_stage)]] T[$J : N] = +(#lower[$J] * B[$J])"},
      {"T' = T * 2.5E-1;", "T' = T * 0.25"},
      {"T = prng_step(S, 3, 5);", "T = prng_step(S, 3, 5)"},
      {"V = prng_value(T);", "V = prng_value(T)"},
      {"NS = prng_state(T);", "NS = prng_state(T)"},
  };
  for (const Case& c : cases) {
    Function f = ParseText("function (I[N, C, L], One[]) -> (O) { " + c.stmt + " }");
    ASSERT_EQ(f.body.size(), 1u) << c.stmt;
    EXPECT_EQ(Print(f), "function (I[N, C, L], One[]) -> (O) {\n  " + c.printed + ";\n}\n") << c.stmt;
  }
  // A few trees checked node by node rather than through the printer.
  Statement s = ParseStatementText("Y = (X < -2.5 ? 0 : (X > 2.5 ? 1 : 0.2 * X + 0.5));");
  EXPECT_EQ(Sexp(*s.assignment.value), "(? (< #X -2.5f) 0 (? (> #X 2.5f) 1 (+ (* 0.2f #X) 0.5f)))");
  s = ParseStatementText("T = ~C & 255;");
  EXPECT_EQ(Sexp(*s.assignment.value), "(& (~ #C) 255)");
  s = ParseStatementText("Pad = (max(0, ((L + 1) / 2 - 1) * 2 + 3 - L)) / 2;");
  EXPECT_EQ(Sexp(*s.assignment.value),
            "(/ (call max 0 (- (+ (* (- (/ (+ #L 1) 2) 1) 2) 3) #L)) 2)");
}

TEST(ParserTest, NestingLimits) {
  std::string ok = std::string(200, '(') + "a" + std::string(200, ')');
  EXPECT_EQ(ExprSexp(ok), "a");
  std::string deep = std::string(300, '(') + "a" + std::string(300, ')');
  EXPECT_EQ(ExprError(deep), "expression nested too deeply (more than 256 levels)");
  EXPECT_EQ(ExprError(std::string(300, '-') + "a"), "expression nested too deeply (more than 256 levels)");
  // A long flat chain is fine up to the tree-depth limit, then a clean error.
  std::string chain = "a";
  for (int i = 0; i < 900; ++i) chain += " + a";
  EXPECT_EQ(ParseExpr(MakeSource("e", chain))->kind, ExprKind::Binary);
  for (int i = 0; i < 200; ++i) chain += " + a";
  EXPECT_EQ(ExprError(chain),
            "expression too large: its tree is more than 1000 levels deep; split it into several statements");
}

TEST(ParserTest, ParseExprRequiresEndOfInput) {
  EXPECT_EQ(ExprError("a b"), "expected end of input after the expression, found 'b'");
  EXPECT_EQ(ExprError(""), "unexpected end of input; expected an expression");
}

}  // namespace
}  // namespace tilec::lang
