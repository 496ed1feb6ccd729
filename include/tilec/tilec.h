/* Tilec's C ABI: compile Tile programs for a device and run them on memory
 * the caller owns.
 *
 *   tilec_device dev;   tilec_program prog;   tilec_error err = NULL;
 *   if (tilec_device_open("llvm", &dev, &err)) { puts(tilec_error_message(err)); ... }
 *   int64_t dims[1] = {16};
 *   tilec_tensor_spec in[2] = {{"A", TILEC_F32, 1, dims, NULL}, {"B", TILEC_F32, 1, dims, NULL}};
 *   tilec_program_compile(dev, "function (A[N], B[N]) -> (C) { C = A + B; }", "add.tile",
 *                         in, 2, NULL, &prog, &err);
 *   tilec_tensor a = {a_data, sizeof a_data, TILEC_F32, 1, dims, NULL}, ...;
 *   tilec_program_run(prog, (tilec_tensor[]){a, b}, 2, &c, 1, &err);
 *   tilec_program_release(prog);  tilec_device_release(dev);
 *
 * Conventions
 *  - Every function that can fail returns a tilec_status (TILEC_OK = 0) and,
 *    when `error` is not NULL, stores a new error object there on failure
 *    (release it with tilec_error_release). Functions never abort or throw.
 *  - Handles are opaque. Releasing a handle twice, or using a released one,
 *    is reported as a TILEC_ERROR_USAGE error (handles are never reused).
 *  - Strings returned by the library stay valid as long as the handle they
 *    came from.
 *  - Thread safety: every function may be called from several threads. One
 *    program may run concurrently on different output memory; programs may
 *    be compiled concurrently on one device.
 */
#ifndef TILEC_TILEC_H_
#define TILEC_TILEC_H_

#include <stddef.h>
#include <stdint.h>

#define TILEC_VERSION_MAJOR 0
#define TILEC_VERSION_MINOR 1
#define TILEC_VERSION_PATCH 0
/* 10000 * major + 100 * minor + patch, as tilec_version() returns. */
#define TILEC_VERSION (TILEC_VERSION_MAJOR * 10000 + TILEC_VERSION_MINOR * 100 + TILEC_VERSION_PATCH)

#if defined(_WIN32)
#define TILEC_API
#else
#define TILEC_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tilec_status {
  TILEC_OK = 0,
  TILEC_ERROR_USER = 1,     /* the Tile source, shapes or data are wrong */
  TILEC_ERROR_USAGE = 2,    /* the API was misused (null or released handle, bad argument) */
  TILEC_ERROR_INTERNAL = 3, /* a bug in Tilec; please report it */
  TILEC_ERROR_DEVICE = 4    /* the device or its driver failed */
} tilec_status;

/* Element types; the values are stable. */
typedef enum tilec_dtype {
  TILEC_BOOL = 0,
  TILEC_I8 = 1,
  TILEC_I16 = 2,
  TILEC_I32 = 3,
  TILEC_I64 = 4,
  TILEC_U8 = 5,
  TILEC_U16 = 6,
  TILEC_U32 = 7,
  TILEC_U64 = 8,
  TILEC_F16 = 9,
  TILEC_F32 = 10,
  TILEC_F64 = 11,
  /* Not a type: makes every int a valid tilec_dtype value, so a wrong value
   * from the caller is reported (TILEC_ERROR_USAGE) rather than undefined. */
  TILEC_DTYPE_FORCE_INT_ = 0x7fffffff
} tilec_dtype;

typedef struct tilec_error_s* tilec_error;
typedef struct tilec_device_s* tilec_device;
typedef struct tilec_program_s* tilec_program;

/* ---- Version --------------------------------------------------------------------------- */

/* TILEC_VERSION of the library actually loaded. */
TILEC_API int tilec_version(void);
/* "0.1.0". */
TILEC_API const char* tilec_version_string(void);

/* ---- Errors ---------------------------------------------------------------------------- */

/* The kind of the error (never TILEC_OK for a live error; TILEC_ERROR_USAGE for
 * a NULL or released one). */
