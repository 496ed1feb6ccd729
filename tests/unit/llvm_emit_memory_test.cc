// The LLVM lowering of memory and parallel sem constructs, run on the
// llvm:cpu device (the scalar constructs: llvm_emit_test.cc): vector loads
// and stores, streaming stores, arrays, loops and pointers, thread indices,
// barriers with several work items, returns, the thread pool, i64 indices,
// helper functions, invalid sem, the build cache and the hardware model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/pipeline.h"
#include "compiler/sem/builder.h"
#include "hal/llvm/cpu_info.h"
#include "hal/llvm/emit_llvm.h"
#include "hal/llvm/llvm_device.h"
#include "support/error.h"
#include "tests/unit/llvm_emit_fixture.h"

namespace tilec::hal::cpu {
namespace {

using namespace emit_fixture;  // also sem::builder, DataType, Expr, Stmt, Type

TEST(LlvmEmit, VectorLoadsStoresAndLanes) {
  Expr s = P("s", DataType::F32), o = P("o", DataType::F32), v4 = P("v4", DataType::F32, 4);
  Expr bs = P("bs", DataType::Bool), ob = P("ob", DataType::Bool);
  std::vector<float> src(40);
  for (int k = 0; k < 40; ++k) src[k] = static_cast<float>(k);
  Host hs = Host::Of(src), ho = Host::Of(std::vector<float>(48, -1.0f)), hv = Host::Of(src);
  Host hb = Host::Of<uint8_t>({1, 0, 0, 1, 1}), hob = Host::Zeros<uint8_t>(4);
  Expr bc = _Insert(_Broadcast(_Load(s, I(7)), 4), 2, _Load(s, I(9)));
  std::vector<Stmt> body = {
      _Store(o, I(0), _Load(s, I(1), 4)),    // unaligned 4
      _Store(o, I(4), _Load(s, I(3), 8)),    // 8
      _Store(o, I(12), _Load(s, I(5), 16)),  // 16
      _Store(o, I(28), _Load(s, I(2), 3)),   // 3 lanes: o[31] untouched
      _Store(o, I(32), bc),                  // broadcast + insert
      _Store(o, I(36), _Extract(_Load(s, I(20), 8), 5)),
      _Store(o, I(37), _Load(v4, I(2))),  // vector elements: index counts vectors
      _Store(v4, I(0), _Load(v4, I(9))),
      _Store(ob, I(0), _Not(_Load(bs, I(1), 4))),
  };
  Launch(Kernel({Buf("s", DataType::F32), Buf("o", DataType::F32), Buf("v4", DataType::F32, 4),
                 Buf("bs", DataType::Bool), Buf("ob", DataType::Bool)},
                body),
         {&hs, &ho, &hv, &hb, &hob});
  for (int k = 0; k < 4; ++k) EXPECT_EQ(ho.At<float>(k), 1 + k);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(ho.At<float>(4 + k), 3 + k);
  for (int k = 0; k < 16; ++k) EXPECT_EQ(ho.At<float>(12 + k), 5 + k);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(ho.At<float>(28 + k), 2 + k);
  EXPECT_EQ(ho.At<float>(31), -1);
  std::vector<float> bcw = {7, 7, 9, 7};
  for (int k = 0; k < 4; ++k) EXPECT_EQ(ho.At<float>(32 + k), bcw[k]);
  EXPECT_EQ(ho.At<float>(36), 25);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(ho.At<float>(37 + k), 8 + k);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(hv.At<float>(k), 36 + k);
  std::vector<int> nb = {1, 1, 0, 0};
  for (int k = 0; k < 4; ++k) EXPECT_EQ(hob.At<uint8_t>(k), nb[k]);
}

TEST(LlvmEmit, StreamingStoresAreNonTemporalAndAligned) {
  Expr s = P("s", DataType::F32), o = P("o", DataType::F32);
  std::vector<float> src(64);
  for (int k = 0; k < 64; ++k) src[k] = static_cast<float>(k) * 0.5f;
  Host hs = Host::Of(src), ho = Host::Zeros<float>(64);
  // Work item g stores 16 floats at 16*g: aligned to the vector's size.
  Expr at = _Index(sem::ThreadIndexKind::GroupId, 0) * 16;
  sem::Function f = Kernel({Buf("s", DataType::F32), Buf("o", DataType::F32)},
                           {_Store(o, at, _Load(s, at, 16) + 1.0, true)});
  Launch(f, {&hs, &ho}, {4, 1, 1});
  for (int k = 0; k < 64; ++k) EXPECT_EQ(ho.At<float>(k), src[k] + 1) << k;
  sem::Module m;
  m.functions.push_back(f);
  std::string ir = Device().EmitCode(m);
  EXPECT_NE(ir.find("!nontemporal"), std::string::npos) << ir;
  EXPECT_NE(ir.find("align 64, !nontemporal"), std::string::npos) << ir;
}

TEST(LlvmEmit, ArraysLoopsAndPointers) {
  Expr a = P("a", DataType::F32), o = P("o", DataType::F32), oi = P("oi", DataType::I32);
  Type arr = Type::Array(Type::Scalar(DataType::F32), 5);
  Type flags = Type::Array(Type::Bool(), 3);
  Type vecs = Type::Array(Type::Scalar(DataType::F32, 4), 2);
  Type shared = Type::Array(Type::Scalar(DataType::I32), 8, AddressSpace::Local);
  Expr acc = _Var("acc", arr), fl = _Var("fl", flags), vv = _Var("vv", vecs),
       sh = _Var("sh", shared);
  Expr i = _Var("i", Type::Index()), n = _Var("n", Type::Scalar(DataType::I32));
  Expr q = _Var("q", Ptr(DataType::F32));
  std::vector<Stmt> body = {
      _Declare(shared, "sh"),
      _Declare(arr, "acc", _Float(1.5)),
      _Declare(flags, "fl", _Bool(true)),
      _Declare(vecs, "vv", _Broadcast(_Float(2), 4)),
      _For("i", 0, 5, 2, _Store(acc, i, _Load(acc, i) + _Load(a, i))),  // acc = 2.5 1.5 4.5 1.5 6.5
      _Store(fl, I(1), _Bool(false)),
      _Store(vv, I(1), _Load(vv, I(0)) * _Load(a, I(0), 4)),
      _Declare(Type::Scalar(DataType::I32), "n", _Const(10, DataType::I32)),
      _Declare(Type::Scalar(DataType::I32), "steps", _Const(0, DataType::I32)),
      _While(
          n > _Const(0, DataType::I32),
          _Block({_Assign(n, n - _Const(3, DataType::I32)),
                  _Assign(_Var("steps", Type::Scalar(DataType::I32)),
                          _Var("steps", Type::Scalar(DataType::I32)) + _Const(1, DataType::I32))})),
      _For("i", 0, 8, 1,
           _Store(sh, i, _Cast(Type::Scalar(DataType::I32), i) * _Const(3, DataType::I32))),
      _Declare(Ptr(DataType::F32), "q", a + I(2)),
      _Store(o, I(5), _Load(q, I(1))),  // a[3]
      _Assign(q, q - I(1)),
      _Store(o, I(6), _Load(q, I(0))),  // a[1]
      _Store(o + I(7), I(0), _Float(42)),
      _If(_Load(fl, I(1)), _Store(oi, I(0), _Const(1, DataType::I32)),
          _Store(oi, I(0), _Const(2, DataType::I32))),
      _If(_Load(fl, I(2)), _Store(oi, I(1), _Const(3, DataType::I32))),
      _If(_Const(0, DataType::I32), _Store(oi, I(1), _Const(4, DataType::I32))),
      _Store(oi, I(2), n),
      _Store(oi, I(3), _Var("steps", Type::Scalar(DataType::I32))),
      _Store(oi, I(4), _Load(sh, I(7))),
      _Store(o, I(8), _Load(vv, I(1))),
  };
  for (int k = 0; k < 5; ++k) body.push_back(_Store(o, I(k), _Load(acc, I(k))));
  Host ha = Host::Of<float>({1, 2, 3, 4, 5}), ho = Host::Zeros<float>(12),
       hoi = Host::Zeros<int32_t>(5);
  Launch(Kernel({Buf("a", DataType::F32), Buf("o", DataType::F32), Buf("oi", DataType::I32)}, body),
         {&ha, &ho, &hoi});
  std::vector<float> want = {2.5, 1.5, 4.5, 1.5, 6.5, 4, 2, 42, 2, 4, 6, 8};
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(ho.At<float>(k), want[k]) << k;
  std::vector<int32_t> wi = {2, 3, -2, 4, 21};
  for (size_t k = 0; k < wi.size(); ++k) EXPECT_EQ(hoi.At<int32_t>(k), wi[k]) << k;
}

TEST(LlvmEmit, ThreadIndicesOverGroupsAndItems) {
  // Global 8 x 3 x 2 in groups of 4 x 1 x 2: 2 x 3 x 1 groups.
  Expr o = P("o", DataType::I32);
  using K = sem::ThreadIndexKind;
  Expr lin = _Index(K::GlobalId, 0) + (_Index(K::GlobalId, 1) + _Index(K::GlobalId, 2) * 3) * 8;
  std::vector<Stmt> body = {_Declare(Type::Index(), "lin", lin)};
  int slot = 0;
  for (K kind : {K::LocalId, K::GroupId, K::GlobalId, K::LocalSize, K::NumGroups})
    for (int d = 0; d < 3; ++d)
      body.push_back(_Store(o, _Var("lin", Type::Index()) * 15 + slot++,
                            _Cast(Type::Scalar(DataType::I32), _Index(kind, d))));
  Host ho = Host::Zeros<int32_t>(48 * 15);
  Launch(Kernel({Buf("o", DataType::I32)}, body, {4, 1, 2}), {&ho}, {8, 3, 2}, {4, 1, 2});
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 8; ++x) {
        int base = (x + (y + z * 3) * 8) * 15;
        std::vector<int> want = {x % 4, 0, z % 2, x / 4, y, z / 2, x, y, z, 4, 1, 2, 2, 3, 1};
        for (int k = 0; k < 15; ++k)
          EXPECT_EQ(ho.At<int32_t>(base + k), want[k]) << x << "," << y << "," << z << " #" << k;
      }
}

// --- Barriers with several work items per group (the GPU form) ---------------------

Type Shared() { return Type::Array(Type::Scalar(DataType::I32), 16, AddressSpace::Local); }
Expr Sh() { return _Var("sh", Shared()); }
Expr Tid() { return _Var("tid", Type::Index()); }
Expr I32(const Expr& e) { return _Cast(Type::Scalar(DataType::I32), e); }

TEST(LlvmEmit, BarriersExchangeThroughLocalMemory) {
  Expr o = P("o", DataType::I32);
  Expr g = _Index(sem::ThreadIndexKind::GroupId, 0);
  Expr mine = _Var("mine", Type::Scalar(DataType::I32));
  Expr next = _Var("next", Type::Scalar(DataType::I32));
  std::vector<Stmt> body = {
      _Declare(Shared(), "sh"),
      _Declare(Type::Index(), "tid", _Index(sem::ThreadIndexKind::LocalId, 0)),
      _Declare(Type::Scalar(DataType::I32), "mine", I32(Tid() * 10 + g)),
      _Store(Sh(), Tid(), mine),
      _Barrier(),
      _Declare(Type::Scalar(DataType::I32), "next", _Load(Sh(), (Tid() + 1) % 16)),
      _Barrier(),
      _Store(Sh(), Tid(), next + mine),
      _Barrier(sem::MemFence::LocalAndGlobal),
      _Store(o, _Index(sem::ThreadIndexKind::GlobalId, 0), _Load(Sh(), 15 - Tid())),
  };
  Host ho = Host::Zeros<int32_t>(48);
  Launch(Kernel({Buf("o", DataType::I32)}, body, {16, 1, 1}), {&ho}, {48, 1, 1}, {16, 1, 1});
  for (int grp = 0; grp < 3; ++grp)
    for (int t = 0; t < 16; ++t) {
      int s = 15 - t;
      EXPECT_EQ(ho.At<int32_t>(grp * 16 + t), ((s + 1) % 16) * 10 + grp + s * 10 + grp)
          << grp << "/" << t;
    }
}

TEST(LlvmEmit, BarriersInsideUniformLoopsWithPrivateState) {
  Expr o = P("o", DataType::I32);
  Expr r = _Var("r", Type::Index());
  Expr acc = _Var("acc", Type::Scalar(DataType::I32));
  Expr k = _Var("kk", Type::Scalar(DataType::I32));
  Type priv = Type::Array(Type::Scalar(DataType::I32), 2);
  Expr mem = _Var("mem", priv);
  std::vector<Stmt> body = {
      _Declare(Shared(), "sh"),
      _Declare(Type::Index(), "tid", _Index(sem::ThreadIndexKind::LocalId, 0)),
      _Declare(Type::Scalar(DataType::I32), "acc", _Const(0, DataType::I32)),
      _Declare(priv, "mem", _Const(0, DataType::I32)),
      _For("r", 0, 4, 1,
           _Block({_Store(Sh(), Tid(), I32(Tid() + r)), _Barrier(),
                   _Assign(acc, acc + _Load(Sh(), (Tid() + r) % 16)), _Barrier()})),
      _Declare(Type::Scalar(DataType::I32), "kk", _Const(0, DataType::I32)),
      _While(k < _Const(3, DataType::I32),
             _Block({_Store(Sh(), Tid(), k + I32(Tid())), _Barrier(),
                     _Store(mem, I(1), _Load(mem, I(1)) + _Load(Sh(), 15 - Tid())),
                     _Assign(k, k + _Const(1, DataType::I32)), _Barrier()})),
      _Store(o, _Index(sem::ThreadIndexKind::GlobalId, 0), acc * 1000 + _Load(mem, I(1))),
  };
  Host ho = Host::Zeros<int32_t>(32);
  Launch(Kernel({Buf("o", DataType::I32)}, body, {16, 1, 1}), {&ho}, {32, 1, 1}, {16, 1, 1});
  for (int t = 0; t < 32; ++t) {
    int l = t % 16, a = 0, m = 0;
    for (int rr = 0; rr < 4; ++rr) a += (l + rr) % 16 + rr;
    for (int kk = 0; kk < 3; ++kk) m += kk + (15 - l);
    EXPECT_EQ(ho.At<int32_t>(t), a * 1000 + m) << t;
  }
}

TEST(LlvmEmit, ReturnEndsOnlyItsWorkItem) {
  Expr o = P("o", DataType::I32);
  Expr gid = _Index(sem::ThreadIndexKind::GlobalId, 0);
  std::vector<Stmt> body = {
      _Declare(Shared(), "sh"),
      _Declare(Type::Index(), "tid", _Index(sem::ThreadIndexKind::LocalId, 0)),
      _If(_Eq(Tid(), I(5)), _Block({_Store(o, gid, _Const(-1, DataType::I32)), _Return()})),
      _Store(Sh(), Tid(), I32(Tid())),
      _Barrier(),
      _Store(o, gid, _Load(Sh(), Tid()) * 2),
  };
  Host ho = Host::Zeros<int32_t>(32);
  Launch(Kernel({Buf("o", DataType::I32)}, body, {16, 1, 1}), {&ho}, {32, 1, 1}, {16, 1, 1});
  for (int t = 0; t < 32; ++t) EXPECT_EQ(ho.At<int32_t>(t), t % 16 == 5 ? -1 : (t % 16) * 2) << t;

  // Without barriers a Return skips the rest of its work item only.
  std::vector<Stmt> plain = {
      _If(_Eq(gid % 3, I(0)), _Return()),
      _Store(o, gid, _Const(7, DataType::I32)),
  };
  Host hp = Host::Zeros<int32_t>(32);
  Launch(Kernel({Buf("o", DataType::I32)}, plain, {8, 1, 1}), {&hp}, {32, 1, 1}, {8, 1, 1});
  for (int t = 0; t < 32; ++t) EXPECT_EQ(hp.At<int32_t>(t), t % 3 == 0 ? 0 : 7) << t;
}

TEST(LlvmEmit, ManyGroupsOverTheThreadPool) {
  Expr o = P("o", DataType::I32);
  Expr g = _Index(sem::ThreadIndexKind::GroupId, 0);
  std::vector<Stmt> body = {_Store(o, _Index(sem::ThreadIndexKind::GlobalId, 0),
                                   I32(g * 3 + _Index(sem::ThreadIndexKind::LocalId, 0)))};
  for (int64_t groups : {1, 2, 3, 1001}) {
    Host ho = Host::Of(std::vector<int32_t>(static_cast<size_t>(groups * 7), -5));
    Launch(Kernel({Buf("o", DataType::I32)}, body, {7, 1, 1}), {&ho}, {groups * 7, 1, 1},
           {7, 1, 1});
    for (int64_t t = 0; t < groups * 7; ++t)
      ASSERT_EQ(ho.At<int32_t>(t), (t / 7) * 3 + t % 7) << groups << " groups, item " << t;
  }
}

TEST(LlvmEmit, I64IndexType) {
  Expr o = P("o", DataType::I32);
  Expr big = _Var("big", Type::Index());
  std::vector<Stmt> body = {_Declare(Type::Index(), "big", I(3000000000LL)),
                            _Store(o, I(0), I32(big / 1000)),
                            _Store(o, I(1), I32(big % 7 + (big >> I(20))))};
  Host ho = Host::Zeros<int32_t>(2);
  Launch(Kernel({Buf("o", DataType::I32)}, body, {1, 1, 1}, DataType::I64), {&ho});
  EXPECT_EQ(ho.At<int32_t>(0), 3000000);
  EXPECT_EQ(ho.At<int32_t>(1), static_cast<int32_t>(3000000000LL % 7 + (3000000000LL >> 20)));
}

TEST(LlvmEmit, HelperFunctionsAndIRText) {
  sem::Module m;
  sem::Function helper;
  helper.name = "twice";
  helper.is_kernel = false;
  helper.params = {{"x", Type::Scalar(DataType::F32), false}};
  helper.return_type = Type::Scalar(DataType::F32);
  helper.body = _Block({_Return(_Var("x", Type::Scalar(DataType::F32)) * 2.0)});
  m.functions.push_back(helper);
  m.functions.push_back(
      Kernel({Buf("o", DataType::F32)}, {_Store(P("o", DataType::F32), I(0), _Float(1))}));
  std::string ir = Device().EmitCode(m);
  EXPECT_NE(ir.find("define internal float @twice(float"), std::string::npos) << ir;
  EXPECT_NE(ir.find("define void @k_groups(ptr"), std::string::npos) << ir;
  EXPECT_NE(ir.find("noalias"), std::string::npos) << ir;
  std::string opt = Device().EmitOptimizedIR(m);
  EXPECT_NE(opt.find("@k_groups"), std::string::npos) << opt;
}

TEST(LlvmEmit, InvalidSemIsAnInternalError) {
  sem::Module m;
  m.functions.push_back(Kernel({}, {_Store(P("nowhere", DataType::F32), I(0), _Float(1))}));
  EXPECT_THROW(EmitLLVMText(m), InternalError);
}

TEST(LlvmEmit, BuildsAreCachedByIR) {
  sem::Function f =
      Kernel({Buf("o", DataType::F32)}, {_Store(P("o", DataType::F32), I(0), _Float(123.5))});
  Host h = Host::Zeros<float>(1);
  Launch(f, {&h});
  size_t before = Device().cached_module_count();
  Launch(f, {&h});
  EXPECT_EQ(Device().cached_module_count(), before);
  EXPECT_EQ(h.At<float>(0), 123.5f);
}

TEST(LlvmEmit, HardwareModel) {
  compiler::HardwareModel hw = Device().hardware_model();
  EXPECT_NO_THROW(hw.Validate());
  EXPECT_EQ(hw.threads, 1);
  EXPECT_FALSE(hw.local_memory_managed);
  EXPECT_EQ(hw.compute_units, HostCpu().threads);
  EXPECT_EQ(hw.goal_groups, 4 * hw.compute_units);
  EXPECT_EQ(hw.max_mem, hw.l1_bytes);
  EXPECT_EQ(hw.vec_size, HostCpu().avx512f ? 16 : HostCpu().avx2 ? 8 : 4);
  CpuInfo plain;
  compiler::HardwareModel small = CpuHardwareModel(plain);
  EXPECT_NO_THROW(small.Validate());
  EXPECT_EQ(small.vec_size, 4);
  EXPECT_EQ(small.vector_registers, 16);
  EXPECT_EQ(small.l1_bytes, 32 * 1024);
  EXPECT_EQ(small.l2_bytes, 1024 * 1024);
  EXPECT_EQ(small.max_regs, 16 * 4 * 4);
  plain.avx2 = plain.fma = true;
  EXPECT_EQ(CpuHardwareModel(plain).vec_size, 8);
  plain.avx512f = true;
  EXPECT_EQ(CpuHardwareModel(plain).vector_registers, 32);
}

}  // namespace
}  // namespace tilec::hal::cpu
