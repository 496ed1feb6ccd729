// Shrink: delta debugging of a failing program down to a small reproducer.
#pragma once

#include <vector>

#include "tests/difftest/check.h"
#include "tests/difftest/model.h"

namespace tilec::difftest {

// The check a finding came from: Check, or CheckGradient (grad_check.h).
using CheckFn = Verdict (*)(const Prog&, const std::vector<Backend>&, bool, Finding*);

// Pre: check(p, backends) fails with `finding`.
// Post: a program, no larger, that fails the same way (same kind on the same
// backend, same exactness or error message): greedily applies the first simplification that keeps the
// failure (dropping outputs, statements, subexpressions, constraints,
// defaults, combinations, polynomial terms and layouts; lowering sizes;
// plainer types) until none does or `budget` checks are spent. `*finding` is
// updated to the final program's.
Prog Shrink(Prog p, const std::vector<Backend>& backends, Finding* finding, int budget, CheckFn check = Check);

// The `tilec run` command lines (on the backend, then on the reference
// evaluator) that reproduce a finding for `p` saved as `file`.
std::string ReproCommands(const Prog& p, const std::string& file, const std::string& backend);

}  // namespace tilec::difftest
