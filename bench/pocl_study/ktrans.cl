// Kt[t][ci][co] = K[t][co][ci], t = i*3+j. global (CI=64, CO=64, 9).
__kernel void ktrans(__global const float* restrict K, __global float* restrict Kt) {
  int ci = get_global_id(0), co = get_global_id(1), t = get_global_id(2);
  Kt[(t * 64 + ci) * 64 + co] = K[(t * 64 + co) * 64 + ci];
}
