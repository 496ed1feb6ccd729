"""The C helpers the ahead-of-time tests' drivers share (aot_test.py,
aarch64_aot_test.py): read_file and write_file of raw bytes, exiting with 2
on an I/O error."""

C_FILE_IO = r"""
static void* read_file(const char* path, size_t bytes) {
  void* p = malloc(bytes);
  FILE* f = fopen(path, "rb");
  if (!p || !f || fread(p, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
  fclose(f);
  return p;
}

static void write_file(const char* path, const void* p, size_t bytes) {
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(p, 1, bytes, f) != bytes) { fprintf(stderr, "cannot write %s\n", path); exit(2); }
  fclose(f);
}
"""
