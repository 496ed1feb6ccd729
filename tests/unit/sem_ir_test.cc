// Tests of the sem tree: types, checking Make, traversal, builder, printer
// and verifier.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/sem/builder.h"
#include "compiler/sem/ir.h"
#include "compiler/sem/printer.h"
#include "compiler/sem/verify.h"
#include "support/error.h"

namespace tilec::sem {
namespace {

using ::testing::HasSubstr;
using namespace builder;  // NOLINT

const Type kF32 = Type::Scalar(DataType::F32);
const Type kIdx = Type::Index();

Function Kernel(std::string name, std::vector<Param> params, std::vector<Stmt> body) {
  Function f;
  f.name = std::move(name);
  f.params = std::move(params);
  f.body = _Block(std::move(body));
  return f;
}

std::string VerifyMessage(const Function& f) {
  try {
    Verify(f);
  } catch (const InternalError& e) {
    return e.what();
  }
  return "";
}

// --- Types ----------------------------------------------------------------------------

TEST(SemTypeTest, SpellingsAndParts) {
  EXPECT_EQ(ToString(kF32), "float");
  EXPECT_EQ(ToString(Type::Scalar(DataType::F32, 4)), "float4");
  EXPECT_EQ(ToString(Type::Index(8)), "index8");
  EXPECT_EQ(ToString(Type::Bool()), "bool");
  EXPECT_EQ(ToString(Type::Scalar(DataType::U8)), "uchar");
  Type p = Type::Pointer(kF32, AddressSpace::Global, true);
  EXPECT_EQ(ToString(p), "global const float*");
  EXPECT_EQ(p.Element(), kF32);
  Type a = Type::Array(Type::Scalar(DataType::F16, 2), 64, AddressSpace::Local);
  EXPECT_EQ(ToString(a), "local half2[64]");
  EXPECT_EQ(a.Element(), Type::Scalar(DataType::F16, 2));
  EXPECT_EQ(Type::Array(kIdx, 3).Element(), kIdx);
  EXPECT_EQ(kF32.WithWidth(8), Type::Scalar(DataType::F32, 8));
  EXPECT_TRUE(Type::Index().IsInteger());
  EXPECT_FALSE(Type::Bool().IsInteger());
  EXPECT_NE(Type::Index(), Type::Scalar(DataType::I32));  // the index type is its own kind
}

TEST(SemTypeTest, RejectsBadShapes) {
  EXPECT_THROW(Type::Scalar(DataType::F32, 5), InternalError);
  EXPECT_THROW(Type::Array(kF32, 0), InternalError);
  EXPECT_THROW(Type::Array(kF32, 8, AddressSpace::Global), InternalError);
  EXPECT_THROW(Type::Pointer(Type::Scalar(DataType::F32, 3), AddressSpace::Global), InternalError);
  EXPECT_THROW(Type::Pointer(Type::Pointer(kF32, AddressSpace::Global), AddressSpace::Global),
               InternalError);
}

// --- Make checks ----------------------------------------------------------------------

TEST(SemMakeTest, ExpressionTypes) {
  Expr i = _Var("i", kIdx);
  Expr x = _Var("x", kF32);
  EXPECT_EQ((i + 1)->type, kIdx);
  EXPECT_EQ((x < 0)->type, Type::Bool());
  Expr v = _Var("v", Type::Scalar(DataType::F32, 4));
  EXPECT_EQ((v > 0.5)->type, Type::Bool(4));
  EXPECT_EQ(_Extract(v, 3)->type, kF32);
  EXPECT_EQ(_Broadcast(x, 8)->type, Type::Scalar(DataType::F32, 8));
  EXPECT_EQ(_Shuffle(v, v, {0, 4, 1, 5, 2, 6, 3, 7})->type, Type::Scalar(DataType::F32, 8));
  EXPECT_EQ(_Shuffle(v, v, {7, 0})->type, Type::Scalar(DataType::F32, 2));
  Expr p = _Var("p", Type::Pointer(kF32, AddressSpace::Global, true));
  EXPECT_EQ(_Load(p, i)->type, kF32);
  EXPECT_EQ(_Load(p, i, 4)->type, Type::Scalar(DataType::F32, 4));
  EXPECT_EQ((p + i)->type, p->type);  // pointer arithmetic keeps the pointer type
  Expr q = _Var("q", Type::Pointer(Type::Scalar(DataType::F32, 4), AddressSpace::Global));
  EXPECT_EQ(_Load(q, i)->type, Type::Scalar(DataType::F32, 4));
  EXPECT_EQ(_Cast(Type::Scalar(DataType::I32, 4), v)->type, Type::Scalar(DataType::I32, 4));
  EXPECT_EQ(_Fma(x, x, x)->type, kF32);
  EXPECT_EQ(_Index(ThreadIndexKind::LocalId, 0)->type, kIdx);
}

TEST(SemMakeTest, RejectsMismatchedOperands) {
  Expr i = _Var("i", kIdx);
  Expr n = _Var("n", Type::Scalar(DataType::I32));
  Expr x = _Var("x", kF32);
  Expr b = _Var("b", Type::Bool());
  EXPECT_THROW(i + n, InternalError);                // index vs i32: no implicit conversion
  EXPECT_THROW(i + x, InternalError);
  EXPECT_THROW(x % x, InternalError);                // % is integer only
  EXPECT_THROW(x << x, InternalError);
  EXPECT_THROW(b + b, InternalError);
  EXPECT_THROW(_LogicalAnd(i, i), InternalError);    // logical ops want bool
  EXPECT_THROW(_Not(i), InternalError);
  EXPECT_THROW(~x, InternalError);
  EXPECT_THROW(_Select(i, x, x), InternalError);     // select wants a bool condition
  EXPECT_THROW(_Select(b, x, i), InternalError);
  EXPECT_THROW(_Select(_Var("m", Type::Bool(4)), x, x), InternalError);  // lane mismatch
  EXPECT_THROW(_Cond(x, i, i), InternalError);       // float condition
  EXPECT_THROW(_Clamp(x, i, i), InternalError);
  EXPECT_THROW(_Cast(Type::Scalar(DataType::F32, 4), x), InternalError);  // use Broadcast
  EXPECT_THROW(_Call(CallFn::Exp, {i}), InternalError);
  EXPECT_THROW(_Call(CallFn::Pow, {x}), InternalError);
  EXPECT_THROW(_Extract(x, 0), InternalError);
  EXPECT_THROW(_Extract(_Broadcast(x, 4), 4), InternalError);
  EXPECT_THROW(_Broadcast(_Broadcast(x, 4), 8), InternalError);
  Expr v4 = _Broadcast(x, 4);
  EXPECT_THROW(_Shuffle(v4, v4, {0, 8}), InternalError);         // lane past both operands
  EXPECT_THROW(_Shuffle(v4, v4, {0, 1, 2}), InternalError);      // no 3-lane result
  EXPECT_THROW(_Shuffle(v4, _Broadcast(x, 8), {0, 1}), InternalError);  // operand widths differ
  EXPECT_THROW(_Shuffle(x, x, {0, 1}), InternalError);           // scalars
  EXPECT_THROW(_Shuffle(v4 > 0, v4 > 0, {0, 1}), InternalError);  // masks
  EXPECT_THROW(_Index(ThreadIndexKind::GroupId, 3), InternalError);
  EXPECT_THROW(IntConst::Make(300, Type::Scalar(DataType::U8)), InternalError);
  EXPECT_THROW(IntConst::Make(1, kF32), InternalError);
  EXPECT_THROW(FloatConst::Make(1, kIdx), InternalError);
  EXPECT_THROW(VarRef::Make("2x", kF32), InternalError);
}

TEST(SemMakeTest, RejectsBadAccessesAndStatements) {
  Expr i = _Var("i", kIdx);
  Expr x = _Var("x", kF32);
  Expr p = _Var("p", Type::Pointer(kF32, AddressSpace::Global));
  Expr q = _Var("q", Type::Pointer(Type::Scalar(DataType::F32, 4), AddressSpace::Global));
  EXPECT_THROW(_Load(x, i), InternalError);          // not a pointer
  EXPECT_THROW(_Load(p, x), InternalError);          // float subscript
  EXPECT_THROW(_Load(q, i, 4), InternalError);       // vector load of vector elements
  EXPECT_THROW(_Store(p, i, i), InternalError);      // index into float buffer
  EXPECT_THROW(_Load(_Cond(_Bool(true), p, p), i), InternalError);  // pointers are not ?: values
  EXPECT_THROW(_Assign(x, i), InternalError);
  EXPECT_THROW(_Assign(x + 1.0, x), InternalError);  // not a variable
  EXPECT_THROW(_Declare(kF32, "y", i), InternalError);
  EXPECT_THROW(_Declare(Type::Array(kF32, 4, AddressSpace::Local), "t", x), InternalError);
  EXPECT_THROW(_If(x, _Block({})), InternalError);
  EXPECT_THROW(_For("k", 0, 8, 0, _Block({})), InternalError);   // step 0 would never end
  EXPECT_THROW(_For("k", 0, 8, -1, _Block({})), InternalError);
  EXPECT_THROW(For::Make("k", _Const(0), _Const(8), i, _Block({})), InternalError);  // step not constant
  EXPECT_THROW(_For("k", _Const(0, DataType::U8), _Const(8, DataType::U8), 1, _Block({})),
               InternalError);  // narrow loop variables would wrap
  EXPECT_THROW(Block::Make({nullptr}), InternalError);
}

TEST(SemMakeTest, MaskedAccesses) {
  Expr i = _Var("i", kIdx);
  Expr p = _Var("p", Type::Pointer(kF32, AddressSpace::Global));
  Expr q = _Var("q", Type::Pointer(Type::Scalar(DataType::F32, 4), AddressSpace::Global));
  Expr m4 = _Var("m", Type::Bool(4));
  Expr v4 = _Var("v", Type::Scalar(DataType::F32, 4));
  EXPECT_EQ(Print(_Load(p, i, 4, m4)), "p[i:+4 if m]");
  EXPECT_EQ(Print(_Store(p, i, v4, false, m4)), "p[i:+4 if m] = v;\n");
  EXPECT_THROW(_Load(p, i, 8, m4), InternalError);                  // mask of another width
  EXPECT_THROW(_Load(p, i, 1, _Var("b", Type::Bool())), InternalError);  // a scalar access
  EXPECT_THROW(_Load(q, i, 1, m4), InternalError);                  // vector elements
  EXPECT_THROW(_Load(p, i, 4, _Var("f", Type::Scalar(DataType::F32, 4))), InternalError);
  EXPECT_THROW(_Store(p, i, v4, true, m4), InternalError);          // streaming and masked
}

TEST(SemMakeTest, AsAndConstants) {
  Expr c = _Const(7);
  ASSERT_NE(As<IntConst>(c), nullptr);
  EXPECT_EQ(As<FloatConst>(c), nullptr);
  EXPECT_EQ(ConstInt(_Const(5, Type::Index(4))), 5);  // seen through a broadcast
  EXPECT_EQ(ConstBool(_Const(1, Type::Bool())), true);
  EXPECT_EQ(ConstInt(_Var("v", kIdx)), std::nullopt);
  EXPECT_EQ(_Const(3, kF32)->kind, NodeKind::FloatConst);
  EXPECT_EQ(Name(NodeKind::VectorInsert), "VectorInsert");
  EXPECT_EQ(Spelling(BinaryOp::Shl), "<<");
  EXPECT_EQ(Arity(CallFn::Fma), 3);
}

// --- Traversal ------------------------------------------------------------------------

TEST(SemTraversalTest, VisitorSeesEveryNode) {
  class Counter : public Visitor {
   public:
    int vars = 0, stmts = 0;
    using Visitor::Visit;

   protected:
    void VisitVarRef(const VarRef&) override { ++vars; }
    void VisitAssign(const Assign& n) override {
      ++stmts;
      Visitor::VisitAssign(n);
    }
  };
  Expr i = _Var("i", kIdx), s = _Var("s", kIdx);
  Stmt body = _Block({_Declare(kIdx, "s", _Const(0)),
                      _For("i", 0, 4, 1, _Block({_Assign(s, s + i)}))});
  Counter c;
  c.Visit(body);
  EXPECT_EQ(c.vars, 3);
  EXPECT_EQ(c.stmts, 1);
}

TEST(SemTraversalTest, MutatorRebuildsOnlyWhatChanged) {
  // Renames `a` to `b` everywhere.
  class Rename : public Mutator {
   protected:
    Expr MutateVarRef(const VarRef& n, const Expr& self) override {
      return n.name == "a" ? VarRef::Make("b", n.type) : self;
    }
  };
  Expr a = _Var("a", kIdx), c = _Var("c", kIdx);
  Stmt keep = _Assign(c, c * 2);
  Stmt body = _Block({keep, _Assign(c, a + 1)});
  Stmt out = Rename().Mutate(body);
  ASSERT_NE(out, body);
  auto* block = As<Block>(out);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->stmts[0], keep);  // untouched subtree is shared
  EXPECT_EQ(Print(block->stmts[1]), "c = (b + 1);\n");
  Stmt same = _Block({keep});
  EXPECT_EQ(Rename().Mutate(same), same);
}

// --- Builder --------------------------------------------------------------------------

TEST(SemBuilderTest, LiteralsTakeTheOtherSidesType) {
  Expr x = _Var("x", kF32);
  Expr u = _Var("u", Type::Scalar(DataType::U8));
  Expr v = _Var("v", Type::Index(4));
  EXPECT_EQ(Print(x * 2), "(x * 2.0f)");
  EXPECT_EQ(Print(2.5 - x), "(2.5f - x)");
  EXPECT_EQ(Print(u + 1), "(u + (uchar)1)");
  EXPECT_EQ(Print(v * 3), "(v * broadcast4(3))");
  EXPECT_EQ(Print(_Shuffle(v, v * 3, {0, 4, 1, 5})), "shuffle(v, (v * broadcast4(3)), [0 4 1 5])");
  EXPECT_EQ(Print(x == 0), "(x == 0.0f)");
  EXPECT_THROW(u + 1.5, InternalError);       // a float literal needs a float operand
  EXPECT_THROW(u + 300, InternalError);       // does not fit uchar
  EXPECT_EQ(Print(-x), "(-x)");
  EXPECT_EQ(Print(_Not(x > 1)), "(!(x > 1.0f))");
  EXPECT_EQ(Print(_Ne(x, x)), "(x != x)");
}

// --- Printer --------------------------------------------------------------------------

TEST(SemPrinterTest, Expressions) {
  Expr i = _Var("i", kIdx);
  Expr v = _Var("v", Type::Scalar(DataType::F32, 4));
  Expr p = _Var("p", Type::Pointer(kF32, AddressSpace::Global));
  Expr b = _Var("b", Type::Bool());
  EXPECT_EQ(Print(_Load(p, i * 4, 4)), "p[(i * 4):+4]");
  EXPECT_EQ(Print(_Select(b, _Float(1.5), _Float(-0.25))), "select(b, 1.5f, -0.25f)");
  EXPECT_EQ(Print(_Cond(b, i, _Const(-1))), "(b ? i : -1)");
  EXPECT_EQ(Print(_Clamp(i, _Const(0), _Const(9))), "clamp(i, 0, 9)");
  EXPECT_EQ(Print(_Min(i, _Const(3))), "min(i, 3)");
  EXPECT_EQ(Print(_Extract(v, 2)), "v.s2");
  EXPECT_EQ(Print(_Extract(v + v, 15 - 12)), "(v + v).s3");
  EXPECT_EQ(Print(_Extract(_Cast(v->type, v), 0)), "((float4)(v)).s0");
  EXPECT_EQ(Print(_Insert(v, 1, _Float(0))), "insert(v, 1, 0.0f)");
  EXPECT_EQ(Print(_Cast(Type::Scalar(DataType::I32), _Float(2.0, DataType::F64))), "(int)(2.0)");
  EXPECT_EQ(Print(_Float(1e-7, DataType::F16)), "1e-07h");
  EXPECT_EQ(Print(_LimitConst(LimitKind::Min, kF32)), "min_value(float)");
  EXPECT_EQ(Print(_Index(ThreadIndexKind::GroupId, 2)), "get_group_id(2)");
  EXPECT_EQ(Print(_Const(-1, DataType::U64)), "(ulong)18446744073709551615");
  EXPECT_EQ(Print(_Mad(_Float(1), _Float(2), _Float(3))), "mad(1.0f, 2.0f, 3.0f)");
}

// A cut-down version of the seed's conv kernel: a clamped load into local
// memory, a barrier, a guarded accumulation, ReLU and a store.
Function SeedLikeKernel() {
  Type gf = Type::Pointer(kF32, AddressSpace::Global);
  Type cgf = Type::Pointer(kF32, AddressSpace::Global, true);
  Expr R = _Var("R", gf), D = _Var("D", cgf);
  Expr tid = _Var("tid", kIdx), agg = _Var("agg", Type::Array(kF32, 2));
  Expr shared = _Var("D_shared", Type::Array(kF32, 66, AddressSpace::Local));
  Expr x_gid = _Var("x_gid", kIdx), lid = _Var("lid", kIdx), val = _Var("val", kF32);
  Expr lo = _Var("LO", kF32), lr = _Var("LR", kF32);
  Function f = Kernel(
      "kernel_ID_0",
      {{"R", gf, true}, {"D", cgf, true}},
      {_Comment("Setup thread id"),
       _Declare(kIdx, "tid", _Index(ThreadIndexKind::LocalId, 0)),
       _Declare(agg->type, "agg", _Float(0)),
       _Declare(shared->type, "D_shared"),
       _Declare(kIdx, "x_gid", _Index(ThreadIndexKind::GroupId, 0) * 64),
       _For("lid", 0, 2, 1,
            _Block({_Store(shared, lid * 64 + tid,
                           _Load(D, _Clamp(x_gid + lid * 64 + tid - 1, _Const(0), _Const(255))))})),
       _Barrier(),
       _For("i", 0, 2, 1,
            _Block({_Declare(kF32, "val", _Load(shared, tid + _Var("i", kIdx))),
                    _Store(agg, _Var("i", kIdx),
                           _Select(_LogicalAnd(x_gid + tid + _Var("i", kIdx) >= 1,
                                               x_gid + tid + _Var("i", kIdx) <= 256),
                                   _Load(agg, _Var("i", kIdx)) + val,
                                   _Load(agg, _Var("i", kIdx))))})),
       _Declare(kF32, "LO", _Load(agg, _Const(0)) + _Load(agg, _Const(1))),
       _Declare(kF32, "LR", _Cond(lo > 0, lo, _Float(0))),
       _Store(R, x_gid + tid, lr)});
  f.work_group_size = std::array<int64_t, 3>{64, 1, 1};
  return f;
}

TEST(SemPrinterTest, SeedLikeKernelGolden) {
  Function f = SeedLikeKernel();
  EXPECT_NO_THROW(Verify(f));
  EXPECT_EQ(Print(f),
            R"(kernel void kernel_ID_0(global float* restrict R, global const float* restrict D) index(i32) work_group_size(64, 1, 1) {
  // Setup thread id
  index tid = get_local_id(0);
  float agg[2] = {fill 0.0f};
  local float D_shared[66];
  index x_gid = (get_group_id(0) * 64);
  for (index lid = 0; lid < 2; lid += 1) {
    D_shared[((lid * 64) + tid)] = D[clamp((((x_gid + (lid * 64)) + tid) - 1), 0, 255)];
  }
  barrier(local);
  for (index i = 0; i < 2; i += 1) {
    float val = D_shared[(tid + i)];
    agg[i] = select(((((x_gid + tid) + i) >= 1) && (((x_gid + tid) + i) <= 256)), (agg[i] + val), agg[i]);
  }
  float LO = (agg[0] + agg[1]);
  float LR = ((LO > 0.0f) ? LO : 0.0f);
  R[(x_gid + tid)] = LR;
}
)");
}

