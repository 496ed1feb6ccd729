// (b) as a generator would naively emit it: civec.cl's register block, but the
// "same"-padding guard is evaluated per load, inside the innermost loop, as a
// select (ok ? vload16(..) : 0) over both x and y, and the reduction loops are
// a flat nest in the order given by LO:
//   LO=0: i, j, ci16 (ci chunk innermost)   LO=1: ci16, i, j (ci chunk outermost)
// global (CO/CB, HW/PB, HW).
#define HW 56
#define C 64
#ifndef PB
#define PB 4
#endif
#ifndef CB
#define CB 4
#endif
#ifndef LO
#define LO 0
#endif
__kernel void conv(__global const float* restrict D, __global const float* restrict K,
                   __global float* restrict R) {
  int co0 = get_global_id(0) * CB, y0 = get_global_id(1) * PB, x = get_global_id(2);
  float16 acc[PB][CB];
  for (int p = 0; p < PB; ++p)
    for (int c = 0; c < CB; ++c) acc[p][c] = (float16)(0.0f);
#if LO == 0
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int cc = 0; cc < C; cc += 16) {
#else
  for (int cc = 0; cc < C; cc += 16)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
#endif
        float16 kv[CB];
#pragma unroll
        for (int c = 0; c < CB; ++c) kv[c] = vload16(0, K + ((i * 3 + j) * C + co0 + c) * C + cc);
#pragma unroll
        for (int p = 0; p < PB; ++p) {
          int xi = x + i - 1, yy = y0 + p + j - 1;
          bool ok = xi >= 0 && xi < HW && yy >= 0 && yy < HW;
          float16 dv = ok ? vload16(0, D + (xi * HW + yy) * C + cc) : (float16)(0.0f);
#pragma unroll
          for (int c = 0; c < CB; ++c) acc[p][c] = fma(dv, kv[c], acc[p][c]);
        }
      }
  for (int p = 0; p < PB; ++p)
    for (int c = 0; c < CB; ++c) {
      float16 a = acc[p][c];
      float8 s8 = a.lo + a.hi;
      float4 s4 = s8.lo + s8.hi;
      float2 s2 = s4.lo + s4.hi;
      R[(x * HW + y0 + p) * C + co0 + c] = fmax(s2.x + s2.y, 0.0f);
    }
}
