// The seeds' activation layouts (kLayouts: blocked and plain) in every kernel
// kind — contraction + post-ops, elementwise, fill, reductions, pooling,
// special ops — on both backends, with channel counts that leave a padded
// tail block (C = 5, 17, 20). Each case is compared with the reference
// evaluator after the padding of every blocked input buffer was poisoned
// (the padding contract: kernels never use padded values), and the padding
// of every blocked output and temporary buffer is checked to be exactly zero
// on the raw device buffer (oneDNN's pitfall: relu(x) + 1 must not leave ones
// there).
#include <map>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "tests/unit/pipeline_check.h"

namespace tilec {
namespace {

using testing::Case;
using testing::F32;

// The seeds' 4-D activation formats over logical NCHW: oneDNN's, clDNN's and
// MegEngine's channel blocks (NCHW4 = nChw4c's order; CHWN4 puts n inside
// the blocks' rows; fs_b_yx_fsv32 puts the channel blocks outside n), the
// plain permutations (no padding), and blocks of both n and c (n padded to
// 16 too).
const char* const kLayouts[] = {"nChw4c",        "nChw8c",        "nChw16c", "b_fs_yx_fsv16", "NCHW4",
                                "NCHW32",        "NCHW64",        "CHWN4",   "b_fs_yx_fsv4",  "b_fs_yx_fsv32",
                                "fs_b_yx_fsv32", "aBcd8b",        "nhwc",    "chwn",          "byxf",
                                "yxfb",          "bs_fs_yx_bsv16_fsv16", "ABcd16b16a"};

// The channel block of a layout of kLayouts (1: not blocked).
int ChannelBlock(const std::string& layout) {
  static const std::map<std::string, int> kBlocks = {
      {"nChw4c", 4},         {"nChw8c", 8},         {"nChw16c", 16},       {"b_fs_yx_fsv16", 16},
      {"NCHW4", 4},          {"NCHW32", 32},        {"NCHW64", 64},        {"CHWN4", 4},
      {"b_fs_yx_fsv4", 4},   {"b_fs_yx_fsv32", 32}, {"fs_b_yx_fsv32", 32}, {"aBcd8b", 8},
      {"bs_fs_yx_bsv16_fsv16", 16}, {"ABcd16b16a", 16}};
  auto it = kBlocks.find(layout);
  return it == kBlocks.end() ? 1 : it->second;
}
const char* const kBackends[] = {"llvm", "opencl"};

// Calls f(element offset, inside) for every element of `t`'s buffer;
// `inside` is false for a blocked tail's padding. Dense layouts only.
template <typename F>
void ForEachBufferElement(const lang::TensorDecl& t, F&& f) {
  for (int64_t e = 0; e < t.layout.elements; ++e) {
    std::vector<int64_t> c(t.shape.dims.size(), 0);
    for (const lang::PhysicalDim& p : t.layout.phys) c[p.dim] += (e / p.stride) % p.size * p.divisor;
    bool inside = true;
    for (size_t d = 0; d < c.size(); ++d) inside = inside && c[d] < t.shape.dims[d];
    f(e, inside);
  }
}

bool HasPadding(const lang::TensorDecl& t) { return t.layout.elements > t.shape.ElementCount(); }

// Writes NaN (floats) or a large value into the padding of every padded
// input buffer of `program`, after Upload.
void PoisonInputPadding(runtime::Program& program) {
  for (const std::string& name : program.bound().inputs) {
    const lang::TensorDecl& t = program.bound().Tensor(name);
    if (!HasPadding(t)) continue;
    std::vector<std::byte> bytes = program.ReadBuffer(name);
    size_t esize = lang::ByteSize(t.shape.dtype);
    ForEachBufferElement(t, [&](int64_t e, bool inside) {
      if (inside) return;
      if (t.shape.dtype == lang::DataType::F32) {
        float nan = std::numeric_limits<float>::quiet_NaN();
        std::memcpy(bytes.data() + e * esize, &nan, esize);
      } else {
        std::memset(bytes.data() + e * esize, 0x5a, esize);
      }
    });
    program.WriteBuffer(name, bytes);
  }
}

// Every padded output and temporary buffer holds zeros in its padding.
// Returns how many padded buffers were checked.
int ExpectZeroPadding(const runtime::Program& program, const std::string& what) {
  std::vector<std::string> names = program.bound().outputs;
  for (const std::string& t : program.compiled().temporaries) names.push_back(t);
  int checked = 0;
  for (const std::string& name : names) {
    const lang::TensorDecl& t = program.bound().Tensor(name);
    if (!HasPadding(t)) continue;
    ++checked;
    std::vector<std::byte> bytes = program.ReadBuffer(name);
    size_t esize = lang::ByteSize(t.shape.dtype);
    int bad = 0;
    ForEachBufferElement(t, [&](int64_t e, bool inside) {
      if (inside || bad >= 3) return;
      for (size_t b = 0; b < esize; ++b)
        if (bytes[e * esize + b] != std::byte{0}) {
          ++bad;
          ADD_FAILURE() << what << ": padding element " << e << " of " << name << " ("
                        << ToString(t.layout) << ") is not zero";
          break;
        }
    });
  }
  return checked;
}

// Compiles `c`, runs it twice on random inputs whose padding is poisoned
// (the second run reuses buffers the first one wrote), compares with the
// evaluator and checks the padding of every blocked output and temporary.
std::unique_ptr<runtime::Program> CheckBlocked(const std::string& backend, const Case& c,
                                               const std::string& what, int want_padded = 1) {
  auto device = testing::DeviceFor(backend);
  if (!device) return nullptr;
  lang::Program bound = testing::BindCase(c);
  auto program = std::make_unique<runtime::Program>(runtime::Program::Compile(bound, device));
  std::map<std::string, lang::Tensor> inputs = testing::RandomInputs(bound, 7);
  auto expected = lang::Evaluate(bound, inputs);
  for (int run = 0; run < 2; ++run) {
    program->Upload(inputs);
    PoisonInputPadding(*program);
    program->Execute();
    if (!testing::OutputsMatch(expected, program->Download(), what)) {
      ADD_FAILURE() << "kernel code:\n" << program->TargetCode();
      return program;
    }
    EXPECT_GE(ExpectZeroPadding(*program, what), want_padded) << what;
  }
  return program;
}

std::map<std::string, std::string> Layouts(std::initializer_list<std::string> names,
                                           const std::string& layout) {
  std::map<std::string, std::string> m;
  for (const std::string& n : names) m[n] = layout;
  return m;
}

class Blocked : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {
 protected:
  std::string backend() const { return std::get<0>(GetParam()); }
  std::string layout() const { return std::get<1>(GetParam()); }
  void SetUp() override {
    if (!testing::DeviceFor(backend())) GTEST_SKIP() << "no " << backend() << " device";
  }
  std::string What(const std::string& name) const {
    return fmt::format("{} on {} in {}", name, backend(), layout());
  }
  // `padded` buffers to check when `channels` leave the layout's last
  // channel block partly padding, else none.
  int Want(int padded, int64_t channels) const { return channels % ChannelBlock(layout()) != 0 ? padded : 0; }
};

// A 3x3 "same" convolution, 5 -> 17 channels, with a fused ReLU.
TEST_P(Blocked, ConvRelu) {
  Case c{R"(function (D[N, C, H, W], K[CO, C, I, J]) -> (R) {
  O[n, co, x, y : N, CO, H, W] = +(D[n, c, x + i - 1, y + j - 1] * K[co, c, i, j]);
  R = (O > 0 ? O : 0);
})",
         {{"D", F32({2, 5, 5, 6})}, {"K", F32({17, 5, 3, 3})}},
         Layouts({"D", "R"}, layout())};
  CheckBlocked(backend(), c, What("conv+relu"), Want(1, 17));
}

