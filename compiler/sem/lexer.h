// The tokens of sem text (the parser's lexer, parser.h): identifiers,
// numbers (`7`, `1.5f`, `0.5h`, `1e-05`), punctuation (`(`, `<=`, `&&`, `#`,
// …) and `//` comments, which are tokens too (inside a function they are
// Comment statements).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/source.h"

namespace tilec::sem {

enum class Tok : uint8_t { End, Ident, Int, Float, Punct, Comment };

struct Token {
  Tok kind = Tok::End;
  std::string text;  // Comment: the text after `// ` (without the newline)
  SourceSpan span;
};

// The tokens of the whole text; the last is End. UserError at an unexpected
// character or a malformed number.
std::vector<Token> Lex(const SourceFilePtr& source);

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace tilec::sem
