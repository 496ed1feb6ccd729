// (a) K pre-transposed to Kt [I,J,CI,CO] (co contiguous) by ktrans.cl.
// Each work item: PB consecutive y pixels x (NV*16) consecutive co; float16
// accumulators along co; D loaded as a scalar and broadcast.
// global (CO/(NV*16), HW/PB, HW).
#define HW 56
#define C 64
#ifndef PB
#define PB 4
#endif
#ifndef NV
#define NV 4
#endif
__kernel void conv(__global const float* restrict D, __global const float* restrict Kt,
                   __global float* restrict R) {
  int co0 = get_global_id(0) * NV * 16, y0 = get_global_id(1) * PB, x = get_global_id(2);
  float16 acc[PB][NV];
  for (int p = 0; p < PB; ++p)
    for (int v = 0; v < NV; ++v) acc[p][v] = (float16)(0.0f);
  for (int i = 0; i < 3; ++i) {
    int xi = x + i - 1;
    if (xi < 0 || xi >= HW) continue;
    for (int j = 0; j < 3; ++j) {
      __global const float* kp = Kt + (i * 3 + j) * C * C + co0;
      for (int ci = 0; ci < C; ++ci) {
        float16 kv[NV];
#pragma unroll
        for (int v = 0; v < NV; ++v) kv[v] = vload16(v, kp + ci * C);
#pragma unroll
        for (int p = 0; p < PB; ++p) {
          int yy = y0 + p + j - 1;
          if (yy < 0 || yy >= HW) continue;
          float16 dv = (float16)(D[(xi * HW + yy) * C + ci]);
#pragma unroll
          for (int v = 0; v < NV; ++v) acc[p][v] = fma(dv, kv[v], acc[p][v]);
        }
      }
    }
  }
  for (int p = 0; p < PB; ++p)
    for (int v = 0; v < NV; ++v)
      vstore16(fmax(acc[p][v], (float16)(0.0f)), v, R + (x * HW + y0 + p) * C + co0);
}
