// PlaidML's reverse_grad(X, c) for the gradient stage (gradient.h).
#pragma once

#include <map>
#include <string>

#include "tile_lang/ast.h"

namespace tilec::lang::grad {

// reverse_grad(X, c) is X whose gradient is multiplied by -c; binding
// forgets it. Returns `f` with each call made a tensor of its own, defined
// just before its statement (`ReverseGrad = X;`); `factors` gets each such
// tensor's gradient factor (-c). UserError if c is not a literal.
ast::Function RewriteReverseGrads(const ast::Function& f, std::map<std::string, double>& factors);

}  // namespace tilec::lang::grad
