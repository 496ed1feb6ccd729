#include "tile_lang/lexer.h"

#include <charconv>
#include <cstdint>

#include "support/error.h"

namespace tilec::lang {

std::string_view Describe(TokenKind kind) {
  switch (kind) {
#define TILEC_X(e, d) \
  case TokenKind::e:  \
    return d;
    TILEC_TOKEN_KINDS(TILEC_X)
#undef TILEC_X
  }
  TILEC_UNREACHABLE("bad TokenKind {}", static_cast<int>(kind));
}

namespace {

constexpr uint64_t kTwoTo63 = uint64_t{1} << 63;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsNameChar(char c) { return IsUpper(c) || IsLower(c) || IsDigit(c) || c == '_'; }

// Shows a byte in a message: 'c' when printable, '\xNN' otherwise.
std::string ShowChar(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("'\\x{:02X}'", u);
}

}  // namespace

class Lexer {
 public:
  explicit Lexer(const SourceFilePtr& source) : source_(source), text_(source->text) {}

  // The next token; after the last one, the End token (whose empty span sits
  // just after the last real token).
  Token Lex() {
    SkipWhitespaceAndComments();
    if (pos_ >= text_.size()) {
      Token end;
      end.kind = TokenKind::End;
      end.span = {last_end_, last_end_};
      return end;
    }
    Token t = Next();
    last_end_ = t.span.end;
    return t;
  }

