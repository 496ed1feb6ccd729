// Lint: warnings about a parsed Tile program that is valid but likely not
// what its author meant. Pure: reads the AST only, before any shape is bound.
#pragma once

#include <vector>

#include "support/error.h"
#include "tile_lang/ast.h"

namespace tilec::lang {

// One warning (UserError::Warning, with the name's location) for each
//  - tensor a statement computes that no later statement reads and that is
//    not an output ("'T' is computed but never used"), except the value of
//    a bind-time check (`Ok = assert_square(N == M);`);
//  - input no statement reads ("input 'B' is never used").
// In source order.
std::vector<UserError> Lint(const ast::Function& f);

}  // namespace tilec::lang