// Elementwise statements of their own, f(0) != 0: relu(x) + 1 (seed 004's
// pitfall), exp, cos, index(); operands in the blocked layout, plain, and
// broadcast; the fused contraction result gets `+ 1` too.
TEST_P(Blocked, ElementwiseNonzeroAtZero) {
  Case c{R"(function (A[N, C, H, W], P[N, C, H, W], B[W]) -> (R, E, X, S) {
  R = (A > 0 ? A : 0) + 1;
  E = exp(A) * B + cos(P);
  X = index(A, 1) + 2;
  T[n, c, h, w : N, C, H, W] = +(A[n, c, h, w] * P[n, c, h, w]);
  S = T + 1;
})",
         {{"A", F32({2, 17, 3, 4})}, {"P", F32({2, 17, 3, 4})}, {"B", F32({4})}},
         Layouts({"A", "R", "E", "X", "S"}, layout())};
  CheckBlocked(backend(), c, What("elementwise"), Want(4, 17));
}

// Whole blocks (C = 16: no padding in any of the layouts), where the vector
// form may take the elementwise kernel; plain and blocked operands mixed.
TEST_P(Blocked, ElementwiseWholeBlocks) {
  Case c{R"(function (A[N, C, H, W], P[N, C, H, W]) -> (R) {
  R = exp(A) * P + 1;
})",
         {{"A", F32({1, 16, 3, 5})}, {"P", F32({1, 16, 3, 5})}},
         Layouts({"A", "R"}, layout())};
  CheckBlocked(backend(), c, What("whole blocks"), 0);
  c.layouts["P"] = layout();
  CheckBlocked(backend(), c, What("whole blocks, all blocked"), 0);
}

