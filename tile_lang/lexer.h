// Lex: Tile source text -> tokens.
//
// The token set is Tile's (PlaidML tile.l) plus Tilec's extensions:
//  * keywords `function default no_defract` (Tile's internal entry keywords
//    `polynomial expression contraction` are ordinary index names here);
//  * INT `[0-9]+` (must fit in int64, except 9223372036854775808, which only
//    the parser's folding of `-9223372036854775808` may use);
//  * FLOAT `1.0`, `2.5E-1`, `1e3` (no `.5`, no `1.`, must be a finite double);
//  * ID `[A-Z][A-Za-z0-9_]*'?` and IDXID `[a-z][A-Za-z0-9_]*'?`; `#name` is an
//    ID and `$name` an IDXID whatever the spelling. Tile requires a letter
//    after `#`/`$`; Tilec also allows a digit or `_`, so every temporary name
//    (`_T0`) can be written;
//  * punctuation, including `[[ ]] -> << >> <= >= == !=` and the extensions
//    `&& || ! %`;
//  * comments `// ...` and `/* ... */` (Tile has none).
// Longest match wins, as in flex: `[[` is one token, `2e3` is a FLOAT while
// `2e` is INT 2 followed by IDXID e.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/source.h"

namespace tilec::lang {

// (enumerator, description used in diagnostics)
#define TILEC_TOKEN_KINDS(X)                                                              \
  X(End, "end of input")                                                                  \
  X(Int, "integer literal") X(Float, "float literal")                                     \
  X(Id, "tensor name") X(IdxId, "index name")                                             \
  X(KwFunction, "'function'") X(KwDefault, "'default'") X(KwNoDefract, "'no_defract'")    \
  X(LParen, "'('") X(RParen, "')'") X(LBracket, "'['") X(RBracket, "']'")                 \
  X(LLBracket, "'[['") X(RRBracket, "']]'") X(LBrace, "'{'") X(RBrace, "'}'")             \
  X(Comma, "','") X(Colon, "':'") X(Semicolon, "';'") X(Question, "'?'") X(Dot, "'.'")    \
  X(Arrow, "'->'") X(Assign, "'='") X(Eq, "'=='") X(Ne, "'!='") X(Lt, "'<'") X(Gt, "'>'") \
  X(Le, "'<='") X(Ge, "'>='") X(Shl, "'<<'") X(Shr, "'>>'") X(Plus, "'+'") X(Minus, "'-'") \
  X(Star, "'*'") X(Slash, "'/'") X(Percent, "'%'") X(Amp, "'&'") X(Pipe, "'|'")           \
  X(Caret, "'^'") X(Tilde, "'~'") X(Bang, "'!'") X(AmpAmp, "'&&'") X(PipePipe, "'||'")

enum class TokenKind : uint8_t {
#define TILEC_X(e, d) e,
  TILEC_TOKEN_KINDS(TILEC_X)
#undef TILEC_X
};

// "tensor name", "']'", … — for messages such as "expected ']'".
std::string_view Describe(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::End;
  SourceSpan span;
  std::string raw;       // the source text of the token, as written
  std::string name;      // Id / IdxId: the name without a `#`/`$` escape
  bool escaped = false;  // Id / IdxId written with `#`/`$`
  uint64_t int_value = 0;    // Int: 0 .. 2^63 (2^63 only valid after unary minus)
  double float_value = 0;    // Float: finite, non-negative
};

// Lexes the whole source. The result always ends with one End token whose
// (empty) span sits just after the last real token, which is where "unexpected
// end of input" errors point. Throws UserError at the first lexical error:
// unexpected character, malformed or out-of-range number, unterminated block
// comment, `#`/`$` not followed by a name.
std::vector<Token> Lex(const SourceFilePtr& source);

class Lexer;

// Tokens lexed on demand: token i is lexed when first asked for, so a parser
// that stops early (an error near the start of a huge input) does work in
// proportion to what it read, not to the input. A lexical error is thrown
// when the token it is in is first asked for. References returned by At stay
// valid for the stream's lifetime.
class TokenStream {
 public:
  explicit TokenStream(const SourceFilePtr& source);
  ~TokenStream();
  TokenStream(const TokenStream&) = delete;
  TokenStream& operator=(const TokenStream&) = delete;

  // Token i; past the end, the End token.
  const Token& At(size_t i);
  // Tokens lexed so far (End included), a measure of the work done.
  size_t lexed() const { return tokens_.size(); }

 private:
  std::unique_ptr<Lexer> lexer_;
  std::deque<Token> tokens_;
  bool ended_ = false;
};

}  // namespace tilec::lang
