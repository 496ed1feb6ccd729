// Ahead-of-time output of `tilec compile FILE -s … -o NAME`: files another
// program builds or loads, so an application runs the kernels with no JIT
// and no LLVM at run time.
//
//  * LLVM target: NAME.o (the kernels for the host CPU or --cpu's, which may
//    be an AArch64 one: an ELF object for aarch64-unknown-linux-gnu then;
//    position-independent; the same optimized code the JIT runs), NAME.h (one C function per
//    program, `int NAME(const float* D, const float* K, float* R)`, with the
//    shapes, layouts and buffer sizes it was compiled for in comments and
//    macros), NAME.c (that function: temporaries, launches in order) and
//    tilec_aot_runtime.{h,c} next to them (a pthread pool).
//  * OpenCL target: NAME.cl (the kernels' OpenCL C) and NAME.json, the launch
//    description: buffers (name, role, dtype, shape, layout, bytes) and
//    kernels in order (name, argument buffers, global and local sizes).
//
// Kernel symbols are prefixed with NAME (`NAME_kernel_0`), so several
// programs link into one application.
//
// With `constants` (an ONNX model's weights), the LLVM target also writes
// NAME.weights (the constants' bytes, each at a multiple of 64),
// NAME_weights.S (which embeds that file into the object with .incbin) and
// NAME_model.{h,c}: `int NAME_model(const float* input, float* output)`,
// the graph's inputs and outputs only, calling NAME with the embedded
// weights.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/pipeline.h"
#include "hal/hal.h"
#include "tile_lang/tensor.h"

namespace tilec::tools {

// Writes the files for `compiled` on `device` (an llvm:cpu device, else
// OpenCL); `out` is NAME with an optional directory. Returns the paths
// written. UserError when NAME is not a C identifier or a file cannot be
// written.
std::vector<std::string> WriteAot(const compiler::CompiledProgram& compiled, hal::Device& device,
                                  const std::string& out, const std::string& source_file,
                                  const std::map<std::string, lang::Tensor>* constants = nullptr);

}  // namespace tilec::tools
