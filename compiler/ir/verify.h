// The kernel plan's verifier: what every pass after Lower may rely on. The
// pipeline's runner calls it at the kernel plan's boundaries
// (compiler/pipeline.cc); passes do not.
#pragma once

#include "compiler/ir/kernel.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

// `plan` against the program it was lowered from (with the tensors Lower
// introduced declared). InternalError, naming the kernel and `stage`, unless:
// kernel names are unique; every buffer a kernel names is declared and
// named once; every kernel input is a program input, a tensor without
// elements or written by an earlier kernel; every program output and
// temporary is written by a kernel (or is an input or empty); temporaries are neither inputs nor outputs of
// the program; a flat kernel's table passes Verify(flat) and its outputs
// are the table's kernel outputs.
void Verify(const KernelPlan& plan, const lang::Program& program, std::string_view stage);

}  // namespace tilec::compiler
