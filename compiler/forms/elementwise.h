// Code generation for one elementwise operation (lang::ElementwiseOp) as a
// sem expression. Shared by contraction epilogues (post-ops), elementwise
// kernels and special kernels, so every kernel gives the reference
// evaluator's results (tile_lang/program.h): C arithmetic in the compute
// type, integer division and remainder by zero give 0, signed overflow wraps,
// shift counts are taken modulo the bit width, float to integer conversion
// saturates and maps NaN to 0.
#pragma once

#include <vector>

#include "compiler/sem/ir.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

// `e` converted to type `to` (same width) with the evaluator's rules
// (to bool: != 0; float to integer: saturating, NaN -> 0).
sem::Expr ConvertValue(const sem::Expr& e, lang::DataType to);

// The unsigned type of a signed integer type (i32 -> u32), where wrapping
// arithmetic is done; any other type itself.
lang::DataType UnsignedOf(lang::DataType t);

// The value of `op` as a value of `out_dtype`, given its operands as values
// of any type (they are converted to op.compute_type here). Operands may be
// vectors of one width when IsVectorSafe(op); scalar operands are then
// broadcast and the result is a vector.
// `coordinate` is the output coordinate op.axis (index type) for
// ElemFn::Index, and ignored otherwise.
sem::Expr GenerateElementwise(const lang::ElementwiseOp& op, std::vector<sem::Expr> operands,
                              lang::DataType out_dtype, const sem::Expr& coordinate = nullptr);

// The combination `op` of a contraction's input values `in` (one per input,
// of their own types) as a value of the aggregation type `t`: None, Mul and
// Add in `t` (for bool: and, or), Eq comparing in the inputs' promoted type,
// Cond = in[0] == in[1] ? in[2] : 0.
sem::Expr CombineValues(lang::ast::CombOp op, const std::vector<sem::Expr>& in, lang::DataType t);

// True if GenerateElementwise gives the right lane-wise result for vector
// operands: float or bool compute types, no bit operations, no index().
bool IsVectorSafe(const lang::ElementwiseOp& op);

// A constant of a bound scalar operand, of the scalar's dtype.
sem::Expr ScalarConst(const lang::Scalar& s);

}  // namespace tilec::compiler
