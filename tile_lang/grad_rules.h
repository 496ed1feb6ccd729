// The derivative of every elementwise function, in one table.
//
// Used by the gradient stage (gradient.h). Each rule gives, for one bound
// elementwise op `y = fn(x0, x1, ...)`, the contribution of `g` (the gradient
// of `y`, shaped like `y`) to the gradient of each operand, as a Tile
// expression over `g`, `y` and the operands, still shaped like `y`
// (the caller sums broadcast dimensions away and converts to the operand's
// type). Conventions where the derivative is not defined, as PyTorch's:
//  * `min`/`max` of two equal values give each operand half of `g`;
//  * `abs` at 0, `floor`, `ceil`, `round` give 0 (they are flat almost everywhere);
//  * `pow(a, b)` gives `b` no gradient where `a <= 0`;
//  * `c ? a : b` routes `g` to `a` where `c` holds and to `b` elsewhere
//    (the deriver reads a rectifier, `c ? t : 0` with c comparing t with 0,
//    by its result instead: g where the result is not 0, relu'(0) = 0).
// Comparisons, logical and bit operations, `index` and casts to integers
// have integer or boolean results and carry no gradient.
#pragma once

#include <vector>

#include "tile_lang/ast.h"
#include "tile_lang/program.h"

namespace tilec::lang {

// One entry per operand of `fn`: its contribution, or null where none flows
// (a constant derivative of 0, or a condition). `x` are the operands as
// expressions (names or literals), `y` the result, `g` its gradient.
std::vector<ast::ExprPtr> ElementwiseGradient(ElemFn fn, const std::vector<ast::ExprPtr>& x,
                                              const ast::ExprPtr& y, const ast::ExprPtr& g);

}  // namespace tilec::lang
