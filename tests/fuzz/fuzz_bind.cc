// libFuzzer harness: the binder (tile_lang/binder.h Bind). The input is a
// Tile source and parameter bytes that give the inputs element types, ranks,
// sizes (including 0 and sizes that overflow) and layouts (bind_input.h).
// Bind must give a Program or a UserError.
#include "tests/fuzz/bind_input.h"
#include "tile_lang/binder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tilec;
  fuzz::SplitInput in = fuzz::Split(data, size);
  fuzz::Guarded([&] {
    fuzz::ParamReader params(in.params);
    fuzz::BindInput b = fuzz::MakeBindInput(in, params, {.max_small = 40, .huge = true});
    lang::Bind(b.function, b.shapes, b.layouts);
  });
  return 0;
}
