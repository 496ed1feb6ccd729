#include "tile_lang/lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/error.h"

namespace tilec::lang {
namespace {

std::vector<Token> LexText(const std::string& text) { return Lex(MakeSource("t.tile", text)); }

std::vector<TokenKind> Kinds(const std::string& text) {
  std::vector<TokenKind> kinds;
  for (const Token& t : LexText(text)) kinds.push_back(t.kind);
  return kinds;
}

// The rendered error for lexing `text`, or "" if it lexes.
std::string LexError(const std::string& text) {
  try {
    LexText(text);
  } catch (const UserError& e) {
    return e.Render();
  }
  return "";
}

using K = TokenKind;

TEST(LexerTest, EmptyInputIsJustEnd) {
  auto tokens = LexText("");
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].kind, K::End);
  EXPECT_EQ(tokens[0].span.begin, (SourceLoc{1, 1}));
}

TEST(LexerTest, Keywords) {
  EXPECT_EQ(Kinds("function default no_defract"),
            (std::vector<K>{K::KwFunction, K::KwDefault, K::KwNoDefract, K::End}));
  // Tile's internal entry keywords are plain index names; longer words too.
  EXPECT_EQ(Kinds("polynomial expression contraction functions default' Function"),
            (std::vector<K>{K::IdxId, K::IdxId, K::IdxId, K::IdxId, K::IdxId, K::Id, K::End}));
}

TEST(LexerTest, EveryPunctuation) {
  EXPECT_EQ(Kinds("( ) [ ] [[ ]] { } , : ; ? . -> = == != < > <= >= << >> + - * / % & | ^ ~ ! && ||"),
            (std::vector<K>{K::LParen, K::RParen, K::LBracket, K::RBracket, K::LLBracket,
                            K::RRBracket, K::LBrace, K::RBrace, K::Comma, K::Colon,
                            K::Semicolon, K::Question, K::Dot, K::Arrow, K::Assign, K::Eq,
                            K::Ne, K::Lt, K::Gt, K::Le, K::Ge, K::Shl, K::Shr, K::Plus,
                            K::Minus, K::Star, K::Slash, K::Percent, K::Amp, K::Pipe, K::Caret,
                            K::Tilde, K::Bang, K::AmpAmp, K::PipePipe, K::End}));
}

TEST(LexerTest, LongestMatch) {
  EXPECT_EQ(Kinds("[[[]]]"), (std::vector<K>{K::LLBracket, K::LBracket, K::RRBracket, K::RBracket, K::End}));
  EXPECT_EQ(Kinds("<<=>>=->-"), (std::vector<K>{K::Shl, K::Assign, K::Shr, K::Assign, K::Arrow, K::Minus, K::End}));
  EXPECT_EQ(Kinds("===!=!&&&|||"),
            (std::vector<K>{K::Eq, K::Assign, K::Ne, K::Bang, K::AmpAmp, K::Amp, K::PipePipe, K::Pipe, K::End}));
}

TEST(LexerTest, NamesAndPrimes) {
  auto t = LexText("Abc_1 x9' T' y_Z");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].kind, K::Id);
  EXPECT_EQ(t[0].name, "Abc_1");
  EXPECT_EQ(t[1].kind, K::IdxId);
  EXPECT_EQ(t[1].name, "x9'");
  EXPECT_EQ(t[2].kind, K::Id);
  EXPECT_EQ(t[2].name, "T'");
  EXPECT_EQ(t[3].kind, K::IdxId);
  EXPECT_EQ(t[3].name, "y_Z");
  EXPECT_FALSE(t[0].escaped);
}

TEST(LexerTest, Escapes) {
  auto t = LexText("#lower $Upper #_T0 $9x #default $function $A'");
  ASSERT_EQ(t.size(), 8u);
  EXPECT_EQ(t[0].kind, K::Id);
  EXPECT_EQ(t[0].name, "lower");
  EXPECT_TRUE(t[0].escaped);
  EXPECT_EQ(t[0].raw, "#lower");
  EXPECT_EQ(t[1].kind, K::IdxId);
  EXPECT_EQ(t[1].name, "Upper");
  EXPECT_EQ(t[2].kind, K::Id);
  EXPECT_EQ(t[2].name, "_T0");
  EXPECT_EQ(t[3].kind, K::IdxId);
  EXPECT_EQ(t[3].name, "9x");
  // An escaped keyword is a name, not a keyword.
  EXPECT_EQ(t[4].kind, K::Id);
  EXPECT_EQ(t[4].name, "default");
  EXPECT_EQ(t[5].kind, K::IdxId);
  EXPECT_EQ(t[5].name, "function");
  EXPECT_EQ(t[6].name, "A'");
}

TEST(LexerTest, Integers) {
  auto t = LexText("0 42 007 9223372036854775807 9223372036854775808");
  EXPECT_EQ(t[0].int_value, 0u);
  EXPECT_EQ(t[1].int_value, 42u);
  EXPECT_EQ(t[2].int_value, 7u);
  EXPECT_EQ(t[3].int_value, 9223372036854775807u);
  // 2^63 lexes; only the parser's `-9223372036854775808` may use it.
  EXPECT_EQ(t[4].kind, K::Int);
  EXPECT_EQ(t[4].int_value, uint64_t{1} << 63);
}