TILEC_API tilec_status tilec_error_kind(tilec_error error);
/* The message alone, e.g. "unknown name 'X'". */
TILEC_API const char* tilec_error_message(tilec_error error);
/* The full text to show a user: "file:line:col: error: message", the source
 * line and a caret line, or a device error's build log. */
TILEC_API const char* tilec_error_text(tilec_error error);
/* The Tile source location: file name ("" if none) and 1-based line and
 * column (0 if the error is not in Tile source). Any out pointer may be NULL. */
TILEC_API void tilec_error_location(tilec_error error, const char** file, int* line, int* column);
TILEC_API tilec_status tilec_error_release(tilec_error error);

/* ---- Devices --------------------------------------------------------------------------- */

/* Number of devices this library can open ("llvm:cpu" first, then OpenCL devices). */
TILEC_API size_t tilec_device_count(void);
/* Id of device `index` (< tilec_device_count()), NULL otherwise. Valid for the process. */
TILEC_API const char* tilec_device_id(size_t index);

/* Opens a device by id: "llvm" / "llvm:cpu" (the host CPU), "opencl" (the first
 * OpenCL device) or "opencl:P:D". */
TILEC_API tilec_status tilec_device_open(const char* id, tilec_device* device, tilec_error* error);
/* As tilec_device_open, for the CPU `cpu` names (an LLVM CPU name such as
 * "znver3", "skylake-avx512" or "x86-64-v3"; NULL, "" or "host": the host,
 * or TILEC_CPU where set). "llvm" compiles for that CPU and runs its code
 * only where the host has its features (TILEC_ERROR_USER otherwise, when a
 * program is compiled); an OpenCL CPU device plans its kernels for it.
 * TILEC_ERROR_USER for a name LLVM does not know (the message lists them). */
TILEC_API tilec_status tilec_device_open_cpu(const char* id, const char* cpu, tilec_device* device,
                                             tilec_error* error);
/* The device's id and a one-line description (NULL for a bad handle). */
TILEC_API const char* tilec_device_name(tilec_device device);
TILEC_API const char* tilec_device_description(tilec_device device);
/* Programs compiled on a device keep it open after its release. */
TILEC_API tilec_status tilec_device_release(tilec_device device);

/* ---- Compiling ------------------------------------------------------------------------- */

/* The shape of one input for compiling, and optionally its memory layout:
 * NULL or "row-major", "nhwc", "nchw", "nChw16c", "order(0,2,3,1)",
 * "strides(s0,s1,...)" (see docs/user-guide.md). */
typedef struct tilec_tensor_spec {
  const char* name;
  tilec_dtype dtype;
  int rank;
  const int64_t* dims; /* rank entries (NULL for rank 0) */
  const char* layout;
} tilec_tensor_spec;

/* A memory layout for any tensor by name (an output, or an input). */
typedef struct tilec_layout_spec {
  const char* tensor;
  const char* layout;
} tilec_layout_spec;

/* A kernel's forced tile ("kernel_0", one size per index; see `tilec explain`). */
typedef struct tilec_tile_spec {
  const char* kernel;
  int count;
  const int64_t* sizes;
} tilec_tile_spec;

/* Compile options; zero-initialize, then set what you need. */
typedef struct tilec_compile_options {
  const tilec_layout_spec* layouts; /* extra layouts, e.g. of outputs */
  size_t num_layouts;
  const tilec_tile_spec* tiles;
  size_t num_tiles;
  int no_vector;  /* nonzero: the flat kernel form even on CPU devices */
  int no_cache;   /* nonzero: compile again even if an equal program is cached */
  int no_tuning_cache; /* nonzero: ignore the tuning cache (`tilec tune`): the cost model's picks */
  /* > 0: first tune the kernels the tuning cache does not know yet, within
   * this many seconds in all, and keep the winners there (also TILEC_TUNE=S).
   * 0: no tuning (the default). */
  double tune_budget_seconds;
  /* Constant inputs (a network's weights), by name: the caller promises that
   * their contents do not change between runs (see tilec_program_run), so the
   * kernels that read only them (a relayout of the weights) run in the first
   * run and are skipped later. NULL/0: none. A name that is not an input is a
   * TILEC_ERROR_USER error. A program compiled with constants is never shared
   * with another live handle (the in-process cache lends it to one at a time). */
  const char* const* constant_inputs;
  size_t num_constant_inputs;
} tilec_compile_options;

