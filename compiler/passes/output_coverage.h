// How a flat contraction's output access covers its buffer (used by Lower to
// decide whether a contraction needs a Fill kernel first).
#pragma once

#include "compiler/ir/flat.h"

namespace tilec::compiler {

// Output indices (nonzero output stride) address distinct elements: sorted
// by |stride|, each stride steps over the whole span of the smaller ones.
bool OutputInjective(const FlatContraction& flat);

// The output access covers its whole buffer exactly once at offset 0 over
// the index box. Constraints do not matter here: elements no valid point
// reaches are written as 0 by the kernel itself (see forms/flat.cc).
bool OutputDense(const FlatContraction& flat);

// The box overhangs the output (so OutputDense is false), but the valid
// points reach every element of the buffer exactly once: the output is
// dense once each variable that Flatten split for a panel layout read by
// the kernel (n = B*(n/B) + n%B, bounded by B*(n/B) + n%B <= N-1 when B
// does not divide N) is merged back into n, and no constraint can leave
// an output element unreached (each mentions output indices only, or
// reductions only and holds at reduction point 0). Such a contraction
// needs no Fill; its kernel stores only at valid points
// (KernelSpec::store_reached_only).
bool OutputCovered(const FlatContraction& flat);

// Every output point of the index box is reached: at least one reduction
// point satisfies every constraint with it (pooling windows whose padding
// taps are constraints: each output keeps a tap inside the image). Then a
// max, min or product may start from its identity without `hit` flags.
// Constraints are grouped by the reduction indices they share; a group's
// points are enumerated when the indices it mentions span at most
// kReachedPointLimit points, and a larger group (or a constraint on output
// indices alone that fails somewhere in the box) answers false: this is a
// proof or nothing.
constexpr int64_t kReachedPointLimit = int64_t{1} << 16;
bool EveryOutputReached(const FlatContraction& flat);

}  // namespace tilec::compiler
