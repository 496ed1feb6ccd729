// Lower: a bound Program -> a KernelPlan (ir/kernel.h). The pipeline's "lower"
// stage (docs/architecture.md, "The pipeline"): kernel formation and
// elementwise fusion.
#pragma once

#include <set>
#include <string>

#include "compiler/ir/kernel.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

struct LowerOptions {
  // Fuse elementwise operations into the contraction (or elementwise kernel)
  // before them. Off: one kernel per operation (for debugging and tests).
  bool fuse = true;
  // For the vector (CPU) form: when a Sum contraction's vector index (the
  // index with stride 1 in its output) moves through an input with another
  // stride, and that input is small next to the contraction's work, copy the
  // input first into a temporary laid out with that dimension innermost
  // (kernel "<input>_vec<N> = copy of <input>") and read the copy.
  bool relayout_for_vectors = false;
  // With relayout_for_vectors: the elements of the vector index one work
  // item covers (lanes x vectors). An input read along a longer vector index
  // is copied in panels of this many, so each work item reads a contiguous
  // panel (as BLAS packs its operands), where each of its elements is used
  // at least kPanelMinUses (512) times (passes/lower.cc). 0: no panels.
  int64_t vector_block = 0;
  // Panels whose last one is padded (the vector index's range is no
  // multiple of vector_block; see Lower's PanelWidth), or panels of an input
  // that other output indices move too (a batch: B[b, k, n]), only when
  // what one panel walk reads (the input, or one batch of it) has at least
  // this many bytes: a smaller one is read fast enough in place, and the
  // copy costs more than it saves (bench/suite matmul 333^3 and batched
  // matmul 16x128^3 are faster in place; matmul 509^3 (prime) gains from
  // its padded panels).
  // CompileProgram: a quarter of L2 (512 KB on the 2 MB L2 of the test
  // machine: 333, 336 and the batches of 64 KB in place).
  int64_t padded_panel_min_bytes = 0;
  // Inputs the caller keeps constant between runs (a network's weights;
  // runtime::Program::SetConstantInputs): their copies run once, so one
  // is made wherever the kernel reads it faster, however few times each
  // element is used (the panels of a 7x7 or 14x14 convolution's weights).
  std::set<std::string> constants;
  // For CPU devices: a reduction whose output has at most this many
  // elements (too few work items for the cores) and whose index box has at
  // least split_min_points points is split along its outermost reduction
  // variable into partial results and a combine kernel (passes/split_reduction.h).
  // 0: never.
  int64_t split_max_outputs = 0;
  int64_t split_min_points = int64_t{1} << 16;
  int64_t split_min_chunks = 4;  // values of the split variable, at least
  // For CPU devices: row reductions and the elementwise ops around them
  // (softmax, layer norm) form one RowGroup kernel (passes/fuse_reductions.h) when
  // the row working set is at most this many bytes. 0: never; -1: chosen
  // by CompileProgram from the hardware model (half of L2) for the CPU
  // forms, else 0.
  int64_t row_group_max_bytes = -1;
};

// Pre: `program` came from Bind.
// Post: kernels in an order that respects every data dependence; every op of
// the program is computed by exactly one kernel (fused ops are post-ops); a
// fused tensor is written to memory only when a later kernel or the caller
// reads it. Fusion rules (after PlaidML's generate.cc):
//  * a contraction whose output it does not cover densely and injectively,
//    or that has a `default` tensor, is preceded by a Fill kernel and fuses
//    nothing;
//  * otherwise each later elementwise op joins it when its output has the
//    contraction's dimensions and every tensor it reads is the contraction's
//    output, an op already fused, or a tensor computed before the
//    contraction (broadcast to the output's dimensions);
//  * elementwise ops not fused into a contraction form elementwise kernels
//    by the same rule, rooted at the first of them;
//  * a kernel's index space is its output's buffer: a dimension blocked by B
//    (nChw8c's c) is two flat indices c/B and c%B; every tensor the kernel
//    touches is addressed through its own layout, which must be plain or
//    blocked alike along each dimension (else the op is not fused, or, for
//    the root of an elementwise or fill kernel, the tensor is first copied
//    into a row-major temporary); a fused result must hold the root's
//    padding; FlatContraction::padding marks the padding points, where the
//    kernel stores 0 (the padding contract, docs/architecture.md, "Contracts");
//  * with row_group_max_bytes > 0, runs of row reductions and elementwise
//    ops over one row space become RowGroup kernels first (FuseRowGroups);
//  * contractions with fractional index polynomials, whose output access
//    is not injective, or whose layouts Flatten cannot express (a dim blocked
//    more than once, an index variable blocked by two block sizes, a blocked
//    dim indexed by more than one variable) become Direct kernels.
KernelPlan Lower(const lang::Program& program, const LowerOptions& options = {});

}  // namespace tilec::compiler
