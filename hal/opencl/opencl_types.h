// OpenCL C's spellings of sem types the emitter (emit_opencl.cc) needs
// beyond the plain ones, and which optional floating types a kernel uses.
#pragma once

#include <string>

#include "compiler/sem/ir.h"

namespace tilec::hal::opencl {

// Whether a kernel uses f16 or f64 anywhere (parameters, variables,
// expressions): the extensions it needs.
struct FloatTypes {
  bool f16 = false, f64 = false;
};
FloatTypes OptionalFloatTypes(const sem::Function& f);

// Vector lane `lane` as OpenCL C selects it: "s0" … "sf".
std::string Lane(int lane);
// The integer vector type of `width` lanes of `bits` bits ("int4"): the type
// of a comparison's result, a mask.
std::string MaskType(int bits, int width);

}  // namespace tilec::hal::opencl
