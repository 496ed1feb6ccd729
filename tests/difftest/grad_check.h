// CheckGradient: the differential tester's gradient mode (difftest --grad).
#pragma once

#include <vector>

#include "tests/difftest/check.h"
#include "tests/difftest/model.h"

namespace tilec::difftest {

// Binds `p` with its float inputs in f64, derives the gradient of every
// float output with respect to every float input (lang::Gradient), and
// compares it with central finite differences of the reference evaluator at
// up to 16 elements per input (inputs uniform in [-1, 1], so that no two
// values tie; an element whose function is not smooth near the point — a
// kink within every step tried — or not finite is skipped), then runs the
// gradient program on each backend against the evaluator.
// kInvalid: the program is outside what is compared (it does not bind in
// f64, computes in another float type, has nothing to differentiate, or uses
// what Gradient does not support: a UserError), with the reason in
// `finding->detail` (kind "skipped"). `strict` is unused (the
// signature is Check's, for Shrink).
Verdict CheckGradient(const Prog& p, const std::vector<Backend>& backends, bool strict, Finding* finding);

}  // namespace tilec::difftest
