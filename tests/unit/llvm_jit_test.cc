// The llvm:cpu backend's JIT and thread pool on their own: process symbols
// (libgcc's half conversions, libm) resolve, unresolved ones are a
// DeviceError, and the pool runs every chunk exactly once per launch.
#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>
#include <stdexcept>

#include "hal/hal.h"
#include "hal/llvm/jit.h"
#include "hal/llvm/thread_pool.h"
#include "support/error.h"
#include "tile_lang/tensor.h"

namespace tilec::hal::cpu {
namespace {

// A module with `float NAME(float x)` calling `callee` (declared here) as
// `callee_ret callee(callee_arg)` on x, converted around the call.
std::unique_ptr<llvm::Module> CallModule(llvm::LLVMContext& ctx, const std::string& name,
                                         const std::vector<std::pair<std::string, bool>>& calls) {
  auto m = std::make_unique<llvm::Module>("test", ctx);
  llvm::IRBuilder<> b(ctx);
  auto* fn =
      llvm::Function::Create(llvm::FunctionType::get(b.getFloatTy(), {b.getFloatTy()}, false),
                             llvm::Function::ExternalLinkage, name, *m);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value* v = fn->getArg(0);
  for (const auto& [callee, to_half] : calls) {
    // to_half: half callee(float); else float callee(half) — or float(float) for libm.
    llvm::Type* arg = v->getType();
    llvm::Type* ret = to_half ? b.getHalfTy() : b.getFloatTy();
    llvm::FunctionCallee f =
        m->getOrInsertFunction(callee, llvm::FunctionType::get(ret, {arg}, false));
    v = b.CreateCall(f, {v});
  }
  b.CreateRet(v);
  return m;
}

Jit& TheJit() {
  static Jit jit(HostCpu());
  return jit;
}

TEST(LlvmJit, HalfConversionsAndLibmResolveFromTheProcess) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = CallModule(*ctx, "roundtrip",
                      {{"__truncsfhf2", true}, {"__extendhfsf2", false}, {"tanhf", false}});
  std::vector<void*> fns = TheJit().Compile(std::move(ctx), std::move(m), {"roundtrip"});
  auto roundtrip = reinterpret_cast<float (*)(float)>(fns.at(0));
  float third = 1.0f / 3;
  EXPECT_EQ(roundtrip(third), std::tanh(lang::HalfToFloat(lang::FloatToHalf(third))));
  EXPECT_FALSE(TheJit().cpu_name().empty());
  EXPECT_NE(TheJit().target_triple().find("x86_64"), std::string::npos);
}

TEST(LlvmJit, UnresolvedSymbolIsADeviceError) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = CallModule(*ctx, "broken", {{"tilec_no_such_function_anywhere", false}});
  try {
    TheJit().Compile(std::move(ctx), std::move(m), {"broken"});
    FAIL() << "expected a DeviceError";
  } catch (const DeviceError& e) {
    std::string all = std::string(e.what()) + e.build_log();
    EXPECT_NE(all.find("tilec_no_such_function_anywhere"), std::string::npos) << all;
  }
}

TEST(LlvmJit, SameNamesInTwoModules) {
  for (float scale : {2.0f, 3.0f}) {
    auto ctx = std::make_unique<llvm::LLVMContext>();
    auto m = std::make_unique<llvm::Module>("same", *ctx);
    llvm::IRBuilder<> b(*ctx);
    auto* fn =
        llvm::Function::Create(llvm::FunctionType::get(b.getFloatTy(), {b.getFloatTy()}, false),
                               llvm::Function::ExternalLinkage, "scale", *m);
    b.SetInsertPoint(llvm::BasicBlock::Create(*ctx, "entry", fn));
    b.CreateRet(b.CreateFMul(fn->getArg(0), llvm::ConstantFP::get(b.getFloatTy(), scale)));
    auto f = reinterpret_cast<float (*)(float)>(
        TheJit().Compile(std::move(ctx), std::move(m), {"scale"}).at(0));
    EXPECT_EQ(f(1.5f), 1.5f * scale);
  }
}

