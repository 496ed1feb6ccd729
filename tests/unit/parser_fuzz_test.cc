// Any input whatsoever must give a Function or a UserError: never a crash, a
// hang, an InternalError or another exception. Inputs that do parse must also
// survive the print/parse round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/error.h"
#include "tile_lang/lexer.h"
#include "tile_lang/parser.h"
#include "tile_lang/printer.h"

namespace tilec::lang {
namespace {

enum class Outcome { Parsed, UserErrored };

// Parses `text` as a program (or an expression); fails the test on anything
// but success or a UserError, and checks the round trip on success.
Outcome Check(const std::string& text, bool as_expr = false, ParseStats* stats = nullptr) {
  try {
    auto source = MakeSource("fuzz.tile", text);
    if (as_expr) {
      ast::ExprPtr e = ParseExpr(source, stats);
      std::string printed = Print(*e);
      ast::ExprPtr back = ParseExpr(MakeSource("printed", printed));
      EXPECT_TRUE(ast::Equal(*e, *back)) << "input: " << text << "\nprinted: " << printed;
      return Outcome::Parsed;
    }
    ast::Function f = Parse(source, stats);
    std::string printed = Print(f);
    ast::Function g = Parse(MakeSource("printed", printed));
    EXPECT_TRUE(ast::Equal(f, g)) << "input: " << text << "\nprinted: " << printed;
    EXPECT_EQ(Print(g), printed);
    return Outcome::Parsed;
  } catch (const UserError& e) {
    // A user error must be renderable and point into the text when it has a span.
    std::string rendered = e.Render();
    EXPECT_FALSE(rendered.empty());
    return Outcome::UserErrored;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-user exception: " << e.what() << "\ninput (" << text.size()
                  << " bytes): " << text.substr(0, 300);
    return Outcome::UserErrored;
  }
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> ValidPrograms() {
  std::vector<std::string> programs;
  for (const char* dir : {"tests/data/parse", "examples"}) {
    auto path = std::filesystem::path(TILEC_SOURCE_DIR) / dir;
    if (!std::filesystem::is_directory(path)) continue;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      if (entry.path().extension() == ".tile") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) programs.push_back(ReadFile(f));
  }
  return programs;
}

// Fragments that make random token soup likely to get deep into the parser.
const std::vector<std::string> kFragments = {
    "function", "(", ")", "->", "{", "}", "[", "]", "[[", "]]", ",", ":", ";", "?", "=", "==",
    "!=", "<", ">", "<=", ">=", "<<", ">>", "+", "-", "*", "/", "%", "&", "|", "^", "~", "!",
    "&&", "||", "A", "B", "O", "N", "i", "j", "2", "0", "9223372036854775808", "1.5", "2e3",
    "default", "no_defract", "#x", "$Y", "T'", "exp", "//c\n", "/* c */", " ", "\n", "2i", ".",
};

TEST(ParserFuzzTest, RandomBytes) {
  std::mt19937 rng(20240601);
  int parsed = 0;
  for (int n = 0; n < 20000; ++n) {
    size_t len = std::uniform_int_distribution<size_t>(0, 120)(rng);
    std::string s(len, '\0');
    // Half the strings draw from printable ASCII, so they get past the lexer.
    bool printable = n % 2 == 0;
    for (char& c : s) {
      c = static_cast<char>(printable ? std::uniform_int_distribution<int>(32, 126)(rng)
                                      : std::uniform_int_distribution<int>(0, 255)(rng));
    }
    parsed += Check(s) == Outcome::Parsed;
    Check(s, /*as_expr=*/true);
  }
  EXPECT_EQ(parsed, 0);  // random bytes are not programs
}

TEST(ParserFuzzTest, RandomTokenSoup) {
  std::mt19937 rng(7);
  for (int n = 0; n < 20000; ++n) {
    std::string s = n % 3 == 0 ? "function (A) -> (B) { " : "";
    for (int k = std::uniform_int_distribution<int>(0, 30)(rng); k > 0; --k) {
      s += kFragments[std::uniform_int_distribution<size_t>(0, kFragments.size() - 1)(rng)];
      s += ' ';
    }
    Check(s);
    Check(s, /*as_expr=*/true);
  }
}

TEST(ParserFuzzTest, MutatedValidPrograms) {
  std::vector<std::string> programs = ValidPrograms();
  ASSERT_GE(programs.size(), 10u);
  std::mt19937 rng(99);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  int parsed = 0, errored = 0;
  for (int n = 0; n < 20000; ++n) {
    const std::string& original = programs[n % programs.size()];
    std::string s = original;
    // Token-level edits work on the token texts, joined by spaces.
    bool token_level = n % 2 == 1;
    std::vector<std::string> tokens;
    if (token_level) {
      for (const Token& t : Lex(MakeSource("p", original))) {
        if (t.kind != TokenKind::End) tokens.push_back(t.raw);
      }
    }
    for (int m = 1 + static_cast<int>(pick(3)); m > 0; --m) {
      if (token_level) {
        if (tokens.empty()) break;
        size_t i = pick(tokens.size()), j = pick(tokens.size());
        switch (pick(4)) {
          case 0: tokens.erase(tokens.begin() + i); break;
          case 1: tokens.insert(tokens.begin() + i, tokens[j]); break;
          case 2: std::swap(tokens[i], tokens[j]); break;
          default: tokens.insert(tokens.begin() + i, kFragments[pick(kFragments.size())]); break;
        }
      } else {
        if (s.empty()) break;
        size_t i = pick(s.size()), j = pick(s.size());
        switch (pick(3)) {
          case 0: s.erase(i, 1); break;
          case 1: s.insert(s.begin() + i, "()[]{},;:?=<>+-*/~!#$'.0123ijAN \n"[pick(34)]); break;
          default: std::swap(s[i], s[j]); break;
        }
      }
    }
    if (token_level) {
      s.clear();
      for (const auto& t : tokens) s += t + " ";
    }
    (Check(s) == Outcome::Parsed ? parsed : errored)++;
  }
  // Both outcomes must occur, or the mutations are not exercising the parser.
  EXPECT_GT(parsed, 100);
  EXPECT_GT(errored, 1000);
}

// Rejecting deep nesting costs work in proportion to the nesting limits
// (256 syntactic levels, expression trees 1000 deep), not to the input: the
// lexer runs on demand, so the parser stops a few thousand tokens into a
// 300 kB input. Counted in tokens, never timed.
constexpr size_t kMaxTokensToReject = 5000;

TEST(ParserFuzzTest, DeepNesting) {
  constexpr int kDepth = 100000;
  auto repeat = [](const std::string& s, int n) {
    std::string out;
    out.reserve(s.size() * n);
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  auto program = [](const std::string& body) { return "function (A) -> (B) { " + body + " }"; };
  const std::vector<std::string> exprs = {
      repeat("(", kDepth) + "a" + repeat(")", kDepth),
      repeat("(", kDepth),
      repeat("-", kDepth) + "a",
      repeat("~!-", kDepth) + "1",
      repeat("f(", kDepth) + "a" + repeat(")", kDepth),
      repeat("a ? ", kDepth) + "b" + repeat(" : c", kDepth),
      "a" + repeat(" ? b : c", kDepth),
      "a" + repeat(" + a", kDepth),
      repeat("a * ", kDepth) + "a",
      repeat("[", kDepth) + repeat("]", kDepth),
      repeat("[[", kDepth),
  };
  for (const std::string& e : exprs) {
    SCOPED_TRACE(e.substr(0, 12));
    ParseStats expr_stats, program_stats;
    EXPECT_EQ(Check(e, /*as_expr=*/true, &expr_stats), Outcome::UserErrored);
    EXPECT_EQ(Check(program("B = " + e + ";"), false, &program_stats), Outcome::UserErrored);
    EXPECT_LE(expr_stats.tokens_lexed, kMaxTokensToReject);
    EXPECT_LE(program_stats.tokens_lexed, kMaxTokensToReject);
  }
  for (const std::string& body :
       {"B[" + repeat("(", kDepth) + "i" + repeat(")", kDepth) + "] = +(A[i]);",
        "B[i] = +(A[" + repeat("-", kDepth) + "i]);",
        "B[i] = +(A[i]), " + repeat("(", kDepth) + "i" + repeat(")", kDepth) + " < 2;",
        repeat("[[a]] ", kDepth) + "B = A;", repeat("{", kDepth), repeat("A[", kDepth)}) {
    SCOPED_TRACE(body.substr(0, 12));
    ParseStats stats;
    Outcome o = Check(program(body), false, &stats);
    // Many attributes are not nesting: that one is a valid program.
    if (body.rfind("[[a]]", 0) != 0) {
      EXPECT_EQ(o, Outcome::UserErrored);
      EXPECT_LE(stats.tokens_lexed, kMaxTokensToReject);
    }
  }
  // Huge but flat inputs parse whole, each token lexed once: many statements
  // and long argument lists.
  for (const std::string& text :
       {program(repeat("B = A + 1; ", kDepth)), program("B = f(a" + repeat(", a", kDepth) + ");")}) {
    ParseStats stats;
    EXPECT_EQ(Check(text, false, &stats), Outcome::Parsed);
    EXPECT_EQ(stats.tokens_lexed, Lex(MakeSource("flat", text)).size());
  }
}

// A syntax error near the start of a huge input is found without lexing the
// rest, and a lexical error after it is not reported first.
TEST(ParserFuzzTest, ErrorsInReadingOrder) {
  std::string tail(300000, 'a');
  tail += " @";  // a lexical error far away
  ParseStats stats;
  try {
    Parse(MakeSource("t.tile", "function (A) -> (B) { B = A + ; " + tail + " }"), &stats);
    FAIL() << "parsed";
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("found ';'"), std::string::npos) << e.message();
  }
  EXPECT_LE(stats.tokens_lexed, 20u);
}

}  // namespace
}  // namespace tilec::lang
