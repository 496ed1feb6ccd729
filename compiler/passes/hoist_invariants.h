// HoistInvariants: per-channel work out of per-element kernels (batch norm).
// Part of stage 4 (before Lower), on CPU devices.
//
// Batch norm, `Y = (X - Mean) / sqrt(Var + Eps) * Gamma + Beta` over NHWC
// data, binds to ops in source order: `_T0 = X - Mean` (full size), then
// `_T1 = Var + Eps`, `_T2 = sqrt(_T1)` (per channel), then the rest (full
// size). Lower fuses forward from the first op, so without hoisting `_T0`
// is a kernel of its own (the division reads `_T2`, not computed yet): a
// full extra pass over memory (bench/suite batch norm n8 56x56 c64). And
// the division would run per element, where a per-channel reciprocal and a
// multiply do.
#pragma once

#include "tile_lang/program.h"

namespace tilec::compiler {

// Pre: `program` came from Bind.
// Post: the same results (up to the rounding below) with
//  * every elementwise op that reads only program inputs, scalars and the
//    outputs of ops so moved, and whose output has fewer elements than the
//    program's largest tensor, moved to the front (in its order): Lower
//    then finds it computed before the full-size ops that read it;
//  * a float division `A / B` whose divisor B is a tensor with at most
//    1/16 of the result's elements (a broadcast per-channel value) and is
//    moved to the front by the rule above becomes `A * R` with
//    `R = 1 / B` (a new op at the front, tensor `B_recip`): one division
//    per channel instead of per element. The product of a rounded
//    reciprocal is within 1.5 ULP of the correctly rounded quotient (a
//    relative 2e-7 in f32), far inside the tolerance every comparison with
//    the evaluator uses (1e-4), and keeps division's infinities and NaNs
//    for B = 0 or A = 0.
lang::Program HoistInvariants(const lang::Program& program);

}  // namespace tilec::compiler
