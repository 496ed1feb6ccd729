// Evaluate: the reference evaluator. Runs a bound Program with plain loops.
//
// Slow on purpose and obviously right: it is the oracle every compiled kernel
// is tested against. It implements exactly the semantics documented in
// program.h.
#pragma once

#include <map>
#include <string>

#include "tile_lang/program.h"
#include "tile_lang/tensor.h"

namespace tilec::lang {

// Pre: `inputs` has a tensor for every program input, with exactly the bound
// shape (dtype and dims); otherwise UserError naming the input.
// Post: one tensor per program output, keyed by name.
std::map<std::string, Tensor> Evaluate(const Program& program,
                                       const std::map<std::string, Tensor>& inputs);

}  // namespace tilec::lang