/* Parses Tile `source` without shapes (`source_name` as for
 * tilec_program_compile) and sets `*inputs` to its input names, separated by
 * commas ("D,K"), valid until this thread's next call. TILEC_ERROR_USER with
 * the location for a syntax error: a front end can report it where the
 * source is given, before any shape is known. */
TILEC_API tilec_status tilec_source_inputs(const char* source, const char* source_name, const char** inputs,
                                           tilec_error* error);
/* As tilec_source_inputs, for the output names ("R"), in signature order. */
TILEC_API tilec_status tilec_source_outputs(const char* source, const char* source_name, const char** outputs,
                                            tilec_error* error);

/* Compiles Tile `source` (`source_name` is shown in error messages; may be
 * NULL) for `device` with one spec per program input. `options` may be NULL. */
TILEC_API tilec_status tilec_program_compile(tilec_device device, const char* source,
                                             const char* source_name,
                                             const tilec_tensor_spec* inputs, size_t num_inputs,
                                             const tilec_compile_options* options,
                                             tilec_program* program, tilec_error* error);
TILEC_API tilec_status tilec_program_release(tilec_program program);

/* ---- Gradients ------------------------------------------------------------------------- */

/* What to differentiate (docs/user-guide.md, "tilec grad"); zero-initialize.
 * A NULL spec, or an empty list, means every float input / every float output. */
typedef struct tilec_gradient_spec {
  const char* const* wrt; /* inputs whose gradients to compute */
  size_t num_wrt;
  const char* const* outputs; /* outputs to differentiate */
  size_t num_outputs;
  /* Forward outputs or named intermediates the caller has from its forward
   * run: inputs of the gradient program (after the incoming gradients, under
   * their own names), which then does not compute them again. */
  const char* const* saved;
  size_t num_saved;
} tilec_gradient_spec;

/* Derives the reverse-mode gradient of Tile `source` bound to `inputs` and
 * sets `*gradient` to its Tile text, valid until this thread's next call.
 * The gradient program's inputs are the program's inputs, then `O_grad` (the
 * incoming gradient, shaped like O) per differentiated output O, then the
 * tensors of spec->saved; its outputs
 * are `X_grad` per input X of spec->wrt (a name taken already gets a suffix
 * `_2`, …; the text's signature has the names). It is derived for these
 * shapes. TILEC_ERROR_USER for an unknown or non-float name or a statement
 * without a gradient rule (with its location). Layouts in `inputs` are
 * ignored. */
TILEC_API tilec_status tilec_gradient_source(const char* source, const char* source_name,
                                             const tilec_tensor_spec* inputs, size_t num_inputs,
                                             const tilec_gradient_spec* spec, const char** gradient,
                                             tilec_error* error);

/* Compiles the gradient program of `source` (as tilec_gradient_source
 * derives it) for `device`: its inputs (tilec_program_input) are `inputs`
 * (with their layouts) then the row-major incoming gradients; its outputs
 * the gradients. `spec` and `options` may be NULL. */
TILEC_API tilec_status tilec_program_compile_gradient(tilec_device device, const char* source,
                                                      const char* source_name,
                                                      const tilec_tensor_spec* inputs, size_t num_inputs,
                                                      const tilec_gradient_spec* spec,
                                                      const tilec_compile_options* options,
                                                      tilec_program* program, tilec_error* error);

/* ---- Querying -------------------------------------------------------------------------- */

/* One input or output of a compiled program. Pointers stay valid as long as the program. */
typedef struct tilec_tensor_info {
  const char* name;
  tilec_dtype dtype;
  int rank;
  const int64_t* dims;
  const char* layout;     /* a spec that describes the compiled layout */
  const int64_t* strides; /* element strides per dim for plain layouts; NULL if blocked */
  size_t bytes;           /* bytes the tensor occupies in its layout (padding included) */
  size_t alignment;       /* memory at a multiple of this (bytes) can be used in place */
} tilec_tensor_info;