TEST(SemPrinterTest, StatementsAndModules) {
  Expr n = _Var("n", kIdx);
  Stmt s = _If(n < 0, _Block({_Comment("negative\nreally")}),
               _If(n == 0, _Block({_Return()}), _Block({_Barrier(MemFence::Global)})));
  EXPECT_EQ(Print(s), R"(if ((n < 0)) {
  // negative
  // really
} else if ((n == 0)) {
  return;
} else {
  barrier(global);
}
)");
  Stmt w = _While(n > 0, _Block({_Assign(n, n - 1)}));
  EXPECT_EQ(Print(w, 2), "  while ((n > 0)) {\n    n = (n - 1);\n  }\n");
  Function helper = Kernel("helper", {{"n", kIdx, false}}, {_Return(n + 1)});
  helper.is_kernel = false;
  helper.return_type = kIdx;
  helper.index_type = DataType::I64;
  Module m{{helper, Kernel("k", {}, {})}};
  EXPECT_EQ(Print(m), "index helper(index n) index(i64) {\n  return (n + 1);\n}\n\n"
                      "kernel void k() index(i32) {\n}\n");
}

// --- Verifier -------------------------------------------------------------------------

TEST(SemVerifyTest, AcceptsWellFormedKernels) {
  EXPECT_NO_THROW(Verify(SeedLikeKernel()));
  Expr a = _Var("a", kIdx);
  // Shadowing in a nested scope is fine; so is reading the outer name before it.
  Function f = Kernel("k", {}, {_Declare(kIdx, "a", _Const(1)),
                                _Block({_Declare(kIdx, "b", a + 1), _Declare(kIdx, "a", _Const(2))}),
                                _Assign(a, a + 1)});
  EXPECT_NO_THROW(Verify(f));
}

