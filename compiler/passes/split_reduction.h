// SplitReduction: a reduction whose output is too small to keep the cores
// busy (a full sum, global pooling of one image) as two contractions, so
// that the big one has parallel work and the result stays deterministic.
#pragma once

#include <optional>
#include <string>

#include "compiler/ir/flat.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

struct SplitReductionResult {
  lang::TensorDecl partials;     // the temporary T[s, out...] (row-major)
  lang::ContractionOp partial;   // T[s, out...] = agg(...): s is now an output index
  lang::ContractionOp combine;   // O[out...] = agg(T[s, out...])
};

// Pre: `flat` is Flatten(program, c). When c is a Sum, Prod, Max or Min of
// one input (or Sum of a product) without constraints or a default tensor,
// over plain layouts, whose output has at most `max_outputs` elements and
// whose box has at least `min_points` points, splits it along its outermost
// reduction variable s (the largest stride in the first input, at least
// `min_chunks` values, the rest of the box at least 64 points): partial results per value of s into `name`, then a
// combine kernel over s. The chunks are fixed by the shapes (never by the
// thread count), so results are reproducible. nullopt otherwise.
std::optional<SplitReductionResult> SplitReduction(const lang::Program& program,
                                                   const lang::ContractionOp& c,
                                                   const FlatContraction& flat, const std::string& name,
                                                   int64_t max_outputs, int64_t min_points,
                                                   int64_t min_chunks);

}  // namespace tilec::compiler
