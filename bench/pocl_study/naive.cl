// One work item per output element: global (CO, Y, X). Baseline.
#define HW 56
#define C 64
__kernel void conv(__global const float* restrict D, __global const float* restrict K,
                   __global float* restrict R) {
  int co = get_global_id(0), y = get_global_id(1), x = get_global_id(2);
  float acc = 0.0f;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      int xi = x + i - 1, yj = y + j - 1;
      if (xi < 0 || xi >= HW || yj < 0 || yj >= HW) continue;
      for (int ci = 0; ci < C; ++ci)
        acc += D[(xi * HW + yj) * C + ci] * K[((i * 3 + j) * C + co) * C + ci];
    }
  R[(x * HW + y) * C + co] = fmax(acc, 0.0f);
}
