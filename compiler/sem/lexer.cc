#include "compiler/sem/lexer.h"

#include <fmt/format.h>

#include <string_view>

#include "support/error.h"

namespace tilec::sem {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

// Splits the whole text into tokens; the last is End.
class Lexer {
 public:
  explicit Lexer(const SourceFilePtr& source) : src_(source), text_(source->text) {}

  std::vector<Token> Run() {
    std::vector<Token> out;
    while (true) {
      SkipSpace();
      Token t;
      SourceLoc begin{line_, col_};
      if (pos_ >= text_.size()) {
        t.span = {begin, begin};
        out.push_back(std::move(t));
        return out;
      }
      char c = text_[pos_];
      if (c == '/' && Peek(1) == '/') {
        Advance(2);
        if (Peek(0) == ' ') Advance(1);
        size_t end = text_.find('\n', pos_);
        if (end == std::string_view::npos) end = text_.size();
        t.kind = Tok::Comment;
        t.text = std::string(text_.substr(pos_, end - pos_));
        Advance(end - pos_);
      } else if (IsAlpha(c)) {
        size_t start = pos_;
        while (pos_ < text_.size() && (IsAlpha(text_[pos_]) || IsDigit(text_[pos_]))) Advance(1);
        t.kind = Tok::Ident;
        t.text = std::string(text_.substr(start, pos_ - start));
      } else if (IsDigit(c)) {
        t = Number(begin);
      } else {
        static constexpr std::string_view kTwo[] = {"==", "!=", "<=", ">=", "<<", ">>", "&&", "||"};
        std::string_view two = text_.substr(pos_, 2);
        size_t n = 0;
        for (std::string_view p : kTwo)
          if (two == p) n = 2;
        if (n == 0 && std::string_view("()[]{},;?:.=<>+-*/%&|^~!#").find(c) != std::string_view::npos)
          n = 1;
        if (n == 0) Fail(begin, fmt::format("unexpected character '{}'", Printable(c)));
        t.kind = Tok::Punct;
        t.text = std::string(text_.substr(pos_, n));
        Advance(n);
      }
      t.span = {begin, {line_, col_}};
      out.push_back(std::move(t));
    }
  }

 private:
  static std::string Printable(char c) {
    if (c >= 0x20 && c < 0x7f) return std::string(1, c);
    return fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  }

  char Peek(size_t k) const { return pos_ + k < text_.size() ? text_[pos_ + k] : '\0'; }

  void Advance(size_t n) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i, ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
    }
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r'))
      Advance(1);
  }

  // DIGITS [. DIGITS] [e [+-] DIGITS] [f|h]: an Int without the optional
  // parts, else a Float.
  Token Number(SourceLoc begin) {
    size_t start = pos_;
    bool is_float = false;
    auto digits = [&] {
      size_t from = pos_;
      while (IsDigit(Peek(0))) Advance(1);
      if (pos_ == from) Fail({line_, col_}, "malformed number: expected a digit");
    };
    digits();
    if (Peek(0) == '.' && IsDigit(Peek(1))) {
      Advance(1);
      digits();
      is_float = true;
    }
    if (Peek(0) == 'e' || Peek(0) == 'E') {
      Advance(1);
      if (Peek(0) == '+' || Peek(0) == '-') Advance(1);
      digits();
      is_float = true;
    }
    if (Peek(0) == 'f' || Peek(0) == 'h') {
      Advance(1);
      is_float = true;
    }
    if (IsAlpha(Peek(0)) || IsDigit(Peek(0)))
      Fail(begin, fmt::format("malformed number '{}'", text_.substr(start, pos_ + 1 - start)));
    return {is_float ? Tok::Float : Tok::Int, std::string(text_.substr(start, pos_ - start)), {}};
  }

  [[noreturn]] void Fail(SourceLoc at, const std::string& message) {
    TILEC_USER_ERROR_AT(src_, (SourceSpan{at, {at.line, at.col + 1}}), "{}", message);
  }

  SourceFilePtr src_;
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace

std::vector<Token> Lex(const SourceFilePtr& source) { return Lexer(source).Run(); }

}  // namespace tilec::sem