 private:
  SourceLoc Loc() const { return {line_, col_}; }
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void Advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i, ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
    }
  }

  [[noreturn]] void Fail(SourceLoc begin, const std::string& message) const {
    TILEC_USER_ERROR_AT(source_, (SourceSpan{begin, Loc()}), "{}", message);
  }

  void SkipWhitespaceAndComments() {
    while (pos_ < text_.size()) {
      char c = Peek();
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        Advance();
      } else if (c == '/' && Peek(1) == '/') {
        while (pos_ < text_.size() && Peek() != '\n') Advance();
      } else if (c == '/' && Peek(1) == '*') {
        SourceLoc begin = Loc();
        size_t close = text_.find("*/", pos_ + 2);
        if (close == std::string_view::npos) {
          Advance(2);
          TILEC_USER_ERROR_AT(source_, (SourceSpan{begin, Loc()}), "unterminated block comment");
        }
        Advance(close + 2 - pos_);
      } else {
        break;
      }
    }
  }

  Token Make(TokenKind kind, size_t start, SourceLoc begin) const {
    Token t;
    t.kind = kind;
    t.span = {begin, Loc()};
    t.raw = std::string(text_.substr(start, pos_ - start));
    return t;
  }

  Token Next() {
    size_t start = pos_;
    SourceLoc begin = Loc();
    char c = Peek();
    if (IsDigit(c)) return Number();
    if (c == '.' && IsDigit(Peek(1))) {
      Advance();
      while (IsDigit(Peek())) Advance();
      Fail(begin, fmt::format("a float literal needs a digit before '.': write '0{}'",
                              text_.substr(start, pos_ - start)));
    }
    if (IsUpper(c) || IsLower(c)) return Name(start, begin, /*escape=*/'\0');
    if (c == '#' || c == '$') {
      Advance();
      if (!IsNameChar(Peek())) Fail(begin, fmt::format("expected a name after '{}'", c));
      return Name(start, begin, c);
    }
    if (c == '_') {
      Advance();
      Fail(begin, "unexpected character '_': names start with a letter (write #_name or $_name)");
    }
    TokenKind kind = Punctuation();
    if (kind == TokenKind::End) {
      Advance();
      Fail(begin, fmt::format("unexpected character {}", ShowChar(c)));
    }
    return Make(kind, start, begin);
  }

  // Consumes the longest punctuation token at pos_; End if there is none.
  TokenKind Punctuation() {
    char c = Peek();
    char d = Peek(1);
    auto two = [&](TokenKind k) { Advance(2); return k; };
    auto one = [&](TokenKind k) { Advance(1); return k; };
    switch (c) {
      case '(': return one(TokenKind::LParen);
      case ')': return one(TokenKind::RParen);
      case '[': return d == '[' ? two(TokenKind::LLBracket) : one(TokenKind::LBracket);
      case ']': return d == ']' ? two(TokenKind::RRBracket) : one(TokenKind::RBracket);
      case '{': return one(TokenKind::LBrace);
      case '}': return one(TokenKind::RBrace);
      case ',': return one(TokenKind::Comma);
      case ':': return one(TokenKind::Colon);
      case ';': return one(TokenKind::Semicolon);
      case '?': return one(TokenKind::Question);
      case '.': return one(TokenKind::Dot);
      case '-': return d == '>' ? two(TokenKind::Arrow) : one(TokenKind::Minus);
      case '=': return d == '=' ? two(TokenKind::Eq) : one(TokenKind::Assign);
      case '!': return d == '=' ? two(TokenKind::Ne) : one(TokenKind::Bang);
      case '<':
        if (d == '=') return two(TokenKind::Le);
        return d == '<' ? two(TokenKind::Shl) : one(TokenKind::Lt);
      case '>':
        if (d == '=') return two(TokenKind::Ge);
        return d == '>' ? two(TokenKind::Shr) : one(TokenKind::Gt);
      case '+': return one(TokenKind::Plus);
      case '*': return one(TokenKind::Star);
      case '/': return one(TokenKind::Slash);
      case '%': return one(TokenKind::Percent);
      case '&': return d == '&' ? two(TokenKind::AmpAmp) : one(TokenKind::Amp);
      case '|': return d == '|' ? two(TokenKind::PipePipe) : one(TokenKind::Pipe);
      case '^': return one(TokenKind::Caret);
      case '~': return one(TokenKind::Tilde);
      default: return TokenKind::End;
    }
  }

  // A name (after an optional escape character, already consumed).
  Token Name(size_t start, SourceLoc begin, char escape) {
    size_t name_start = pos_;
    while (IsNameChar(Peek())) Advance();
    if (Peek() == '\'') Advance();
    Token t = Make(TokenKind::Id, start, begin);
    t.name = std::string(text_.substr(name_start, pos_ - name_start));
    t.escaped = escape != '\0';
    if (escape == '#') return t;
    if (escape == '$' || IsLower(t.name[0])) t.kind = TokenKind::IdxId;
    if (escape == '\0') {
      if (t.name == "function") t.kind = TokenKind::KwFunction;
      if (t.name == "default") t.kind = TokenKind::KwDefault;
      if (t.name == "no_defract") t.kind = TokenKind::KwNoDefract;
    }
    return t;
  }

  // INT `[0-9]+` or FLOAT `[0-9]+(.[0-9]+)?([eE][-+]?[0-9]+)?` with at least
  // a fraction or an exponent. An exponent is taken only when complete, so
  // `2e` stays INT 2 followed by the name `e` (flex's longest match).
  Token Number() {
    size_t start = pos_;
    SourceLoc begin = Loc();
    while (IsDigit(Peek())) Advance();
    bool is_float = false;
    if (Peek() == '.') {
      if (!IsDigit(Peek(1))) {
        Advance();
        Fail(begin, fmt::format("a float literal needs a digit after '.': write '{}0'",
                                text_.substr(start, pos_ - start)));
      }
      Advance();
      while (IsDigit(Peek())) Advance();
      is_float = true;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      size_t sign = (Peek(1) == '+' || Peek(1) == '-') ? 1 : 0;
      if (IsDigit(Peek(1 + sign))) {
        Advance(1 + sign);
        while (IsDigit(Peek())) Advance();
        is_float = true;
      }
    }
    if (Peek() == '.' && (IsDigit(Peek(1)) || is_float)) {
      // `1.2.3`, `1e3.5`: Tile's flex rules would split these confusingly.
      Advance();
      while (IsDigit(Peek()) || Peek() == '.') Advance();
      Fail(begin, fmt::format("malformed number '{}'", text_.substr(start, pos_ - start)));
    }
    if (is_float && (Peek() == 'f' || Peek() == 'F' || Peek() == 'l' || Peek() == 'L') && !IsNameChar(Peek(1))) {
      // C's float suffixes (`0.5f`); after an integer a name is juxtaposition
      // (`2i` is 2 * i), so only floats are checked.
      Advance();
      Fail(begin, fmt::format("number literals take no suffix: write '{}' instead of '{}' (a literal takes "
                              "its type from the expression; as_float(X, 32) converts)",
                              text_.substr(start, pos_ - 1 - start), text_.substr(start, pos_ - start)));
    }
    Token t = Make(is_float ? TokenKind::Float : TokenKind::Int, start, begin);
    if (is_float) {
      auto [ptr, ec] = std::from_chars(t.raw.data(), t.raw.data() + t.raw.size(), t.float_value);
      // from_chars reports both overflow (1e999) and underflow to zero (1e-999).
      if (ec != std::errc() || ptr != t.raw.data() + t.raw.size()) {
        Fail(begin, fmt::format("float literal '{}' is out of the range of a 64-bit float", t.raw));
      }
      return t;
    }
    uint64_t value = 0;
    for (char d : t.raw) {
      uint64_t digit = static_cast<uint64_t>(d - '0');
      if (value > (kTwoTo63 - digit) / 10) {
        Fail(begin, fmt::format("integer literal '{}' does not fit in 64 bits", t.raw));
      }
      value = value * 10 + digit;
    }
    t.int_value = value;
    return t;
  }

  SourceLoc last_end_{1, 1};
  SourceFilePtr source_;
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

TokenStream::TokenStream(const SourceFilePtr& source) {
  TILEC_CHECK(source != nullptr);
  lexer_ = std::make_unique<Lexer>(source);
}

TokenStream::~TokenStream() = default;

const Token& TokenStream::At(size_t i) {
  while (!ended_ && tokens_.size() <= i) {
    tokens_.push_back(lexer_->Lex());
    ended_ = tokens_.back().kind == TokenKind::End;
  }
  return i < tokens_.size() ? tokens_[i] : tokens_.back();
}

std::vector<Token> Lex(const SourceFilePtr& source) {
  TokenStream stream(source);
  std::vector<Token> tokens;
  for (size_t i = 0;; ++i) {
    tokens.push_back(stream.At(i));
    if (tokens.back().kind == TokenKind::End) return tokens;
  }
}

}  // namespace tilec::lang
