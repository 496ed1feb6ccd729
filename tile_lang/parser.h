// Parse: Tile source text -> ast::Function.
#pragma once

#include <cstddef>

#include "support/source.h"
#include "tile_lang/ast.h"

namespace tilec::lang {

// The work a parse did, for tests that bound it (the lexer runs on demand, so
// an error near the start of a huge input stops after a few tokens).
struct ParseStats {
  size_t tokens_lexed = 0;  // filled in when the parse ends, also on an error
};

struct ParseOptions {
  // Syntax errors to find before giving up. 1 (the default): stop at the
  // first, so an error near the start of a huge input costs a few tokens.
  // More: after an error in a statement, skip to its ';' and go on, so the
  // thrown UserError is the first error with the later ones in
  // more_errors() (the command line shows several at once). The lexer goes
  // on after the bad character of a lexical error, so those count too.
  size_t max_errors = 1;
};

// Parses one `function (...) -> (...) { ... }` program.
// Pre: none (any bytes are accepted as input).
// Post: a Function whose nodes all carry spans into `source`, or a UserError
// with the location of the first lexical or syntax error (in reading order;
// further errors in more_errors() when options.max_errors > 1).
// Never crashes or hangs; nesting deeper than a fixed limit is a UserError.
ast::Function Parse(const SourceFilePtr& source, ParseStats* stats = nullptr, const ParseOptions& options = {});

// Parses a single expression (used by tests and the API), e.g. "a + b * 2".
ast::ExprPtr ParseExpr(const SourceFilePtr& source, ParseStats* stats = nullptr);

}  // namespace tilec::lang
