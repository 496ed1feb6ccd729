// (c) Scalar code, one work item per (co, PB y pixels); work items along co in
// dim 0 so PoCL's implicit work-group vectorizer can turn the co loop of a work
// group into SIMD. KT=1: K pre-transposed (Kt, co contiguous: unit-stride
// across work items); KT=0: K as given (stride 64 across work items).
// global (CO, HW/PB, HW), local (LS, 1, 1).
#define HW 56
#define C 64
#ifndef PB
#define PB 4
#endif
#ifndef KT
#define KT 1
#endif
__kernel void conv(__global const float* restrict D, __global const float* restrict K,
                   __global float* restrict R) {
  int co = get_global_id(0), y0 = get_global_id(1) * PB, x = get_global_id(2);
  float acc[PB];
  for (int p = 0; p < PB; ++p) acc[p] = 0.0f;
  for (int i = 0; i < 3; ++i) {
    int xi = x + i - 1;
    if (xi < 0 || xi >= HW) continue;
    for (int j = 0; j < 3; ++j) {
      for (int ci = 0; ci < C; ++ci) {
#if KT
        float k = K[((i * 3 + j) * C + ci) * C + co];
#else
        float k = K[((i * 3 + j) * C + co) * C + ci];
#endif
#pragma unroll
        for (int p = 0; p < PB; ++p) {
          int yy = y0 + p + j - 1;
          if (yy < 0 || yy >= HW) continue;
          acc[p] = fma(D[(xi * HW + yy) * C + ci], k, acc[p]);
        }
      }
    }
  }
  for (int p = 0; p < PB; ++p) R[(x * HW + y0 + p) * C + co] = fmax(acc[p], 0.0f);
}
