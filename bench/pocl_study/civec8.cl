// (b), float8 version of civec.cl. K read as given [I,J,CO,CI]. Each work item: PB consecutive y pixels x CB
// consecutive co; float8 accumulators along ci (the contiguous reduction
// index of both D and K); horizontal sums at the end.
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
  float8 acc[PB][CB];
  for (int p = 0; p < PB; ++p)
    for (int c = 0; c < CB; ++c) acc[p][c] = (float8)(0.0f);
  for (int i = 0; i < 3; ++i) {
    int xi = x + i - 1;
    if (xi < 0 || xi >= HW) continue;
    for (int j = 0; j < 3; ++j) {
      __global const float* kp = K + ((i * 3 + j) * C + co0) * C;
      for (int cc = 0; cc < C; cc += 8) {
        float8 kv[CB];
#pragma unroll
        for (int c = 0; c < CB; ++c) kv[c] = vload8(0, kp + c * C + cc);
#pragma unroll
        for (int p = 0; p < PB; ++p) {
          int yy = y0 + p + j - 1;
          if (yy < 0 || yy >= HW) continue;
          float8 dv = vload8(0, D + (xi * HW + yy) * C + cc);
#pragma unroll
          for (int c = 0; c < CB; ++c) acc[p][c] = fma(dv, kv[c], acc[p][c]);
        }
      }
    }
  }
  for (int p = 0; p < PB; ++p)
    for (int c = 0; c < CB; ++c) {
      float8 a = acc[p][c];
      float4 s4 = a.lo + a.hi;
      float2 s2 = s4.lo + s4.hi;
      R[(x * HW + y0 + p) * C + co0 + c] = fmax(s2.x + s2.y, 0.0f);
    }
}
