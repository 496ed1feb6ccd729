// Generator-style scalar code, K as given: one work item per PB y pixels x CB
// co, scalar accumulators, the ci reduction loop innermost (unit stride in D
// and K). Only LLVM's loop vectorizer could vectorize it, as a reduction,
// which needs reassociation (-cl-fast-relaxed-math).
// global (CO/CB, HW/PB, HW).
#define HW 56
#define C 64
#ifndef PB
#define PB 4
#endif
#ifndef CB
#define CB 4
#endif
__kernel void conv(__global const float* restrict D, __global const float* restrict K,
                   __global float* restrict R) {
  int co0 = get_global_id(0) * CB, y0 = get_global_id(1) * PB, x = get_global_id(2);
  float agg[PB * CB];
#pragma unroll
  for (int q = 0; q < PB * CB; ++q) agg[q] = 0.0f;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
#pragma unroll
      for (int p = 0; p < PB; ++p) {
        int xi = x + i - 1, yy = y0 + p + j - 1;
        if (!(xi >= 0 && xi < HW && yy >= 0 && yy < HW)) continue;
#pragma unroll
        for (int c = 0; c < CB; ++c) {
          float a = agg[p * CB + c];
          for (int ci = 0; ci < C; ++ci)
            a += D[(xi * HW + yy) * C + ci] * K[((i * 3 + j) * C + co0 + c) * C + ci];
          agg[p * CB + c] = a;
        }
      }
#pragma unroll
  for (int p = 0; p < PB; ++p)
#pragma unroll
    for (int c = 0; c < CB; ++c)
      R[(x * HW + y0 + p) * C + co0 + c] = fmax(agg[p * CB + c], 0.0f);
}
