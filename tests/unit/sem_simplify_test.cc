// Tests of the sem simplifier: each rewrite, and the cases it must leave alone.
#include <gtest/gtest.h>

#include "compiler/sem/builder.h"
#include "compiler/sem/printer.h"
#include "compiler/sem/simplify.h"
#include "compiler/sem/verify.h"
#include "support/error.h"

namespace tilec::sem {
namespace {

using namespace builder;  // NOLINT

const Type kF32 = Type::Scalar(DataType::F32);
const Type kIdx = Type::Index();
const Type kOut = Type::Pointer(Type::Index(), AddressSpace::Global);
const Type kFOut = Type::Pointer(kF32, AddressSpace::Global);
const Type kBOut = Type::Pointer(Type::Bool(), AddressSpace::Global);

Expr R() { return _Var("R", kOut); }
Expr F() { return _Var("F", kFOut); }
Expr BB() { return _Var("BB", kBOut); }
Expr N() { return _Var("n", kIdx); }
Expr X() { return _Var("x", kF32); }
Expr B() { return _Var("b", Type::Bool()); }

// A kernel with parameters R (index buffer), F (float buffer), BB (bool
// buffer), n, x, b.
Function Kernel(std::vector<Stmt> body, DataType index_type = DataType::I32) {
  Function f;
  f.name = "k";
  f.params = {{"R", kOut}, {"F", kFOut},  {"BB", kBOut},
              {"n", kIdx}, {"x", kF32}, {"b", Type::Bool()}};
  f.body = _Block(std::move(body));
  f.index_type = index_type;
  return f;
}

// The simplified body's statements, printed (without the outer braces).
std::string Simplified(std::vector<Stmt> body, DataType index_type = DataType::I32) {
  Function f = Kernel(std::move(body), index_type);
  Verify(f);
  Function out = Simplify(f);
  Verify(out);  // the result must stay valid
  std::string text;
  for (const Stmt& s : static_cast<const Block&>(*out.body).stmts) text += Print(s);
  return text;
}

// The simplified form of one index expression, stored to R[0].
std::string Folded(const Expr& e, DataType index_type = DataType::I32) {
  Expr buffer = e->type.IsFloat() ? F() : e->type.IsBool() ? BB() : R();
  std::string text = Simplified({_Store(buffer, _Const(0), e)}, index_type);
  size_t eq = text.find(" = ");
  return text.substr(eq + 3, text.size() - eq - 5);
}

TEST(SemSimplifyTest, FoldsIntegerArithmetic) {
  EXPECT_EQ(Folded((_Const(2) + 3) * 4 - 1), "19");
  EXPECT_EQ(Folded(_Const(-7) / 2), "-3");  // C truncates toward zero
  EXPECT_EQ(Folded(_Const(-7) % 2), "-1");  // and % takes the dividend's sign
  EXPECT_EQ(Folded(_Min(_Const(4), _Const(-2)) + _Max(_Const(4), _Const(-2))), "2");
  EXPECT_EQ(Folded((_Const(6) & 3) | (_Const(8) ^ 1)), "11");
  EXPECT_EQ(Folded(_Const(1) << 10), "1024");
  EXPECT_EQ(Folded(_Const(1024) >> 3), "128");
  EXPECT_EQ(Folded(-(_Const(5)) + ~_Const(0)), "-6");
  EXPECT_EQ(Folded(_Clamp(_Const(300), _Const(0), _Const(255))), "255");
  EXPECT_EQ(Folded(_Cond(_Const(3) > 2, N(), _Const(0))), "n");
  EXPECT_EQ(Folded(_Cast(kIdx, _Const(-1, DataType::I8))), "-1");
}

TEST(SemSimplifyTest, FoldsWithTheOperandTypesSemantics) {
  Type u8 = Type::Scalar(DataType::U8);
  Type u32 = Type::Scalar(DataType::U32);
  Type i64 = Type::Scalar(DataType::I64);
  // Unsigned arithmetic wraps in its own width.
  EXPECT_EQ(Folded(_Cast(kIdx, _Const(200, u8) + _Const(100, u8))), "44");
  EXPECT_EQ(Folded(_Cast(kIdx, _Const(0, u8) - _Const(1, u8))), "255");
  EXPECT_EQ(Folded(_Cast(i64, _Const(0, u32) - _Const(1, u32)) > _Const(0, i64)), "true")
      << "u32 0 - 1 wraps to 4294967295";
  EXPECT_EQ(Folded(_Cast(kIdx, -_Const(1, u8))), "255");
  // Casts to unsigned wrap; casts to signed fold only when the value fits.
  EXPECT_EQ(Folded(_Cast(kIdx, _Cast(u8, _Const(-1)))), "255");
  EXPECT_EQ(Folded(_Cast(kIdx, _Cast(Type::Scalar(DataType::I8), _Const(200)))),
            "(index)((char)(200))");
  // Signed overflow is undefined: left alone. The index width decides.
  EXPECT_EQ(Folded(_Const(2147483647) + 1), "(2147483647 + 1)");
  EXPECT_EQ(Folded(_Const(2147483647) + 1, DataType::I64), "2147483648");
  EXPECT_EQ(Folded(_Const(65536) * 65536), "(65536 * 65536)");
  // Undefined divisions and shifts stay for the program to (not) execute.
  EXPECT_EQ(Folded(_Const(5) / 0), "(5 / 0)");
  EXPECT_EQ(Folded(_Const(5) % 0), "(5 % 0)");
  EXPECT_EQ(Folded(_Const(-2147483647 - 1) / -1), "(-2147483648 / -1)");
  EXPECT_EQ(Folded(_Const(1) << 32), "(1 << 32)");
  EXPECT_EQ(Folded(_Const(1) << -1), "(1 << -1)");
  EXPECT_EQ(Folded(_Const(-8) >> 1), "(-8 >> 1)");
}

TEST(SemSimplifyTest, FoldsBooleansAndComparisons) {
  EXPECT_EQ(Folded(_Cond(_LogicalAnd(_Const(1) < 2, _Bool(true)), _Const(1), _Const(2))), "1");
  EXPECT_EQ(Folded(_Cond(_LogicalAnd(B(), _Bool(true)), N(), _Const(0))), "(b ? n : 0)");
  EXPECT_EQ(Folded(_Cond(_LogicalAnd(_Bool(true), B()), N(), _Const(0))), "(b ? n : 0)");
  EXPECT_EQ(Folded(_Cond(_LogicalOr(B(), _Bool(true)), N(), _Const(0))), "n");
  EXPECT_EQ(Folded(_Cond(_LogicalAnd(B(), _Bool(false)), N(), _Const(0))), "0");
  EXPECT_EQ(Folded(_Cond(_Not(_Not(B())), N(), _Const(0))), "(b ? n : 0)");
  EXPECT_EQ(Folded(_Select(_Const(0) == 1, N(), _Const(7))), "7");
  // Lanes of constant vectors fold too.
  EXPECT_EQ(Folded(_Extract(_Const(3, Type::Index(4)) * 2, 1)), "6");
  EXPECT_EQ(Folded(_Extract(_Select(_Const(1, Type::Index(4)) < 2, _Const(5, Type::Index(4)),
                                    _Const(6, Type::Index(4))),
                            0)),
            "5");
}

TEST(SemSimplifyTest, IntegerIdentities) {
  Expr n = N();
  EXPECT_EQ(Folded(n + 0), "n");
  EXPECT_EQ(Folded(0 + n), "n");
  EXPECT_EQ(Folded(n - 0), "n");
  EXPECT_EQ(Folded(n * 1), "n");
  EXPECT_EQ(Folded(1 * n), "n");
  EXPECT_EQ(Folded(n * 0), "0");
  EXPECT_EQ(Folded(0 * n), "0");
  EXPECT_EQ(Folded(n / 1), "n");
  EXPECT_EQ(Folded(0 / n), "0");
  EXPECT_EQ(Folded(n % 1), "0");
  EXPECT_EQ(Folded((n | 0) ^ 0), "n");
  EXPECT_EQ(Folded(n << 0), "n");
  EXPECT_EQ(Folded(-(-n)), "n");
  EXPECT_EQ(Folded(0 - n), "(0 - n)");  // not an identity
  EXPECT_EQ(Folded(n / 2), "(n / 2)");
}

TEST(SemSimplifyTest, AnIntegerVariableComparedWithItself) {
  Expr n = N();
  EXPECT_EQ(Folded(_Cond(_Eq(n, n), n, _Const(0))), "n");
  EXPECT_EQ(Folded(_Cond(n <= n, n, _Const(0))), "n");
  EXPECT_EQ(Folded(_Cond(n >= n, n, _Const(0))), "n");
  EXPECT_EQ(Folded(_Cond(_Ne(n, n), n, _Const(0))), "0");
  EXPECT_EQ(Folded(_Cond(n < n, n, _Const(0))), "0");
  EXPECT_EQ(Folded(_Cond(n > n, n, _Const(0))), "0");
  // Whole vectors fold to a vector of the answer (v assigned twice, so not
  // replaced by its value).
  Type v4 = Type::Index(4);
  Expr v = _Var("v", v4);
  std::string text = Simplified({_Declare(v4, "v", _Broadcast(N(), 4)), _Assign(v, v + 1),
                                 _Store(R(), _Const(0), _Extract(_Select(_Eq(v, v), v, _Const(6, v4)), 2))});
  EXPECT_NE(text.find("R[0] = v.s2;"), std::string::npos) << text;
  // Other operands, or a float (x == x is false for NaN), stay.
  EXPECT_EQ(Folded(_Cond(_Eq(n, n + 1), n, _Const(0))), "((n == (n + 1)) ? n : 0)");
  EXPECT_EQ(Folded(_Cond(_Eq(X(), X()), n, _Const(0))), "((x == x) ? n : 0)");
}

TEST(SemSimplifyTest, FloatsAreNotFoldedBeyondExactIdentities) {
  Expr x = X();
  EXPECT_EQ(Folded(x * 1.0), "x");
  EXPECT_EQ(Folded(x / 1.0), "x");
  EXPECT_EQ(Folded(x + 0.0), "(x + 0.0f)");  // -0 + 0 is +0
  EXPECT_EQ(Folded(x * 0.0), "(x * 0.0f)");  // NaN * 0 is NaN
  EXPECT_EQ(Folded(_Float(1.5) + 2.0), "(1.5f + 2.0f)");
}

TEST(SemSimplifyTest, PropagatesNeverAssignedConstants) {
  Expr a = _Var("a", kIdx), c = _Var("c", kIdx);
  EXPECT_EQ(Simplified({_Declare(kIdx, "a", _Const(4)), _Declare(kIdx, "c", a * 2 + 1),
                        _Store(R(), c, a)}),
            "R[9] = 4;\n");
  // Reassigned later: kept.
  EXPECT_EQ(Simplified({_Declare(kIdx, "a", _Const(4)), _Store(R(), a, a),
                        _Assign(a, a + 1), _Store(R(), a, a)}),
            "index a = 4;\nR[a] = a;\na = (a + 1);\nR[a] = a;\n");
  // Reassigned in a nested loop: kept as well.
  EXPECT_EQ(Simplified({_Declare(kIdx, "a", _Const(0)),
                        _For("i", _Const(0), N(), 1, _Block({_Assign(a, a + 2)})),
                        _Store(R(), _Const(0), a)}),
            "index a = 0;\nfor (index i = 0; i < n; i += 1) {\n  a = (a + 2);\n}\nR[0] = a;\n");
  // A nested declaration of the same name shadows the constant.
  EXPECT_EQ(Simplified({_Declare(kIdx, "a", _Const(1)),
                        _Block({_Declare(kIdx, "a", N() * 2), _Store(R(), a, a)}),
                        _Store(R(), a, a)}),
            "{\n  index a = (n * 2);\n  R[a] = a;\n}\nR[1] = 1;\n");
  // Floats are not propagated (only integer, index and bool variables are).
  EXPECT_EQ(Simplified({_Declare(kF32, "y", _Float(2)), _Store(F(), _Const(0), _Var("y", kF32))}),
            "float y = 2.0f;\nF[0] = y;\n");
  // A bool constant folds the branch it guards.
  EXPECT_EQ(Simplified({_Declare(Type::Bool(), "t", _Bool(false)),
                        _If(_Var("t", Type::Bool()), _Block({_Store(R(), _Const(0), N())}))}),
            "");
}

TEST(SemSimplifyTest, EliminatesAliases) {
  Expr t = _Var("t", kIdx), m = _Var("m", kIdx);
  EXPECT_EQ(Simplified({_Declare(kIdx, "t", N()), _Store(R(), t, t + 1)}), "R[n] = (n + 1);\n");
  // Pointers alias too.
  Expr q = _Var("q", kFOut);
  EXPECT_EQ(Simplified({_Declare(kFOut, "q", F()), _Store(q, _Const(1), X())}), "F[1] = x;\n");
  // Not when the source changes afterwards.
  EXPECT_EQ(Simplified({_Declare(kIdx, "m", N() * 2), _Declare(kIdx, "t", m),
                        _Assign(m, m + 1), _Store(R(), t, m)}),
            "index m = (n * 2);\nindex t = m;\nm = (m + 1);\nR[t] = m;\n");
  // Not when the source name is redeclared where the alias is used.
  EXPECT_EQ(Simplified({_Declare(kIdx, "m", N() * 2), _Declare(kIdx, "t", m),
                        _Block({_Declare(kIdx, "m", _Var("n", kIdx) + 5), _Store(R(), t, m)})}),
            "index m = (n * 2);\nindex t = m;\n{\n  index m = (n + 5);\n  R[t] = m;\n}\n");
}

TEST(SemSimplifyTest, FoldsIfs) {
  Stmt a = _Store(R(), _Const(0), _Const(1));
  Stmt b = _Store(R(), _Const(1), _Const(2));
  EXPECT_EQ(Simplified({_If(_Const(1) < 2, _Block({a}), _Block({b}))}), "R[0] = 1;\n");
  EXPECT_EQ(Simplified({_If(_Const(3) < 2, _Block({a}), _Block({b}))}), "R[1] = 2;\n");
  EXPECT_EQ(Simplified({_If(_Const(3) < 2, _Block({a}))}), "");
  // Empty branches: dropped; an empty then-branch inverts the condition, exactly
  // for integers and with ! for floats (NaN).
  EXPECT_EQ(Simplified({_If(N() < 0, _Block({a}), _Block({_Comment("nothing")}))}),
            "if ((n < 0)) {\n  R[0] = 1;\n}\n");
  EXPECT_EQ(Simplified({_If(N() < 0, _Block({}), _Block({a}))}), "if ((n >= 0)) {\n  R[0] = 1;\n}\n");
  EXPECT_EQ(Simplified({_If(X() < 0.0, _Block({}), _Block({a}))}),
            "if ((!(x < 0.0f))) {\n  R[0] = 1;\n}\n");
  EXPECT_EQ(Simplified({_If(_Not(B()), _Block({}), _Block({a}))}), "if (b) {\n  R[0] = 1;\n}\n");
  EXPECT_EQ(Simplified({_If(N(), _Block({}), _Block({a}))}), "if ((n == 0)) {\n  R[0] = 1;\n}\n");
  EXPECT_EQ(Simplified({_If(N() < 0, _Block({}), _Block({}))}), "");
  EXPECT_EQ(Simplified({_While(_Const(0) > 1, _Block({a}))}), "");
  // A chosen branch that is a bare declaration keeps its own scope.
  Expr v = _Var("v", kIdx);
  EXPECT_EQ(Simplified({_Declare(kIdx, "v", N() * 3), _If(_Const(1) < 2, _Declare(kIdx, "v", N() * 2)),
                        _Store(R(), v, v)}),
            "index v = (n * 3);\n{\n  index v = (n * 2);\n}\nR[v] = v;\n");
}

TEST(SemSimplifyTest, FoldsLoops) {
  Expr i = _Var("i", kIdx);
  // Zero iterations, or an empty body: removed.
  EXPECT_EQ(Simplified({_For("i", 4, 4, 1, _Block({_Store(R(), i, i)}))}), "");
  EXPECT_EQ(Simplified({_For("i", 5, 2, 1, _Block({_Store(R(), i, i)}))}), "");
  EXPECT_EQ(Simplified({_For("i", _Const(0), N(), 1, _Block({_Comment("x")}))}), "");
  // One iteration: inlined, the variable replaced by the start.
  EXPECT_EQ(Simplified({_For("i", 3, 5, 2, _Block({_Store(R(), i, i * 2)}))}), "R[3] = 6;\n");
  // ... and what that exposes: `t = n + 0` becomes an alias of n.
  EXPECT_EQ(Simplified({_For("i", 0, 3, 3,
                             _Block({_Declare(kIdx, "t", N() + i), _Store(R(), _Var("t", kIdx), i)}))}),
            "R[n] = 0;\n");
  // One iteration with a non-constant start keeps a declaration.
  EXPECT_EQ(Simplified({_For("i", N(), N() + 1, 1, _Block({_Store(R(), i, i)}))}),
            "for (index i = n; i < (n + 1); i += 1) {\n  R[i] = i;\n}\n");
  // Two iterations stay a loop.
  EXPECT_EQ(Simplified({_For("i", 0, 2, 1, _Block({_Store(R(), i, i)}))}),
            "for (index i = 0; i < 2; i += 1) {\n  R[i] = i;\n}\n");
  // Large bounds do not overflow the trip count.
  EXPECT_EQ(Simplified({_For("i", _Const(INT64_MIN + 1), _Const(INT64_MAX), INT64_MAX,
                             _Block({_Store(R(), _Const(0), _Const(1))}))},
                       DataType::I64),
            "for (index i = -9223372036854775807; i < 9223372036854775807; i += 9223372036854775807) "
            "{\n  R[0] = 1;\n}\n");
}

TEST(SemSimplifyTest, SeedStyleLoopNestCollapses) {
  // The seed's `for (j_gid = 0; j_gid < 3; j_gid += 3)` around a tile load,
  // with the bases it feeds and the fast-path test it enables.
  Expr j_gid = _Var("j_gid", kIdx), gbase = _Var("gbase", kIdx), tid = _Var("tid", kIdx);
  Expr y_gid = _Var("y_gid", kIdx);
  std::vector<Stmt> body = {
      _Declare(kIdx, "tid", _Index(ThreadIndexKind::LocalId, 0)),
      _Declare(kIdx, "y_gid", _Index(ThreadIndexKind::GroupId, 0) * 2),
      _For("j_gid", 0, 3, 3,
           _Block({_Comment("Load a tile"),
                   _Block({_Declare(kIdx, "gbase", (j_gid * 64) + (y_gid * 64)),
                           _Declare(kIdx, "ci_tid", tid % 8),
                           _Store(R(), gbase + _Var("ci_tid", kIdx), j_gid * 1)}),
                   _If(_LogicalAnd((-1 * j_gid) + (-1 * y_gid) <= -1, (j_gid + 3 - 1) <= 224),
                       _Block({_Store(R(), tid, _Const(1))}), _Block({}))}))};
  EXPECT_EQ(Simplified(body),
            "index tid = get_local_id(0);\n"
            "index y_gid = (get_group_id(0) * 2);\n"
            "// Load a tile\n"
            "{\n"
            "  index gbase = (y_gid * 64);\n"
            "  index ci_tid = (tid % 8);\n"
            "  R[(gbase + ci_tid)] = 0;\n"
            "}\n"
            "if (((-1 * y_gid) <= -1)) {\n"
            "  R[tid] = 1;\n"
            "}\n");
}

TEST(SemSimplifyTest, IsIdempotentAndKeepsTheSignature) {
  Expr a = _Var("a", kIdx);
  Function f = Kernel({_Declare(kIdx, "a", N() * 3), _Store(R(), a, a)});
  f.work_group_size = std::array<int64_t, 3>{8, 1, 1};
  Function once = Simplify(f);
  EXPECT_EQ(once.body, f.body);  // nothing to do: the same tree, not a copy
  EXPECT_EQ(once.name, "k");
  EXPECT_EQ(once.params.size(), 6u);
  EXPECT_EQ(once.work_group_size, f.work_group_size);
  Function g = Kernel({_Declare(kIdx, "c", _Const(2)), _Store(R(), _Var("c", kIdx), N())});
  Function twice = Simplify(Simplify(g));
  EXPECT_EQ(Print(twice), Print(Simplify(g)));
}

}  // namespace
}  // namespace tilec::sem
