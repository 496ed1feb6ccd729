// libFuzzer harness: the lexer and parser. The input is Tile source text (the
// first byte also picks program or expression mode). A program or expression
// that parses must print back to text that parses to an equal tree.
#include <string>

#include "tests/fuzz/fuzz_common.h"
#include "tile_lang/parser.h"
#include "tile_lang/printer.h"

namespace tilec::fuzz {
namespace {

const lang::ast::Function& Deref(const lang::ast::Function& f) { return f; }
const lang::ast::Expr& Deref(const lang::ast::ExprPtr& e) { return *e; }

// The printed form of a parsed tree is Tilec's own output: a UserError on it
// is a bug, so it is reported as a finding.
template <typename T, typename P>
void CheckRoundTrip(const T& tree, const std::string& printed, P parse) {
  try {
    auto back = parse(MakeSource("printed", printed));
    if (!lang::ast::Equal(tree, Deref(back))) {
      std::fprintf(stderr, "fuzz finding: round trip changed the tree; printed:\n%s\n",
                   printed.c_str());
      std::abort();
    }
  } catch (const UserError& e) {
    std::fprintf(stderr, "fuzz finding: printed form does not parse:\n%s\n%s\n", printed.c_str(),
                 e.Render().c_str());
    std::abort();
  }
}

}  // namespace
}  // namespace tilec::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tilec;
  std::string text(reinterpret_cast<const char*>(data), size);
  // Expression mode for inputs starting with '=' (rare in seeds, easy to reach).
  bool as_expr = !text.empty() && text[0] == '=';
  fuzz::Guarded([&] {
    if (as_expr) {
      lang::ast::ExprPtr e = lang::ParseExpr(MakeSource("fuzz.tile", text.substr(1)));
      fuzz::CheckRoundTrip(*e, lang::Print(*e), [](const SourceFilePtr& s) { return lang::ParseExpr(s); });
    } else {
      lang::ast::Function f = lang::Parse(MakeSource("fuzz.tile", text));
      fuzz::CheckRoundTrip(f, lang::Print(f), [](const SourceFilePtr& s) { return lang::Parse(s); });
    }
  });
  return 0;
}
