// Tile programs every backend's pipeline test runs (opencl_pipeline_test,
// llvm_pipeline_test): each covers a part of the kernel generator, with sizes
// no tile divides.
#pragma once

#include "tests/unit/pipeline_check.h"

namespace tilec::testing {

// The seed's conv + ReLU ("same" padding), 9x7 images, 5 -> 6 channels.
inline constexpr const char* kConvRelu = R"(function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
})";
inline Case ConvReluCase() { return {kConvRelu, {{"D", F32({2, 9, 7, 5})}, {"K", F32({3, 3, 6, 5})}}}; }

inline constexpr const char* kMatmul =
    "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";
inline Case MatmulOddCase() { return {kMatmul, {{"A", F32({37, 29})}, {"B", F32({29, 19})}}}; }

// Sum, product, max and min, some with constraints that leave elements unreached.
inline Case ReductionsCase() {
  return {R"(function (I[N, M]) -> (S, P, MX, MN) {
  S[i : N] = +(I[i, j]);
  P[i : N] = *(I[i, j]), j < 3;
  MX[i : N] = >(I[i, j]), i + j < 4;
  MN[j : M] = <(I[i, j]);
})",
          {{"I", F32({6, 5})}}};
}

inline Case ElementwiseChainCase() {
  return {R"(function (A[N, M], B[M]) -> (C, D) {
  C = exp(A) * B + 1;
  D = (A > B ? A - B : -A) / 2;
})",
          {{"A", F32({7, 13})}, {"B", F32({13})}}};
}

// A strided output (Fill kernel first) and a `default` tensor.
inline Case FillDefaultCase() {
  return {R"(function (A[N], P[M]) -> (O, Q) {
  O[2 * i : 2 * N] = =(A[i]);
  Q[i + 1 : M] = =(A[i]) default P;
})",
          {{"A", F32({5})}, {"P", F32({9})}}};
}

// Integer division and remainder (by zero too) and a saturating cast.
inline Case IntegersCase() {
  return {R"(function (A[N], B[N]) -> (Q, R, F) {
  Q = A / B;
  R = A % B;
  F = as_int(A * 1.7, 32);
})",
          {{"A", {lang::DataType::I32, {17}}}, {"B", {lang::DataType::I32, {17}}}}};
}

// Special kernels (gather), a fractional index (Direct) and argmax via index().
inline Case GatherUpsampleArgmaxCase() {
  return {R"(function (D[N, C], I[K], U[L]) -> (G, O, AM) {
  G = gather(D, I);
  O[i : 2 * L] = =(U[i / 2]);
  Mx[n : N] = >(D[n, c]);
  Ix = index(D, 1);
  AM[n : N] = >(D[n, c] == Mx[n] ? Ix[n, c]);
})",
          {{"D", F32({4, 6})}, {"I", {lang::DataType::I32, {5}}}, {"U", F32({7})}}};
}

// Bool combinations in a Direct kernel (fractional index) and a flat one:
// `*` is "and", `+` is "or" on bools.
inline Case BoolCombinationsCase() {
  return {R"(function (A[N], B[N]) -> (O, P) {
  O[i : 2 * N] = +(A[i / 2] * B[i / 2]);
  P[i : N] = +(A[i] + B[j]);
})",
          {{"A", {lang::DataType::Bool, {5}}}, {"B", {lang::DataType::Bool, {5}}}}};
}

