/* Cold vs warm compile through the disk cache of kernels: compiles a Tile
 * file for D f32[1,56,56,64] and K f32[3,3,64,64] (the seed's conv+ReLU
 * shapes) once through the C ABI and prints the wall time. Run it twice with
 * one fresh cache directory: the first process compiles cold and fills the
 * cache, the second loads the object code from it.
 *
 *   export TILEC_CACHE_DIR=$(mktemp -d)
 *   build/bench/bench_compile_cache examples/conv_relu.tile   # cold
 *   build/bench/bench_compile_cache examples/conv_relu.tile   # warm
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <tilec/tilec.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "examples/conv_relu.tile";
  const char* id = argc > 2 ? argv[2] : "llvm";
  FILE* f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 1;
  }
  static char source[1 << 16];
  size_t n = fread(source, 1, sizeof source - 1, f);
  fclose(f);
  source[n] = 0;
  int64_t d[4] = {1, 56, 56, 64}, k[4] = {3, 3, 64, 64};
  tilec_tensor_spec specs[2] = {{"D", TILEC_F32, 4, d, NULL}, {"K", TILEC_F32, 4, k, NULL}};
  tilec_error error = NULL;
  tilec_device device = NULL;
  tilec_program program = NULL;
  double t0 = Now();
  if (tilec_device_open(id, &device, &error) != TILEC_OK) {
    fprintf(stderr, "%s\n", tilec_error_text(error));
    return 1;
  }
  double t1 = Now();
  if (tilec_program_compile(device, source, path, specs, 2, NULL, &program, &error) != TILEC_OK) {
    fprintf(stderr, "%s\n", tilec_error_text(error));
    return 1;
  }
  double t2 = Now();
  printf("%s on %s: open %.1f ms, compile %.1f ms\n", path, tilec_device_name(device), (t1 - t0) * 1e3,
         (t2 - t1) * 1e3);
  tilec_program_release(program);
  tilec_device_release(device);
  return 0;
}
