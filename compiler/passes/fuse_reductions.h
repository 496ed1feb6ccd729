// FuseRowGroups: reductions along the last axis fused with the elementwise
// operations around them (softmax, log-softmax, layer norm), one kernel per
// group (KernelKind::RowGroup, ir/kernel.h). Part of stage 4 (Lower).
//
// Softmax written in Tile is four ops: M = row max of X, E = exp(X - M),
// S = row sum of E, Y = E / S. As separate kernels that is four passes over
// memory (and E written and read back). A row group computes all of it in
// one kernel whose work items take whole rows: pass 1 reduces X to M, pass 2
// computes exp(X - M) inside the sum (the producer fused into the
// reduction: E is never stored), pass 3 computes Y = exp(X - M) / S and
// stores it (the consumer fused after it). The passes re-read a row that
// is still in cache, so memory sees one read of X and one write of Y;
// recomputing exp is cheaper on a CPU than a memory pass over E.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ir/kernel.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

struct FusedRowGroup {
  std::vector<size_t> ops;  // indices into program.ops, increasing
  // kind RowGroup; outputs are the group's tensors read after the group or
  // returned by the program, inputs every other tensor it reads. The name is
  // left for Lower to give.
  KernelSpec kernel;
};

// Pre: `program` came from Bind (Lower may have chosen temporaries'
// layouts); max_row_bytes > 0.
// Post: disjoint groups, each a run of consecutive ops of `program` with at
// least one row reduction, all over one row space of plain row-major
// tensors, with rows longer than 1 value, whose row working set (the row of
// every full tensor the kernel reads or writes) is at most max_row_bytes
// (so the passes over a row hit the cache). Every tensor a group reads and
// does not compute is a program input or computed by an op before the
// group. Ops with Index, contractions with constraints or a default tensor,
// and anything else the row form does not cover end a group.
std::vector<FusedRowGroup> FuseRowGroups(const lang::Program& program, int64_t max_row_bytes);

}  // namespace tilec::compiler