TILEC_API tilec_status tilec_program_num_inputs(tilec_program program, size_t* count,
                                                tilec_error* error);
TILEC_API tilec_status tilec_program_num_outputs(tilec_program program, size_t* count,
                                                 tilec_error* error);
TILEC_API tilec_status tilec_program_input(tilec_program program, size_t index,
                                           tilec_tensor_info* info, tilec_error* error);
TILEC_API tilec_status tilec_program_output(tilec_program program, size_t index,
                                            tilec_tensor_info* info, tilec_error* error);

/* ---- Running --------------------------------------------------------------------------- */

/* Caller memory holding one tensor. With `strides` NULL the memory is in the
 * tensor's compiled layout (tilec_tensor_info.layout, `bytes` of it); with
 * strides (elements per step of each dim, >= 0) it may be any strided view.
 * Memory in the compiled layout, aligned to tilec_tensor_info.alignment, is
 * used in place on CPU devices (llvm:cpu; OpenCL through
 * CL_MEM_USE_HOST_PTR); any other is copied in and out. */
typedef struct tilec_tensor {
  void* data;   /* inputs are only read */
  size_t bytes; /* bytes available at data */
  tilec_dtype dtype;
  int rank;
  const int64_t* dims;
  const int64_t* strides;
} tilec_tensor;

/* Runs the program: one tensor per input and per output, in the order of
 * tilec_program_input / tilec_program_output; returns when the outputs are
 * written. Inputs and outputs must not overlap.
 *
 * Constant inputs (tilec_compile_options.constant_inputs): between runs of
 * this handle, a constant input given at the same address must hold the same
 * contents there, unless tilec_program_invalidate_constants was called after
 * the contents changed; otherwise the run may use results computed from the
 * old contents. A constant given at another address (or cl_mem) than in the
 * previous run is detected and read anew, with no call needed. */
TILEC_API tilec_status tilec_program_run(tilec_program program, const tilec_tensor* inputs,
                                         size_t num_inputs, const tilec_tensor* outputs,
                                         size_t num_outputs, tilec_error* error);

/* Tells the program that the contents of its constant inputs changed in
 * place: the next run of every buffer set reads them anew. Not to be called
 * while a run of this program is in progress on another thread. A no-op for
 * a program without constant inputs; TILEC_ERROR_USAGE for a NULL or
 * released handle. */
TILEC_API tilec_status tilec_program_invalidate_constants(tilec_program program, tilec_error* error);

/* ---- OpenCL memory ---------------------------------------------------------------------- */

/* Running on memory that is already on an OpenCL device, without a copy. The
 * OpenCL objects are passed as void* so that this header needs no OpenCL
 * headers: cast a cl_context, cl_command_queue or cl_mem to void* and back.
 *
 * A cl_mem is only usable in the cl_context it was created in, so Tilec's
 * device and the caller must share one context. Either open the device on
 * the caller's context and queue (tilec_device_open_cl: what a framework
 * with its own context wants), or create the buffers in the context of a
 * device opened by id (tilec_device_cl_handles).
 *
 * Synchronisation: tilec_program_run_memory enqueues every command on the
 * device's command queue (the caller's one with tilec_device_open_cl) and
 * returns only when they are complete, so the outputs are ready for any
 * queue of the context when it returns. Work the caller enqueued before on
 * the same in-order queue is done before Tilec's kernels start; work on
 * another queue that writes an input must be finished (clFinish or an event
 * wait) before the call. */

/* What tilec_tensor.data is. */
typedef enum tilec_memory {
  TILEC_MEMORY_HOST = 0,  /* host memory, as for tilec_program_run */
  TILEC_MEMORY_CL_MEM = 1, /* a cl_mem buffer holding the tensor in its compiled layout
                            * (tilec_tensor_info.layout, at least .bytes bytes; the
                            * tensor's `bytes` and `strides` fields must be 0 and NULL) */
  TILEC_MEMORY_FORCE_INT_ = 0x7fffffff
} tilec_memory;

