// ChooseLayouts: the layouts the compiler picks, and the relayouts (reorders)
// it inserts, before Lower. The stage between Bind and Lower in pipeline.cc.
//
// Each contraction is looked at with the elementwise ops after it that have
// its output's dimensions and read its result (the chain Lower fuses into
// one kernel). For the chain it compares *forms* by the cost model's
// estimated time (EstimateTime, schedule/cost_model.h):
//   * as-is: every tensor in the layout it was given (a free temporary takes
//     the layout of the fixed chain tensor it feeds, as Lower's
//     PropagateLayouts gives it);
//   * for each candidate layout X of the chain's result — row-major,
//     channels-last (its channel dimension innermost), blocked by 16 and by 8
//     along the channel dimension (nChw16c, nChw8c for NCHW) — the kernel
//     computing in X, with the chain's data inputs either read as they are
//     or relayouted into X first; a chain result whose layout is fixed (an
//     output not declared `any`) and is not X gets a relayout back.
// In every form but as-is, weights (an input that is not a data input) whose
// layout blocks the dimension of the output channel's variable (co in
// Acdb4a, MACE's image_conv_filter order, or OIhw8o) are relayouted to
// row-major, which Lower packs into panels of whole vectors; read as they
// are, they would give the kernel the block's 4 or 8 lanes.
// A relayout costs its bytes (read and written) over hw.mem_bandwidth_gbs.
// Free tensors — outputs declared `any` and temporaries left row-major —
// take the cheapest form's layout; a form that needs relayouts is taken
// only when its estimate (kernel plus relayouts) is below (1 - margin) of
// the best form without them. The channel dimension of the result is the
// output dimension indexed by a variable alone that only inputs without
// other output variables use (the weights' co); a data input's is its
// dimension indexed by a reduction variable alone (ci). A depthwise
// contraction (T[n, c, ..] = +(D[n, c, ..] * K[c, ..])) has the channel c:
// indexed alone in the output, used by the weights, and indexed alone in
// one dimension of each data input, its channel. Outputs declared
// `any` that no contraction decides take the layout of an operand of the
// same dimensions, else row-major.
//
// Layout kinds: a candidate is a Layout (tile_lang/layout.h), so every
// layout kind it can express — a new storage kind too — goes through the same
// comparison once EstimateTime and Flatten know it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/schedule/hardware_model.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

struct ChooseLayoutsOptions {
  // Off (`--no-relayout`): no relayout is inserted and `any` is row-major.
  bool relayout = true;
  // A form with relayouts must beat the best form without by this fraction.
  double margin = 0.2;
};

struct LayoutChoice {
  // The program Lower compiles: layouts chosen, relayout copies inserted
  // (contractions `t_reN[i, j, ...] = =(t[i, j, ...])`).
  lang::Program program;
  // Declarations that replace or extend the bound program's: every tensor
  // whose layout was chosen and every relayout copy.
  std::vector<lang::TensorDecl> tensors;
  // Per relayout copy (the copy's output tensor): why it is there, the
  // estimates as-is and with the relayouts ("why: ..."), for `--emit kernels`.
  std::map<std::string, std::string> why;
  // One line per decision (a chosen layout, a relayout), in program order.
  std::vector<std::string> decisions;
};

// Pre: `program` came from Bind; hw passes Validate.
// Post: no tensor of result.program has Layout::any; result.program computes
// the same outputs, in the layouts the bound program gives them (an `any`
// output in the chosen one, its decl in result.tensors).
LayoutChoice ChooseLayouts(const lang::Program& program, const HardwareModel& hw,
                           const ChooseLayoutsOptions& options = {});

}  // namespace tilec::compiler
