// Prints sem trees as C-like text: the form of `--print-ir-after`, dumps and
// golden tests, so it is deterministic and stable.
//
// The notation is C's (OpenCL's type names) with these additions: the
// kernel's index type prints as `index`; every binary operation is fully
// parenthesized, `(a + b)`; non-index integer constants carry a cast,
// `(uchar)7`, f32 constants an `f` and f16 ones an `h` suffix; a vector Load
// or Store of N elements prints `A[i:+N]`; Select prints as
// `select(cond, t, f)` and Cond as `(cond ? t : f)`; a filled array as
// `float agg[8] = {fill 0.0f};`; a function's index type and work-group size
// print after its parameter list: `index(i32) work_group_size(256, 1, 1)`.
#pragma once

#include <string>

#include "compiler/sem/ir.h"

namespace tilec::sem {

std::string Print(const Expr& e);
// A statement with its nested statements indented by two spaces per level,
// starting at `indent` spaces; ends with a newline.
std::string Print(const Stmt& s, int indent = 0);
std::string Print(const Function& f);
std::string Print(const Module& m);  // functions separated by blank lines

}  // namespace tilec::sem
