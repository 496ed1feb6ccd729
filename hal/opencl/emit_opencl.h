// Lowers a sem module to OpenCL C 1.2 source.
//
// Each sem Function becomes one function (`__kernel void` for kernels, with
// `reqd_work_group_size` when it carries a work-group size); pointer
// parameters get their `__global` / `__local` / `__constant` qualifier,
// `const` and `restrict`. The sem semantics (compiler/sem/ir.h) map to C as:
//  * the index type is `int` or `long`; get_*_id() results are cast to it;
//  * bool buffers and arrays are `char` (0/1), converted on load and store;
//    bool vectors are OpenCL masks (-1/0 in an integer vector), converted to
//    the element size each use needs (select() wants the values' size);
//  * scalar arithmetic on 8- and 16-bit integers is cast back to its type,
//    undoing C's promotion to int (sem wraps in the operand type);
//  * vector loads/stores of N contiguous elements use vloadN(0, p + i) /
//    vstoreN, vector casts convert_TN(), Select with a vector condition
//    select(f, t, mask); float min/max are fmin/fmax; a Clamp is clamp()
//    only when its bounds are constants in order (else min(max()));
//  * f16 uses `half` with cl_khr_fp16; without it (`fp16 = false`) half is a
//    storage format: buffers stay `half*` and are read and written with
//    vload_half / vstore_half, arithmetic, variables and arrays are float;
//  * `#pragma OPENCL EXTENSION cl_khr_fp16/fp64 : enable` only when used;
//  * every binary operation is parenthesized; names that collide with
//    OpenCL keywords, types, built-ins or macros are renamed (`min` -> `min_`).
//
//  * a parameter listed in EmitOptions::read_images is an image2d_t (above).
//
// Pre: the module passes sem::Verify (checked). Throws UserError if a kernel
// uses f64 and `fp64` is false; InternalError for trees OpenCL cannot express
// (bool or emulated-half kernel parameters passed by value).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/sem/ir.h"

namespace tilec::hal::opencl {

struct EmitOptions {
  // Use native_exp/log/sqrt/sin/cos/tan for f32: faster, less exact.
  bool fast_math = false;
  // The device has cl_khr_fp16 (half arithmetic); else half is storage only.
  bool fp16 = true;
  // The device has cl_khr_fp64.
  bool fp64 = true;
  // Kernel parameters that are images read by the kernel (`__read_only
  // image2d_t`, CL_RGBA; tile_lang/layout.h ImageStorage): per kernel name,
  // per parameter position, the image's width in pixels. A load of element
  // e reads pixel e / 4 at (x, y) = ((e/4) % width, (e/4) / width) with
  // read_imagef and takes component e % 4 (each load site keeps the last
  // pixel it read, in private variables, and reads again only for another
  // pixel); a vector load of 4·k elements starting on a pixel reads whole
  // pixels. Such a parameter may only be
  // loaded from (InternalError otherwise).
  std::map<std::string, std::map<size_t, int64_t>> read_images;
};

std::string EmitOpenCL(const sem::Module& module, const EmitOptions& options = {});

}  // namespace tilec::hal::opencl
