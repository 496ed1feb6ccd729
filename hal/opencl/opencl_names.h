// Names OpenCL C gives a meaning to.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "compiler/sem/ir.h"

namespace tilec::hal::opencl {

// True if a variable called `name` would not compile in OpenCL C 1.2 or would
// hide something generated code uses: keywords and address-space words,
// scalar and vector type names (`float4`), built-in functions we emit
// (`min`, `select`, `exp`, …) and families of built-ins (`convert_*`,
// `vload*`, `native_*`, `get_*`, …), predefined macros (`INFINITY`,
// `FLT_MAX`, `CLK_*`, …), names starting with `__`, and the `tilec_` prefix
// the emitter keeps for its own temporaries.
bool IsReservedInOpenCL(std::string_view name);

// New names for the parameters and variables of `f` that are reserved: the
// name plus as many `_` as make it unused in `f` and unreserved (`min` ->
// `min_`); a name with a reserved prefix, which no suffix helps, gets the
// prefix `r_` (or `r1_`, `r2_`, … if that is taken): `get_j` -> `r_get_j`.
// Renaming by name keeps the scoping of the function unchanged.
std::map<std::string, std::string> RenameReservedNames(const sem::Function& f);

}  // namespace tilec::hal::opencl
