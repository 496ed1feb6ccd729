// Every syntax error the front end reports, rendered exactly as a user sees
// it: `file:line:col: error: message`, the source line, and a caret line.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "support/error.h"
#include "tile_lang/parser.h"

namespace tilec::lang {
namespace {

struct Case {
  std::string program;
  std::string rendered;
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i];
})tile",
     R"err(bad.tile:2:20: error: expected a combination operator (* + ==) or ')' to close '(' at 2:15, found ';'
  B[i : N] = +(A[i];
                   ^)err"},
    {R"tile(function (A) -> (B) {
  B = A + 1
})tile",
     R"err(bad.tile:3:1: error: expected ';' after the statement, found '}'
}
^)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = (A[i]);
})tile",
     R"err(bad.tile:2:14: error: expected an aggregation operator (+ * > < =) after '=', found '('
  B[i : N] = (A[i]);
             ^)err"},
    {R"tile(function (A) -> (B) {
  B = A;)tile",
     R"err(bad.tile:2:9: error: unexpected end of input; expected '}' to close '{' at 1:21
  B = A;
        ^)err"},
    {R"tile(function (A) -> () { })tile",
     R"err(bad.tile:1:18: error: a function needs at least one output
function (A) -> () { }
                 ^)err"},
    {R"tile(function (A, ) -> (B) { B = A; })tile",
     R"err(bad.tile:1:14: error: expected an input name, found ')'
function (A, ) -> (B) { B = A; }
             ^)err"},
    {R"tile(fun (A) -> (B) { B = A; })tile",
     R"err(bad.tile:1:1: error: expected 'function' at the start of the program, found 'fun'
fun (A) -> (B) { B = A; }
^~~)err"},
    {R"tile(function (A) (B) { B = A; })tile",
     R"err(bad.tile:1:14: error: expected '->' after the inputs, found '('
function (A) (B) { B = A; }
             ^)err"},
    {R"tile(function (a) -> (B) { B = a; })tile",
     R"err(bad.tile:1:11: error: expected an input name, found 'a'; tensor names start with an upper-case letter (or write #a)
function (a) -> (B) { B = a; }
          ^)err"},
    {R"tile(function (A[m]) -> (B) { B = A; })tile",
     R"err(bad.tile:1:13: error: expected a dimension name, found 'm'; tensor names start with an upper-case letter (or write #m)
function (A[m]) -> (B) { B = A; }
            ^)err"},
    {R"tile(function (A) -> (B) {
  b = A;
})tile",
     R"err(bad.tile:2:3: error: a statement must define a tensor, whose name starts with an upper-case letter (or write #b)
  b = A;
  ^)err"},
    {R"tile(function (A) -> (B) {
  B = a < b < c;
})tile",
     R"err(bad.tile:2:13: error: comparisons do not chain: '<' follows '<' at 2:9; add parentheses
  B = a < b < c;
            ^)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[exp(i)]);
})tile",
     R"err(bad.tile:2:18: error: function calls are not allowed in an index polynomial ('exp')
  B[i : N] = +(A[exp(i)]);
                 ^~~)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i * 1.5]);
})tile",
     R"err(bad.tile:2:22: error: a float literal is not allowed in an index polynomial (only integers, names, + - * / and parentheses are)
  B[i : N] = +(A[i * 1.5]);
                     ^~~)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i % 2]);
})tile",
     R"err(bad.tile:2:20: error: '%' is not allowed in an index polynomial (only integers, names, + - * / and parentheses are)
  B[i : N] = +(A[i % 2]);
                   ^)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i ? 1 : 0]);
})tile",
     R"err(bad.tile:2:20: error: '?' is not allowed in an index polynomial (only integers, names, + - * / and parentheses are)
  B[i : N] = +(A[i ? 1 : 0]);
                   ^)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[~i]);
})tile",
     R"err(bad.tile:2:18: error: '~' is not allowed in an index polynomial (only integers, names, + - * / and parentheses are)
  B[i : N] = +(A[~i]);
                 ^)err"},
    {R"tile(function (A) -> (B) {
  B[i, j : N] = +(A[i, j]);
})tile",
     R"err(bad.tile:2:12: error: output 'B' has 2 index polynomials but 1 size
  B[i, j : N] = +(A[i, j]);
           ^)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i] * C[i] ? D[i]);
})tile",
     R"err(bad.tile:2:28: error: '?' in a contraction must follow an '==' combination: 'A[i] == B[j] ? C[k]'
  B[i : N] = +(A[i] * C[i] ? D[i]);
                           ^)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i], i <= N);
})tile",
     R"err(bad.tile:2:20: error: expected a combination operator (* + ==) or ')' to close '(' at 2:15, found ','
  B[i : N] = +(A[i], i <= N);
                   ^)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i]), i <= N;
})tile",
     R"err(bad.tile:2:25: error: a constraint is written 'poly < bound' (meaning 0 <= poly < bound); '<=' is not allowed
  B[i : N] = +(A[i]), i <= N;
                        ^~)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i]) default P default Q;
})tile",
     R"err(bad.tile:2:32: error: 'default' given twice
  B[i : N] = +(A[i]) default P default Q;
                               ^~~~~~~)err"},
    {R"tile(function (A) -> (B) {
  B = exp();
})tile",
     R"err(bad.tile:2:11: error: a call of 'exp' needs at least one argument
  B = exp();
          ^)err"},
    {R"tile(function (A) -> (B) {
  B = A[0];
})tile",
     R"err(bad.tile:2:8: error: tensors cannot be indexed inside an expression; use a contraction 'O[i : N] = +(A[i])'
  B = A[0];
       ^)err"},
    {R"tile(function (A) -> (B) {
  B = .5 * A;
})tile",
     R"err(bad.tile:2:7: error: a float literal needs a digit before '.': write '0.5'
  B = .5 * A;
      ^~)err"},
    {R"tile(function (A) -> (B) {
  B = 1. * A;
})tile",
     R"err(bad.tile:2:7: error: a float literal needs a digit after '.': write '1.0'
  B = 1. * A;
      ^~)err"},
    {R"tile(function (A) -> (B) {
  B = 1e400;
})tile",
     R"err(bad.tile:2:7: error: float literal '1e400' is out of the range of a 64-bit float
  B = 1e400;
      ^~~~~)err"},
    {R"tile(function (A) -> (B) {
  B = 99999999999999999999;
})tile",
     R"err(bad.tile:2:7: error: integer literal '99999999999999999999' does not fit in 64 bits
  B = 99999999999999999999;
      ^~~~~~~~~~~~~~~~~~~~)err"},
    {R"tile(function (A) -> (B) {
  /* B = A;
})tile",
     R"err(bad.tile:2:3: error: unterminated block comment
  /* B = A;
  ^~)err"},
    {R"tile(function (A) -> (B) {
  B = A @ 2;
})tile",
     R"err(bad.tile:2:9: error: unexpected character '@'
  B = A @ 2;
        ^)err"},
    {R"tile(function (A) -> (B) {
  B = A;
} B = A;)tile",
     R"err(bad.tile:3:3: error: unexpected 'B' after the end of the function
} B = A;
  ^)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] ==(A[i]);
})tile",
     R"err(bad.tile:2:12: error: expected '=' after the output, found '=='; an assign aggregation is written '= =(...)' with a space
  B[i : N] ==(A[i]);
           ^~)err"},
    {R"tile(function (A) -> (B) {
  B = 2i;
})tile",
     R"err(bad.tile:2:8: error: '2 i' (a number followed by an index name) is only allowed in an index polynomial; write '2 * i'
  B = 2i;
       ^)err"},
    {R"tile(function (A) -> (B) {
  B = A ? 1;
})tile",
     R"err(bad.tile:2:12: error: expected ':' to complete '?' at 2:9, found ';'
  B = A ? 1;
           ^)err"},
    {R"tile(function (A) -> (B) {
  [[pid()]] B = A;
})tile",
     R"err(bad.tile:2:9: error: an attribute's parameter list cannot be empty
  [[pid()]] B = A;
        ^)err"},
    {R"tile(function (A) -> (B) {
  [[Pid]] B = A;
})tile",
     R"err(bad.tile:2:5: error: attribute names start with a lower-case letter (or write $Pid)
  [[Pid]] B = A;
    ^~~)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A);
})tile",
     R"err(bad.tile:2:17: error: expected '[' after 'A' (contraction inputs are indexed: 'A[i, j]'), found ')'
  B[i : N] = +(A);
                ^)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i] * A[i] * A[i]);
})tile",
     R"err(bad.tile:2:28: error: a contraction combines at most two tensors with one operator (or 'A == B ? C')
  B[i : N] = +(A[i] * A[i] * A[i]);
                           ^)err"},
    {R"tile(function (A) -> (B) {
  B[: N] = +(A[i]);
})tile",
     R"err(bad.tile:2:7: error: expected ']' after ':' in a rank-0 output 'O[:]', found 'N'
  B[: N] = +(A[i]);
      ^)err"},
    {R"tile(function (A) -> (B) {
  B = (A + 1;
})tile",
     R"err(bad.tile:2:13: error: expected ')' to close '(' at 2:7, found ';'
  B = (A + 1;
            ^)err"},
    {R"tile(function (A) -> (B) {
  B = max(A, 1;
})tile",
     R"err(bad.tile:2:15: error: expected ',' or ')' to close '(' at 2:10, found ';'
  B = max(A, 1;
              ^)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i]) no_defract no_defract;
})tile",
     R"err(bad.tile:2:33: error: 'no_defract' given twice
  B[i : N] = +(A[i]) no_defract no_defract;
                                ^~~~~~~~~~)err"},
    {R"tile(function (A) -> (B) {
  B = 9223372036854775808;
})tile",
     R"err(bad.tile:2:7: error: integer literal '9223372036854775808' does not fit in 64 bits
  B = 9223372036854775808;
      ^~~~~~~~~~~~~~~~~~~)err"},
    {R"tile(function (A) -> (B) {
  B = A +;
})tile",
     R"err(bad.tile:2:10: error: expected an expression, found ';'
  B = A +;
         ^)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i]), k N;
})tile",
     R"err(bad.tile:2:25: error: expected '<' in the constraint 'poly < bound', found 'N'
  B[i : N] = +(A[i]), k N;
                        ^)err"},
    {R"tile(function (A) -> (B) {
  B = A == 1 != 2;
})tile",
     R"err(bad.tile:2:14: error: comparisons do not chain: '!=' follows '==' at 2:9; add parentheses
  B = A == 1 != 2;
             ^~)err"},
    {R"tile(function (A) -> (B) {
  B[i : N] = +(A[i] ? A[i]);
})tile",
     R"err(bad.tile:2:21: error: '?' in a contraction must follow an '==' combination: 'A[i] == B[j] ? C[k]'
  B[i : N] = +(A[i] ? A[i]);
                    ^)err"},
    {R"tile(function (A, B[N) -> (C) { C = A; })tile",
     R"err(bad.tile:1:17: error: expected ',' or ']' to close '[' at 1:15, found ')'
function (A, B[N) -> (C) { C = A; }
                ^)err"},
    {R"tile(function (A) -> (B) { B = -#; })tile",
     R"err(bad.tile:1:28: error: expected a name after '#'
function (A) -> (B) { B = -#; }
                           ^)err"},
    {R"tile(function (A) -> (B) {
	B = A +
	  _x;
})tile",
     R"err(bad.tile:3:4: error: unexpected character '_': names start with a letter (write #_name or $_name)
	  _x;
	  ^)err"},
    {R"tile(function (A) -> (B) {
  B[] = +(A[i]), default P;
})tile",
     R"err(bad.tile:2:18: error: expected an index polynomial, found 'default'
  B[] = +(A[i]), default P;
                 ^~~~~~~)err"},
  };
  return cases;
}

TEST(ParseErrorsTest, EachMalformedProgramRendersItsExactError) {
  std::set<std::string> messages;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.program);
    try {
      Parse(MakeSource("bad.tile", c.program));
      ADD_FAILURE() << "parsed without error";
    } catch (const UserError& e) {
      EXPECT_EQ(e.Render(), c.rendered);
      EXPECT_EQ(e.file()->name, "bad.tile");
      EXPECT_TRUE(e.span().known());
      messages.insert(e.message());
    }
  }
  EXPECT_GE(messages.size(), 25u) << "cases should cover distinct diagnostics";
}

}  // namespace
}  // namespace tilec::lang

namespace tilec::lang {
namespace {

// The rendered error of `program` (which must fail to parse) at `width`.
std::string RenderAt(const std::string& program, int width) {
  try {
    Parse(MakeSource("long.tile", program));
  } catch (const UserError& e) {
    return e.Render(width);
  }
  ADD_FAILURE() << "parsed without error";
  return "";
}

TEST(ParseErrorsTest, LongLinesAreClippedAroundTheCaret) {
  // An error in the middle of a 100 kB line: a window of the width, with an
  // ellipsis on each side, and the caret under the offending token.
  std::string sum;
  for (int i = 0; i < 5000; ++i) sum += "B = A + 1; ";
  std::string program = "function (A) -> (B) { " + sum + "B = A + ) + A; " + sum + "}";
  std::string rendered = RenderAt(program, 40);
  std::string head = rendered.substr(0, rendered.find('\n'));
  EXPECT_NE(head.find("error: expected"), std::string::npos) << head;
  std::string line = rendered.substr(head.size() + 1, rendered.rfind('\n') - head.size() - 1);
  std::string caret = rendered.substr(rendered.rfind('\n') + 1);
  EXPECT_EQ(line.rfind("\u2026", 0), 0u) << line;  // clipped on the left
  EXPECT_EQ(line.size() - line.rfind("\u2026"), std::string("\u2026").size()) << line;  // and right
  // 38 source columns between the two one-column ellipses.
  EXPECT_EQ(line.size(), 38 + 2 * std::string("\u2026").size()) << line;
  // The caret points at the ')' (ellipsis = one column, three bytes).
  size_t caret_col = caret.find('^');
  ASSERT_NE(caret_col, std::string::npos);
  EXPECT_EQ(line.substr(caret_col + 2, 1), ")") << line << "\n" << caret;
  EXPECT_EQ(caret.find_first_not_of(' '), caret_col);

  // Near the start of the line: clipped on the right only.
  std::string early = "function (A) -> (B) { B = A + ); " + sum + "}";
  rendered = RenderAt(early, 60);
  line = rendered.substr(rendered.find('\n') + 1);
  line = line.substr(0, line.find('\n'));
  EXPECT_EQ(line.rfind("function (A)", 0), 0u) << line;
  EXPECT_EQ(line.size(), 59 + std::string("\u2026").size()) << line;
  caret = rendered.substr(rendered.rfind('\n') + 1);
  EXPECT_EQ(line.substr(caret.find('^'), 1), ")");

  // A line that fits is shown whole, as before.
  EXPECT_EQ(RenderAt("function (A) -> (B) { B = A + ); }", 40),
            "long.tile:1:31: error: expected an expression, found ')'\n"
            "function (A) -> (B) { B = A + ); }\n"
            "                              ^");
}

}  // namespace
}  // namespace tilec::lang

namespace tilec::lang {
namespace {

// The error of `program` (which must fail to parse) with `max_errors`.
UserError ErrorOf(const std::string& program, size_t max_errors) {
  ParseOptions options;
  options.max_errors = max_errors;
  try {
    Parse(MakeSource("many.tile", program), nullptr, options);
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "parsed without error";
  return UserError("none");
}

const char* kThreeErrors =
    "function (A[N]) -> (B) {\n"
    "  B = A +* 1;\n"
    "  C = A + ;\n"
    "  D = (A;\n"
    "  B = A + 1;\n"
    "}\n";

TEST(ParseErrorsTest, ByDefaultOnlyTheFirstError) {
  UserError e = ErrorOf(kThreeErrors, 1);
  EXPECT_EQ(e.error_count(), 1u);
  EXPECT_EQ(e.Render(),
            "many.tile:2:10: error: expected an expression, found '*'\n"
            "  B = A +* 1;\n"
            "         ^");
}

TEST(ParseErrorsTest, RecoveryFindsErrorsInReadingOrder) {
  UserError e = ErrorOf(kThreeErrors, 100);
  ASSERT_EQ(e.error_count(), 3u);
  EXPECT_EQ(e.span().begin.line, 2);  // the first error stays the error
  EXPECT_EQ(e.more_errors()[0].span().begin.line, 3);
  EXPECT_EQ(e.more_errors()[1].span().begin.line, 4);
  EXPECT_EQ(e.Render(),
            "many.tile:2:10: error: expected an expression, found '*'\n"
            "  B = A +* 1;\n"
            "         ^\n"
            "many.tile:3:11: error: expected an expression, found ';'\n"
            "  C = A + ;\n"
            "          ^\n"
            "many.tile:4:9: error: expected ')' to close '(' at 4:7, found ';'\n"
            "  D = (A;\n"
            "        ^");
  // The limit stops the search.
  EXPECT_EQ(ErrorOf(kThreeErrors, 2).error_count(), 2u);
  // A correct program still parses with recovery on.
  ParseOptions options;
  options.max_errors = 100;
  EXPECT_EQ(Parse(MakeSource("ok.tile", "function (A) -> (B) { B = A + 1; C = B; }"), nullptr, options).body.size(),
            2u);
}

TEST(ParseErrorsTest, AtMostTenErrorsAreRenderedThenACount) {
  std::string program = "function (A) -> (B) {\n";
  for (int i = 0; i < 37; ++i) program += "  B = A +* 1;\n";
  program += "}\n";
  UserError e = ErrorOf(program, 1000);
  EXPECT_EQ(e.error_count(), 37u);
  std::string rendered = e.Render();
  size_t shown = 0;
  for (size_t pos = 0; (pos = rendered.find(": error: ", pos)) != std::string::npos; ++pos) ++shown;
  EXPECT_EQ(shown, static_cast<size_t>(UserError::kMaxRenderedErrors));
  EXPECT_NE(rendered.find("many.tile:11:10: error:"), std::string::npos);
  EXPECT_EQ(rendered.find("many.tile:12:10: error:"), std::string::npos);
  EXPECT_EQ(rendered.substr(rendered.rfind('\n') + 1), "\u2026 and 27 more errors");
  // One more than shown: singular.
  program = "function (A) -> (B) {\n";
  for (int i = 0; i < 11; ++i) program += "  B = A +* 1;\n";
  EXPECT_EQ(ErrorOf(program + "}\n", 1000).Render().substr(ErrorOf(program + "}\n", 1000).Render().rfind('\n') + 1),
            "\u2026 and 1 more error");
}

TEST(ParseErrorsTest, RecoveryGoesPastLexicalErrors) {
  UserError e = ErrorOf("function (A) -> (B) {\n  B = A +* 1;\n  C = A @ 1;\n  D = A +* 2;\n}\n", 100);
  ASSERT_EQ(e.error_count(), 3u);
  EXPECT_EQ(e.more_errors()[0].message(), "unexpected character '@'");
  EXPECT_EQ(e.more_errors()[1].span().begin.line, 4);
  // An error outside any statement (the missing '}') is the last one.
  e = ErrorOf("function (A) -> (B) {\n  B = A +* 1;\n  B = A + 1;\n", 100);
  ASSERT_EQ(e.error_count(), 2u);
  EXPECT_NE(e.more_errors()[0].message().find("unexpected end of input"), std::string::npos)
      << e.more_errors()[0].message();
}

}  // namespace
}  // namespace tilec::lang
