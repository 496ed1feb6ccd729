// Generate: a random well-formed Tile program (a model Prog) for a seed.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/difftest/check.h"
#include "tests/difftest/model.h"

namespace tilec::difftest {

using Rng = std::mt19937_64;

// The layout catalogue (tile_lang/layout.h) as the tester uses it: one row per
// kind of spec, with the ranks it applies to and a random instance for given
// dimensions. Extending Tilec's catalogue means adding a row here.
struct LayoutKind {
  const char* name;
  bool (*fits)(int rank);
  // Blocked layouts are for contractions only: an elementwise op touching
  // one is a documented UserError ("not supported by the kernel generator yet").
  bool blocked;
  std::string (*make)(Rng& rng, const std::vector<int64_t>& dims);
};
const std::vector<LayoutKind>& LayoutCatalogue();

// Post: a program the generator believes valid: it binds, its analysis is
// valid and its contractions' index boxes are small enough for the
// evaluator. A binder rejection while growing it is returned as a finding
// (kind "bind-rejected"), since the generator believed the statement valid.
struct Generated {
  Prog prog;
  std::optional<Finding> finding;
};
Generated Generate(uint64_t seed);

}  // namespace tilec::difftest