// Reductions over the blocked dimension (into plain and blocked outputs) and
// over the others (into blocked outputs): sum, product, max, min.
TEST_P(Blocked, Reductions) {
  Case c{R"(function (A[N, C, H, W]) -> (S, MX, P, MN, SS) {
  S[n, h, w : N, H, W] = +(A[n, c, h, w]);
  SS[n, c, 0, w : N, C, 1, W] = +(A[n, c, h, w]);
  MX[n, 0, h, w : N, 1, H, W] = >(A[n, c, h, w]);
  P[n, c, 0, 0 : N, C, 1, 1] = *(A[n, c, h, w]);
  MN[n, c, 0, w : N, C, 1, W] = <(A[n, c, h, w]);
})",
         {{"A", F32({2, 20, 3, 3})}},
         Layouts({"A", "P", "MN", "SS"}, layout())};
  // Blocks of 4 divide 20: no padding there.
  CheckBlocked(backend(), c, What("reductions"), Want(3, 20));
}

// 2x2 max pooling with stride 2 over odd sizes, then `+ 1`.
TEST_P(Blocked, MaxPooling) {
  Case c{R"(function (A[N, C, H, W]) -> (M) {
  Q[n, c, x, y : N, C, (H + 1) / 2, (W + 1) / 2] = >(A[n, c, 2 * x + i, 2 * y + j]), i < 2, j < 2;
  M = Q + 1;
})",
         {{"A", F32({1, 5, 5, 7})}},
         Layouts({"A", "M"}, layout())};
  CheckBlocked(backend(), c, What("max pooling"), Want(1, 5));
}

// Contractions that do not reach every output element (a Fill first): a
// constraint, a strided output index, a `default` tensor (plain and blocked).
TEST_P(Blocked, FillNeedingContractions) {
  Case c{R"(function (A[N, C, H, W], P[N, C, H, W], Q[N, C, H, W]) -> (O, T, D, E) {
  O[n, c, h, w : N, C, H, W] = =(A[n, c, h, w]), h < 1;
  T[n, c, 2 * h + 1, w : N, C, 2 * H, W] = =(A[n, c, h, w]);
  D[n, c, h, w : N, C, H, W] = =(A[n, c, h, w]), w < 2 default P;
  E[n, c, h, w : N, C, H, W] = =(A[n, c, h, w]), h < 1 default Q;
})",
         {{"A", F32({2, 5, 3, 4})}, {"P", F32({2, 5, 3, 4})}, {"Q", F32({2, 5, 3, 4})}},
         Layouts({"A", "O", "T", "D", "E", "Q"}, layout())};
  CheckBlocked(backend(), c, What("fill"), Want(4, 5));
}

