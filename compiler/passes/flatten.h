// Flatten: a bound contraction -> its flat table (ir/flat.h), called by Lower
// (docs/architecture.md, "The pipeline").
#pragma once

#include <optional>

#include "compiler/ir/flat.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

// Pre: `op` is a contraction of `program` (Bind's output): every tensor it
// names is declared in program.tensors with dims matching the access ranks;
// op.bounds holds one box [lo, hi] per entry of op.index_vars, containing
// every valid assignment; every index polynomial uses only op.index_vars.
//
// Post: Verify(result) holds (the pipeline checks it after Lower), and the
// result denotes the same contraction:
//  * indices = op.index_vars in order, each shifted so its lower bound is 0
//    (range = hi - lo + 1); the shift is folded into offsets and constraints.
//    Indices are kept even when their range is 1 or no tensor uses them (an
//    index used only by a constraint still multiplies a sum).
//  * accesses = output, then inputs; stride of index i in tensor T is
//    sum_d coeff(poly_d, i) * stride_d over T's plain layout (one physical dim
//    per logical dim, divisor 1: row-major or any strides); offset =
//    sum_d const(poly_d) * stride_d; limit = the layout's element count.
//  * constraints: 0 <= poly and poly <= dim-1 for every access dimension
//    (output first, then inputs, lower side before upper side), then both
//    sides of every user constraint (multiplied by the common denominator
//    when its coefficients are fractional). Each side is divided by the gcd
//    of its coefficients; sides implied by the index box are dropped;
//    sides with the same coefficients are merged into the tightest one.
//  * An empty box (lo > hi for some index: no valid assignment) gives that
//    index range 1 and adds the constraint (0,...,0) <= -1, which no point
//    satisfies, so the contraction contributes nothing.
//  * kernel_outputs = {op.output}; no post-ops (fusion adds them).
//
// Blocked layouts: a dimension split once into blocks of B (nChw16c's c)
// must be indexed by one variable of its own, starting at 0 (the same B
// wherever that variable meets a blocked dimension). The variable becomes two
// flat indices "c/16" (range ceil(range/B)) and "c%16" (range B), with
// c = B*(c/16) + c%16 everywhere, plus the constraint c <= range-1 when B does
// not divide the range. `vars` records every variable's form.
//
// Errors: InternalError for any other blocked use; InternalError "fractional index
// polynomials need defractionalization" when a tensor access has a
// non-integer coefficient or constant; UserError when strides or offsets
// overflow 64 bits; InternalError for a violated precondition.
FlatContraction Flatten(const lang::Program& program, const lang::ContractionOp& op);

// One logical dimension's physical parts: a plain dim has one part
// (block 1); a blocked one (nChw16c's c) an outer part (divisor B) and an
// inner part (divisor 1, size B):
//     offset contribution = outer_stride * (i / B) + stride * (i % B).
struct DimParts {
  int64_t stride = 0;        // plain: the stride; blocked: the inner part's
  int64_t block = 1;         // 1: plain; B: blocked
  int64_t outer_stride = 0;  // blocked: the outer part's stride
};

// Per logical dimension of `t`, or nullopt for layouts that are neither
// (a dimension split more than once).
std::optional<std::vector<DimParts>> LayoutParts(const lang::TensorDecl& t);

// Flatten, or nullopt where Flatten would throw InternalError (layouts or
// index polynomials it cannot express): Lower then emits a Direct kernel.
std::optional<FlatContraction> TryFlatten(const lang::Program& program,
                                          const lang::ContractionOp& op);

}  // namespace tilec::compiler