TEST(LlvmDevice, BuffersAroundTheHugePageSizeStartZeroAndRoundTrip) {
  // Buffers from 2 MB up are aligned to 2 MB, padded to a multiple of it
  // and advised to use huge pages; the ones below keep 64-byte alignment.
  auto device = hal::OpenDevice("llvm");
  constexpr size_t kMb2 = size_t{2} << 20;
  for (size_t bytes : {kMb2 - 4, kMb2, kMb2 + 4, 5 * kMb2 + 12}) {
    auto buffer = device->Allocate(bytes);
    ASSERT_EQ(buffer->size(), bytes);
    std::vector<uint8_t> back(bytes, 0xff);
    device->Read(*buffer, back.data(), bytes);
    EXPECT_EQ(std::count(back.begin(), back.end(), 0), static_cast<std::ptrdiff_t>(bytes)) << bytes;
    std::vector<uint8_t> pattern(bytes);
    for (size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<uint8_t>(i * 31 + 7);
    device->Write(*buffer, pattern.data(), bytes);
    device->Read(*buffer, back.data(), bytes);
    EXPECT_EQ(back, pattern) << bytes;
  }
}

TEST(LlvmThreadPool, EveryChunkOncePerLaunch) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.size(), 4);
  std::vector<std::atomic<int>> hits(4);
  for (int launch = 0; launch < 500; ++launch) {
    int chunks = 1 + launch % 4;
    pool.Run(chunks, [&](int c) { hits[c].fetch_add(1); });
  }
  // Chunk c runs in every launch with more than c chunks.
  for (int c = 0; c < 4; ++c) EXPECT_EQ(hits[c].load(), 125 * (4 - c)) << c;
  pool.Run(0, [](int) { FAIL() << "no chunk to run"; });
}

// Share: every piece of shared work runs once, whichever threads join.
TEST(LlvmThreadPool, ShareRunsEveryPieceOnce) {
  ThreadPool pool(3);
  for (int launch = 0; launch < 300; ++launch) {
    const int pieces = launch % 50;
    std::vector<std::atomic<int>> hits(pieces);
    std::atomic<int> next{0};
    pool.Share(1 + launch % 3, [&](int) {
      for (int p = next++; p < pieces; p = next++) hits[p].fetch_add(1);
    });
    for (int p = 0; p < pieces; ++p) ASSERT_EQ(hits[p].load(), 1) << launch << " " << p;
  }
}

// Share with work the caller takes at once: workers that wake after it may
// or may not call fn (timing), but the one piece runs exactly once per
// launch, the launch returns, and a later Run still runs every chunk.
TEST(LlvmThreadPool, ShareSkipsLateWorkers) {
  ThreadPool pool(2);
  std::atomic<int> calls{0}, pieces{0};
  for (int launch = 0; launch < 200; ++launch) {
    std::atomic<bool> taken{false};
    pool.Share(2, [&](int) {
      ++calls;
      if (!taken.exchange(true)) ++pieces;
    });
  }
  EXPECT_EQ(pieces.load(), 200);
  EXPECT_GE(calls.load(), 200);
  EXPECT_LE(calls.load(), 400);
  std::atomic<int> after{0};
  pool.Run(2, [&](int) { ++after; });  // the pool still runs every chunk of a Run
  EXPECT_EQ(after.load(), 2);
}

TEST(LlvmThreadPool, ExceptionsReachTheCaller) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.Run(3,
                        [](int c) {
                          if (c == 2) throw std::runtime_error("chunk 2");
                        }),
               std::runtime_error);
  std::atomic<int> count{0};
  pool.Run(3, [&](int) { ++count; });  // still usable
  EXPECT_EQ(count.load(), 3);
  EXPECT_THROW(pool.Run(4, [](int) {}), InternalError);
}

}  // namespace
}  // namespace tilec::hal::cpu