// Special ops writing and reading blocked tensors: gather, scatter,
// reshape, prng, and a fractional index (a Direct kernel).
TEST_P(Blocked, SpecialOps) {
  Case c{R"(function (D[N, C, H, W], I[K], E[K, C, H, W], V[M], Z[Y, X]) -> (G, S, R, U, P, NZ) {
  G = gather(D, I);
  S = scatter(E, I, V);
  R = reshape(D, N, H, C, W);
  U[n, c, h, w : N, C, 2 * H, W] = =(D[n, c, h / 2, w]);
  T = prng_step(Z, 2, 5, 3, 2);
  P = prng_value(T);
  NZ = prng_state(T);
})",
         {{"D", F32({3, 17, 2, 3})},
          {"I", {lang::DataType::I32, {4}}},
          {"E", F32({4, 17, 2, 3})},
          {"V", F32({2})},
          {"Z", {lang::DataType::U32, {3, 2048}}}},
         Layouts({"D", "G", "S", "R", "U", "E", "P"}, layout())};
  CheckBlocked(backend(), c, What("special ops"), Want(5, 17));
}

INSTANTIATE_TEST_SUITE_P(All, Blocked,
                         ::testing::Combine(::testing::ValuesIn(kBackends),
                                            ::testing::ValuesIn(kLayouts)));

class MixedLayouts : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!testing::DeviceFor(GetParam())) GTEST_SKIP() << "no " << GetParam() << " device";
  }
};

constexpr const char* kConv = R"(function (D[N, C, H, W], K[CO, C, I, J]) -> (R) {
  O[n, co, x, y : N, CO, H, W] = +(D[n, c, x + i - 1, y + j - 1] * K[co, c, i, j]);
  R = (O > 0 ? O : 0) + 1;
})";

TEST_P(MixedLayouts, NchwInBlockedOut) {
  CheckBlocked(GetParam(), {kConv, {{"D", F32({1, 5, 4, 5})}, {"K", F32({20, 5, 3, 3})}}, {{"R", "nChw16c"}}},
               "nchw -> nChw16c");
}

TEST_P(MixedLayouts, BlockedInNhwcOut) {
  CheckBlocked(GetParam(),
               {kConv, {{"D", F32({1, 17, 4, 5})}, {"K", F32({6, 17, 3, 3})}}, {{"D", "nChw8c"}, {"R", "nhwc"}}},
               "nChw8c -> nhwc", 0);
  // The same as a separate elementwise statement reading the blocked tensor.
  CheckBlocked(GetParam(),
               {"function (A[N, C, H, W]) -> (R) { R = exp(A) + 1; }", {{"A", F32({2, 17, 3, 2})}},
                {{"A", "nChw8c"}, {"R", "nhwc"}}},
               "elementwise nChw8c -> nhwc", 0);
  // nChw8c into nChw16c (no common split: a Direct copy).
  CheckBlocked(GetParam(),
               {"function (A[N, C, H, W], B[N, C, H, W]) -> (R) { R = cos(A) + B; }",
                {{"A", F32({2, 17, 3, 2})}, {"B", F32({2, 17, 3, 2})}},
                {{"A", "nChw8c"}, {"B", "nChw4c"}, {"R", "nChw16c"}}},
               "elementwise nChw8c + nChw4c -> nChw16c");
}

// Blocked temporaries between two convolutions (T's layout chosen by the
// user, then by propagation from R), and an elementwise op between them.
TEST_P(MixedLayouts, BlockedTemporaries) {
  const char* src = R"(function (D[N, C, H, W], K[CO, C, I, J], L[CP, CO, I, J]) -> (R) {
  T[n, co, x, y : N, CO, H, W] = +(D[n, c, x + i - 1, y + j - 1] * K[co, c, i, j]);
  U = exp(T) - 1;
  R[n, cp, x, y : N, CP, H, W] = +(U[n, co, x + i - 1, y + j - 1] * L[cp, co, i, j]);
})";
  std::map<std::string, lang::Shape> shapes = {
      {"D", F32({1, 5, 4, 3})}, {"K", F32({17, 5, 3, 3})}, {"L", F32({6, 17, 3, 3})}};
  // U = exp(T) - 1 fuses into T's convolution: U is the one temporary.
  CheckBlocked(GetParam(), {src, shapes, {{"T", "nChw8c"}, {"U", "nChw8c"}}}, "nChw8c temporaries", 1);
  CheckBlocked(GetParam(), {src, shapes, {{"T", "nChw4c"}, {"U", "nChw16c"}, {"R", "nChw8c"}}},
               "nChw4c and nChw16c temporaries", 1);
}

INSTANTIATE_TEST_SUITE_P(All, MixedLayouts, ::testing::ValuesIn(kBackends));

}  // namespace
}  // namespace tilec