TEST(SemVerifyTest, UndeclaredAndWrongType) {
  Expr a = _Var("a", kIdx);
  EXPECT_THAT(VerifyMessage(Kernel("k", {}, {_Declare(kIdx, "b", a)})),
              HasSubstr("'a' is used but not declared"));
  // Declared later, or in a sibling scope that has ended, does not count.
  EXPECT_THAT(VerifyMessage(Kernel("k", {}, {_Assign(a, _Const(1)), _Declare(kIdx, "a")})),
              HasSubstr("'a' is used but not declared"));
  EXPECT_THAT(VerifyMessage(Kernel("k", {}, {_Block({_Declare(kIdx, "a")}), _Assign(a, _Const(1))})),
              HasSubstr("'a' is used but not declared"));
  EXPECT_THAT(VerifyMessage(Kernel("k", {}, {_Declare(kF32, "a"), _Declare(kIdx, "b", a)})),
              HasSubstr("'a' is used as index but declared as float"));
}

TEST(SemVerifyTest, DuplicatesAndShadowingInitializers) {
  Expr a = _Var("a", kIdx);
  EXPECT_THAT(VerifyMessage(Kernel("k", {}, {_Declare(kIdx, "a"), _Declare(kIdx, "a")})),
              HasSubstr("'a' is declared twice in one scope"));
  // Parameters share the body's outermost scope.
  EXPECT_THAT(VerifyMessage(Kernel("k", {{"a", kIdx}}, {_Declare(kIdx, "a")})),
              HasSubstr("declared twice"));
  EXPECT_THAT(VerifyMessage(Kernel("k", {{"a", kIdx}, {"a", kIdx}}, {})),
              HasSubstr("declared twice"));
  // `int a = a + 1;` in C would read the new, uninitialized a.
  EXPECT_THAT(VerifyMessage(Kernel("k", {}, {_Declare(kIdx, "a", _Const(0)),
                                             _Block({_Declare(kIdx, "a", a + 1)})})),
              HasSubstr("the initializer of 'a' mentions the 'a' it shadows"));
  EXPECT_THAT(VerifyMessage(Kernel("k", {{"i", kIdx}}, {_For("i", _Const(0), _Var("i", kIdx), 1,
                                                             _Block({}))})),
              HasSubstr("the bounds of loop 'i' mention"));
}

