// Printing a layout for `tilec layout`: its physical dims, padding, offset
// function, and the first elements' mapping in the forms the seeds use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tile_lang/layout.h"
#include "tile_lang/types.h"

namespace tilec::tools {

enum class LayoutForm {
  Table,      // physical dims, padded dims, offset formula, offset -> index list
  ClDnn,      // seed 001: "i = 0 => [b=0; f=0; y=0; x=0] == [b=0; fs=0; …; fsv=0];"
  OneDnn,     // seed 004: "offset_nChw8c(n, c, h, w) = n * CHW …" and the blocking descriptor
  MegEngine,  // seed 002: memory order as NCHW element numbers (0000 0009 0018 …)
  Mace,       // seed 000: MACE's buffer table and E[n, c, h, w] per buffer element
};

// The forms by their --form names.
const std::vector<std::pair<std::string, LayoutForm>>& LayoutForms();

struct LayoutPrintOptions {
  LayoutForm form = LayoutForm::Table;
  int64_t count = 16;               // elements to list, in memory order (0: all)
  std::vector<std::string> names;   // logical dim names (empty: the spec's own)
};

// The text for `layout` (parsed from `spec`) over a tensor of `shape`.
std::string PrintLayout(std::string_view spec, const lang::Layout& layout, const lang::Shape& shape,
                        const LayoutPrintOptions& options);

}  // namespace tilec::tools
