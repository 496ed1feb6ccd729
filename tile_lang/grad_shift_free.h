// Shift invariance for the gradient stage (gradient.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tile_lang/program.h"

namespace tilec::lang::grad {

// Shift invariance: which max/min results need no gradient. Softmax,
// log-softmax and log-sum-exp subtract a row maximum M only to keep exp in
// range: their results do not change when M changes (softmax is
// shift-invariant), so dY/dM = 0 exactly and M is a constant to the
// gradient (a stop-gradient), with none of the max rule's keys and winners.
// `ShiftFree` proves it by following a perturbation M + d (d any tensor of
// M's shape) forward through the program: each tensor is unchanged (Same),
// t + s d (Shift), t * exp(s d) (Scale), s = +-1, or anything (Other), with d
// read at the tensor's index through `map`: per dimension of M, the
// tensor's dimension that indexes it, or -1 where M's index is 0 (a size-1
// dimension, broadcast). M is a constant to the gradient when every
// differentiated output stays Same.
// Whether `outputs` of `prog` do not depend on the value of `m`, the result
// of op `def` (ops before it cannot read m).
bool OutputsIgnore(const Program& prog, const std::vector<std::string>& outputs, const std::string& m, size_t def);

}  // namespace tilec::lang::grad