TEST(SemVerifyTest, AssignmentsAndStores) {
  Expr i = _Var("i", kIdx), n = _Var("n", kIdx);
  EXPECT_THAT(VerifyMessage(Kernel("k", {}, {_For("i", 0, 4, 1, _Block({_Assign(i, i + 1)}))})),
              HasSubstr("assignment to loop variable 'i'"));
  EXPECT_THAT(VerifyMessage(Kernel("k", {{"n", kIdx}},
                                   {_For("i", _Const(0), n, 1, _Block({_Assign(n, n - 1)}))})),
              HasSubstr("assignment to 'n', which a loop bound reads"));
  Expr c = _Var("c", Type::Pointer(kF32, AddressSpace::Global, true));
  Expr k = _Var("k", Type::Pointer(kF32, AddressSpace::Constant));
  EXPECT_THAT(VerifyMessage(Kernel("k", {{"c", c->type}}, {_Store(c, _Const(0), _Float(1))})),
              HasSubstr("store through global const float* 'c'"));
  EXPECT_THAT(VerifyMessage(Kernel("k", {{"k", k->type}}, {_Store(k, _Const(0), _Float(1))})),
              HasSubstr("store through constant float*"));
}

TEST(SemVerifyTest, LocalArraysOnlyAtKernelScope) {
  Type local = Type::Array(kF32, 16, AddressSpace::Local);
  EXPECT_NO_THROW(Verify(Kernel("k", {}, {_Declare(local, "t")})));
  EXPECT_THAT(VerifyMessage(Kernel("k", {}, {_Block({_Declare(local, "t")})})),
              HasSubstr("local array 't' must be declared in a kernel's outermost block"));
  Function helper = Kernel("h", {}, {_Declare(local, "t")});
  helper.is_kernel = false;
  EXPECT_THAT(VerifyMessage(helper), HasSubstr("local array 't'"));
}

