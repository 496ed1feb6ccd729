#include "tests/fuzz/bind_input.h"

#include <array>
#include <functional>
#include <limits>

#include "tile_lang/parser.h"

namespace tilec::fuzz {
namespace {

constexpr int kDataTypes = static_cast<int>(lang::DataType::F64) + 1;

int64_t Dim(uint8_t b, const DimLimits& limits) {
  static constexpr std::array<int64_t, 5> kHuge = {int64_t{1} << 31, int64_t{1} << 40,
                                                   int64_t{1} << 62,
                                                   std::numeric_limits<int64_t>::max(), -1};
  if (b == 250) return 0;
  if (b > 250) return limits.huge ? kHuge[b - 251] : 1 + b % limits.max_small;
  return 1 + b % limits.max_small;
}

std::string Layout(uint8_t b, size_t rank) {
  switch (b % 12) {
    case 1: return "row-major";
    case 2: return "nhwc";
    case 3: return "nchw";
    case 4: return "chwn";
    case 5: return "nChw4c";
    case 6: return "nChw16c";
    case 7: return "ndhwc";
    case 8: {  // the reverse of the logical order
      std::string spec = "order(";
      for (size_t k = rank; k-- > 0;) spec += std::to_string(k) + (k ? "," : "");
      return spec + ")";
    }
    default: return "";  // the binder's default, row-major
  }
}

}  // namespace

BindInput MakeBindInput(const SplitInput& in, ParamReader& params, const DimLimits& limits) {
  static constexpr std::array<uint8_t, 6> kDefaultDims = {2, 4, 6, 3, 1, 5};  // sizes 3 5 7 4 2 6
  BindInput out;
  out.function = lang::Parse(MakeSource("fuzz.tile", std::string(in.text)));
  for (const lang::ast::Input& input : out.function.inputs) {
    lang::Shape shape;
    shape.dtype = static_cast<lang::DataType>(params.Next(static_cast<uint8_t>(lang::DataType::F32)) %
                                              kDataTypes);
    uint8_t r = params.Next(0);
    size_t rank = input.has_dims ? input.dims.size() : r % 4;
    if (r >= 224) rank = (r - 224) % 7;
    for (size_t k = 0; k < rank; ++k) {
      // Without a byte, a dimension named in the source gets a size of its
      // name, so inputs sharing a dimension agree (matmul's L).
      uint8_t fallback = kDefaultDims[k % kDefaultDims.size()];
      if (input.has_dims && k < input.dims.size())
        fallback = kDefaultDims[std::hash<std::string>()(input.dims[k]) % kDefaultDims.size()];
      shape.dims.push_back(Dim(params.Next(fallback), limits));
    }
    std::string layout = Layout(params.Next(0), rank);
    if (!layout.empty()) out.layouts[input.name] = layout;
    out.shapes[input.name] = shape;
  }
  for (const lang::ast::Output& output : out.function.outputs) {
    std::string layout = Layout(params.Next(0), 4);
    if (!layout.empty() && layout.rfind("order", 0) != 0) out.layouts[output.name] = layout;
  }
  return out;
}

}  // namespace tilec::fuzz
