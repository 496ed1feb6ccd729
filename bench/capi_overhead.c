/* The overhead of running an already-compiled tiny program through the C ABI:
 * a 16-element f32 add (C = A + B), run many times on the caller's arrays.
 * Prints the median time per tilec_program_run over several batches, next to
 * the same add as a plain C loop (the work itself) in the same process.
 *
 *   ninja -C build bench_capi_overhead && build/bench/bench_capi_overhead [device]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tilec/tilec.h>

enum { kBatches = 31, kCalls = 2000 };

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int Compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double Median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, Compare);
  return v[n / 2];
}

/* The same work as a plain loop, not inlined into the timing loop. */
__attribute__((noinline)) static void Add(const float* a, const float* b, float* c) {
  for (int i = 0; i < 16; ++i) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  const char* id = argc > 1 ? argv[1] : "llvm";
  tilec_error error = NULL;
  tilec_device device = NULL;
  tilec_program add = NULL;
  int64_t dims[1] = {16};
  tilec_tensor_spec specs[2] = {{"A", TILEC_F32, 1, dims, NULL}, {"B", TILEC_F32, 1, dims, NULL}};
  if (tilec_device_open(id, &device, &error) != TILEC_OK ||
      tilec_program_compile(device, "function (A[N], B[N]) -> (C) { C = A + B; }", "add.tile", specs, 2,
                            NULL, &add, &error) != TILEC_OK) {
    fprintf(stderr, "%s\n", tilec_error_text(error));
    return 1;
  }
  _Alignas(64) float a[16], b[16], c[16];
  for (int i = 0; i < 16; ++i) a[i] = (float)i, b[i] = 1.0f;
  tilec_tensor in[2] = {{a, sizeof a, TILEC_F32, 1, dims, NULL}, {b, sizeof b, TILEC_F32, 1, dims, NULL}};
  tilec_tensor out = {c, sizeof c, TILEC_F32, 1, dims, NULL};

  double run[kBatches], loop[kBatches];
  for (int round = -3; round < kBatches; ++round) { /* 3 warm-up batches */
    double t0 = Now();
    for (int i = 0; i < kCalls; ++i) {
      if (tilec_program_run(add, in, 2, &out, 1, &error) != TILEC_OK) {
        fprintf(stderr, "%s\n", tilec_error_text(error));
        return 1;
      }
    }
    double t1 = Now();
    for (int i = 0; i < kCalls; ++i) {
      Add(a, b, c);
      __asm__ volatile("" ::: "memory");
    }
    double t2 = Now();
    if (round >= 0) run[round] = (t1 - t0) / kCalls, loop[round] = (t2 - t1) / kCalls;
  }
  if (c[15] != 16.0f) {
    fprintf(stderr, "wrong result %g\n", c[15]);
    return 1;
  }
  double r = Median(run, kBatches), l = Median(loop, kBatches);
  printf("device %s: tilec_program_run of a 16-element add: median %.3f us per call "
         "(%d batches of %d); the plain C loop: %.4f us; overhead %.3f us\n",
         tilec_device_name(device), r * 1e6, kBatches, kCalls, l * 1e6, (r - l) * 1e6);
  tilec_program_release(add);
  tilec_device_release(device);
  return 0;
}