/* Opens the OpenCL device of `cl_command_queue` on the caller's `cl_context`
 * and queue (both retained until the device and every program compiled on
 * it are released). The queue may be in-order or out-of-order, with or
 * without profiling. TILEC_ERROR_USAGE for a NULL or invalid handle, or a
 * queue that belongs to another context. */
TILEC_API tilec_status tilec_device_open_cl(void* cl_context, void* cl_command_queue,
                                            tilec_device* device, tilec_error* error);

/* The cl_context and cl_command_queue an OpenCL device runs on (not
 * retained for the caller: valid while the device handle is live).
 * TILEC_ERROR_USAGE for a device that is not an OpenCL device. Either out
 * pointer may be NULL. */
TILEC_API tilec_status tilec_device_cl_handles(tilec_device device, void** cl_context,
                                               void** cl_command_queue, tilec_error* error);

/* tilec_program_run where each tensor says what its memory is:
 * `input_memory[i]` for inputs[i] and `output_memory[i]` for outputs[i]
 * (either array NULL: all host memory). A cl_mem is used in place; it must
 * be a buffer of the device's context holding at least the tensor's
 * tilec_tensor_info.bytes, and an output's must be writable by kernels; a
 * cl_mem given to a program of a CPU device (llvm:cpu), a NULL, invalid,
 * too small or read-only one, or one from another context is a
 * TILEC_ERROR_USAGE error and nothing runs. */
TILEC_API tilec_status tilec_program_run_memory(tilec_program program, const tilec_tensor* inputs,
                                                const tilec_memory* input_memory, size_t num_inputs,
                                                const tilec_tensor* outputs,
                                                const tilec_memory* output_memory,
                                                size_t num_outputs, tilec_error* error);

/* ---- Models (ONNX) --------------------------------------------------------------------- */

/* An ONNX model imported as one Tile program (docs/onnx.md): compile its
 * source with tilec_program_compile, giving its inputs and its constants
 * (the weights, marked as constant inputs), and run it like any program. */
typedef struct tilec_model_s* tilec_model;

/* A model input, output or constant. Pointers stay valid as long as the model. */
typedef struct tilec_model_tensor {
  const char* name;      /* as in the ONNX graph */
  const char* tile_name; /* the program's input or output (for a constant, its input) */
  tilec_dtype dtype;
  int rank;
  const int64_t* dims;
  const void* data; /* a constant's values, row-major; NULL for inputs and outputs */
  size_t bytes;     /* of data */
} tilec_model_tensor;

/* Imports the ONNX model in `bytes` (`origin` names it in messages; may be
 * NULL). `shapes` gives the shapes of graph inputs, by ONNX name, where the
 * model leaves dimensions symbolic (NULL/0: none; layouts are ignored).
 * TILEC_ERROR_USER naming every node that cannot be converted. */
TILEC_API tilec_status tilec_model_import_onnx(const void* bytes, size_t size, const char* origin,
                                               const tilec_tensor_spec* shapes, size_t num_shapes,
                                               tilec_model* model, tilec_error* error);
TILEC_API tilec_status tilec_model_release(tilec_model model);
/* The Tile program (valid as long as the model). */
TILEC_API tilec_status tilec_model_source(tilec_model model, const char** source, tilec_error* error);
/* Counts of graph inputs, outputs and constants; any out pointer may be NULL. */
TILEC_API tilec_status tilec_model_counts(tilec_model model, size_t* inputs, size_t* outputs,
                                          size_t* constants, tilec_error* error);
TILEC_API tilec_status tilec_model_input(tilec_model model, size_t index, tilec_model_tensor* info,
                                         tilec_error* error);
TILEC_API tilec_status tilec_model_output(tilec_model model, size_t index, tilec_model_tensor* info,
                                          tilec_error* error);
TILEC_API tilec_status tilec_model_constant(tilec_model model, size_t index, tilec_model_tensor* info,
                                            tilec_error* error);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* TILEC_TILEC_H_ */
