/* Tilec from C: compile a 16-element add once, run it on the caller's
 * arrays, and show how a Tile error is reported. Exits 1 on any failure. */
#include <stdio.h>
#include <tilec/tilec.h>

static int Report(const char* what, tilec_error error) {
  fprintf(stderr, "%s failed:\n%s\n", what, tilec_error_text(error));
  tilec_error_release(error);
  return 1;
}

int main(void) {
  printf("Tilec %s (header %d, library %d)\n", tilec_version_string(), TILEC_VERSION, tilec_version());
  for (size_t i = 0; i < tilec_device_count(); ++i) printf("device %zu: %s\n", i, tilec_device_id(i));

  tilec_error error = NULL;
  tilec_device device = NULL;
  if (tilec_device_open("llvm", &device, &error) != TILEC_OK) return Report("opening llvm", error);

  int64_t dims[1] = {16};
  tilec_tensor_spec specs[2] = {{"A", TILEC_F32, 1, dims, NULL}, {"B", TILEC_F32, 1, dims, NULL}};
  tilec_program add = NULL;
  if (tilec_program_compile(device, "function (A[N], B[N]) -> (C) { C = A + B; }", "add.tile", specs,
                            2, NULL, &add, &error) != TILEC_OK)
    return Report("compiling", error);

  float a[16], b[16], c[16];
  for (int i = 0; i < 16; ++i) a[i] = (float)i, b[i] = 0.5f * (float)i;
  tilec_tensor inputs[2] = {{a, sizeof a, TILEC_F32, 1, dims, NULL}, {b, sizeof b, TILEC_F32, 1, dims, NULL}};
  tilec_tensor output = {c, sizeof c, TILEC_F32, 1, dims, NULL};
  if (tilec_program_run(add, inputs, 2, &output, 1, &error) != TILEC_OK) return Report("running", error);
  for (int i = 0; i < 16; ++i) {
    if (c[i] != 1.5f * (float)i) {
      fprintf(stderr, "C[%d] = %g, expected %g\n", i, c[i], 1.5 * i);
      return 1;
    }
  }
  printf("C = A + B: ok (C[15] = %g)\n", c[15]);

  /* A mistake in the Tile source: the error names the line and column. */
  tilec_program bad = NULL;
  if (tilec_program_compile(device, "function (A[N]) -> (C) {\n  C = A + X;\n}", "bad.tile", specs, 1,
                            NULL, &bad, &error) == TILEC_OK) {
    fprintf(stderr, "a bad program compiled\n");
    return 1;
  }
  int line = 0, column = 0;
  tilec_error_location(error, NULL, &line, &column);
  printf("expected error at %d:%d:\n%s\n", line, column, tilec_error_text(error));
  tilec_error_release(error);
  if (line != 2 || column != 11) return 1;

  tilec_program_release(add);
  tilec_device_release(device);
  return 0;
}