TEST(LexerTest, Floats) {
  auto t = LexText("1.0 2.5E-1 1e3 1E+2 0.125 4.9e-324");
  ASSERT_EQ(t.size(), 7u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t[i].kind, K::Float) << i;
  EXPECT_EQ(t[0].float_value, 1.0);
  EXPECT_EQ(t[1].float_value, 0.25);
  EXPECT_EQ(t[2].float_value, 1000.0);
  EXPECT_EQ(t[3].float_value, 100.0);
  EXPECT_EQ(t[4].float_value, 0.125);
  EXPECT_GT(t[5].float_value, 0.0);
}

TEST(LexerTest, IncompleteExponentIsIntThenName) {
  // flex's longest match: `2e` and `2e+` have no complete exponent.
  EXPECT_EQ(Kinds("2e"), (std::vector<K>{K::Int, K::IdxId, K::End}));
  EXPECT_EQ(Kinds("2E+x"), (std::vector<K>{K::Int, K::Id, K::Plus, K::IdxId, K::End}));
  EXPECT_EQ(Kinds("2i 3 j"), (std::vector<K>{K::Int, K::IdxId, K::Int, K::IdxId, K::End}));
}

TEST(LexerTest, Spans) {
  auto t = LexText("ab  <=\n\t X'  1.5e3\n");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].span, (SourceSpan{{1, 1}, {1, 3}}));
  EXPECT_EQ(t[1].span, (SourceSpan{{1, 5}, {1, 7}}));
  EXPECT_EQ(t[2].span, (SourceSpan{{2, 3}, {2, 5}}));  // a tab counts as one column
  EXPECT_EQ(t[3].span, (SourceSpan{{2, 7}, {2, 12}}));
  // End sits right after the last token, not on the empty last line.
  EXPECT_EQ(t[4].span, (SourceSpan{{2, 12}, {2, 12}}));
}

TEST(LexerTest, Comments) {
  EXPECT_EQ(Kinds("a // b c\n d /* e\n f */ g /**/ h /* ** / */ i //"),
            (std::vector<K>{K::IdxId, K::IdxId, K::IdxId, K::IdxId, K::IdxId, K::End}));
  auto t = LexText("/* x\n y */ Z");
  EXPECT_EQ(t[0].span, (SourceSpan{{2, 7}, {2, 8}}));
  // A lone slash is division; `/ /` is not a comment.
  EXPECT_EQ(Kinds("a / / b"), (std::vector<K>{K::IdxId, K::Slash, K::Slash, K::IdxId, K::End}));
}

TEST(LexerTest, UnterminatedBlockCommentPointsAtItsStart) {
  EXPECT_EQ(LexError("a\n  /* never\n closed"),
            "t.tile:2:3: error: unterminated block comment\n  /* never\n  ^~");
}

TEST(LexerTest, UnexpectedCharacters) {
  EXPECT_EQ(LexError("a @ b"), "t.tile:1:3: error: unexpected character '@'\na @ b\n  ^");
  EXPECT_EQ(LexError("x\x01"), "t.tile:1:2: error: unexpected character '\\x01'\nx\x01\n ^");
  EXPECT_EQ(LexError("\xC3\xA9"), "t.tile:1:1: error: unexpected character '\\xC3'\n\xC3\xA9\n^");
  EXPECT_EQ(LexError("\"s\""), "t.tile:1:1: error: unexpected character '\"'\n\"s\"\n^");
  EXPECT_EQ(LexError("_x"),
            "t.tile:1:1: error: unexpected character '_': names start with a letter "
            "(write #_name or $_name)\n_x\n^");
  EXPECT_EQ(LexError("# x"), "t.tile:1:1: error: expected a name after '#'\n# x\n^");
  EXPECT_EQ(LexError("a $"), "t.tile:1:3: error: expected a name after '$'\na $\n  ^");
}

TEST(LexerTest, MalformedNumbers) {
  EXPECT_EQ(LexError("x = .5;"),
            "t.tile:1:5: error: a float literal needs a digit before '.': write '0.5'\nx = .5;\n    ^~");
  EXPECT_EQ(LexError("x = 1.;"),
            "t.tile:1:5: error: a float literal needs a digit after '.': write '1.0'\nx = 1.;\n    ^~");
  EXPECT_EQ(LexError("1.2.3e4"), "t.tile:1:1: error: malformed number '1.2.3'\n1.2.3e4\n^~~~~");
  EXPECT_EQ(LexError("1e999"),
            "t.tile:1:1: error: float literal '1e999' is out of the range of a 64-bit float\n1e999\n^~~~~");
  EXPECT_EQ(LexError(" 1e-999"),
            "t.tile:1:2: error: float literal '1e-999' is out of the range of a 64-bit float\n 1e-999\n ^~~~~~");
  EXPECT_EQ(LexError("99999999999999999999"),
            "t.tile:1:1: error: integer literal '99999999999999999999' does not fit in 64 bits\n"
            "99999999999999999999\n^~~~~~~~~~~~~~~~~~~~");
  EXPECT_EQ(LexError("9223372036854775809"),
            "t.tile:1:1: error: integer literal '9223372036854775809' does not fit in 64 bits\n"
            "9223372036854775809\n^~~~~~~~~~~~~~~~~~~");
}

TEST(LexerTest, DescribeNamesEveryKind) {
  EXPECT_EQ(Describe(K::RBracket), "']'");
  EXPECT_EQ(Describe(K::End), "end of input");
  EXPECT_EQ(Describe(K::PipePipe), "'||'");
}

}  // namespace
}  // namespace tilec::lang
