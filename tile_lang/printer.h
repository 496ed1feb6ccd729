// Print: ast::Function -> Tile source text that parses back to an equal AST.
#pragma once

#include <string>

#include "tile_lang/ast.h"

namespace tilec::lang {

// Canonical Tile text: one statement per line, two-space indent, minimal
// parentheses that preserve the tree under Tile's precedence and
// associativity, `#`/`$` escapes where a name's spelling needs them.
// Post: Equal(Parse(Print(f)), f).
std::string Print(const ast::Function& f);
std::string Print(const ast::Expr& e);

}  // namespace tilec::lang
