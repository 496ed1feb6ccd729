// Ahead-of-time output of `tilec compile FILE -s … -o NAME`: files another
// program builds or loads, so an application runs the kernels with no JIT
// and no LLVM at run time.
//
//  * LLVM target: NAME.o (the kernels for the host CPU, position-independent;
//    the same optimized code the JIT runs), NAME.h (one C function per
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
#pragma once

#include <string>
#include <vector>

#include "compiler/pipeline.h"
#include "hal/hal.h"

namespace tilec::tools {

// Writes the files for `compiled` on `device` (an llvm:cpu device, else
// OpenCL); `out` is NAME with an optional directory. Returns the paths
// written. UserError when NAME is not a C identifier or a file cannot be
// written.
std::vector<std::string> WriteAot(const compiler::CompiledProgram& compiled, hal::Device& device,
                                  const std::string& out, const std::string& source_file);

}  // namespace tilec::tools
