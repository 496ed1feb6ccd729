// libFuzzer harness: the sem parser (compiler/sem/parser.h). The input is sem
// text. Text that parses must print back to text that parses and prints the
// same; a module that also passes Verify must simplify to one that still
// does (Simplify's post-condition).
#include <string>

#include "compiler/sem/parser.h"
#include "compiler/sem/printer.h"
#include "compiler/sem/simplify.h"
#include "compiler/sem/verify.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tilec;
  std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::Guarded([&] {
    sem::Module m = sem::Parse(MakeSource("fuzz.sem", text));
    std::string printed = sem::Print(m);
    // The printed form is Tilec's own output: a UserError on it is a finding.
    sem::Module back;
    try {
      back = sem::Parse(MakeSource("printed.sem", printed));
    } catch (const UserError& e) {
      std::fprintf(stderr, "fuzz finding: printed form does not parse:\n%s\n%s\n", printed.c_str(),
                   e.Render().c_str());
      std::abort();
    }
    if (sem::Print(back) != printed) {
      std::fprintf(stderr, "fuzz finding: round trip changed the text; printed:\n%s\n", printed.c_str());
      std::abort();
    }
    if (!sem::Problems(m).empty()) return;
    for (sem::Function& f : m.functions) f = sem::Simplify(f);
    sem::Verify(m);
  });
  return 0;
}
