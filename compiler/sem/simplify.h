// The sem-tree simplifier: cleans up what the code generator writes plainly
// (PlaidML's simplifier.cc, plus loop folding), so that backends and readers
// see small kernels.
//
// Rewrites, applied until nothing changes:
//  * constant folding of integer, index and bool operations (with C
//    semantics on the operand type: operations C leaves undefined — signed
//    overflow, division by zero, out-of-range shifts — are left unfolded),
//    of casts between them, of min/max/clamp, of ?: and select with a
//    constant condition, and of lanes of a broadcast; floats are not folded;
//  * identities x+0, x-0, x*1, x*0, x/1, 0/x, x%1, x|0, x^0, x<<0, x>>0 on
//    integers (x*1 and x/1 on floats too), `!!b`, `-(-x)`, `true && b`, …;
//  * scoped constant propagation: `int v = <constant>;` whose variable is
//    never assigned in the rest of its block is removed and v replaced by the
//    constant (integer, index and bool variables);
//  * alias elimination: `T x = y;` (y a variable) is removed and x replaced
//    by y when neither is assigned, nor y redeclared, in the rest of the block;
//  * if-folding: constant conditions pick a branch; empty branches go (an
//    empty then-branch inverts the condition); loops `while (false)` go;
//  * for-loops with 0 iterations (or an empty body) are removed, with 1
//    iteration inlined (`{ T v = begin; body }`);
//  * blocks that declare nothing are flattened into their parent; empty
//    blocks (comments only) are removed.
//
// Pre: `f` passes Verify. Post: the result passes Verify and computes the
// same thing; parameters, index type and work-group size are unchanged.
#pragma once

#include "compiler/sem/ir.h"

namespace tilec::sem {

Function Simplify(const Function& f);

}  // namespace tilec::sem