// The vector form's masked tails (forms/vector.cc): each case with the text its
// vector plan must contain. Sizes no vector width or block divides.
inline constexpr const char* kConvNchw = R"(function (I[N, C, H, W], K[CO, C, KH, KW]) -> (R) {
  O[n, co, h, w : N, CO, H, W] = +(I[n, c, h + kh - 1, w + kw - 1] * K[co, c, kh, kw]);
  R = relu(O);
})";
inline std::vector<std::pair<Case, std::string>> MaskedTailCases() {
  return {
      // N = 37: 3 vectors of 16, the last masked; M = 13 leaves a tail in i.
      {{kMatmul, {{"A", F32({13, 9})}, {"B", F32({9, 37})}}}, "masked tail"},
      // Plain NCHW: vectors along w, the padding constraints on w as lane
      // masks, 19 columns in 2 vectors of 16.
      {{kConvNchw, {{"I", F32({2, 3, 5, 19})}, {"K", F32({5, 3, 3, 3})}}},
       "along w, block of 5 along co, masked tail, constraints on w as lane masks"},
      // nChw16c with C = CO = 20: weights copied in padded panels of 16 along
      // co; the two vectors step along co/16; the constraint co <= 19 on
      // co%16 is applied to the sums (the panels' padding is read unmasked,
      // the lanes past 19 reset before the ReLU: bench_peers L5, L6).
      {{kConvNchw, {{"I", F32({1, 20, 4, 6})}, {"K", F32({20, 20, 3, 3})}}, {{"I", "nChw16c"}, {"R", "nChw16c"}}},
       "along co%16 (vectors along co/16), block of 6 along w, constraints on co%16 applied to the sums"},
      // The same constraint where a vector input has no padding (S, 20
      // scales): a lane mask of the loads and the sums (with c/16's value
      // per vector).
      {{"function (I[N, C, H, W], S[C]) -> (R) {\n  O[n, c, h, w : N, C, H, W] = +(I[n, c, h, w] * S[c]);\n"
        "  R = relu(O);\n}",
        {{"I", F32({1, 20, 4, 6})}, {"S", F32({20})}},
        {{"I", "nChw16c"}, {"R", "nChw16c"}}},
       "along c%16 (vectors along c/16), block of 6 along w, constraints on c%16 as lane masks"},
      // nChw8c, 24 channels: three vectors of 8 along co/8.
      {{kConvNchw, {{"I", F32({1, 24, 4, 6})}, {"K", F32({24, 24, 3, 3})}}, {{"I", "nChw8c"}, {"R", "nChw8c"}}},
       "3 x 8 lanes of float along co%8 (vectors along co/8)"},
      // An integer post-op: lane by lane, each lane of the tail under a guard.
      {{"function (A[M, K], B[K, N]) -> (C, Q) {\n  C[i, j : M, N] = +(A[i, k] * B[k, j]);\n"
        "  Q = as_int(C * 100, 32);\n}",
        {{"A", F32({3, 4})}, {"B", F32({4, 21})}}},
       "lane by lane"},
      // "Same" convolution with Y = 29 (a prime above any block of rows):
      // the last y block starts earlier and recomputes some rows of the one
      // before instead of guarding rows past 29.
      {{kConvRelu, {{"D", F32({1, 5, 29, 5})}, {"K", F32({3, 3, 20, 5})}}}, "(the last block shifted back)"},
      // Elementwise: 7 columns in one masked vector of 8, a broadcast input.
      {{"function (A[N, M], B[M]) -> (R) { R = relu(A * B + 1); }", {{"A", F32({3, 7})}, {"B", F32({7})}}},
       "masked tail"},
  };
}

// A "same" convolution's backward-weights (bench/grad W1 K's shape, smaller,
// sizes no block divides): the blocks along ci, chunks of one x row (53
// steps), each chunk's blocks prefetching the next row of D and of G.
inline Case BackwardWeightsCase() {
  return {"function (D[N, H, W, CI], G[N, H, W, CO]) -> (K) {\n"
          "  K[i, j, ci, co : 3, 3, CI, CO] = +(D[n, i + x - 1, j + y - 1, ci] * G[n, x, y, co]);\n}",
          {{"D", F32({1, 11, 53, 37})}, {"G", F32({1, 11, 53, 64})}}};
}

// The vector form's reduction chunks (forms/vector_chunks.cc): vector-input
// panels far larger than any L1 (so every CPU model chunks them), sizes no
// block divides, each with the text its vector plan must contain.
inline std::vector<std::pair<Case, std::string>> ChunkCases() {
  return {
      // "Same" conv + ReLU, 64 -> 61 channels (a masked tail), Y = 29 (the
      // last block shifted back), the padding along y checked per chunk of
      // (i, j), the padding along x bounding i; 5 x-rows keep few work items,
      // so some have fewer blocks.
      {{kConvRelu, {{"D", F32({1, 5, 29, 64})}, {"K", F32({3, 3, 61, 64})}}}, "Reduction chunks: i, j ("},
      // One reduction of 600 (an inner loop alone too large): split into
      // chunks of a divisor of 600; M = 199 rows.
      {{kMatmul, {{"A", F32({199, 600})}, {"B", F32({600, 64})}}}, "Reduction chunks: k/"},
      // A prime reduction (509): no divisor makes chunks long enough, so
      // they are as even as L1 allows, 7 of 64 steps and one of 61.
      {{kMatmul, {{"A", F32({199, 509})}, {"B", F32({509, 64})}}}, "Reduction chunks: k/64 "},
      // nChw16c in and out with C = 40 (channels 40-47 padding: the c%16 loop
      // bounded), vectors along co/16, a post-op with f(0) != 0.
      {{"function (I[N, C, H, W], K[CO, C, KH, KW]) -> (R) {\n"
        "  O[n, co, h, w : N, CO, H, W] = +(I[n, c, h + kh - 1, w + kw - 1] * K[co, c, kh, kw]);\n"
        "  R = relu(O) + 1;\n}",
        {{"I", F32({2, 40, 11, 13})}, {"K", F32({64, 40, 3, 3})}},
        {{"I", "nChw16c"}, {"R", "nChw16c"}}},
       "Reduction chunks: kh, kw ("},
      {BackwardWeightsCase(), "blocks' accumulators in memory; the next chunk's D, G prefetched)"},
  };
}

}  // namespace tilec::testing
