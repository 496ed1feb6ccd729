// libFuzzer harness: the layout-spec parser (tile_lang/layout.h ParseLayout).
// The input is "SPEC\0DIMS" (fuzz_common.h): the spec text, then the rank and
// one byte per logical dimension (small sizes, 0, and huge powers of two for
// the overflow checks). Without DIMS the spec is tried at ranks 0 to 5 of
// small odd sizes. A parsed layout must map every index of a small tensor to
// a distinct offset inside the buffer, and its ToSpec must parse back to the
// same layout.
#include <set>
#include <vector>

#include "tests/fuzz/fuzz_common.h"
#include "tile_lang/layout.h"

namespace tilec::fuzz {
namespace {

[[noreturn]] void Finding(std::string_view spec, const std::vector<int64_t>& dims,
                          const std::string& what) {
  std::string d;
  for (int64_t x : dims) d += std::to_string(x) + " ";
  std::fprintf(stderr, "fuzz finding: layout '%.*s' dims [ %s]: %s\n", static_cast<int>(spec.size()),
               spec.data(), d.c_str(), what.c_str());
  std::abort();
}

// Offsets of every logical index, by the formula of layout.h as the runtime's
// packing (runtime/layout_pack.cc) applies it.
void CheckOffsets(std::string_view spec, const std::vector<int64_t>& dims, const lang::Layout& l) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d > 4096) return;
    count *= d;
    if (count > 4096) return;
  }
  std::set<int64_t> seen;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t rest = n;
    for (size_t k = dims.size(); k-- > 0;) {
      index[k] = rest % dims[k];
      rest /= dims[k];
    }
    int64_t offset = 0;
    for (const lang::PhysicalDim& p : l.phys) {
      if (p.dim < 0 || p.dim >= static_cast<int>(dims.size()) || p.divisor < 1)
        Finding(spec, dims, "physical dim out of range");
      int64_t part = index[p.dim] / p.divisor;
      if (p.size > 0) part %= p.size;
      offset += part * p.stride;
    }
    if (offset < 0 || offset >= l.elements) Finding(spec, dims, "offset outside the buffer");
    if (!seen.insert(offset).second) Finding(spec, dims, "two elements alias");
  }
}

void Check(std::string_view spec, const std::vector<int64_t>& dims) {
  Guarded([&] {
    lang::Layout l = lang::ParseLayout(spec, dims);
    CheckOffsets(spec, dims, l);
    std::string back;
    try {
      back = lang::ToSpec(l);
    } catch (const UserError&) {
      return;  // documented: not every layout has a spec
    }
    try {
      lang::Layout again = lang::ParseLayout(back, dims);
      if (again.phys != l.phys || again.elements != l.elements)
        Finding(spec, dims, "ToSpec '" + back + "' parses to another layout");
    } catch (const UserError& e) {
      Finding(spec, dims, "ToSpec '" + back + "' does not parse: " + e.message());
    }
  });
}

}  // namespace
}  // namespace tilec::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tilec::fuzz;
  SplitInput in = Split(data, size);
  if (in.params.empty()) {
    const std::vector<int64_t> sizes = {2, 19, 5, 3, 7};
    for (size_t rank = 0; rank <= sizes.size(); ++rank)
      Check(in.text, std::vector<int64_t>(sizes.begin(), sizes.begin() + rank));
    return 0;
  }
  ParamReader params(in.params);
  int rank = params.Next(0) % 7;
  std::vector<int64_t> dims;
  for (int k = 0; k < rank; ++k) {
    uint8_t b = params.Next(3);
    dims.push_back(b < 240 ? b % 21 : int64_t{1} << (4 * (b - 240) + 2));
  }
  Check(in.text, dims);
  return 0;
}
