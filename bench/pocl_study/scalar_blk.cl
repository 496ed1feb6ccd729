// Generator-style scalar code (float agg[] array, no vector types), one work
// item per register block of PB y pixels x CN consecutive co, fully unrolled
// block loops, relying on LLVM's SLP/loop vectorizer inside the work item.
// KT=1: Kt [I,J,CI,CO] (co unit stride); KT=0: K as given (co stride 64).
// global (CO/CN, HW/PB, HW).
#define HW 56
#define C 64
#ifndef PB
#define PB 4
#endif
#ifndef CN
#define CN 16
#endif
#ifndef KT
#define KT 1
#endif
__kernel void conv(__global const float* restrict D, __global const float* restrict K,
                   __global float* restrict R) {
  int co0 = get_global_id(0) * CN, y0 = get_global_id(1) * PB, x = get_global_id(2);
  float agg[PB * CN];
#pragma unroll
  for (int q = 0; q < PB * CN; ++q) agg[q] = 0.0f;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int ci = 0; ci < C; ++ci) {
#pragma unroll
        for (int p = 0; p < PB; ++p) {
          int xi = x + i - 1, yy = y0 + p + j - 1;
          bool ok = xi >= 0 && xi < HW && yy >= 0 && yy < HW;
          float d = ok ? D[(xi * HW + yy) * C + ci] : 0.0f;
#pragma unroll
          for (int c = 0; c < CN; ++c) {
#if KT
            float k = K[((i * 3 + j) * C + ci) * C + co0 + c];
#else
            float k = K[((i * 3 + j) * C + co0 + c) * C + ci];
#endif
            agg[p * CN + c] = fma(d, k, agg[p * CN + c]);
          }
        }
      }
#pragma unroll
  for (int p = 0; p < PB; ++p)
#pragma unroll
    for (int c = 0; c < CN; ++c)
      R[(x * HW + y0 + p) * C + co0 + c] = fmax(agg[p * CN + c], 0.0f);
}
