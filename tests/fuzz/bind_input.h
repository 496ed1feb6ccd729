// The binder and compile harnesses' input: "SOURCE\0PARAMS" (fuzz_common.h).
// The source is parsed; the parameter bytes then give each input, in order,
// an element type, a rank (the declared one unless the byte asks for another),
// its dimensions and a layout, and each output a layout. Missing bytes take
// defaults (f32, the declared rank, a size from 2 to 7 picked by the
// dimension's name, row-major), so a plain Tile file is a useful seed.
#pragma once

#include <map>
#include <string>

#include "tests/fuzz/fuzz_common.h"
#include "tile_lang/ast.h"
#include "tile_lang/types.h"

namespace tilec::fuzz {

struct BindInput {
  lang::ast::Function function;
  std::map<std::string, lang::Shape> shapes;
  std::map<std::string, std::string> layouts;
};

struct DimLimits {
  int64_t max_small = 16;  // ordinary sizes are 1 .. max_small
  bool huge = false;       // also 2^31, 2^40, 2^62, INT64_MAX, -1
};

// Parses `in.text` (UserError if it does not parse) and derives the shapes
// and layouts from `params`, which it consumes.
BindInput MakeBindInput(const SplitInput& in, ParamReader& params, const DimLimits& limits);

}  // namespace tilec::fuzz
