// PlanRead: how one input tile is staged from global into local memory.
//
// For a tile (per-index tile sizes), an input access touches a box of its
// buffer. Indices whose strides are multiples of each other and whose ranges
// overlap touch the same elements (D[x + i] with x, i both stride 14336), so
// they are merged into one dimension of the local buffer ("i_x", range
// tile_x + tile_i - 1). Each merged dimension gets a local stride; strides are
// assigned cumulatively and kept odd (a power-of-two bank count is then
// coprime with every stride, avoiding bank conflicts), as PlaidML's read plan.
//
// A tile point idx (0 <= idx[i] < tile[i]) reads local element
//     local_zero + sum_parts merged[p.merged].local_stride * p.scale * idx[p.index]
// and that element was copied from global element
//     gbase + sum_parts stride(p.index) * idx[p.index]
// where gbase is the tile's global base. Copy loop: for every merged
// coordinate m in [0, range) of every merged dim, local offset
// sum local_stride*m gets global offset gbase - global_zero + sum global_stride*m.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/flat.h"
#include "compiler/schedule/hardware_model.h"

namespace tilec::compiler {

struct ReadPlan {
  struct Merged {
    std::string name;           // parts joined by '_', smallest |stride| first: "i_x"
    int64_t range = 1;          // extent in the local buffer
    int64_t global_stride = 0;  // signed global stride of one step (its first part's)
    int64_t local_stride = 0;   // odd-padded local stride
    int64_t zero = 0;           // merged coordinate where every part is 0 (negative scales)
  };
  struct Part {
    int index = 0;      // flat index
    int merged = 0;     // position in `merged`
    int64_t scale = 1;  // one step of the index moves the merged coordinate by this
  };

  int tensor = 0;                   // access number in the flat contraction
  int64_t mem_elems = 1;            // mem_width in elements of this tensor
  std::vector<Merged> merged;       // layout order: odd ranges first, then decreasing range
  std::vector<Part> parts;          // indices with a nonzero stride, by increasing |stride|
  std::vector<int> transfer_order;  // positions in `merged`, fastest-varying thread dim first
  int64_t local_size = 1;           // elements of the local buffer
  int64_t local_zero = 0;           // sum local_stride * zero
  int64_t global_zero = 0;          // sum global_stride * zero
  int64_t num_loads = 1;            // cache-line loads: elements / best cache-line reuse
};

// Pre: 1 <= tensor < flat.accesses.size(); tile has one entry per index with
// 1 <= tile[i] <= range[i].
// Post: the plan for access `tensor` (see above); local_size >= the number of
// distinct elements the tile touches. Pure function of its arguments.
ReadPlan PlanRead(const FlatContraction& flat, int tensor, const std::vector<int64_t>& tile,
                  const HardwareModel& hw);

// The seed's table: "Range Global Local" and one row "name range global local"
// per merged index, in the seed's row order (odd ranges first, then by
// increasing range).
std::string ToString(const ReadPlan& plan);

// Smallest power of two >= v (1 for v <= 1).
int64_t NearestPo2(int64_t v);

}  // namespace tilec::compiler
