// What a backend needs to build and launch a program's kernels besides their
// sem module: per kernel, in launch order, its function, its launch geometry
// and its buffer parameters. The runtime makes it from a compiled program
// (runtime/launch_table.h); backends see nothing else of the compiler's
// plans (no tile search, no tuning configuration).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tile_lang/layout.h"
#include "tile_lang/types.h"

namespace tilec::hal {

struct LaunchTable {
  // One buffer parameter of a kernel: the tensor it holds.
  struct Buffer {
    std::string tensor;    // the tensor's name, for messages
    bool written = false;  // an output of the kernel (else only read)
    lang::DataType dtype = lang::DataType::F32;
    // Set: the tensor is stored as an RGBA image (OpenCL image2d_t).
    std::optional<lang::ImageStorage> image;
  };
  struct Kernel {
    std::string function;                      // its sem function's name in the module
    std::array<int64_t, 3> global = {1, 1, 1};  // work items per dimension
    std::array<int64_t, 3> local = {1, 1, 1};   // work-group size
    std::vector<Buffer> buffers;                // the parameters: outputs, then inputs
    // The points of the kernel's index space (the product of its flat
    // index ranges), -1 when it has none (special and direct kernels): the
    // CPU runs a small launch on the calling thread.
    int64_t points = -1;
  };
  std::vector<Kernel> kernels;  // in launch order: Executable::Launch's index
};

}  // namespace tilec::hal