TEST(SemVerifyTest, BarriersUnderThreadDependentControl) {
  Expr tid = _Var("tid", kIdx), g = _Var("g", kIdx), t2 = _Var("t2", kIdx);
  Expr lid = _Index(ThreadIndexKind::LocalId, 0), gid = _Index(ThreadIndexKind::GroupId, 0);
  // Group-uniform conditions are fine (the seed's fast/slow split).
  EXPECT_NO_THROW(Verify(Kernel("k", {}, {_Declare(kIdx, "g", gid * 2),
                                          _If(g < 4, _Block({_Barrier()}))})));
  EXPECT_THAT(VerifyMessage(Kernel("k", {}, {_If(lid == 0, _Block({_Barrier()}))})),
              HasSubstr("barrier under control flow that depends on the thread"));
  // Through variables, transitively, and through a loop bound.
  EXPECT_THAT(VerifyMessage(Kernel("k", {}, {_Declare(kIdx, "tid", lid),
                                             _Declare(kIdx, "t2", tid % 8),
                                             _For("j", _Const(0), t2, 1, _Block({_Barrier()}))})),
              HasSubstr("barrier under control flow"));
  // A variable assigned under divergent control becomes thread-dependent,
  // even when the assignment comes after the use in program order (loops).
  EXPECT_THAT(VerifyMessage(Kernel(
                  "k", {}, {_Declare(kIdx, "g", _Const(0)),
                            _For("i", 0, 4, 1,
                                 _Block({_If(g > 0, _Block({_Barrier()})),
                                         _If(lid == 0, _Block({_Assign(g, _Const(1))}))}))})),
              HasSubstr("barrier under control flow"));
  // Thread-dependent data in a private array taints loads from it.
  Expr arr = _Var("a", Type::Array(kIdx, 2));
  EXPECT_THAT(VerifyMessage(Kernel("k", {}, {_Declare(arr->type, "a", _Const(0)),
                                             _Store(arr, _Const(0), lid),
                                             _If(_Load(arr, _Const(0)) > 0, _Block({_Barrier()}))})),
              HasSubstr("barrier under control flow"));
}

