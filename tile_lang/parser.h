// Parse: Tile source text -> ast::Function.
#pragma once

#include "support/source.h"
#include "tile_lang/ast.h"

namespace tilec::lang {

// Parses one `function (...) -> (...) { ... }` program.
// Pre: none (any bytes are accepted as input).
// Post: a Function whose nodes all carry spans into `source`, or a UserError
// with the location of the first lexical or syntax error. Never crashes or
// hangs; nesting deeper than a fixed limit is a UserError.
ast::Function Parse(const SourceFilePtr& source);

// Parses a single expression (used by tests and the API), e.g. "a + b * 2".
ast::ExprPtr ParseExpr(const SourceFilePtr& source);

}  // namespace tilec::lang