TEST(SemVerifyTest, FunctionShape) {
  Function f = Kernel("k", {}, {});
  f.index_type = DataType::I16;
  EXPECT_THAT(VerifyMessage(f), HasSubstr("index type i16"));
  f = Kernel("k", {}, {_Return(_Const(1))});
  EXPECT_THAT(VerifyMessage(f), HasSubstr("return of index from a function returning void"));
  f = Kernel("k", {{"a", Type::Array(kF32, 4)}}, {});
  EXPECT_THAT(VerifyMessage(f), HasSubstr("parameter 'a' of type private float[4]"));
  f = Kernel("k", {}, {_Declare(kIdx, "big", _Const(int64_t{1} << 40))});
  EXPECT_THAT(VerifyMessage(f), HasSubstr("does not fit the i32 index type"));
  f.index_type = DataType::I64;
  EXPECT_NO_THROW(Verify(f));
  f = Kernel("k", {}, {});
  f.work_group_size = std::array<int64_t, 3>{0, 1, 1};
  EXPECT_THAT(VerifyMessage(f), HasSubstr("work-group size"));
  EXPECT_THROW(Verify(Module{{Kernel("k", {}, {}), Kernel("k", {}, {})}}), InternalError);
}

}  // namespace
}  // namespace tilec::sem
